"""MXNet's fused ``RNN`` operator, unrolled over its static sequence length into dataflow.

Semantics are MXNet 1.9.1's ``RNN`` (operator doc and ``src/operator/rnn-inl.h``):

- inputs ``data`` (T, N, C) in layout TNC, the flat parameter vector, ``state`` (L*D, N, H) and,
  for ``lstm``, ``state_cell`` (L*D, N, H); L = ``num_layers``, D = 2 when ``bidirectional``,
  H = ``state_size``;
- the parameter vector holds every weight, then every bias. Weights per layer, per direction
  (forward first): ``i2h`` (G*H, in), ``h2h`` (G*H, H or P), with ``projection_size`` P also
  ``h2r`` (P, H); biases per layer and direction: ``i2h`` (G*H), ``h2h`` (G*H). G is 4 for
  ``lstm`` (gates i, f, g, o), 3 for ``gru`` (r, z, n), 1 for ``rnn_relu`` / ``rnn_tanh``; ``in``
  is C for layer 0, D*H (D*P with projection) above;
- ``gru``: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h;
  ``lstm``: c' = f * c + i * g (clipped to [lstm_state_clip_min, lstm_state_clip_max] when
  given), h' = o * tanh(c'), projected by ``h2r`` when ``projection_size`` is set;
- outputs: ``out`` (T, N, D*H) (D*P), then with ``state_outputs`` the final ``hy`` (L*D, N, H)
  (P) and, for ``lstm``, ``cy`` (L*D, N, H).

Dropout (``p``) only acts in training and is ignored. ``use_sequence_length`` is not supported.
Gluon's ``rnn.LSTM/GRU/RNN`` without explicit begin states feed ``_zeros`` nodes whose batch
dimension is 0 ("infer me"); those become zeros of the right shape.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, const
from ..ir.types import AnyDim
from ._mx_util import R

_GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}


class _Flat:
    """Slices of the flat parameter vector, in MXNet's order."""

    def __init__(self, flat, c):
        self.flat, self.c, self.off = flat, c, 0

    def take(self, shape):
        size = int(np.prod(shape))
        part = R("strided_slice")(self.flat, begin=[self.off], end=[self.off + size])
        self.off += size
        return R("reshape")(part, newshape=tuple(shape))


def _state(x, k, shape, dtype, c, what, data):
    """Begin state ``k``: the input, or zeros for Gluon's batch-0 ``_zeros`` placeholder (of
    the batch of ``data``, (T, N, C), read at run time where it is ``Any``)."""
    node = c.input_nodes[k] if k < len(c.input_nodes) else None
    got = c.shape(x)
    if (node is not None and node.op == "_zeros" and isinstance(x, Constant)
            and 0 in got and len(got) == len(shape)
            and all(g in (0, s) or isinstance(s, AnyDim) for g, s in zip(got, shape))):
        if any(isinstance(s, AnyDim) for s in shape):
            batch = R("strided_slice")(R("shape_of")(data, dtype="int64"), begin=[1], end=[2])
            lead = const(np.array([shape[0]], "int64"), "int64")
            tail = const(np.array([shape[2]], "int64"), "int64")
            return R("zeros")(R("concatenate")([lead, batch, tail], axis=0), dtype)
        return R("zeros")(shape, dtype)
    if tuple(got) != tuple(shape):
        raise c.error(f"{what} has shape {tuple(got)}, expected {tuple(shape)} "
                      f"(num_layers * directions, batch, state size)")
    return x


def _cell(mode, xw, h, c_state, w, c, clip):
    """One step: ``xw`` is the input projection (N, G*H) with its bias; returns (out, h, c)."""
    hw = R("nn.bias_add")(R("nn.dense")(h, w["h2h"]), w["bh"], axis=-1)
    if mode in ("rnn_relu", "rnn_tanh"):
        act = R("nn.relu") if mode == "rnn_relu" else R("tanh")
        out = act(R("add")(xw, hw))
        return out, out, None
    if mode == "gru":
        xr, xz, xn = R("split")(xw, 3, axis=1)
        hr, hz, hn = R("split")(hw, 3, axis=1)
        r = R("sigmoid")(R("add")(xr, hr))
        z = R("sigmoid")(R("add")(xz, hz))
        n = R("tanh")(R("add")(xn, R("multiply")(r, hn)))
        one = c.scalar(1.0, xw)
        out = R("add")(R("multiply")(R("subtract")(one, z), n), R("multiply")(z, h))
        return out, out, None
    gi, gf, gg, go = R("split")(R("add")(xw, hw), 4, axis=1)
    c_new = R("add")(R("multiply")(R("sigmoid")(gf), c_state),
                     R("multiply")(R("sigmoid")(gi), R("tanh")(gg)))
    if clip is not None:
        c_new = R("clip")(c_new, clip[0], clip[1])
    out = R("multiply")(R("sigmoid")(go), R("tanh")(c_new))
    if "h2r" in w:
        out = R("nn.dense")(out, w["h2r"])
    return out, out, c_new


def rnn(ins, a, c):
    """``RNN``: every layer, direction and time step as dataflow operators."""
    mode = a.get_str("mode")
    if mode not in _GATES:
        raise c.error(f"mode={mode!r}: expected one of {sorted(_GATES)}")
    if a.get_bool("use_sequence_length", False):
        raise c.error("use_sequence_length=True (variable sequence lengths) is not supported")
    hidden = a.get_int("state_size")
    layers = a.get_int("num_layers", 1)
    dirs = 2 if a.get_bool("bidirectional", False) else 1
    proj = a.get_int("projection_size", None)
    if proj is not None and mode != "lstm":
        raise c.error(f"projection_size={proj} is only defined for mode='lstm'")
    lo, hi = a.get_float("lstm_state_clip_min", None), a.get_float("lstm_state_clip_max", None)
    clip = None
    if lo is not None or hi is not None:
        if mode != "lstm" or lo is None or hi is None:
            raise c.error("lstm_state_clip_min/max need mode='lstm' and both bounds")
        clip = (lo, hi)
    n_states = 2 if mode == "lstm" else 1
    if len(ins) != 2 + n_states:
        raise c.error(f"mode={mode!r} takes data, parameters and {n_states} begin state(s); "
                      f"got {len(ins)} inputs")
    data, flat = ins[0], ins[1]
    dshape = c.shape(data)
    if len(dshape) != 3:
        raise c.error(f"data must be (sequence, batch, features) (layout TNC), got {dshape}")
    steps, batch, feat = dshape
    dtype = c.dtype(data)
    g = _GATES[mode]
    out_h = proj or hidden
    sizes = []
    for layer in range(layers):
        inp = feat if layer == 0 else dirs * out_h
        sizes.append(g * hidden * (inp + out_h) + (proj * hidden if proj else 0))
    n_params = sum(sizes) * dirs + layers * dirs * 2 * g * hidden
    fshape = c.shape(flat)
    if len(fshape) != 1 or fshape[0] != n_params:
        raise c.error(f"the parameter vector has shape {fshape}, expected ({n_params},) for "
                      f"mode={mode!r}, {layers} layer(s), {dirs} direction(s), input size "
                      f"{feat}, state size {hidden}" + (f", projection {proj}" if proj else ""))
    h0 = _state(ins[2], 2, (layers * dirs, batch, out_h), dtype, c, "state", data)
    c0 = (_state(ins[3], 3, (layers * dirs, batch, hidden), dtype, c, "state_cell", data)
          if mode == "lstm" else None)
    fl = _Flat(flat, c)
    weights = []
    for layer in range(layers):
        inp = feat if layer == 0 else dirs * out_h
        for _ in range(dirs):
            w = {"i2h": fl.take((g * hidden, inp)), "h2h": fl.take((g * hidden, out_h))}
            if proj:
                w["h2r"] = fl.take((proj, hidden))
            weights.append(w)
    for w in weights:
        w["bx"], w["bh"] = fl.take((g * hidden,)), fl.take((g * hidden,))
    x = data
    hy, cy = [], []
    for layer in range(layers):
        inp = feat if layer == 0 else dirs * out_h
        seqs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = weights[k]
            # -1 for the batch: it may be Any
            xw = R("nn.dense")(R("reshape")(x, newshape=(-1, inp)), w["i2h"])
            xw = R("reshape")(R("nn.bias_add")(xw, w["bx"], axis=-1),
                              newshape=(steps, -1, g * hidden))
            xs = R("split")(xw, steps, axis=0) if steps > 1 else [xw]
            h = R("take")(h0, _idx(k), axis=0)
            cs = R("take")(c0, _idx(k), axis=0) if c0 is not None else None
            outs = [None] * steps
            order = range(steps) if d == 0 else range(steps - 1, -1, -1)
            for t in order:
                xt = R("reshape")(xs[t], newshape=(-1, g * hidden))
                outs[t], h, cs = _cell(mode, xt, h, cs, w, c, clip)
            seqs.append(outs)
            hy.append(h)
            cy.append(cs)
        if dirs == 1:
            x = R("stack")(seqs[0], axis=0)
        else:
            x = R("stack")([R("concatenate")([f, b], axis=1) for f, b in zip(*seqs)], axis=0)
    res = [x]
    if a.get_bool("state_outputs", False):
        res.append(R("stack")(hy, axis=0))
        if mode == "lstm":
            res.append(R("stack")(cy, axis=0))
    return res


def _idx(k):
    return const(np.int32(k), "int32")


RNN_CONVERTERS = {"RNN": rnn}

__all__ = ["RNN_CONVERTERS"]

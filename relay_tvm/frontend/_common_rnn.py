"""tvm.relay 0.19's expression-building helpers of ``relay.frontend.common`` that converters
import: recurrent cells unrolled over a list of time steps (:func:`rnn_cell`, :func:`gru_cell`,
:func:`lstm_cell`), :func:`unbind`, :func:`autopad`, :func:`ensure_scalar_shape`,
:func:`try_resolve_var_to_const`.

The cells compute what 0.19's did (the ONNX / PyTorch conventions: gate order i, f, g, o for
LSTM and r, z, n for GRU in the stacked weight matrices) and build the same operators, so a
converter gets the same program.
"""

from __future__ import annotations

import numpy as np

from .. import op as _op
from ..errors import ConversionError
from ..ir.expr import Tuple, TupleWrapper, Var, const


def _infer_shape(e):
    from .common import infer_shape

    return infer_shape(e)


def _dtype(e) -> str:
    from .common import infer_dtype

    return infer_dtype(e)


def unbind(data, axis: int = 0):
    """The slices of ``data`` along ``axis``, that axis removed (PyTorch's ``unbind``).

    Args:
        data: tensor with a static extent along ``axis``.
        axis: non-negative axis.

    Returns:
        A :class:`TupleWrapper` of ``shape[axis]`` tensors of rank ``rank - 1``.

    Raises:
        ConversionError: ``axis`` is not an axis of ``data`` (0.19: ``AttributeError``).
    """
    shape = _infer_shape(data)
    if axis >= len(shape):
        raise _AxisError(f"unbind: axis {axis} is not an axis of a rank-{len(shape)} tensor "
                         f"of shape {shape}; it must be below the rank")
    n = shape[axis]
    parts = _op.split(data, n, axis)
    return TupleWrapper(Tuple([_op.squeeze(parts[i], axis=[axis]) for i in range(n)]), n)


class _AxisError(ConversionError, AttributeError):
    pass


def rnn_cell(input_seqs, hidden_state, w_inp, w_hid, b_inp=None, b_hid=None, backwards=False,
             act=_op.tanh):
    """An Elman RNN over time steps: ``h = act(x W_inp^T + b_inp + h W_hid^T + b_hid)``.

    Args:
        input_seqs: list of ``(batch, feature)`` tensors, one per step.
        hidden_state: ``(batch, hidden)``.
        w_inp, w_hid: ``(hidden, feature)``, ``(hidden, hidden)``.
        b_inp, b_hid: ``(hidden,)`` (used only when both are given, as in 0.19).
        backwards: run the steps last to first.
        act: the activation.

    Returns:
        ``(outputs, final hidden)``; ``outputs`` in the order computed.
    """
    outputs = []
    for x_t in reversed(input_seqs) if backwards else input_seqs:
        xw = _op.nn.dense(x_t, w_inp)
        hw = _op.nn.dense(hidden_state, w_hid)
        if b_inp is not None and b_hid is not None:
            xw = xw + b_inp
            hw = hw + b_hid
        hidden_state = act(xw + hw)
        outputs.append(hidden_state)
    return outputs, hidden_state


def gru_cell(input_seqs, hidden_state, w_inp, w_hid, b_inp=None, b_hid=None, rz_act=_op.sigmoid,
             n_act=_op.tanh, backwards=False, linear_before_reset=True, sequence_lens=None):
    """A GRU over time steps (ONNX's GRU equations).

    ``r = rz_act(x W_r + h U_r + b)``, ``z = rz_act(x W_z + h U_z + b)``, and ``n = n_act(x W_n
    + b_in + r * (h U_n + b_hn))`` with ``linear_before_reset`` (else ``r * h`` goes through
    ``U_n``); ``h' = (h - n) * z + n``.

    Args:
        input_seqs: list of ``(batch, feature)`` tensors.
        hidden_state: ``(batch, hidden)``.
        w_inp: ``(3 * hidden, feature)``, blocks r | z | n; w_hid: ``(3 * hidden, hidden)``.
        b_inp, b_hid: ``(3 * hidden,)`` (used only when both are given).
        rz_act, n_act: the gate and candidate activations.
        backwards: run the steps last to first.
        linear_before_reset: apply ``U_n`` before multiplying by ``r`` (PyTorch's GRU).
        sequence_lens: optional ``(batch,)`` integer lengths; steps past a sequence's length
            leave zeros in the outputs and keep the last valid state as the result.

    Returns:
        ``(outputs, final hidden)``.
    """
    outputs = []
    seq_len = len(input_seqs)
    in_dtype = _dtype(input_seqs[0])
    if sequence_lens is not None:
        (batch,) = _infer_shape(sequence_lens)
        len_dtype = _dtype(sequence_lens)
        steps = _op.expand_dims(_op.arange(0, seq_len, dtype=len_dtype), 1)
        lens = _op.broadcast_to(sequence_lens, [seq_len, batch])

        def step_masks(cmp):
            return unbind(_op.expand_dims(_op.cast(cmp(steps, lens), in_dtype), 2))

        mask_seqs = step_masks(_op.less)
        res_mask_seqs = step_masks(_op.greater_equal)
        if backwards:
            initial_h = hidden_state
            initial_h_mask_seqs = step_masks(_op.equal)
    output = _op.zeros(_infer_shape(hidden_state), in_dtype)
    for i in reversed(range(seq_len)) if backwards else range(seq_len):
        xw = _op.nn.dense(input_seqs[i], w_inp)
        if linear_before_reset:
            hw = _op.nn.dense(hidden_state, w_hid)
            if b_inp is not None and b_hid is not None:
                xw = xw + b_inp
                hw = hw + b_hid
            i_r, i_z, i_n = _op.split(xw, 3, axis=-1)
            h_r, h_z, h_n = _op.split(hw, 3, axis=-1)
            r = rz_act(i_r + h_r)
            z = rz_act(i_z + h_z)
            n = n_act(i_n + r * h_n)
        else:
            i_r, i_z, i_n = _op.split(xw, 3, axis=1)
            w_hr, w_hz, w_hn = _op.split(w_hid, 3, axis=0)
            r = i_r + _op.nn.dense(hidden_state, w_hr)
            z = i_z + _op.nn.dense(hidden_state, w_hz)
            if b_inp is not None and b_hid is not None:
                b_ir, b_iz, b_in = _op.split(b_inp, 3, axis=-1)
                b_hr, b_hz, b_hn = _op.split(b_hid, 3, axis=-1)
                r = rz_act(r + (b_ir + b_hr))
                z = z + (b_iz + b_hz)
                i_n = i_n + b_in
                h_n = _op.nn.dense(r * hidden_state, w_hn) + b_hn
            else:
                r = rz_act(r)
                h_n = _op.nn.dense(r * hidden_state, w_hn)
            z = rz_act(z)
            n = n_act(i_n + h_n)
        hidden_state = (hidden_state - n) * z + n
        if sequence_lens is not None:
            hidden_state = hidden_state * mask_seqs[i]
        outputs.append(hidden_state)
        output = hidden_state if sequence_lens is None else \
            output * res_mask_seqs[i] + hidden_state
        if backwards and sequence_lens is not None:
            hidden_state = hidden_state + initial_h * initial_h_mask_seqs[i]
    return outputs, output


def lstm_cell(input_seqs, hidden_state, cell_state, w_inp, w_hid, b_inp=None, b_hid=None,
              proj=None, p_i=None, p_f=None, p_o=None, f_act=_op.sigmoid, g_act=_op.tanh,
              h_act=_op.tanh, backwards=False):
    """An LSTM over time steps (ONNX's LSTM equations, PyTorch's gate order).

    ``[i, f, g, o] = [x, h] [W_inp, W_hid]^T + b_inp + b_hid``; ``i = f_act(i + p_i * c)``,
    ``f = f_act(f + p_f * c)``, ``c' = f * c + i * g_act(g)``, ``o = f_act(o + p_o * c')``,
    ``h' = o * h_act(c')``, then ``h' = h' proj^T`` with a projection (peepholes only when
    given).

    Args:
        input_seqs: list of ``(batch, feature)`` tensors.
        hidden_state: ``(batch, hidden)`` (``(batch, proj)`` with a projection).
        cell_state: ``(batch, hidden)``.
        w_inp: ``(4 * hidden, feature)``, blocks i | f | g | o; w_hid: ``(4 * hidden, hidden
            or proj)``.
        b_inp, b_hid: ``(4 * hidden,)``, each optional.
        proj: ``(proj, hidden)`` projection.
        p_i, p_f, p_o: peephole weights, broadcast against ``(batch, hidden)``.
        f_act, g_act, h_act: gate, cell-candidate and output activations.
        backwards: run the steps last to first.

    Returns:
        ``(outputs, final hidden, final cell)``.
    """
    outputs = []
    cat_w = _op.concatenate([w_inp, w_hid], axis=1)
    for x_t in reversed(input_seqs) if backwards else input_seqs:
        # one dense over [x, h] rather than two: (batch, feature + hidden) x (4H, feature + hidden)
        gates = _op.nn.dense(_op.concatenate([x_t, hidden_state], axis=1), cat_w)
        if b_inp is not None:
            gates = gates + b_inp
        if b_hid is not None:
            gates = gates + b_hid
        i, f, g, o = _op.split(gates, 4, axis=-1)
        if p_i is not None and p_f is not None:
            i = f_act(i + p_i * cell_state)
            f = f_act(f + p_f * cell_state)
        else:
            i = f_act(i)
            f = f_act(f)
        cell_state = f * cell_state + i * g_act(g)
        o = f_act(o + p_o * cell_state) if p_o is not None else f_act(o)
        hidden_state = o * h_act(cell_state)
        if proj is not None:
            hidden_state = _op.nn.dense(hidden_state, proj)
        outputs.append(hidden_state)
    return outputs, hidden_state, cell_state


def autopad(data, strides, kernel_shape, dilations=(1, 1), pad_type="constant", deconv=False,
            mode="SAME_UPPER", pad_value=0.0):
    """``data`` padded so that a strided window covers it as ONNX's ``auto_pad`` SAME does.

    Per spatial axis of extent ``d`` (axes 2.. of ``data``, NC...): with ``k = (kernel - 1) *
    dilation + 1``, the total padding is ``max(k - stride, 0)`` when ``d % stride == 0``, else
    ``max(k - d % stride, 0)`` (``kernel - 1 - total`` for a transposed convolution), split
    ``total // 2`` before and the rest after (``SAME_UPPER``), or the other way
    (``SAME_LOWER``). N and C are not padded. Dynamic extents are computed at run time.

    Args:
        data: ``(N, C, spatial...)`` tensor.
        strides, kernel_shape, dilations: one int per spatial axis.
        pad_type: ``nn.pad`` mode (``"constant"``, ``"edge"``, ``"reflect"``).
        deconv: the padding of a transposed convolution.
        mode: ``"SAME_UPPER"`` or ``"SAME_LOWER"``.
        pad_value: number or scalar expression.

    Returns:
        the ``nn.pad`` call.
    """
    from .common import fold_constant, shape_of

    strides_c = const(np.array(strides, "int64"), "int64")
    dilated = const(np.array([(k - 1) * d + 1 for k, d in zip(kernel_shape, dilations)],
                             "int64"), "int64")
    ndim = len(_infer_shape_any(data))
    shape = _op.strided_slice(shape_of(data, dtype="int64"), [2], [ndim])
    zero, one, two = (const(v, "int64") for v in (0, 1, 2))
    rem = _op.mod(shape, strides_c)
    total = _op.where(_op.equal(rem, zero), _op.maximum(dilated - strides_c, zero),
                      _op.maximum(dilated - rem, zero))
    if deconv:
        total = const(np.array(kernel_shape, "int64"), "int64") - one - total
    before = _op.floor_divide(total, two)
    after = total - before
    first, second = (after, before) if "LOWER" in mode else (before, after)
    pad = _op.concatenate([_op.reshape(first, [-1, 1]), _op.reshape(second, [-1, 1])], axis=1)
    pad = _op.concatenate([const(np.zeros([2, 2], "int64"), "int64"), pad], axis=0)
    if isinstance(pad_value, (float, int)):
        pad_value = const(pad_value)
    return _op.nn.pad(data, fold_constant(pad), pad_value, pad_type)


def _infer_shape_any(e):
    from .common import infer_shape_any

    return infer_shape_any(e)


def ensure_scalar_shape(x):
    """``x``, a tensor of one element, as a rank-0 tensor.

    Raises:
        ConversionError: ``x`` has more than one element (0.19: ``AssertionError``).
    """
    shape = _infer_shape(x)
    if not shape:
        return x
    n = int(np.prod(shape))
    if n != 1:
        raise ConversionError(f"Cannot squeeze tensor shape {shape} to scalar form: it has "
                              f"{n} elements, expected 1")
    return _op.squeeze(x)


def try_resolve_var_to_const(x, graph_params):
    """A constant of ``x``'s value when ``x`` is a variable named in ``graph_params`` (values
    with ``numpy()``, or arrays), else ``x``."""
    if isinstance(x, Var) and x.name_hint in graph_params:
        value = graph_params[x.name_hint]
        value = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        return const(value, _dtype(x))
    return x


__all__ = ["unbind", "rnn_cell", "gru_cell", "lstm_cell", "autopad", "ensure_scalar_shape",
           "try_resolve_var_to_const"]

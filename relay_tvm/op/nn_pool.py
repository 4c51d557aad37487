"""Pooling (tvm.relay.nn): ``nn.max_pool{1,2,3}d``, ``nn.avg_pool{1,2,3}d``,
``nn.global_{max,avg}_pool{1,2,3}d`` and ``nn.adaptive_{max,avg}_pool{1,2,3}d``.

Semantics (Relay's Pool relations and topi's pool_impl_nd): the window of output ``o`` covers
the taps ``o * stride - pad_before + j * dilation``; ``ceil_mode`` rounds the output size up, but
the last window must still start inside the input or its leading padding (PyTorch's rule, which
topi.nn.pool applies); taps past the padded input are ignored. Max pooling ignores padding
(a window wholly outside the input gives -inf) and propagates NaN, as numpy.max does. Average
pooling divides by the number of taps inside the padded input
(``count_include_pad=True``) or inside the input itself (``False``). Adaptive pooling over
output ``o`` of ``O`` covers input ``[floor(o*S/O), ceil((o+1)*S/O))``. Layouts: any permutation
of ``N``, ``C`` and the spatial letters (NCHW, NHWC, ...), optionally with the channels blocked
(``NCHW16c``: shape ``(N, C/16, H, W, 16)``, what AlterOpLayout gives the pools between blocked
convolutions; only ``C`` may be split, as in Relay's Pool relations). All are kOutEWiseFusable,
as in Relay.
TE computes: ``_pool_te`` (window pooling, adaptive/global max pooling: topi's drop NaN and
miscount dilated average windows), ``topi.nn.global_pool``, ``topi.nn.adaptive_pool*`` (avg).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import named, out_dims, require_at_run_time, shape_str, tensor_args
from ._ieee import np_maximum, np_reduce
from ._nn_common import (
    SPATIAL,
    check_positive,
    check_rank,
    check_window,
    ntuple,
    out_size,
    pad_before_after,
)
from ._pool_te import adaptive_max_pool, window_pool
from .registry import OpPattern, make_call, register_op
from .shape_ops import layout_to, parse_layout

_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def pool_layout(layout: str, nd: int, op: str):
    """``(positions of the primal axes N, C and the spatial letters, the primal layout, the
    block of C or None)`` of a pooling layout: a permutation of ``N``, ``C`` and the ``nd``
    spatial letters, optionally with one ``{c}c`` sub-axis (``NCHW16c``).

    Raises:
        TypeInferenceError: any other layout (a split spatial or batch axis, a missing axis).
    """
    letters = "NC" + SPATIAL[nd]
    parsed = parse_layout(layout, op)
    primal = "".join(a for a, f in parsed if f is None)
    subs = [(a, f) for a, f in parsed if f is not None]
    if sorted(primal) != sorted(letters) or len(subs) > 1 or (subs and subs[0][0] != "C"):
        raise TypeInferenceError(
            f"{op}: layout {layout!r} is not supported; expected a permutation of {letters!r}, "
            f"optionally with the channels blocked (e.g. {letters}16c)"
        )
    axes = {a: i for i, (a, f) in enumerate(parsed) if f is None}
    return axes, primal, (subs[0][1] if subs else None)


def _canon(x, layout, nd):
    _, primal, block = pool_layout(layout, nd, "pool")
    if block is not None:
        x = layout_to(x, layout, primal)
    return x.transpose([primal.index(ch) for ch in "NC" + SPATIAL[nd]])


def _uncanon(x, layout, nd):
    canon = "NC" + SPATIAL[nd]
    _, primal, block = pool_layout(layout, nd, "pool")
    x = x.transpose([canon.index(ch) for ch in primal])
    return layout_to(x, primal, layout) if block is not None else x


def _check_out_layout(attrs, op):
    if attrs.out_layout not in ("", attrs.layout):
        raise TypeInferenceError(
            f"{op}: out_layout {attrs.out_layout!r} differs from layout {attrs.layout!r}; only "
            f"the input layout is supported"
        )


def _check_layout(data, attrs, nd, op):
    """The primal axes' positions in ``attrs.layout``; checks the rank and the block size of
    ``data`` against it."""
    axes, primal, block = pool_layout(attrs.layout, nd, op)
    _check_out_layout(attrs, op)
    check_rank(data, len(primal) + (block is not None), op, "data", attrs.layout)
    if block is not None:
        at = [f is not None for _, f in parse_layout(attrs.layout, op)].index(True)
        d = data.shape[at]
        if isinstance(d, int) and d != block:
            raise TypeInferenceError(
                f"{op}: layout {attrs.layout} has a channel block of {block} but data shape "
                f"{tuple(data.shape)} has {d} there"
            )
    return axes


# ---- max/avg pooling -------------------------------------------------------------------------


def _pool_attrs(nd, avg):
    ones = (1,) * nd
    fields = [
        F("pool_size", "ints", ones),
        F("strides", "ints", ones),
        F("dilation", "ints", ones),
        F("padding", "ints", (0,) * nd),
        F("layout", "str", _LAYOUT[nd]),
        F("out_layout", "str", ""),
        F("ceil_mode", "bool", False),
    ]
    if avg:
        fields.append(F("count_include_pad", "bool", False))
    return f"relay.attrs.{'Avg' if avg else 'Max'}Pool{nd}DAttrs", fields


def _pool_params(attrs, nd, op):
    k = ntuple(attrs.pool_size, nd, "pool_size", op)
    s = ntuple(attrs.strides, nd, "strides", op)
    d = ntuple(attrs.dilation, nd, "dilation", op)
    before, after = pad_before_after(attrs.padding, nd, op)
    check_window(op, s, d, before, after, k)
    return k, s, d, before, after


def _pool_rel(nd, op):
    sp = SPATIAL[nd]

    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op)
        if ts is None:
            return None
        data = ts[0]
        axes = _check_layout(data, attrs, nd, op)
        k, s, d, before, after = _pool_params(attrs, nd, op)
        shape = list(data.shape)
        outs = []
        for i, ch in enumerate(sp):
            o = out_size(shape[axes[ch]], k[i], before[i], after[i], s[i], d[i], attrs.ceil_mode)
            shape[axes[ch]] = o
            outs.append(o)
        check_positive(outs, sp, op, data, f" for pool_size {k} with padding {attrs.padding}")
        return TensorType(shape, data.dtype)

    return rel


def _window_reduce(x, k, s, d, osz, reduce):
    """Reduce ``x`` (N, C, *padded) over the pooling windows with ``reduce`` (np.maximum or
    np.add), one kernel tap at a time."""
    nd = len(k)
    acc = None
    for off in itertools.product(*[range(kk) for kk in k]):
        window = tuple(
            slice(off[i] * d[i], off[i] * d[i] + s[i] * (osz[i] - 1) + 1, s[i]) for i in range(nd)
        )
        tap = x[(slice(None), slice(None)) + window]
        acc = tap.copy() if acc is None else reduce(acc, tap)
    return acc


def pool_reference(x, kind, k, s, d, before, after, ceil_mode, count_include_pad=False):
    """NumPy max/avg pooling of ``x`` (N, C, *S); see the module docstring for the rules."""
    nd = len(k)
    size = x.shape[2:]
    osz = [out_size(size[i], k[i], before[i], after[i], s[i], d[i], ceil_mode) for i in range(nd)]
    # ceil_mode: windows may extend past the padded input; pad further, ignored below.
    extra = [max(0, (osz[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - (size[i] + before[i] + after[i]))
             for i in range(nd)]
    widths = [(0, 0), (0, 0)] + [(before[i], after[i] + extra[i]) for i in range(nd)]
    if kind == "max":
        # taps outside the input never win: pad with max's identity (-inf, as numpy.max's)
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.pad(x, widths, constant_values=low)
        return _window_reduce(xp, k, s, d, osz, np_maximum)
    xp = np.pad(x.astype("float64"), widths)
    total = _window_reduce(xp, k, s, d, osz, np.add)
    if count_include_pad:
        inside = np.pad(np.ones((1, 1, *[size[i] + before[i] + after[i] for i in range(nd)])),
                        [(0, 0), (0, 0)] + [(0, extra[i]) for i in range(nd)])
    else:
        inside = np.pad(np.ones((1, 1, *size)), widths)
    count = _window_reduce(inside, k, s, d, osz, np.add)
    return (total / np.maximum(count, 1)).astype(x.dtype)


def _pool_ref(nd, kind, op):
    def ref(args, attrs, out_type):
        k, s, d, before, after = _pool_params(attrs, nd, op)
        x = _canon(args[0], attrs.layout, nd)
        out = pool_reference(x, kind, k, s, d, before, after, attrs.ceil_mode,
                             kind == "avg" and attrs.count_include_pad)
        return _uncanon(out, attrs.layout, nd)

    return ref


def _pool_compute(nd, kind, op):
    def compute(attrs, inputs, out_type):
        k, s, d, before, after = _pool_params(attrs, nd, op)
        return window_pool(inputs[0], kind, attrs.layout, SPATIAL[nd], k, s, d, before, after,
                           out_dims(out_type.shape),
                           kind == "avg" and attrs.count_include_pad)

    return compute


for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        _op = f"nn.{_kind}_pool{_nd}d"
        register_op(
            _op,
            num_inputs=1,
            arguments=("data",),
            attrs=_pool_attrs(_nd, _kind == "avg"),
            rel=_pool_rel(_nd, _op),
            ref=_pool_ref(_nd, _kind, _op),
            compute=_pool_compute(_nd, _kind, _op),
            pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            doc=f"{_nd}-D {_kind} pooling (topi.nn.pool{_nd}d): pool_size, strides, dilation, "
                f"padding, ceil_mode" + (", count_include_pad." if _kind == "avg" else "."),
            level=2,
            schedule="pool",
        )


def _pool_ctor(nd, kind):
    def ctor(data, pool_size=(1,) * nd, strides=(1,) * nd, dilation=(1,) * nd, padding=(0,) * nd,
             layout=_LAYOUT[nd], out_layout="", ceil_mode=False, count_include_pad=False):
        name = f"nn.{kind}_pool{nd}d"
        before, after = pad_before_after(padding, nd, name)
        extra = {"count_include_pad": count_include_pad} if kind == "avg" else {}
        if kind == "max" and count_include_pad:
            raise TypeError("max pooling has no count_include_pad")
        return make_call(
            name, [data], pool_size=ntuple(pool_size, nd, "pool_size", name),
            strides=ntuple(strides, nd, "strides", name),
            dilation=ntuple(dilation, nd, "dilation", name),
            padding=before + after, layout=layout, out_layout=out_layout, ceil_mode=ceil_mode,
            **extra,
        )

    named(ctor, f"{kind}_pool{nd}d")
    lay = _LAYOUT[nd]
    ctor.__doc__ = (
        f"{nd}-D {kind} pooling (tvm.relay.nn.{kind}_pool{nd}d).\n\n"
        f"    Args:\n"
        f"        data: {nd + 2}-d tensor in ``layout`` ({lay} by default), or {nd + 3}-d with\n"
        f"            the channels blocked (``{lay}16c``: the block is the last axis).\n"
        f"        pool_size, strides, dilation: an int or {nd} ints.\n"
        f"        padding: 1, {nd} or {2 * nd} ints (all befores, then all afters).\n"
        f"        ceil_mode: round the output size up instead of down.\n"
        + ("        count_include_pad: divide by the taps in the padded input rather than in\n"
           "            the input.\n" if kind == "avg" else "")
        + "\n    Returns:\n"
        "        the pooled tensor, ``(S + pads - (k-1)*dilation - 1) // stride + 1`` per spatial\n"
        "        axis (rounded up with ceil_mode).\n"
    )
    return ctor


max_pool1d = _pool_ctor(1, "max")
max_pool2d = _pool_ctor(2, "max")
max_pool3d = _pool_ctor(3, "max")
avg_pool1d = _pool_ctor(1, "avg")
avg_pool2d = _pool_ctor(2, "avg")
avg_pool3d = _pool_ctor(3, "avg")


# ---- global and adaptive pooling -------------------------------------------------------------


def _adaptive_rel(nd, op, global_):
    sp = SPATIAL[nd]

    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op)
        if ts is None:
            return None
        data = ts[0]
        axes = _check_layout(data, attrs, nd, op)
        shape = list(data.shape)
        osz = (1,) * nd if global_ else _adaptive_size(attrs, nd, [shape[axes[c]] for c in sp], op)
        for i, ch in enumerate(sp):
            d = shape[axes[ch]]
            if isinstance(osz[i], int) and osz[i] > 0:  # windows of no element have no value
                if isinstance(d, int) and d == 0:
                    raise TypeInferenceError(
                        f"{op}: pools axis {ch} of size 0 (data shape {shape_str(data.shape)}) "
                        f"into {osz[i]} output(s); a window of no elements has no value")
                if not isinstance(d, (int, AnyDim)):  # Any: the kernel checks it
                    require_at_run_time(d > 0, f"axis {ch} of data has size 0 at run time; a "
                                               f"pooling window of no elements has no value")
            shape[axes[ch]] = osz[i]
        return TensorType(shape, data.dtype)

    return rel


def _adaptive_size(attrs, nd, insize, op):
    if not attrs.output_size:
        return tuple(insize)  # Relay: no output_size keeps the input size
    osz = ntuple(attrs.output_size, nd, "output_size", op)
    if any(o <= 0 for o in osz):
        raise TypeInferenceError(f"{op}: output_size {osz} must be positive")
    return osz


def adaptive_pool_reference(x, kind, osz):
    """NumPy adaptive pooling of ``x`` (N, C, *S) to spatial size ``osz``."""
    size = x.shape[2:]
    nd = len(osz)
    out = np.empty(x.shape[:2] + tuple(osz), dtype=x.dtype)
    if 0 in size and 0 not in osz:
        raise ValueError(f"pooling data of spatial shape {tuple(size)} to {tuple(osz)}: a window "
                         "of no elements has no value")
    ranges = [[(o * size[i] // osz[i], -((-(o + 1) * size[i]) // osz[i])) for o in range(osz[i])]
              for i in range(nd)]
    for idx in itertools.product(*[range(o) for o in osz]):
        window = tuple(slice(*ranges[i][idx[i]]) for i in range(nd))
        w = x[(slice(None), slice(None)) + window]
        w = w.reshape(*x.shape[:2], int(np.prod(w.shape[2:])))  # -1: ambiguous for N or C 0
        out[(slice(None), slice(None)) + idx] = (
            np_reduce("max", w, axis=2) if kind == "max" else w.astype("float64").mean(axis=2)
        )
    return out


def _adaptive_ref(nd, kind, op, global_):
    def ref(args, attrs, out_type):
        x = _canon(args[0], attrs.layout, nd)
        osz = (1,) * nd if global_ else _adaptive_size(attrs, nd, x.shape[2:], op)
        return _uncanon(adaptive_pool_reference(x, kind, osz), attrs.layout, nd)

    return ref


def _adaptive_compute(nd, kind, op, global_):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        x = inputs[0]
        pos = pool_layout(attrs.layout, nd, op)[0]
        axes = [pos[c] for c in SPATIAL[nd]]
        if kind == "max":
            osz = ((1,) * nd if global_
                   else _adaptive_size(attrs, nd, out_dims([x.shape[a] for a in axes]), op))
            return adaptive_max_pool(x, attrs.layout, SPATIAL[nd], osz,
                                     out_dims(out_type.shape))
        if global_ and nd == 2:
            return topi.nn.global_pool(x, kind, attrs.layout)
        osz = (1,) * nd if global_ else _adaptive_size(attrs, nd, [x.shape[a] for a in axes], op)
        fn = {1: topi.nn.adaptive_pool1d, 2: topi.nn.adaptive_pool, 3: topi.nn.adaptive_pool3d}[nd]
        return fn(x, list(osz), kind, attrs.layout)

    return compute


for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        for _global in (True, False):
            _op = f"nn.{'global' if _global else 'adaptive'}_{_kind}_pool{_nd}d"
            if _global:
                _attrs = (f"relay.attrs.GlobalPool{_nd}DAttrs",
                          [F("layout", "str", _LAYOUT[_nd]), F("out_layout", "str", "")])
            else:
                _attrs = (f"relay.attrs.AdaptivePool{_nd}DAttrs",
                          [F("output_size", "ints", ()), F("layout", "str", _LAYOUT[_nd]),
                           F("out_layout", "str", "")])
            register_op(
                _op,
                num_inputs=1,
                arguments=("data",),
                attrs=_attrs,
                rel=_adaptive_rel(_nd, _op, _global),
                ref=_adaptive_ref(_nd, _kind, _op, _global),
                compute=_adaptive_compute(_nd, _kind, _op, _global),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                doc=(f"{_kind} over all of each channel's {SPATIAL[_nd]} (topi.nn.global_pool)"
                     if _global else
                     f"Adaptive {_nd}-D {_kind} pooling to output_size (topi.nn.adaptive_pool)"),
                level=2,
                schedule="adaptive_pool",
            )


def _global_ctor(nd, kind):
    def ctor(data, layout=_LAYOUT[nd], out_layout=""):
        return make_call(f"nn.global_{kind}_pool{nd}d", [data], layout=layout, out_layout=out_layout)

    named(ctor, f"global_{kind}_pool{nd}d")
    ctor.__doc__ = (f"Global {kind} pooling (tvm.relay.nn.global_{kind}_pool{nd}d): every spatial "
                    f"axis of ``layout`` ({_LAYOUT[nd]}, or {_LAYOUT[nd]}{{c}}c) becomes 1.")
    return ctor


def _adaptive_ctor(nd, kind):
    def ctor(data, output_size=None, layout=_LAYOUT[nd], out_layout=""):
        if output_size is None:
            output_size = ()
        elif isinstance(output_size, int):
            output_size = (output_size,) * nd
        return make_call(f"nn.adaptive_{kind}_pool{nd}d", [data], output_size=tuple(output_size),
                         layout=layout, out_layout=out_layout)

    named(ctor, f"adaptive_{kind}_pool{nd}d")
    ctor.__doc__ = (
        f"Adaptive {kind} pooling (tvm.relay.nn.adaptive_{kind}_pool{nd}d): output ``o`` of ``O`` "
        f"pools input ``[floor(o*S/O), ceil((o+1)*S/O))``. ``output_size``: an int or {nd} ints; "
        f"None keeps the input size."
    )
    return ctor


global_max_pool1d = _global_ctor(1, "max")
global_avg_pool1d = _global_ctor(1, "avg")
global_max_pool2d = _global_ctor(2, "max")
global_avg_pool2d = _global_ctor(2, "avg")
global_max_pool3d = _global_ctor(3, "max")
global_avg_pool3d = _global_ctor(3, "avg")
adaptive_max_pool1d = _adaptive_ctor(1, "max")
adaptive_avg_pool1d = _adaptive_ctor(1, "avg")
adaptive_max_pool2d = _adaptive_ctor(2, "max")
adaptive_avg_pool2d = _adaptive_ctor(2, "avg")
adaptive_max_pool3d = _adaptive_ctor(3, "max")
adaptive_avg_pool3d = _adaptive_ctor(3, "avg")

__all__ = [
    f"{pre}{kind}_pool{nd}d"
    for pre in ("", "global_", "adaptive_")
    for kind in ("max", "avg")
    for nd in (1, 2, 3)
]

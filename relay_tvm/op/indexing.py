"""Slicing, gathering and masking operators (tvm.relay.op.transform, indexing part).

``strided_slice``, ``slice_like``, ``take``, ``gather``, ``gather_nd``, ``one_hot``,
``sequence_mask``, ``reverse_sequence``, with tvm.relay 0.19's names, attributes and semantics.
Slices follow Python's slice rules (negative begin/end count from the end; out-of-range bounds
clamp; a negative stride walks backwards), as Relay canonicalized them.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import (
    LOWERING,
    as_int64,
    int_dtype_check,
    int_vector_const,
    normalize_axis,
    out_dims,
    require_at_run_time,
    require_equal_dims,
    require_indices_in_range,
    shape_str,
    static_value,
    tensor_args,
)
from .registry import OpPattern, make_call, register_gradient, register_op

# ---- strided_slice -----------------------------------------------------------------------------


def slice_plan(attrs, shape, op_name="strided_slice"):
    """Per axis of ``shape``: a Python ``slice`` (or None for an untouched axis).

    Raises:
        TypeInferenceError: a stride is 0, an axis is out of range, or the lists disagree.
    """
    ndim = len(shape)
    begin, end = list(attrs.begin), list(attrs.end)
    strides = list(attrs.strides) if attrs.strides else [1]
    if attrs.axes is not None:
        axes = [normalize_axis(a, ndim, op_name) for a in attrs.axes]
        if len(begin) != len(axes) or len(end) != len(axes):
            raise TypeInferenceError(
                f"{op_name}: begin {tuple(begin)}, end {tuple(end)} and axes {attrs.axes} must "
                f"have one entry per axis"
            )
        if len(set(axes)) != len(axes):
            raise TypeInferenceError(
                f"{op_name}: axes {tuple(attrs.axes)} name an axis twice (data rank {ndim}, "
                f"shape {shape_str(shape)})"
            )
        # 0.19 required one stride per axis; its wrapper's default ``[1]`` means all ones
        if strides == [1]:
            strides = [1] * len(axes)
        if len(strides) != len(axes):
            raise TypeInferenceError(
                f"{op_name}: strides {tuple(strides)} has {len(strides)} entries, expected one "
                f"per axis of axes {tuple(attrs.axes)} ({len(axes)})"
            )
    else:
        # tvm.relay 0.19 read only the first rank entries and dropped the rest unsaid
        for what, vals in (("begin", begin), ("end", end), ("strides", strides)):
            if len(vals) > ndim:
                raise TypeInferenceError(
                    f"{op_name}: {what} {tuple(vals)} has {len(vals)} entries, more than the "
                    f"data's rank {ndim} (data shape {shape_str(shape)}): at most one per axis"
                )
        # as 0.19 pads begin and end to the rank: an end (or strides) longer than begin
        # slices those axes from their start
        axes = list(range(max(len(begin), len(end), len(strides) if len(strides) > 1 else 0)))
    # without axes, the axes past the given strides have stride 1 (0.19's StridedSliceRel
    # pads the list with ones: strides=[2] on a matrix steps axis 0 only)
    if attrs.slice_mode not in ("end", "size"):
        raise TypeInferenceError(
            f"{op_name}: slice_mode must be 'end' or 'size', got {attrs.slice_mode!r}"
        )
    plan = [None] * ndim
    for k, ax in enumerate(axes):
        b = begin[k] if k < len(begin) else None
        s = strides[k] if k < len(strides) else 1
        e = end[k] if k < len(end) else None
        if attrs.slice_mode == "size":
            s, b = 1, 0 if b is None else b
            if e is not None:
                if e < 0:
                    e = None
                else:
                    if b < 0 and not isinstance(shape[ax], int):  # both from the end
                        e = b + e if b + e < 0 else None
                    else:
                        e = (b + shape[ax] if b < 0 else b) + e
        if s == 0:
            raise TypeInferenceError(f"{op_name}: stride of axis {ax} is 0")
        plan[ax] = slice(b, e, s)
    return plan


def symbolic_slice(sl: slice, n):
    """Python's ``sl.indices(n)`` for a symbolic length ``n`` (a ``PrimExpr`` of a kernel with
    ``Any`` dimensions) and static ``sl``: ``(start, length, step)``, start and length as
    int64 ``PrimExpr`` s (negative bounds count from the end, out-of-range ones clamp)."""
    from tvm import te, tirx

    n = as_int64(n)
    step = 1 if sl.step is None else sl.step

    def bound(v, lo, hi):
        if v < 0:
            return te.max(n + v, lo)
        return te.min(tirx.const(v, "int64"), hi)

    if step > 0:
        lo, hi = tirx.const(0, "int64"), n
        start = lo if sl.start is None else bound(sl.start, lo, hi)
        stop = hi if sl.stop is None else bound(sl.stop, lo, hi)
        span = stop - start
    else:
        lo, hi = tirx.const(-1, "int64"), n - 1
        start = hi if sl.start is None else bound(sl.start, lo, hi)
        stop = lo if sl.stop is None else bound(sl.stop, lo, hi)
        span = start - stop
    length = te.max(tirx.floordiv(span + (abs(step) - 1), abs(step)), tirx.const(0, "int64"))
    return start, length, step


def _strided_slice_rel(types, attrs):
    ts = tensor_args(types, ("data",), "strided_slice")
    if ts is None:
        return None
    shape = ts[0].shape
    out = []
    for d, sl in zip(shape, slice_plan(attrs, shape)):
        if sl is None:
            out.append(d)
        elif isinstance(d, int):
            out.append(len(range(*sl.indices(d))))
        elif isinstance(d, AnyDim):
            out.append(AnyDim())
        else:  # lowering a kernel with Any dimensions: its symbolic length
            out.append(symbolic_slice(sl, d)[1])
    return TensorType(out, ts[0].dtype)


def _strided_slice_ref(args, attrs, out_type):
    x = args[0]
    plan = slice_plan(attrs, x.shape)
    return x[tuple(sl if sl is not None else slice(None) for sl in plan)]


def _strided_slice_compute(attrs, inputs, out_type):
    # Canonical start and step per axis from Python's slice rules; out[i] = x[start + i * step].
    # (topi.strided_slice reads end=-1 as "dim - 1", which cannot express a backward slice that
    # runs through index 0, so the canonical form is indexed directly.)
    from tvm import te

    x = inputs[0]
    shape = [int(d) if type(d).__name__ == "IntImm" else d for d in x.shape]
    plan = slice_plan(attrs, shape)
    starts, steps = [], []
    for d, sl in zip(shape, plan):
        if sl is None:
            starts.append(0)
            steps.append(1)
        else:
            start, _, step = sl.indices(d) if isinstance(d, int) else symbolic_slice(sl, d)
            starts.append(start)
            steps.append(step)
    return te.compute(
        out_dims(out_type.shape),
        lambda *i: x(*[st + ii * sp for ii, st, sp in zip(i, starts, steps)]),
        name="strided_slice",
    )


register_op(
    "strided_slice",
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.StridedSliceAttrs",
        [
            F("begin", "ints"),
            F("end", "ints"),
            F("strides", "ints?", None),
            F("slice_mode", "str", "end"),
            F("axes", "ints?", None),
        ],
    ),
    rel=_strided_slice_rel,
    ref=_strided_slice_ref,
    compute=_strided_slice_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Python-style slice per axis with begin/end/strides (slice_mode 'end' or 'size').",
    level=4,
)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """Slice ``data`` like ``data[b0:e0:s0, b1:e1:s1, ...]``.

    Args:
        begin, end: per sliced axis; negative values count from the end; out-of-range values
            clamp. With ``slice_mode="size"``, ``end`` is the size of the slice (-1: to the end)
            and strides are ignored.
        strides: per sliced axis, the missing ones 1 (a single value is the first axis's
            stride, as in tvm.relay 0.19); may be negative. Where one of begin/end/strides is
            a Relay expression (``dyn.strided_slice``), lists and ints among the others are
            taken as int32 constants (int64 for values beyond int32).
        axes: the axes sliced (default: the first ``len(begin)`` axes).
    """
    from . import dyn

    if any(dyn.is_dynamic_arg(v) for v in (begin, end, strides)):
        if axes is not None:
            from ..errors import RelayError

            raise RelayError("strided_slice: axes cannot be given with computed begin/end/strides "
                             "(dyn.strided_slice slices the leading axes)")
        # the others of begin/end/strides as constants (0.19's const(list(v)))
        begin, end, strides = (int_vector_const(v, "strided_slice")
                               for v in (begin, end, strides))
        if strides is None:
            from .tensor import ones_like

            strides = ones_like(begin)
        return dyn.strided_slice(data, begin, end, strides, slice_mode)
    begin, end, strides, axes = (
        static_value(v, n, "strided_slice")
        for v, n in ((begin, "begin"), (end, "end"), (strides, "strides"), (axes, "axes"))
    )
    begin, end, strides, axes = (
        (v,) if isinstance(v, int) else v for v in (begin, end, strides, axes)
    )
    return make_call(
        "strided_slice",
        [data],
        begin=tuple(begin),
        end=tuple(end),
        strides=None if strides is None else tuple(strides),
        axes=None if axes is None else tuple(axes),
        slice_mode=slice_mode,
    )


# ---- slice_like --------------------------------------------------------------------------------


def _slice_like_axes(attrs, data, like):
    if attrs.axes is None:
        return list(range(min(data.ndim, like.ndim)))
    axes = [normalize_axis(a, data.ndim, "slice_like") for a in attrs.axes]
    for a in axes:
        if a >= like.ndim:
            raise TypeInferenceError(
                f"slice_like: axis {a} is out of range for shape_like shape {shape_str(like.shape)}"
            )
    return axes


def _slice_like_rel(types, attrs):
    ts = tensor_args(types, ("data", "shape_like"), "slice_like")
    if ts is None:
        return None
    data, like = ts
    shape = list(data.shape)
    for a in _slice_like_axes(attrs, data, like):
        d, t = data.shape[a], like.shape[a]
        if isinstance(d, int) and isinstance(t, int) and t > d:
            raise TypeInferenceError(
                f"slice_like: shape_like shape {shape_str(like.shape)} is larger than data shape "
                f"{shape_str(data.shape)} on axis {a}"
            )
        if LOWERING[0] and not (isinstance(d, int) and isinstance(t, int)):
            require_at_run_time(as_int64(t) <= as_int64(d), f"shape_like is larger than data on axis {a}")
        shape[a] = t
    return TensorType(shape, data.dtype)


def _slice_like_compute(attrs, inputs, out_type):
    from tvm import te

    x = inputs[0]
    return te.compute(out_dims(out_type.shape), lambda *i: x(*i), name="slice_like")


register_op(
    "slice_like",
    num_inputs=2,
    arguments=("data", "shape_like"),
    attrs=("relay.attrs.SliceLikeAttrs", [F("axes", "ints?", None)]),
    rel=_slice_like_rel,
    ref=lambda args, attrs, out_type: args[0][
        tuple(
            slice(0, d)
            for d in _slice_like_rel([TensorType(a.shape, "float32") for a in args], attrs).shape
        )
    ],
    compute=_slice_like_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Slice data from 0 to the dims of shape_like on axes (all common axes by default).",
    level=10,
)


def slice_like(data, shape_like, axes=None):
    """``data[:s0, :s1, ...]`` with ``s`` the shape of ``shape_like`` on ``axes``."""
    return make_call("slice_like", [data, shape_like], axes=None if axes is None else tuple(axes))


# ---- take --------------------------------------------------------------------------------------


def _take_rel(types, attrs):
    ts = tensor_args(types, ("data", "indices"), "take")
    if ts is None:
        return None
    data, idx = ts
    int_dtype_check(idx, "indices", "take")
    if attrs.mode not in ("clip", "wrap", "fast"):
        raise TypeInferenceError(f"take: mode must be 'clip', 'wrap' or 'fast', got {attrs.mode!r}")
    if attrs.axis is None:
        return TensorType(idx.shape, data.dtype)
    axis = normalize_axis(attrs.axis, data.ndim, "take")
    b = attrs.batch_dims % idx.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    if b > axis:
        raise TypeInferenceError(f"take: batch_dims {attrs.batch_dims} must be <= axis {axis}")
    return TensorType((*data.shape[:axis], *idx.shape[b:], *data.shape[axis + 1 :]), data.dtype)


def _take_1(x, idx, axis, mode):
    n = x.shape[axis]
    if mode == "fast":
        _np_index_check("take", idx, n, x.shape)
    if mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif mode == "wrap":
        idx = np.mod(idx, n)
    return np.take(x, idx, axis=axis)


def _take_ref(args, attrs, out_type):
    x, idx = args
    if attrs.axis is None:
        return _take_1(x.reshape(-1), idx, 0, attrs.mode)
    axis = attrs.axis % x.ndim
    b = attrs.batch_dims % idx.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    if b == 0:
        return _take_1(x, idx, axis, attrs.mode)
    return np.stack(
        [_take_1(x[bi], idx[bi], axis - b, attrs.mode) for bi in np.ndindex(*x.shape[:b])]
    ).reshape(*x.shape[:b], *_take_1(x[(0,) * b], idx[(0,) * b], axis - b, attrs.mode).shape)


def checked_indices(op_name, x, idx, n, axis=None):
    """``idx`` with negative values counted from the end (NumPy) and clamped into ``[0, n)``,
    so no read leaves the data; the kernel first checks that the values lie in ``[-n, n)``
    (an InputError naming ``op_name``, the data shape, ``axis`` -- None: the flattened data --
    and ``n`` where it is static otherwise) when ``idx`` is a kernel input."""
    from tvm import te, tirx

    static = isinstance(n, (int, tirx.IntImm))
    n64 = tirx.const(int(n), "int64") if static else tirx.Cast("int64", n)
    where = "the flattened data" if axis is None else f"axis {axis}"
    valid = f"[{-int(n)}, {int(n)}) on {where}" if static else \
        f"[-n, n) where n is the size of {where}"
    require_indices_in_range(idx, lambda i: n64, f"{op_name}: an index is out of range for "
                             f"data shape {shape_str(x.shape)} (valid: {valid})")

    def safe(*i):
        nn = n64.astype(idx.dtype)
        v = idx(*i)
        v = tirx.Select(v < 0, v + nn, v)
        return tirx.max(tirx.min(v, nn - 1), tirx.const(0, idx.dtype))

    return te.compute(idx.shape, safe, name=f"{op_name}_index")


def _np_index_check(op_name, idx, n, data_shape):
    where = np.argwhere((idx < -n) | (idx >= n))
    if where.size:
        pos = tuple(int(i) for i in where[0])
        raise InputError(f"{op_name}: index {int(idx[pos])} out of range for data shape "
                         f"{shape_str(data_shape)} (valid: [{-n}, {n}) on the indexed axis), "
                         f"at position {pos} of the indices")


def _take_compute(attrs, inputs, out_type):
    from tvm import topi

    x, idx = inputs
    mode = attrs.mode
    if mode == "fast":  # "fast" trusts the indices; an index out of range read past the data
        n = x.shape[attrs.axis % len(x.shape)] if attrs.axis is not None else None
        if n is None:
            n = 1
            for d in x.shape:
                n = n * d
        axis = attrs.axis % len(x.shape) if attrs.axis is not None else None
        idx, mode = checked_indices("take", x, idx, n, axis), "clip"
    return topi.take(x, idx, axis=attrs.axis, batch_dims=attrs.batch_dims, mode=mode)


register_op(
    "take",
    num_inputs=2,
    arguments=("data", "indices"),
    attrs=(
        "relay.attrs.TakeAttrs",
        [F("batch_dims", "int", 0), F("axis", "int?", None), F("mode", "str", "clip")],
    ),
    rel=_take_rel,
    ref=_take_ref,
    compute=_take_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Take elements along axis (flattened data when None); modes clip/wrap/fast (topi.take).",
    level=3,
)


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Elements of ``data`` at ``indices`` along ``axis`` (of the flattened data when None).

    Args:
        mode: ``"clip"`` clamps indices to ``[0, n-1]`` (negatives become 0), ``"wrap"`` takes
            them modulo n (Python's floor modulo), ``"fast"`` assumes they are in range.
    """
    return make_call("take", [data, indices], axis=axis, batch_dims=batch_dims, mode=mode)


# ---- gather / gather_nd ------------------------------------------------------------------------


def _gather_rel(types, attrs):
    ts = tensor_args(types, ("data", "indices"), "gather")
    if ts is None:
        return None
    data, idx = ts
    int_dtype_check(idx, "indices", "gather")
    if data.ndim != idx.ndim:
        raise TypeInferenceError(
            f"gather: data shape {shape_str(data.shape)} and indices shape "
            f"{shape_str(idx.shape)} must have one rank"
        )
    axis = normalize_axis(attrs.axis, data.ndim, "gather")
    for d, (n, m) in enumerate(zip(idx.shape, data.shape)):
        # out[.., i_d, ..] reads data[.., i_d, ..] on every axis but ``axis``
        if d == axis or isinstance(n, AnyDim) or isinstance(m, AnyDim):
            continue
        if isinstance(n, int) and isinstance(m, int):
            if n > m:
                raise TypeInferenceError(
                    f"gather: indices shape {shape_str(idx.shape)} exceeds data shape "
                    f"{shape_str(data.shape)} on axis {d}, which is not the gather axis {axis} "
                    f"(the output reads data there at the same position)")
        else:  # a dynamic kernel checks it (it read past the data; fresh-user trial)
            require_at_run_time(as_int64(n) <= as_int64(m),
                                f"indices exceed the data on axis {d}, which is not the gather "
                                f"axis {axis}")
    return TensorType(idx.shape, data.dtype)


def _gather_ref(x, idx, axis):
    axis = axis % x.ndim
    _np_index_check("gather", idx, x.shape[axis], x.shape)
    if any(n > m for d, (n, m) in enumerate(zip(idx.shape, x.shape)) if d != axis):
        raise InputError(f"gather: indices shape {shape_str(idx.shape)} exceeds data shape "
                         f"{shape_str(x.shape)} on an axis other than the gather axis {axis}")
    # the other axes take the first idx.shape[d] positions of data (numpy.take_along_axis
    # would broadcast indices over all of them instead)
    x = x[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(idx.shape))]
    return np.take_along_axis(x, idx.astype("int64"), axis)


def _gather_compute(attrs, inputs, out_type):
    from tvm import topi

    x, idx = inputs
    axis = attrs.axis % len(x.shape)
    return topi.gather(x, attrs.axis, checked_indices("gather", x, idx, x.shape[axis], axis))


register_op(
    "gather",
    num_inputs=2,
    arguments=("data", "indices"),
    attrs=("relay.attrs.GatherAttrs", [F("axis", "int")]),
    rel=_gather_rel,
    ref=lambda args, attrs, out_type: _gather_ref(args[0], args[1], attrs.axis),
    compute=_gather_compute,
    pattern=OpPattern.INJECTIVE,
    doc="out[i][j][k] = data[indices[i][j][k]][j][k] for axis 0 (numpy.take_along_axis).",
    level=3,
)


def gather(data, axis, indices):
    """Gather along ``axis`` (numpy.take_along_axis); the output has ``indices``' shape."""
    return make_call("gather", [data, indices], axis=axis)


def _gather_nd_rel(types, attrs):
    ts = tensor_args(types, ("data", "indices"), "gather_nd")
    if ts is None:
        return None
    data, idx = ts
    int_dtype_check(idx, "indices", "gather_nd")
    if idx.ndim < 1:
        raise TypeInferenceError("gather_nd: indices must have rank >= 1")
    m = attrs.index_rank if attrs.index_rank is not None else idx.shape[0]
    if not isinstance(m, int):
        raise TypeInferenceError(
            f"gather_nd: the first dimension of indices shape {shape_str(idx.shape)} must be "
            f"static (or give index_rank)"
        )
    b = attrs.batch_dims
    if b + m > data.ndim:
        raise TypeInferenceError(
            f"gather_nd: indices shape {shape_str(idx.shape)} indexes {m} dimensions after "
            f"{b} batch dimensions, but data shape {shape_str(data.shape)} has rank {data.ndim}"
        )
    return TensorType((*idx.shape[1:], *data.shape[b + m :]), data.dtype)


def _gather_nd_ref(args, attrs, out_type):
    x, idx = args
    b = attrs.batch_dims
    for r in range(idx.shape[0]):
        n = x.shape[b + r]
        bad = idx[r][(idx[r] < -n) | (idx[r] >= n)]
        if bad.size:
            raise InputError(f"gather_nd: index {int(bad.flat[0])} out of range for axis {b + r} "
                             f"of data shape {shape_str(x.shape)} (valid: [{-n}, {n}))")
    if b == 0:
        return x[tuple(idx)]
    parts = [x[bi][tuple(idx[(slice(None), *bi)])] for bi in np.ndindex(*x.shape[:b])]
    return np.stack(parts).reshape(*x.shape[:b], *parts[0].shape)


def _gather_nd_compute(attrs, inputs, out_type):
    """topi.gather_nd on indices wrapped (negative: from the end, as NumPy) and clamped into
    range, so that no read leaves ``data``; the kernel checks the indices first (an index out of
    ``[-n, n)`` is an InputError) when they are a kernel input."""
    from tvm import topi

    x, idx = inputs
    return topi.gather_nd(x, checked_nd_indices("gather_nd", x, idx, attrs.batch_dims),
                          attrs.batch_dims)


def checked_nd_indices(op_name, x, idx, first_axis):
    """M-d indices (row ``r`` of ``idx`` indexes axis ``first_axis + r`` of ``x``, as in
    gather_nd/scatter_nd) wrapped from the end and clamped into range, with the kernel's check
    that they lie in ``[-n, n)`` (see :func:`checked_indices`)."""
    from tvm import te, tirx

    def size(i):  # the size of the data axis that idx[i[0], ...] indexes
        dims = [tirx.const(int(d), "int64") if isinstance(d, int) else tirx.Cast("int64", d)
                for d in x.shape[first_axis:first_axis + int(idx.shape[0])]]
        out = dims[-1]
        for r in range(len(dims) - 2, -1, -1):
            out = tirx.Select(tirx.Cast("int64", i[0]) == r, dims[r], out)
        return out

    require_indices_in_range(idx, size, f"{op_name}: an index is out of range for data shape "
                             f"{shape_str(x.shape)} (valid on each axis: [-n, n))")

    def safe(*i):
        n = size(i).astype(idx.dtype)
        v = idx(*i)
        v = tirx.Select(v < 0, v + n, v)
        return tirx.max(tirx.min(v, n - 1), tirx.const(0, idx.dtype))

    return te.compute(idx.shape, safe, name=f"{op_name}_index")


register_op(
    "gather_nd",
    num_inputs=2,
    arguments=("data", "indices"),
    attrs=("relay.attrs.GatherNDAttrs", [F("batch_dims", "int", 0), F("index_rank", "int?", None)]),
    rel=_gather_nd_rel,
    ref=_gather_nd_ref,
    compute=_gather_nd_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Gather slices at M-d indices given along the first axis of indices (topi.gather_nd).",
    level=3,
)


def gather_nd(data, indices, batch_dims=0, index_rank=None):
    """``out[y0..yk] = data[indices[0, y0..yk], ..., indices[M-1, y0..yk]]`` (after batch dims)."""
    return make_call("gather_nd", [data, indices], batch_dims=batch_dims, index_rank=index_rank)


# ---- one_hot -----------------------------------------------------------------------------------


def _one_hot_rel(types, attrs):
    ts = tensor_args(types, ("indices", "on_value", "off_value"), "one_hot")
    if ts is None:
        return None
    idx, on, off = ts
    int_dtype_check(idx, "indices", "one_hot")
    for t, n in ((on, "on_value"), (off, "off_value")):
        if t.ndim != 0:
            raise TypeInferenceError(
                f"one_hot: {n} must be a scalar, got shape {shape_str(t.shape)}"
            )
    if attrs.depth < 0:
        raise TypeInferenceError(f"one_hot: depth must be >= 0, got {attrs.depth}")
    axis = attrs.axis if attrs.axis >= 0 else idx.ndim + 1 + attrs.axis
    if not 0 <= axis <= idx.ndim:
        raise TypeInferenceError(
            f"one_hot: axis {attrs.axis} is out of range for rank {idx.ndim + 1}"
        )
    shape = list(idx.shape)
    return TensorType(shape[:axis] + [attrs.depth] + shape[axis:], attrs.dtype or on.dtype)


def _one_hot_ref(args, attrs, out_type):
    idx, on, off = args
    hot = idx[..., None] == np.arange(attrs.depth)
    out = np.where(hot, on, off).astype(out_type.dtype)
    axis = attrs.axis if attrs.axis >= 0 else idx.ndim + 1 + attrs.axis
    return np.moveaxis(out, -1, axis)


def _one_hot_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.one_hot(
        inputs[0], inputs[1](), inputs[2](), attrs.depth, attrs.axis, out_type.dtype
    )


register_op(
    "one_hot",
    num_inputs=3,
    arguments=("indices", "on_value", "off_value"),
    attrs=(
        "relay.attrs.OneHotAttrs",
        [F("depth", "int"), F("axis", "int", -1), F("dtype", "dtype", "float32")],
    ),
    rel=_one_hot_rel,
    ref=_one_hot_ref,
    compute=_one_hot_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="One-hot encode indices into a new axis of size depth (topi.one_hot).",
    level=10,
)


def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """``on_value`` where ``indices == k`` along a new axis of size ``depth``, else ``off_value``.

    Indices outside ``[0, depth)`` give rows of ``off_value``.
    """
    from . import dyn

    if dyn.is_dynamic_arg(depth):
        return dyn.one_hot(indices, on_value, off_value, depth, axis, dtype)
    depth = static_value(depth, "depth", "one_hot")
    return make_call("one_hot", [indices, on_value, off_value], depth=depth, axis=axis, dtype=dtype)


# ---- sequence_mask / reverse_sequence ----------------------------------------------------------


def _sequence_mask_rel(types, attrs):
    ts = tensor_args(types, ("data", "valid_length"), "sequence_mask")
    if ts is None:
        return None
    data, vl = ts
    if attrs.axis not in (0, 1):
        raise TypeInferenceError(f"sequence_mask: axis must be 0 or 1, got {attrs.axis}")
    if data.ndim < 2:
        raise TypeInferenceError(
            f"sequence_mask: data must have rank >= 2, got shape {shape_str(data.shape)}"
        )
    batch = data.shape[1 - attrs.axis]
    if vl.ndim != 1 or (
        isinstance(vl.shape[0], int) and isinstance(batch, int) and vl.shape[0] != batch
    ):
        raise TypeInferenceError(
            f"sequence_mask: valid_length shape {shape_str(vl.shape)} must be ({batch},), the "
            f"batch dimension of data shape {shape_str(data.shape)}"
        )
    require_equal_dims(vl.shape[0], batch, "valid_length must have the batch dimension's size")
    return data


def _sequence_mask_ref(args, attrs, out_type):
    x, vl = args
    t = np.arange(x.shape[attrs.axis])
    if attrs.axis == 0:
        mask = t[:, None] >= vl[None, :]
    else:
        mask = t[None, :] >= vl[:, None]
    mask = mask.reshape(mask.shape + (1,) * (x.ndim - 2))
    return np.where(mask, np.asarray(attrs.mask_value, x.dtype), x)


def _sequence_mask_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.sequence_mask(
        inputs[0], inputs[1], attrs.mask_value, attrs.axis
    )


register_op(
    "sequence_mask",
    num_inputs=2,
    arguments=("data", "valid_length"),
    attrs=("relay.attrs.SequenceMaskAttrs", [F("mask_value", "float", 0.0), F("axis", "int", 0)]),
    rel=_sequence_mask_rel,
    ref=_sequence_mask_ref,
    compute=_sequence_mask_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Set positions at or past valid_length[b] along axis to mask_value (MXNet SequenceMask).",
    level=10,
)


def sequence_mask(data, valid_length, mask_value=0.0, axis=0):
    """Mask ``data`` (``(max_len, batch, ...)`` for axis 0, ``(batch, max_len, ...)`` for axis 1)
    past each sequence's ``valid_length`` with ``mask_value``."""
    return make_call("sequence_mask", [data, valid_length], mask_value=mask_value, axis=axis)


def _reverse_sequence_rel(types, attrs):
    ts = tensor_args(types, ("data", "seq_lengths"), "reverse_sequence")
    if ts is None:
        return None
    data, sl = ts
    int_dtype_check(sl, "seq_lengths", "reverse_sequence")
    seq_axis = normalize_axis(attrs.seq_axis, data.ndim, "reverse_sequence", "seq_axis")
    batch_axis = normalize_axis(attrs.batch_axis, data.ndim, "reverse_sequence", "batch_axis")
    if seq_axis == batch_axis:
        raise TypeInferenceError("reverse_sequence: seq_axis and batch_axis must differ")
    b = data.shape[batch_axis]
    if sl.ndim != 1 or (isinstance(sl.shape[0], int) and isinstance(b, int) and sl.shape[0] != b):
        raise TypeInferenceError(
            f"reverse_sequence: seq_lengths shape {shape_str(sl.shape)} must be ({b},), the "
            f"batch dimension of data shape {shape_str(data.shape)}"
        )
    require_equal_dims(sl.shape[0], b, "seq_lengths must have the batch dimension's size")
    return data


def _reverse_sequence_ref(args, attrs, out_type):
    x, sl = args
    seq_axis, batch_axis = attrs.seq_axis % x.ndim, attrs.batch_axis % x.ndim
    out = x.copy()
    for b in range(x.shape[batch_axis]):
        n = int(min(max(sl[b], 0), x.shape[seq_axis]))
        src = [slice(None)] * x.ndim
        src[batch_axis] = b
        src[seq_axis] = slice(0, n)
        dst = list(src)
        src[seq_axis] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
        out[tuple(dst)] = x[tuple(src)]
    return out


def _reverse_sequence_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.reverse_sequence(
        inputs[0], inputs[1], attrs.seq_axis, attrs.batch_axis
    )


register_op(
    "reverse_sequence",
    num_inputs=2,
    arguments=("data", "seq_lengths"),
    attrs=(
        "relay.attrs.ReverseSequenceAttrs",
        [F("seq_axis", "int", 1), F("batch_axis", "int", 0)],
    ),
    rel=_reverse_sequence_rel,
    ref=_reverse_sequence_ref,
    compute=_reverse_sequence_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Reverse the first seq_lengths[b] elements along seq_axis of each batch b.",
    level=3,
)


def reverse_sequence(data, seq_lengths, seq_axis=1, batch_axis=0):
    """Reverse, for each batch ``b``, the first ``seq_lengths[b]`` elements along ``seq_axis``."""
    return make_call(
        "reverse_sequence", [data, seq_lengths], seq_axis=seq_axis, batch_axis=batch_axis
    )


__all__ = [
    "strided_slice",
    "slice_like",
    "take",
    "gather",
    "gather_nd",
    "one_hot",
    "sequence_mask",
    "reverse_sequence",
    "slice_plan",
]


# ---- gradients (FPrimalGradient) --------------------------------------------------------------
# Gathers scatter the output gradient back (scatter_nd with mode "add" sums repeated indices).


def _zeros_like(x):
    return make_call("zeros_like", [x])


@register_gradient("strided_slice")
def _strided_slice_grad(orig, g):
    from ..ir.expr import const
    from .transform_extra import scatter_nd

    x = orig.args[0]
    shape = x.checked_type.concrete_shape
    plan = slice_plan(orig.attrs, shape)
    ranges = [
        np.arange(d) if sl is None else np.arange(*sl.indices(d)) for d, sl in zip(shape, plan)
    ]
    index = np.stack(np.meshgrid(*ranges, indexing="ij")).astype("int64")
    return [scatter_nd(_zeros_like(x), const(index), g, "update")]


@register_gradient("gather_nd")
def _gather_nd_grad(orig, g):
    from .transform_extra import scatter_nd

    x, idx = orig.args
    if orig.attrs.batch_dims:
        raise NotImplementedError("gather_nd gradient with batch_dims > 0")
    return [scatter_nd(_zeros_like(x), idx, g, "add"), _zeros_like(idx)]


@register_gradient("take")
def _take_grad(orig, g):
    from ..ir.expr import const
    from .tensor import clip, floor_mod
    from .transform import reshape, reshape_like, transpose
    from .transform_extra import scatter_nd

    x, idx = orig.args
    xt, it = x.checked_type, idx.checked_type
    if orig.attrs.batch_dims:
        raise NotImplementedError("take gradient with batch_dims > 0")
    xshape = xt.concrete_shape
    axis = None if orig.attrs.axis is None else orig.attrs.axis % len(xshape)
    n = int(np.prod(xshape)) if axis is None else xshape[axis]
    if orig.attrs.mode == "wrap":
        idx = floor_mod(idx, const(n, it.dtype))
    elif orig.attrs.mode == "clip":
        idx = clip(idx, 0, n - 1)
    flat_idx = reshape(idx, (1, -1))
    if axis is None:
        flat = scatter_nd(
            make_call("zeros", [], shape=(n,), dtype=xt.dtype), flat_idx, reshape(g, (-1,)), "add"
        )
        return [reshape_like(flat, x), _zeros_like(orig.args[1])]
    k = len(it.shape)
    pre, post = list(range(axis)), list(range(axis + k, axis + k + len(xshape) - axis - 1))
    gt = transpose(g, list(range(axis, axis + k)) + pre + post)
    rest = [xshape[i] for i in range(len(xshape)) if i != axis]
    gt = reshape(gt, (-1, *rest))
    zeros = make_call("zeros", [], shape=(n, *rest), dtype=xt.dtype)
    dx = scatter_nd(zeros, flat_idx, gt, "add")
    back = list(range(1, axis + 1)) + [0] + list(range(axis + 1, len(xshape)))
    return [transpose(dx, back), _zeros_like(orig.args[1])]


@register_gradient("one_hot")
def _one_hot_grad(orig, g):
    from ..ir.expr import const
    from .reduce import sum as _sum
    from .tensor import multiply

    idx, on, off = orig.args
    a = orig.attrs
    dt = on.checked_type.dtype
    hot = one_hot(idx, const(1, dt), const(0, dt), a.depth, a.axis, a.dtype)
    cold = one_hot(idx, const(0, dt), const(1, dt), a.depth, a.axis, a.dtype)
    return [_zeros_like(idx), _sum(multiply(g, hot)), _sum(multiply(g, cold))]


@register_gradient("gather")
def _gather_grad(orig, g):
    from .transform_extra import scatter_elements

    x, idx = orig.args
    return [scatter_elements(_zeros_like(x), idx, g, orig.attrs.axis, "add"), _zeros_like(idx)]


@register_gradient("sequence_mask")
def _sequence_mask_grad(orig, g):
    x, vl = orig.args
    return [sequence_mask(g, vl, 0.0, orig.attrs.axis), _zeros_like(vl)]


@register_gradient("reverse_sequence")
def _reverse_sequence_grad(orig, g):
    x, sl = orig.args
    return [reverse_sequence(g, sl, orig.attrs.seq_axis, orig.attrs.batch_axis), _zeros_like(sl)]


@register_gradient("slice_like")
def _slice_like_grad(orig, g):
    from ..ir.expr import const
    from .tensor import zeros_like
    from .transform_extra import scatter_nd

    x, like = orig.args
    out = orig.checked_type.concrete_shape
    index = np.stack(np.meshgrid(*[np.arange(d) for d in out], indexing="ij")).astype("int64")
    return [scatter_nd(zeros_like(x), const(index), g, "update"), zeros_like(like)]

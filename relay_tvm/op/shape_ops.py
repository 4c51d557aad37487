"""Broadcasting, shape and layout operators (tvm.relay.op.transform): ``broadcast_to``,
``broadcast_to_like``, ``collapse_sum_like``, ``collapse_sum_to``, ``shape_of``,
``ndarray_size``, ``layout_transform``, ``arange``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType, dim_equal
from . import _common
from ._common import broadcast_shapes, out_dims, shape_str, static_value, tensor_args
from .registry import (
    OpPattern,
    make_call,
    register_gradient,
    register_op,
    register_shape_error,
    register_shape_func,
)

# ---- broadcast_to / broadcast_to_like ----------------------------------------------------------


def _broadcast_target(op_name, data, target):
    if _common.LOWERING[0] and not all(isinstance(d, int) for d in target):
        return _lowered_target(op_name, data, target)
    out = broadcast_shapes(data.shape, target, f"{op_name} data and target")
    # an Any data dimension may be the target's or 1 (the kernel checks it at run time; a
    # (?,) data to (2, 4, 3) was refused, NumPy and 0.19 broadcast it; fresh-user trial)
    if len(out) != len(target) or not all(
        dim_equal(a, b) or isinstance(b, AnyDim) or isinstance(a, AnyDim)
        for a, b in zip(out, target)
    ):
        raise TypeInferenceError(
            f"{op_name}: data shape {shape_str(data.shape)} does not broadcast to "
            f"{shape_str(target)}"
        )
    return TensorType(target, data.dtype)


def _lowered_target(op_name, data, target):
    """The output type of broadcasting ``data`` to ``target`` in a dynamic kernel being lowered
    (symbolic dimensions): ``target``, with run-time checks that each data dimension is the
    target's or 1 (what 0.19's shape function of ``broadcast_to_like``, the like-tensor's shape,
    left to the kernel)."""
    if len(data.shape) > len(target):
        raise TypeInferenceError(f"{op_name}: data shape {shape_str(data.shape)} has more "
                                 f"dimensions than the target {shape_str(target)}")
    k = len(target) - len(data.shape)
    for i, d in enumerate(data.shape):
        t = target[k + i]
        if isinstance(d, int) and isinstance(t, int):
            if d not in (t, 1):
                raise TypeInferenceError(f"{op_name}: data shape {shape_str(data.shape)} does "
                                         f"not broadcast to {shape_str(target)}")
            continue
        if isinstance(d, int) and d == 1:
            continue
        from tvm import tirx

        d64, t64 = _common.as_int64(d), _common.as_int64(t)
        _common.require_at_run_time(tirx.Or(d64 == t64, d64 == 1),
                                    f"data dimension {i} must be 1 or the "
                                    f"target's (dimension {k + i})")
    return TensorType(tuple(target), data.dtype)


def _broadcast_to_rel(types, attrs):
    ts = tensor_args(types, ("data",), "broadcast_to")
    if ts is None:
        return None
    return _broadcast_target("broadcast_to", ts[0], tuple(attrs.shape))


def _broadcast_to_like_rel(types, attrs):
    ts = tensor_args(types, ("data", "broadcast_type"), "broadcast_to_like")
    if ts is None:
        return None
    return _broadcast_target("broadcast_to_like", ts[0], ts[1].shape)


def _broadcast_compute(attrs, inputs, out_type):
    from tvm import topi

    shape = out_dims(out_type.shape)
    # a symbolic data dimension may be 1 at run time: read its row 0 then
    return topi.broadcast_to(_common.broadcast_inputs(inputs[:1], shape)[0], shape)


def _broadcast_ref(args, attrs, out_type):
    target = args[1].shape if len(args) > 1 else attrs.shape
    return np.broadcast_to(args[0], target).copy()


register_op(
    "broadcast_to",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.InitOpAttrs", [F("shape", "ints?", None), F("dtype", "dtype", "")]),
    rel=_broadcast_to_rel,
    ref=_broadcast_ref,
    compute=_broadcast_compute,
    pattern=OpPattern.BROADCAST,
    doc="Broadcast data to shape (NumPy rules; topi.broadcast_to).",
    level=4,
)

register_op(
    "broadcast_to_like",
    batch_rows=True,
    num_inputs=2,
    arguments=("data", "broadcast_type"),
    rel=_broadcast_to_like_rel,
    ref=_broadcast_ref,
    compute=_broadcast_compute,
    pattern=OpPattern.BROADCAST,
    doc="Broadcast data to the shape of broadcast_type (topi.broadcast_to).",
    level=10,
)


def broadcast_to(data, shape):
    """Broadcast ``data`` to ``shape`` (NumPy rules; the result has exactly ``shape``)."""
    from . import dyn

    if dyn.is_dynamic_arg(shape):
        return dyn.broadcast_to(data, shape)
    shape = static_value(shape, "shape", "broadcast_to")
    return make_call(
        "broadcast_to", [data], shape=(shape,) if isinstance(shape, int) else tuple(shape)
    )


def broadcast_to_like(data, broadcast_type):
    """Broadcast ``data`` to the shape of ``broadcast_type``."""
    return make_call("broadcast_to_like", [data, broadcast_type])


# ---- collapse_sum_like / collapse_sum_to -------------------------------------------------------


def _collapse_target(op_name, data, target):
    try:
        out = broadcast_shapes(target, data.shape, op_name)
    except TypeInferenceError:
        out = None
    if (
        out is None
        or len(out) != data.ndim
        or not all(dim_equal(a, b) or isinstance(b, AnyDim) for a, b in zip(out, data.shape))
    ):
        raise TypeInferenceError(
            f"{op_name}: target shape {shape_str(target)} does not broadcast to data shape "
            f"{shape_str(data.shape)}, so data cannot be summed down to it"
        )
    return TensorType(target, data.dtype)


def _collapse_ref(args, attrs, out_type):
    x = args[0]
    target = args[1].shape if len(args) > 1 else attrs.shape
    lead = x.ndim - len(target)
    x = x.sum(axis=tuple(range(lead))) if lead else x
    axes = tuple(i for i, d in enumerate(target) if d == 1 and x.shape[i] != 1)
    return (x.sum(axis=axes, keepdims=True) if axes else x).astype(x.dtype)


def _collapse_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.collapse_sum(inputs[0], out_dims(out_type.shape))


register_op(
    "collapse_sum_like",
    num_inputs=2,
    arguments=("data", "collapse_type"),
    rel=lambda types, attrs: (
        None
        if tensor_args(types, ("data", "collapse_type"), "collapse_sum_like") is None
        else _collapse_target("collapse_sum_like", types[0], types[1].shape)
    ),
    ref=_collapse_ref,
    compute=_collapse_compute,
    pattern=OpPattern.COMM_REDUCE,
    doc="Sum data down to the shape of collapse_type (the inverse of broadcasting).",
    level=10,
)

register_op(
    "collapse_sum_to",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.InitOpAttrs", [F("shape", "ints?", None), F("dtype", "dtype", "")]),
    rel=lambda types, attrs: (
        None
        if tensor_args(types, ("data",), "collapse_sum_to") is None
        else _collapse_target("collapse_sum_to", types[0], tuple(attrs.shape))
    ),
    ref=_collapse_ref,
    compute=_collapse_compute,
    pattern=OpPattern.COMM_REDUCE,
    doc="Sum data down to shape (the inverse of broadcasting).",
    level=10,
)


def collapse_sum_like(data, collapse_type):
    """Sum ``data`` over the axes that broadcasting ``collapse_type`` to it would add."""
    return make_call("collapse_sum_like", [data, collapse_type])


def collapse_sum_to(data, shape):
    """Sum ``data`` down to ``shape`` (which must broadcast to data's shape)."""
    shape = static_value(shape, "shape", "collapse_sum_to")
    return make_call(
        "collapse_sum_to", [data], shape=(shape,) if isinstance(shape, int) else tuple(shape)
    )


# ---- shape_of / ndarray_size -------------------------------------------------------------------


def _shape_of_rel(types, attrs):
    ts = tensor_args(types, ("data",), "shape_of")
    if ts is None:
        return None
    return TensorType((ts[0].ndim,), attrs.dtype)


def _shape_of_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.shape(inputs[0], out_type.dtype)


register_op(
    "shape_of",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ShapeOfAttrs", [F("dtype", "dtype", "int32")]),
    rel=_shape_of_rel,
    ref=lambda args, attrs, out_type: np.asarray(args[0].shape, dtype=out_type.dtype),
    compute=_shape_of_compute,
    pattern=OpPattern.OPAQUE,
    doc="The shape of data as a 1-d tensor of dtype (int32 by default) (topi.shape).",
    level=10,
)


def shape_of(data, dtype="int32"):
    """The shape of ``data`` as a 1-d ``dtype`` tensor of length rank(data)."""
    return make_call("shape_of", [data], dtype=dtype)


def _ndarray_size_rel(types, attrs):
    ts = tensor_args(types, ("data",), "ndarray_size")
    if ts is None:
        return None
    return TensorType((), attrs.dtype)


def _ndarray_size_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    size = tirx.const(1, out_type.dtype)
    for d in inputs[0].shape:
        size = size * tirx.Cast(out_type.dtype, d) if not isinstance(d, int) else size * d
    return te.compute((), lambda: size, name="ndarray_size")


register_op(
    "ndarray_size",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.NdarraySizeAttrs", [F("dtype", "dtype", "int32")]),
    rel=_ndarray_size_rel,
    ref=lambda args, attrs, out_type: np.asarray(args[0].size, dtype=out_type.dtype),
    compute=_ndarray_size_compute,
    pattern=OpPattern.INJECTIVE,
    doc="The number of elements of data as a 0-d tensor of dtype (int32 by default).",
    level=10,
)


def ndarray_size(data, dtype="int32"):
    """The number of elements of ``data`` (a 0-d ``dtype`` tensor)."""
    return make_call("ndarray_size", [data], dtype=dtype)


# ---- layout_transform --------------------------------------------------------------------------

_LAYOUT_RE = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(layout: str, op_name="layout_transform"):
    """``"NCHW16c"`` -> ``[("N", None), ("C", None), ("H", None), ("W", None), ("C", 16)]``: the
    primal axis of each position and, for a subordinate (lower-case) axis, its block size.

    Raises:
        TypeInferenceError: a malformed layout (repeated axis, a sub-axis without size or
            without its primal axis).
    """
    out = []
    pos = 0
    for m in _LAYOUT_RE.finditer(layout):
        if m.start() != pos:
            break
        pos = m.end()
        num, ch = m.groups()
        if ch.isupper():
            if num:
                raise TypeInferenceError(
                    f"{op_name}: layout {layout!r}: primal axis {ch} has a size"
                )
            out.append((ch, None))
        else:
            if not num or int(num) <= 0:
                raise TypeInferenceError(
                    f"{op_name}: layout {layout!r}: sub-axis {ch} needs a positive block size"
                )
            out.append((ch.upper(), int(num)))
    names = [(a, f is None) for a, f in out]
    if (
        pos != len(layout)
        or len(set(names)) != len(names)
        or any((a, True) not in names for a, f in out if f is not None)
    ):
        raise TypeInferenceError(f"{op_name}: malformed layout {layout!r}")
    return out


def _layout_plan(src, dst, op_name="layout_transform"):
    ps, pd = parse_layout(src, op_name), parse_layout(dst, op_name)
    if {a for a, f in ps if f is None} != {a for a, f in pd if f is None}:
        raise TypeInferenceError(
            f"{op_name}: layouts {src!r} and {dst!r} do not have the same primal axes"
        )
    return ps, pd


def _to_primal_shape(shape, ps, op_name):
    """The primal axes' sizes (dict) of a tensor of ``shape`` in layout ``ps``."""
    if len(shape) != len(ps):
        raise TypeInferenceError(
            f"{op_name}: data shape {shape_str(shape)} has rank {len(shape)}, layout has "
            f"{len(ps)} axes"
        )
    sizes = {a: d for (a, f), d in zip(ps, shape) if f is None}
    for (a, f), d in zip(ps, shape):
        if f is not None:
            if isinstance(d, int) and d != f:
                raise TypeInferenceError(
                    f"{op_name}: sub-axis {a.lower()} has block size {f} but data shape "
                    f"{shape_str(shape)} has {d} there"
                )
            o = sizes[a]
            sizes[a] = o * f if isinstance(o, int) else AnyDim()
    return sizes


def _layout_rel(types, attrs):
    ts = tensor_args(types, ("data",), "layout_transform")
    if ts is None:
        return None
    ps, pd = _layout_plan(attrs.src_layout, attrs.dst_layout)
    sizes = _to_primal_shape(ts[0].shape, ps, "layout_transform")
    blocks = {a: f for a, f in pd if f is not None}
    out = []
    for a, f in pd:
        d = sizes[a]
        if f is not None:
            out.append(f)
        elif a in blocks:
            if isinstance(d, int):
                if d % blocks[a]:
                    raise TypeInferenceError(
                        f"layout_transform: axis {a} of size {d} (data shape "
                        f"{shape_str(ts[0].shape)}, layout {attrs.src_layout}) is not divisible "
                        f"by block size {blocks[a]} of {attrs.dst_layout}"
                    )
                out.append(d // blocks[a])
            else:
                out.append(AnyDim())
        else:
            out.append(d)
    return TensorType(out, ts[0].dtype)


def _layout_ref(args, attrs, out_type):
    x = args[0]
    ps, pd = _layout_plan(attrs.src_layout, attrs.dst_layout)
    # to primal layout: move each block next to (after) its outer axis, then merge them
    primal = [a for a, f in ps if f is None]
    order = []
    for a in primal:
        order.append(ps.index((a, None)))
        sub = [i for i, (b, f) in enumerate(ps) if b == a and f is not None]
        order.extend(sub)
    x = np.transpose(x, order)
    sizes = _to_primal_shape(args[0].shape, ps, "layout_transform")
    x = x.reshape([sizes[a] for a in primal])
    # to dst: split blocked axes, then permute
    blocks = {a: f for a, f in pd if f is not None}
    split_shape, split_names = [], []
    for a in primal:
        if a in blocks:
            split_shape += [sizes[a] // blocks[a], blocks[a]]
            split_names += [(a, None), (a, blocks[a])]
        else:
            split_shape.append(sizes[a])
            split_names.append((a, None))
    x = x.reshape(split_shape)
    return np.ascontiguousarray(np.transpose(x, [split_names.index(n) for n in pd]))


def layout_to(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """NumPy ``layout_transform``: ``x`` in layout ``src`` (e.g. ``NCHW16c``) rewritten in
    ``dst`` (e.g. ``NCHW``); the same rules as the operator (blocks must divide)."""
    from types import SimpleNamespace

    return _layout_ref([x], SimpleNamespace(src_layout=src, dst_layout=dst), None)


def _layout_transform_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.layout_transform(
        inputs[0], attrs.src_layout, attrs.dst_layout
    )


register_op(
    "layout_transform",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.LayoutTransformAttrs", [F("src_layout", "str"), F("dst_layout", "str")]),
    rel=_layout_rel,
    ref=_layout_ref,
    compute=_layout_transform_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Change data layout, e.g. NCHW -> NHWC or NCHW -> NCHW16c (topi.layout_transform).",
    level=3,
)


def layout_transform(data, src_layout, dst_layout):
    """Transform ``data`` from ``src_layout`` to ``dst_layout`` (``"NCHW"``, ``"NHWC"``,
    ``"NCHW8c"``, ...). A blocked axis must divide by its block size."""
    return make_call("layout_transform", [data], src_layout=src_layout, dst_layout=dst_layout)


# ---- arange ------------------------------------------------------------------------------------


def _arange_rel(types, attrs):
    ts = tensor_args(types, ("start", "stop", "step"), "arange")
    if ts is None:
        return None
    for t, n in zip(ts, ("start", "stop", "step")):
        if t.ndim != 0:
            raise TypeInferenceError(
                f"arange: {n} must be a scalar, got shape {shape_str(t.shape)}"
            )
        if t.dtype != attrs.dtype:  # 0.19's ArangeRel unified the three with the output's
            # dtype (an int32 start with the default float32 gave a float32 range silently;
            # fresh-user trial)
            raise TypeInferenceError(
                f"arange: {n} has dtype {t.dtype}, but dtype={attrs.dtype!r} (start, stop and "
                f"step are of the output's dtype: give dtype={t.dtype!r}, or cast {n})")
    if attrs.start is None or attrs.stop is None or attrs.step is None:
        return TensorType((AnyDim(),), attrs.dtype)
    if attrs.step == 0:
        raise TypeInferenceError("arange: step must not be 0")
    n = max(0, math.ceil((attrs.stop - attrs.start) / attrs.step))
    return TensorType((n,), attrs.dtype)


def _arange_ref(args, attrs, out_type):
    start, stop, step = (a.item() for a in args)
    n = max(0, math.ceil((stop - start) / step))
    return (start + np.arange(n) * step).astype(out_type.dtype)


def _arange_compute(attrs, inputs, out_type):
    from tvm import te

    start, _, step = inputs
    return te.compute(
        out_dims(out_type.shape),
        lambda i: (start() + i.astype(start.dtype) * step()).astype(out_type.dtype),
        name="arange",
    )


register_op(
    "arange",
    num_inputs=3,
    arguments=("start", "stop", "step"),
    attrs=(
        "relay.attrs.ArangeAttrs",
        [
            F("start", "float?", None),
            F("stop", "float?", None),
            F("step", "float?", None),
            F("dtype", "dtype", "float32"),
        ],
    ),
    rel=_arange_rel,
    ref=_arange_ref,
    compute=_arange_compute,
    pattern=OpPattern.OPAQUE,
    doc="Evenly spaced values in [start, stop) by step; length ceil((stop - start) / step).",
    level=3,
)


def _arange_shape(attrs, inputs, out_type):
    """Length ``max(0, ceil((stop - start) / step))`` from the scalar inputs' values (computed
    in float64, as the NumPy reference does)."""
    from tvm import te, tirx

    start, stop, step = (x().astype("float64") for x in inputs)
    length = tirx.ceil((stop - start) / step)
    n = tirx.max(length, tirx.const(0.0, "float64")).astype("int64")
    # step 0 or a non-finite value: no length (-1, which the VM's shape check reports)
    ok = tirx.all(step != tirx.const(0.0, "float64"), tirx.isfinite(length))
    n = tirx.Select(ok, n, tirx.const(-1, "int64"))
    return [te.compute((1,), lambda i: n, name="shape")]


register_shape_func("arange", _arange_shape)
register_shape_error(
    "arange", "step is 0, or start, stop or step is not finite (the length "
    "ceil((stop - start) / step) is undefined); expected a nonzero finite step and finite "
    "start and stop")


def arange(start, stop=None, step=None, dtype="float32"):
    """Values ``start, start + step, ...`` below ``stop`` (numpy.arange).

    Args:
        start, stop, step: numbers or scalar expressions of dtype ``dtype`` (``stop=None``:
            the range is ``[0, start)``; ``step=None``: 1). With numbers or constants the
            length is static, otherwise it is ``Any``.
        dtype: the output dtype.

    Raises:
        TypeInferenceError: (at type inference) an expression of another dtype than
            ``dtype``, as 0.19's type relation refused.
    """
    from ..ir.expr import Constant, const

    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    static = {}
    exprs = []
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, (int, float, np.number)):
            static[name] = float(v)
            v = const(v, dtype)
        elif isinstance(v, Constant) and v.data.ndim == 0:
            static[name] = float(v.data.numpy())
        exprs.append(v)
    return make_call("arange", exprs, dtype=dtype, **static)


__all__ = [
    "broadcast_to",
    "broadcast_to_like",
    "collapse_sum_like",
    "collapse_sum_to",
    "shape_of",
    "ndarray_size",
    "layout_transform",
    "arange",
    "parse_layout",
]


# ---- gradients (FPrimalGradient) --------------------------------------------------------------


def _zeros_like(x):
    return make_call("zeros_like", [x])


register_gradient("broadcast_to", lambda orig, g: [collapse_sum_like(g, orig.args[0])])
register_gradient(
    "broadcast_to_like",
    lambda orig, g: [collapse_sum_like(g, orig.args[0]), _zeros_like(orig.args[1])],
)
register_gradient(
    "collapse_sum_like",
    lambda orig, g: [broadcast_to_like(g, orig.args[0]), _zeros_like(orig.args[1])],
)
register_gradient("collapse_sum_to", lambda orig, g: [broadcast_to_like(g, orig.args[0])])
register_gradient(
    "layout_transform",
    lambda orig, g: [layout_transform(g, orig.attrs.dst_layout, orig.attrs.src_layout)],
)
for _name in ("shape_of", "ndarray_size"):
    register_gradient(_name, lambda orig, g: [_zeros_like(orig.args[0])])


def _arange_grad(orig, g):
    """``out[i] = start + i * step``: d/dstart is ``sum(g)``, d/dstep is ``sum(i * g[i])``,
    d/dstop is 0 (tvm.relay 0.19's arange_grad). ``i`` is recovered as
    ``round((out - start) / step)``, which keeps the gradient free of dynamic shapes."""
    start, stop, step = orig.args

    def like_out(x):
        return make_call("cast_like", [x, orig])

    idx = make_call("round", [make_call("divide", [
        make_call("subtract", [orig, like_out(start)]), like_out(step)])])
    total = make_call("sum", [g], axis=None, keepdims=False, exclude=False)
    weighted = make_call("sum", [make_call("multiply", [g, idx])], axis=None, keepdims=False,
                         exclude=False)
    return [make_call("cast_like", [total, start]), _zeros_like(stop),
            make_call("cast_like", [weighted, step])]


register_gradient("arange", _arange_grad)

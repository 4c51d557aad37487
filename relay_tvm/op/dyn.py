"""The ``dyn.*`` operators (tvm.relay.op.dyn): shapes, sizes and slice bounds given as tensors
whose values are known only at run time.

``relay.reshape(x, shape_expr)``, ``relay.broadcast_to``, ``relay.strided_slice``,
``relay.full``/``zeros``/``ones``, ``relay.tile``, ``relay.topk`` and ``relay.one_hot`` make these
operators when the shape-like argument is an expression rather than numbers or a constant (as
tvm.relay 0.19 did); ``transform.DynamicToStatic`` turns them back into the static operators when
that argument is a constant.

Each operator's output type has ``Any`` dimensions; it is data-dependent, so it is never fused
(kOpaque) and carries a shape function (TE over its input values, see
:func:`relay_tvm.op.registry.register_shape_func`) that the VM runs before allocating the output.
The TE computes write outputs whose dimensions are the variables lowering made for them
(``out_type.shape``), bound from the allocated buffer. Semantics: NumPy's (``np.reshape`` with
Relay's ``0`` = copy code, ``np.broadcast_to``, basic slicing, ``np.full``, ``np.tile``); the NumPy
kernels are the interpreter's reference.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..errors import InputError, TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType, TupleType
from ._common import normalize_axis, out_dims, select_of, shape_str, tensor_args
from .registry import (
    OpPattern,
    make_call,
    register_op,
    register_shape_error,
    register_shape_func,
)


def _shape_arg(t, what, op_name) -> int:
    """The static length of a 1-D integer shape tensor."""
    if not str(t.dtype).startswith(("int", "uint")):
        raise TypeInferenceError(f"{op_name}: {what} must have an integer dtype, got {t.dtype}")
    if len(t.shape) != 1 or not isinstance(t.shape[0], int):
        raise TypeInferenceError(f"{op_name}: {what} must be a 1-D tensor of static length, got "
                                 f"shape {shape_str(t.shape)}")
    return t.shape[0]


def _ints(a) -> list:
    return [int(v) for v in np.asarray(a).reshape(-1)]


def _vec(values):
    """A TE int64 vector ``[values...]`` (PrimExprs; reads of input tensors allowed)."""
    from tvm import te

    exprs = [v.astype("int64") if hasattr(v, "astype") else te.const(int(v), "int64")
             for v in values]
    return te.compute((len(exprs),), select_of(exprs), name="shape")


def _i64(e):
    return e.astype("int64")


# ---- dyn.reshape ------------------------------------------------------------------------------


def _reshape_values(in_shape, newshape, allowzero):
    """Output dims from ``newshape`` values (0 copies the input dim, -1 is inferred); works on
    ints and on TIR expressions."""
    from tvm import tirx

    vals = []
    for j, s in enumerate(newshape):
        if not allowzero and j < len(in_shape):
            s = tirx.Select(s == 0, in_shape[j], s) if not isinstance(s, int) else (
                in_shape[j] if s == 0 else s)
        vals.append(s)
    total = 1
    for d in in_shape:
        total = total * d
    known = 1
    for v in vals:
        known = known * (tirx.Select(v == -1, tirx.const(1, "int64"), v)
                         if not isinstance(v, int) else (1 if v == -1 else v))
    return [tirx.Select(v == -1, total // known, v) if not isinstance(v, int)
            else (total // known if v == -1 else v) for v in vals]


def _dyn_reshape_rel(types, attrs):
    ts = tensor_args(types, ("data", "newshape"), "dyn.reshape")
    if ts is None:
        return None
    k = _shape_arg(ts[1], "newshape", "dyn.reshape")
    return TensorType((AnyDim(),) * k, ts[0].dtype)


def _dyn_reshape_ref(args, attrs, out_type):
    x, s = args
    vals = [int(x.shape[j]) if v == 0 and not attrs.allowzero and j < x.ndim else v
            for j, v in enumerate(_ints(s))]
    try:
        return x.reshape(vals)
    except ValueError as e:
        raise TypeInferenceError(f"dyn.reshape: cannot reshape {x.shape} into {tuple(vals)}: "
                                 f"{e}") from None


def _dyn_reshape_compute(attrs, inputs, out_type):
    from tvm import te

    x = inputs[0]
    shape = out_dims(out_type.shape)

    def f(*i):
        flat = 0
        for idx, d in zip(i, shape):
            flat = flat * d + idx
        src = []
        for d in reversed(list(x.shape)):
            src.append(flat % d)
            flat = flat // d
        return x[tuple(reversed(src))]

    return te.compute(shape, f, name="dyn_reshape")


def _dyn_reshape_shape(attrs, inputs, out_type):
    x, s = inputs
    from tvm import tirx

    in_shape = [_i64(d) for d in x.shape]
    vals = _reshape_values(in_shape, [_i64(s[j]) for j in range(int(s.shape[0]))],
                           bool(attrs.allowzero))
    # a shape that does not keep the element count (or a second -1) gives no output: -1 dims
    # make the VM's shape check raise InputError (it read past the data or repeated it)
    total = tirx.const(1, "int64")
    for d in in_shape:
        total = total * d
    prod, ok = tirx.const(1, "int64"), tirx.const(True, "bool")
    for v in vals:
        prod = prod * v
        ok = tirx.And(ok, v >= 0)
    ok = tirx.And(ok, prod == total)
    return [_vec([tirx.Select(ok, v, tirx.const(-1, "int64")) for v in vals])]


register_op(
    "dyn.reshape", num_inputs=2, arguments=("data", "newshape"),
    attrs=("relay.attrs.ReshapeAttrs", [F("allowzero", "bool", False)]),
    rel=_dyn_reshape_rel, ref=_dyn_reshape_ref, compute=_dyn_reshape_compute,
    pattern=OpPattern.OPAQUE, doc="reshape to a shape given as a 1-D tensor (0: copy, -1: infer)",
    level=10)
register_shape_func("dyn.reshape", _dyn_reshape_shape)
register_shape_error(
    "dyn.reshape", "the new shape (its tensor argument newshape) does not keep the input's "
    "element count (or holds a negative entry other than one -1); expected a shape whose "
    "product equals the number of elements of data")


# ---- dyn.broadcast_to, dyn.full, dyn.zeros, dyn.ones -------------------------------------------


def _shape_out_rel(op_name, data_names, dtype_from=None):
    def rel(types, attrs):
        ts = tensor_args(types, data_names, op_name)
        if ts is None:
            return None
        k = _shape_arg(ts[-1], "shape", op_name)
        dtype = attrs.dtype if dtype_from is None else ts[dtype_from].dtype
        if dtype_from is None and not dtype and len(ts) > 1:
            dtype = ts[0].dtype
        return TensorType((AnyDim(),) * k, dtype or "float32")

    return rel


def _shape_values(attrs, inputs, out_type):
    s = inputs[-1]
    return [_vec([_i64(s[j]) for j in range(int(s.shape[0]))])]


def _broadcast_rel(types, attrs):
    out = _shape_out_rel("dyn.broadcast_to", ("data", "shape"), 0)(types, attrs)
    if out is not None and len(out.shape) < types[0].ndim:
        raise TypeInferenceError(f"dyn.broadcast_to: shape has {len(out.shape)} entries, fewer "
                                 f"than data's rank {types[0].ndim} (NumPy broadcasting)")
    return out


def _broadcast_ref(args, attrs, out_type):
    x, shape = args[0], _ints(args[1])
    try:
        return np.array(np.broadcast_to(x, shape))
    except ValueError:
        raise InputError(f"dyn.broadcast_to: data shape {shape_str(x.shape)} does not "
                         f"broadcast to {tuple(shape)} (NumPy broadcasting)") from None


def _broadcast_shape(attrs, inputs, out_type):
    """The target shape; a dimension that data cannot broadcast to (data's is neither 1 nor
    equal) becomes -1, which the shape function's non-negative check reports as an
    InputError (the kernel would read past data's end)."""
    from tvm import tirx

    x, s = inputs
    k, nx = int(s.shape[0]), len(x.shape)
    dims = []
    for j in range(k):
        want = _i64(s[j])
        a = j - (k - nx)
        if a >= 0:
            d = x.shape[a]
            d = tirx.const(int(d), "int64") if isinstance(d, int) else _i64(d)
            want = tirx.Select(tirx.Or(d == 1, d == want), want, tirx.const(-1, "int64"))
        dims.append(want)
    return [_vec(dims)]


def _broadcast_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    x = inputs[0]
    shape = out_dims(out_type.shape)
    nx = len(x.shape)

    def f(*i):
        idx = []
        for a in range(nx):
            d = x.shape[a]
            o = i[len(shape) - nx + a]
            if isinstance(d, int) or hasattr(d, "value"):
                idx.append(0 if int(d) == 1 else o)
            else:  # a dynamic data dimension broadcasts when it is 1 at run time
                idx.append(tirx.Select(d == 1, o * 0, o))
        return x[tuple(idx)]

    return te.compute(shape, f, name="dyn_broadcast_to")


register_op(
    "dyn.broadcast_to", num_inputs=2, arguments=("data", "shape"),
    rel=_broadcast_rel, ref=_broadcast_ref, compute=_broadcast_compute, pattern=OpPattern.OPAQUE,
    doc="broadcast to a shape given as a 1-D tensor (NumPy broadcasting; a shape data does not "
        "broadcast to is an InputError at run time)", level=10)
register_shape_func("dyn.broadcast_to", _broadcast_shape)


def _fill_compute(value):
    def compute(attrs, inputs, out_type):
        from tvm import te, tirx

        shape = out_dims(out_type.shape)
        if value is None:
            fill = inputs[0]
            return te.compute(shape, lambda *i: fill[()].astype(out_type.dtype), name="dyn_full")
        return te.compute(shape, lambda *i: tirx.const(value, out_type.dtype), name="dyn_full")

    return compute


def _full_ref(value):
    def ref(args, attrs, out_type):
        v = args[0] if value is None else value
        return np.full(_ints(args[-1]), v, dtype=out_type.dtype)

    return ref


def _full_rel(types, attrs):
    ts = tensor_args(types, ("fill_value", "shape"), "dyn.full")
    if ts is None:
        return None
    if ts[0].shape:
        raise TypeInferenceError(f"dyn.full: fill_value must be a scalar, got shape "
                                 f"{shape_str(ts[0].shape)}")
    k = _shape_arg(ts[1], "shape", "dyn.full")
    return TensorType((AnyDim(),) * k, attrs.dtype or ts[0].dtype)


_DTYPE = ("relay.attrs.InitOpAttrs", [F("dtype", "dtype", "float32")])
register_op("dyn.full", num_inputs=2, arguments=("fill_value", "shape"),
            attrs=("relay.attrs.InitOpAttrs", [F("dtype", "str", "")]), rel=_full_rel,
            ref=_full_ref(None), compute=_fill_compute(None), pattern=OpPattern.OPAQUE,
            doc="a tensor of a shape given as a 1-D tensor filled with a scalar", level=10)
register_shape_func("dyn.full", _shape_values)
for _name, _v in (("dyn.zeros", 0), ("dyn.ones", 1)):
    register_op(_name, num_inputs=1, arguments=("shape",), attrs=_DTYPE,
                rel=_shape_out_rel(_name, ("shape",)), ref=_full_ref(_v),
                compute=_fill_compute(_v), pattern=OpPattern.OPAQUE,
                doc=f"{_name[4:]} of a shape given as a 1-D tensor", level=10)
    register_shape_func(_name, _shape_values)


# ---- dyn.tile ---------------------------------------------------------------------------------


def _tile_rel(types, attrs):
    ts = tensor_args(types, ("data", "reps"), "dyn.tile")
    if ts is None:
        return None
    k = _shape_arg(ts[1], "reps", "dyn.tile")
    return TensorType((AnyDim(),) * max(k, len(ts[0].shape)), ts[0].dtype)


def _tile_compute(attrs, inputs, out_type):
    from tvm import te

    x = inputs[0]
    shape = out_dims(out_type.shape)
    nx = len(x.shape)

    def f(*i):
        return x[tuple(i[len(shape) - nx + a] % x.shape[a] for a in range(nx))]

    return te.compute(shape, f, name="dyn_tile")


def _tile_shape(attrs, inputs, out_type):
    x, r = inputs
    k = int(r.shape[0])
    n = max(k, len(x.shape))
    dims = [1] * (n - len(x.shape)) + [_i64(d) for d in x.shape]
    reps = [1] * (n - k) + [_i64(r[j]) for j in range(k)]
    return [_vec([d * rp for d, rp in zip(dims, reps)])]


register_op("dyn.tile", num_inputs=2, arguments=("data", "reps"), rel=_tile_rel,
            ref=lambda args, attrs, out_type: np.tile(args[0], _ints(args[1])),
            compute=_tile_compute, pattern=OpPattern.OPAQUE,
            doc="np.tile with repetitions given as a 1-D tensor", level=10)
register_shape_func("dyn.tile", _tile_shape)


# ---- dyn.strided_slice ------------------------------------------------------------------------


def _slice_bounds(b, e, s, n, size_mode):
    """``(start, length)`` of ``x[b:e:s]`` on an axis of size ``n`` (NumPy's rules; TIR)."""
    from tvm import tirx

    zero, one = tirx.const(0, "int64"), tirx.const(1, "int64")
    if size_mode:
        e = tirx.Select(e < 0, n, b + e)
        s = one
    b = tirx.Select(b < 0, b + n, b)
    e = tirx.Select(e < 0, e + n, e)
    pos = s > 0
    lo = tirx.Select(pos, zero, -one)
    hi = tirx.Select(pos, n, n - one)
    b = tirx.max(tirx.min(b, hi), lo)
    e = tirx.max(tirx.min(e, hi), lo)
    span = tirx.Select(pos, e - b, b - e)
    step = tirx.Select(pos, s, tirx.Select(s == zero, one, -s))  # never divide by 0 (SIGFPE)
    # a zero stride (a run-time value) gives length -1, which the shape function's
    # non-negative check reports as an InputError
    length = tirx.Select(s == zero, -one, tirx.max((span + step - one) // step, zero))
    return b, length, s


def _slice_rel(types, attrs):
    ts = tensor_args(types, ("data", "begin", "end", "strides"), "dyn.strided_slice")
    if ts is None:
        return None
    nd = len(ts[0].shape)
    for t, w in zip(ts[1:], ("begin", "end", "strides")):
        if _shape_arg(t, w, "dyn.strided_slice") > nd:
            raise TypeInferenceError(f"dyn.strided_slice: {w} has more entries than data's rank "
                                     f"{nd}")
    return TensorType((AnyDim(),) * nd, ts[0].dtype)


def _slice_ref(args, attrs, out_type):
    x, b, e, s = (args[0], _ints(args[1]), _ints(args[2]), _ints(args[3]))
    sl = []
    for a in range(x.ndim):
        if a >= len(b):
            sl.append(slice(None))
            continue
        st = s[a] if a < len(s) else 1
        if st == 0:
            raise InputError(f"dyn.strided_slice: the stride of axis {a} is 0 (strides "
                             f"{s}); a slice step must be nonzero")
        end = e[a] if a < len(e) else None
        if attrs.slice_mode == "size":
            end, st = (None if end is None or end < 0 else b[a] + end), 1
        sl.append(slice(b[a], end, st))
    return np.array(x[tuple(sl)])


def _axis_params(attrs, inputs, a):
    from tvm import tirx

    x, b, e, s = inputs
    n = x.shape[a]
    n = tirx.const(int(n), "int64") if isinstance(n, int) or hasattr(n, "value") else _i64(n)
    if a >= int(b.shape[0]):
        return tirx.const(0, "int64"), n, tirx.const(1, "int64")
    end = _i64(e[a]) if a < int(e.shape[0]) else n
    st = _i64(s[a]) if a < int(s.shape[0]) else tirx.const(1, "int64")
    return _slice_bounds(_i64(b[a]), end, st, n, attrs.slice_mode == "size")


def _slice_compute(attrs, inputs, out_type):
    from tvm import te

    x = inputs[0]
    shape = out_dims(out_type.shape)

    def f(*i):
        idx = []
        for a in range(len(x.shape)):
            start, _, st = _axis_params(attrs, inputs, a)
            idx.append(start + i[a].astype("int64") * st)
        return x[tuple(idx)]

    return te.compute(shape, f, name="dyn_strided_slice")


def _slice_shape(attrs, inputs, out_type):
    return [_vec([_axis_params(attrs, inputs, a)[1] for a in range(len(inputs[0].shape))])]


register_op("dyn.strided_slice", num_inputs=4, arguments=("data", "begin", "end", "strides"),
            attrs=("relay.attrs.StridedSliceAttrs", [F("slice_mode", "str", "end")]),
            rel=_slice_rel, ref=_slice_ref, compute=_slice_compute, pattern=OpPattern.OPAQUE,
            doc="x[begin:end:strides] with bounds given as 1-D tensors (NumPy slicing)",
            level=10)
register_shape_func("dyn.strided_slice", _slice_shape)


# ---- dyn.topk ---------------------------------------------------------------------------------

_TOPK_ATTRS = ("relay.attrs.TopkAttrs", [F("axis", "int", -1), F("ret_type", "str", "both"),
                                         F("is_ascend", "bool", False),
                                         F("dtype", "dtype", "int32")])


def _topk_rel(types, attrs):
    ts = tensor_args(types, ("data", "k"), "dyn.topk")
    if ts is None:
        return None
    if ts[1].shape not in ((), (1,)):
        raise TypeInferenceError(f"dyn.topk: k must be a scalar, got shape "
                                 f"{shape_str(ts[1].shape)}")
    t = ts[0]
    axis = normalize_axis(attrs.axis, len(t.shape), "dyn.topk")
    shape = list(t.shape)
    shape[axis] = AnyDim()
    values, indices = TensorType(shape, t.dtype), TensorType(shape, attrs.dtype)
    return {"both": TupleType([values, indices]), "values": values,
            "indices": indices}[attrs.ret_type]


def _static_topk_attrs(attrs, k):
    return SimpleNamespace(k=k, axis=attrs.axis, ret_type=attrs.ret_type,
                           is_ascend=attrs.is_ascend, dtype=attrs.dtype)


def _topk_ref(args, attrs, out_type):
    from .algorithm import _topk_ref as static_ref

    return static_ref([args[0]], _static_topk_attrs(attrs, int(np.asarray(args[1]).reshape(-1)[0])),
                      out_type)


def _topk_compute(attrs, inputs, out_type):
    from tvm import te

    from .algorithm import _topk_compute as static_compute

    both = SimpleNamespace(k=0, axis=attrs.axis, ret_type="both", is_ascend=attrs.is_ascend,
                           dtype=attrs.dtype)
    full = static_compute(both, [inputs[0]], None)  # all elements, sorted
    outs = []
    types = list(out_type.fields) if isinstance(out_type, TupleType) else [out_type]
    wanted = {"both": [0, 1], "values": [0], "indices": [1]}[attrs.ret_type]
    for t, w in zip(types, wanted):
        outs.append(te.compute(out_dims(t.shape), _read(full[w]), name="topk_k"))
    return outs if len(outs) > 1 else outs[0]


def _read(src):
    return lambda *i: src(*i)


def _topk_shape(attrs, inputs, out_type):
    from tvm import tirx

    x, k = inputs
    axis = attrs.axis % len(x.shape)
    kv = _i64(k[()] if not k.shape else k[0])
    vecs = []
    for _ in range(2 if attrs.ret_type == "both" else 1):
        dims = []
        for a, d in enumerate(x.shape):
            n = tirx.const(int(d), "int64") if isinstance(d, int) or hasattr(d, "value") \
                else _i64(d)
            dims.append(tirx.Select(kv < 1, n, tirx.min(kv, n)) if a == axis else n)
        vecs.append(_vec(dims))
    return vecs


register_op("dyn.topk", num_inputs=2, arguments=("data", "k"), attrs=_TOPK_ATTRS, rel=_topk_rel,
            ref=_topk_ref, compute=_topk_compute, pattern=OpPattern.OPAQUE,
            doc="topk with k given as a scalar tensor (k < 1: all)", level=10)
register_shape_func("dyn.topk", _topk_shape)


# ---- dyn.one_hot ------------------------------------------------------------------------------


def _one_hot_rel(types, attrs):
    ts = tensor_args(types, ("indices", "on_value", "off_value", "depth"), "dyn.one_hot")
    if ts is None:
        return None
    shape = list(ts[0].shape)
    axis = attrs.axis if attrs.axis >= 0 else len(shape) + 1 + attrs.axis
    shape.insert(axis, AnyDim())
    return TensorType(shape, attrs.dtype)


def _one_hot_ref(args, attrs, out_type):
    ind, on, off, depth = args
    depth = int(np.asarray(depth).reshape(-1)[0])
    axis = attrs.axis if attrs.axis >= 0 else ind.ndim + 1 + attrs.axis
    hot = np.expand_dims(ind, axis) == np.arange(depth).reshape(
        [-1 if a == axis else 1 for a in range(ind.ndim + 1)])
    return np.where(hot, on, off).astype(out_type.dtype)


def _one_hot_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    ind, on, off = inputs[:3]
    shape = out_dims(out_type.shape)
    axis = attrs.axis if attrs.axis >= 0 else len(shape) + attrs.axis

    def f(*i):
        rest = i[:axis] + i[axis + 1:]
        return tirx.Select(ind[rest].astype("int64") == i[axis].astype("int64"),
                           on[()].astype(out_type.dtype), off[()].astype(out_type.dtype))

    return te.compute(shape, f, name="dyn_one_hot")


def _one_hot_shape(attrs, inputs, out_type):
    ind, depth = inputs[0], inputs[3]
    dims = [_i64(d) for d in ind.shape]
    axis = attrs.axis if attrs.axis >= 0 else len(dims) + 1 + attrs.axis
    dims.insert(axis, _i64(depth[()] if not depth.shape else depth[0]))
    return [_vec(dims)]


register_op("dyn.one_hot", num_inputs=4, arguments=("indices", "on_value", "off_value", "depth"),
            attrs=("relay.attrs.OneHotAttrs", [F("axis", "int", -1),
                                               F("dtype", "dtype", "float32")]),
            rel=_one_hot_rel, ref=_one_hot_ref, compute=_one_hot_compute,
            pattern=OpPattern.OPAQUE, doc="one_hot with depth given as a scalar tensor",
            level=10)
register_shape_func("dyn.one_hot", _one_hot_shape)


# ---- constructors (what relay.reshape & co. call for a computed argument) ----------------------


def is_dynamic_arg(v) -> bool:
    """A shape-like argument that is an expression other than a constant."""
    from ..ir.base import RelayExpr
    from ..ir.expr import Constant

    return isinstance(v, RelayExpr) and not isinstance(v, Constant)


def reshape(data, newshape, allowzero=False):
    return make_call("dyn.reshape", [data, newshape], allowzero=allowzero)


def broadcast_to(data, shape):
    return make_call("dyn.broadcast_to", [data, shape])


def full(fill_value, shape, dtype=""):
    return make_call("dyn.full", [fill_value, shape], dtype=dtype)


def zeros(shape, dtype="float32"):
    return make_call("dyn.zeros", [shape], dtype=dtype)


def ones(shape, dtype="float32"):
    return make_call("dyn.ones", [shape], dtype=dtype)


def tile(data, reps):
    return make_call("dyn.tile", [data, reps])


def strided_slice(data, begin, end, strides, slice_mode="end"):
    return make_call("dyn.strided_slice", [data, begin, end, strides], slice_mode=slice_mode)


def topk(data, k, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    return make_call("dyn.topk", [data, k], axis=axis, ret_type=ret_type,
                     is_ascend=bool(is_ascend), dtype=dtype)


def one_hot(indices, on_value, off_value, depth, axis=-1, dtype="float32"):
    return make_call("dyn.one_hot", [indices, on_value, off_value, depth], axis=axis,
                     dtype=dtype)


from .dyn_nn import image, nn  # noqa: E402 - relay.op.dyn.image / relay.op.dyn.nn
from .dyn_shape import expand_dims, squeeze  # noqa: E402

__all__ = ["is_dynamic_arg", "image", "nn", "expand_dims", "squeeze", "reshape", "broadcast_to", "full", "zeros", "ones", "tile",
           "strided_slice", "topk", "one_hot"]

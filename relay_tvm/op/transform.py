"""Shape and data-movement operators (tvm.relay.op.transform)."""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import (
    as_tuple_expr,
    dim_add,
    dim_mul,
    static_value,
    normalize_axis,
    shape_str,
    tensor_args,
    tuple_or_tensors,
)
from ._ieee import to_bool
from .registry import OpPattern, make_call, register_gradient, register_op

# ---- cast --------------------------------------------------------------------------------------


def _cast_rel(types, attrs):
    ts = tensor_args(types, ("data",), "cast")
    if ts is None:
        return None
    return TensorType(ts[0].shape, attrs.dtype)


register_op(
    "cast",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.CastAttrs", [F("dtype", "dtype")]),
    rel=_cast_rel,
    ref=lambda args, attrs, out_type: args[0].astype(attrs.dtype),
    compute=lambda attrs, inputs, out_type: (
        to_bool(inputs[0]) if attrs.dtype == "bool"
        else __import__("tvm").topi.cast(inputs[0], attrs.dtype)),
    pattern=OpPattern.ELEMWISE,
    doc="Convert the elements to ``dtype`` (topi.cast); float to int truncates toward zero.",
    level=3,
)


def cast(data, dtype):
    """Cast ``data`` to ``dtype`` (same shape)."""
    return make_call("cast", [data], dtype=dtype)


# ---- reshape -----------------------------------------------------------------------------------


def infer_reshape(ishape, newshape, op_name="reshape"):
    """Apply Relay's reshape codes to ``ishape``.

    Codes: ``0`` copy this input dimension, ``-1`` infer one dimension, ``-2`` copy all remaining
    input dimensions, ``-3`` merge the next two input dimensions, ``-4`` split one input
    dimension into the next two values (one of which may be ``-1``).

    Raises:
        TypeInferenceError: a code is malformed or the element counts differ.
    """
    out = []
    src = 0
    infer_at = None
    used_in, used_out = set(), set()  # dims copied as they are (Relay's InferNewShape)
    i = 0
    newshape = list(newshape)
    while i < len(newshape):
        s = newshape[i]
        if s > 0:
            out.append(s)
            src += 1
        elif s == 0:
            if src >= len(ishape):
                raise TypeInferenceError(
                    f"{op_name}: code 0 at position {i} has no input dimension to copy "
                    f"(input shape {shape_str(ishape)})"
                )
            used_in.add(src)
            used_out.add(len(out))
            out.append(ishape[src])
            src += 1
        elif s == -1:
            if infer_at is not None:
                raise TypeInferenceError(
                    f"{op_name}: newshape {tuple(newshape)} has more than one -1"
                )
            infer_at = len(out)
            out.append(-1)
            src += 1
        elif s == -2:
            used_in.update(range(src, len(ishape)))
            used_out.update(range(len(out), len(out) + len(ishape) - src))
            out.extend(ishape[src:])
            src = len(ishape)
        elif s == -3:
            if src + 1 >= len(ishape):
                raise TypeInferenceError(
                    f"{op_name}: code -3 needs two input dimensions at {src} "
                    f"(input shape {shape_str(ishape)})"
                )
            a, b = ishape[src], ishape[src + 1]
            used_in.update((src, src + 1))
            used_out.add(len(out))
            out.append(dim_mul(a, b))
            src += 2
        elif s == -4:
            if i + 2 >= len(newshape) or src >= len(ishape):
                raise TypeInferenceError(f"{op_name}: code -4 must be followed by two values")
            d = ishape[src]
            a, b = newshape[i + 1], newshape[i + 2]
            if a == -1 and b == -1:
                raise TypeInferenceError(f"{op_name}: code -4 split cannot have both values -1")
            if isinstance(d, int):
                if a == -1:
                    a = d // b
                if b == -1:
                    b = d // a
                if a * b != d:
                    raise TypeInferenceError(
                        f"{op_name}: code -4 splits dimension {d} into {a} x {b}"
                    )
            else:
                a, b = (AnyDim() if v == -1 else v for v in (a, b))
            used_in.add(src)
            used_out.update((len(out), len(out) + 1))
            out.extend([a, b])
            src += 1
            i += 2
        else:
            raise TypeInferenceError(f"{op_name}: invalid newshape code {s} in {tuple(newshape)}")
        i += 1
    known_in = all(isinstance(d, int) for d in ishape)
    if infer_at is not None:
        # -1 covers the input dims not copied, divided by the output dims not copied
        free_in = [d for j, d in enumerate(ishape) if j not in used_in]
        rest = [d for j, d in enumerate(out) if j != infer_at and j not in used_out]
        if all(isinstance(d, int) for d in free_in + rest):
            total = int(np.prod(free_in, dtype=np.int64))
            denom = int(np.prod(rest, dtype=np.int64))
            if denom == 0 or total % denom:
                raise TypeInferenceError(
                    f"{op_name}: cannot reshape {shape_str(ishape)} into {tuple(newshape)}"
                )
            out[infer_at] = total // denom
        elif not any(isinstance(d, AnyDim) for d in free_in + rest):
            import tvm

            total, denom = 1, 1
            for d in free_in:
                total = dim_mul(total, d)
            for d in rest:
                denom = dim_mul(denom, d)
            out[infer_at] = tvm.sym.Analyzer().simplify(tvm.tirx.floordiv(total, denom))
        else:
            out[infer_at] = AnyDim()
    if known_in and all(isinstance(d, int) for d in out):
        if int(np.prod(ishape, dtype=np.int64)) != int(np.prod(out, dtype=np.int64)):
            raise TypeInferenceError(
                f"{op_name}: cannot reshape {shape_str(ishape)} ({int(np.prod(ishape))} "
                f"elements) into "
                f"{tuple(out)} ({int(np.prod(out))} elements)"
            )
    return tuple(out)


def _reshape_rel(types, attrs):
    ts = tensor_args(types, ("data",), "reshape")
    if ts is None:
        return None
    ishape = ts[0].shape
    if attrs.allowzero:
        newshape = list(attrs.newshape)
        return TensorType(
            infer_reshape(ishape, [d if d != 0 else 1 for d in newshape])
            if 0 in newshape
            else infer_reshape(ishape, newshape),
            ts[0].dtype,
        )
    return TensorType(infer_reshape(ishape, attrs.newshape), ts[0].dtype)


register_op(
    "reshape",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ReshapeAttrs", [F("newshape", "ints"), F("allowzero", "bool", False)]),
    rel=_reshape_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(
        _reshape_rel([TensorType(args[0].shape, out_type.dtype)], attrs).concrete_shape
    ),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.reshape(
        inputs[0], out_type.shape
    ),
    pattern=OpPattern.INJECTIVE,
    doc="Reshape with Relay's codes 0/-1/-2/-3/-4 (topi.reshape).",
    level=3,
)


def reshape(data, newshape, allowzero=False):
    """Reshape ``data`` to ``newshape`` (tvm.relay.reshape; topi.reshape).

    Args:
        data: a tensor of any shape and dtype.
        newshape: ints (or a ``relay.const``) with Relay's codes: ``0`` copies the input
            dimension, ``-1`` infers one dimension, ``-2`` copies the remaining dimensions,
            ``-3`` merges two consecutive dimensions, ``-4`` splits one dimension into the next
            two values (see :func:`infer_reshape`).
        allowzero: ``0`` means a zero-size dimension rather than "copy".

    Returns:
        a tensor of the same dtype and element count. ``Any`` input dimensions give ``Any``
        where the result depends on them; symbolic ones give simplified expressions.

    Raises:
        TypeInferenceError: (at type inference) a malformed code or element counts that differ,
            naming both shapes.
        RelayError: ``newshape`` is a computed expression (dynamic reshape is not supported).
    """
    from . import dyn

    if dyn.is_dynamic_arg(newshape):
        return dyn.reshape(data, newshape, allowzero)
    newshape = static_value(newshape, "newshape", "reshape")
    if isinstance(newshape, int):
        newshape = (newshape,)
    return make_call("reshape", [data], newshape=tuple(newshape), allowzero=allowzero)


# ---- reverse_reshape (contrib_reverse_reshape) -----------------------------------------------


def _reverse_reshape_rel(types, attrs):
    ts = tensor_args(types, ("data",), "contrib_reverse_reshape")
    if ts is None:
        return None
    out = infer_reshape(ts[0].shape[::-1], list(attrs.newshape)[::-1], "contrib_reverse_reshape")
    return TensorType(out[::-1], ts[0].dtype)


register_op(
    "contrib_reverse_reshape",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ReshapeAttrs", [F("newshape", "ints"), F("allowzero", "bool", False)]),
    rel=_reverse_reshape_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(
        _reverse_reshape_rel([TensorType(args[0].shape, out_type.dtype)], attrs).concrete_shape
    ),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.reshape(
        inputs[0], out_type.shape
    ),
    pattern=OpPattern.INJECTIVE,
    doc="reshape with the special codes applied from right to left (MXNet reverse=True).",
    level=10,
)


def reverse_reshape(data, newshape):
    """Reshape with Relay's codes read from right to left (``relay.reverse_reshape``; MXNet
    ``Reshape(reverse=True)``): e.g. shape ``(10, 5, 4)`` with ``(-1, 0)`` gives ``(50, 4)``."""
    newshape = static_value(newshape, "newshape", "reverse_reshape")
    if isinstance(newshape, int):
        newshape = (newshape,)
    return make_call("contrib_reverse_reshape", [data], newshape=tuple(newshape))


# ---- concatenate -------------------------------------------------------------------------------


def _concat_rel(types, attrs):
    fields = tuple_or_tensors(types[0], "concatenate")
    if fields is None:
        return None
    if not fields:
        raise TypeInferenceError("concatenate: needs at least one tensor")
    ndim = fields[0].ndim
    axis = normalize_axis(attrs.axis, ndim, "concatenate")
    dtype = fields[0].dtype
    total = 0
    for k, f in enumerate(fields):
        if f.ndim != ndim:
            raise TypeInferenceError(
                f"concatenate: field {k} has rank {f.ndim}, field 0 has rank {ndim}"
            )
        if f.dtype != dtype:
            raise TypeInferenceError(
                f"concatenate: field {k} has dtype {f.dtype}, field 0 has {dtype}"
            )
        for j in range(ndim):
            if (
                j != axis
                and isinstance(f.shape[j], int)
                and isinstance(fields[0].shape[j], int)
                and f.shape[j] != fields[0].shape[j]
            ):
                raise TypeInferenceError(
                    f"concatenate: field {k} shape {shape_str(f.shape)} and field 0 shape "
                    f"{shape_str(fields[0].shape)} differ on axis {j} "
                    f"(concatenating on axis {axis})"
                )
        d = f.shape[axis]
        total = dim_add(total, d)
    shape = list(fields[0].shape)
    shape[axis] = total
    return TensorType(shape, dtype)


register_op(
    "concatenate",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ConcatenateAttrs", [F("axis", "int", 0)]),
    rel=_concat_rel,
    ref=lambda args, attrs, out_type: np.concatenate(list(args[0]), axis=attrs.axis),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.concatenate(inputs, attrs.axis),
    pattern=OpPattern.INJECTIVE,
    doc="Join a tuple of tensors along ``axis`` (topi.concatenate).",
    level=1,
)


def concatenate(data, axis=0):
    """Concatenate a tuple, list or TupleWrapper of tensors along ``axis`` (topi.concatenate).

    All fields need one dtype and rank and equal dimensions except on ``axis``; otherwise type
    inference raises a TypeInferenceError naming the field and both shapes.
    """
    return make_call("concatenate", [as_tuple_expr(data)], axis=axis)


# ---- cast_like ---------------------------------------------------------------------------------


def _cast_like_rel(types, attrs):
    ts = tensor_args(types, ("data", "dtype_like"), "cast_like")
    if ts is None:
        return None
    return TensorType(ts[0].shape, ts[1].dtype)


register_op(
    "cast_like",
    num_inputs=2,
    arguments=("data", "dtype_like"),
    rel=_cast_like_rel,
    ref=lambda args, attrs, out_type: args[0].astype(out_type.dtype),
    compute=lambda attrs, inputs, out_type: (
        to_bool(inputs[0]) if out_type.dtype == "bool"
        else __import__("tvm").topi.cast(inputs[0], out_type.dtype)),
    pattern=OpPattern.ELEMWISE,
    doc="Cast data to the dtype of dtype_like (topi.cast).",
    level=3,
)


def cast_like(data, dtype_like):
    """Cast ``data`` to the dtype of ``dtype_like`` (same shape as data)."""
    return make_call("cast_like", [data, dtype_like])


# ---- reshape_like ------------------------------------------------------------------------------


def _slice_bounds(begin, end, ndim):
    b = begin + ndim if begin < 0 else begin
    e = ndim if end is None else (end + ndim if end < 0 else end)
    return max(0, min(b, ndim)), max(0, min(e, ndim))


def _reshape_like_rel(types, attrs):
    ts = tensor_args(types, ("data", "shape_like"), "reshape_like")
    if ts is None:
        return None
    data, like = ts
    lb, le = _slice_bounds(attrs.lhs_begin, attrs.lhs_end, data.ndim)
    rb, re_ = _slice_bounds(attrs.rhs_begin, attrs.rhs_end, like.ndim)
    shape = (*data.shape[:lb], *like.shape[rb:re_], *data.shape[le:])
    if all(isinstance(d, int) for d in data.shape + shape):
        if int(np.prod(data.shape)) != int(np.prod(shape)):
            raise TypeInferenceError(
                f"reshape_like: data shape {shape_str(data.shape)} ({int(np.prod(data.shape))} "
                f"elements) cannot take shape {shape_str(shape)} from shape_like shape "
                f"{shape_str(like.shape)} ({int(np.prod(shape))} elements)"
            )
    return TensorType(shape, data.dtype)


register_op(
    "reshape_like",
    num_inputs=2,
    arguments=("data", "shape_like"),
    attrs=(
        "relay.attrs.ReshapeLikeAttrs",
        [
            F("lhs_begin", "int", 0),
            F("lhs_end", "int?", None),
            F("rhs_begin", "int", 0),
            F("rhs_end", "int?", None),
        ],
    ),
    rel=_reshape_like_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(
        _reshape_like_rel([TensorType(a.shape, a.dtype.name) for a in args], attrs).concrete_shape
    ),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.reshape(
        inputs[0], out_type.shape
    ),
    pattern=OpPattern.INJECTIVE,
    doc="Reshape data to (part of) the shape of shape_like (topi.reshape).",
    level=10,
)


def reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None):
    """Reshape ``data`` so that its dims ``[lhs_begin, lhs_end)`` become shape_like's dims
    ``[rhs_begin, rhs_end)`` (all dims by default). Element counts must match."""
    return make_call(
        "reshape_like",
        [data, shape_like],
        lhs_begin=lhs_begin,
        lhs_end=lhs_end,
        rhs_begin=rhs_begin,
        rhs_end=rhs_end,
    )


# ---- transpose ---------------------------------------------------------------------------------


def _transpose_axes(attrs, ndim):
    if not attrs.axes:
        return tuple(range(ndim - 1, -1, -1))
    if len(attrs.axes) != ndim:
        raise TypeInferenceError(
            f"transpose: axes {attrs.axes} has {len(attrs.axes)} entries, data has rank {ndim}"
        )
    axes = tuple(normalize_axis(a, ndim, "transpose") for a in attrs.axes)
    if sorted(axes) != list(range(ndim)):
        raise TypeInferenceError(
            f"transpose: axes {attrs.axes} is not a permutation of 0..{ndim - 1}"
        )
    return axes


def _transpose_rel(types, attrs):
    ts = tensor_args(types, ("data",), "transpose")
    if ts is None:
        return None
    axes = _transpose_axes(attrs, ts[0].ndim)
    return TensorType([ts[0].shape[a] for a in axes], ts[0].dtype)


register_op(
    "transpose",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.TransposeAttrs", [F("axes", "ints?", None)]),
    rel=_transpose_rel,
    ref=lambda args, attrs, out_type: np.transpose(args[0], _transpose_axes(attrs, args[0].ndim)),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.transpose(
        inputs[0], list(_transpose_axes(attrs, len(inputs[0].shape)))
    ),
    pattern=OpPattern.INJECTIVE,
    doc="Permute the axes (reverse them when axes is None) (topi.transpose).",
    level=3,
)


def transpose(data, axes=None):
    """Permute the dimensions of ``data`` by ``axes`` (reversed when None; negatives allowed)."""
    axes = static_value(axes, "axes", "transpose")
    return make_call("transpose", [data], axes=None if axes is None else tuple(axes))


# ---- squeeze / expand_dims ---------------------------------------------------------------------


def _squeeze_axes(attrs, shape):
    ndim = len(shape)
    if attrs.axis is None:
        if any(not isinstance(d, int) for d in shape):
            raise TypeInferenceError(
                f"squeeze: axis=None needs a static shape to know which dimensions are 1, got "
                f"{shape_str(shape)}; give axis"
            )
        return tuple(i for i, d in enumerate(shape) if d == 1)
    axes = tuple(sorted({normalize_axis(a, ndim, "squeeze") for a in attrs.axis}))
    for a in axes:
        if isinstance(shape[a], int) and shape[a] != 1:
            raise TypeInferenceError(
                f"squeeze: axis {a} of data shape {shape_str(shape)} has size {shape[a]}, "
                f"expected 1"
            )
    return axes


def _squeeze_rel(types, attrs):
    ts = tensor_args(types, ("data",), "squeeze")
    if ts is None:
        return None
    axes = _squeeze_axes(attrs, ts[0].shape)
    return TensorType([d for i, d in enumerate(ts[0].shape) if i not in axes], ts[0].dtype)


register_op(
    "squeeze",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.SqueezeAttrs", [F("axis", "ints?", None)]),
    rel=_squeeze_rel,
    ref=lambda args, attrs, out_type: np.squeeze(args[0], _squeeze_axes(attrs, args[0].shape)),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.reshape(
        inputs[0], out_type.shape
    ),
    pattern=OpPattern.INJECTIVE,
    doc="Remove dimensions of size 1 (those in axis, or all when None).",
    level=3,
)


def squeeze(data, axis=None):
    """Remove the size-1 dimensions ``axis`` (all size-1 dimensions when None)."""
    if isinstance(axis, int):
        axis = (axis,)
    return make_call("squeeze", [data], axis=axis)


def _expand_dims_rel(types, attrs):
    ts = tensor_args(types, ("data",), "expand_dims")
    if ts is None:
        return None
    ndim = ts[0].ndim
    if attrs.num_newaxis < 0:
        raise TypeInferenceError(f"expand_dims: num_newaxis must be >= 0, got {attrs.num_newaxis}")
    axis = normalize_axis(attrs.axis, ndim + 1, "expand_dims")
    shape = list(ts[0].shape)
    return TensorType(shape[:axis] + [1] * attrs.num_newaxis + shape[axis:], ts[0].dtype)


register_op(
    "expand_dims",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ExpandDimsAttrs", [F("axis", "int"), F("num_newaxis", "int", 1)]),
    rel=_expand_dims_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(
        _expand_dims_rel([TensorType(args[0].shape, out_type.dtype)], attrs).concrete_shape
    ),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.reshape(
        inputs[0], out_type.shape
    ),
    pattern=OpPattern.BROADCAST,
    doc="Insert num_newaxis size-1 dimensions at axis (in [-ndim-1, ndim]).",
    level=1,
)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` dimensions of size 1 at ``axis``."""
    return make_call("expand_dims", [data], axis=axis, num_newaxis=num_newaxis)


# ---- split -------------------------------------------------------------------------------------


def _split_bounds(attrs, dim, op_name="split"):
    """[(begin, end)] of each field along the axis; ends may be AnyDim for a dynamic dim."""
    ios = attrs.indices_or_sections
    if isinstance(ios, int):
        if ios <= 0:
            raise TypeInferenceError(f"{op_name}: sections must be positive, got {ios}")
        if not isinstance(dim, int):
            return [None] * ios
        if dim % ios:
            raise TypeInferenceError(
                f"{op_name}: axis {attrs.axis} of size {dim} does not divide into {ios} equal "
                f"sections"
            )
        n = dim // ios
        return [(i * n, (i + 1) * n) for i in range(ios)]
    idx = list(ios)
    if any(b <= a for a, b in zip([0] + idx, idx)):
        raise TypeInferenceError(
            f"{op_name}: indices {tuple(idx)} must be positive and strictly ascending"
        )
    if isinstance(dim, int) and idx and idx[-1] >= dim:
        raise TypeInferenceError(
            f"{op_name}: index {idx[-1]} is out of range for axis {attrs.axis} of size {dim}"
        )
    bounds = list(zip([0] + idx, idx + [dim]))
    return bounds


def _split_rel(types, attrs):
    ts = tensor_args(types, ("data",), "split")
    if ts is None:
        return None
    t = ts[0]
    axis = normalize_axis(attrs.axis, t.ndim, "split")
    fields = []
    for be in _split_bounds(attrs, t.shape[axis]):
        shape = list(t.shape)
        if be is None or not isinstance(be[1], int):
            shape[axis] = AnyDim()
        else:
            shape[axis] = be[1] - be[0]
        fields.append(TensorType(shape, t.dtype))
    from ..ir.types import TupleType

    return TupleType(fields)


def _split_ref(args, attrs, out_type):
    x = args[0]
    axis = attrs.axis % x.ndim
    ios = attrs.indices_or_sections
    return tuple(np.split(x, ios if isinstance(ios, int) else list(ios), axis=axis))


def _split_compute(attrs, inputs, out_type):
    from tvm import topi

    ios = attrs.indices_or_sections
    return topi.split(inputs[0], ios if isinstance(ios, int) else list(ios), attrs.axis)


register_op(
    "split",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.SplitAttrs", [F("indices_or_sections", "any"), F("axis", "int", 0)]),
    rel=_split_rel,
    ref=_split_ref,
    compute=_split_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Split into equal sections or at ascending indices along axis; a tuple (topi.split).",
    level=3,
)


def split(data, indices_or_sections, axis=0):
    """Split ``data`` along ``axis``.

    Args:
        indices_or_sections: an int (that many equal sections; the dimension must divide) or an
            ascending sequence of split points.

    Returns:
        a :class:`TupleWrapper` over the tuple-typed call (``astuple()``, ``[i]``, ``len``).
    """
    from ._common import TupleWrapper

    if isinstance(indices_or_sections, (int, np.integer)):
        ios = int(indices_or_sections)
        size = ios
    else:
        ios = tuple(int(i) for i in indices_or_sections)
        size = len(ios) + 1
    return TupleWrapper(make_call("split", [data], indices_or_sections=ios, axis=axis), size)


# ---- stack -------------------------------------------------------------------------------------


def _stack_rel(types, attrs):
    fields = tuple_or_tensors(types[0], "stack")
    if fields is None:
        return None
    if not fields:
        raise TypeInferenceError("stack: needs at least one tensor")
    f0 = fields[0]
    for k, f in enumerate(fields[1:], 1):
        if f.dtype != f0.dtype:
            raise TypeInferenceError(
                f"stack: field {k} has dtype {f.dtype}, field 0 has {f0.dtype}"
            )
        if f.ndim != f0.ndim or any(
            isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(f.shape, f0.shape)
        ):
            raise TypeInferenceError(
                f"stack: field {k} shape {shape_str(f.shape)} differs from field 0 shape "
                f"{shape_str(f0.shape)}"
            )
    axis = normalize_axis(attrs.axis, f0.ndim + 1, "stack")
    shape = list(f0.shape)
    return TensorType(shape[:axis] + [len(fields)] + shape[axis:], f0.dtype)


register_op(
    "stack",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.StackAttrs", [F("axis", "int", 0)]),
    rel=_stack_rel,
    ref=lambda args, attrs, out_type: np.stack(list(args[0]), axis=attrs.axis),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.stack(inputs, attrs.axis),
    pattern=OpPattern.INJECTIVE,
    doc="Stack a tuple of same-shaped tensors along a new axis (topi.stack).",
    level=3,
)


def stack(data, axis=0):
    """Join a tuple (or list) of tensors of one shape along a new ``axis``."""
    return make_call("stack", [as_tuple_expr(data)], axis=axis)


# ---- tile / repeat / reverse -------------------------------------------------------------------


def _tile_rel(types, attrs):
    ts = tensor_args(types, ("data",), "tile")
    if ts is None:
        return None
    reps = list(attrs.reps)
    if any(r < 0 for r in reps):
        raise TypeInferenceError(f"tile: reps {tuple(reps)} must be non-negative")
    shape = list(ts[0].shape)
    n = max(len(shape), len(reps))
    shape = [1] * (n - len(shape)) + shape
    reps = [1] * (n - len(reps)) + reps
    return TensorType(
        [dim_mul(d, r) for d, r in zip(shape, reps)],
        ts[0].dtype,
    )


register_op(
    "tile",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.TileAttrs", [F("reps", "ints")]),
    rel=_tile_rel,
    ref=lambda args, attrs, out_type: np.tile(args[0], attrs.reps),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.tile(
        inputs[0], list(attrs.reps)
    ),
    pattern=OpPattern.BROADCAST,
    doc="Repeat the whole tensor reps times per axis (numpy.tile semantics; topi.tile).",
    level=3,
)


def tile(data, reps):
    """Tile ``data`` by ``reps`` (numpy.tile: the shorter of rank and reps is padded with 1s)."""
    from . import dyn

    if dyn.is_dynamic_arg(reps):
        return dyn.tile(data, reps)
    reps = static_value(reps, "reps", "tile")
    return make_call("tile", [data], reps=(reps,) if isinstance(reps, int) else tuple(reps))


def _repeat_rel(types, attrs):
    ts = tensor_args(types, ("data",), "repeat")
    if ts is None:
        return None
    if attrs.repeats < 1:
        raise TypeInferenceError(f"repeat: repeats must be >= 1, got {attrs.repeats}")
    axis = normalize_axis(attrs.axis, ts[0].ndim, "repeat")
    shape = list(ts[0].shape)
    d = shape[axis]
    shape[axis] = dim_mul(d, attrs.repeats)
    return TensorType(shape, ts[0].dtype)


register_op(
    "repeat",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.RepeatAttrs", [F("repeats", "int"), F("axis", "int")]),
    rel=_repeat_rel,
    ref=lambda args, attrs, out_type: np.repeat(args[0], attrs.repeats, axis=attrs.axis),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.repeat(
        inputs[0], attrs.repeats, attrs.axis
    ),
    pattern=OpPattern.BROADCAST,
    doc="Repeat each element repeats times along axis (numpy.repeat; topi.repeat).",
    level=3,
)


def repeat(data, repeats, axis):
    """Repeat each element of ``data`` ``repeats`` times along ``axis``."""
    return make_call("repeat", [data], repeats=repeats, axis=axis)


def _reverse_rel(types, attrs):
    ts = tensor_args(types, ("data",), "reverse")
    if ts is None:
        return None
    normalize_axis(attrs.axis, ts[0].ndim, "reverse")
    return ts[0]


register_op(
    "reverse",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ReverseAttrs", [F("axis", "int")]),
    rel=_reverse_rel,
    ref=lambda args, attrs, out_type: np.flip(args[0], axis=attrs.axis),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.flip(inputs[0], attrs.axis),
    pattern=OpPattern.INJECTIVE,
    doc="Reverse the order of elements along axis (topi.flip).",
    level=3,
)


def reverse(data, axis):
    """Reverse ``data`` along ``axis``."""
    return make_call("reverse", [data], axis=axis)


__all__ = [
    "cast",
    "cast_like",
    "reshape",
    "reshape_like",
    "concatenate",
    "transpose",
    "squeeze",
    "expand_dims",
    "split",
    "stack",
    "tile",
    "repeat",
    "reverse",
    "reverse_reshape",
    "infer_reshape",
]

# tvm.relay.op.transform also held these operators; here they live in their own modules.
from .indexing import *  # noqa: F401,F403,E402
from .shape_ops import *  # noqa: F401,F403,E402
from .transform_extra import *  # noqa: F401,F403,E402
from .tensor import full, full_like, where  # noqa: F401,E402


# ---- gradients (FPrimalGradient) --------------------------------------------------------------


def _zeros_like(x):
    return make_call("zeros_like", [x])


register_gradient("cast", lambda orig, g: [cast_like(g, orig.args[0])])
register_gradient(
    "cast_like", lambda orig, g: [cast_like(g, orig.args[0]), _zeros_like(orig.args[1])]
)
register_gradient("reshape", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient("contrib_reverse_reshape", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient("squeeze", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient("expand_dims", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient(
    "reshape_like", lambda orig, g: [reshape_like(g, orig.args[0]), _zeros_like(orig.args[1])]
)
register_gradient("reverse", lambda orig, g: [reverse(g, orig.attrs.axis)])


@register_gradient("transpose")
def _transpose_grad(orig, g):
    axes = _transpose_axes(orig.attrs, orig.args[0].checked_type.ndim)
    return [transpose(g, tuple(int(i) for i in np.argsort(axes)))]


@register_gradient("concatenate")
def _concatenate_grad(orig, g):
    fields = orig.args[0].checked_type.fields
    axis = orig.attrs.axis % len(fields[0].shape)
    points, total = [], 0
    for f in fields[:-1]:
        total += f.concrete_shape[axis]
        points.append(total)
    if not points:
        from ..ir.expr import Tuple

        return [Tuple([g])]
    return [split(g, tuple(points), axis).astuple()]


@register_gradient("stack")
def _stack_grad(orig, g):
    from ..ir.expr import Tuple

    n = len(orig.args[0].checked_type.fields)
    axis = orig.attrs.axis
    parts = split(g, n, axis)
    return [Tuple([squeeze(parts[i], (axis,)) for i in range(n)])]


@register_gradient("tile")
def _tile_grad(orig, g):
    """Sum the tiles: view g as (r0, d0, r1, d1, ...) and reduce the r axes."""
    from .reduce import sum as _sum

    x = orig.args[0]
    shape = list(x.checked_type.concrete_shape)
    reps = list(orig.attrs.reps)
    n = max(len(shape), len(reps))
    shape = [1] * (n - len(shape)) + shape
    reps = [1] * (n - len(reps)) + reps
    split_shape = [v for r, d in zip(reps, shape) for v in (r, d)]
    summed = _sum(reshape(g, split_shape), tuple(range(0, 2 * n, 2)))
    return [reshape_like(summed, x)]


@register_gradient("repeat")
def _repeat_grad(orig, g):
    from .reduce import sum as _sum

    x = orig.args[0]
    shape = list(x.checked_type.concrete_shape)
    axis = orig.attrs.axis % len(shape)
    split_shape = shape[: axis + 1] + [orig.attrs.repeats] + shape[axis + 1 :]
    return [_sum(reshape(g, split_shape), axis + 1)]

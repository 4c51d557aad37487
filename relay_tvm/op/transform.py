"""Shape and data-movement operators (tvm.relay.op.transform)."""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import (
    as_int64,
    as_tuple_expr,
    dim_mul,
    normalize_axis,
    out_dims,
    require_at_run_time,
    require_equal_dims,
    shape_str,
    static_value,
    tensor_args,
    tuple_or_tensors,
)
from ._ieee import to_bool
from .registry import OpPattern, make_call, register_op
from .reshaping import (  # noqa: F401  (tvm.relay.op.transform's names)
    expand_dims,
    infer_reshape,
    reshape,
    reshape_like,
    reverse_reshape,
    squeeze,
)

# ---- cast --------------------------------------------------------------------------------------


def _cast_rel(types, attrs):
    ts = tensor_args(types, ("data",), "cast")
    if ts is None:
        return None
    return TensorType(ts[0].shape, attrs.dtype)


def _cast_compute(attrs, inputs, out_type):
    from tvm import topi

    if attrs.dtype == "bool":
        return to_bool(inputs[0])
    return topi.cast(inputs[0], attrs.dtype)


register_op(
    "cast",
    batch_rows=True,
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.CastAttrs", [F("dtype", "dtype")]),
    rel=_cast_rel,
    ref=lambda args, attrs, out_type: args[0].astype(attrs.dtype),
    compute=_cast_compute,
    pattern=OpPattern.ELEMWISE,
    doc="Convert the elements to ``dtype`` (topi.cast); float to int truncates toward zero. "
        "A float NaN, infinity or value outside the integer type's range has no defined "
        "integer (C, LLVM's fptosi; NumPy's result depends on the CPU): executors may differ.",
    level=3,
)


def cast(data, dtype):
    """Cast ``data`` to ``dtype`` (same shape)."""
    return make_call("cast", [data], dtype=dtype)


# ---- concatenate -------------------------------------------------------------------------------


def _concat_extent(a, b):
    """The output extent so far plus one more field's: ints add, ``Any`` stays ``Any``, and a
    symbolic sum stays as written (``t + t``, not ``t * 2``), as Relay's ConcatenateRel built
    it with PrimExpr's ``+`` (which folds constants only)."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, AnyDim) or isinstance(b, AnyDim):
        return AnyDim()
    return a + b


def _concat_rel(types, attrs):
    fields = tuple_or_tensors(types[0], "concatenate")
    if fields is None:
        return None
    if not fields:
        raise TypeInferenceError("concatenate: needs at least one tensor")
    ndim = fields[0].ndim
    axis = normalize_axis(attrs.axis, ndim, "concatenate")
    dtype = fields[0].dtype
    total = fields[0].shape[axis]
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
            if j != axis and k:
                require_equal_dims(f.shape[j], fields[0].shape[j],
                                   f"field {k} and field 0 differ on axis {j} (concatenating "
                                   f"on axis {axis})")
        if k:
            total = _concat_extent(total, f.shape[axis])
    shape = list(fields[0].shape)
    shape[axis] = total
    return TensorType(shape, dtype)


def _concatenate_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.concatenate(inputs, attrs.axis)


register_op(
    "concatenate",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ConcatenateAttrs", [F("axis", "int", 0)]),
    rel=_concat_rel,
    ref=lambda args, attrs, out_type: np.concatenate(list(args[0]), axis=attrs.axis),
    compute=_concatenate_compute,
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


def _cast_like_compute(attrs, inputs, out_type):
    from tvm import topi

    if out_type.dtype == "bool":
        return to_bool(inputs[0])
    return topi.cast(inputs[0], out_type.dtype)


register_op(
    "cast_like",
    batch_rows=True,
    num_inputs=2,
    arguments=("data", "dtype_like"),
    rel=_cast_like_rel,
    ref=lambda args, attrs, out_type: args[0].astype(out_type.dtype),
    compute=_cast_like_compute,
    pattern=OpPattern.ELEMWISE,
    doc="Cast data to the dtype of dtype_like (topi.cast).",
    level=3,
)


def cast_like(data, dtype_like):
    """Cast ``data`` to the dtype of ``dtype_like`` (same shape as data)."""
    return make_call("cast_like", [data, dtype_like])


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


def _transpose_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.transpose(
        inputs[0], list(_transpose_axes(attrs, len(inputs[0].shape)))
    )


register_op(
    "transpose",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.TransposeAttrs", [F("axes", "ints?", None, always_printed=True)]),
    rel=_transpose_rel,
    ref=lambda args, attrs, out_type: np.transpose(args[0], _transpose_axes(attrs, args[0].ndim)),
    compute=_transpose_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Permute the axes (reverse them when axes is None) (topi.transpose).",
    level=3,
)


def transpose(data, axes=None):
    """Permute the dimensions of ``data`` by ``axes`` (reversed when None; negatives allowed)."""
    axes = static_value(axes, "axes", "transpose")
    return make_call("transpose", [data], axes=None if axes is None else tuple(axes))


# ---- split -------------------------------------------------------------------------------------


def _split_bounds(attrs, dim, op_name="split"):
    """[(begin, end)] of each field along the axis; ends may be AnyDim for a dynamic dim."""
    ios = attrs.indices_or_sections
    if isinstance(ios, int):
        if ios <= 0:
            raise TypeInferenceError(f"{op_name}: sections must be positive, got {ios}")
        if isinstance(dim, AnyDim):
            return [None] * ios
        if not isinstance(dim, int):  # lowering a kernel with Any dimensions: symbolic bounds
            from tvm import tirx

            require_at_run_time(tirx.floormod(as_int64(dim), ios) == 0,
                                f"axis {attrs.axis} does not divide into {ios} equal sections")
            n = tirx.floordiv(as_int64(dim), ios)
            return [(i * n, (i + 1) * n) for i in range(ios)]
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
    if idx and not isinstance(dim, (int, AnyDim)):
        require_at_run_time(as_int64(dim) > idx[-1],
                            f"index {idx[-1]} is out of range for axis {attrs.axis}")
    bounds = list(zip([0] + idx, idx + [dim]))
    return bounds


def _split_rel(types, attrs):
    ts = tensor_args(types, ("data",), "split")
    if ts is None:
        return None
    t = ts[0]
    axis = normalize_axis(attrs.axis, t.ndim, "split")
    dim = t.shape[axis]
    sections = attrs.indices_or_sections
    fields = []
    for be in _split_bounds(attrs, dim):
        shape = list(t.shape)
        if be is None or isinstance(be[1], AnyDim):
            shape[axis] = AnyDim()
        elif isinstance(sections, int) and not isinstance(dim, int):
            # every section of a symbolic axis is dim / sections (Relay's SplitRel), in dim's
            # own index dtype: not the difference of two bounds, which no one simplifies
            from tvm import tirx

            shape[axis] = tirx.floordiv(dim, sections)
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
    from tvm import te, topi

    x = inputs[0]
    ios = attrs.indices_or_sections
    axis = attrs.axis % len(x.shape)
    if type(x.shape[axis]).__name__ == "IntImm":
        return topi.split(x, ios if isinstance(ios, int) else list(ios), axis)
    fields = []  # a symbolic axis (a kernel with Any dimensions): one slice per field
    for k, (begin, _end) in enumerate(_split_bounds(attrs, x.shape[axis])):
        shape = out_dims(out_type.fields[k].shape)
        fields.append(te.compute(shape, _shifted_read(x, axis, begin), name=f"split{k}"))
    return fields


def _shifted_read(x, axis, begin):
    """``out[..., i, ...] = x[..., i + begin, ...]`` on ``axis`` (a TE compute body)."""
    return lambda *i: x(*i[:axis], i[axis] + begin, *i[axis + 1:])


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
        for j, (a, b) in enumerate(zip(f.shape, f0.shape)):
            require_equal_dims(a, b, f"field {k} and field 0 differ on axis {j}")
    axis = normalize_axis(attrs.axis, f0.ndim + 1, "stack")
    shape = list(f0.shape)
    return TensorType(shape[:axis] + [len(fields)] + shape[axis:], f0.dtype)


def _stack_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.stack(inputs, attrs.axis)


register_op(
    "stack",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.StackAttrs", [F("axis", "int", 0)]),
    rel=_stack_rel,
    ref=lambda args, attrs, out_type: np.stack(list(args[0]), axis=attrs.axis),
    compute=_stack_compute,
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


def _tile_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.tile(
        inputs[0], list(attrs.reps)
    )


def _tile_rows(attrs, rank):
    # rows stay apart unless axis 0 is repeated (reps align to the trailing axes)
    reps = [int(r) for r in attrs.reps]
    return len(reps) < rank or reps[len(reps) - rank] == 1


register_op(
    "tile",
    batch_rows=_tile_rows,
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.TileAttrs", [F("reps", "ints")]),
    rel=_tile_rel,
    ref=lambda args, attrs, out_type: np.tile(args[0], attrs.reps),
    compute=_tile_compute,
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


def _repeat_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.repeat(
        inputs[0], attrs.repeats, attrs.axis
    )


def _repeat_rows(attrs, rank):
    return int(attrs.axis) % rank != 0


register_op(
    "repeat",
    batch_rows=_repeat_rows,
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.RepeatAttrs", [F("repeats", "int"), F("axis", "int")]),
    rel=_repeat_rel,
    ref=lambda args, attrs, out_type: np.repeat(args[0], attrs.repeats, axis=attrs.axis),
    compute=_repeat_compute,
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


def _reverse_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.flip(inputs[0], attrs.axis)


register_op(
    "reverse",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ReverseAttrs", [F("axis", "int")]),
    rel=_reverse_rel,
    ref=lambda args, attrs, out_type: np.flip(args[0], axis=attrs.axis),
    compute=_reverse_compute,
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
from .tensor import full, full_like, where  # noqa: F401,E402
from .transform_extra import *  # noqa: F401,F403,E402
from .transform_sparse import *  # noqa: F401,F403,E402
from .unique import unique  # noqa: F401,E402

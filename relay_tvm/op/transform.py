"""Shape and data-movement operators (tvm.relay.op.transform)."""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import normalize_axis, shape_str, tensor_args, tuple_or_tensors
from .registry import OpPattern, make_call, register_op

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
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.cast(inputs[0], attrs.dtype),
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
    i = 0
    newshape = list(newshape)
    while i < len(newshape):
        s = newshape[i]
        if s > 0:
            out.append(s)
            src += 1
        elif s == 0:
            if src >= len(ishape):
                raise TypeInferenceError(f"{op_name}: code 0 at position {i} has no input dimension to copy (input shape {shape_str(ishape)})")
            out.append(ishape[src])
            src += 1
        elif s == -1:
            if infer_at is not None:
                raise TypeInferenceError(f"{op_name}: newshape {tuple(newshape)} has more than one -1")
            infer_at = len(out)
            out.append(-1)
            src += 1
        elif s == -2:
            out.extend(ishape[src:])
            src = len(ishape)
        elif s == -3:
            if src + 1 >= len(ishape):
                raise TypeInferenceError(f"{op_name}: code -3 needs two input dimensions at {src} (input shape {shape_str(ishape)})")
            a, b = ishape[src], ishape[src + 1]
            out.append(a * b if isinstance(a, int) and isinstance(b, int) else AnyDim())
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
                    raise TypeInferenceError(f"{op_name}: code -4 splits dimension {d} into {a} x {b}")
            out.extend([a, b])
            src += 1
            i += 2
        else:
            raise TypeInferenceError(f"{op_name}: invalid newshape code {s} in {tuple(newshape)}")
        i += 1
    known_in = all(isinstance(d, int) for d in ishape)
    if infer_at is not None:
        rest = [d for j, d in enumerate(out) if j != infer_at]
        if known_in and all(isinstance(d, int) for d in rest):
            total = int(np.prod(ishape, dtype=np.int64))
            denom = int(np.prod(rest, dtype=np.int64))
            if denom == 0 or total % denom:
                raise TypeInferenceError(f"{op_name}: cannot reshape {shape_str(ishape)} into {tuple(newshape)}")
            out[infer_at] = total // denom
        else:
            out[infer_at] = AnyDim()
    if known_in and all(isinstance(d, int) for d in out):
        if int(np.prod(ishape, dtype=np.int64)) != int(np.prod(out, dtype=np.int64)):
            raise TypeInferenceError(
                f"{op_name}: cannot reshape {shape_str(ishape)} ({int(np.prod(ishape))} elements) into "
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
        return TensorType(infer_reshape(ishape, [d if d != 0 else 1 for d in newshape]) if 0 in newshape else infer_reshape(ishape, newshape), ts[0].dtype)
    return TensorType(infer_reshape(ishape, attrs.newshape), ts[0].dtype)


register_op(
    "reshape",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ReshapeAttrs", [F("newshape", "ints"), F("allowzero", "bool", False)]),
    rel=_reshape_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(out_type.concrete_shape),
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.reshape(inputs[0], out_type.shape),
    pattern=OpPattern.INJECTIVE,
    doc="Reshape with Relay's codes 0/-1/-2/-3/-4 (topi.reshape).",
    level=3,
)


def reshape(data, newshape, allowzero=False):
    """Reshape ``data`` to ``newshape`` (see :func:`infer_reshape` for the special codes)."""
    if isinstance(newshape, int):
        newshape = (newshape,)
    return make_call("reshape", [data], newshape=tuple(newshape), allowzero=allowzero)


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
            raise TypeInferenceError(f"concatenate: field {k} has rank {f.ndim}, field 0 has rank {ndim}")
        if f.dtype != dtype:
            raise TypeInferenceError(f"concatenate: field {k} has dtype {f.dtype}, field 0 has {dtype}")
        for j in range(ndim):
            if j != axis and isinstance(f.shape[j], int) and isinstance(fields[0].shape[j], int) and f.shape[j] != fields[0].shape[j]:
                raise TypeInferenceError(
                    f"concatenate: field {k} shape {shape_str(f.shape)} and field 0 shape "
                    f"{shape_str(fields[0].shape)} differ on axis {j} (concatenating on axis {axis})"
                )
        d = f.shape[axis]
        total = total + d if isinstance(total, int) and isinstance(d, int) else AnyDim()
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
    """Concatenate a tuple (or list) of tensors along ``axis``."""
    from ..ir.expr import Tuple

    if isinstance(data, (list, tuple)):
        data = Tuple(list(data))
    return make_call("concatenate", [data], axis=axis)


__all__ = ["cast", "reshape", "concatenate", "infer_reshape"]

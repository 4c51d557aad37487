"""Reshaping operators: ``reshape`` (Relay's codes 0/-1/-2/-3/-4), ``contrib_reverse_reshape``,
``reshape_like``, ``squeeze`` and ``expand_dims`` (tvm.relay.op.transform; exported there).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.expr import Constant
from ..ir.types import AnyDim, TensorType
from ._common import (
    dim_mul,
    normalize_axis,
    require_equal_dims,
    require_same_size,
    shape_str,
    static_value,
    tensor_args,
)
from ._nn_common import int_seq
from .registry import OpPattern, make_call, register_op

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
            a, b = _split_dim(ishape[src], newshape[i + 1], newshape[i + 2], op_name)
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
        out[infer_at] = _inferred_dim(free_in, rest, ishape, newshape, op_name)
    if known_in and all(isinstance(d, int) for d in out):
        if int(np.prod(ishape, dtype=np.int64)) != int(np.prod(out, dtype=np.int64)):
            raise TypeInferenceError(
                f"{op_name}: cannot reshape {shape_str(ishape)} ({int(np.prod(ishape))} "
                f"elements) into "
                f"{tuple(out)} ({int(np.prod(out))} elements)"
            )
    require_same_size(ishape, out, f"the data's element count differs from that of the new "
                                   f"shape {tuple(newshape)}")
    return tuple(out)


def _split_dim(d, a, b, op_name):
    """The two dimensions code ``-4`` splits the input dimension ``d`` into (``a`` or ``b`` may
    be ``-1``: inferred)."""
    if a == -1 and b == -1:
        raise TypeInferenceError(f"{op_name}: code -4 split cannot have both values -1")
    if isinstance(d, AnyDim):
        return tuple(AnyDim() if v == -1 else v for v in (a, b))
    if not isinstance(d, int):
        # symbolic (a kernel lowered for an ``Any`` dimension): the inferred half is d // known,
        # so the output shape follows from the input's and reshape needs no shape function;
        # an indivisible run-time size fails the element-count check of the kernel
        import tvm

        if a == -1:
            a = tvm.sym.Analyzer().simplify(tvm.tirx.floordiv(d, b))
        if b == -1:
            b = tvm.sym.Analyzer().simplify(tvm.tirx.floordiv(d, a))
        return a, b
    if a == -1:
        a = d // b
    if b == -1:
        b = d // a
    if a * b != d:
        raise TypeInferenceError(f"{op_name}: code -4 splits dimension {d} into {a} x {b}")
    return a, b


def _inferred_dim(free_in, rest, ishape, newshape, op_name):
    """The dimension a ``-1`` code stands for: the product of the input dimensions not copied
    (``free_in``) over the product of the other output dimensions not copied (``rest``);
    symbolic when they are, ``Any`` when one of them is."""
    if all(isinstance(d, int) for d in free_in + rest):
        total = int(np.prod(free_in, dtype=np.int64))
        denom = int(np.prod(rest, dtype=np.int64))
        if denom == 0 or total % denom:
            raise TypeInferenceError(
                f"{op_name}: cannot reshape {shape_str(ishape)} into {tuple(newshape)}"
            )
        return total // denom
    if any(isinstance(d, AnyDim) for d in free_in + rest):
        return AnyDim()
    import tvm

    total, denom = 1, 1
    for d in free_in:
        total = dim_mul(total, d)
    for d in rest:
        denom = dim_mul(denom, d)
    return tvm.sym.Analyzer().simplify(tvm.tirx.floordiv(total, denom))


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


def _reshape_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.reshape(inputs[0], out_type.shape)


register_op(
    "reshape",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ReshapeAttrs", [F("newshape", "ints"), F("allowzero", "bool", False)]),
    rel=_reshape_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(
        _reshape_rel([TensorType(args[0].shape, out_type.dtype)], attrs).concrete_shape
    ),
    compute=_reshape_compute,
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
    A computed ``newshape`` (an expression, not a constant) gives ``dyn.reshape``.
    """
    from . import dyn

    if dyn.is_dynamic_arg(newshape):
        return dyn.reshape(data, newshape, allowzero)
    newshape = static_value(newshape, "newshape", "reshape")
    return make_call("reshape", [data], newshape=int_seq(newshape, "newshape", "reshape"),
                     allowzero=allowzero)


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
    compute=_reshape_compute,  # the output type holds the resolved shape
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
    require_same_size(data.shape, shape, "the data's element count differs from that of the "
                                         "shape taken from shape_like")
    return TensorType(shape, data.dtype)


def _reshape_like_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.reshape(inputs[0], out_type.shape)


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
    compute=_reshape_like_compute,
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
        require_equal_dims(shape[a], 1, f"axis {a} of the data must have size 1")
    return axes


def _squeeze_rel(types, attrs):
    ts = tensor_args(types, ("data",), "squeeze")
    if ts is None:
        return None
    axes = _squeeze_axes(attrs, ts[0].shape)
    return TensorType([d for i, d in enumerate(ts[0].shape) if i not in axes], ts[0].dtype)


def _squeeze_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.reshape(inputs[0], out_type.shape)


register_op(
    "squeeze",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.SqueezeAttrs", [F("axis", "ints?", None)]),
    rel=_squeeze_rel,
    ref=lambda args, attrs, out_type: np.squeeze(args[0], _squeeze_axes(attrs, args[0].shape)),
    compute=_squeeze_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Remove dimensions of size 1 (those in axis, or all when None).",
    level=3,
)


def squeeze(data, axis=None):
    """Remove the size-1 dimensions ``axis`` (all size-1 dimensions when None). ``axis`` given
    as a 1-D integer tensor expression (not a constant) makes a ``dyn.squeeze`` call (see
    :mod:`relay_tvm.op.dyn_shape`)."""
    from . import dyn

    if isinstance(axis, Constant):
        axis = [int(v) for v in np.asarray(axis.data.numpy()).reshape(-1)]
    if dyn.is_dynamic_arg(axis):
        from .dyn_shape import squeeze as dyn_squeeze

        return dyn_squeeze(data, axis)
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


def _expand_dims_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.reshape(inputs[0], out_type.shape)


register_op(
    "expand_dims",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.ExpandDimsAttrs", [F("axis", "int"), F("num_newaxis", "int", 1)]),
    rel=_expand_dims_rel,
    ref=lambda args, attrs, out_type: args[0].reshape(
        _expand_dims_rel([TensorType(args[0].shape, out_type.dtype)], attrs).concrete_shape
    ),
    compute=_expand_dims_compute,
    pattern=OpPattern.BROADCAST,
    doc="Insert num_newaxis size-1 dimensions at axis (in [-ndim-1, ndim]).",
    level=1,
)


def expand_dims(data, axis, num_newaxis=1):
    """Insert ``num_newaxis`` dimensions of size 1 at ``axis``. ``axis`` given as an integer
    scalar tensor expression (not a constant) makes a ``dyn.expand_dims`` call (see
    :mod:`relay_tvm.op.dyn_shape`)."""
    from . import dyn

    if isinstance(axis, Constant):
        axis = int(np.asarray(axis.data.numpy()).reshape(-1)[0])
    if dyn.is_dynamic_arg(axis):
        from .dyn_shape import expand_dims as dyn_expand_dims

        return dyn_expand_dims(data, axis, num_newaxis)
    return make_call("expand_dims", [data], axis=axis, num_newaxis=num_newaxis)

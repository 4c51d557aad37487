"""``dyn.expand_dims`` and ``dyn.squeeze`` (tvm.relay 0.19's): the axis given as a tensor.

- ``dyn.expand_dims(data, axis)``: ``axis`` an integer scalar tensor in ``[-rank - 1, rank]``
  (negative counts from the end, as ``np.expand_dims``); ``num_newaxis`` (attribute) size-1 axes
  are inserted there. The output has rank ``rank + num_newaxis``, every dimension ``Any``.
- ``dyn.squeeze(data, axes)``: ``axes`` a 1-D integer tensor of static length ``k`` (``1 <= k <
  rank``) of distinct axes in ``[-rank, rank)`` whose dimensions are 1 (``np.squeeze``). The
  output has rank ``rank - k``, every dimension ``Any``. Squeezing every axis needs the static
  ``squeeze`` (a rank-0 result has no dimension through which a bad axis could be reported).

``relay.expand_dims`` / ``relay.squeeze`` make these calls for an axis that is an expression
other than a constant; ``transform.DynamicToStatic`` turns a constant one back. Both keep the
elements' order, so the kernel is a reshape into the shape the shape function computed (as in
0.19). An invalid axis value gives a negative dimension, which the VM refuses with an
:class:`relay_tvm.errors.InputError`; the reference kernels raise the same error. kOpaque.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import shape_str, tensor_args
from .dyn_nn import _dim, _vec
from .registry import OpPattern, make_call, register_op, register_shape_error, register_shape_func


def _int_dtype(t, what, op):
    if not str(t.dtype).startswith(("int", "uint")):
        raise TypeInferenceError(f"{op}: {what} must have an integer dtype, got {t.dtype}")


def _reshape_compute(attrs, inputs, out_type):
    from .dyn import _dyn_reshape_compute

    return _dyn_reshape_compute(attrs, inputs[:1], out_type)


# ---- dyn.expand_dims ---------------------------------------------------------------------------


def _expand_rel(types, attrs):
    ts = tensor_args(types, ("data", "axis"), "dyn.expand_dims")
    if ts is None:
        return None
    _int_dtype(ts[1], "axis", "dyn.expand_dims")
    if ts[1].shape not in ((), (1,)):
        raise TypeInferenceError(f"dyn.expand_dims: axis must be a scalar, got shape "
                                 f"{shape_str(ts[1].shape)}")
    if attrs.num_newaxis < 1:
        raise TypeInferenceError(f"dyn.expand_dims: num_newaxis must be >= 1, got "
                                 f"{attrs.num_newaxis}")
    return TensorType((AnyDim(),) * (ts[0].ndim + attrs.num_newaxis), ts[0].dtype)


def _expand_ref(args, attrs, out_type):
    x = np.asarray(args[0])
    axis = int(np.asarray(args[1]).reshape(-1)[0])
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise InputError(f"dyn.expand_dims: axis {axis} is out of range for rank {x.ndim}")
    axis = axis + x.ndim + 1 if axis < 0 else axis
    return x.reshape(x.shape[:axis] + (1,) * attrs.num_newaxis + x.shape[axis:])


def _expand_shape(attrs, inputs, out_type):
    from tvm import tirx

    x, ax = inputs
    n, k = len(x.shape), attrs.num_newaxis
    a = (ax[()] if not ax.shape else ax[0]).astype("int64")
    ok = tirx.all(a >= -n - 1, a <= n)
    a = tirx.Select(a < 0, a + n + 1, a)
    one, minus = tirx.const(1, "int64"), tirx.const(-1, "int64")
    dims = []
    for i in range(n + k):
        d = tirx.Select(i < a, _dim(x.shape[min(i, n - 1)]) if n else one,
                        tirx.Select(i < a + k, one,
                                    _dim(x.shape[max(i - k, 0)]) if n else one))
        dims.append(tirx.Select(ok, d, minus))
    return [_vec(dims)]


register_op("dyn.expand_dims", num_inputs=2, arguments=("data", "axis"),
            attrs=("relay.attrs.DynExpandDimsAttrs", [F("num_newaxis", "int", 1)]),
            rel=_expand_rel, ref=_expand_ref, compute=_reshape_compute,
            pattern=OpPattern.OPAQUE, doc="expand_dims with the axis given as a scalar tensor",
            level=3)
register_shape_func("dyn.expand_dims", _expand_shape)
register_shape_error("dyn.expand_dims", "the axis (its tensor argument) is out of range for "
                                        "the data's rank; expected -rank-1 <= axis <= rank")


# ---- dyn.squeeze -------------------------------------------------------------------------------


def _squeeze_rel(types, attrs):
    ts = tensor_args(types, ("data", "axes"), "dyn.squeeze")
    if ts is None:
        return None
    data, axes = ts
    _int_dtype(axes, "axes", "dyn.squeeze")
    if len(axes.shape) != 1 or not isinstance(axes.shape[0], int):
        raise TypeInferenceError(f"dyn.squeeze: axes must be a 1-D tensor of static length, got "
                                 f"shape {shape_str(axes.shape)}")
    k = axes.shape[0]
    if not 1 <= k < data.ndim:
        raise TypeInferenceError(
            f"dyn.squeeze: axes has {k} entries; expected 1 to {data.ndim - 1} for data "
            f"{shape_str(data.shape)} (squeezing every axis needs the static squeeze)")
    return TensorType((AnyDim(),) * (data.ndim - k), data.dtype)


def _squeeze_ref(args, attrs, out_type):
    x = np.asarray(args[0])
    axes = [int(v) for v in np.asarray(args[1]).reshape(-1)]
    if any(not -x.ndim <= a < x.ndim for a in axes):
        raise InputError(f"dyn.squeeze: axes {axes} out of range for rank {x.ndim}")
    norm = [a % x.ndim for a in axes]
    if len(set(norm)) != len(norm):
        raise InputError(f"dyn.squeeze: axes {axes} repeat an axis")
    if any(x.shape[a] != 1 for a in norm):
        raise InputError(f"dyn.squeeze: axes {axes} of data shape {x.shape} are not all 1")
    return x.reshape([d for i, d in enumerate(x.shape) if i not in norm])


def _squeeze_shape(attrs, inputs, out_type):
    from tvm import tirx

    x, ax = inputs
    n, k = len(x.shape), int(ax.shape[0])
    zero, one = tirx.const(0, "int64"), tirx.const(1, "int64")
    vals = [ax[t].astype("int64") for t in range(k)]
    ok = tirx.all(*[tirx.all(v >= -n, v < n) for v in vals]) if k > 1 else \
        tirx.all(vals[0] >= -n, vals[0] < n)
    vals = [tirx.Select(v < 0, v + n, v) for v in vals]
    removed = []
    for a in range(n):
        hits = zero
        for v in vals:
            hits = hits + tirx.Select(v == a, one, zero)
        removed.append(hits)
        # each listed axis once, and only axes of size 1
        ok = tirx.all(ok, hits <= 1, tirx.any(hits == 0, _dim(x.shape[a]) == 1))
    dims = []
    for j in range(n - k):
        d = zero
        kept_before = zero
        for a in range(n):
            keep = removed[a] == 0
            d = d + tirx.Select(tirx.all(keep, kept_before == j), _dim(x.shape[a]), zero)
            kept_before = kept_before + tirx.Select(keep, one, zero)
        dims.append(tirx.Select(ok, d, tirx.const(-1, "int64")))
    return [_vec(dims)]


register_op("dyn.squeeze", num_inputs=2, arguments=("data", "axes"),
            attrs=("relay.attrs.SqueezeAttrs", []), rel=_squeeze_rel, ref=_squeeze_ref,
            compute=_reshape_compute, pattern=OpPattern.OPAQUE,
            doc="squeeze with the axes given as a 1-D tensor", level=3)
register_shape_func("dyn.squeeze", _squeeze_shape)
register_shape_error("dyn.squeeze", "the axes (its tensor argument) are out of range for the "
                                    "data's rank, repeat an axis, or name an axis whose size "
                                    "is not 1")


def expand_dims(data, axis, num_newaxis=1):
    """``dyn.expand_dims`` (tvm.relay.op.dyn.expand_dims): see the module docstring."""
    return make_call("dyn.expand_dims", [data, axis], num_newaxis=int(num_newaxis))


def squeeze(data, axes):
    """``dyn.squeeze`` (tvm.relay.op.dyn.squeeze): see the module docstring."""
    return make_call("dyn.squeeze", [data, axes])


__all__ = ["expand_dims", "squeeze"]

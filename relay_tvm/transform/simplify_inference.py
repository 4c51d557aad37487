"""SimplifyInference: normalization and dropout into plain arithmetic for inference (opt level 0).

Relay's ``simplify_inference.cc``: the first field of ``nn.batch_norm`` becomes
``data * scale + shift`` with ``scale = 1 / sqrt(var + eps) * gamma`` and
``shift = -mean * scale + beta`` broadcast along ``axis``; ``nn.dropout``'s first field becomes its
input; ``nn.layer_norm``, ``nn.instance_norm``, ``nn.group_norm`` become mean / variance
arithmetic and ``nn.l2_normalize`` becomes ``data / sqrt(max(sum(data^2), eps))``. The other
fields of batch_norm (the moving statistics) are left as they were. Half-precision (float16,
bfloat16) normalizations are unpacked in float32 between casts, rounded once.
"""

from __future__ import annotations

import dataclasses

from ..ir.expr import Call, Constant, TupleGetItem
from ..ir.types import TensorType
from ..op.registry import make_call
from ._rewrite import Rewriter, called_ops, op_name
from .pass_infra import FunctionPass, PassInfo


def _scalar(value, dtype):
    import numpy as np

    return Constant(np.array(value, dtype=dtype))


def _call(name, *args, **attrs):
    return make_call(name, list(args), **attrs)


def expand_to_axis(vec, ndim: int, axis: int):
    """A 1-D ``vec`` along ``axis`` of an ``ndim`` tensor: ``expand_dims`` with the trailing axes
    (Relay's ExpandBiasToMatchAxis)."""
    n = ndim - axis - 1
    if n <= 0:
        return vec
    return _call("expand_dims", vec, axis=1, num_newaxis=n)


def _mean_var(data, axes):
    mean = _call("mean", data, axis=tuple(axes), keepdims=True, exclude=False)
    var = _call("variance", data, mean, axis=tuple(axes), keepdims=True, exclude=False,
                unbiased=False)
    return mean, var


def _affine(out, gamma, beta, attrs, ndim, axis):
    if attrs.scale:
        out = _call("multiply", out, expand_to_axis(gamma, ndim, axis))
    if attrs.center:
        out = _call("add", out, expand_to_axis(beta, ndim, axis))
    return out


def batch_norm_unpack(call, ttype: TensorType):
    data, gamma, beta, mean, var = call.args
    a = call.attrs
    dt = ttype.dtype
    ndim = len(ttype.shape)
    axis = a.axis % ndim
    scale = _call("divide", _scalar(1.0, dt), _call("sqrt", _call("add", var, _scalar(a.epsilon, dt))))
    if a.scale:
        scale = _call("multiply", scale, gamma)
    shift = _call("multiply", _call("negative", mean), scale)
    if a.center:
        shift = _call("add", shift, beta)
    out = _call("multiply", data, expand_to_axis(scale, ndim, axis))
    return _call("add", out, expand_to_axis(shift, ndim, axis))


def _normalize(data, axes, eps, dt):
    mean, var = _mean_var(data, axes)
    denom = _call("sqrt", _call("add", var, _scalar(eps, dt)))
    return _call("divide", _call("subtract", data, mean), denom)


def layer_norm_unpack(call, ttype):
    data, gamma, beta = call.args
    a = call.attrs
    ndim = len(ttype.shape)
    axis = a.axis % ndim
    out = _normalize(data, (axis,), a.epsilon, ttype.dtype)
    return _affine(out, gamma, beta, a, ndim, axis)


def instance_norm_unpack(call, ttype):
    data, gamma, beta = call.args
    a = call.attrs
    ndim = len(ttype.shape)
    axis = a.axis % ndim
    axes = [i for i in range(1, ndim) if i != axis]
    out = _normalize(data, axes, a.epsilon, ttype.dtype)
    return _affine(out, gamma, beta, a, ndim, axis)


def group_norm_unpack(call, ttype):
    data, gamma, beta = call.args
    a = call.attrs
    shape = tuple(ttype.shape)
    ndim = len(shape)
    axis = a.axis % ndim
    g = a.num_groups
    if all(isinstance(d, int) for d in shape):
        grouped = (*shape[:axis], g, shape[axis] // g, *shape[axis + 1:])
        back = shape
    else:
        # an Any dimension: reshape's special values keep the shape symbolic (0 copies an
        # input dimension, -4 splits the channel axis into groups, -3 merges it back, -2 copies
        # the rest), so the VM works out both shapes from the data's at run time
        grouped = (0,) * axis + (-4, g, -1, -2)
        back = (0,) * axis + (-3, -2)
    x = _call("reshape", data, newshape=grouped)
    # each group with the other non-batch axes (the operator's semantics, its TE compute and
    # reference kernel): the channels in the group (axis + 1) and every axis but batch (0) and
    # the group's. 0.19's lowering took only the axes after the channel axis, the same for
    # NCHW (axis=1) but leaving H and W out of NHWC's statistics (axis=3)
    red = [k for k in range(1, ndim + 1) if k != axis]
    out = _normalize(x, red, a.epsilon, ttype.dtype)
    out = _call("reshape", out, newshape=back)
    return _affine(out, gamma, beta, a, ndim, axis)


def l2_normalize_unpack(call, ttype):
    (data,) = call.args
    a = call.attrs
    axes = tuple(a.axis) if a.axis else tuple(range(len(ttype.shape)))
    sq = _call("sum", _call("multiply", data, data), axis=axes, keepdims=True, exclude=False)
    denom = _call("sqrt", _call("maximum", sq, _scalar(a.eps, ttype.dtype)))
    return _call("divide", data, denom)


_UNPACK = {
    "nn.layer_norm": layer_norm_unpack,
    "nn.instance_norm": instance_norm_unpack,
    "nn.group_norm": group_norm_unpack,
    "nn.l2_normalize": l2_normalize_unpack,
}


class _Simplify(Rewriter):
    def post_tuple_getitem(self, orig, new):
        if type(new) is not TupleGetItem or new.index != 0:
            return new
        name = op_name(new.tuple_value)
        if name == "nn.batch_norm":
            ttype = orig.tuple_value.checked_type.fields[0]
            return _with_span(batch_norm_unpack(new.tuple_value, ttype), orig.span)
        if name == "nn.dropout":
            return new.tuple_value.args[0]
        return new

    def post_call(self, orig, new):
        name = op_name(new)
        fn = _UNPACK.get(name)
        if fn is None:
            return new
        ttype = orig.checked_type
        if str(ttype.dtype) in _HALF:
            # the whole normalization in float32, rounded once (as the compiled operator does,
            # relay_tvm.backend.half_accum): x - mean with a float16-rounded mean was off by
            # thousands of ulps when the spread is small against the mean
            wide = Call(new.op, [_call("cast", a, dtype="float32") for a in new.args], new.attrs,
                        new.type_args, new.span)
            out = fn(wide, dataclasses.replace(ttype, dtype="float32"))
            return _with_span(_call("cast", out, dtype=str(ttype.dtype)), orig.span)
        return _with_span(fn(new, ttype), orig.span)


def _with_span(e, span):
    if span is None or not isinstance(e, Call):
        return e
    return Call(e.op, e.args, e.attrs, e.type_args, span)


_HALF = ("float16", "bfloat16")
_TRIGGERS = frozenset({"nn.batch_norm", "nn.dropout", *_UNPACK})


def simplify_inference(func, mod=None, ctx=None):
    """Apply SimplifyInference to one typed function."""
    if _TRIGGERS.isdisjoint(called_ops(func)):
        return func
    return _Simplify().rewrite(func)


def SimplifyInference():  # noqa: N802 - Relay's name
    """Rewrite batch_norm, dropout, layer/instance/group norm and l2_normalize into arithmetic
    (opt level 0). Requires types (runs InferType first)."""
    return FunctionPass(simplify_inference, PassInfo(0, "SimplifyInference", ("InferType",)))


__all__ = ["SimplifyInference", "simplify_inference", "batch_norm_unpack", "expand_to_axis"]

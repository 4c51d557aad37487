"""Normalizations (tvm.relay.nn): ``nn.batch_norm``, ``nn.layer_norm``, ``nn.instance_norm``,
``nn.group_norm``, ``nn.lrn``, ``nn.l2_normalize``.

Statistics use the biased (population) variance. ``batch_norm`` has inference semantics: it
normalizes with the given moving statistics and returns them unchanged, as a 3-tuple
``(out, moving_mean, moving_var)`` (Relay's BatchNormRel). The 1-D parameters (gamma, beta,
moving statistics) are ``(C,)`` with ``C = data.shape[axis]``; type inference fills them in when
they are not annotated. All are kOpaque in Relay (``SimplifyInference`` rewrites batch_norm,
layer_norm, instance_norm, group_norm and l2_normalize into elementwise arithmetic); the TE computes
are topi's.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType, TupleType
from ._common import normalize_axis, shape_str, tensor_args
from ._nn_common import TupleWrapper, check_float, vector_params
from .registry import OpPattern, make_call, register_op

_NORM_FIELDS = [F("epsilon", "float", 1e-5), F("center", "bool", True), F("scale", "bool", True)]


def _along(vec, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return vec.reshape(shape)


def _standardize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _affine(y, gamma, beta, axis, attrs):
    if attrs.scale:
        y = y * _along(gamma.astype("float64"), axis, y.ndim)
    if attrs.center:
        y = y + _along(beta.astype("float64"), axis, y.ndim)
    return y


def _params_rel(op, names, tuple_out=False):
    """Relation of a normalization of ``data`` with 1-D parameters ``names`` along ``axis``."""

    def rel(types, attrs):
        data = types[0]
        if isinstance(data, IncompleteType):
            return None
        (data,) = tensor_args([data], ("data",), op)
        check_float(data, op)
        if not attrs.epsilon >= 0:  # NaN too: sqrt(var + eps) of a negative eps gives NaN
            raise TypeInferenceError(f"{op}: epsilon={attrs.epsilon} must be >= 0 (it is "
                                     f"added to the variance under a square root)")
        axis = normalize_axis(attrs.axis, data.ndim, op)
        c = data.shape[axis]
        if op == "nn.group_norm":
            g = attrs.num_groups
            if g <= 0 or (isinstance(c, int) and c % g):
                raise TypeInferenceError(
                    f"{op}: num_groups={g} must be positive and divide the {c} channels"
                )
        fill = vector_params(types, 1, c, data.dtype, op, names, data.shape)
        out = data
        if tuple_out:
            vec = TensorType((c,), data.dtype)
            out = TupleType([data, vec, vec])
        return (out, fill) if fill else out

    return rel


def _gamma_beta(attrs, inputs, dtype):
    """topi wants a gamma tensor; scale=False gives ones, center=False drops beta."""
    import tvm
    from tvm import te

    gamma, beta = inputs[1], inputs[2]
    if not attrs.scale:
        gamma = te.compute(gamma.shape, lambda *i: tvm.tirx.const(1, dtype), name="ones")
    return gamma, (beta if attrs.center else None)


# ---- batch_norm ------------------------------------------------------------------------------


def _batch_norm_ref(args, attrs, out_type):
    data, gamma, beta, mean, var = args
    axis = attrs.axis % data.ndim
    x = data.astype("float64")
    y = (x - _along(mean.astype("float64"), axis, x.ndim)) / np.sqrt(
        _along(var.astype("float64"), axis, x.ndim) + attrs.epsilon
    )
    y = _affine(y, gamma, beta, axis, attrs)
    return y.astype(data.dtype), mean.copy(), var.copy()


def _batch_norm_compute(attrs, inputs, out_type):
    from tvm import topi

    data, gamma, beta, mean, var = inputs
    out = topi.nn.batch_norm(data, gamma, beta, mean, var, axis=attrs.axis % len(data.shape),
                             epsilon=attrs.epsilon, center=attrs.center, scale=attrs.scale,
                             training=False)
    # topi computes float16 in float32 and returns field 0 so; the type says data's dtype.
    y = out[0] if out[0].dtype == data.dtype else topi.cast(out[0], data.dtype)
    # Outputs must be computed tensors, not the inputs themselves.
    return [y, topi.identity(mean), topi.identity(var)]


register_op(
    "nn.batch_norm",
    num_inputs=5,
    arguments=("data", "gamma", "beta", "moving_mean", "moving_var"),
    attrs=("relay.attrs.BatchNormAttrs", [F("axis", "int", 1), *_NORM_FIELDS]),
    rel=_params_rel("nn.batch_norm", ("gamma", "beta", "moving_mean", "moving_var"), True),
    ref=_batch_norm_ref,
    compute=_batch_norm_compute,
    pattern=OpPattern.OPAQUE,
    doc="Batch normalization with moving statistics (inference), returning (out, moving_mean, "
        "moving_var) (topi.nn.batch_norm).",
    level=1,
)


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True,
               scale=True):
    """Batch normalization, inference semantics (tvm.relay.nn.batch_norm).

    ``out = (data - moving_mean) / sqrt(moving_var + epsilon) * gamma + beta`` along ``axis``.

    Args:
        data: float tensor; ``axis`` is its channel axis (1 for NCHW, 3 or -1 for NHWC).
        gamma, beta, moving_mean, moving_var: ``(C,)`` of data's dtype.
        center, scale: whether beta / gamma are applied.

    Returns:
        a :class:`TupleWrapper` of ``(out, moving_mean, moving_var)``; ``[0]`` is the result.

    Raises:
        TypeInferenceError: a parameter's shape is not ``(C,)`` or dtypes differ.
    """
    call = make_call("nn.batch_norm", [data, gamma, beta, moving_mean, moving_var], axis=axis,
                     epsilon=epsilon, center=center, scale=scale)
    return TupleWrapper(call, 3)


# ---- layer_norm, instance_norm, group_norm ---------------------------------------------------


def _layer_norm_ref(args, attrs, out_type):
    data, gamma, beta = args
    axis = attrs.axis % data.ndim
    y = _standardize(data.astype("float64"), (axis,), attrs.epsilon)
    return _affine(y, gamma, beta, axis, attrs).astype(data.dtype)


def _instance_axes(ndim, axis):
    return tuple(i for i in range(1, ndim) if i != axis)


def _instance_norm_ref(args, attrs, out_type):
    data, gamma, beta = args
    axis = attrs.axis % data.ndim
    y = _standardize(data.astype("float64"), _instance_axes(data.ndim, axis), attrs.epsilon)
    return _affine(y, gamma, beta, axis, attrs).astype(data.dtype)


def _group_norm_ref(args, attrs, out_type):
    data, gamma, beta = args
    axis = attrs.axis % data.ndim
    x = np.moveaxis(data.astype("float64"), axis, 1)
    n, c = x.shape[:2]
    g = attrs.num_groups
    xg = x.reshape(n, g, c // g, *x.shape[2:])
    y = _standardize(xg, tuple(range(2, xg.ndim)), attrs.epsilon).reshape(x.shape)
    y = np.moveaxis(y, 1, axis)
    return _affine(y, gamma, beta, axis, attrs).astype(data.dtype)


def _layer_norm_compute(attrs, inputs, out_type):
    from tvm import topi

    data = inputs[0]
    gamma, beta = _gamma_beta(attrs, inputs, data.dtype)
    return topi.nn.layer_norm(data, gamma, beta, [attrs.axis % len(data.shape)], attrs.epsilon)


def _instance_norm_compute(attrs, inputs, out_type):
    from tvm import topi

    data = inputs[0]
    ndim = len(data.shape)
    axis = attrs.axis % ndim
    gamma, beta = _gamma_beta(attrs, inputs, data.dtype)
    return topi.nn.instance_norm(data, gamma, beta, axis, list(_instance_axes(ndim, axis)),
                                 attrs.epsilon)


def _group_norm_compute(attrs, inputs, out_type):
    from tvm import topi

    data = inputs[0]
    ndim = len(data.shape)
    axis = attrs.axis % ndim
    gamma, beta = _gamma_beta(attrs, inputs, data.dtype)
    return topi.nn.group_norm(data, gamma, beta, attrs.num_groups, axis,
                              list(_instance_axes(ndim, axis)), attrs.epsilon)


_FAMILY = [
    ("layer_norm", "LayerNormAttrs", [F("axis", "int", -1)], _layer_norm_ref, _layer_norm_compute,
     "Layer normalization over ``axis`` (topi.nn.layer_norm)."),
    ("instance_norm", "InstanceNormAttrs", [F("axis", "int", 1)], _instance_norm_ref,
     _instance_norm_compute,
     "Instance normalization over every axis but batch (0) and channel (``axis``) "
     "(topi.nn.instance_norm)."),
    ("group_norm", "GroupNormAttrs", [F("num_groups", "int", 0), F("axis", "int", 1)],
     _group_norm_ref, _group_norm_compute,
     "Group normalization: channels in ``num_groups`` groups, each normalized with the other "
     "non-batch axes (topi.nn.group_norm)."),
]

for _name, _key, _fields, _ref, _compute, _doc in _FAMILY:
    register_op(
        f"nn.{_name}",
        num_inputs=3,
        arguments=("data", "gamma", "beta"),
        attrs=(f"relay.attrs.{_key}", [*_fields, *_NORM_FIELDS]),
        rel=_params_rel(f"nn.{_name}", ("gamma", "beta")),
        ref=_ref,
        compute=_compute,
        pattern=OpPattern.OPAQUE,
        doc=_doc,
        level=1 if _name == "layer_norm" else 2,
    )


def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    """Layer normalization (tvm.relay.nn.layer_norm):
    ``(x - mean) / sqrt(var + epsilon) * gamma + beta`` with statistics over ``axis``.

    Args:
        data: float tensor.
        gamma, beta: ``(data.shape[axis],)`` of data's dtype (inferred when unannotated).
    """
    return make_call("nn.layer_norm", [data, gamma, beta], axis=axis, epsilon=epsilon,
                     center=center, scale=scale)


def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    """Instance normalization (tvm.relay.nn.instance_norm): statistics per sample and channel
    over the remaining axes; gamma and beta are ``(data.shape[axis],)``."""
    return make_call("nn.instance_norm", [data, gamma, beta], axis=axis, epsilon=epsilon,
                     center=center, scale=scale)


def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    """Group normalization (tvm.relay.nn.group_norm): the ``C`` channels along ``axis`` form
    ``num_groups`` groups; statistics per sample and group over the group's channels and the
    other axes. gamma and beta are ``(C,)``.

    Raises:
        TypeInferenceError: ``num_groups`` does not divide ``C``.
    """
    return make_call("nn.group_norm", [data, gamma, beta], num_groups=num_groups, axis=axis,
                     epsilon=epsilon, center=center, scale=scale)


# ---- lrn, l2_normalize -----------------------------------------------------------------------


def _float_rel(op, check_axis=True):
    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op)
        if ts is None:
            return None
        check_float(ts[0], op)
        axes = (attrs.axis,) if isinstance(attrs.axis, int) else (attrs.axis or ())
        for a in axes:
            normalize_axis(a, ts[0].ndim, op)
        return ts[0]

    return rel


def _lrn_ref(args, attrs, out_type):
    x = args[0].astype("float64")
    axis = attrs.axis % x.ndim
    sq = np.moveaxis(x * x, axis, 0)
    c = sq.shape[0]
    lo = attrs.size // 2
    padded = np.concatenate([np.zeros((lo, *sq.shape[1:])), sq,
                             np.zeros((attrs.size - 1 - lo, *sq.shape[1:]))])
    window = sum(padded[j:j + c] for j in range(attrs.size))
    denom = np.power(attrs.bias + attrs.alpha * np.moveaxis(window, 0, axis) / attrs.size,
                     attrs.beta)
    return (x / denom).astype(args[0].dtype)


def _lrn_rel(types, attrs):
    out = _float_rel("nn.lrn")(types, attrs)
    if out is None:
        return None
    # topi.nn.lrn's limits, checked here so that they fail at type inference.
    if out.ndim != 4 or attrs.axis % 4 not in (1, 3):
        raise TypeInferenceError(
            f"nn.lrn: data must be 4-d with axis 1 (NCHW) or 3 (NHWC), got shape "
            f"{shape_str(out.shape)} and axis {attrs.axis}"
        )
    if attrs.size <= 0 or attrs.size % 2 == 0:
        raise TypeInferenceError(f"nn.lrn: size must be a positive odd number, got {attrs.size}")
    return out


def _nn_lrn_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.lrn(
        inputs[0], attrs.size, attrs.axis % len(inputs[0].shape), attrs.alpha, attrs.beta,
        attrs.bias,
    )


register_op(
    "nn.lrn",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.LRNAttrs", [F("size", "int", 5), F("axis", "int", 1),
                                    F("bias", "float", 2.0), F("alpha", "float", 1e-5),
                                    F("beta", "float", 0.75)]),
    rel=_lrn_rel,
    ref=_lrn_ref,
    compute=_nn_lrn_compute,
    pattern=OpPattern.OPAQUE,
    doc="Local response normalization across ``size`` neighbours on ``axis`` (topi.nn.lrn).",
    level=2,
)


def lrn(data, size=5, axis=1, bias=2, alpha=0.00001, beta=0.75):
    """Local response normalization (tvm.relay.nn.lrn):
    ``x / (bias + alpha / size * sum(x_j^2))^beta``, the sum over the ``size`` channels
    ``[c - size//2, c - size//2 + size)`` along ``axis``."""
    return make_call("nn.lrn", [data], size=size, axis=axis, bias=bias, alpha=alpha, beta=beta)


def _l2_axes(attrs, ndim):
    return tuple(a % ndim for a in attrs.axis) if attrs.axis else tuple(range(ndim))


def _l2_ref(args, attrs, out_type):
    x = args[0].astype("float64")
    ss = (x * x).sum(axis=_l2_axes(attrs, x.ndim), keepdims=True)
    return (x / np.sqrt(np.maximum(ss, attrs.eps))).astype(args[0].dtype)


def _l2_compute(attrs, inputs, out_type):
    import tvm
    from tvm import topi

    x = inputs[0]
    ss = topi.sum(topi.multiply(x, x), axis=list(_l2_axes(attrs, len(x.shape))), keepdims=True)
    floor = tvm.tirx.const(attrs.eps, x.dtype)
    return topi.divide(x, topi.sqrt(topi.maximum(ss, floor)))


register_op(
    "nn.l2_normalize",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.L2NormalizeAttrs", [F("eps", "float"), F("axis", "ints", ())]),
    rel=_float_rel("nn.l2_normalize"),
    ref=_l2_ref,
    compute=_l2_compute,
    pattern=OpPattern.OPAQUE,
    doc="x / sqrt(max(sum(x^2, axis), eps)) (topi.sum, topi.sqrt, topi.divide).",
    level=2,
)


def l2_normalize(data, eps, axis=None):
    """L2 normalization (tvm.relay.nn.l2_normalize): ``x / sqrt(max(sum(x^2, axis), eps))``.

    Args:
        data: float tensor.
        eps: lower bound of the squared norm.
        axis: an int or ints to sum over; None sums over every axis.
    """
    if axis is None:
        axis = ()
    elif isinstance(axis, int):
        axis = (axis,)
    return make_call("nn.l2_normalize", [data], eps=eps, axis=tuple(axis))


__all__ = ["batch_norm", "layer_norm", "instance_norm", "group_norm", "lrn", "l2_normalize"]

"""Activations and per-channel operators (tvm.relay.nn): ``nn.relu``, ``nn.leaky_relu``,
``nn.prelu``, ``nn.softmax``, ``nn.log_softmax``, ``nn.bias_add``, ``nn.dropout``.

Fusion patterns follow Relay 0.19: relu/leaky_relu kElemWise, prelu/bias_add kBroadcast,
softmax / log_softmax / fast_softmax kOutEWiseFusable (elementwise operators after them, such
as a cast, join their kernel), dropout kOpaque. TE computes are topi's.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType, TupleType
from ._common import identity_rel, normalize_axis, tensor_args
from ._ieee import elementwise as ieee_elementwise
from ._ieee import is_float, nan_max, np_maximum
from ._nn_common import TupleWrapper, check_float, vector_params
from .registry import OpPattern, make_call, register_op, register_stateful, rows_unless_axis_0


def _topi_nn(name, **kw):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        return getattr(topi.nn, name)(*inputs, **{k: getattr(attrs, v) for k, v in kw.items()})

    return compute


# ---- relu, leaky_relu ------------------------------------------------------------------------


def _relu_compute(attrs, inputs, out_type):
    from tvm import topi

    x = inputs[0]
    if not is_float(x.dtype):
        return topi.nn.relu(x)
    return ieee_elementwise(lambda v: nan_max(v, _zero(x.dtype), x.dtype), x, "relu")


def _zero(dtype):
    from tvm import tirx

    return tirx.const(0, dtype)


register_op(
    "nn.relu",
    batch_rows=True,
    num_inputs=1,
    arguments=("data",),
    rel=identity_rel("nn.relu"),
    ref=lambda args, attrs, out_type: np_maximum(args[0], np.zeros((), args[0].dtype)),
    compute=_relu_compute,
    pattern=OpPattern.ELEMWISE,
    doc="Rectified linear unit numpy.maximum(x, 0): NaN stays NaN (topi.nn.relu drops it).",
    level=1,
)


def relu(data):
    """Rectified linear unit ``max(data, 0)``, elementwise, any shape and dtype."""
    return make_call("nn.relu", [data])


register_op(
    "nn.leaky_relu",
    batch_rows=True,
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.LeakyReluAttrs", [F("alpha", "float", 0.25)]),
    rel=identity_rel("nn.leaky_relu", ("float",)),
    ref=lambda args, attrs, out_type: np.where(args[0] > 0, args[0], args[0] * attrs.alpha),
    compute=_topi_nn("leaky_relu", alpha="alpha"),
    pattern=OpPattern.ELEMWISE,
    doc="Leaky ReLU: x if x > 0 else alpha * x (topi.nn.leaky_relu).",
    level=3,
)


def leaky_relu(data, alpha=0.01):
    """Leaky ReLU ``x if x > 0 else alpha * x`` (tvm.relay.nn.leaky_relu); float data."""
    return make_call("nn.leaky_relu", [data], alpha=alpha)


# ---- prelu, bias_add: a vector along one axis ------------------------------------------------


def _vector_rel(op, second):
    def rel(types, attrs):
        data = types[0]
        if isinstance(data, IncompleteType):
            return None
        (data,) = tensor_args([data], ("data",), op)
        axis = normalize_axis(attrs.axis, data.ndim, op)
        fill = vector_params(types, 1, data.shape[axis], data.dtype, op, (second,), data.shape)
        return (data, fill) if fill else data

    return rel


def _along(vec, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return vec.reshape(shape)


def _prelu_ref(args, attrs, out_type):
    x, alpha = args
    a = _along(alpha, attrs.axis % x.ndim, x.ndim)
    return np.where(x > 0, x, x * a)


def _nn_prelu_compute(attrs, inputs, out_type):
    # topi.nn.prelu's arithmetic, written here because topi asserts constant extents (a VM
    # kernel's are symbolic: the relation has the kernel check alpha's length at run time)
    from tvm import te, tirx

    x, alpha = inputs
    axis = attrs.axis % len(x.shape)

    def f(*i):
        v = x(*i)
        return tirx.Select(v > tirx.const(0, x.dtype), v, v * alpha(i[axis]))

    return te.compute(x.shape, f, name="prelu", tag="broadcast")


register_op(
    "nn.prelu",
    batch_rows=rows_unless_axis_0("axis"),
    num_inputs=2,
    arguments=("data", "alpha"),
    attrs=("relay.attrs.PReluAttrs", [F("axis", "int", 1)]),
    rel=_vector_rel("nn.prelu", "alpha"),
    ref=_prelu_ref,
    compute=_nn_prelu_compute,
    pattern=OpPattern.BROADCAST,
    doc="Parametric ReLU: x if x > 0 else alpha[c] * x, alpha along ``axis`` (topi.nn.prelu).",
    level=3,
)


def prelu(data, alpha, axis=1):
    """Parametric ReLU (tvm.relay.nn.prelu).

    Args:
        data: tensor of any rank.
        alpha: ``(data.shape[axis],)`` slopes of data's dtype (inferred when unannotated).
        axis: the channel axis.
    """
    return make_call("nn.prelu", [data, alpha], axis=axis)


def _bias_add_compute(attrs, inputs, out_type):
    from tvm import topi

    data, bias = inputs
    ndim = len(data.shape)
    axis = attrs.axis % ndim
    if axis != ndim - 1:
        bias = topi.expand_dims(bias, axis=1, num_newaxis=ndim - axis - 1)
    return topi.add(data, bias)


register_op(
    "nn.bias_add",
    batch_rows=rows_unless_axis_0("axis"),
    num_inputs=2,
    arguments=("data", "bias"),
    attrs=("relay.attrs.BiasAddAttrs", [F("axis", "int", 1)]),
    rel=_vector_rel("nn.bias_add", "bias"),
    ref=lambda args, attrs, out_type: args[0] + _along(args[1], attrs.axis % args[0].ndim,
                                                       args[0].ndim),
    compute=_bias_add_compute,
    pattern=OpPattern.BROADCAST,
    doc="Add a 1-D bias along ``axis`` (topi.expand_dims + topi.add).",
    level=1,
)


def bias_add(data, bias, axis=1):
    """Add ``bias`` along ``axis`` of ``data`` (tvm.relay.nn.bias_add).

    Args:
        data: tensor of any rank.
        bias: ``(data.shape[axis],)`` of data's dtype (inferred when unannotated).
        axis: the channel axis (1 for NCHW, -1 or 3 for NHWC).

    Raises:
        TypeInferenceError: bias has another shape or dtype.
    """
    return make_call("nn.bias_add", [data, bias], axis=axis)


# ---- softmax, log_softmax --------------------------------------------------------------------


def _softmax_rel(op):
    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op)
        if ts is None:
            return None
        check_float(ts[0], op)
        normalize_axis(attrs.axis, ts[0].ndim, op)
        return ts[0]

    return rel


def _softmax_ref(log):
    def ref(args, attrs, out_type):
        x = args[0].astype("float64")
        if x.size == 0:  # nothing to normalize (NumPy's max of an empty axis would raise)
            return x
        z = x - x.max(axis=attrs.axis, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=attrs.axis, keepdims=True))
        return z - lse if log else np.exp(z - lse)

    return ref


for _name, _log in (("softmax", False), ("log_softmax", True), ("fast_softmax", False)):
    register_op(
        f"nn.{_name}",
        num_inputs=1,
        arguments=("data",),
        attrs=("relay.attrs.SoftmaxAttrs", [F("axis", "int", -1)]),
        rel=_softmax_rel(f"nn.{_name}"),
        ref=_softmax_ref(_log),
        compute=_topi_nn(_name, axis="axis"),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
        doc=f"{'Log-' if _log else ''}softmax along ``axis`` (topi.nn.{_name}); float data"
            + (" (exp approximated, as Relay's FastMath pass emits it)." if _name[0] == "f" else "."),
        level=1,
    )


def softmax(data, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis`` (tvm.relay.nn.softmax); float data."""
    return make_call("nn.softmax", [data], axis=axis)


def fast_softmax(data, axis=-1):
    """Softmax with topi's fast approximate ``exp`` (tvm.relay.nn.fast_softmax); the reference
    kernel computes the exact softmax."""
    return make_call("nn.fast_softmax", [data], axis=axis)


def log_softmax(data, axis=-1):
    """``x - log(sum(exp(x)))`` along ``axis`` (tvm.relay.nn.log_softmax); float data."""
    return make_call("nn.log_softmax", [data], axis=axis)


# ---- dropout ---------------------------------------------------------------------------------


def _dropout_rel(types, attrs):
    ts = tensor_args(types, ("data",), "nn.dropout")
    if ts is None:
        return None
    check_float(ts[0], "nn.dropout")
    if not 0 <= attrs.rate <= 1:
        raise TypeInferenceError(f"nn.dropout: rate={attrs.rate} must be in [0, 1] (the "
                                 f"probability of dropping an element)")
    return TupleType([ts[0], TensorType(ts[0].shape, ts[0].dtype)])


def _dropout_compute(attrs, inputs, out_type):
    import tvm
    from tvm import te, topi

    data = inputs[0]
    return [topi.identity(data), te.compute(data.shape, lambda *i: tvm.tirx.const(1, data.dtype))]


register_op(
    "nn.dropout",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.DropoutAttrs", [F("rate", "float", 0.5)]),
    rel=_dropout_rel,
    ref=lambda args, attrs, out_type: (args[0].copy(), np.ones_like(args[0])),
    compute=_dropout_compute,
    pattern=OpPattern.OPAQUE,
    doc="Dropout at inference: the identity (and a mask of ones); SimplifyInference removes it.",
    level=1,
)
# stateful in 0.19 (a draw per evaluation): FoldConstant does not freeze it and
# ToGraphNormalForm keeps its let; level 1, so a user's registration overrides it
register_stateful("nn.dropout", True, level=1)


def dropout_raw(data, rate=0.5):
    """The ``nn.dropout`` call itself, of type ``(data, mask)``."""
    return make_call("nn.dropout", [data], rate=rate)


def dropout(data, rate=0.5):
    """Dropout (tvm.relay.nn.dropout): field 0 of :func:`dropout_raw`. relay_tvm evaluates
    inference semantics, so the result equals ``data``.

    Args:
        data: float tensor.
        rate: the probability of dropping an element during training.
    """
    return TupleWrapper(dropout_raw(data, rate), 2)[0]


__all__ = ["relu", "leaky_relu", "prelu", "bias_add", "softmax", "log_softmax", "fast_softmax",
           "dropout", "dropout_raw"]

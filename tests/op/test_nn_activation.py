"""relu, leaky_relu, prelu, softmax, log_softmax, bias_add and dropout against NumPy, through
the interpreter and the compiled graph executor; parameter inference; errors."""

import numpy as np
import pytest
from nn_util import check_op, infer, rand

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType, TupleType

X = rand((2, 3, 4, 5))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_relu(dtype):
    x = rand((3, 4), dtype)
    check_op(lambda a: relay.nn.relu(a), {"x": x}, np.where(x < 0, 0, x).astype(dtype))


@pytest.mark.parametrize("alpha", [0.01, 0.2, 1.5])
def test_leaky_relu(alpha):
    want = np.where(X >= 0, X, np.float32(alpha) * X)
    check_op(lambda a: relay.nn.leaky_relu(a, alpha), {"x": X}, want)


@pytest.mark.parametrize("axis", [1, 3, -1, 0])
def test_prelu(axis):
    slope = rand((X.shape[axis],), seed=3)
    shape = [1] * 4
    shape[axis] = -1
    want = np.where(X > 0, X, X * slope.reshape(shape))
    check_op(lambda a, s: relay.nn.prelu(a, s, axis=axis), {"x": X, "s": slope}, want)


def _np_softmax(x, axis):
    e = np.exp(x.astype("float64") - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 1, 0])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax_and_log_softmax(axis, dtype):
    x = (rand((2, 3, 4), dtype) * 5).astype(dtype)
    tol = 2e-3 if dtype == "float16" else 1e-5
    sm = _np_softmax(x, axis)
    check_op(lambda a: relay.nn.softmax(a, axis), {"x": x}, sm.astype(dtype), rtol=tol, atol=tol)
    check_op(lambda a: relay.nn.log_softmax(a, axis), {"x": x}, np.log(sm).astype(dtype),
             rtol=tol, atol=tol)


@pytest.mark.parametrize("axis", [1, -1, 0, 2])
def test_bias_add(axis):
    b = rand((X.shape[axis],), seed=5)
    want = X + np.expand_dims(b, tuple(i for i in range(4) if i != axis % 4))
    check_op(lambda a, c: relay.nn.bias_add(a, c, axis), {"x": X, "b": b}, want)


def test_dropout_is_identity_at_inference():
    check_op(lambda a: relay.nn.dropout(a, rate=0.3), {"x": X}, X)
    t = infer(lambda a: relay.nn.dropout_raw(a), {"x": ((2, 3), "float32")})
    assert t == TupleType([TensorType((2, 3), "float32"), TensorType((2, 3), "float32")])
    check_op(lambda a: relay.nn.dropout_raw(a), {"x": X}, (X, np.ones_like(X)))
    check_op(lambda a: relay.nn.dropout(a, rate=1.0), {"x": X}, X)  # the bounds are rates too


@pytest.mark.parametrize("rate", [2.0, -0.1, float("nan")])
def test_dropout_rate_outside_0_1_is_refused(rate):
    """A rate is a probability: 2.0 was accepted silently (fresh-user finding)."""
    with pytest.raises(TypeInferenceError, match=r"nn.dropout: rate=.* must be in \[0, 1\]"):
        infer(lambda a: relay.nn.dropout(a, rate=rate), {"x": ((2, 3), "float32")})


@pytest.mark.parametrize("make,argname", [
    (lambda x, v: relay.nn.bias_add(x, v), "bias"),
    (lambda x, v: relay.nn.prelu(x, v), "alpha"),
])
def test_vector_parameter_is_inferred(make, argname):
    x = relay.var("x", shape=(2, 6, 3))
    v = relay.var(argname)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, v], make(x, v))))
    assert mod["main"].params[1].checked_type == TensorType((6,), "float32")


ERRORS = [
    (lambda x, v: relay.nn.bias_add(x, v), ((2, 6, 3), "float32"), ((3,), "float32"),
     r"nn.bias_add: bias must have shape \(6,\) to match the axis of data shape \(2, 6, 3\), "
     r"got shape \(3,\)"),
    (lambda x, v: relay.nn.bias_add(x, v), ((2, 6), "float32"), ((6,), "float16"),
     r"nn.bias_add: bias has dtype float16, data has float32"),
    (lambda x, v: relay.nn.bias_add(x, v, axis=3), ((2, 6), "float32"), ((6,), "float32"),
     r"nn.bias_add: axis 3 is out of range for rank 2"),
    (lambda x, v: relay.nn.prelu(x, v), ((2, 6), "float32"), ((2, 6), "float32"),
     r"nn.prelu: alpha must have shape \(6,\)"),
]


@pytest.mark.parametrize("make,x,v,match", ERRORS)
def test_errors(make, x, v, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, {"x": x, "v": v})


def test_softmax_rejects_integers():
    with pytest.raises(TypeInferenceError, match="nn.softmax: data has dtype int32, expected a float"):
        infer(lambda a: relay.nn.softmax(a), {"x": ((2, 3), "int32")})


def test_patterns_follow_relay():
    get = relay.op.get
    assert get("nn.relu").get_attr("TOpPattern") == 0
    assert get("nn.bias_add").get_attr("TOpPattern") == 1
    assert get("nn.softmax").get_attr("TOpPattern") == 4  # kOutEWiseFusable (0.19 nn.cc)

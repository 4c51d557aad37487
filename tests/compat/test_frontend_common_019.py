"""tvm.relay 0.19's ``relay.frontend.common`` helpers, for converters written against them:
``infer_type`` returns the typed expression (``.checked_type``), ``infer_value`` evaluates,
``get_relay_op`` finds constructors by name (fresh-user trial: infer_type returned a type, the
rest were missing)."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError, TypeInferenceError, UnsupportedOperatorError
from relay_tvm.frontend import common


def _dense():
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(4, 3))
    return relay.nn.dense(x, w)


def test_infer_type_returns_the_typed_expression():
    y = _dense()
    assert common.infer_type(y).checked_type == relay.TensorType((2, 4), "float32")
    f = relay.Function([relay.var("a", shape=(3,))], relay.const(1.0))
    assert common.infer_type(f).checked_type.ret_type == relay.TensorType((), "float32")
    with pytest.raises(TypeInferenceError):
        common.infer_type(relay.add(relay.var("p", shape=(2,)), relay.var("q", shape=(3,))))


def test_infer_type_with_a_module_of_globals():
    mod = relay.IRModule()
    g = relay.GlobalVar("double")
    a = relay.var("a", shape=(2,))
    mod[g] = relay.Function([a], a + a)
    out = common.infer_type(g(relay.var("z", shape=(2,))), mod)
    assert out.checked_type == relay.TensorType((2,), "float32")


def test_infer_value_shape_and_channels():
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((2, 3)).astype("float32"), rng.standard_normal((4, 3)).astype(
        "float32")
    y = _dense()
    np.testing.assert_allclose(common.infer_value(y, {"x": xv, "w": wv}).numpy(), xv @ wv.T,
                               rtol=1e-6)
    value, ok = common.try_infer_value(y, parameters={"x": xv, "w": wv})
    assert ok
    np.testing.assert_allclose(value, xv @ wv.T, rtol=1e-6)
    assert common.try_infer_value(y) == (y, False)  # x and w have no values
    assert common.try_infer_value(y, on_failure=lambda: "none") == ("none", False)
    with pytest.raises(RelayError, match=r"no value for the free variable\(s\) \['w'\]"):
        common.infer_value(y, {"x": xv})
    assert common.infer_shape(y) == (2, 4)
    assert common.infer_channels(relay.var("w", shape=(8, 3, 3, 3))) == 8
    assert common.infer_channels(relay.var("w", shape=(8, 3, 3, 3)), transpose=True) == 3
    np.testing.assert_array_equal(common.shape_of(y, start=1).data, [4])
    dyn = relay.var("d", shape=(relay.Any(), 3))
    assert isinstance(common.shape_of(dyn), relay.Call)  # the shape_of operator


def test_get_relay_op_fold_constant_and_small_helpers():
    assert common.get_relay_op("conv2d") is relay.nn.conv2d  # found in relay.nn
    assert common.get_relay_op("nn.relu") is relay.nn.relu
    assert common.get_relay_op("add") is relay.add
    with pytest.raises(UnsupportedOperatorError, match="no Relay operator 'nn.nosuch'"):
        common.get_relay_op("nn.nosuch")
    folded = common.fold_constant(relay.const(1.5) * relay.const(2.0) + relay.const(1.0))
    assert isinstance(folded, relay.Constant) and float(folded.data) == 4.0
    v = common.new_var("v", shape=(2,), dtype="int32")
    assert v.type_annotation == relay.TensorType((2,), "int32")
    assert common.get_name(v) == "v" and common.get_name(relay.const(1)) == ""
    assert common.to_int_list(np.array([1, 2], "int64")) == [1, 2]
    assert all(type(i) is int for i in common.to_int_list(np.array([1, 2], "int64")))

"""ToMixedPrecision: which operators run in float16, accumulation in float16 by default and in
float32 when registered (tvm.relay 0.19's rules), and results within 1e-2 (relative) of float32
on the reference interpreter and the graph executor."""

import warnings

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.op.op_attrs import temp_op_attr
from relay_tvm.testing import resnet

RNG = np.random.default_rng(3)


def _convnet():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(RNG.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype("float32"))
    b = relay.const(RNG.uniform(-0.5, 0.5, (4,)).astype("float32"))
    wd = relay.const(RNG.uniform(-0.5, 0.5, (5, 16)).astype("float32"))
    y = relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1))
    y = relay.nn.max_pool2d(relay.nn.relu(relay.nn.bias_add(y, b)), (2, 2), (2, 2))
    y = relay.nn.dense(relay.nn.batch_flatten(relay.nn.max_pool2d(y, (2, 2), (2, 2))), wd)
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.softmax(y)))


def _calls(mod):
    out = {}

    def visit(e):
        if isinstance(e, relay.Call) and hasattr(e.op, "name"):
            out.setdefault(e.op.name, []).append(e)

    relay.analysis.post_order_visit(mod["main"], visit)
    return out


def test_categories_and_accumulation():
    typed = relay.transform.InferType()(_convnet())
    mod = relay.transform.ToMixedPrecision()(typed)
    calls = _calls(mod)
    conv = calls["nn.conv2d"][0]
    assert [a.checked_type.dtype for a in conv.args] == ["float16", "float16"]
    assert conv.attrs.out_dtype == "float16" and conv.checked_type.dtype == "float16"
    # no cast of a cast: the float32 value softmax needs is the cast of dense's float16 result
    for c in calls["cast"]:
        assert not (isinstance(c.args[0], relay.Call) and c.args[0].op.name == "cast")
    for name in ("nn.relu", "nn.max_pool2d", "nn.bias_add"):  # follow
        assert all(c.checked_type.dtype == "float16" for c in calls[name]), name
    assert calls["nn.softmax"][0].args[0].checked_type.dtype == "float32"  # never
    assert mod["main"].checked_type.ret_type.dtype == "float32"  # softmax stays float32
    xs = RNG.uniform(-1, 1, (1, 3, 8, 8)).astype("float32")
    want = relay.create_executor(mod=typed).evaluate()(xs).numpy()
    np.testing.assert_allclose(relay.create_executor(mod=mod).evaluate()(xs).numpy(), want,
                               rtol=1e-2, atol=1e-3)
    # 0.19's registration: accumulate convolutions in float32, output float16
    with temp_op_attr("nn.conv2d", "FTVMMixedPrecisionConversionType",
                      lambda call, dt: [relay.transform.mixed_precision.MIXED_PRECISION_ALWAYS,
                                        "float32", dt]):
        acc32 = relay.transform.ToMixedPrecision()(typed)
    conv = _calls(acc32)["nn.conv2d"][0]
    assert conv.attrs.out_dtype == "float32" and conv.checked_type.dtype == "float32"
    (after,) = [c for c in _calls(acc32)["cast"] if c.args[0] is conv]
    assert after.attrs.dtype == "float16"
    np.testing.assert_allclose(relay.create_executor(mod=acc32).evaluate()(xs).numpy(), want,
                               rtol=1e-2, atol=1e-3)


def test_keep_orig_output_dtype_and_follow_output():
    x = relay.var("x", shape=(2, 4))
    w = relay.const(RNG.standard_normal((3, 4)).astype("float32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.dense(x, w))))
    mod = relay.transform.InferType()(mod)
    out = relay.transform.ToMixedPrecision()(mod)
    assert out["main"].checked_type.ret_type.dtype == "float16"
    with relay.transform.PassContext(
            config={"relay.ToMixedPrecision.keep_orig_output_dtype": True}):
        kept = relay.transform.ToMixedPrecision()(mod)
    assert kept["main"].checked_type.ret_type.dtype == "float32"


def test_missing_op_modes():
    x = relay.var("x", shape=(2, 4))
    w = relay.const(RNG.standard_normal((3, 4)).astype("float32"))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], relay.cumsum(relay.nn.dense(x, w), axis=1))))
    with pytest.raises(RelayError, match="cumsum is in no list"):
        relay.transform.ToMixedPrecision(missing_op_mode=0)(mod)
    with pytest.warns(UserWarning, match="cumsum"):
        out = relay.transform.ToMixedPrecision(missing_op_mode=1)(mod)
    # an operator in no list follows its arguments (0.19): dense's float16 result
    assert _calls(out)["cumsum"][0].args[0].checked_type.dtype == "float16"
    assert out["main"].checked_type.ret_type.dtype == "float16"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        relay.transform.ToMixedPrecision(missing_op_mode=2)(mod)


def test_let_and_if_keep_types():
    x = relay.var("x", shape=(2, 4))
    c = relay.var("c", shape=(), dtype="bool")
    w = relay.const(RNG.standard_normal((4, 4)).astype("float32"))
    v = relay.var("v")
    body = relay.Let(v, relay.nn.dense(x, w), relay.If(c, relay.nn.relu(v), relay.exp(v)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, c], body)))
    out = relay.transform.ToMixedPrecision()(mod)
    xs = RNG.standard_normal((2, 4)).astype("float32")
    for cv in (True, False):
        got = relay.create_executor(mod=out).evaluate()(xs, np.array(cv)).numpy()
        want = relay.create_executor(mod=mod).evaluate()(xs, np.array(cv)).numpy()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_resnet18_float16_close_to_float32():
    mod, params = resnet.get_workload(batch_size=1, num_classes=10, image_shape=(3, 32, 32))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.bind(mod["main"], {p: relay.const(params[p.name_hint]) for p in
                                 mod["main"].params if p.name_hint in params})))
    half = relay.transform.ToMixedPrecision()(mod)
    assert len(_calls(half)["nn.conv2d"]) == len(_calls(mod)["nn.conv2d"])
    assert all(c.args[0].checked_type.dtype == "float16" for c in _calls(half)["nn.conv2d"])
    x = RNG.uniform(-1, 1, (1, 3, 32, 32)).astype("float32")
    want = relay.create_executor(mod=mod).evaluate()(x).numpy()
    got = relay.create_executor(mod=half).evaluate()(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * np.abs(want).max())
    graph = relay.create_executor("graph", mod=half).evaluate()(x).numpy()
    np.testing.assert_allclose(graph, got, rtol=1e-2, atol=1e-2 * np.abs(want).max())

"""FakeQuantizationToInteger: per-channel binary operators, the region's output parameters for
binary operators inside a region, nn.leaky_relu / image.resize2d / nn.avg_pool2d before a
convolution, and the use_qat mode (one operator at a time: ``op(dq(a), dq(b))`` becomes
``dq(qop(a, b))``). The integer programs are checked against the fake-quantized float
programs (interpreter or NumPy), within one quantization step where the roundings differ."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import UnsupportedOperatorError
from relay_tvm.transform._rewrite import called_ops

qnn = relay.qnn.op


def f32(v):
    return relay.const(np.asarray(v, "float32"), "float32")


def i32(v):
    return relay.const(np.asarray(v, "int32"), "int32")


def _typed(out):
    return relay.transform.InferType()(relay.IRModule.from_expr(out))


def _convert(mod, **kw):
    return relay.transform.InferType()(relay.transform.FakeQuantizationToInteger(**kw)(mod))


def _run(mod, args, kind="debug"):
    if kind == "debug":
        return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args).numpy()


def _within_one_step(before, after, args, kind="debug"):
    a, b = _run(before, args, kind), _run(after, args, kind)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.abs(a.astype(int) - b.astype(int)).max() <= 1
    return a, b


@pytest.mark.parametrize("op,axes", [(op, axes) for op in ("add", "subtract", "multiply")
                                      for axes in ((1, 1), (3, 3), (2, 3))
                                      if op != "multiply" or axes[0] == axes[1]])
def test_per_channel_binary_operands(op, axes):
    # (multiply along different axes is refused: see the next test)
    rng = np.random.default_rng(11)
    shape = (1, 3, 6, 6)
    la, ra = axes
    ls = rng.uniform(1.0, 5.0, shape[la]).astype("float32")
    rs = rng.uniform(1.0, 5.0, shape[ra]).astype("float32")
    x, y = (relay.var(n, shape=shape, dtype="int8") for n in "xy")
    dx = qnn.dequantize(x, f32(ls), i32(2), axis=la)
    dy = qnn.dequantize(y, f32(rs), i32(1), axis=ra)
    oscale = 2.0 if op == "multiply" else 0.5
    out = qnn.quantize(getattr(relay, op)(dx, dy), f32(oscale), i32(3), out_dtype="int8")
    before = _typed(out)
    after = _convert(before, hard_fail=True)
    ops = called_ops(after["main"])
    assert {"qnn." + {"multiply": "mul"}.get(op, op)} <= ops
    assert "qnn.dequantize" not in ops and "qnn.quantize" not in ops
    xv = rng.integers(-25, 25, shape).astype("int8")
    yv = rng.integers(-25, 25, shape).astype("int8")
    # the float program against NumPy's reading of it, then the integer program against both
    real = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}[op](
        (xv.astype("float32") - 2) * ls.reshape([-1 if i == la else 1 for i in range(4)]),
        (yv.astype("float32") - 1) * rs.reshape([-1 if i == ra else 1 for i in range(4)]))
    ref = np.clip(np.round(real / np.float32(oscale)) + 3, -128, 127)
    a, b = _within_one_step(before, after, [xv, yv])
    assert np.abs(a.astype(int) - ref).max() <= 1
    if axes == (1, 1):  # compiled code agrees with the interpreter
        np.testing.assert_array_equal(_run(after, [xv, yv], "vm"), b)


def test_multiply_per_channel_along_different_axes_is_refused():
    shape = (1, 3, 6, 6)
    x, y = (relay.var(n, shape=shape, dtype="int8") for n in "xy")
    dx = qnn.dequantize(x, f32(np.ones(6)), i32(0), axis=2)
    dy = qnn.dequantize(y, f32(np.ones(6)), i32(0), axis=3)
    out = qnn.quantize(relay.multiply(dx, dy), f32(1.0), i32(0), out_dtype="int8")
    mod = _typed(out)
    kept = _convert(mod)
    assert "qnn.mul" not in called_ops(kept["main"])
    with pytest.raises(UnsupportedOperatorError, match="different axes"):
        _convert(mod, hard_fail=True)


def test_binary_inside_a_region_takes_the_final_parameters():
    # uint8 with zero point 0 minus a positive constant: in the input's own parameters the
    # negative differences would saturate to 0; in the final quantize's (zero point 128) not
    x = relay.var("x", shape=(1, 8, 8, 3), dtype="uint8")
    d = qnn.dequantize(x, f32(0.1), i32(0))
    t = relay.transpose(relay.subtract(d, f32(0.5)), axes=[0, 3, 1, 2])
    out = qnn.quantize(t, f32(0.2), i32(128), out_dtype="uint8", axis=1)
    before = _typed(out)
    after = _convert(before, hard_fail=True)
    assert "qnn.subtract" in called_ops(after["main"])
    xv = np.arange(192, dtype="uint8").reshape(1, 8, 8, 3)
    a, b = _within_one_step(before, after, [xv])
    ref = np.clip(np.round((xv.astype("float32") * np.float32(0.1) - np.float32(0.5))
                           / np.float32(0.2)) + 128, 0, 255).transpose(0, 3, 1, 2)
    assert np.abs(b.astype(int) - ref).max() <= 1
    assert b.min() < 128  # negative results kept


def test_leaky_relu_and_resize2d():
    rng = np.random.default_rng(5)
    x = relay.var("x", shape=(1, 3, 12, 12), dtype="uint8")
    d = qnn.dequantize(x, f32(0.5), i32(114))
    out = qnn.quantize(relay.nn.leaky_relu(d, 0.1), f32(0.25), i32(100), out_dtype="uint8")
    before = _typed(out)
    after = _convert(before, hard_fail=True)
    assert called_ops(after["main"]) == {"qnn.leaky_relu"}
    xv = rng.integers(0, 256, (1, 3, 12, 12)).astype("uint8")
    real = (xv.astype("float32") - 114) * np.float32(0.5)
    real = np.where(real < 0, real * np.float32(0.1), real)
    ref = np.clip(np.round(real / np.float32(0.25)) + 100, 0, 255)
    _, b = _within_one_step(before, after, [xv])
    assert np.abs(b.astype(int) - ref).max() <= 1
    np.testing.assert_array_equal(_run(after, [xv], "vm"), b)

    y = relay.var("y", shape=(1, 3, 16, 16), dtype="int8")
    d = qnn.dequantize(y, f32(2.0), i32(0))
    out = qnn.quantize(relay.image.resize2d(d, size=[4, 4], method="linear"), f32(2.0), i32(0))
    before = _typed(out)
    after = _convert(before, hard_fail=True)
    assert called_ops(after["main"]) == {"image.resize2d"}
    yv = rng.integers(-128, 128, (1, 3, 16, 16)).astype("int8")
    _within_one_step(before, after, [yv])
    _within_one_step(before, after, [yv], "vm")


def test_avg_pool2d_feeds_a_quantized_convolution():
    rng = np.random.default_rng(2)
    x = relay.var("x", shape=(1, 4, 12, 12), dtype="uint8")
    w = relay.var("w", shape=(8, 4, 1, 1), dtype="uint8")
    pooled = relay.nn.avg_pool2d(qnn.dequantize(x, f32(0.64), i32(2)), [3, 3])
    conv = relay.nn.conv2d(pooled, qnn.dequantize(w, f32(0.5), i32(10)), kernel_size=[1, 1])
    before = _typed(qnn.quantize(conv, f32(1.0), i32(0), out_dtype="uint8"))
    after = _convert(before, hard_fail=True)
    ops = called_ops(after["main"])
    assert "qnn.conv2d" in ops and "qnn.dequantize" not in ops
    args = [rng.integers(0, 256, (1, 4, 12, 12)).astype("uint8"),
            rng.integers(0, 256, (8, 4, 1, 1)).astype("uint8")]
    a, b = _within_one_step(before, after, args)
    # the pool truncates in the integers (one input step = 0.64, times the weights' sum)
    assert (a == b).mean() > 0.5


def _qat_matmul_program():
    a = relay.var("a", shape=(1, 4, 2), dtype="int8")
    b = relay.var("b", shape=(2,), dtype="int8")
    da = qnn.dequantize(a, f32(2.0), i32(1))
    db = qnn.dequantize(b, f32(6.0), i32(-3))
    prod = relay.nn.batch_matmul(relay.reshape(da, (1, 4, 2)), relay.broadcast_to(db, (1, 3, 2)))
    return relay.erf(relay.multiply(prod, f32(0.001))), (a, b)


def test_qat_moves_dequantize_past_supported_operators():
    out, _ = _qat_matmul_program()
    before = _typed(out)
    # nothing ends in a quantize: the main rewrite leaves it alone
    assert called_ops(_convert(before)["main"]) == called_ops(before["main"])
    after = _convert(before, use_qat=True)
    body = after["main"].body  # erf(multiply(dequantize(qnn.batch_matmul(...)), 0.001))
    deq = body.args[0].args[0]
    assert deq.op.name == "qnn.dequantize" and deq.args[0].op.name == "qnn.batch_matmul"
    assert float(deq.args[1].data.numpy()) == 12.0 and int(deq.args[2].data.numpy()) == 0
    ops = called_ops(after["main"])
    assert "nn.batch_matmul" not in ops and ops >= {"reshape", "broadcast_to"}
    rng = np.random.default_rng(7)
    av = rng.integers(-128, 128, (1, 4, 2)).astype("int8")
    bv = rng.integers(-128, 128, (2,)).astype("int8")
    ref = ((av.astype("float64") - 1) * 2.0) @ np.broadcast_to((bv.astype("float64") + 3)
                                                                * 6.0, (1, 3, 2)).transpose(0, 2, 1)
    from math import erf
    ref = np.vectorize(erf)(ref * 0.001)
    for kind in ("debug", "vm"):
        np.testing.assert_allclose(_run(after, [av, bv], kind), ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_run(after, [av, bv], kind), _run(before, [av, bv], kind),
                                   rtol=1e-6, atol=1e-6)


def test_qat_leaves_operators_with_a_float_input_and_can_hard_fail():
    a = relay.var("a", shape=(1, 4, 2), dtype="int8")
    f = relay.var("f", shape=(1, 3, 2), dtype="float32")
    da = qnn.dequantize(a, f32(2.0), i32(0))
    before = _typed(relay.nn.batch_matmul(da, relay.add(f, f32(1.0))))
    after = _convert(before, use_qat=True)
    assert called_ops(after["main"]) == called_ops(before["main"])

    # a bias_add of an 8-bit tensor has no integer form here (only accumulator + bias)
    x = relay.var("x", shape=(1, 4), dtype="int8")
    ba = relay.nn.bias_add(qnn.dequantize(x, f32(0.5), i32(0)), f32(np.ones(4)))
    mod = _typed(ba)
    assert called_ops(_convert(mod, use_qat=True)["main"]) == {"qnn.dequantize", "nn.bias_add"}
    with pytest.raises(UnsupportedOperatorError, match="use_qat"):
        _convert(mod, use_qat=True, hard_fail=True)


def test_qnn_softmax_against_numpy_and_as_an_optional_rewrite():
    rng = np.random.default_rng(9)
    xv = rng.integers(-128, 128, (5, 10)).astype("int8")
    x = relay.var("x", shape=(5, 10), dtype="int8")
    real = (xv.astype("float64") - 3) * 0.05
    e = np.exp(real - real.max(axis=1, keepdims=True))
    ref = np.clip(np.round(e / e.sum(axis=1, keepdims=True) * 256) - 128, -128, 127)

    y = qnn.softmax(x, f32(0.05), i32(3), f32(1 / 256), i32(-128), axis=1)
    mod = _typed(y)
    canon = relay.qnn.transform.CanonicalizeOps()(mod)
    assert "qnn.softmax" not in str(canon["main"])
    for m, kind in ((mod, "debug"), (canon, "debug"), (mod, "vm")):
        got = _run(m, [xv], kind)
        assert got.dtype == np.int8 and np.abs(got.astype(int) - ref).max() <= 1

    d = qnn.dequantize(x, f32(0.05), i32(3))
    before = _typed(qnn.quantize(relay.nn.softmax(d, axis=1), f32(1 / 256), i32(-128)))
    assert called_ops(_convert(before)["main"]) == called_ops(before["main"])  # not asked
    with pytest.raises(UnsupportedOperatorError, match="optional_qnn_ops"):
        _convert(before, hard_fail=True)
    after = _convert(before, hard_fail=True, optional_qnn_ops=["nn.softmax"])
    assert called_ops(after["main"]) == {"qnn.softmax"}
    _within_one_step(before, after, [xv])
    _within_one_step(before, after, [xv], "vm")
    with pytest.raises(UnsupportedOperatorError, match="nn.relu"):
        relay.transform.FakeQuantizationToInteger(optional_qnn_ops=["nn.relu"])

"""FakeQuantizationToInteger on the data-movement and selection operators (topk values, split,
take, max/min, minimum/maximum, mean, pad, batch_flatten): the integer program computes the
same values as NumPy applied to the integers, and no dequantize/quantize is left."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.transform._rewrite import called_ops

qnn = relay.qnn.op


def f32(v):
    return relay.const(np.asarray(v, "float32"), "float32")


def i32(v):
    return relay.const(np.asarray(v, "int32"), "int32")


def _convert(out, params):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, out)))
    after = relay.transform.InferType()(relay.transform.FakeQuantizationToInteger()(mod))
    ops = called_ops(after["main"])
    assert "qnn.dequantize" not in ops, after
    return after


def _vm(mod, *args):
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args).numpy()


def test_topk_values_split_take_run_on_integers():
    rng = np.random.default_rng(3)
    xv = rng.integers(-128, 128, (4, 10)).astype("int8")
    x = relay.var("x", shape=(4, 10), dtype="int8")
    d = qnn.dequantize(x, f32(0.5), i32(3))

    top = relay.topk(d, 3, 1, "values", False, "float32")
    got = _vm(_convert(qnn.quantize(top, f32(0.5), i32(3)), [x]), xv)
    np.testing.assert_array_equal(got, -np.sort(-xv.astype(int), axis=1)[:, :3])

    part = relay.split(d, indices_or_sections=[3, 7], axis=1)[1]
    got = _vm(_convert(qnn.quantize(part, f32(0.5), i32(3)), [x]), xv)
    np.testing.assert_array_equal(got, xv[:, 3:7])

    idx = relay.var("idx", shape=(2,), dtype="int32")
    taken = relay.take(d, idx, axis=1)
    got = _vm(_convert(qnn.quantize(taken, f32(0.5), i32(3)), [x, idx]), xv,
              np.array([9, 0], "int32"))
    np.testing.assert_array_equal(got, xv[:, [9, 0]])


def test_max_min_flatten_and_minimum_maximum_with_requantize():
    rng = np.random.default_rng(4)
    av = rng.integers(-100, 100, (2, 3, 4)).astype("int8")
    bv = rng.integers(-100, 100, (2, 3, 4)).astype("int8")
    a = relay.var("a", shape=(2, 3, 4), dtype="int8")
    b = relay.var("b", shape=(2, 3, 4), dtype="int8")
    ad = qnn.dequantize(a, f32(1.0), i32(0))
    got = _vm(_convert(qnn.quantize(relay.max(ad, axis=1), f32(1.0), i32(0)), [a]), av)
    np.testing.assert_array_equal(got, av.max(axis=1))
    got = _vm(_convert(qnn.quantize(relay.nn.batch_flatten(ad), f32(1.0), i32(0)), [a]), av)
    np.testing.assert_array_equal(got, av.reshape(2, 12))
    # b has scale 2: requantized to the output's scale 1 before the integer maximum
    bd = qnn.dequantize(b, f32(2.0), i32(0))
    out = qnn.quantize(relay.maximum(ad, bd), f32(1.0), i32(0))
    got = _vm(_convert(out, [a, b]), av, bv)
    want = np.clip(np.maximum(av.astype(int), 2 * bv.astype(int)), -128, 127)
    np.testing.assert_array_equal(got, want)


def test_mean_is_integer_division_and_pad_value_is_quantized():
    xv = np.array([[1, 2, 4], [-1, -2, 7]], "int8")
    x = relay.var("x", shape=(2, 3), dtype="int8")
    d = qnn.dequantize(x, f32(1.0), i32(0))
    got = _vm(_convert(qnn.quantize(relay.mean(d, axis=1), f32(1.0), i32(0)), [x]), xv)
    np.testing.assert_array_equal(got, [2, 1])  # 7 // 3 and 4 / 3 truncated
    # pad value 3.0 in scale 0.5, zero point 10 is the integer 16
    d = qnn.dequantize(x, f32(0.5), i32(10))
    out = qnn.quantize(relay.nn.pad(d, [[0, 0], [1, 0]], 3.0), f32(0.5), i32(10))
    got = _vm(_convert(out, [x]), xv)
    np.testing.assert_array_equal(got, np.pad(xv, [[0, 0], [1, 0]], constant_values=16))


def test_quantize_of_a_scalar_keeps_rank_zero():
    # canonicalization once made a 0-d scale constant 1-D, so the result had shape (1,)
    q = qnn.quantize(relay.const(np.float32(2.6)), f32(0.5), i32(10), out_dtype="int8")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(q))
    got = _vm(mod)
    assert got.shape == ()
    assert int(got) == int(np.round(2.6 / 0.5)) + 10


def test_per_channel_relu_clip_and_constant_operands():
    xv = np.array([[[0, 95, 96, 200]], [[113, 114, 115, 0]], [[255, 127, 128, 129]]],
                  "uint8").reshape(1, 3, 1, 4)
    x = relay.var("x", shape=(1, 3, 1, 4), dtype="uint8")
    s, z = relay.const(np.array([1.0, 2.0, 3.0], "float32")), relay.const(
        np.array([96, 114, 128], "int32"))
    d = qnn.dequantize(x, s, z, axis=1)
    zc = np.array([96, 114, 128]).reshape(1, 3, 1, 1)
    got = _vm(_convert(qnn.quantize(relay.nn.relu(d), s, z, axis=1, out_dtype="uint8"), [x]),
              xv)
    np.testing.assert_array_equal(got, np.maximum(xv, zc))
    got = _vm(_convert(qnn.quantize(relay.clip(d, 0.0, 6.0), s, z, axis=1, out_dtype="uint8"),
                       [x]), xv)
    hi = zc + np.round(6.0 / np.array([1.0, 2.0, 3.0])).reshape(1, 3, 1, 1)
    np.testing.assert_array_equal(got, np.clip(xv, zc, hi))
    # x + 1.0 with x in scale 0.5, zero point 10: the constant becomes the integer 12
    xi = relay.var("xi", shape=(5,), dtype="int8")
    di = qnn.dequantize(xi, f32(0.5), i32(10))
    after = _convert(qnn.quantize(relay.add(di, relay.const(1.0)), f32(0.5), i32(10)), [xi])
    assert "qnn.add" in called_ops(after["main"])
    xiv = np.array([-128, -3, 0, 7, 120], "int8")
    np.testing.assert_array_equal(_vm(after, xiv), np.clip(xiv.astype(int) + 2, -128, 127))


def test_average_pools_requantize_first_then_truncate():
    rng = np.random.default_rng(9)
    xv = rng.integers(-128, 128, (1, 2, 4, 4)).astype("int8")
    x = relay.var("x", shape=(1, 2, 4, 4), dtype="int8")
    d = qnn.dequantize(x, f32(2.0), i32(-12))
    after = _convert(qnn.quantize(relay.nn.global_avg_pool2d(d), f32(0.5), i32(10)), [x])
    assert "nn.global_avg_pool2d" in called_ops(after["main"])
    # requantize 2.0 -> 0.5 is exact (x4), so the integer result is the truncated mean
    wide = (xv.astype(np.int64) + 12) * 4 + 10
    total = wide.sum(axis=(2, 3), keepdims=True)
    want = np.clip(np.trunc(total / 16), -128, 127)
    np.testing.assert_array_equal(_vm(after, xv), want)
    real = (xv.astype(np.float64) + 12) * 2.0
    fq = np.clip(np.round(real.mean(axis=(2, 3), keepdims=True) / 0.5) + 10, -128, 127)
    assert np.abs(_vm(after, xv) - fq).max() <= 1
    x1 = relay.var("x1", shape=(1, 3, 8), dtype="int8")
    d1 = qnn.dequantize(x1, f32(1.0), i32(0))
    after = _convert(qnn.quantize(relay.nn.adaptive_avg_pool1d(d1, 2), f32(1.0), i32(0)), [x1])
    x1v = rng.integers(-128, 128, (1, 3, 8)).astype("int8")
    want = np.trunc(x1v.astype(np.int64).reshape(1, 3, 2, 4).sum(-1) / 4)
    np.testing.assert_array_equal(_vm(after, x1v), want)

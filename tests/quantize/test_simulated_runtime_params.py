"""qnn.simulated_quantize / simulated_dequantize with the dtype code and the scale / zero point
given at run time (one compiled VM program serves int8, uint8, int32 and "disable", and both a
per-tensor and a per-channel scale), checked against NumPy."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.qnn.op import SQNN_DTYPE_TO_CODE


def _vm(out):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(out))
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()


def _ref_q(x, s, z, dt, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    s = np.asarray(s, "float32").reshape(shape)
    z = np.asarray(z, "float32").reshape(shape)
    info = np.iinfo(dt)
    return np.clip(np.round(x / s) + z, info.min, info.max)


def test_simulated_quantize_runtime_dtype_and_channel_count():
    rng = np.random.default_rng(5)
    xv = rng.uniform(-70, 70, (3, 4)).astype("float32")
    x = relay.var("x", shape=(3, 4))
    s = relay.var("s", shape=[relay.Any()])
    z = relay.var("z", shape=[relay.Any()], dtype="int32")
    code = relay.var("code", shape=[], dtype="int32")
    run = _vm(relay.Function([x, s, z, code], relay.qnn.simulated_quantize(
        x, s, z, axis=0, out_dtype=code)))
    for dt in ("int8", "uint8", "int32"):
        c = np.int32(SQNN_DTYPE_TO_CODE[dt])
        for sv, zv in (([0.5], [3]), ([0.5, 0.25, 2.0], [3, -7, 100])):
            sv, zv = np.array(sv, "float32"), np.array(zv, "int32")
            got = run(xv, sv, zv, c).numpy()
            np.testing.assert_array_equal(got, _ref_q(xv, sv, zv, dt, 0))
    np.testing.assert_array_equal(run(xv, np.array([0.5], "float32"), np.array([3], "int32"),
                                      np.int32(SQNN_DTYPE_TO_CODE["disable"])).numpy(), xv)


def test_simulated_dequantize_runtime_params():
    qv = np.array([[1, 250, 7], [0, 128, -3]], "float32")
    q = relay.var("q", shape=(2, 3))
    s = relay.var("s", shape=[relay.Any()])
    z = relay.var("z", shape=[relay.Any()], dtype="int32")
    code = relay.var("code", shape=[], dtype="int32")
    run = _vm(relay.Function([q, s, z, code], relay.qnn.simulated_dequantize(
        q, s, z, in_dtype=code)))
    sv, zv = np.array([0.5, 2.0, 0.125], "float32"), np.array([1, 128, -3], "int32")
    got = run(qv, sv, zv, np.int32(SQNN_DTYPE_TO_CODE["uint8"])).numpy()
    np.testing.assert_allclose(got, (qv - zv) * sv, rtol=0, atol=0)
    got = run(qv, sv[:1], zv[:1], np.int32(SQNN_DTYPE_TO_CODE["int8"])).numpy()
    np.testing.assert_allclose(got, (qv - 1) * 0.5, rtol=0, atol=0)

"""qnn.leaky_relu (tvm.relay 0.19's) against a float NumPy leaky ReLU quantized by hand,
interpreted, after CanonicalizeOps, and compiled."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def _golden(x, alpha, s, zp, os_, ozp, dtype):
    """The documented arithmetic, in float32: dequantize, leaky ReLU, quantize rounding half
    to even, saturate."""
    f = np.float32
    real = (x.astype("int32") - zp).astype(f) * f(s)
    real = np.where(real >= 0, real, real * f(alpha)).astype(f)
    info = np.iinfo(dtype)
    return np.clip(np.round(real / f(os_)) + f(ozp), info.min, info.max).astype(dtype)


def _golden64(x, alpha, s, zp, os_, ozp, dtype):
    """The same in float64 (0.19's test's way): at most one code apart."""
    real = s * (x.astype("float64") - zp)
    real = np.where(real >= 0, real, alpha * real)
    info = np.iinfo(dtype)
    return np.clip(np.round(real / os_) + ozp, info.min, info.max).astype(dtype)


@pytest.mark.parametrize(
    "dtype,alpha,s,zp,os_,ozp",
    [("uint8", 0.9, 0.125, 60, 0.6, 17), ("int8", 0.1, 0.05, -3, 0.04, 5),
     ("int8", 0.25, 0.5, 0, 0.25, 0), ("int16", 0.3, 0.01, 10, 0.02, -7)],
)
def test_qnn_leaky_relu(dtype, alpha, s, zp, os_, ozp):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    a = rng.integers(info.min, int(info.max) + 1, (3, 50)).astype(dtype)
    a[0, :2] = [info.min, info.max]
    x = relay.var("x", shape=a.shape, dtype=dtype)
    y = relay.qnn.op.leaky_relu(x, alpha, relay.const(s, "float32"), relay.const(zp, "int32"),
                                relay.const(os_, "float32"), relay.const(ozp, "int32"))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    exp = _golden(a, alpha, s, zp, os_, ozp, dtype)
    canon = relay.qnn.transform.CanonicalizeOps()(mod)
    assert "qnn.leaky_relu" not in str(canon["main"])
    for kind, m in [("debug", mod), ("debug", canon), ("graph", mod), ("vm", mod)]:
        got = relay.create_executor(kind, mod=m, target="llvm").evaluate()(a).numpy()
        np.testing.assert_array_equal(got, exp)
        far = _golden64(a, alpha, s, zp, os_, ozp, dtype).astype("int64") - got.astype("int64")
        assert np.abs(far).max() <= 1


def test_qnn_leaky_relu_types():
    x = relay.var("x", shape=(2,), dtype="float32")
    y = relay.qnn.leaky_relu(x, 0.1, relay.const(1.0), relay.const(0), relay.const(1.0),
                             relay.const(0))
    with pytest.raises(TypeInferenceError, match="qnn.leaky_relu"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))

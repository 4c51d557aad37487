"""The qnn unary operators (sqrt, rsqrt, exp, erf, sigmoid, hardswish, tanh, log, abs): every
input code of int8 / uint8 maps to quantize(f(dequantize(code))) computed here in NumPy, on the
interpreter (reference kernel) and built (table lookup after canonicalization); and
FakeQuantizationToInteger turns ``dequantize -> exp -> quantize`` into ``qnn.exp``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.qnn.op.legalizations import hardswish_func
from relay_tvm.transform._rewrite import called_ops

FUNCS = {
    "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "exp": np.exp,
    "erf": np.vectorize(math.erf), "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "hardswish": lambda v: v * np.clip(v + 3, 0, 6) / 6, "tanh": np.tanh, "log": np.log,
    "abs": np.abs,
}


def _expected(name, codes, s, z, os_, oz, dt):
    real = (codes.astype(np.float64) - z) * s
    with np.errstate(divide="ignore"):
        out = FUNCS[name](real.astype("float32").astype(np.float64))
    info = np.iinfo(dt)
    return np.clip(np.round(out / os_) + oz, info.min, info.max)


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("dt", ["uint8", "int8"])
def test_unary_table_matches_numpy(name, dt):
    info = np.iinfo(dt)
    codes = np.arange(info.min, info.max + 1).astype(dt)
    s, z, os_, oz = 0.0625, (3 if dt == "int8" else 100), 0.03125, (-5 if dt == "int8" else 20)
    if name in ("sqrt", "rsqrt", "log"):  # keep to the function's domain
        codes = codes[(codes.astype(int) - z) > 0]
    x = relay.var("x", shape=codes.shape, dtype=dt)
    op = getattr(relay.qnn, name)
    y = op(x, relay.const(np.float32(s)), relay.const(np.int32(z)),
           relay.const(np.float32(os_)), relay.const(np.int32(oz)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    want = _expected(name, codes, s, z, os_, oz, dt)
    ref = relay.create_executor("debug", mod=mod).evaluate()(codes).numpy()
    built = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(codes).numpy()
    assert ref.dtype == np.dtype(dt)
    # a float32 result within rounding error of a .5 boundary may round either way
    assert np.abs(ref.astype(int) - want).max() <= 1 and (ref == want).mean() > 0.97
    np.testing.assert_array_equal(built, ref)


def test_hardswish_func_values():
    v = np.array([-4.0, -3.0, -1.5, 0.0, 1.0, 3.0, 5.0], "float32")
    np.testing.assert_allclose(hardswish_func(v), v * np.clip(v + 3, 0, 6) / 6, rtol=1e-6)


def test_fq2i_exp_becomes_qnn_exp():
    x = relay.var("x", shape=(64,), dtype="int8")
    d = relay.qnn.dequantize(x, relay.const(np.float32(0.03)), relay.const(np.int32(0)))
    q = relay.qnn.quantize(relay.exp(d), relay.const(np.float32(0.05)),
                           relay.const(np.int32(-100)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], q)))
    after = relay.transform.InferType()(relay.transform.FakeQuantizationToInteger()(mod))
    assert "qnn.exp" in called_ops(after["main"]) and "exp" not in called_ops(after["main"])
    xv = np.arange(-128, 127, 4).astype("int8")
    got = relay.create_executor("vm", mod=after, target="llvm").evaluate()(xv).numpy()
    want = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(xv).numpy()
    np.testing.assert_array_equal(got, want)

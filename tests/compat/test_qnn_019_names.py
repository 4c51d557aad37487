"""tvm.relay 0.19's spellings of the qnn dialect: every operator directly under ``relay.qnn``
(``relay.qnn.quantize``) and the ``relay.transform.fake_quantization_to_integer`` module."""

from __future__ import annotations

import types

import numpy as np

import relay_tvm as relay


def test_qnn_operators_are_reexported_at_relay_qnn():
    for name in relay.qnn.op.__all__:
        assert getattr(relay.qnn, name) is getattr(relay.qnn.op, name)
    x = relay.var("x", shape=(4,), dtype="float32")
    q = relay.qnn.quantize(x, relay.const(0.25), relay.const(-3), out_dtype="int8")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], q)))
    xv = np.array([0.1, -1.0, 40.0, 0.375], "float32")
    got = relay.create_executor("debug", mod=mod).evaluate()(xv).numpy()
    want = np.clip(np.round(xv / 0.25) - 3, -128, 127).astype("int8")
    np.testing.assert_array_equal(got, want)


def test_fake_quantization_to_integer_is_a_module():
    m = relay.transform.fake_quantization_to_integer
    assert isinstance(m, types.ModuleType)
    assert m.FakeQuantizationToInteger is relay.transform.FakeQuantizationToInteger

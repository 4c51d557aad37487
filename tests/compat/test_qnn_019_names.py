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


def test_build_config_is_a_pass_context():
    with relay.build_config(opt_level=3, disabled_pass=["AlterOpLayout"]) as ctx:
        assert relay.transform.PassContext.current() is ctx
        assert ctx.opt_level == 3 and ctx.disabled_pass == {"AlterOpLayout"}
    assert relay.transform.build_config is relay.build_config


def test_quantize_to_uint16_and_back():
    x = relay.var("x", shape=(4,))
    q = relay.qnn.quantize(x, relay.const(0.5), relay.const(7), out_dtype="uint16")
    d = relay.qnn.dequantize(q, relay.const(0.5), relay.const(7))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], relay.Tuple(
        [q, d]))))
    xv = np.array([-10.0, 0.3, 30000.0, 40000.0], "float32")
    want_q = np.clip(np.round(xv / 0.5) + 7, 0, 65535).astype("uint16")
    for kind in ("debug", "graph"):
        got_q, got_d = relay.create_executor(kind, mod=mod).evaluate()(xv)
        np.testing.assert_array_equal(got_q.numpy(), want_q)
        np.testing.assert_array_equal(got_d.numpy(), (want_q.astype("float32") - 7) * 0.5)


def test_qnn_concatenate_of_a_split():
    x = relay.var("x", shape=(6,), dtype="uint8")

    def c(v, d):
        return relay.const(np.asarray(v, d), d)

    z = relay.qnn.concatenate(relay.split(x, 2, axis=0), input_scales=(c(1, "float32"),
                              c(2, "float32")), input_zero_points=(c(0, "int32"), c(1, "int32")),
                              output_scale=c(1, "float32"), output_zero_point=c(0, "int32"),
                              axis=0)
    xv = np.arange(6).astype("uint8")
    want = np.concatenate([xv[:3], (xv[3:].astype(int) - 1) * 2]).astype("uint8")
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind).evaluate(relay.Function([x], z))(xv).numpy()
        np.testing.assert_array_equal(got, want)

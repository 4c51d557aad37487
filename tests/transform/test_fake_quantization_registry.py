"""Rules registered for FakeQuantizationToInteger the tvm.relay 0.19 way
(``tvm.relay.op.register_fake_quantization_to_integer``, the helpers of
``tvm.relay.transform.fake_quantization_to_integer``) are used by the pass; the external
compiler hook is refused. Results are checked against NumPy and the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm  # noqa: F401  (installs tvm.relay)
from relay_tvm.errors import NotProvidedError, RelayError, UnsupportedOperatorError
from relay_tvm.op.op_attrs import reset_op_attr
from relay_tvm.transform._rewrite import called_ops

FQ = "FTVMFakeQuantizationToInteger"
OPT = "FTVMOptionalFakeQuantizationToInteger"


@pytest.fixture
def relay():
    from tvm import relay

    return relay


@pytest.fixture
def unregister():
    """Names (op, key) registered by a test, removed after it (registrations are global)."""
    names = []
    yield names
    for op_name, key in names:
        reset_op_attr(op_name, key)


def _f32(relay, v):
    return relay.const(np.asarray(v, "float32"), "float32")


def _i32(relay, v):
    return relay.const(np.asarray(v, "int32"), "int32")


def _pool_region(relay, op, scale=0.05, zp=3):
    """dequantize -> op -> quantize with the same parameters (int8 in and out)."""
    x = relay.var("x", shape=(1, 2, 4, 4), dtype="int8")
    d = relay.qnn.op.dequantize(x, _f32(relay, scale), _i32(relay, zp))
    q = relay.qnn.op.quantize(op(d), _f32(relay, scale), _i32(relay, zp), out_dtype="int8")
    return relay.Function([x], q)


def _fq2i(relay, func, **kw):
    import tvm

    mod = relay.transform.InferType()(tvm.IRModule.from_expr(func))
    out = relay.transform.FakeQuantizationToInteger(**kw)(mod)
    return mod, relay.transform.InferType()(out)


def _run(relay, mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def _x(seed=0):
    return np.random.default_rng(seed).integers(-128, 128, (1, 2, 4, 4)).astype("int8")


def test_register_unary_identity_brings_a_new_operator_into_regions(relay, unregister):
    from tvm.relay.transform.fake_quantization_to_integer import register_unary_identity

    func = _pool_region(relay, relay.nn.global_max_pool2d)
    _, unchanged = _fq2i(relay, func)
    assert "qnn.quantize" in called_ops(unchanged["main"])  # no rule yet: left as it was

    unregister.append(("nn.global_max_pool2d", FQ))
    register_unary_identity("nn.global_max_pool2d")
    before, after = _fq2i(relay, func)
    ops = called_ops(after["main"])
    assert "nn.global_max_pool2d" in ops
    assert "qnn.quantize" not in ops and "qnn.dequantize" not in ops
    assert after["main"].body.checked_type.dtype == "int8"
    x = _x()
    # max pooling commutes with the affine map: the integers' maximum, exactly
    np.testing.assert_array_equal(_run(relay, after, x), x.max(axis=(2, 3), keepdims=True))
    np.testing.assert_array_equal(_run(relay, before, x), _run(relay, after, x))


def test_rule_reads_affine_types_and_overrides_a_builtin_at_a_higher_level(relay, unregister):
    import tvm

    seen = {}

    def relu_as_clip(expr, type_map):
        arg = expr.args[0]
        t = type_map[arg]
        seen["arg"] = t
        seen["out"] = type_map[expr]
        zp = int(t.zero_point.data.numpy())
        return [relay.clip(arg, zp, 127), t]

    with pytest.raises(RelayError, match="already registered at level 10"):
        relay.op.register_fake_quantization_to_integer("nn.relu", relu_as_clip)
    unregister.append(("nn.relu", FQ))
    tvm.ir.register_op_attr("nn.relu", FQ, relu_as_clip, level=11)  # the 0.19 spelling

    func = _pool_region(relay, relay.nn.relu, scale=0.05, zp=3)
    before, after = _fq2i(relay, func)
    ops = called_ops(after["main"])
    assert "clip" in ops and "maximum" not in ops and "qnn.quantize" not in ops
    assert isinstance(seen["arg"], tvm.ir.TensorAffineType)
    assert seen["arg"].dtype == "int8" and seen["arg"].axis == -1
    np.testing.assert_allclose(seen["arg"].scale.data.numpy(), np.float32(0.05))
    assert int(seen["out"].zero_point.data.numpy()) == 3  # the final quantize's
    x = _x(1)
    np.testing.assert_array_equal(_run(relay, after, x), np.maximum(x, 3))
    np.testing.assert_array_equal(_run(relay, before, x), np.maximum(x, 3))


def test_register_unary_qnn_into_the_regions_output_parameters(relay, unregister):
    from tvm.relay.transform.fake_quantization_to_integer import register_unary_qnn

    unregister.append(("fast_exp", FQ))
    register_unary_qnn("fast_exp", relay.qnn.op.exp)
    x = relay.var("x", shape=(8,), dtype="int8")
    d = relay.qnn.op.dequantize(x, _f32(relay, 0.02), _i32(relay, 0))
    q = relay.qnn.op.quantize(relay.fast_exp(d), _f32(relay, 0.01), _i32(relay, -128),
                              out_dtype="int8")
    _, after = _fq2i(relay, relay.Function([x], q))
    ops = called_ops(after["main"])
    assert "qnn.exp" in ops and "fast_exp" not in ops and "qnn.quantize" not in ops
    xv = np.arange(-100, 100, 25).astype("int8")
    want = np.clip(np.round(np.exp(xv * np.float32(0.02)) / 0.01) - 128, -128, 127)
    assert np.abs(_run(relay, after, xv).astype(int) - want).max() <= 1


def test_optional_rule_is_used_only_when_requested(relay, unregister):
    from tvm.relay.transform.fake_quantization_to_integer import (
        register_optional_fake_quantization_to_integer,
    )

    def identity(expr, type_map):
        return [expr, type_map[expr.args[0]]]

    unregister.append(("nn.adaptive_max_pool2d", OPT))
    register_optional_fake_quantization_to_integer("nn.adaptive_max_pool2d", identity)

    def pool(d):
        return relay.nn.adaptive_max_pool2d(d, output_size=(2, 2))

    func = _pool_region(relay, pool)
    _, plain = _fq2i(relay, func)
    assert "qnn.quantize" in called_ops(plain["main"])
    _, opt = _fq2i(relay, func, optional_qnn_ops=["nn.adaptive_max_pool2d"])
    assert "qnn.quantize" not in called_ops(opt["main"])
    x = _x(2)
    want = x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(_run(relay, opt, x), want)


def test_a_failing_rule_leaves_the_region_or_raises_with_hard_fail(relay, unregister):
    def broken(expr, type_map):
        raise ValueError("scale must be known at compile time")

    unregister.append(("nn.global_max_pool2d", FQ))
    relay.op.register_fake_quantization_to_integer("nn.global_max_pool2d", broken)
    func = _pool_region(relay, relay.nn.global_max_pool2d)
    _, after = _fq2i(relay, func)
    assert "qnn.quantize" in called_ops(after["main"])
    with pytest.raises(UnsupportedOperatorError,
                       match="rule of nn.global_max_pool2d raised ValueError: scale must be"):
        _fq2i(relay, func, hard_fail=True)


def test_a_rule_returning_the_wrong_thing_is_named(relay, unregister):
    unregister.append(("nn.global_max_pool2d", FQ))
    relay.op.register_fake_quantization_to_integer("nn.global_max_pool2d",
                                                   lambda expr, type_map: expr)
    with pytest.raises(RelayError, match="rule registered for nn.global_max_pool2d returned "
                                         "a Call; expected \\[new_expr, TensorAffineType"):
        _fq2i(relay, _pool_region(relay, relay.nn.global_max_pool2d))


def test_external_compiler_hooks_are_refused_with_the_alternative(relay):
    import tvm

    with pytest.raises(NotProvidedError, match="register_external_compiler.*AnnotateTarget"):
        relay.op.register_external_compiler("nn.conv2d", lambda attrs, args, c: None)
    with pytest.raises(NotProvidedError, match="target.<compiler>"):
        tvm.ir.register_op_attr("nn.conv2d", "FTVMExternalCompiler", lambda *a: None)
    assert relay.op.op.register_external_compiler is relay.op.register_external_compiler

"""Per-operator hooks (alter/convert layout, legalize, register_op_attr) and the
tvm.relay.testing helpers; results checked against the reference interpreter / NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.testing import count_ops, run_infer_type, run_opt_pass
from relay_tvm.testing.temp_op_attr import TempOpAttr


def _eval(func, *args):
    mod = relay.IRModule.from_expr(func)
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def _conv_net():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(8, 4, 3, 3))
    return relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((1, 4, 6, 6)).astype("float32"),
            rng.standard_normal((8, 4, 3, 3)).astype("float32"))


def _nhwc(attrs, inputs, tinfos, out_type_or_desired):
    fields = dict(attrs.items())
    fields.update(data_layout="NHWC", kernel_layout="HWIO")
    return relay.nn.conv2d(inputs[0], inputs[1], **fields)


def test_alter_op_layout_hook_inserts_layout_transforms_and_keeps_numbers():
    f = _conv_net()
    seen = {}

    def hook(attrs, inputs, tinfos, out_type):
        seen["shapes"] = [tuple(t.shape) for t in tinfos]
        seen["out"] = tuple(out_type.shape)
        return _nhwc(attrs, inputs, tinfos, out_type)

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", hook):
        g = run_opt_pass(f, relay.transform.AlterOpLayout())
    assert seen == {"shapes": [(1, 4, 6, 6), (8, 4, 3, 3)], "out": (1, 8, 6, 6)}
    ops = count_ops(g)
    assert ops["layout_transform"] == 3 and ops["nn.conv2d"] == 1
    x, w = _data()
    np.testing.assert_allclose(_eval(g, x, w), _eval(f, x, w), rtol=1e-5, atol=1e-5)
    # outside the block the built-in rule is back (x86 NCHWc blocking)
    h = run_opt_pass(f, relay.transform.AlterOpLayout())
    assert "nn.contrib_conv2d_NCHWc" in count_ops(h)


def test_alter_hook_returning_none_keeps_the_call():
    # as in Relay, a user's hook replaces the built-in x86 one for its operator: None keeps
    # the call as it is (TVM 0.19's test_alter_return_none); without the hook it is blocked
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", lambda *a: None):
        g = run_opt_pass(_conv_net(), relay.transform.AlterOpLayout())
    assert "nn.contrib_conv2d_NCHWc" not in count_ops(g) and "nn.conv2d" in count_ops(g)
    g = run_opt_pass(_conv_net(), relay.transform.AlterOpLayout())
    assert "nn.contrib_conv2d_NCHWc" in count_ops(g)


def test_convert_op_layout_hook_gets_desired_layouts():
    got = []

    def hook(attrs, inputs, tinfos, desired):
        got.append(list(desired))
        return _nhwc(attrs, inputs, tinfos, desired)

    f = _conv_net()
    with TempOpAttr("nn.conv2d", "FTVMConvertOpLayout", hook):
        g = run_opt_pass(f, relay.transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}))
    assert got == [["NHWC", "default"]]
    x, w = _data(1)
    np.testing.assert_allclose(_eval(g, x, w), _eval(f, x, w), rtol=1e-5, atol=1e-5)


def test_legalize_hook_and_registration_levels():
    x = relay.var("x", shape=(5,))
    f = relay.Function([x], relay.nn.relu(x))

    def relu_as_max(attrs, inputs, types):
        assert [tuple(t.shape) for t in types] == [(5,), (5,)]  # argument and result
        return relay.maximum(inputs[0], relay.const(0.0))

    with TempOpAttr("nn.relu", "FTVMLegalize", relu_as_max):
        g = run_opt_pass(f, relay.transform.Legalize())
    assert count_ops(g) == {"maximum": 1}
    a = np.array([-2, -0.5, 0, 0.5, 2], "float32")
    np.testing.assert_array_equal(_eval(g, a), np.maximum(a, 0))
    assert count_ops(run_opt_pass(f, relay.transform.Legalize())) == {"nn.relu": 1}

    from relay_tvm.op.op_attrs import get_op_attr, reset_op_attr

    try:
        relay.op.register_legalize("nn.relu", relu_as_max, level=11)
        relay.op.register_legalize("nn.relu", lambda *a: None, level=10)  # lower: ignored
        assert get_op_attr("nn.relu", "FTVMLegalize") is relu_as_max
        with pytest.raises(RelayError, match="already registered at level 11"):
            relay.op.register_legalize("nn.relu", lambda *a: None, level=11)
    finally:
        reset_op_attr("nn.relu", "FTVMLegalize")
    with pytest.raises(RelayError, match="no operator named 'nn.nope'"):
        relay.op.register_alter_op_layout("nn.nope", relu_as_max)


def test_hook_must_return_an_expression():
    with TempOpAttr("nn.relu", "FTVMLegalize", lambda *a: 3):
        with pytest.raises(RelayError, match="returned int"):
            run_opt_pass(relay.nn.relu(relay.var("x", shape=(2,))), relay.transform.Legalize())


def test_op_get_attr_reads_user_attributes():
    op = relay.op.get("sqrt")
    assert op.get_attr("TOpPattern") == int(relay.op.OpPattern.ELEMWISE)
    with TempOpAttr("sqrt", "ftest", 7):
        assert op.get_attr("ftest") == 7
    assert op.get_attr("ftest") is None


def test_run_opt_pass_body_and_run_infer_type():
    x = relay.var("x", shape=(2,))
    body = relay.add(relay.const(1.0), relay.const(2.0)) * x
    out = run_opt_pass(body, relay.transform.FoldConstant())
    assert isinstance(out, relay.Call) and count_ops(out) == {"multiply": 1}
    typed = run_infer_type(body)
    assert typed.checked_type == relay.TensorType((2,), "float32")


def test_rand_and_nat_helpers():
    import tvm

    t = relay.testing.rand("float32", 2, 3)
    assert isinstance(t, tvm.runtime.Tensor) and t.shape == (2, 3)
    a = relay.testing.rand((4,), "int32", seed=1)
    assert a.dtype == np.int32 and a.shape == (4,)
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    three = relay.testing.make_nat_expr(p, 3)
    val = relay.create_executor("debug", mod=mod).evaluate(three)
    assert relay.testing.count(p, val) == 3
    assert relay.testing.count(p, relay.testing.make_nat_value(p, 5)) == 5


def test_infer_correct_layout_rule_is_called_by_convert_layout():
    import tvm
    import tvm.relay.transform.infer_layout_utils as ilu

    from relay_tvm.op.op_attrs import TempOpAttr

    out = ilu.InferCorrectLayoutOutput(["NCHW", None], ["NHWC"], None)
    assert out.input_layouts == ["NCHW", None] and out.output_layouts == ["NHWC"]
    assert tvm.tir.layout("") is None and tvm.tir.layout("NCHW16c").factor_of("C") == 16
    seen = []

    def undefined(attrs, new_in, old_in, types):  # relu refuses every layout: a boundary
        seen.append((new_in, old_in))
        return ilu.InferCorrectLayoutOutput([tvm.tir.layout("")], [tvm.tir.layout("")], attrs)

    x = relay.var("x", shape=(1, 4, 4, 8))
    w = relay.var("w", shape=(3, 3, 8, 8))
    f = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(
        x, w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")))
    with TempOpAttr("nn.relu", "FInferCorrectLayout", undefined):
        mod = relay.transform.ConvertLayout({"nn.conv2d": ["NCHW", "default"]})(
            tvm.IRModule.from_expr(f))
    assert seen and seen[0] == (None, ["NHWC"])
    body = mod["main"].body  # relu reads the convolution's result back in NHWC
    assert body.op.name == "nn.relu" and body.args[0].op.name == "layout_transform"
    assert body.args[0].attrs.src_layout == "NCHW" and body.args[0].attrs.dst_layout == "NHWC"


def test_support_levels_of_rounding_and_sign_operators_are_019s():
    for name in ("ceil", "floor", "trunc", "round", "abs", "negative"):
        assert relay.op.get(name).support_level == 3, name
    for name in ("exp", "add", "sqrt"):
        assert relay.op.get(name).support_level == 1, name


# ---- overriding relay_tvm's own attributes (TOpPattern, FPrimalGradient, FTVMCompute, ...) ----
def _primitive_bodies(mod):
    """The operator names of each primitive function of ``mod["main"]``, in post order."""
    out = []

    def visit(node):
        if isinstance(node, relay.Function) and node.get_attr("Primitive", 0):
            out.append(sorted(n for n, k in count_ops(node.body).items() for _ in range(k)))

    relay.analysis.post_order_visit(mod["main"], visit)
    return out


def _exp_exp():
    a = relay.var("a", shape=(3,))
    return relay.transform.InferType()(
        relay.IRModule.from_expr(relay.Function([a], relay.exp(relay.exp(a)))))


def test_temp_op_attr_pattern_opaque_stops_fusion_and_is_restored():
    """A user's TOpPattern replaces the built-in one in FuseOps (it was read before the user
    table, so exp(exp(x)) still fused); leaving the block restores the built-in pattern."""
    exp = relay.op.get("exp")
    with TempOpAttr("exp", "TOpPattern", relay.op.OpPattern.OPAQUE):
        assert exp.get_attr("TOpPattern") == int(relay.op.OpPattern.OPAQUE)
        fused = relay.transform.FuseOps(2)(_exp_exp())
        assert _primitive_bodies(fused) == [["exp"], ["exp"]]
    assert exp.get_attr("TOpPattern") == int(relay.op.OpPattern.ELEMWISE)
    assert _primitive_bodies(relay.transform.FuseOps(2)(_exp_exp())) == [["exp", "exp"]]


def _grad_of_exp_at_zero():
    a = relay.var("a", shape=(3,))
    f = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([a], relay.exp(a))))
    g = relay.transform.gradient(f["main"], mode="first_order")
    out = relay.create_executor("debug", mod=relay.IRModule.from_expr(g)).evaluate()(
        np.zeros(3, "float32"))
    return out[1][0].numpy()


def test_register_op_attr_gradient_at_a_higher_level_is_used_by_gradient():
    import tvm

    exp = relay.op.get("exp")
    builtin = exp.get_attr("FPrimalGradient")

    def three(orig, grad):
        return [grad * relay.const(3.0)]

    # the outer TempOpAttr restores the built-in rule (and its level) for the other tests
    with TempOpAttr("exp", "FPrimalGradient", builtin):
        tvm.ir.register_op_attr("exp", "FPrimalGradient", three, level=30)
        assert exp.get_attr("FPrimalGradient") is three
        np.testing.assert_array_equal(_grad_of_exp_at_zero(), [3.0, 3.0, 3.0])
    assert exp.get_attr("FPrimalGradient") is builtin
    np.testing.assert_array_equal(_grad_of_exp_at_zero(), [1.0, 1.0, 1.0])


def test_builtin_attributes_follow_019_registration_levels():
    """relay_tvm's operators hold their attributes at level 10, as 0.19's did: the same level
    again is an error, a lower one is ignored, a higher one (``level=``, which register_pattern,
    register_gradient and register_compute take) replaces it."""
    exp = relay.op.get("exp")
    builtin = exp.get_attr("FPrimalGradient")
    with TempOpAttr("exp", "FPrimalGradient", builtin), \
            TempOpAttr("exp", "TOpPattern", relay.op.OpPattern.ELEMWISE):
        with pytest.raises(RelayError, match="FPrimalGradient of exp is already registered at "
                                             "level 10"):
            relay.op.register_gradient("exp", lambda o, g: [g])
        relay.op.register_gradient("exp", lambda o, g: [g], level=5)  # lower: ignored
        assert exp.get_attr("FPrimalGradient") is builtin
        relay.op.register_pattern("exp", relay.op.OpPattern.OPAQUE, level=11)
        assert exp.get_attr("TOpPattern") == int(relay.op.OpPattern.OPAQUE)
        with pytest.raises(RelayError, match="TOpPattern of exp is already registered at level "
                                             "11"):
            relay.op.register_pattern("exp", relay.op.OpPattern.ELEMWISE, level=11)
    assert exp.get_attr("TOpPattern") == int(relay.op.OpPattern.ELEMWISE)
    assert exp.get_attr("FPrimalGradient") is builtin


def test_temp_op_attr_compute_is_what_lowering_compiles():
    from tvm import topi

    def doubled(attrs, inputs, out_type):
        return [topi.multiply(inputs[0], 2.0)]

    a = relay.var("a", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([a], relay.exp(a)))
    v = np.array([0.0, 1.0, -2.0], "float32")
    with TempOpAttr("exp", "FTVMCompute", doubled):
        got = relay.create_executor("graph", mod=mod).evaluate()(v).numpy()
    np.testing.assert_array_equal(got, 2 * v)
    got = relay.create_executor("graph", mod=mod).evaluate()(v).numpy()
    np.testing.assert_allclose(got, np.exp(v), rtol=1e-6)


def test_temp_op_attr_type_relation_is_what_infer_type_uses():
    def as_float64(arg_types, attrs):
        return relay.TensorType(arg_types[0].shape, "float64")

    def func():
        a = relay.var("a", shape=(3,))
        return relay.Function([a], relay.exp(a))

    with TempOpAttr("exp", "FTypeRelation", as_float64):
        assert run_infer_type(func()).ret_type == relay.TensorType((3,), "float64")
    assert run_infer_type(func()).ret_type == relay.TensorType((3,), "float32")

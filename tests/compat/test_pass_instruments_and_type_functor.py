"""TVM's pass instruments see relay passes run under tvm.transform.PassContext; TypeFunctor's
unimplemented kinds raise NotImplementedError (tvm.relay 0.19 behaviour)."""

from __future__ import annotations

import pytest
import tvm
from tvm.ir.instrument import pass_instrument

import relay_tvm as relay


def _mod():
    x = relay.var("x", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def test_tvm_pass_instrument_sees_relay_passes():
    @pass_instrument
    class Recorder:
        def __init__(self):
            self.events = []

        def enter_pass_ctx(self):
            self.events.append("enter")

        def exit_pass_ctx(self):
            self.events.append("exit")

        def run_before_pass(self, mod, info):
            self.events.append("before " + info.name)

        def run_after_pass(self, mod, info):
            self.events.append("after " + info.name)

    rec = Recorder()
    with tvm.transform.PassContext(instruments=[rec]):
        relay.transform.InferType()(_mod())
    assert rec.events == ["enter", "before InferType", "after InferType", "exit"]


def test_should_run_false_skips_a_relay_pass():
    @pass_instrument
    class OnlyInferType:
        def should_run(self, mod, info):
            return info.name == "InferType"

    with tvm.transform.PassContext(opt_level=3, instruments=[OnlyInferType()]):
        out = relay.transform.ToANormalForm()(_mod())
    # skipped: the body is still the plain call, not a let chain
    assert isinstance(out["main"].body, relay.Call)
    out = relay.transform.ToANormalForm()(_mod())
    assert isinstance(out["main"].body, relay.Let)


def test_type_functor_requires_overrides():
    t = relay.TensorType((2,), "float32")
    with pytest.raises(NotImplementedError, match="visit_tensor_type"):
        relay.TypeFunctor().visit(t)
    relay.TypeVisitor().visit(relay.FuncType([t], t))
    assert relay.TypeMutator().visit(relay.TupleType([t])) == relay.TupleType([t])


def test_register_an_operator_from_python():
    from relay_tvm.op import op as _op

    name = "compat_test_halfsum"
    if not _op.is_registered(name):
        _op.register(name, "sum of two tensors with broadcasting, halved")
    op = _op.get(name)
    op.set_num_inputs(2)
    op.add_argument("lhs", "Tensor")
    op.add_argument("rhs", "Tensor")
    op.add_type_rel("Broadcast")
    _op.register_stateful(name, False, level=11)
    x, y = relay.var("x", shape=(3, 1)), relay.var("y", shape=(4,))
    f = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x, y], relay.Call(op, [x, y]))))["main"]
    assert f.checked_type.ret_type == relay.TensorType((3, 4), "float32")
    with pytest.raises(relay.errors.RelayError, match="registered before"):
        _op.register(name)
    with pytest.raises(relay.errors.RelayError, match="unknown type relation"):
        op.add_type_rel("NoSuchRel")

    def first_twice(arg_types, attrs):
        t = arg_types[0]
        return relay.TensorType([2 * t.shape[0]], t.dtype)

    op.add_type_rel("custom", first_twice)
    f = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x, y], relay.Call(op, [x, y]))))["main"]
    assert f.checked_type.ret_type == relay.TensorType((6,), "float32")


def test_relay_expr_names_and_op_reset_attr():
    import relay_tvm.ir.expr as expr_mod

    x = relay.var("x", shape=(6,))
    parts = relay.op.split(x, 3)
    assert isinstance(parts, expr_mod.TupleWrapper) and len(parts) == 3
    assert relay.op.const(2, "int8").data.dtype == "int8"
    relay.op.register_op_attr("exp", "compat_test_key", "v", level=12)
    exp = relay.op.get("exp")
    assert exp.get_attr("compat_test_key") == "v"
    exp.reset_attr("compat_test_key")
    assert exp.get_attr("compat_test_key") is None

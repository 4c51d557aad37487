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


def _timed_lines(text):
    import re

    rows = []
    for line in text.splitlines():
        m = re.fullmatch(r"(\t*)([\w.]+): (\d+)us \[(\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)", line)
        assert m, f"not in TVM's profile format: {line!r}"
        rows.append((len(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)),
                     float(m.group(5)), float(m.group(6))))
    return rows


def test_pass_timing_instrument_times_relay_passes():
    """0.19's pass-instrument tutorial: PassTimingInstrument().render() inside the context lists
    each relay pass run there (TVM 0.27's C++ instrument never saw them: "no passes have been
    profiled")."""
    from tvm.ir.instrument import PassTimingInstrument

    timing = PassTimingInstrument()
    seq = tvm.transform.Sequential([relay.transform.FoldConstant(),
                                    relay.transform.EliminateCommonSubexpr()])
    with tvm.transform.PassContext(opt_level=3, instruments=[timing]):
        relay.transform.InferType()(_mod())
        seq(_mod())
        text = timing.render()
    rows = _timed_lines(text)
    # the passes a pass requires (InferType) run just before it, at its depth (as in 0.19)
    assert [(d, n) for d, n, *_ in rows] == [
        (0, "InferType"), (0, "sequential"), (1, "InferType"), (1, "FoldConstant"),
        (1, "InferType"), (1, "EliminateCommonSubexpr")]
    top = [r for r in rows if r[0] == 0]
    assert abs(sum(r[4] for r in top) - 100.0) < 0.05  # the top level shares add up to 100%
    seq_row = rows[1]
    assert seq_row[3] <= seq_row[2]  # own time excludes the nested passes
    assert sum(r[5] for r in rows[2:]) <= 100.05  # nested shares are of the sequential's time
    # leaving the context clears the profile, as TVM's did
    with pytest.warns(UserWarning, match="no passes have been profiled"):
        assert PassTimingInstrument.render() == ""


def test_override_instruments_on_the_current_context_reaches_relay_passes():
    """``PassContext.current().override_instruments([...])`` outside any ``with`` (the global
    default context): relay passes run the new instruments, and ``[]`` removes them."""
    events = []

    @pass_instrument
    class Recorder:
        def enter_pass_ctx(self):
            events.append("enter")

        def exit_pass_ctx(self):
            events.append("exit")

        def run_before_pass(self, mod, info):
            events.append("before " + info.name)

    cur = tvm.transform.PassContext.current()
    cur.override_instruments([Recorder()])
    try:
        relay.transform.InferType()(_mod())
    finally:
        cur.override_instruments([])
    relay.transform.InferType()(_mod())
    assert events == ["enter", "before InferType", "exit"]


def test_instruments_survive_relay_build_and_see_one_thread():
    """New-user trial: PassTimingInstrument().render() after relay.build inside the context was
    empty ("no passes have been profiled"): the build entered and left the user's context again
    for code generation, and leaving it calls exit_pass_ctx, which clears the profile; its
    code-generation threads entered it too, so run_before_pass ran on several threads at once
    (0.19 compiled on one). Now the profile holds the relay passes and TVM's, and an
    instrument's callbacks all come from the calling thread."""
    import threading

    from tvm.ir.instrument import PassTimingInstrument

    seen = []

    @pass_instrument
    class Threads:
        def run_before_pass(self, mod, info):
            seen.append((threading.get_ident(), info.name))

    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    z = relay.nn.softmax(relay.nn.batch_flatten(relay.nn.max_pool2d(y, (2, 2), (2, 2))))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], z))
    timing = PassTimingInstrument()
    with tvm.transform.PassContext(opt_level=3, instruments=[timing, Threads()]):
        relay.build(mod, target="llvm")
        text = timing.render()
    names = {n for _, n, *_ in _timed_lines(text)}
    assert {"FuseOps", "FoldConstant", "tirx.MakePackedAPI"} <= names, sorted(names)
    assert {t for t, _ in seen} == {threading.get_ident()}
    assert any(n.startswith("tirx.") for _, n in seen) and "FuseOps" in {n for _, n in seen}

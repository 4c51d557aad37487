"""relay.loops.while_loop and the step-wise VMCompiler of tvm.relay 0.19."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.loops import while_loop


def test_while_loop_sums_to_ten():
    i = relay.var("i", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(), dtype="int32")
    loop = while_loop(lambda i, acc: relay.less(i, relay.const(10)),
                      [i, acc], lambda i, acc: [i + relay.const(1), acc + i])
    f = relay.Function([i, acc], relay.TupleGetItem(loop(i, acc), 1))
    mod = relay.IRModule.from_expr(f)
    out = relay.create_executor("debug", mod=mod).evaluate()(np.int32(0), np.int32(0))
    assert int(out.numpy()) == sum(range(10))
    out = relay.create_executor("debug", mod=mod).evaluate()(np.int32(7), np.int32(100))
    assert int(out.numpy()) == 100 + 7 + 8 + 9


def test_while_loop_body_arity_is_checked():
    x = relay.var("x", shape=(), dtype="int32")
    with pytest.raises(RelayError, match="returned 2 values for 1 loop variables"):
        while_loop(lambda x: relay.less(x, relay.const(3)), [x], lambda x: [x, x])


def test_vm_compiler_steps_match_numpy():
    from tvm.relay.backend.vm import VMCompiler

    x = relay.var("x", shape=(4,))
    w = relay.var("w", shape=(4,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.exp(x) * w))
    wv = np.arange(4, dtype="float32")
    comp = VMCompiler()
    opt, params = comp.optimize(mod, target="llvm", params={"w": wv})
    assert [p.name_hint for p in opt["main"].params] == ["x"]  # w bound as a constant
    assert set(params) == {"w"}
    with pytest.raises(Exception, match="call lower"):
        comp.get_exec()
    comp.lower(mod, "llvm")
    comp.codegen()
    vm = relay.vm.VirtualMachine(comp.get_exec())
    a = np.array([0.0, 1.0, -1.0, 0.5], "float32")
    out = vm.run(a).numpy()
    np.testing.assert_allclose(out, np.exp(a) * wv, rtol=1e-5)


def test_quantize_names_import_through_tvm_relay_paths():
    from tvm.relay.quantize._annotate import QAnnotateKind, attach_simulated_quantize

    assert QAnnotateKind.WEIGHT == 2
    x = relay.var("x", shape=(2, 3))
    q = attach_simulated_quantize(x, QAnnotateKind.INPUT)
    assert q.op.name == "relay.op.annotation.simulated_quantize"
    assert q.args[0] is x and q.attrs.kind == int(QAnnotateKind.INPUT)


def test_tvm_runtime_vm_class_runs_relay_executables():
    import tvm
    from tvm import runtime

    x = relay.var("x", shape=(3,))
    exe = relay.vm.compile(tvm.IRModule.from_expr(relay.Function([x], relay.exp(x) + x)), "llvm")
    vm = runtime.vm.VirtualMachine(exe, tvm.cpu())
    a = np.array([0.0, 1.0, -2.0], "float32")
    np.testing.assert_allclose(vm.run(a).numpy(), np.exp(a) + a, rtol=1e-6)

"""tvm.relay 0.19's VirtualMachine API beyond invoke (stateful calls, one input at a time,
preallocated outputs, benchmark), the runtime ADT class that tuple and constructor results
are instances of, and tvm.transform.module_pass on Relay modules."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import InputError
from relay_tvm.runtime.interpreter import ConstructorValue
from relay_tvm.runtime.vm import VirtualMachine


def _vm(func):
    exe = relay.vm.compile(relay.IRModule.from_expr(func), target="llvm")
    return VirtualMachine(exe, tvm.cpu())


def _two_inputs():
    a = relay.var("a", shape=(4,))
    b = relay.var("b", shape=(4,))
    return _vm(relay.Function([a, b], relay.subtract(a, relay.multiply(b, relay.const(2.0)))))


def test_get_input_index_and_set_one_input_by_index_name_and_keyword():
    vm = _two_inputs()
    assert vm.get_input_index("a") == 0
    assert vm.get_input_index("b") == 1
    assert vm.get_input_index("c") == -1
    a = np.array([1, 2, 3, 4], "float32")
    b = np.array([0.5, 1, -1, 2], "float32")
    vm.set_one_input("main", 1, b)
    vm.set_one_input("main", "a", a)
    np.testing.assert_allclose(vm.invoke("main").numpy(), [0, 0, 5, 0])
    vm.set_one_input("main", b=np.zeros(4, "float32"))  # a keeps its value
    np.testing.assert_allclose(vm.invoke("main").numpy(), a)


def test_set_one_input_errors_and_missing_inputs():
    vm = _two_inputs()
    vm.set_one_input("main", 0, np.ones(4, "float32"))
    with pytest.raises(InputError, match=r"\['b'\] were not set"):
        vm.invoke("main")
    with pytest.raises(InputError, match=r"unknown input 'c'; inputs are \['a', 'b'\]"):
        vm.set_one_input("main", "c", np.ones(4, "float32"))
    with pytest.raises(InputError, match=r"unknown input 'bb' \(did you mean 'b'\?\); inputs"):
        vm.set_one_input("main", "bb", np.ones(4, "float32"))
    with pytest.raises(InputError, match="index 2 out of range"):
        vm.set_one_input("main", 2, np.ones(4, "float32"))
    with pytest.raises(InputError, match=r"got dtype float64, expected float32 \(no implicit "
                       r"cast; convert it with \.astype\('float32'\)\)$"):
        vm.set_one_input("main", "b", np.ones(4, "float64"))
    with pytest.raises(InputError, match=r"unknown input 'B' \(did you mean 'b'\?\); inputs"):
        vm.set_one_input("main", "B", np.ones(4, "float32"))


def test_invoke_stateful_then_get_outputs_of_a_tuple():
    x = relay.var("x", shape=(3,))
    vm = _vm(relay.Function([x], relay.Tuple([relay.exp(x), relay.negative(x)])))
    data = np.array([0, 1, 2], "float32")
    assert vm.invoke_stateful("main", data) is None
    out = vm.get_outputs()
    assert len(out) == 2
    np.testing.assert_allclose(out[0].numpy(), np.exp(data), rtol=1e-6)
    np.testing.assert_allclose(out[1].numpy(), -data)


def test_invoke_with_outputs_fills_the_given_tensor_and_checks_it():
    x = relay.var("x", shape=(2, 3))
    vm = _vm(relay.Function([x], relay.multiply(x, x)))
    data = np.arange(6, dtype="float32").reshape(2, 3)
    dst = tvm.runtime.tensor(np.zeros((2, 3), "float32"))
    vm.invoke_with_outputs("main", input_args={"x": data}, output_args=[dst])
    np.testing.assert_allclose(dst.numpy(), data * data)
    wrong = tvm.runtime.tensor(np.zeros((3, 2), "float32"))
    with pytest.raises(InputError, match=r"output 0 is \(2, 3\) float32"):
        vm.invoke_with_outputs("main", input_args={"x": data}, output_args=[wrong])
    with pytest.raises(InputError, match="2 output tensor"):
        vm.invoke_with_outputs("main", input_args={"x": data}, output_args=[dst, dst])


def test_benchmark_returns_repeat_results():
    x = relay.var("x", shape=(8,))
    vm = _vm(relay.Function([x], relay.add(x, x)))
    data = np.ones(8, "float32")
    res = vm.benchmark(tvm.cpu(), data, func_name="main", repeat=3, number=2)
    assert len(res.results) == 3 and min(res.results) > 0
    res = vm.benchmark(tvm.cpu(), data, repeat=2, number=1, end_to_end=True)
    assert len(res.results) == 2 and res.mean > 0


def test_runtime_adt_class_covers_tuples_and_constructor_values():
    from tvm.runtime.container import ADT

    mod = relay.IRModule()
    p = relay.prelude.Prelude(mod)
    cons, nil = p.cons, p.nil
    one = relay.const(np.array([1.0, 2.0], "float32"))
    two = relay.const(np.array([3.0, 4.0], "float32"))
    mod["main"] = relay.Function([], cons(one, cons(two, nil())))
    val = relay.create_executor("vm", mod=mod, target="llvm").evaluate()()
    assert isinstance(val, ConstructorValue) and isinstance(val, ADT)
    assert isinstance((1, 2), ADT) and not isinstance([1, 2], ADT)
    head, tail = val  # iterating gives the fields, as 0.19's runtime ADT did
    np.testing.assert_allclose(head.numpy(), [1, 2])
    assert len(tail) == 2 and len(tail[1]) == 0
    assert bool(tail[1])  # Nil has no fields but is a value
    np.testing.assert_allclose(tail[0].numpy(), [3, 4])
    assert ADT(0, [1, 2]) == (1, 2)
    with pytest.raises(ValueError, match="only tag 0"):
        ADT(3, [])


def test_tvm_module_pass_on_a_relay_module_runs_as_a_relay_pass():
    calls = []

    @tvm.transform.module_pass(opt_level=1, name="DoubleConsts")
    def double(mod, ctx):
        calls.append(ctx.opt_level)
        return mod

    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    with tvm.transform.PassContext(opt_level=3):
        out = double(mod)
    assert out is mod and calls == [3]
    assert double.info.name == "DoubleConsts" and double.info.opt_level == 1

    with pytest.raises(RuntimeError, match="boom"):
        @tvm.transform.module_pass(opt_level=0)
        def broken(mod, ctx):
            raise RuntimeError("boom")

        broken(mod)


def test_tvm_module_pass_on_a_tvm_module_is_tvm_s_pass():
    seen = []

    @tvm.transform.module_pass(opt_level=0)
    def record(mod, ctx):
        seen.append(type(mod).__module__)
        return mod

    from tvm.ir.module import IRModule as TvmModule

    tvm_mod = TvmModule({})
    out = record(tvm_mod)
    assert seen == ["tvm.ir.module"] and out.same_as(tvm_mod)


def test_relay_optimize_returns_module_and_params_as_019_did():
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.exp(relay.add(x, w))))
    wv = np.array([0.5, -1.0], "float32")
    with tvm.transform.PassContext(opt_level=3, required_pass=["FastMath"]):
        opt, params = relay.optimize(mod, target="llvm", params={"w": wv})
    assert "fast_exp" in opt.astext() and [p.name_hint for p in opt["main"].params] == ["x"]
    assert list(params) == ["w"] and hasattr(params["w"], "numpy")
    np.testing.assert_array_equal(params["w"].numpy(), wv)
    xv = np.array([1.0, 2.0], "float32")
    got = relay.create_executor("debug", mod=opt).evaluate()(xv).numpy()
    np.testing.assert_allclose(got, np.exp(xv + wv), rtol=1e-5)


def test_tvm_runtime_vm_executable_save_and_load_exec():
    from tvm.runtime import vm as tvm_vm

    x = relay.var("x", shape=(3,))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], relay.sqrt(x))), "llvm")
    assert isinstance(exe, tvm_vm.Executable)
    code, lib = exe.save()
    loaded = tvm_vm.Executable.load_exec(code, lib)
    vm = tvm_vm.VirtualMachine(loaded, tvm.cpu())
    np.testing.assert_allclose(vm.run(np.array([1, 4, 9], "float32")).numpy(), [1, 2, 3])


def test_nd_ndarray_covers_interpreter_adt_fields_and_builds_tensors():
    mod = relay.IRModule()
    p = relay.prelude.Prelude(mod)
    mod["main"] = relay.Function([], p.cons(relay.const(np.array([1.5, 2.5], "float32")),
                                            p.nil()))
    val = relay.create_executor("debug", mod=mod).evaluate()()
    head = val[0]
    assert isinstance(head, tvm.nd.NDArray) and not isinstance(np.zeros(2), tvm.nd.NDArray)
    np.testing.assert_array_equal(head.numpy(), [1.5, 2.5])
    t = tvm.nd.array(np.arange(3, dtype="int32"))
    assert isinstance(t, tvm.nd.NDArray) and isinstance(t, tvm.runtime.Tensor)
    assert issubclass(tvm.runtime.Tensor, tvm.nd.NDArray)
    np.testing.assert_array_equal(tvm.nd.array(head).numpy(), [1.5, 2.5])

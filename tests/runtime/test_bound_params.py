"""Parameters bound into a library (``relay.build(params=...)``) belong to the library: each
GraphModule made from it reads them without a copy, but hands out a copy of its own
(``get_input``, an output that is a parameter or a reshaped view of one), so a write through
one module changes neither the library's ``get_params()`` nor another module -- each tvm.relay
0.19 graph executor held its own copy. Values checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.runtime import load_module
from relay_tvm.runtime.graph_executor import GraphModule

RNG = np.random.default_rng(7)
XV = RNG.standard_normal((2, 3)).astype("float32")
WV = RNG.standard_normal((2, 3)).astype("float32")


def _lib(extra_outputs=False):
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(2, 3))
    y = relay.multiply(x, w)  # elementwise: the bound parameter keeps its layout
    body = relay.Tuple([y, w, relay.reshape(w, (6,))]) if extra_outputs else y
    return relay.build(relay.IRModule.from_expr(relay.Function([x, w], body)), "llvm",
                       params={"w": WV})


def _param_name(lib):
    (name,) = lib.get_params()
    return name


@pytest.mark.parametrize("exported", [False, True], ids=["in_process", "exported"])
def test_write_through_get_input_changes_that_module_only(tmp_path, exported):
    lib = _lib()
    name = _param_name(lib)
    if exported:
        lib.export_library(str(tmp_path / "net.so"))
        lib = load_module(str(tmp_path / "net.so"))
    first = GraphModule(lib["default"](tvm.cpu()))
    second = GraphModule(lib["default"](tvm.cpu()))
    held = first.get_input(name)
    np.testing.assert_array_equal(held.numpy(), WV)
    held.copyfrom(WV * 2)  # 0.19 scripts fill executor buffers this way
    for m in (first, second):
        m.set_input("x", XV)
        m.run()
    np.testing.assert_allclose(first.get_output(0).numpy(), XV * (WV * 2), rtol=1e-5)
    np.testing.assert_allclose(second.get_output(0).numpy(), XV * WV, rtol=1e-5)
    if not exported:
        np.testing.assert_array_equal(lib.get_params()[name].numpy(), WV)
    third = GraphModule(lib["default"](tvm.cpu()))  # made afterwards: the library's values
    third.run(x=XV)
    np.testing.assert_allclose(third.get_output(0).numpy(), XV * WV, rtol=1e-5)
    assert first.get_input(name) is held  # one copy per module, not one per call


def test_output_that_is_a_parameter_is_the_modules_own():
    lib = _lib(extra_outputs=True)  # FoldConstant makes reshape(w) a second parameter
    params = {k: v.numpy() for k, v in lib.get_params().items()}
    first = GraphModule(lib["default"](tvm.cpu()))
    second = GraphModule(lib["default"](tvm.cpu()))
    first.run(x=XV)
    second.run(x=XV)
    np.testing.assert_array_equal(first.get_output(1).numpy(), WV)
    np.testing.assert_array_equal(first.get_output(2).numpy(), WV.reshape(6))
    first.get_output(1).copyfrom(np.zeros((2, 3), "float32"))
    second.get_output(2).copyfrom(np.ones(6, "float32"))
    first.run(x=XV)
    second.run(x=XV)
    np.testing.assert_array_equal(first.get_output(0).numpy(), np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(second.get_output(2).numpy(), np.ones(6, "float32"))
    np.testing.assert_allclose(second.get_output(0).numpy(), XV * WV, rtol=1e-6)
    third = GraphModule(lib["default"](tvm.cpu()))  # the library's values are untouched
    third.run(x=XV)
    np.testing.assert_allclose(third.get_output(0).numpy(), XV * WV, rtol=1e-6)
    np.testing.assert_array_equal(third.get_output(1).numpy(), WV)
    np.testing.assert_array_equal(third.get_output(2).numpy(), WV.reshape(6))
    for k, v in lib.get_params().items():
        np.testing.assert_array_equal(v.numpy(), params[k])


def test_debug_outputs_do_not_reach_the_library():
    from relay_tvm.runtime.debugger import debug_executor

    lib = _lib()
    name = _param_name(lib)
    dbg = debug_executor.create(lib.get_graph_json(), lib, tvm.cpu())
    dbg.set_input("x", XV)
    dbg.run()
    dbg.get_input(name).copyfrom(np.zeros((2, 3), "float32"))
    m = GraphModule(lib["default"](tvm.cpu()))
    m.run(x=XV)
    np.testing.assert_allclose(m.get_output(0).numpy(), XV * WV, rtol=1e-5)


def test_vm_output_that_is_a_constant_is_a_copy(tmp_path):
    """The VM returned a constant output as the executable's own tensor (as 0.19's did): a
    write into it changed every later run and every VirtualMachine of the executable (a
    fresh-user trial called it a trap). Now the output is a copy; the program is unchanged."""
    x = relay.var("x", shape=(2, 3))
    c = relay.const(WV)
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function(
        [x], relay.Tuple([x * c, c, relay.reshape(c, (6,))]))), "llvm")
    path = str(tmp_path / "vm.so")
    exe.export_library(path)
    for e in (exe, relay.vm.load_executable(path)):
        vm = relay.vm.VirtualMachine(e, tvm.cpu())
        out = vm.run(XV)
        np.testing.assert_array_equal(out[1].numpy(), WV)
        np.testing.assert_array_equal(out[2].numpy(), WV.reshape(6))
        out[1].copyfrom(np.zeros((2, 3), "float32"))
        out[2].copyfrom(np.zeros(6, "float32"))
        for m in (vm, relay.vm.VirtualMachine(e, tvm.cpu())):
            again = m.run(XV)
            np.testing.assert_allclose(again[0].numpy(), XV * WV, rtol=1e-6)
            np.testing.assert_array_equal(again[1].numpy(), WV)
            np.testing.assert_array_equal(again[2].numpy(), WV.reshape(6))

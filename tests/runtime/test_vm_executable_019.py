"""tvm.relay 0.19's VM Executable API: late-bound constants (moved out of the library and
loaded back), globals / primitive_ops / get_function_params; and GraphModule's
get_input_index of an unknown name."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import BuildError, InputError
from relay_tvm.runtime.vm import Executable, VirtualMachine


def _exe(c):
    x = relay.var("x", shape=c.shape)
    small = relay.const(np.float32(0.5))
    return relay.vm.compile(relay.IRModule.from_expr(
        relay.Function([x], relay.multiply(relay.add(x, relay.const(c)), small))))


def test_late_bound_consts_leave_the_library_and_come_back(tmp_path):
    import tvm.runtime.vm  # noqa: F401 - the 0.19 spellings below

    c = np.random.rand(16, 32).astype("float32")
    x = np.random.rand(16, 32).astype("float32")
    exe = _exe(c)
    full = tmp_path / "full.so"
    exe.export_library(str(full))
    consts, so = tmp_path / "consts", tmp_path / "lib.so"
    exe.move_late_bound_consts(str(consts), byte_limit=256)
    assert list(exe.meta["late_bound"].values()) == [[[16, 32], "float32"]]
    with pytest.raises(BuildError, match="moved out"):
        VirtualMachine(exe, tvm.cpu())
    exe.export_library(str(so))
    assert so.stat().st_size <= full.stat().st_size - c.nbytes  # the library lost the constant
    mod = tvm.runtime.load_module(str(so))
    mod["load_late_bound_consts"](str(consts))  # 0.19: into the loaded module
    out = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu()).invoke("main", x)
    np.testing.assert_allclose(out.numpy(), (x + c) * 0.5, rtol=1e-6)

    again = Executable(tvm.runtime.load_module(str(so)))
    consts_map = {"const_0": np.zeros((1,), "float32")}
    with pytest.raises(InputError, match="no value for late-bound constant"):
        again.load_late_bound_consts_from_map(consts_map)
    again.load_late_bound_consts(str(consts))
    taken = again.get_late_bound_consts(byte_limit=256)  # the 0.5 scalar stays immediate
    assert len(taken) == 1 and np.array_equal(next(iter(taken.values())).numpy(), c)
    (name,) = taken
    with pytest.raises(InputError, match="is \\(16, 32\\) float32"):
        again.load_late_bound_consts_from_map({name: c[:8]})
    again.load_late_bound_consts_from_map(taken)
    out = VirtualMachine(again, tvm.cpu()).invoke("main", x)
    np.testing.assert_allclose(out.numpy(), (x + c) * 0.5, rtol=1e-6)
    # an executable without late-bound constants takes an empty map (nothing to do)
    again.load_late_bound_consts_from_map({})


def test_executable_globals_primitive_ops_and_params():
    mod = relay.IRModule()
    x = relay.var("x", shape=(3,))
    f1 = relay.GlobalVar("f1")
    mod[f1] = relay.Function([x], relay.add(x, relay.const(1.0)))
    a, b = relay.var("a", shape=(3,)), relay.var("b", shape=(3,))
    mod["main"] = relay.Function([a, b], relay.multiply(f1(a), b))
    exe = relay.vm.compile(mod)
    assert sorted(exe.globals) == ["f1", "main"]
    assert any("fused_add" in p for p in exe.primitive_ops)
    assert any("fused_multiply" in p for p in exe.primitive_ops)
    assert exe.get_function_params("main") == ["a", "b"]
    assert exe.get_function_params("f1") == ["x"]
    with pytest.raises(BuildError, match="no function 'g'"):
        exe.get_function_params("g")
    av, bv = np.arange(3, dtype="float32"), np.full(3, 2.0, "float32")
    out = VirtualMachine(exe, tvm.cpu()).invoke("main", av, bv)
    np.testing.assert_allclose(out.numpy(), (av + 1) * bv)


def test_graph_get_input_index_of_unknown_name_is_minus_one():
    import tvm.container

    from relay_tvm.runtime.graph_executor import GraphModule

    d0, d1 = relay.var("d0", shape=(1, 2)), relay.var("d1", shape=(1, 2))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([d0, d1], d0 - d1)), "llvm")
    m = GraphModule(lib["default"](tvm.cpu()))
    assert (m.get_input_index("d1"), m.get_input_index("d0"), m.get_input_index("nope")) \
        == (1, 0, -1)
    with pytest.raises(InputError, match="unknown input 'nope'"):
        m.set_input("nope", np.zeros((1, 2), "float32"))
    shapes, dtypes = m.get_input_info()
    assert isinstance(shapes, tvm.container.Map) and shapes["d0"] == (1, 2)
    assert isinstance(shapes["d0"], tvm.runtime.container.ShapeTuple)
    assert not isinstance([1, 2], tvm.runtime.container.ShapeTuple)
    assert isinstance(dtypes["d1"], tvm.runtime.container.String) and dtypes["d1"] == "float32"
    m.set_input(d0=np.ones((1, 2), "float32"), d1=np.full((1, 2), 3.0, "float32"))
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), np.full((1, 2), -2.0))

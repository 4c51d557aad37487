"""tvm.relay 0.19 runtime names that were missing (a raw AttributeError): the VM Executable's
``constants``, ``get_function_arity``, ``get_function_param_name``; ``VirtualMachine.
get_num_outputs``; ``GraphModule.share_params`` / ``set_output_zero_copy``; the build result's
``function_metadata``. Values are checked against NumPy and the graph's own types."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import BuildError, InputError, RelayError
from relay_tvm.runtime.graph_executor import GraphModule
from relay_tvm.runtime.vm import VirtualMachine

# ---- VM Executable ----------------------------------------------------------------------------


def _vm_exe():
    mod = relay.IRModule()
    x = relay.var("x", shape=(3,))
    f1 = relay.GlobalVar("f1")
    mod[f1] = relay.Function([x], relay.add(x, relay.const(np.array([1, 2, 3], "float32"))))
    a, b = relay.var("a", shape=(3,)), relay.var("b", shape=(2, 3))
    big = np.arange(6, dtype="float32").reshape(2, 3)
    mod["main"] = relay.Function(
        [a, b], relay.Tuple([f1(a), relay.add(b, relay.const(big)), relay.const(np.int32(7))]))
    return relay.vm.compile(mod), big


def test_function_arity_and_param_names():
    exe, _ = _vm_exe()
    assert exe.get_function_arity("main") == 2
    assert exe.get_function_arity("f1") == 1
    names = [exe.get_function_param_name("main", i) for i in range(2)]
    assert names == ["a", "b"] == exe.get_function_params("main")
    assert exe.get_function_param_name("f1", 0) == "x"
    with pytest.raises(BuildError, match="get_function_arity: no function 'g'"):
        exe.get_function_arity("g")
    with pytest.raises(BuildError, match="no function 'g'"):
        exe.get_function_param_name("g", 0)
    for bad in (2, -1, "0"):
        with pytest.raises(InputError, match=r"index .* out of range; @main has 2 parameter"):
            exe.get_function_param_name("main", bad)


def test_constants_lists_shapes_dtypes_and_small_values():
    exe, big = _vm_exe()
    lines = exe.constants.splitlines()
    assert all(ln.startswith("VM Const[") for ln in lines)
    # the vector and the scalar show their values (as 0.19); the matrix only its type
    assert any(ln.endswith("]: Tensor[(3),float32]=[1,2,3]") for ln in lines), lines
    assert any(ln.endswith("]: Tensor[(),int32]=[7]") for ln in lines), lines
    (mat,) = [ln for ln in lines if "(2,3)" in ln]
    assert mat.endswith("Tensor[(2,3),float32]")
    # the index is the one late-bound constants are named by
    index = int(mat[len("VM Const["):mat.index("]")])
    taken = exe.get_late_bound_consts(byte_limit=big.nbytes)
    assert list(taken) == [f"const_{index}"]
    np.testing.assert_array_equal(taken[f"const_{index}"].numpy(), big)
    assert f"VM Const[{index}]: Tensor[(2,3),float32] late-bound as const_{index} (not loaded)" \
        in exe.constants.splitlines()
    exe.load_late_bound_consts_from_map(taken)
    assert exe.constants.splitlines() == lines


def test_constants_of_a_program_without_constants_is_empty():
    x = relay.var("x", shape=(2,))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], relay.negative(x))))
    assert exe.constants == ""


def test_vm_get_num_outputs_after_a_run():
    exe, big = _vm_exe()
    vm = VirtualMachine(exe, tvm.cpu())
    with pytest.raises(BuildError, match="nothing has run yet"):
        vm.get_num_outputs()
    av, bv = np.ones(3, "float32"), np.full((2, 3), 2.0, "float32")
    vm.run(av, bv)
    assert vm.get_num_outputs() == 3
    outs = vm.get_outputs()
    np.testing.assert_array_equal(outs[0].numpy(), av + np.array([1, 2, 3], "float32"))
    np.testing.assert_array_equal(outs[1].numpy(), bv + big)
    assert int(outs[2].numpy()) == 7
    vm.invoke("f1", av)  # a single tensor: one output
    assert vm.get_num_outputs() == 1


# ---- GraphModule ------------------------------------------------------------------------------


def _graph_lib():
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(3, 4))
    y = relay.nn.dense(x, relay.transpose(w))
    return relay.build(relay.IRModule.from_expr(relay.Function([x, w], relay.Tuple(
        [y, relay.sum(y, axis=1)]))), "llvm")


def test_share_params_reads_the_other_modules_tensor():
    lib = _graph_lib()
    rng = np.random.default_rng(0)
    wv = rng.standard_normal((3, 4)).astype("float32")
    xv = rng.standard_normal((2, 3)).astype("float32")
    blob = relay.save_param_dict({"w": wv, "not_an_input": np.zeros(1, "float32")})
    first = GraphModule(lib["default"](tvm.cpu()))
    first.load_params(relay.save_param_dict({"w": wv}))
    second = GraphModule(lib["default"](tvm.cpu()))
    second.module["share_params"](first.module, bytearray(blob))  # 0.19's spelling
    assert second.get_input("w") is first.get_input("w")  # one tensor, no copy
    second.set_input("x", xv)
    second.run()
    np.testing.assert_allclose(second.get_output(0).numpy(), xv @ wv, rtol=1e-5)
    # a new value set on either module is seen by both (one buffer, as in 0.19)
    w2 = wv * 3
    first.set_input("w", w2)
    second.run()
    np.testing.assert_allclose(second.get_output(0).numpy(), xv @ w2, rtol=1e-5)
    assert second.unset_inputs() == []


def test_share_params_errors():
    lib = _graph_lib()
    m = GraphModule(lib["default"](tvm.cpu()))
    blob = relay.save_param_dict({"w": np.zeros((3, 4), "float32")})
    with pytest.raises(InputError, match="other must be a GraphModule"):
        m.share_params(object(), blob)
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(4, 3))  # another shape
    other = GraphModule(relay.build(relay.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.dense(x, w))), "llvm")["default"](tvm.cpu()))
    with pytest.raises(InputError, match=r"share_params 'w': \(3, 4\) float32 here, \(4, 3\)"):
        m.share_params(other, blob)
    with pytest.raises(RelayError):
        m.share_params(other, b"not a parameter blob")


def test_set_output_zero_copy_leaves_the_output_in_the_tensor():
    lib = _graph_lib()
    m = GraphModule(lib["default"](tvm.cpu()))
    xv = np.arange(6, dtype="float32").reshape(2, 3)
    wv = np.ones((3, 4), "float32")
    dest = tvm.runtime.empty((2,), "float32", tvm.cpu())
    m.module["set_output_zero_copy"](1, dest)
    m.set_input(x=xv, w=wv)
    m.run()
    np.testing.assert_allclose(dest.numpy(), (xv @ wv).sum(axis=1), rtol=1e-6)
    assert m.get_output(1) is dest
    m.set_input("x", -xv)
    m.run()
    np.testing.assert_allclose(dest.numpy(), (-xv @ wv).sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(m.get_output(0).numpy(), -xv @ wv, rtol=1e-6)


def test_set_output_zero_copy_errors():
    m = GraphModule(_graph_lib()["default"](tvm.cpu()))
    with pytest.raises(InputError, match="index 2 out of range; the module has 2 outputs"):
        m.set_output_zero_copy(2, tvm.runtime.empty((2,), "float32"))
    with pytest.raises(InputError, match="index 'out' out of range"):
        m.set_output_zero_copy("out", tvm.runtime.empty((2,), "float32"))
    with pytest.raises(InputError, match="expected a tvm Tensor"):
        m.set_output_zero_copy(1, np.zeros(2, "float32"))
    with pytest.raises(InputError, match=r"got \(3,\) float32, expected \(2,\) float32"):
        m.set_output_zero_copy(1, tvm.runtime.empty((3,), "float32"))
    with pytest.raises(InputError, match=r"got \(2,\) int32"):
        m.set_output_zero_copy(1, tvm.runtime.empty((2,), "int32"))


# ---- function_metadata ------------------------------------------------------------------------


def test_function_metadata_of_a_build():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    wv = np.ones((4, 3, 3, 3), "float32")
    y = relay.nn.softmax(relay.reshape(relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))),
                                       (1, -1)))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], y)), "llvm",
                      params={"w": wv})
    meta = lib.function_metadata
    tgt = lib.target
    assert set(meta) == set(lib.kernels) | {"__tvm_main__"}
    main = meta["__tvm_main__"]
    assert main.input_types == [((1, 3, 8, 8), "float32")]
    assert main.output_types == [((1, 256), "float32")]
    assert main.io_sizes[tgt] == (3 * 64 + 256) * 4
    assert main.constant_sizes[tgt] == sum(v.numpy().nbytes for v in lib.get_params().values())
    assert main.constant_sizes[tgt] >= wv.nbytes  # the bound weight, lifted (perhaps packed)
    assert main.workspace_sizes[tgt] == lib.memory["planned_bytes"] > 0
    assert main.tir_primfuncs == {}
    assert main.relay_primfuncs[tgt] is lib.optimized_mod["main"]
    for name, info in meta.items():
        if name == "__tvm_main__":
            continue
        k = lib.kernels[name]
        assert info.tir_primfuncs[tgt] is k.prim_func
        assert info.workspace_sizes == {}  # not computed (documented)
        n_bytes = sum(int(np.prod(s)) * np.dtype(d).itemsize
                      for s, d in info.input_types + info.output_types)
        assert info.io_sizes[tgt] == n_bytes
        assert info.constant_sizes[tgt] == sum(a.nbytes for a in k.lifted)
        assert isinstance(info.relay_primfuncs[tgt], relay.Function)
    # a kernel no schedule packs: its Relay function's types are the kernel's
    (softmax,) = [v for k, v in meta.items() if "softmax" in k]
    assert softmax.output_types == [((1, 256), "float32")]
    func = softmax.relay_primfuncs[tgt]
    assert [(tuple(int(d) for d in p.checked_type.shape), p.checked_type.dtype)
            for p in func.params] == softmax.input_types
    assert "FunctionInfo(inputs=[((1, 3, 8, 8), 'float32')]" in repr(main)


@pytest.mark.parametrize("exported", [False, True], ids=["in_process", "exported"])
def test_factory_functions_of_019(tmp_path, exported):
    """0.19's GraphExecutorFactory answered ``get_graph_json``, ``get_graph_params`` and
    ``debug_create`` besides the module's name; a fresh-user trial found the common debug
    idiom ``GraphModuleDebug(lib["debug_create"]("default", dev), [dev], graph_json, dump)``
    refused, and no way to get the graph back from a loaded library."""
    from relay_tvm.runtime.debugger.debug_executor import GraphModuleDebug
    from relay_tvm.runtime.graph_executor import load_module

    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(2, 3))
    wv = np.arange(6, dtype="float32").reshape(2, 3)
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], x * w)), "llvm",
                      params={"w": wv})
    graph = lib.get_graph_json()
    if exported:
        lib.export_library(str(tmp_path / "net.so"))
        lib = load_module(str(tmp_path / "net.so"))
    assert lib["get_graph_json"]() == graph
    (p,) = lib["get_graph_params"]().values()
    np.testing.assert_array_equal(p.numpy(), wv)
    dbg = GraphModuleDebug(lib["debug_create"]("default", tvm.cpu()), [tvm.cpu()], graph,
                           str(tmp_path / "dump"))
    xv = np.full((2, 3), 3, "float32")
    dbg.set_input("x", xv)
    dbg.run()
    np.testing.assert_array_equal(dbg.get_output(0).numpy(), xv * wv)
    with pytest.raises(InputError, match=r"no function 'get_graph_jsn' \(did you mean "
                                         r"'get_graph_json'\?\)"):
        lib["get_graph_jsn"]
    with pytest.raises(InputError, match="debug_create\\('net', ...\\): the library holds the "
                                         "module 'default'"):
        lib["debug_create"]("net", tvm.cpu())


def test_graph_module_python_values_and_misuse():
    """Found by a fresh-user trial: ``set_input`` refused a Python float or list where the VM
    and ``create_executor`` took them (0.19's copyfrom did too); ``get_output("name")`` was a
    raw TypeError; ``benchmark(func_name="runn")`` timed ``run`` silently, and another device
    gave TVM's internal error."""
    x, a = relay.var("x", shape=(3,)), relay.var("a", shape=(), dtype="float32")
    n = relay.var("n", shape=(2,), dtype="uint8")
    mod = relay.IRModule.from_expr(relay.Function(
        [x, a, n], relay.Tuple([x * a, n + relay.const(1, "uint8")])))
    m = GraphModule(relay.build(mod, target="llvm")["default"](tvm.cpu()))
    m.set_input("a", 2.5)
    m.set_input("x", [1, 2, 3])
    m.set_input("n", [7, 254])
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.array([2.5, 5, 7.5], "float32"))
    np.testing.assert_array_equal(m.get_output(1).numpy(), np.array([8, 255], "uint8"))
    with pytest.raises(InputError, match="'n'"):
        m.set_input("n", [1, 256])  # uint8 cannot hold 256: refused, not wrapped
    with pytest.raises(InputError, match=r"'x'.*got shape \(2,\), expected \(3,\)"):
        m.set_input("x", [1.0, 2.0])
    with pytest.raises(InputError, match="index must be an int.*got str 'out'"):
        m.get_output("out")
    with pytest.raises(InputError, match="func_name 'runn'"):
        m.benchmark(tvm.cpu(), func_name="runn")
    with pytest.raises(InputError, match="the module runs on cpu"):
        m.benchmark(tvm.cuda(0))

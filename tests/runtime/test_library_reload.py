"""A library re-exported to a path this process already loaded from is loaded anew: the
dynamic loader keeps one library per name, and the second of two models exported to one path
ran the first one's code (fresh-user trial: x * 4 gave x * 3)."""

import numpy as np
import tvm

import relay_tvm as relay
from relay_tvm.runtime import GraphModule, load_module


def _scale(k):
    x = relay.var("x", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x], x * relay.const(k)))


def test_graph_library_reexported_to_the_same_path(tmp_path):
    path = str(tmp_path / "m.so")
    for k in (3.0, 4.0, 4.0, 5.0):
        relay.build(_scale(k), "llvm").export_library(path)
        gm = GraphModule(load_module(path)["default"](tvm.cpu()))
        gm.set_input("x", np.ones(2, "float32"))
        gm.run()
        np.testing.assert_array_equal(gm.get_output(0).numpy(), [k, k])
    # loading an unchanged file again is the library already loaded: still the last model
    again = GraphModule(load_module(path)["default"](tvm.cpu()))
    again.set_input("x", np.ones(2, "float32"))
    again.run()
    np.testing.assert_array_equal(again.get_output(0).numpy(), [5.0, 5.0])


def test_vm_executable_reexported_to_the_same_path(tmp_path):
    path = str(tmp_path / "v.so")
    for k in (6.0, 7.0):
        relay.vm.compile(_scale(k), "llvm").export_library(path)
        vm = relay.vm.VirtualMachine(relay.vm.load_executable(path), tvm.cpu())
        np.testing.assert_array_equal(vm.run(np.ones(2, "float32")).numpy(), [k, k])


def test_tvm_runtime_load_module_and_load_exec(tmp_path):
    # tvm.runtime.load_module (0.19 deploy scripts) and Executable.save's kernel library went
    # through TVM's loader directly and ran the first model too (second fresh-user trial)
    path = str(tmp_path / "g.so")
    for k in (1.0, 10.0):
        relay.build(_scale(k), "llvm").export_library(path)
        gm = GraphModule(tvm.runtime.load_module(path)["default"](tvm.cpu()))
        gm.set_input("x", np.ones(2, "float32"))
        gm.run()
        np.testing.assert_array_equal(gm.get_output(0).numpy(), [k, k])
    kernels = str(tmp_path / "k.so")
    for k in (1.0, -1.0):
        x = relay.var("x", shape=(3,))
        f = relay.Function([x], relay.nn.relu(x * relay.const(k) - relay.const(2.0)))
        code, lib = relay.vm.compile(relay.IRModule.from_expr(f), "llvm").save()
        lib.export_library(kernels)
        exe = relay.vm.Executable.load_exec(code, tvm.runtime.load_module(kernels))
        v = np.array([1, 3, 5], "float32")
        np.testing.assert_array_equal(
            relay.vm.VirtualMachine(exe, tvm.cpu()).run(v).numpy(), np.maximum(v * k - 2, 0))


def test_virtual_machine_names_a_wrong_first_argument(tmp_path):
    """relay.vm.VirtualMachine takes an Executable: a path, relay.build's graph library or an
    IRModule raised a raw AttributeError ('str' object has no attribute 'meta'), and a graph
    library was accepted and failed only when run (fresh-user findings). The executable still
    runs, as NumPy computes."""
    import pytest

    from relay_tvm.errors import BuildError

    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x * relay.const(2.0)))
    exe = relay.vm.compile(mod, target="llvm")
    path = str(tmp_path / "vm.so")
    exe.export_library(path)
    with pytest.raises(BuildError, match=r"got a path .*load_executable"):
        relay.vm.VirtualMachine(path, tvm.cpu())
    lib = relay.build(mod, target="llvm")
    with pytest.raises(BuildError, match=r"graph library .*GraphModule"):
        relay.vm.VirtualMachine(lib, tvm.cpu())
    with pytest.raises(BuildError, match=r"expected an Executable .*got IRModule"):
        relay.vm.VirtualMachine(mod, tvm.cpu())
    out = relay.vm.VirtualMachine(relay.vm.load_executable(path), tvm.cpu()).run(
        np.array([1.5, -2.0], "float32"))
    np.testing.assert_array_equal(out.numpy(), np.array([3.0, -4.0], "float32"))


def test_a_loaded_library_exports_again_as_a_copy(tmp_path):
    """export_library of what load_module / load_executable returned: TVM cannot serialize a
    loaded library ("does not support SaveToBytes", found by a fresh-user trial), so the file
    it came from is copied; the copy runs the same model, linker options are refused, and a
    vanished source is a BuildError."""
    import pytest

    src, dst = str(tmp_path / "g.so"), str(tmp_path / "g2.so")
    relay.build(_scale(2.5), "llvm").export_library(src)
    load_module(src).export_library(dst)
    gm = GraphModule(load_module(dst)["default"](tvm.cpu()))
    gm.set_input("x", np.ones(2, "float32"))
    gm.run()
    np.testing.assert_array_equal(gm.get_output(0).numpy(), [2.5, 2.5])
    with pytest.raises(relay.InputError, match="copy of the file it was loaded from"):
        load_module(src).export_library(str(tmp_path / "g3.so"), cc="g++")
    vsrc, vdst = str(tmp_path / "v.so"), str(tmp_path / "v2.so")
    relay.vm.compile(_scale(-1.5), "llvm").export_library(vsrc)
    exe = relay.vm.load_executable(vsrc)
    exe.export_library(vdst)
    vm = relay.vm.VirtualMachine(relay.vm.load_executable(vdst), tvm.cpu())
    np.testing.assert_array_equal(vm.run(np.ones(2, "float32")).numpy(), [-1.5, -1.5])
    import os

    os.remove(vsrc)
    with pytest.raises(relay.BuildError, match="is gone"):
        exe.export_library(str(tmp_path / "v3.so"))


def test_export_after_a_run_prints_no_scope_log(tmp_path, capfd):
    """TVM logs "Scope Saving:" to stderr when it saves an executable whose VM has run (a
    fresh-user trial saw it from README's example); export_library drops that line."""
    lib = relay.build(_scale(3.0), "llvm")
    gm = GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", np.ones(2, "float32"))
    gm.run()
    lib.export_library(str(tmp_path / "a.so"))
    exe = relay.vm.compile(_scale(3.0), "llvm")
    relay.vm.VirtualMachine(exe, tvm.cpu()).run(np.ones(2, "float32"))
    exe.export_library(str(tmp_path / "b.so"))
    assert "Scope Saving" not in capfd.readouterr().err

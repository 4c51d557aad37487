"""Libraries compiled for CPU features this machine lacks are refused with a clear error at
load (or at module creation), not run into SIGILL; those it has load and run."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.backend.isa import check_isa, host_isa, missing_features, target_isa
from relay_tvm.backend.library_file import read_isa
from relay_tvm.backend.target import make_target
from relay_tvm.runtime import GraphModule

_ARCH, _FLAGS = host_isa()
HAS_AVX512 = _FLAGS is not None and "avx512f" in _FLAGS
X86 = _ARCH == "x86_64" and _FLAGS is not None


def _mod():
    x = relay.var("x", shape=(4, 16))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))


def _x():
    return np.linspace(-1, 1, 64, dtype="float32").reshape(4, 16)


def test_target_isa_records_mcpu_features():
    isa = target_isa(make_target("llvm -mcpu=skylake-avx512"))
    assert isa["arch"] == "x86_64"
    assert {"avx512f", "avx512bw", "avx2", "fma"} <= set(isa["features"])
    assert "fast-gather" not in isa["features"]  # tuning flags are not instructions
    haswell = target_isa(make_target("llvm -mcpu=haswell"))
    assert {"avx2", "fma"} <= set(haswell["features"]) and "avx512f" not in haswell["features"]
    arm = target_isa(make_target("llvm -mtriple=aarch64-linux-gnu"))
    assert arm["arch"] == "aarch64" and "neon" in arm["features"]
    assert target_isa(make_target("c")) is None


def test_missing_features_against_given_host():
    isa = {"arch": "x86_64", "features": ["avx2", "avx512f", "fma", "sse4.2"], "target": "t"}
    host = ("x86_64", {"avx2", "fma", "sse4_2"})
    assert missing_features(isa, host) == (False, ["avx512f"])
    assert missing_features(isa, ("aarch64", {"asimd"})) == (True, [])
    assert missing_features(isa, ("x86_64", None)) == (False, [])  # flags unknown
    with pytest.raises(relay.errors.BuildError, match=r"lacks: avx512f .*-mcpu=native"):
        check_isa(isa, "load_module", "'x.so'", host)
    with pytest.raises(relay.errors.BuildError, match="compiled for x86_64.*this machine is "
                                                      "aarch64"):
        check_isa(isa, "load_module", "'x.so'", ("aarch64", {"asimd"}))
    check_isa(isa, "load_module", "'x.so'", ("x86_64", {"avx2", "avx512f", "fma", "sse4_2"}))


@pytest.mark.skipif(not X86, reason="needs an x86_64 host with /proc/cpuinfo")
def test_avx512_graph_library(tmp_path):
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(_mod(), target="llvm -mcpu=skylake-avx512")
    path = str(tmp_path / "avx512.so")
    lib.export_library(path)
    import os

    assert "avx512f" in read_isa(path, os.path.getsize(path) - 28)["features"]
    if HAS_AVX512:  # this CPU runs it: loads and computes
        m = GraphModule(relay.runtime.load_module(path)["default"]())
        m.run(x=_x())
        np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(_x(), 0) * 2)
        return
    # the target in its command-line form (it was TVM's whole JSON; fresh-user trial)
    with pytest.raises(relay.errors.BuildError,
                       match=r"load_module: .*lacks: .*avx512f.* \(target llvm "
                             r"(-mtriple=\S+ )?-mcpu=skylake-avx512\); .*-mcpu=haswell"):
        relay.runtime.load_module(path)
    with pytest.raises(relay.errors.BuildError, match="lacks: .*avx512f"):
        lib["default"]()  # in-memory: refused at module creation too


@pytest.mark.skipif(not X86, reason="needs an x86_64 host with /proc/cpuinfo")
def test_avx512_archives(tmp_path):
    """A ``.tar`` of objects has no seal to hold the instruction set; its metadata does. One
    built for AVX-512 loaded on a CPU without it died of an illegal instruction at the first
    run (exit 132; fresh-user trial), graph module or VM executable alike."""
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(_mod(), target="llvm -mcpu=skylake-avx512")
    exe = relay.vm.compile(_mod(), target="llvm -mcpu=skylake-avx512")
    graph, vm = str(tmp_path / "avx512.tar"), str(tmp_path / "vm512.tar")
    lib.export_library(graph)
    exe.export_library(vm)
    if HAS_AVX512:  # this CPU runs them
        m = GraphModule(relay.runtime.load_module(graph)["default"]())
        m.run(x=_x())
        np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(_x(), 0) * 2)
        out = relay.vm.VirtualMachine(relay.vm.load_executable(vm)).invoke("main", _x())
        np.testing.assert_allclose(out.numpy(), np.maximum(_x(), 0) * 2)
        return
    with pytest.raises(relay.errors.BuildError, match=r"load_module: '.*avx512.tar' was "
                                                      r"compiled for CPU features this machine "
                                                      r"lacks: .*avx512f"):
        relay.runtime.load_module(graph)
    with pytest.raises(relay.errors.BuildError, match=r"load_executable: .*lacks: .*avx512f"):
        relay.vm.load_executable(vm)
    # one this CPU has: loads and runs
    with relay.transform.PassContext(opt_level=3):
        relay.build(_mod(), target="llvm").export_library(str(tmp_path / "host.tar"))
    m = GraphModule(relay.runtime.load_module(str(tmp_path / "host.tar"))["default"]())
    m.run(x=_x())
    np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(_x(), 0) * 2)


@pytest.mark.skipif(not X86, reason="needs an x86_64 host with /proc/cpuinfo")
def test_avx512_vm_executable(tmp_path):
    exe = relay.vm.compile(_mod(), target="llvm -mcpu=skylake-avx512")
    path = str(tmp_path / "vm512.so")
    exe.export_library(path)
    if HAS_AVX512:
        vm = relay.vm.VirtualMachine(relay.vm.load_executable(path))
        np.testing.assert_allclose(vm.invoke("main", _x()).numpy(), np.maximum(_x(), 0) * 2)
        return
    with pytest.raises(relay.errors.BuildError, match=r"load_executable: .*lacks: .*avx512f"):
        relay.vm.load_executable(path)
    with pytest.raises(relay.errors.BuildError, match="VirtualMachine: .*lacks: .*avx512f"):
        relay.vm.VirtualMachine(exe)


def test_host_library_records_and_runs(tmp_path):
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(_mod(), target="llvm")
    path = str(tmp_path / "host.so")
    lib.export_library(path)
    m = GraphModule(relay.runtime.load_module(path)["default"]())
    m.run(x=_x())
    np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(_x(), 0) * 2)


def test_mcpu_native_is_the_host_cpu():
    from relay_tvm.backend.target import host_cpu

    t = make_target("llvm -mcpu=native")
    assert str(t.attrs["mcpu"]) == host_cpu()[0]
    assert missing_features(target_isa(t)) == (False, [])


def test_tar_of_another_architecture_is_refused_with_the_reason(tmp_path):
    """An AArch64 ``.tar`` loaded on x86 gave a page of linker errors ("Relocations in generic
    ELF (EM: 183)"; fresh-user trial); it is now refused naming both architectures. The host's
    own ``.tar`` links and runs."""
    other = "x86_64-linux-gnu" if _ARCH == "aarch64" else "aarch64-linux-gnu"
    path = str(tmp_path / "other.tar")
    relay.build(_mod(), target=f"llvm -mtriple={other}").export_library(path)
    with pytest.raises(relay.errors.BuildError,
                       match=rf"other.tar' \(its .*\.o\) was compiled for {other.split('-')[0]}, "
                             rf"and this machine is {_ARCH}; run it on an"):
        relay.runtime.load_module(path)
    path = str(tmp_path / "host.tar")
    relay.build(_mod(), target="llvm").export_library(path)
    m = GraphModule(relay.runtime.load_module(path)["default"]())
    m.run(x=_x())
    np.testing.assert_allclose(m.get_output(0).numpy(), np.maximum(_x(), 0) * 2)

"""relay_tvm.runtime.deploy (the self-contained runner for exported libraries) on the host."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.runtime.deploy import DeployError, ExportedGraph


def test_scalar_input_stays_a_scalar(tmp_path):
    # np.ascontiguousarray turns a 0-d array into shape (1,); the runner passed that to the
    # library, which expects a scalar
    x = relay.var("x", shape=(3,))
    s = relay.var("s", shape=())
    mod = relay.IRModule.from_expr(relay.Function([x, s], relay.multiply(x, s)))
    path = str(tmp_path / "lib.so")
    relay.build(mod, target="llvm").export_library(path)
    g = ExportedGraph(path)
    out, _ = g.run({"x": np.array([1, 2, 3], "float32"), "s": np.array(2.5, "float32")})
    np.testing.assert_array_equal(out[0], np.array([2.5, 5.0, 7.5], "float32"))
    with pytest.raises(DeployError, match="'s': expected \\(\\) float32, got \\(1,\\)"):
        g.run({"x": np.array([1, 2, 3], "float32"), "s": np.array([2.5], "float32")})


def _run_deploy(*args):
    import os
    import subprocess
    import sys

    from relay_tvm.runtime import deploy

    return subprocess.run([sys.executable, deploy.__file__, *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TVM_USE_RUNTIME_LIB": "1"})


def test_a_vm_executable_is_a_one_line_error(tmp_path):
    """From a new-user trial: deploy.py on a VM executable dumped an AttributeError
    (no '__relay_meta')."""
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    path = tmp_path / "vm.so"
    relay.vm.compile(mod, target="llvm").export_library(str(path))
    np.savez(tmp_path / "in.npz", x=np.ones(3, "float32"))
    with pytest.raises(DeployError, match=r"is a relay_tvm VM executable .*"
                                          r"relay\.vm\.load_executable"):
        ExportedGraph(str(path))
    r = _run_deploy(path, tmp_path / "in.npz", tmp_path / "out.npz")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "is a relay_tvm VM executable" in r.stderr and "load_executable" in r.stderr
    assert not (tmp_path / "out.npz").exists()


def test_an_unknown_input_name_is_named(tmp_path):
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    path = tmp_path / "lib.so"
    relay.build(mod, target="llvm").export_library(str(path))
    g = ExportedGraph(str(path))
    with pytest.raises(DeployError, match=r"input 'x' was not given \(unknown inputs given: "
                                          r"\['y'\]\); inputs are \['x'\]"):
        g.run({"y": np.ones(3, "float32")})
    with pytest.raises(DeployError, match=r"unknown inputs \['y'\]; inputs are \['x'\]"):
        g.run({"x": np.ones(3, "float32"), "y": np.ones(3, "float32")})
    out, _ = g.run({"x": np.ones(3, "float32")})
    np.testing.assert_allclose(out[0], np.exp(np.ones(3, "float32")), rtol=1e-6)
    np.savez(tmp_path / "in.npz", y=np.ones(3, "float32"))
    r = _run_deploy(path, tmp_path / "in.npz", tmp_path / "out.npz")
    assert r.returncode == 2 and "'y'" in r.stderr and "'x'" in r.stderr


def test_a_misspelled_input_name_gets_the_closest_name(tmp_path):
    x = relay.var("image", shape=(3,))
    path = tmp_path / "lib.so"
    relay.build(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))),
                target="llvm").export_library(str(path))
    g = ExportedGraph(str(path))
    with pytest.raises(DeployError, match=r"unknown inputs \['imag'\] \(did you mean 'image'\?\); "
                                          r"inputs are \['image'\]"):
        g.run({"image": np.ones(3, "float32"), "imag": np.ones(3, "float32")})


def test_describe_writes_the_inputs_without_running(tmp_path):
    # what `relay-tvm run --qemu` checks the given inputs against
    import json

    x = relay.var("x", shape=(2, 3))
    k = relay.var("k", shape=(3,), dtype="int32")
    w = relay.var("w", shape=(3,))
    body = relay.add(relay.multiply(x, w), relay.cast(k, "float32"))
    mod = relay.IRModule.from_expr(relay.Function([x, k, w], body))
    path = tmp_path / "lib.so"
    w_value = np.array([0.5, -2.0, 3.0], "float32")
    relay.build(mod, target="llvm", params={"w": w_value}).export_library(str(path))
    proc = _run_deploy("--describe", path, tmp_path / "in.json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads((tmp_path / "in.json").read_text())
    assert info["input_names"] == ["x", "k"]
    types = info["input_types"]
    assert types["x"] == [[2, 3], "float32"] and types["k"] == [[3], "int32"]
    params = sorted(set(types) - {"x", "k"})  # the bound weight too, renamed by the build
    assert len(params) == 1 and types[params[0]] == [[3], "float32"], types


def test_an_index_out_of_range_is_a_one_line_error(tmp_path):
    """A compiled kernel's index check run by the self-contained runner (no relay_tvm in the
    process: it registers the kernels' failure callback itself) exits with status 2 naming
    the operator, the value and its position."""
    x = relay.var("x", shape=(5, 3))
    i = relay.var("i", shape=(4,), dtype="int64")
    mod = relay.IRModule.from_expr(relay.Function([x, i], relay.take(x, i, axis=0,
                                                                       mode="fast")))
    path = tmp_path / "lib.so"
    relay.build(mod, target="llvm").export_library(str(path))
    np.savez(tmp_path / "in.npz", x=np.ones((5, 3), "float32"), i=np.array([0, 1, 9, 2]))
    r = _run_deploy(path, tmp_path / "in.npz", tmp_path / "out.npz")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "take: an index is out of range" in r.stderr
    assert "got 9 at position (2,) of the indices, outside [-5, 5)" in r.stderr
    np.savez(tmp_path / "in.npz", x=np.ones((5, 3), "float32"), i=np.array([0, 1, -5, 2]))
    assert _run_deploy(path, tmp_path / "in.npz", tmp_path / "out.npz").returncode == 0

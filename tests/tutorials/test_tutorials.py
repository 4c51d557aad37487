"""Every script in tutorials/ runs, in a fresh process with small sizes, and prints what its
docstring promises: the values are checked here (errors against MXNet / NumPy, fused-group
counts, loss falling), not only the exit status."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "tutorials"


def run_tutorial(name, tmp_path, env=None, timeout=600):
    """Runs tutorials/<name> with ``RELAY_TVM_TUTORIAL_SMALL=1``; returns its stdout."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), full.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    full["RELAY_TVM_TUTORIAL_SMALL"] = "1"
    full["TMPDIR"] = str(tmp_path)  # the files a tutorial writes go away with the test
    full.update(env or {})
    proc = subprocess.run([sys.executable, str(TUTORIALS / name)], capture_output=True,
                          text=True, env=full, timeout=timeout, cwd=tmp_path)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def value(pattern, out):
    m = re.search(pattern, out)
    assert m, f"expected a line matching {pattern!r} in:\n{out}"
    return m.groups() if len(m.groups()) > 1 else m.group(1)


def test_every_tutorial_has_a_test():
    tested = {"deploy_mxnet.py", "relay_by_hand.py", "control_flow_vm.py", "train_mlp.py",
              "import_nnvm.py", "cross_compile_aarch64.py", "tune_model.py"}
    assert {p.name for p in TUTORIALS.glob("*.py")} == tested


@pytest.mark.mxnet
def test_deploy_mxnet(tmp_path):
    pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference of this tutorial")
    out = run_tutorial("deploy_mxnet.py", tmp_path)
    assert "fresh process: ran" in out
    mine, theirs = value(r"top class (\d+) \(MXNet: (\d+)\)", out)
    assert mine == theirs
    assert float(value(r"max \|relay_tvm - MXNet\| / max \|MXNet\| = (\S+)", out)) < 1e-4
    assert not list(tmp_path.glob("relay_tvm_*"))  # its working folder is removed at the end


def test_relay_by_hand(tmp_path):
    out = run_tutorial("relay_by_hand.py", tmp_path)
    sections = out.split("---- after ")
    folded = next(s for s in sections if s.startswith("FoldConstant")).split("\n", 1)[1]
    assert "add(1f, 1f)" not in folded and "multiply(%2, 2f)" in folded
    cse = next(s for s in sections if s.startswith("EliminateCommonSubexpr")).split("\n", 1)[1]
    assert cse.count("nn.relu(") == 1
    # the convolution absorbs bias_add, relu, multiply and both adds: one kernel
    assert value(r"fused groups: (\d+)", out) == "1"
    assert value(r"kernel \S+: (.*)", out) == \
        "nn.conv2d, nn.bias_add, nn.relu, multiply, add, add"
    # the kernel's real name, not None (an unset func_name attribute; from a new-user trial)
    assert value(r"kernel (\S+):", out) == "fused_nn_conv2d_nn_bias_add_nn_relu_multiply_add_add"
    assert float(value(r"max error vs NumPy: (\S+)", out)) < 1e-4
    picture = pathlib.Path(value(r"picture: (\S+)", out))
    assert picture.exists() and picture.suffix == (".svg" if shutil.which("dot") else ".dot")


def test_control_flow_vm(tmp_path):
    out = run_tutorial("control_flow_vm.py", tmp_path)
    assert "match (%xs)" in out and "@map(%2, %8)" in out
    assert value(r"list: length (\d+)", out) == "3"
    errs = [float(e) for e in re.findall(r"newton, \d+ iterations: max \|y - sqrt\(a\)\| = (\S+)",
                                         out)]
    assert len(errs) == 4 and errs == sorted(errs, reverse=True) and errs[-1] < 1e-5
    assert "relay.build on the loop: BuildError:" in out
    assert float(value(r"max error vs NumPy: (\S+)", out)) < 1e-5


def test_train_mlp(tmp_path):
    out = run_tutorial("train_mlp.py", tmp_path)
    assert "same gradients as first_order" in out
    assert float(value(r"largest relative difference (\S+)", out)) < 1e-6
    losses = [float(v) for v in re.findall(r"epoch \d+: mean loss (\S+)", out)]
    assert len(losses) == 3 and losses[-1] < 0.7 * losses[0]


def test_import_nnvm(tmp_path):
    out = run_tutorial("import_nnvm.py", tmp_path)
    assert "/* span=conv1 */" in out and "/* span=fc1 */" in out
    assert "/* span=prob */" in out  # the last line too (it had no comment; fresh-user trial)
    assert value(r"probabilities sum to (\S+);", out) == "1.000000"
    assert float(value(r"max error vs NumPy: (\S+)", out)) < 1e-5
    assert not list(tmp_path.glob("relay_tvm_*"))  # its working folder is removed at the end


def test_cross_compile_aarch64(tmp_path):
    out = run_tutorial("cross_compile_aarch64.py", tmp_path)
    assert '"mtriple":"aarch64-linux-gnu"' in out
    assert int(value(r"(\d+) NEON fmla instructions", out)) > 0
    if shutil.which("aarch64-linux-gnu-g++"):
        assert "ELF machine: AArch64 (183)" in out
        assert list(tmp_path.glob("relay_tvm_arm_*/mobilenet_aarch64.so"))
    else:
        assert "apt-get install g++-aarch64-linux-gnu" in out
    from relay_tvm.testing.aarch64 import unavailable_reason

    if unavailable_reason() is None:  # run under qemu, against the build for this machine
        assert float(value(r"AArch64 \(qemu\) vs this machine: max error (\S+)", out)) < 1e-4
    else:
        assert "not run under qemu: " in out


def test_cross_compile_aarch64_without_cross_compiler(tmp_path):
    # a PATH holding only this Python: the tutorial must say what to install, and not fail
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(sys.executable, bindir / "python")
    out = run_tutorial("cross_compile_aarch64.py", tmp_path, env={"PATH": str(bindir)})
    assert "aarch64-linux-gnu-g++ is not installed" in out
    assert "apt-get install g++-aarch64-linux-gnu" in out
    assert "not run under qemu: no AArch64 cross compiler" in out
    assert not list(tmp_path.glob("relay_tvm_arm_*/*.so"))


def test_tune_model(tmp_path):
    out = run_tutorial("tune_model.py", tmp_path)
    tasks = re.findall(r"^task (\S+) \(called \d+x\)(: not tuned)?$", out, flags=re.M)
    tuned_tasks = [name for name, skipped in tasks if not skipped]
    assert tuned_tasks, out
    assert value(r"resumed: (\d+) new measurements", out) == "0"
    # every tuned task's kernel runs its record: a tuned schedule, or the untuned one where
    # that measured fastest (fresh-user trial: "N kernels use a record" counted those as tuned)
    a, total, b, missing = value(r"(\d+) of (\d+) kernels use a tuned schedule \(measured "
                                 r"faster than their untuned one\); (\d+) keep the untuned "
                                 r"schedule \(no tuned record measured faster, or none "
                                 r"searched\); \d+ have no record: (\d+) that tuning measures",
                                 out)
    assert int(a) + int(b) == len(tuned_tasks) and int(total) == len(tasks)
    assert int(missing) == 0
    assert float(value(r"max error vs NumPy: (\S+)", out)) < 1e-3

"""Run AArch64 libraries built by relay_tvm on an x86 machine, under ``qemu-aarch64``.

``tools/setup_aarch64_qemu.sh`` prepares an arm64 Python 3.11 (Debian's packages unpacked in a
sysroot) with the aarch64 wheels of apache-tvm (runtime only), apache-tvm-ffi and numpy, in
``$RELAY_TVM_AARCH64_DIR`` or ``~/.cache/relay_tvm/aarch64``. This module runs an exported library
there with :mod:`relay_tvm.runtime.deploy` (TVM's runtime alone, the program a board runs) and
returns the outputs as NumPy arrays::

    lib = relay.build(mod, target=AARCH64_TARGET, params=params)
    lib.export_library("net.so")                       # links with aarch64-linux-gnu-g++
    (out,) = run_exported("net.so", {"data": x})       # runs under qemu-aarch64

Everything runs in a child process (``qemu-aarch64 -L SYSROOT python3.11 deploy.py ...``); the
x86 process never loads the ARM library.
"""

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

from ..errors import BuildError

AARCH64_TARGET = "llvm -mtriple=aarch64-linux-gnu"
CROSS_CXX = "aarch64-linux-gnu-g++"
SETUP_SCRIPT = "tools/setup_aarch64_qemu.sh"


def default_dir() -> str:
    """Where the setup script caches the arm64 environment."""
    return os.environ.get("RELAY_TVM_AARCH64_DIR",
                          os.path.join(os.path.expanduser("~"), ".cache", "relay_tvm", "aarch64"))


def unavailable_reason(root=None, need_cross_compiler=True):
    """``None`` when AArch64 libraries can be built and run here, else why not (a sentence that
    says what to install), for test skips."""
    root = root or default_dir()
    if need_cross_compiler and shutil.which(CROSS_CXX) is None:
        return (f"no AArch64 cross compiler {CROSS_CXX} to link the library "
                f"(apt-get install g++-aarch64-linux-gnu)")
    if shutil.which("qemu-aarch64") is None:
        return f"no qemu-aarch64 (apt-get install qemu-user, or run {SETUP_SCRIPT})"
    if not os.path.isfile(os.path.join(root, "READY")):
        return f"no arm64 Python with TVM's runtime in {root} (run {SETUP_SCRIPT})"
    return None


def _command(root):
    sysroot = os.path.join(root, "sysroot")
    return ["qemu-aarch64", "-L", sysroot, os.path.join(sysroot, "usr", "bin", "python3.11")]


def _environment(root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TVM_"))}
    env.update(PYTHONPATH=os.path.join(root, "site"), PYTHONNOUSERSITE="1",
               TVM_USE_RUNTIME_LIB="1")
    # qemu-user runs the guest's threads on host threads; keep TVM's pool at the host's cores
    # this process may use rather than what the emulated program would count.
    env.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0))))
    return env


def _deploy_script():
    from ..runtime import deploy

    return os.path.abspath(deploy.__file__)


def run_exported_many(jobs, root=None, timeout=600):
    """Run several exported AArch64 libraries in one arm64 Python process under qemu.

    Args:
        jobs: list of ``(library path, {input name: numpy array})``; the inputs are the user
            inputs of ``relay.build``'s function (bound parameters are inside the library), with
            exactly the graph's shapes and dtypes.
        root: the environment made by ``tools/setup_aarch64_qemu.sh`` (default
            :func:`default_dir`).
        timeout: seconds for the whole batch.

    Returns:
        For each job, the list of its outputs (numpy arrays, in ``get_output`` order).

    Raises:
        BuildError: the environment is missing, qemu or the loader failed (its message is
            included: a wrong input name, shape or dtype is named there), or the timeout passed.
    """
    root = root or default_dir()
    reason = unavailable_reason(root, need_cross_compiler=False)
    if reason:
        raise BuildError(f"cannot run AArch64 code here: {reason}")
    with tempfile.TemporaryDirectory(prefix="relay_tvm_aarch64_") as tmp:
        spec = []
        for i, (lib, inputs) in enumerate(jobs):
            if not os.path.isfile(lib):
                raise BuildError(f"run_exported: no such library {lib!r}")
            inp = os.path.join(tmp, f"in{i}.npz")
            np.savez(inp, **{k: np.asarray(v) for k, v in inputs.items()})
            spec.append([os.path.abspath(lib), inp, os.path.join(tmp, f"out{i}.npz")])
        jobs_file = os.path.join(tmp, "jobs.json")
        with open(jobs_file, "w") as f:
            json.dump(spec, f)
        cmd = _command(root) + [_deploy_script(), "--batch", jobs_file]
        try:
            proc = subprocess.run(cmd, env=_environment(root), capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise BuildError(f"run_exported: qemu-aarch64 did not finish {len(spec)} libraries "
                             f"in {timeout} s") from e
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout)[-3000:]
            raise BuildError(f"run_exported: the arm64 loader failed (exit {proc.returncode}) "
                             f"under qemu-aarch64:\n{tail}")
        results = []
        for _, _, out in spec:
            with np.load(out) as f:
                results.append([f[f"out{i}"] for i in range(len(f.files))])
        return results


def run_exported(lib_path, inputs, root=None, timeout=600):
    """Run one exported AArch64 library under qemu; see :func:`run_exported_many`.

    Returns:
        list of numpy arrays, the outputs in ``get_output`` order.
    """
    return run_exported_many([(lib_path, inputs)], root=root, timeout=timeout)[0]


def build_and_export(mod, path, params=None, opt_level=3):
    """``relay.build`` ``mod`` for AArch64 Linux at ``opt_level`` and ``export_library`` it to
    ``path`` (linked by ``aarch64-linux-gnu-g++``). Returns ``path``.

    Raises:
        BuildError: no cross compiler here, or the build or the link failed.
    """
    from .. import build
    from ..transform import PassContext

    if shutil.which(CROSS_CXX) is None:
        raise BuildError(f"build_and_export: {CROSS_CXX} is not installed "
                         f"(apt-get install g++-aarch64-linux-gnu)")
    with PassContext(opt_level=opt_level):
        lib = build(mod, target=AARCH64_TARGET, params=params)
    lib.export_library(str(path))
    return str(path)

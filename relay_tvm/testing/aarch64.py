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


def _run_deploy(root, argv, timeout, who, what):
    """``relay_tvm/runtime/deploy.py ARGV`` in the arm64 Python under qemu.

    Raises:
        BuildError: it did not finish in ``timeout`` seconds, or failed (its message included).
    """
    cmd = _command(root) + [_deploy_script()] + list(argv)
    try:
        proc = subprocess.run(cmd, env=_environment(root), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise BuildError(f"{who}: qemu-aarch64 did not finish {what} in {timeout} s") from e
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-3000:]
        raise BuildError(f"{who}: the arm64 loader failed (exit {proc.returncode}) "
                         f"under qemu-aarch64:\n{tail}")


def describe_exported(lib_path, root=None, timeout=600):
    """The inputs of an exported AArch64 graph library, read by loading it under qemu (without
    running it): ``{"input_names": [user inputs in order], "input_types": {name: [shape list,
    dtype str]}}``, every graph input in ``input_types`` (bound parameters too).

    Raises:
        BuildError: the environment is missing, the file is not a relay_tvm graph library (a VM
            executable, say: the loader's one-line reason is included), or the timeout passed.
    """
    root = root or default_dir()
    reason = unavailable_reason(root, need_cross_compiler=False)
    if reason:
        raise BuildError(f"cannot run AArch64 code here: {reason}")
    if not os.path.isfile(lib_path):
        raise BuildError(f"describe_exported: no such library {lib_path!r}")
    with tempfile.TemporaryDirectory(prefix="relay_tvm_aarch64_") as tmp:
        out = os.path.join(tmp, "inputs.json")
        _run_deploy(root, ["--describe", os.path.abspath(lib_path), out], timeout,
                    "describe_exported", "loading the library")
        with open(out) as f:
            return json.load(f)


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
        _run_deploy(root, ["--batch", jobs_file], timeout, "run_exported",
                    f"{len(spec)} libraries")
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


class QemuRPCServer:
    """TVM's RPC server (``python -m tvm.exec.rpc_server``, what a board runs) in the arm64
    Python under qemu, on ``host``; a context manager. The x86 side connects with
    :meth:`connect` (``tvm.rpc.connect``), uploads an exported library and runs it, as with a
    board::

        with QemuRPCServer() as server:
            remote = server.connect()
            remote.upload("net.so")
            m = GraphModule._from_executable(remote.load_module("net.so"), remote.cpu(0))

    The server forks a session process per connection and starts its worker with
    ``sys.executable``; an arm64 binary cannot be exec'd without binfmt_misc, so
    ``sys.executable`` is pointed at a small x86 shell script that runs it under qemu.

    Raises:
        BuildError: the environment is missing, or the server did not come up in
            ``start_timeout`` seconds (its log is included).
    """

    def __init__(self, root=None, host="127.0.0.1", port=9190, port_end=9290,
                 start_timeout=300):
        self.root = root or default_dir()
        self.host, self.port, self.port_end = host, port, port_end
        self.start_timeout = start_timeout
        self._proc = None
        self._tmp = None

    def start(self):
        import re
        import time

        reason = unavailable_reason(self.root, need_cross_compiler=False)
        if reason:
            raise BuildError(f"cannot start an AArch64 RPC server here: {reason}")
        self._tmp = tempfile.TemporaryDirectory(prefix="relay_tvm_aarch64_rpc_")
        env = _environment(self.root)
        wrapper = os.path.join(self._tmp.name, "python3.11")
        with open(wrapper, "w") as f:
            exports = " ".join(f"{k}={_shell_quote(env[k])}" for k in
                               ("PYTHONPATH", "PYTHONNOUSERSITE", "TVM_USE_RUNTIME_LIB"))
            f.write("#!/bin/sh\nexport " + exports + "\nexec " +
                    " ".join(_shell_quote(c) for c in _command(self.root)) + ' "$@"\n')
        os.chmod(wrapper, 0o755)
        code = ("import runpy, sys; sys.executable = sys.argv[1]; "
                "sys.argv = ['rpc_server'] + sys.argv[2:]; "
                "runpy.run_module('tvm.exec.rpc_server', run_name='__main__')")
        self._log = os.path.join(self._tmp.name, "server.log")
        cmd = _command(self.root) + ["-c", code, wrapper, "--host", self.host,
                                     "--port", str(self.port), "--port-end", str(self.port_end)]
        with open(self._log, "w") as log:
            self._proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            text = self.log()
            m = re.search(r"bind to [\d.]+:(\d+)", text)
            if m:
                self.port = int(m.group(1))
                return self
            if self._proc.poll() is not None:
                break
            time.sleep(1)
        tail = self.log()[-3000:]
        self.close()
        raise BuildError(f"the AArch64 RPC server under qemu did not start in "
                         f"{self.start_timeout} s:\n{tail}")

    def log(self) -> str:
        """What the server printed so far."""
        with open(self._log) as f:
            return f.read()

    def connect(self, session_timeout=600):
        """``tvm.rpc.connect`` to the server: an RPC session whose ``cpu(0)`` is the emulated
        AArch64 CPU."""
        from tvm import rpc

        return rpc.connect(self.host, self.port, session_timeout=session_timeout)

    def close(self):
        import signal

        if self._proc is not None and self._proc.poll() is None:
            # The server, its worker and session processes share the session we started.
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


def _shell_quote(s):
    import shlex

    return shlex.quote(str(s))


def run_over_rpc(remote, lib_path, inputs):
    """Upload an exported relay_tvm library to an RPC session (a board, or
    :class:`QemuRPCServer`), run it on the remote CPU and return the outputs as numpy arrays.

    Args:
        remote: a ``tvm.rpc`` session (``tvm.rpc.connect(host, port)``).
        lib_path: the file written by ``export_library`` for the remote's target.
        inputs: ``{name: numpy array}``, the user inputs, with the graph's shapes and dtypes.

    Raises:
        InputError: an input is missing, unknown, or has the wrong shape or dtype.
    """
    import json
    import uuid

    import tvm
    from tvm.runtime.vm import VirtualMachine

    from ..errors import InputError

    # A fresh name each time: overwriting a library the server has loaded would crash it.
    name = f"{uuid.uuid4().hex[:12]}_{os.path.basename(lib_path)}"
    remote.upload(lib_path, target=name)
    dev = remote.cpu(0)
    vm = VirtualMachine(remote.load_module(name), dev)
    meta = json.loads(vm["__relay_meta"]())
    graph = json.loads(meta["graph_json"])
    shapes, dtypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    row = graph["node_row_ptr"]
    # The bound parameters stay on the remote: the array is indexed there, not copied.
    remote_params = vm["__relay_params"]()
    get_item = remote.get_function("ffi.ArrayGetItem")
    params = {n: get_item(remote_params, i) for i, n in enumerate(meta["param_names"])}
    args = []
    for nid in graph["arg_nodes"]:
        n = graph["nodes"][nid]["name"]
        if n in params and n not in inputs:
            args.append(params[n])
            continue
        if n not in inputs:
            raise InputError(f"run_over_rpc: input {n!r} was not given; inputs are "
                             f"{meta['input_names']}")
        v = np.asarray(inputs[n])
        want = (tuple(shapes[row[nid]]), dtypes[row[nid]])
        if (tuple(v.shape), str(v.dtype)) != want:
            raise InputError(f"run_over_rpc: input {n!r}: expected {want[0]} {want[1]}, got "
                             f"{tuple(v.shape)} {v.dtype}")
        args.append(tvm.runtime.tensor(np.require(v, requirements="C"), dev))
    outs = vm["main"](*args)
    size = remote.get_function("ffi.ArraySize")
    if isinstance(outs, tvm.runtime.Tensor):
        return [outs.numpy()]
    return [get_item(outs, i).numpy() for i in range(size(outs))]

"""Measurement for tuning: an in-process builder, the local runner and TVM RPC.

meta_schedule's ``LocalBuilder`` builds each candidate in a worker process that first imports
``tvm.s_tir.tensor_intrin`` (every family of tensor intrinsics: CUDA's alone take about a minute
to register on a loaded 2-core machine), which is more than its 30 s build timeout, so every build
failed. :class:`InProcessBuilder` compiles in the tuning process instead (``tvm.compile`` of one
kernel takes well under a second), and :func:`load_tensor_intrinsics` registers only the
intrinsic families the target can use (x86, ARM, ...), which ``TuneContext`` otherwise imports
all at once.

The runner is meta_schedule's ``LocalRunner`` (one warm worker process, timeout scaled to the
evaluator settings) or ``RPCRunner`` (sessions from a ``tvm.rpc`` tracker). Before an RPC run
:func:`check_rpc` asks the tracker whether a server with the key is there, so a tracker that is
down or a key nobody serves is an error instead of a wait that never ends.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import types
from dataclasses import dataclass

from ..errors import TuningError

_INTRIN_PKG = "tvm.s_tir.tensor_intrin"


def load_tensor_intrinsics(target) -> None:
    """Register the tensor intrinsics ``target``'s schedule rules may use, and no others.

    ``tvm.s_tir.tensor_intrin``'s ``__init__`` imports every family (CUDA, ROCm, Hexagon, ARM,
    x86, RISC-V); ``TuneContext`` imports the package. This puts a package object without that
    ``__init__`` in ``sys.modules`` (submodules still import normally, e.g.
    ``import tvm.s_tir.tensor_intrin.cuda``) and imports the families of ``target``: ``x86``
    for x86 LLVM targets, ``arm_cpu`` for ARM, ``cuda`` for CUDA. Does nothing when the package
    was imported already.
    """
    if _INTRIN_PKG not in sys.modules:
        import tvm.s_tir  # noqa: F401

        spec = importlib.util.find_spec(_INTRIN_PKG)
        pkg = types.ModuleType(_INTRIN_PKG, "tensor intrinsics (families loaded on demand)")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__spec__ = spec
        pkg.__package__ = _INTRIN_PKG
        sys.modules[_INTRIN_PKG] = pkg
    elif hasattr(sys.modules[_INTRIN_PKG], "hexagon"):
        return  # the whole package is there
    kind = target.kind.name
    triple = str(target.attrs.get("mtriple", "")) if kind == "llvm" else ""
    if kind in ("cuda", "nvptx"):
        families = ["cuda"]
    elif kind == "rocm":
        families = ["rocm"]
    elif triple.startswith(("aarch64", "arm")):
        families = ["arm_cpu"]
    elif triple.startswith("riscv"):
        families = ["riscv_cpu"]
    else:
        families = ["x86"]
    for fam in families:
        importlib.import_module(f"{_INTRIN_PKG}.{fam}")


def _builder_base():
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder

    @derived_object
    class InProcessBuilder(PyBuilder):
        """Builds each candidate with ``tvm.compile`` in this process and exports it as a tar
        archive (what the local and RPC runners load). A failed build is that candidate's error
        (its message kept), not the run's. Candidates get the TIR pipeline that ``relay.build``
        gives kernels (:mod:`relay_tvm.backend.dynamic_parallel`), so they are timed as they
        will run."""

        def build(self, build_inputs):
            import tvm
            from tvm.support.tar import tar

            from ..backend import dynamic_parallel

            results = []
            for bi in build_inputs:
                try:
                    lib = tvm.compile(bi.mod, target=bi.target,
                                      tir_pipeline=dynamic_parallel.pipeline(bi.target))
                    path = os.path.join(tempfile.mkdtemp(prefix="relay_tvm_tune_"),
                                        "kernel." + tar.output_format)
                    lib.export_library(path, fcompile=tar)
                    results.append(BuilderResult(path, None))
                except Exception as e:  # the candidate is bad, not the tuning run
                    results.append(BuilderResult(None, f"{type(e).__name__}: {e}"))
            return results

    return InProcessBuilder


_BUILDER_CLS = None


def in_process_builder():
    """A meta_schedule ``Builder`` that compiles candidates in this process (no worker, no
    timeout to exceed)."""
    global _BUILDER_CLS
    if _BUILDER_CLS is None:
        _BUILDER_CLS = _builder_base()
    return _BUILDER_CLS()


@dataclass
class RPCSettings:
    """Where candidates are measured over TVM RPC.

    Attributes:
        tracker_host: the tracker's address (``python -m tvm.exec.rpc_tracker``).
        tracker_port: its port.
        key: the device key the servers registered with (``rpc_server --key KEY``).
        session_timeout_s: seconds one measurement session may take.
    """

    tracker_host: str
    tracker_port: int
    key: str
    session_timeout_s: float = 60.0

    @staticmethod
    def parse(tracker: str, key: str) -> RPCSettings:
        """``RPCSettings`` from ``"host:port"`` and a key.

        Raises:
            TuningError: ``tracker`` is not ``host:port`` or the key is empty.
        """
        host, sep, port = str(tracker).rpartition(":")
        if not sep or not host or not port.isdigit():
            raise TuningError(f"RPC tracker {tracker!r}: expected HOST:PORT such as "
                              f"127.0.0.1:9190")
        if not key:
            raise TuningError("RPC: a device key is needed (the --key its servers registered)")
        return RPCSettings(host, int(port), key)


def check_rpc(rpc: RPCSettings, timeout_s: float = 10.0) -> int:
    """Ask the tracker how many servers serve ``rpc.key``.

    Returns:
        the number of servers registered under the key (free or busy).

    Raises:
        TuningError: the tracker does not answer within ``timeout_s`` seconds, or no server
            serves the key (the message lists the keys that are served).
    """
    import socket
    import threading

    from tvm import rpc as tvm_rpc

    box: dict = {}

    def ask():
        try:
            box["summary"] = tvm_rpc.connect_tracker(rpc.tracker_host, rpc.tracker_port).summary()
        except Exception as e:  # reported below
            box["error"] = e

    # connect_tracker retries for a long time when nothing listens: probe the port first.
    try:
        with socket.create_connection((rpc.tracker_host, rpc.tracker_port), timeout=timeout_s):
            pass
    except OSError as e:
        raise TuningError(f"RPC tracker {rpc.tracker_host}:{rpc.tracker_port} is not reachable "
                          f"({e}); start it with python -m tvm.exec.rpc_tracker --host "
                          f"{rpc.tracker_host} --port {rpc.tracker_port}") from None
    t = threading.Thread(target=ask, daemon=True)
    t.start()
    t.join(timeout_s)
    if "summary" not in box:
        why = box.get("error", f"no answer within {timeout_s:g} s")
        raise TuningError(f"RPC tracker {rpc.tracker_host}:{rpc.tracker_port} did not answer: "
                          f"{why}")
    queue = box["summary"].get("queue_info", {})
    info = queue.get(rpc.key)
    free = int(info.get("free", 0)) if info else 0
    servers = [s for s in box["summary"].get("server_info", [])
               if str(s.get("key", "")).split(":")[-1] == rpc.key]
    count = max(free, len(servers))
    if count == 0:
        served = sorted(k for k in queue if queue[k].get("free", 0))
        raise TuningError(f"RPC tracker {rpc.tracker_host}:{rpc.tracker_port}: no server serves "
                          f"key {rpc.key!r} (keys served: {served or 'none'}); start one with "
                          f"python -m tvm.exec.rpc_server --tracker {rpc.tracker_host}:"
                          f"{rpc.tracker_port} --key {rpc.key}")
    return count


def evaluator_config(number: int = 3, repeat: int = 1, min_repeat_ms: int = 40):
    """meta_schedule's ``EvaluatorConfig`` (each measurement: ``repeat`` times the mean of
    ``number`` runs, at least ``min_repeat_ms`` ms each)."""
    from tvm.s_tir.meta_schedule.runner import EvaluatorConfig

    return EvaluatorConfig(number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                           enable_cpu_cache_flush=False)


def make_runner(runner, evaluator=None, timeout_s: float | None = None):
    """The meta_schedule ``Runner`` for ``runner``.

    Args:
        runner: ``"local"``, an :class:`RPCSettings`, or a meta_schedule ``Runner`` (returned
            as is).
        evaluator: an ``EvaluatorConfig`` (default :func:`evaluator_config`).
        timeout_s: seconds one candidate may run; by default 30 s plus four times the
            evaluator's minimum measuring time, so a slow candidate on a loaded machine is
            measured rather than killed.

    Raises:
        TuningError: an RPC tracker that is down, a key nobody serves, or an unknown runner.
    """
    from tvm.s_tir.meta_schedule.runner import LocalRunner, RPCConfig, RPCRunner, Runner

    if isinstance(runner, Runner):
        return runner
    evaluator = evaluator or evaluator_config()
    if timeout_s is None:
        timeout_s = 30.0 + 4 * evaluator.repeat * max(evaluator.min_repeat_ms, 100) / 1e3
    if runner == "local":
        return LocalRunner(timeout_sec=timeout_s, evaluator_config=evaluator)
    if isinstance(runner, RPCSettings):
        check_rpc(runner)
        cfg = RPCConfig(tracker_host=runner.tracker_host, tracker_port=runner.tracker_port,
                        tracker_key=runner.key,
                        session_timeout_sec=int(max(runner.session_timeout_s, timeout_s)))
        return RPCRunner(rpc_config=cfg, evaluator_config=evaluator, max_workers=1)
    raise TuningError(f"runner {runner!r}: expected 'local', an RPCSettings (tracker, key) or "
                      f"a meta_schedule Runner")


def remove_artifact(path) -> None:
    """Delete a built candidate's temporary directory."""
    if path:
        shutil.rmtree(os.path.dirname(str(path)), ignore_errors=True)


__all__ = ["load_tensor_intrinsics", "in_process_builder", "RPCSettings", "check_rpc",
           "evaluator_config", "make_runner", "remove_artifact"]

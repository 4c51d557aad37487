"""How many threads compiled modules run on: every core this process may use.

TVM's runtime sizes its thread pool once, when the first parallel kernel runs, from
``TVM_NUM_THREADS`` (then ``OMP_NUM_THREADS``), else ``hardware_concurrency() / 2`` on x86 — it
assumes two hardware threads per core. On a machine without SMT (most cloud VMs: 2 vCPUs that
are 2 cores) that leaves half the cores idle, and ``runtime.config_threadpool`` cannot raise the
count later. So ``import relay_tvm`` sets ``TVM_NUM_THREADS`` to :func:`usable_cores` when the
user set neither variable; a user's setting always wins over this one (TVM's runtime itself
caps it at the machine's hardware threads: ``TVM_NUM_THREADS=3`` runs 2 threads on a 2-core
machine, and ``GraphModule.num_threads`` says 2).

It also sets ``TVM_BIND_THREADS=0`` unless the user set it: TVM pins each worker thread to a
core of its own, so when another process keeps that core busy the worker can run only in the
time slices the scheduler gives it there, while the other core waits for it at the end of every
parallel kernel (the main thread waits by yielding, so its core never looks idle and the
scheduler never moves the worker over). ResNet-18 on a 2-core Zen 4 VM with one busy process
kept on the worker's core: a median of 218-232 ms a run pinned, 30-32 ms unpinned in four of
five processes (84 ms in the fifth); 10-12 ms alone, both ways.

:func:`usable_cores` is what the process may run on: the CPU affinity mask
(``os.sched_getaffinity``), capped by a cgroup CPU quota where one is set (containers limited with
``--cpus``), rounded up.
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings

_ENV = ("TVM_NUM_THREADS", "OMP_NUM_THREADS")


def _cgroup_quota() -> float | None:
    """CPUs allowed by the cgroup (v2 ``cpu.max`` or v1 ``cfs_quota/period``), or None."""
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", encoding="ascii") as f:
            quota = int(f.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us", encoding="ascii") as f:
            period = int(f.read())
        if quota > 0 and period > 0:
            return quota / period
    except (OSError, ValueError):
        pass
    return None


def usable_cores() -> int:
    """The number of CPUs this process may run on (affinity mask ∩ cgroup quota), at least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        n = min(n, max(1, math.ceil(quota)))
    return max(1, n)


def set_default_threads() -> None:
    """Give TVM's thread pool :func:`usable_cores` threads unless ``TVM_NUM_THREADS`` or
    ``OMP_NUM_THREADS`` is set. Effective only before the pool exists (the first parallel
    kernel run in this process). Also leaves TVM's worker threads unpinned
    (``TVM_BIND_THREADS=0``) unless that variable is set (see the module's docstring)."""
    if not os.environ.get("TVM_BIND_THREADS", "").strip():
        os.environ["TVM_BIND_THREADS"] = "0"
    if not any(os.environ.get(k) for k in _ENV):
        os.environ["TVM_NUM_THREADS"] = str(usable_cores())
        return
    for key in _ENV:
        v = os.environ.get(key, "").strip()
        if not v:
            continue
        if not v.isdigit() or int(v) < 1:
            # TVM's runtime reads such a value as 0 or garbage and runs on one thread
            warnings.warn(f"{key}={v!r} is not a positive whole number: TVM's runtime will run "
                          f"on 1 thread (unset it to use the {usable_cores()} usable cores)",
                          stacklevel=3)
        elif int(v) > usable_cores():
            warnings.warn(f"{key}={v} is more than the {usable_cores()} usable cores: TVM's "
                          f"runtime caps it at the machine's hardware threads, and threads beyond "
                          f"the cores share them", stacklevel=3)
        break


def module_threads() -> int:
    """The threads a module built now will run on by default: ``TVM_NUM_THREADS`` (then
    ``OMP_NUM_THREADS``), which ``import relay_tvm`` sets to the usable cores when neither is
    set, else :func:`usable_cores` (what the Winograd cost model weighs weight streaming by)."""
    for key in _ENV:
        v = os.environ.get(key, "").strip()
        if v.isdigit() and int(v) > 0:
            return int(v)
    return usable_cores()


@contextlib.contextmanager
def keep_affinity():
    """Restore the calling thread's CPU affinity on exit.

    TVM's runtime pins the thread that creates its thread pool (the first
    ``runtime.NumThreads`` / parallel launch / timing in the process): with one worker
    (``TVM_NUM_THREADS=1`` or ``OMP_NUM_THREADS=1``) it is left bound to CPU 0 alone, and so is
    everything the caller runs afterwards (NumPy, MXNet, other modules). The caller's mask
    is put back; TVM's worker threads keep theirs.
    """
    try:
        saved = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # no affinity API (macOS, Windows)
        yield
        return
    try:
        yield
    finally:
        try:
            if os.sched_getaffinity(0) != saved:
                os.sched_setaffinity(0, saved)
        except OSError:
            pass


def num_threads() -> int:
    """The number of threads TVM's runtime runs a parallel kernel on in this process."""
    import tvm_ffi

    with keep_affinity():
        return int(tvm_ffi.get_global_func("runtime.NumThreads")())


__all__ = ["usable_cores", "set_default_threads", "module_threads", "num_threads",
           "keep_affinity"]

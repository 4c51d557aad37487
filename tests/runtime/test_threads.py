"""A compiled module runs on every usable core by default (TVM alone takes half of them on x86),
and a user's TVM_NUM_THREADS / OMP_NUM_THREADS wins. Each case runs in a fresh interpreter:
TVM sizes its thread pool once per process."""

import os
import subprocess
import sys

import pytest

# a fresh interpreter builds relu of a (SIZE, SIZE) tensor and runs it once (512: a parallel
# kernel, whose first run starts TVM's thread pool); each probe then prints what it checks
_RUN_RELU = r"""
import json, os, numpy as np, tvm, relay_tvm as relay
x = relay.var("x", shape=(SIZE, SIZE))
lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x))), target="llvm")
gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
gm.set_input("x", np.ones((SIZE, SIZE), "float32"))
gm.run()
"""

_PROBE = _RUN_RELU.replace("SIZE", "64") + r"""
from relay_tvm._threads import usable_cores
print(gm.num_threads, usable_cores(), len(os.sched_getaffinity(0)))
"""


def _probe(**env_over):
    env = {k: v for k, v in os.environ.items() if k not in ("TVM_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(env_over)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                         timeout=300, check=True).stdout.split()
    return [int(v) for v in out[-3:]]


def test_default_is_every_usable_core():
    threads, usable, affinity = _probe()
    assert usable >= 1 and usable <= affinity
    assert threads == usable


def test_user_setting_wins():
    threads, _, _ = _probe(TVM_NUM_THREADS="1")
    assert threads == 1
    threads, _, _ = _probe(OMP_NUM_THREADS="1")
    assert threads == 1


@pytest.mark.parametrize("value, says", [
    ("abc", "TVM_NUM_THREADS='abc' is not a positive whole number"),
    ("0", "TVM_NUM_THREADS='0' is not a positive whole number"),
    ("4096", "TVM_NUM_THREADS=4096 is more than the"),
])
def test_a_thread_setting_tvm_cannot_honour_is_named(value, says):
    env = {k: v for k, v in os.environ.items() if k not in ("TVM_NUM_THREADS", "OMP_NUM_THREADS")}
    env["TVM_NUM_THREADS"] = value
    r = subprocess.run([sys.executable, "-W", "always", "-c", "import relay_tvm"], env=env,
                       capture_output=True, text=True, timeout=300, check=True)
    assert says in r.stderr
    env["TVM_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-W", "always", "-c", "import relay_tvm"], env=env,
                       capture_output=True, text=True, timeout=300, check=True)
    assert "TVM_NUM_THREADS" not in r.stderr


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable CPUs")
def test_affinity_mask_limits_the_count():
    # a process pinned to one CPU gets one thread, whatever the machine has
    code = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " \
           "exec(compile(open(0).read(), 'probe', 'exec'))"
    env = {k: v for k, v in os.environ.items() if k not in ("TVM_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], input=_PROBE, env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout.split()
    threads, usable, affinity = (int(v) for v in out[-3:])
    assert affinity == 1 and usable == 1 and threads == 1


def test_cgroup_quota_caps_the_count(monkeypatch):
    from relay_tvm import _threads

    monkeypatch.setattr(_threads, "_cgroup_quota", lambda: 0.5)
    assert _threads.usable_cores() == 1
    monkeypatch.setattr(_threads, "_cgroup_quota", lambda: None)
    assert _threads.usable_cores() == len(os.sched_getaffinity(0))


_AFFINITY_PROBE = r"""
import json, os, sys, numpy as np, tvm, relay_tvm as relay
x = relay.var("x", shape=(64, 64))
mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.nn.relu(x))))
lib = relay.build(mod, target="llvm")
gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
gm.set_input("x", np.ones((64, 64), "float32"))
vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="llvm"), tvm.cpu(0))
steps = {"run": lambda: gm.run(), "benchmark": lambda: gm.benchmark(repeat=2, number=2),
         "num_threads": lambda: gm.num_threads, "profile": lambda: gm.profile(1, 1),
         "vm_benchmark": lambda: vm.benchmark(tvm.cpu(0), np.ones((64, 64), "float32"),
                                              repeat=2, number=2)}
seen = {"start": sorted(os.sched_getaffinity(0))}
for name in sys.argv[1:]:
    steps[name]()
    seen[name] = sorted(os.sched_getaffinity(0))
print(json.dumps(seen))
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable CPUs to see a pin")
@pytest.mark.parametrize("env", ["TVM_NUM_THREADS", "OMP_NUM_THREADS"])
@pytest.mark.parametrize("order", [("run", "benchmark", "num_threads", "profile"),
                                   ("vm_benchmark", "num_threads"),
                                   ("num_threads", "benchmark")])
def test_one_thread_leaves_the_callers_affinity_alone(env, order):
    """With one pool thread, TVM pins the thread that creates its pool to CPU 0 (from a
    new-user trial: after benchmark() the whole process ran on one core of two). Timing,
    profiling and asking the thread count restore the caller's mask."""
    import json

    clean = {k: v for k, v in os.environ.items() if k not in ("TVM_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", _AFFINITY_PROBE, *order],
                         env={**clean, env: "1"}, capture_output=True, text=True, timeout=300,
                         check=True).stdout.splitlines()[-1]
    seen = json.loads(out)
    assert len(seen["start"]) >= 2
    assert seen == {k: seen["start"] for k in ("start", *order)}


_PIN_PROBE = _RUN_RELU.replace("SIZE", "512") + r"""
masks = []
for tid in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{tid}/status") as f:
        for line in f:
            if line.startswith("Cpus_allowed_list"):
                masks.append(line.split(":")[1].strip())
print(json.dumps({"threads": gm.num_threads, "masks": masks,
                  "process": sorted(os.sched_getaffinity(0))}))
"""


def _mask_cpus(text):
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable CPUs to see a pin")
def test_worker_threads_are_not_pinned_by_default():
    """TVM pins each pool worker to a core of its own; with another process busy on that core
    the worker runs only in the slices the scheduler gives it there and every parallel kernel
    waits for it (ResNet-18's median run 218-232 ms instead of ~31 on a 2-core VM with one
    busy process on the worker's core; from a new-user trial). relay_tvm leaves the workers free to move (every thread
    keeps the process's CPU mask) unless the user sets TVM_BIND_THREADS, which then wins."""
    import json

    clean = {k: v for k, v in os.environ.items()
             if k not in ("TVM_NUM_THREADS", "OMP_NUM_THREADS", "TVM_BIND_THREADS")}

    def probe(**extra):
        out = subprocess.run([sys.executable, "-c", _PIN_PROBE], env={**clean, **extra},
                             capture_output=True, text=True, timeout=300,
                             check=True).stdout.splitlines()[-1]
        return json.loads(out)

    seen = probe()
    assert seen["threads"] >= 2
    process = set(seen["process"])
    assert all(_mask_cpus(m) == process for m in seen["masks"]), seen
    pinned = probe(TVM_BIND_THREADS="1")  # TVM's own behaviour, asked for: a worker on one core
    assert any(len(_mask_cpus(m)) == 1 for m in pinned["masks"]), pinned

"""The VM's overheads: per-iteration cost of a loop written as recursion (VM vs the reference
interpreter), a list workload (build / map / foldl over 10,000 elements), and optionally
ResNet-18 at batch 1 on the VM vs the graph executor: the static program, and the program with
a dynamic batch (``relay.Any()``) compiled once, run at batch 1.

Usage::

    python benchmarks/bench_vm.py [--iters 10000] [--resnet] [--repeat 5] [--rounds 6]

Timings are the best of ``--repeat`` runs after one warm-up; on a shared machine they are noisy,
so the ResNet rows also give the process CPU time per run (``time.process_time``, all threads),
which a loaded machine disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import relay_tvm as relay
from relay_tvm.prelude import Prelude
from relay_tvm.text import parse

LOOP = """#[version = "0.0.5"]
def @loop(%i: int32, %n: int32, %acc: Tensor[(4), float32]) -> Tensor[(4), float32] {
  if (less(%i, %n)) { @loop(add(%i, 1), %n, add(%acc, 1f)) } else { %acc }
}
def @main(%n: int32, %x: Tensor[(4), float32]) { @loop(0, %n, %x) }
"""

LISTS = """#[version = "0.0.5"]
def @build(%n: int32, %acc: List[int32]) -> List[int32] {
  if (less(%n, 1)) { %acc } else { @build(subtract(%n, 1), Cons(%n, %acc)) }
}
def @main(%n: int32) {
  %0 = @map(fn (%i: int32) { multiply(%i, 2) }, @build(%n, Nil));
  @foldl(fn (%a: int32, %b: int32) { add(%a, %b) }, 0, %0)
}
"""


def _best(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def bench_loop(iters, repeat):
    mod = parse(LOOP)
    n, x = np.array(iters, "int32"), np.zeros(4, "float32")
    vm = relay.create_executor("vm", mod).evaluate()
    assert float(vm(n, x).numpy()[0]) == iters
    t_vm = _best(lambda: vm(n, x), repeat)
    interp = relay.create_executor("debug", mod).evaluate()
    t_it = _best(lambda: interp(n, x), 1)
    instrs = sum(1 for line in relay.vm.compile(mod).bytecode.split("@loop:")[1]
                 .split("\n\n")[0].splitlines() if line.strip())
    print(f"loop x{iters}: VM {t_vm / iters * 1e6:.2f} us/iteration "
          f"(~{instrs - 4} instructions/iteration, "
          f"{t_vm / iters / max(1, instrs - 4) * 1e9:.0f} ns/instruction incl. 3 kernels); "
          f"interpreter {t_it / iters * 1e6:.1f} us/iteration ({t_it / t_vm:.0f}x)")


def bench_lists(n, repeat):
    mod = relay.IRModule()
    Prelude(mod)
    mod = parse(LISTS, init_module=mod)
    arg = np.array(n, "int32")
    vm = relay.create_executor("vm", mod).evaluate()
    assert int(vm(arg).numpy()) == (n * (n + 1)) % (1 << 32) - (1 << 32) * (
        (n * (n + 1)) % (1 << 32) >= 1 << 31)
    t_vm = _best(lambda: vm(arg), repeat)
    interp = relay.create_executor("debug", mod).evaluate()
    t_it = _best(lambda: interp(arg), 1)
    print(f"build+map+foldl over {n} elements: VM {t_vm * 1e3:.1f} ms, interpreter "
          f"{t_it * 1e3:.1f} ms ({t_it / t_vm:.0f}x)")


def _best_cpu(fn, repeat):
    """(best wall seconds, best process CPU seconds, minor page faults) per run."""
    import resource

    fn()
    walls, cpus, faults = [], [], []
    for _ in range(repeat):
        f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f)
    return min(walls), min(cpus), sorted(faults)[len(faults) // 2]


def bench_resnet(repeat, rounds=6):
    """The three engines built once, then timed in ``rounds`` interleaved rounds (graph
    executor, static VM, dynamic VM, each ``repeat`` runs after a warm-up run) so that a drift
    of the machine's speed during the run does not favour whichever engine ran first; each
    engine's figure is its best run, and the ratios are also given as the median over rounds of
    the per-round ratio of best runs."""
    sys.path.insert(0, os.path.dirname(__file__))
    import tvm
    from bench_resnet import get_model

    from relay_tvm.runtime import GraphModule
    from relay_tvm.runtime.vm import VirtualMachine
    from relay_tvm.testing import resnet

    (mod, params), _ = get_model("resnet18")
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    lib = relay.build(mod, target="llvm", params=params)
    gm = GraphModule(lib["default"](tvm.cpu()))
    gm.set_input(0, x)
    vm = VirtualMachine(relay.vm.compile(mod, target="llvm", params=params))
    ref = (gm.run(), gm.get_output(0).numpy())[1]
    np.testing.assert_allclose(vm.run(x).numpy(), ref, rtol=1e-4, atol=1e-4)
    dmod, dparams = resnet.get_workload(num_layers=18, batch_size=relay.Any())
    dvm = VirtualMachine(relay.vm.compile(dmod, target="llvm", params=dparams))
    np.testing.assert_allclose(dvm.run(x).numpy(), ref, rtol=1e-4, atol=1e-4)
    # every engine gets its input once (the graph module's set_input above), so a run times
    # the program, not a NumPy-to-tensor copy of the input
    vm.set_input("main", x)
    dvm.set_input("main", x)
    engines = {"graph": gm.run, "vm": vm.run, "dyn": dvm.run}
    per_round = {k: [] for k in engines}
    for _ in range(rounds):
        for name, fn in engines.items():
            per_round[name].append(_best_cpu(fn, repeat))
    best = {k: (min(w for w, _, _ in v), min(c for _, c, _ in v)) for k, v in per_round.items()}
    faults = {k: sorted(f for _, _, f in v)[len(v) // 2] for k, v in per_round.items()}

    def median_ratio(name):
        r = sorted(a[0] / b[0] for a, b in zip(per_round[name], per_round["graph"]))
        return r[len(r) // 2]

    (t_graph, c_graph), (t_vm, c_vm), (t_dyn, c_dyn) = best["graph"], best["vm"], best["dyn"]
    print(f"ResNet-18 batch 1 ({rounds} interleaved rounds of {repeat} runs, "
          f"{gm.num_threads} threads): graph executor "
          f"{t_graph * 1e3:.2f} ms (cpu {c_graph * 1e3:.1f} ms)")
    print(f"  minor page faults per run: graph {faults['graph']}, static VM {faults['vm']}, "
          f"batch Any {faults['dyn']}")
    print(f"  static VM {t_vm * 1e3:.2f} ms (cpu {c_vm * 1e3:.1f} ms): {t_vm / t_graph:.2f}x "
          f"best, {median_ratio('vm'):.2f}x median per round, {c_vm / c_graph:.2f}x cpu")
    print(f"  batch Any, run at 1: VM {t_dyn * 1e3:.2f} ms (cpu {c_dyn * 1e3:.1f} ms): "
          f"{t_dyn / t_graph:.2f}x best, {median_ratio('dyn'):.2f}x median per round, "
          f"{c_dyn / c_graph:.2f}x cpu (goal <= 1.1x)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--resnet", action="store_true")
    ap.add_argument("--rounds", type=int, default=6, help="interleaved rounds (--resnet)")
    a = ap.parse_args(argv)
    bench_loop(a.iters, a.repeat)
    bench_lists(a.iters, a.repeat)
    if a.resnet:
        bench_resnet(a.repeat, a.rounds)


if __name__ == "__main__":
    main()

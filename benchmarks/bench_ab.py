"""Whole Gluon model-zoo networks compiled by this checkout against another one (``--against``,
e.g. the main branch), relay_tvm only, timed alternately in one process.

Each checkout builds every model in a process of its own (its own ``relay_tvm`` imported from
its root, opt level 3, the host target) and exports the library; the timing process then loads
both libraries of a model and runs A, B, B, A, ... in rounds of a few runs, keeping the best
and the median round of each: on a shared machine the other processes' load falls on both
alike, and the ratio means more than either time. With one thread, ``--clock cpu`` times the
thread's CPU time (``time.thread_time``), which the other processes do not inflate (the cache
they pollute still does). The outputs of both builds must agree within 1e-4.

Usage::

    python benchmarks/bench_ab.py --against /work/main                      # all cores
    python benchmarks/bench_ab.py --against /work/main --models mobilenet1.0 --threads 2
    python benchmarks/bench_ab.py --against /work/main --threads 1 --clock cpu --rounds 31
    python benchmarks/bench_ab.py --against /work/main --mcpu haswell      # AVX2 code

Prints per model both times (best and median round, ms) and the ratio against/this (> 1: this
checkout is faster).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ["mobilenet1.0", "mobilenetv2_1.0", "resnet18_v1"]


def build(root: str, out: str, model: str, size: int, target: str = "llvm") -> None:
    """Export ``model`` compiled for ``target`` by the relay_tvm of ``root`` to ``out`` (and its
    input)."""
    sys.path.insert(0, root)
    import numpy as np

    import relay_tvm as relay
    from relay_tvm.testing.gluon import random_zoo_model

    if not os.path.abspath(relay.__file__).startswith(os.path.abspath(root)):
        raise SystemExit(f"imported {relay.__file__}, not the checkout at {root}")
    shape = (1, 3, size, size)
    net, x = random_zoo_model(model, shape)
    mod, params = relay.frontend.from_mxnet(net, shape={"data": shape})
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    lib.export_library(out)
    np.save(out + ".input.npy", x)


def time_pair(paths, rounds: int, per_round: int, cpu_clock: bool):
    """``(best, median)`` seconds per run of each library, timed alternately."""
    import numpy as np
    import tvm

    from relay_tvm.runtime import GraphModule, load_module

    x = np.load(paths[0] + ".input.npy")
    gms = []
    for p in paths:
        gm = GraphModule(load_module(p)["default"](tvm.cpu(0)))
        gm.set_input("data", x)
        gm.run()
        gms.append(gm)
    np.testing.assert_allclose(gms[1].get_output(0).numpy(), gms[0].get_output(0).numpy(),
                               rtol=1e-4, atol=1e-4)
    clock = time.thread_time if cpu_clock else time.perf_counter
    runs = [[], []]
    for r in range(rounds):
        # A, B then B, A: the one timed second in a round ran up to 12% faster or slower
        # (caches, clock), which a fixed order turns into a bias of the ratio
        for k in (0, 1) if r % 2 == 0 else (1, 0):
            gm = gms[k]
            t = clock()
            for _ in range(per_round):
                gm.run()
            runs[k].append((clock() - t) / per_round)
    return [(min(r), float(np.median(r))) for r in runs]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    b = sub.add_parser("build", help="(internal) export one model compiled by one checkout")
    b.add_argument("root")
    b.add_argument("out")
    b.add_argument("model")
    b.add_argument("--size", type=int, default=224)
    b.add_argument("--target", default="llvm")
    ap.add_argument("--against", help="the other checkout's root (e.g. /work/main)")
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--size", type=int, default=None,
                    help="input height and width (default: 299 for Inception-v3, else 224)")
    ap.add_argument("--threads", type=int, default=None, help="TVM_NUM_THREADS for the timing")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--per-round", type=int, default=5, help="runs per timed round")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: the thread's CPU time (only meaningful with --threads 1)")
    ap.add_argument("--mcpu", default=None, help="build both for this LLVM CPU (e.g. haswell: "
                    "AVX2 code, sized for AVX2, on an AVX-512 machine)")
    a = ap.parse_args(argv)
    if a.cmd == "build":
        build(a.root, a.out, a.model, a.size, a.target)
        return
    if not a.against:
        ap.error("--against ROOT is required")
    if a.clock == "cpu" and a.threads != 1:
        ap.error("--clock cpu needs --threads 1 (the worker threads' time is not counted)")
    env = dict(os.environ)
    if a.threads:
        os.environ["TVM_NUM_THREADS"] = str(a.threads)
        # the builds see the thread count the timing uses: Winograd's choice weighs the
        # weights' DRAM traffic by it (transform/winograd_choice.py)
        env["TVM_NUM_THREADS"] = str(a.threads)
    sys.path.insert(0, ROOT)
    from relay_tvm.testing.gluon import zoo_image_size

    target = f"llvm -mcpu={a.mcpu}" if a.mcpu else "llvm"
    print(f"against {a.against}, this {ROOT}; TVM_NUM_THREADS="
          f"{os.environ.get('TVM_NUM_THREADS', '(default)')}; target {target}; {a.clock} clock; "
          f"best and median "
          f"of {a.rounds} rounds of {a.per_round} runs")
    print(f"{'model':<18}{'against best':>13}{'this best':>10}{'ratio':>7}"
          f"{'against med':>12}{'this med':>9}{'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models:
            paths = []
            for tag, root in (("against", os.path.abspath(a.against)), ("this", ROOT)):
                out = os.path.join(tmp, f"{model}.{tag}.so")
                subprocess.run([sys.executable, os.path.abspath(__file__), "build", root, out,
                                model, "--size", str(a.size or zoo_image_size(model)),
                                "--target", target], check=True,
                               env=env, cwd=tmp)
                paths.append(out)
            (ab, am), (tb, tm) = time_pair(paths, a.rounds, a.per_round, a.clock == "cpu")
            print(f"{model:<18}{ab * 1e3:>13.3f}{tb * 1e3:>10.3f}{ab / tb:>7.3f}"
                  f"{am * 1e3:>12.3f}{tm * 1e3:>9.3f}{am / tm:>7.3f}", flush=True)


if __name__ == "__main__":
    main()

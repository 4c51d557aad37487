"""int8 / fp32 latency of relay.quantize's Gluon ResNet-18, timed alternately in one process.

    TVM_NUM_THREADS=1 python benchmarks/bench_int8.py             # 1 thread, 8 rounds
    TVM_NUM_THREADS=2 python benchmarks/bench_int8.py --rounds 12 --mcpu haswell

The model, weights, calibration and qconfig are those of ``bench_mxnet.py --int8`` (Xavier
weights and random batch-norm statistics with seed 0; percentile calibration on 32 noise
images, ``weight_scale="channel_max"``, ``dtype_input="uint8"``), both programs built at opt
level 3. Each round times ``--runs`` runs of fp32, then of int8; the best run of each over all
rounds is reported, so load from other processes disturbs both alike (what ``bench_mxnet.py``,
one engine process after the other, cannot promise on a shared machine). ``--profile`` adds the
per-kernel times of both (``GraphModule.profile``). ``--scaling`` prints each kernel's time on 1
and on 2 threads and its speedup, for both models, measured in this process (the thread pool
re-configured between the two with ``runtime.config_threadpool``; needs ``TVM_NUM_THREADS`` >= 2,
the default on a 2-core machine): each kernel's best of many calls made in the model's
sequence (after its producers), so that a loaded machine's quiet moments count; next to the
kernel sum, the whole run's best.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _model(shape):
    from relay_tvm.testing.gluon import random_zoo_model

    return random_zoo_model("resnet18_v1", shape)


def main():
    import numpy as np
    import tvm

    import relay_tvm as relay

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per engine per round")
    ap.add_argument("--mcpu", default=None, help="e.g. haswell: build for AVX2")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--scaling", action="store_true", help="per-kernel 1- vs 2-thread table")
    a = ap.parse_args()
    target = "llvm" + (f" -mcpu={a.mcpu}" if a.mcpu else "")
    shape = (1, 3, 224, 224)
    net, x = _model(shape)
    mod, params = relay.frontend.from_mxnet(net, shape={"data": shape})
    rng = np.random.default_rng(1)
    cal = [{"data": (rng.normal(0, 2, (1, 3, 1, 1)) + rng.uniform(-1, 1, shape)
                     ).astype("float32")} for _ in range(32)]
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="channel_max",
                                dtype_input="uint8"):
        qmod = relay.quantize.quantize(mod, params, dataset=cal)
    mods = {}
    with relay.transform.PassContext(opt_level=3):
        libs = {"fp32": relay.build(mod, target=target, params=params),
                "int8": relay.build(qmod, target=target)}
    for k, lib in libs.items():
        gm = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
        gm.set_input("data", x)
        gm.run()
        mods[k] = gm
    top = {k: int(g.get_output(0).numpy().argmax()) for k, g in mods.items()}
    best = dict.fromkeys(mods, float("inf"))
    for _ in range(a.rounds):
        for k, g in mods.items():
            g.run()
            for _ in range(a.runs):
                t = time.perf_counter()
                g.run()
                best[k] = min(best[k], time.perf_counter() - t)
    threads = os.environ.get("TVM_NUM_THREADS", "all cores")
    print(f"target {target!r}, TVM_NUM_THREADS={threads}, top-1 fp32 {top['fp32']} int8 "
          f"{top['int8']}")
    print(f"fp32 {best['fp32'] * 1e3:.2f} ms, int8 {best['int8'] * 1e3:.2f} ms, "
          f"int8 / fp32 = {best['int8'] / best['fp32']:.3f} (best of {a.rounds} x {a.runs})")
    if a.profile:
        for k, g in mods.items():
            print(f"===== {k}")
            g.profile(number=3, repeat=3, show=True)
    if a.scaling:
        for k, g in mods.items():
            print(f"===== {k}: ms on 1 and 2 threads (best of {a.rounds} x 10 passes), speedup")
            scaling(g, a.rounds)


def scaling(gm, rounds, threads=(1, 2)):
    """Print each kernel's best time on each thread count, timed where it runs in the model
    (a pass over the whole sequence, as ``profile(mode="sequence")``), and the whole run's."""
    import time

    import tvm

    config = tvm.get_global_func("runtime.config_threadpool")
    _, calls = gm._kernel_calls()
    funcs = [(nid, name, kmod.get_function(name), args) for nid, name, kmod, args in calls]
    best = {}
    for _ in range(rounds):
        for n in threads:
            config(1, n)
            for _ in range(10):
                for nid, _, f, args in funcs:
                    t = time.perf_counter()
                    f(*args)
                    best[nid, n] = min(best.get((nid, n), 1.0), time.perf_counter() - t)
            for _ in range(3):
                gm.run()
                t = time.perf_counter()
                gm.run()
                best["run", n] = min(best.get(("run", n), 1.0), time.perf_counter() - t)
    config(1, 0)
    a, b = threads
    tot = dict.fromkeys(threads, 0.0)
    for nid, name, _, _ in sorted(funcs, key=lambda c: -best[c[0], a]):
        for n in threads:
            tot[n] += best[nid, n]
        if best[nid, a] >= 5e-5:
            print(f"{nid:>5} {best[nid, a] * 1e3:8.3f} {best[nid, b] * 1e3:8.3f} "
                  f"{best[nid, a] / best[nid, b]:5.2f}  {name}")
    print(f"kernel sum {tot[a] * 1e3:.2f} {tot[b] * 1e3:.2f} {tot[a] / tot[b]:.2f}; whole run "
          f"{best['run', a] * 1e3:.2f} {best['run', b] * 1e3:.2f} "
          f"{best['run', a] / best['run', b]:.2f}")


if __name__ == "__main__":
    main()

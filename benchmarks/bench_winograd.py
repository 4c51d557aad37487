"""Stride-1 3x3 convolution layers as direct, F(2x2, 3x3) and F(4x4, 3x3) Winograd kernels, timed
with cold caches, next to the form the cost model of ``transform/winograd_choice.py`` picks.

What the model's constants were calibrated on. Inside a whole network each layer reads its
weights from DRAM (ResNet-18's are 46 MB direct, ~180 MB as F(4x4) Winograd: more than the
last-level cache), so a layer timed alone with warm caches flatters the forms with large
transformed weights. Here every timed run follows a write of a buffer larger than the L3
(``--flush-mb``), which evicts the weights and the stages' buffers; the three forms of a layer
are timed alternately, best of ``--rounds``. Each layer: conv2d + bias + relu, opt level 3 (the
forms forced with PassContext config ``relay.AlterOpLayout.winograd``), batch 1, float32.

With ``--threads 1 --clock cpu`` the thread's CPU time is timed (``time.thread_time``: other
processes' load does not inflate it, the memory they use still does); with more threads the
wall clock (the weights' share grows with the thread count: the memory bandwidth is shared).

Usage::

    python benchmarks/bench_winograd.py --threads 1 --clock cpu
    python benchmarks/bench_winograd.py --shapes 512@7 256@14 448-384@8 --rounds 50

A shape is ``C@H`` (C -> C channels, H x H plane) or ``C-O@H``. Prints ms per form, the fastest
measured, the model's pick (for ``--threads`` threads) and how much slower the pick measured.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # the relay_tvm of this checkout

# ResNet-18/50, VGG-16, SqueezeNet 1.0 and Inception-v3 3x3 stride-1 layers (the calibration set)
SHAPES = ["64@56", "128@28", "256@14", "512@7", "128@56", "256@28", "256@56", "512@14",
          "512@28", "64-256@13", "32-128@27", "96@35", "64-96@35", "448-384@8", "384@8",
          "256@6", "512@4", "128@6", "256@7"]
FORMS = ("never", 2, 4)


def parse_shape(s: str):
    """``"C@H"`` or ``"C-O@H"`` -> ``(C, O, H)``."""
    ch, _, h = s.partition("@")
    c, _, o = ch.partition("-")
    try:
        return int(c), int(o or c), int(h)
    except ValueError:
        raise SystemExit(f"bad shape {s!r}: expected C@H or C-O@H, e.g. 512@7") from None


def build_forms(c, o, h, rng):
    """The layer compiled three ways: ``{form: GraphModule}`` with its input set."""
    import numpy as np
    import tvm

    import relay_tvm as relay
    from relay_tvm.runtime import GraphModule

    x = relay.var("x", shape=(1, c, h, h))
    w = relay.const((rng.standard_normal((o, c, 3, 3)) * 0.05).astype("float32"))
    b = relay.const(rng.standard_normal((o,)).astype("float32"))
    y = relay.nn.conv2d(x, w, padding=(1, 1), channels=o, kernel_size=(3, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.bias_add(y, b))))
    data = rng.standard_normal((1, c, h, h)).astype("float32")
    gms = {}
    for form in FORMS:
        with relay.transform.PassContext(opt_level=3,
                                         config={"relay.AlterOpLayout.winograd": form}):
            lib = relay.build(mod, target="llvm")
        gm = GraphModule(lib["default"](tvm.cpu(0)))
        gm.set_input("x", data)
        gm.run()
        gms[form] = gm
    ref = gms["never"].get_output(0).numpy()
    for form in FORMS[1:]:
        np.testing.assert_allclose(gms[form].get_output(0).numpy(), ref, rtol=1e-4, atol=1e-3)
    return gms


def time_cold(gms, rounds, flush_bytes, clock):
    """Best seconds per form, each run after writing ``flush_bytes`` (forms alternate)."""
    import numpy as np

    buf = np.ones(flush_bytes // 4, dtype=np.float32)
    best = {f: float("inf") for f in gms}
    for _ in range(rounds):
        for f, gm in gms.items():
            buf += 1.0
            t = clock()
            gm.run()
            best[f] = min(best[f], clock() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", nargs="+", default=SHAPES)
    ap.add_argument("--threads", type=int, default=None,
                    help="TVM_NUM_THREADS (default: every usable core)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: the thread's CPU time (only with --threads 1)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--flush-mb", type=int, default=96,
                    help="buffer written before each run (more than the L3)")
    a = ap.parse_args(argv)
    if a.clock == "cpu" and a.threads != 1:
        ap.error("--clock cpu needs --threads 1 (the worker threads' time is not counted)")
    if a.threads:
        os.environ["TVM_NUM_THREADS"] = str(a.threads)
    import numpy as np

    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.target import make_target
    from relay_tvm.transform.winograd_choice import module_threads, winograd_tile

    shapes = [parse_shape(s) for s in a.shapes]
    feats = cpu_features(make_target(None))
    lanes, threads = feats.lanes(32), module_threads()
    clock = time.thread_time if a.clock == "cpu" else time.perf_counter
    print(f"{threads} thread(s), {a.clock} clock, best of {a.rounds} runs each after a "
          f"{a.flush_mb} MB write; ms")
    print(f"{'layer':<12}{'direct':>9}{'F(2x2)':>9}{'F(4x4)':>9}{'fastest':>9}{'model':>8}"
          f"{'loss':>7}")
    names = {"never": "direct", 2: "F2", 4: "F4"}
    rng = np.random.default_rng(0)
    for (c, o, h), s in zip(shapes, a.shapes):
        best = time_cold(build_forms(c, o, h, rng), a.rounds, a.flush_mb << 20, clock)
        pick = winograd_tile(1, c, h, h, o, lanes, feats=feats, threads=threads) or "never"
        fastest = min(best, key=best.get)
        print(f"{s:<12}" + "".join(f"{best[f] * 1e3:>9.3f}" for f in FORMS)
              + f"{names[fastest]:>9}{names[pick]:>8}{best[pick] / best[fastest]:>7.2f}",
              flush=True)


if __name__ == "__main__":
    main()

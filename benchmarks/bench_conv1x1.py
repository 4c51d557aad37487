"""1x1 (pointwise) NCHWc convolutions of ResNet-18/50 and MobileNet-1.0, this checkout against
another one (``--against``, e.g. the main branch), timed alternately in one process.

Each layer is compiled as AlterOpLayout leaves it inside a model: ``nn.contrib_conv2d_NCHWc``
on blocked data (``NCHW{c}c``, blocks of :func:`relay_tvm.transform.layout.block_size`) with
bias and relu fused, weights bound. Both checkouts export their layers from their own process
(``build`` sub-command), then the timing process loads both libraries and runs A, B, A, B, ...
in rounds of a few milliseconds, taking the best round of each: on a shared machine the other
processes' load then falls on both alike. With one thread the rounds are timed in the thread's
CPU time (``time.thread_time``), which the other processes' load does not inflate.

Usage::

    python benchmarks/bench_conv1x1.py --against /work/main            # all cores
    python benchmarks/bench_conv1x1.py --against /work/main --threads 1 --rounds 31
    python benchmarks/bench_conv1x1.py --against /work/main --only r50

Prints per layer both times, both GFLOP/s and the ratio against/this (> 1: this checkout is
faster), and their geometric mean.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name, input channels, output channels, input plane, stride (batch 1)
LAYERS = [
    ("r18 l2 1x1 s2", 64, 128, 56, 2), ("r18 l3 1x1 s2", 128, 256, 28, 2),
    ("r18 l4 1x1 s2", 256, 512, 14, 2),
    ("r50 64-256 56", 64, 256, 56, 1), ("r50 256-64 56", 256, 64, 56, 1),
    ("r50 256-128 s2", 256, 128, 56, 2), ("r50 256-512 s2", 256, 512, 56, 2),
    ("r50 128-512 28", 128, 512, 28, 1), ("r50 512-128 28", 512, 128, 28, 1),
    ("r50 512-1024 s2", 512, 1024, 28, 2), ("r50 256-1024 14", 256, 1024, 14, 1),
    ("r50 1024-256 14", 1024, 256, 14, 1), ("r50 1024-2048 s2", 1024, 2048, 14, 2),
    ("r50 512-2048 7", 512, 2048, 7, 1), ("r50 2048-512 7", 2048, 512, 7, 1),
    ("mb 32-64 112", 32, 64, 112, 1), ("mb 64-128 56", 64, 128, 56, 1),
    ("mb 128-128 56", 128, 128, 56, 1), ("mb 128-256 28", 128, 256, 28, 1),
    ("mb 256-256 28", 256, 256, 28, 1), ("mb 256-512 14", 256, 512, 14, 1),
    ("mb 512-512 14", 512, 512, 14, 1), ("mb 512-1024 7", 512, 1024, 7, 1),
    ("mb 1024-1024 7", 1024, 1024, 7, 1),
]


def build(root: str, out: str, target: str) -> None:
    """Export every layer compiled by the relay_tvm of ``root`` into ``out``."""
    sys.path.insert(0, root)
    import numpy as np

    import relay_tvm as relay
    from relay_tvm.op import nn_contrib

    rng = np.random.default_rng(0)
    for i, (_, C, O, H, s) in enumerate(LAYERS):
        ib, ob = relay.transform.layout.block_size(C), relay.transform.layout.block_size(O)
        x = relay.var("x", shape=(1, C // ib, H, H, ib))
        w = relay.var("w", shape=(O // ob, C // ib, 1, 1, ib, ob))
        b = relay.var("b", shape=(1, O // ob, 1, 1, ob))
        y = nn_contrib.contrib_conv2d_nchwc(
            x, w, strides=(s, s), channels=O, kernel_size=(1, 1), data_layout=f"NCHW{ib}c",
            kernel_layout=f"OIHW{ib}i{ob}o", out_layout=f"NCHW{ob}c")
        func = relay.Function([x, w, b], relay.nn.relu(relay.add(y, b)))
        params = {"w": rng.standard_normal((O // ob, C // ib, 1, 1, ib, ob)).astype("float32"),
                  "b": rng.standard_normal((1, O // ob, 1, 1, ob)).astype("float32")}
        with relay.transform.PassContext(opt_level=3):
            lib = relay.build(relay.IRModule.from_expr(func), target=target, params=params)
        lib.export_library(os.path.join(out, f"l{i}.so"))
    with open(os.path.join(out, "done.json"), "w", encoding="utf-8") as f:
        json.dump({"root": root}, f)


def _time_alternately(dirs, rounds: int, only: str | None):
    import numpy as np
    import tvm

    from relay_tvm.runtime import GraphModule, load_module
    from relay_tvm.transform.layout import block_size

    one_thread = os.environ.get("TVM_NUM_THREADS") == "1"
    clock = time.thread_time if one_thread else time.perf_counter
    rng = np.random.default_rng(1)
    print(f"{'layer':<18}{'against ms':>11}{'this ms':>9}{'GF/s':>7}{'GF/s':>7}{'ratio':>7}")
    ratios = []
    for i, (name, C, O, H, s) in enumerate(LAYERS):
        if only and only not in name:
            continue
        gms = [GraphModule(load_module(os.path.join(d, f"l{i}.so"))["default"](tvm.cpu(0)))
               for d in dirs]
        ib = block_size(C)
        x = rng.standard_normal((1, C // ib, H, H, ib)).astype("float32")
        outs = []
        for gm in gms:
            gm.set_input("x", x)
            gm.run()
            outs.append(gm.get_output(0).numpy())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
        t = clock()
        gms[0].run()
        number = max(1, int(0.003 / max(clock() - t, 1e-6)))
        best = [float("inf"), float("inf")]
        for _ in range(rounds):
            for k, gm in enumerate(gms):
                t = clock()
                for _ in range(number):
                    gm.run()
                best[k] = min(best[k], (clock() - t) / number)
        oh = (H - 1) // s + 1
        flops = 2.0 * C * O * oh * oh
        ratios.append(best[0] / best[1])
        print(f"{name:<18}{best[0] * 1e3:>11.3f}{best[1] * 1e3:>9.3f}"
              f"{flops / best[0] / 1e9:>7.1f}{flops / best[1] / 1e9:>7.1f}{ratios[-1]:>7.2f}",
              flush=True)
    if ratios:
        gm_ratio = float(np.exp(np.mean(np.log(ratios))))
        print(f"geometric mean against/this: {gm_ratio:.3f} over {len(ratios)} layers")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    b = sub.add_parser("build", help="(internal) export the layers of one checkout")
    b.add_argument("root")
    b.add_argument("out")
    b.add_argument("--target", default="llvm")
    ap.add_argument("--against", help="the other checkout's root (e.g. /work/main)")
    ap.add_argument("--threads", type=int, default=None, help="TVM_NUM_THREADS for the timing")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default=None, help="layers whose name contains this")
    ap.add_argument("--target", default="llvm")
    a = ap.parse_args(argv)
    if a.cmd == "build":
        build(a.root, a.out, a.target)
        return
    if not a.against:
        ap.error("--against ROOT is required")
    env = dict(os.environ, TVM_NUM_THREADS="1")  # building needs no thread pool
    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        for tag, root in (("against", os.path.abspath(a.against)), ("this", ROOT)):
            d = os.path.join(tmp, tag)
            os.makedirs(d)
            subprocess.run([sys.executable, os.path.abspath(__file__), "build", root, d,
                            "--target", a.target], check=True, env=env, cwd=tmp)
            dirs.append(d)
        if a.threads:
            os.environ["TVM_NUM_THREADS"] = str(a.threads)
        sys.path.insert(0, ROOT)
        print(f"against {a.against}, this {ROOT}; TVM_NUM_THREADS="
              f"{os.environ.get('TVM_NUM_THREADS', '(default)')}; best of {a.rounds} rounds")
        _time_alternately(dirs, a.rounds, a.only)


if __name__ == "__main__":
    main()

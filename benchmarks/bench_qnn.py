"""int8 (qnn) against float32 on one ResNet-18 3x3 convolution layer (1x64x56x56, 64 filters).

Variants: float32 ``nn.conv2d``; ``qnn.conv2d`` int8 x int8 (zero points 0: the plain int8
template accumulating in int32) + ``qnn.requantize``; ``qnn.conv2d`` uint8 x int8 (MKLDNN-style
operands, run as an int16 convolution) + requantize. Times are CPU seconds of the calling
thread (``time.thread_time``) with one TVM thread, which a loaded machine disturbs least.

Usage: ``TVM_NUM_THREADS=1 python benchmarks/bench_qnn.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("TVM_NUM_THREADS", "1")

import tvm  # noqa: E402

import relay_tvm as relay  # noqa: E402

SHAPE, WSHAPE = (1, 64, 56, 56), (64, 64, 3, 3)


def _variants():
    C = relay.const
    qnn = relay.qnn.op
    x = relay.var("x", shape=SHAPE)
    w = relay.var("w", shape=WSHAPE)
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1)))
    yield "float32", f, "float32", "float32"
    yield "float32 direct", f, "float32", "float32"  # Winograd off
    for ddt in ("int8", "uint8"):
        xq = relay.var("x", shape=SHAPE, dtype=ddt)
        wq = relay.var("w", shape=WSHAPE, dtype="int8")
        acc = qnn.conv2d(xq, wq, C(0), C(0), C(0.05), C(0.01), kernel_size=(3, 3), channels=64,
                         padding=(1, 1))
        y = qnn.requantize(acc, C(0.0005), C(0), C(0.1), C(0), out_dtype=ddt)
        yield f"{ddt} x int8", relay.Function([xq, wq], y), ddt, "int8"


def _rand(shape, dt, rng):
    if dt == "float32":
        return rng.standard_normal(shape).astype(dt)
    lo, hi = (0, 256) if dt == "uint8" else (-128, 128)
    return rng.integers(lo, hi, shape).astype(dt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    res = {}
    for name, func, ddt, wdt in _variants():
        mod = relay.IRModule.from_expr(func)
        params = {"w": _rand(WSHAPE, wdt, rng)}
        cfg = {"relay.AlterOpLayout.winograd": "never"} if "direct" in name else {}
        with relay.transform.PassContext(opt_level=3, config=cfg):
            lib = relay.build(mod, target="llvm", params=params)
        gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
        gm.set_input("x", _rand(SHAPE, ddt, rng))
        for _ in range(3):
            gm.run()
        t0 = time.thread_time()
        for _ in range(args.repeat):
            gm.run()
        res[name] = (time.thread_time() - t0) / args.repeat
        print(f"{name:16s} {res[name] * 1e3:8.2f} ms (thread time, 1 thread)")
    base = res["float32"]
    for k, v in res.items():
        print(f"{k:16s} {v / base:5.2f}x float32")


if __name__ == "__main__":
    main()

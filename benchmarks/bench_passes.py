"""Optimization-pass benchmark: kernel counts with and without fusion, per-pass time, and the
run-time speedup fusion gives (when the backend can build), for ResNet-18 and MobileNet.

Usage: ``python benchmarks/bench_passes.py [--image 224] [--no-build] [--out FILE.json]``.
Writes a JSON record and prints a table. Run it once: it compiles two models twice.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import relay_tvm as relay
from relay_tvm import testing, transform
from relay_tvm.runtime.executor import bind_params_by_name


def count_kernels(mod) -> int:
    n = [0]

    def visit(e):
        if isinstance(e, relay.Call) and isinstance(e.op, relay.Function) and e.op.is_primitive:
            n[0] += 1

    for f in mod.functions.values():
        relay.analysis.post_order_visit(f, visit)
    return n[0]


def optimize(mod, params, opt_level):
    mod = mod.copy()
    mod["main"] = bind_params_by_name(mod["main"], params)
    timing = transform.PassTimingInstrument()
    with transform.PassContext(opt_level=opt_level, instruments=[timing]):
        t0 = time.perf_counter()
        out = transform.default_pipeline(opt_level)(mod)
        total = time.perf_counter() - t0
    per_pass: dict = {}
    for name, secs in timing.records:
        if name != "default_pipeline":
            per_pass[name] = per_pass.get(name, 0.0) + secs
    return out, total, per_pass


def run_time(mod, params, opt_level, image):
    """Mean seconds of one inference of the built model, or None without a backend."""
    try:
        with transform.PassContext(opt_level=opt_level):
            lib = relay.build(mod, target="llvm", params=params)
        from relay_tvm.runtime import GraphModule
        import tvm

        dev = tvm.cpu(0)
        g = GraphModule(lib["default"](dev))
        g.set_input("data", np.random.default_rng(0).random((1, 3, image, image), "float32"))
        g.run()
        t0 = time.perf_counter()
        reps = 5
        for _ in range(reps):
            g.run()
        return (time.perf_counter() - t0) / reps
    except Exception as e:  # the backend may be missing or unable to build this model
        print(f"  (build at opt_level={opt_level} unavailable: {type(e).__name__}: {e})")
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    shape = (3, args.image, args.image)
    models = {
        "resnet-18": testing.resnet.get_workload(num_layers=18, image_shape=shape),
        "mobilenet": testing.mobilenet.get_workload(image_shape=shape),
    }
    record = {}
    for name, (mod, params) in models.items():
        unfused, t0, passes0 = optimize(mod, params, 0)
        fused, t3, passes3 = optimize(mod, params, 3)
        rec = {
            "operators": _count_ops(mod),
            "kernels_opt0": count_kernels(unfused),
            "kernels_opt3": count_kernels(fused),
            "pipeline_seconds_opt0": round(t0, 4),
            "pipeline_seconds_opt3": round(t3, 4),
            "pass_seconds_opt3": {k: round(v, 4) for k, v in passes3.items()},
        }
        if not args.no_build:
            r0 = run_time(mod, params, 0, args.image)
            r3 = run_time(mod, params, 3, args.image)
            rec["run_ms_opt0"] = None if r0 is None else round(r0 * 1e3, 3)
            rec["run_ms_opt3"] = None if r3 is None else round(r3 * 1e3, 3)
            rec["fusion_speedup"] = None if not (r0 and r3) else round(r0 / r3, 3)
        record[name] = rec
        print(f"{name}: {rec['operators']} operator calls -> {rec['kernels_opt0']} kernels at "
              f"opt_level 0, {rec['kernels_opt3']} at opt_level 3; pipeline {t3 * 1e3:.1f} ms")
        for k, v in sorted(passes3.items(), key=lambda kv: -kv[1]):
            print(f"    {k:<28} {v * 1e3:9.2f} ms")
        if "fusion_speedup" in rec:
            print(f"    run: {rec['run_ms_opt0']} ms unfused, {rec['run_ms_opt3']} ms fused, "
                  f"speedup {rec['fusion_speedup']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=2)
    return record


def _count_ops(mod) -> int:
    n = [0]
    relay.analysis.post_order_visit(
        mod["main"], lambda e: n.__setitem__(0, n[0] + (isinstance(e, relay.Call) and isinstance(e.op, relay.op.Op)))
    )
    return n[0]


if __name__ == "__main__":
    main()

"""Optimization-pass benchmark.

Three parts (``--part``, default all):

- ``fusion``: kernel counts with and without fusion, per-pass time, and the run-time speedup
  fusion gives (when the backend can build), for ResNet-18 and MobileNet;
- ``chain``: compile time of a chain of ``--chain`` operators (default 100,000; ``relu`` and
  ``add`` alternating on a 4-element tensor), per pass and per build phase, wall and CPU seconds
  (issue 10: at most 20 s);
- ``resnet50``: where ``relay.build`` of ResNet-50 (``relay_tvm.testing``, batch 1, opt level
  3) spends its time: our passes, our lowering to TE, TVM's scheduling, TVM's compile (LLVM)
  (issue 10: at most 5 s).

CPU seconds are the process's (all threads); on a machine shared with other work the wall time
also counts the waits for a core, so report both. One-time costs (importing ``tvm.relax`` on
the first build) are paid by a small warm-up build before anything is timed.

Usage: ``python benchmarks/bench_passes.py [--part fusion|chain|resnet50] [--chain N]
[--image 224] [--no-build] [--out FILE.json]``. Writes a JSON record and prints tables.
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
        import tvm

        from relay_tvm.runtime import GraphModule

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


class _Clock:
    """Wall and CPU seconds since creation."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def _per_pass(timing) -> dict:
    out: dict = {}
    for (name, wall), (_, cpu) in zip(timing.records, timing.cpu_records):
        if name != "default_pipeline":
            w, c = out.get(name, (0.0, 0.0))
            out[name] = (w + wall, c + cpu)
    return out


def _print_passes(per_pass: dict) -> None:
    print(f"    {'pass':<28} {'wall s':>9} {'cpu s':>9}")
    for k, (w, c) in sorted(per_pass.items(), key=lambda kv: -kv[1][1]):
        print(f"    {k:<28} {w:9.3f} {c:9.3f}")


def _warm_up() -> None:
    x = relay.var("x", shape=(4,))
    relay.build(relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x))), target="llvm")


def chain(n: int) -> dict:
    """relay.build of an n-operator chain at opt level 3: seconds per pass and phase."""
    x = relay.var("x", shape=(4,))
    y = x
    for i in range(n):
        y = relay.add(y, relay.const(1.0)) if i % 2 else relay.nn.relu(y)
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    timing = transform.PassTimingInstrument()
    clock = _Clock()
    with transform.PassContext(opt_level=3, instruments=[timing]):
        lib = relay.build(mod, target="llvm")
    wall, cpu = clock.lap()
    per_pass = _per_pass(timing)
    print(f"chain of {n} operators: relay.build {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"({lib.stats['num_primitive_calls']} primitive calls, {lib.stats['num_kernels']} "
          f"kernels)")
    _print_passes(per_pass)
    _print_phases(lib.stats)
    return {"operators": n, "build_wall_s": round(wall, 3), "build_cpu_s": round(cpu, 3),
            "pass_seconds": {k: [round(w, 4), round(c, 4)] for k, (w, c) in per_pass.items()},
            "stats": {k: round(v, 4) if isinstance(v, float) else v
                      for k, v in lib.stats.items()}}


def _print_phases(stats: dict) -> None:
    for phase, what in (("optimize", "passes, fusion, inference"),
                        ("lower", "lowering to TE + scheduling, per kernel"),
                        ("codegen", "executor program + tvm.compile (LLVM)")):
        print(f"    phase {phase:<9} {stats[phase + '_s']:9.3f} {stats[phase + '_cpu_s']:9.3f}"
              f"   ({what})")


def resnet50() -> dict:
    """Where relay.build of ResNet-50 (batch 1, opt level 3) spends its time."""
    from relay_tvm.backend import lower as lower_mod
    from relay_tvm.backend import schedule as schedule_mod

    mod, params = testing.resnet.get_workload(num_layers=50, batch_size=1)
    spent = {"schedule": [0.0, 0.0], "lower_new": [0.0, 0.0]}

    def timed(key, fn):
        def run(*a, **k):
            clock = _Clock()
            try:
                return fn(*a, **k)
            finally:
                w, c = clock.lap()
                spent[key][0] += w
                spent[key][1] += c
        return run

    orig_sched, orig_new = schedule_mod.schedule_primfunc, lower_mod.LowerCache._lower_new
    schedule_mod.schedule_primfunc = timed("schedule", orig_sched)
    lower_mod.LowerCache._lower_new = timed("lower_new", orig_new)
    timing = transform.PassTimingInstrument()
    try:
        clock = _Clock()
        with transform.PassContext(opt_level=3, instruments=[timing]):
            lib = relay.build(mod, target="llvm", params=params)
        wall, cpu = clock.lap()
    finally:
        schedule_mod.schedule_primfunc, lower_mod.LowerCache._lower_new = orig_sched, orig_new
    st = lib.stats
    print(f"resnet-50: relay.build {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"({st['num_primitive_calls']} primitive calls, {st['num_kernels']} kernels)")
    _print_passes(_per_pass(timing))
    _print_phases(st)
    sw, sc = spent["schedule"]
    nw, nc = spent["lower_new"]
    print(f"    of lower: TVM scheduling {sw:.3f} wall {sc:.3f} CPU; our TE lowering "
          f"{nw - sw:.3f} wall {nc - sc:.3f} CPU; kernel cache and graph "
          f"{st['lower_s'] - nw:.3f} wall {st['lower_cpu_s'] - nc:.3f} CPU")
    # relay.build leaves the kernels as LLVM IR: their machine code is generated when the
    # first GraphModule is made (or when the library is exported); part of a build's cost
    import tvm

    from relay_tvm.runtime import GraphModule

    clock = _Clock()
    GraphModule(lib["default"](tvm.cpu(0)))
    lw, lc = clock.lap()
    print(f"    first GraphModule (the kernels' machine code): {lw:.2f} s wall, {lc:.2f} s CPU; "
          f"build + first GraphModule {wall + lw:.2f} s wall")
    return {"build_wall_s": round(wall, 3), "build_cpu_s": round(cpu, 3),
            "first_load_s": [round(lw, 3), round(lc, 3)],
            "schedule_s": [round(sw, 3), round(sc, 3)],
            "te_lowering_s": [round(nw - sw, 3), round(nc - sc, 3)],
            "stats": {k: round(v, 4) if isinstance(v, float) else v for k, v in st.items()}}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--part", choices=("fusion", "chain", "resnet50"), action="append")
    ap.add_argument("--chain", type=int, default=100_000)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    parts = args.part or ["fusion", "chain", "resnet50"]
    record = {}
    if "chain" in parts or "resnet50" in parts:
        _warm_up()
    if "chain" in parts:
        record["chain"] = chain(args.chain)
    if "resnet50" in parts:
        record["resnet-50"] = resnet50()
    if "fusion" in parts:
        record.update(fusion(args))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=2)
    return record


def fusion(args) -> dict:
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
    return record


def _count_ops(mod) -> int:
    n = [0]
    relay.analysis.post_order_visit(
        mod["main"], lambda e: n.__setitem__(0, n[0] + (isinstance(e, relay.Call) and isinstance(e.op, relay.op.Op)))
    )
    return n[0]


if __name__ == "__main__":
    main()

"""Tuned vs untuned relay_tvm vs MXNet 1.9.1: batch-1 latency of Gluon model-zoo networks.

    python benchmarks/bench_tune.py [--models resnet18_v1,mobilenet1.0] [--minutes 20]
        [--trials N] [--work-root tune-work/] [--repeat 50] [--size 224] [--processes 3]

For each model (random weights, batch-norm statistics randomized so the output check means
something): export it once (symbol JSON + .params, with the input and MXNet's output as .npy),
tune it with ``relay_tvm.tune.tune_relay`` (``--minutes`` of tuning and/or ``--trials``
measurements; the work dir ``WORK_ROOT/MODEL`` resumes), then time each engine in its own
process using every core this process may use, in ``--processes`` fresh processes each (rounds
of one process per engine, order rotated; the table gives the median of their medians):
relay_tvm untuned, relay_tvm with the tuning database, MXNet, and ONNX Runtime (the same
Gluon network exported with ``mx.onnx.export_model``, run by ``bench_mxnet.py``'s ONNX Runtime
worker in its peers venv; the column says why when it cannot run). Untuned and tuned are also
timed alternating in one process, a ratio free of the drift between processes. Outputs are
checked against MXNet's. Prints a markdown table with the CPU model and the tuning time.

Validate quickly (numbers meaningless): ``--minutes 0.5 --trials 4 --repeat 3 --size 64
--processes 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the relay_tvm of this checkout
import _machine  # noqa: E402
import bench_mxnet  # noqa: E402

MODELS = ["resnet18_v1", "mobilenet1.0"]


def export_model(name: str, size: int, out_dir: str) -> dict:
    """Export the Gluon model with random weights; save input and MXNet's output."""
    import mxnet as mx

    shape = (1, 3, size, size)
    from relay_tvm.testing.gluon import random_zoo_model

    net, x = random_zoo_model(name, shape)
    net.hybridize(static_alloc=True, static_shape=True)
    ref = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(out_dir, name)
    net.export(prefix, epoch=0)
    np.save(prefix + "-input.npy", x)
    np.save(prefix + "-mxnet.npy", ref)
    return {"symbol": prefix + "-symbol.json", "params": prefix + "-0000.params",
            "input": prefix + "-input.npy", "ref": prefix + "-mxnet.npy", "shape": shape}


def _import(files):
    from relay_tvm import frontend

    return frontend.from_mxnet(files["symbol"], shape={"data": tuple(files["shape"])},
                               arg_params=files["params"])


def worker(engine: str, files: dict, work_dir: str, repeat: int, out: str) -> None:
    """Time one engine in this process; write {"ms": median, "output": path} to ``out``."""
    x = np.load(files["input"])
    if engine == "mxnet":
        import mxnet as mx

        net = mx.gluon.nn.SymbolBlock.imports(files["symbol"], ["data"], files["params"])
        xin = mx.nd.array(x)
        if mx.runtime.Features().is_enabled("MKLDNN"):  # as bench_mxnet: oneDNN fusion
            net.optimize_for(xin, backend="MKLDNN", static_alloc=True, static_shape=True)
        else:
            net.hybridize(static_alloc=True, static_shape=True)
        y = net(xin).asnumpy()
        times = []
        for _ in range(repeat + 3):
            t0 = time.perf_counter()
            net(xin).wait_to_read()
            times.append(time.perf_counter() - t0)
        ms = float(np.median(times[3:])) * 1e3
    elif engine == "ab":
        # untuned and tuned builds in one process, timed in alternating rounds: the ratio is
        # free of the drift between processes (up to 25% on a shared VM)
        gms = [_relay_module(files, work_dir, tuned, x) for tuned in (False, True)]
        times = [[], []]
        per = max(1, repeat // 10)
        for _ in range(10):
            for gm, ts in zip(gms, times):
                ts.append(gm.benchmark(repeat=per, number=1).median)
        ms = [float(np.median(ts)) * 1e3 for ts in times]
        with open(out, "w") as f:
            json.dump({"untuned_ms": ms[0], "tuned_ms": ms[1]}, f)
        return
    else:
        gm = _relay_module(files, work_dir, engine == "tuned", x)
        y = gm.get_output(0).numpy()
        ms = gm.benchmark(repeat=repeat, number=1).median * 1e3
    path = out + ".npy"
    np.save(path, y)
    with open(out, "w") as f:
        json.dump({"ms": ms, "output": path}, f)


def _relay_module(files, work_dir, tuned, x):
    """The model built by relay_tvm (with the tuning database when ``tuned``), run once on
    ``x``."""
    import tvm

    import relay_tvm as relay
    from relay_tvm.runtime import GraphModule

    mod, params = _import(files)
    database = None
    if tuned:
        from relay_tvm.tune import load_database

        database = load_database(work_dir)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params, database=database)
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("data", x)
    gm.run()
    return gm


def _run_worker(engine, files, work_dir, repeat, tmp):
    out = os.path.join(tmp, f"{engine}.json")
    cores = _machine.usable_cores()[0]
    env = {k: v for k, v in os.environ.items() if k not in _machine.THREAD_VARS}
    env.update(_machine.thread_env(cores))
    env["MXNET_CPU_WORKER_NTHREADS"] = str(cores)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, "--files",
           json.dumps(files), "--work-dir", work_dir, "--repeat", str(repeat), "--out", out]
    subprocess.run(cmd, check=True, env=env)
    with open(out) as f:
        return json.load(f)


def tune_model(files, work_dir, minutes, trials):
    from relay_tvm import tune

    mod, params = _import(files)
    t0 = time.perf_counter()
    budget = trials if trials is not None else 1 << 30

    def progress(e):
        if e["event"] == "batch":
            print(f"  [tune] task {e['index'] + 1}/{e['tasks']}: {e['trials']}/{e['planned']} "
                  f"trials, best {e['best_ms']:.4f} ms (untuned {e['untuned_ms']:.4f}), "
                  f"est. gain {e['gain']:.2f}x", file=sys.stderr)

    tune.tune_relay(mod, params, "llvm", work_dir, budget,
                    max_trials_per_task=None if trials is not None else 64,
                    num_trials_per_iter=16, time_budget_s=minutes * 60 if minutes else None,
                    progress=progress)
    with open(os.path.join(work_dir, "relay_tvm_tuning.json")) as f:
        manifest = json.load(f)
    done = sum(int(s.get("trials", 0)) for s in manifest["tasks"].values())
    return time.perf_counter() - t0, done


def onnxruntime_ms(name, repeat, size, no_peers=False, processes=1):
    """ONNX Runtime's median latency of ``name`` (ms) through ``bench_mxnet``'s export and
    peer worker (every usable core; the median over ``processes`` processes), or
    ``(None, reason)``."""
    if bench_mxnet.input_shape(name)[2] != size:
        return None, f"bench_mxnet times {name} at {bench_mxnet.input_shape(name)[2:]} only"
    argv = ["--models", name, "--engines", "onnxruntime", "--repeat", str(repeat),
            "--processes", str(processes)]
    a = bench_mxnet.parse_args(argv + (["--no-peers"] if no_peers else []))
    peers, skip = bench_mxnet.peers_python(a)
    if "onnxruntime" not in peers:
        return None, skip.get("onnxruntime", "ONNX Runtime is not available")
    threads = _machine.machine(None, "llvm")["threads"]
    row = bench_mxnet.bench_model(name, a, peers, skip, threads)
    if "onnxruntime" in row["ms"]:
        return row["ms"]["onnxruntime"], None
    return None, row["skip"].get("onnxruntime", "no result")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--minutes", type=float, default=20.0, help="tuning minutes per model")
    ap.add_argument("--trials", type=int, default=None, help="measurements per model")
    ap.add_argument("--work-root", default="tune-work")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--no-peers", action="store_true", help="skip ONNX Runtime")
    ap.add_argument("--processes", type=int, default=3,
                    help="fresh processes per engine (the table gives the median of their "
                         "medians)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)
    ap.add_argument("--work-dir", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, json.loads(args.files), args.work_dir, args.repeat, args.out)
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            print(f"{name}: export", file=sys.stderr)
            files = export_model(name, args.size, tmp)
            work_dir = os.path.join(args.work_root, f"{name}-{args.size}")
            print(f"{name}: tune ({args.minutes} min, trials {args.trials})", file=sys.stderr)
            tune_s, trials = tune_model(files, work_dir, args.minutes, args.trials)
            ref = np.load(files["ref"])
            res = {}
            engines = ["untuned", "tuned", "mxnet"]
            runs = {e: [] for e in engines}
            for k in range(args.processes):  # rounds of one process per engine, rotated
                for engine in engines[k % 3:] + engines[:k % 3]:
                    print(f"{name}: time {engine} (process {k + 1}/{args.processes})",
                          file=sys.stderr)
                    r = _run_worker(engine, files, work_dir, args.repeat, tmp)
                    y = np.load(r["output"])
                    r["err"] = float(np.abs(y - ref).max() /
                                     max(float(np.abs(ref).max()), 1e-30))
                    runs[engine].append(r)
            for engine, rs in runs.items():
                res[engine] = {"ms": float(np.median([r["ms"] for r in rs])),
                               "err": max(r["err"] for r in rs)}
            print(f"{name}: time untuned and tuned alternating in one process", file=sys.stderr)
            res["ab"] = _run_worker("ab", files, work_dir, args.repeat, tmp)
            print(f"{name}: time onnxruntime", file=sys.stderr)
            res["ort"] = onnxruntime_ms(name, args.repeat, args.size, args.no_peers,
                                        args.processes)
            rows.append((name, res, tune_s, trials))
    print("\n" + _machine.header(_machine.machine()))
    print(f"each engine in {args.processes} fresh process(es) on every usable core (the median "
          f"of the processes' medians); batch 1, {args.size}x{args.size}, median of "
          f"{args.repeat} runs; 'same process': untuned and tuned builds alternating in one "
          f"process\n")
    print("| model | untuned ms | tuned ms | MXNet ms | ONNX Runtime ms | tuned / ORT (goal "
          "<= 0.8) | tuned vs untuned | same process: untuned / tuned ms | tuning | "
          "max rel. err (untuned / tuned) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    notes = []
    for name, res, tune_s, trials in rows:
        u, t, m = res["untuned"]["ms"], res["tuned"]["ms"], res["mxnet"]["ms"]
        ort, why = res["ort"]
        if ort is None:
            notes.append(f"{name}: ONNX Runtime not timed: {why}")
        ort_s = "—" if ort is None else f"{ort:.2f}"
        ratio = "—" if ort is None else f"{t / ort:.2f}"
        ab = res["ab"]
        print(f"| {name} | {u:.2f} | {t:.2f} | {m:.2f} | {ort_s} | {ratio} | {u / t:.2f}x | "
              f"{ab['untuned_ms']:.2f} / {ab['tuned_ms']:.2f} "
              f"({ab['untuned_ms'] / ab['tuned_ms']:.2f}x) | "
              f"{tune_s / 60:.1f} min, {trials} trials | {res['untuned']['err']:.1e} / "
              f"{res['tuned']['err']:.1e} |")
    for n in notes:
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

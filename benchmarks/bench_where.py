"""Where a model's run time goes: each kernel timed alone (warm caches), inside the real
sequence (its input just written by its producer, on whichever core wrote it) and cold (after
a cache-evicting sweep), next to whole runs of the graph, and optionally ONNX Runtime's own
per-node profile of the same network at the same thread count.

The model is a Gluon model-zoo network with seeded random weights, built by this checkout at
opt level 3 for the host. ``GraphModule.profile(mode=...)`` does the per-kernel timing; whole
runs and the profile passes are interleaved in rounds, so the machine's load falls on all of
them alike. ``--ort`` runs ONNX Runtime with profiling in the peers' virtual environment of
``bench_mxnet.py`` (``benchmarks/.peers-venv``; skipped with the reason when missing) on the
network exported by ``mx.onnx.export_model``, and lists its nodes' minimum times beside ours
when both have the same number of convolutions (then they are the same layers in order).

``--against ROOT`` instead compares the kernels of this checkout's build with those of another
checkout's (e.g. ``/work/main``) *inside the sequence*: both builds are exported (each by its own
checkout, ``bench_ab.py build``), loaded in this process and profiled with
``mode="sequence"`` alternately (A, B, then B, A: the second of a pair was up to 12% off), the
best round of each kernel kept. A kernel timed alone can mislead: MobileNet's stride-1
depthwise layers ran 1.2-1.55x faster alone with their padded input in a pass of its own, and
0.81-0.93x as fast as before inside the model (one Zen 3 core, 20 rounds). Identical kernels
agreed within 1% over 20 rounds and within 6-10% over 10 rounds of a busier machine (the large
ones; sub-0.01 ms kernels scatter more): use 20 rounds or more.

Usage::

    python benchmarks/bench_where.py --model mobilenet1.0 --threads 2
    python benchmarks/bench_where.py --model mobilenetv2_1.0 --threads 1 --rounds 20 --ort
    python benchmarks/bench_where.py --model mobilenet1.0 --threads 1 --against /work/main

Prints per kernel: ms alone / in sequence / cold (each the best of the rounds; a round times
a kernel alone as the mean of 3 runs in a row, in sequence and cold once), the sums, and the whole run's best and median.
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

_ORT_SCRIPT = r"""
import collections, json, sys
import numpy as np, onnxruntime as ort
path, threads, rounds, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.log_severity_level = 3
so.enable_profiling = True
so.profile_file_prefix = prefix
sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
x = np.load(path + ".x.npy")
feed = {sess.get_inputs()[0].name: x}
for _ in range(5):
    sess.run(None, feed)
for _ in range(rounds):
    sess.run(None, feed)
events = json.load(open(sess.end_profiling()))
per = collections.OrderedDict()
for e in events:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        per.setdefault(e["name"][:-len("_kernel_time")], [e["args"].get("op_name"), []])[1].append(
            e["dur"] / 1e6)
print("RESULT " + json.dumps([[k, v[0], min(v[1]), sorted(v[1])[len(v[1]) // 2]]
                              for k, v in per.items()]))
"""


def _kind(name: str) -> str:
    for key, kind in (("depthwise", "depthwise"), ("conv2d", "conv2d"), ("dense", "dense"),
                      ("layout_transform", "layout"), ("pool", "pool")):
        if key in name:
            return kind
    return "other"


def ort_profile(model: str, net, x, threads: int, rounds: int, venv: str):
    """``[(node, op, min s, median s)]`` of ONNX Runtime's profile, or a reason string."""
    import mxnet as mx
    import numpy as np

    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        return f"no {py} (bench_mxnet.py creates it)"
    with tempfile.TemporaryDirectory() as d:
        net.hybridize()
        net(mx.nd.array(x))
        prefix = os.path.join(d, "m")
        net.export(prefix)
        path = prefix + ".onnx"
        try:
            import onnx

            mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                 [x.shape], [np.float32], path)
            m = onnx.load(path)
            inits = {t.name for t in m.graph.initializer}  # weights as constants (see
            keep = [i for i in m.graph.input if i.name not in inits]  # bench_mxnet.py)
            del m.graph.input[:]
            m.graph.input.extend(keep)
            onnx.save(m, path)
        except Exception as e:  # the reason is printed instead of ORT's column
            return f"ONNX export failed: {type(e).__name__}: {e}"[:200]
        np.save(path + ".x.npy", x)
        r = subprocess.run([py, "-c", _ORT_SCRIPT, path, str(threads), str(rounds),
                            os.path.join(d, "ortprof")], capture_output=True, text=True,
                           timeout=600)
        for line in r.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        return f"onnxruntime failed: {(r.stderr or r.stdout).strip()[-200:]}"


def compare(a) -> None:
    """Per-kernel in-sequence times of this checkout's build against ``a.against``'s."""
    import numpy as np
    import tvm

    from relay_tvm.runtime import GraphModule, load_module

    env = dict(os.environ, TVM_NUM_THREADS="1")  # building needs no thread pool
    with tempfile.TemporaryDirectory() as tmp:
        gms = []
        for tag, root in (("against", os.path.abspath(a.against)), ("this", ROOT)):
            out = os.path.join(tmp, f"{a.model}.{tag}.so")
            subprocess.run([sys.executable, os.path.join(HERE, "bench_ab.py"), "build", root,
                            out, a.model], check=True, env=env, cwd=tmp)
            gm = GraphModule(load_module(out)["default"](tvm.cpu(0)))
            gm.set_input("data", np.load(out + ".input.npy"))
            gm.run()
            gms.append(gm)
    np.testing.assert_allclose(gms[1].get_output(0).numpy(), gms[0].get_output(0).numpy(),
                               rtol=1e-4, atol=1e-4)
    runs = [[], []]
    for r in range(a.rounds):
        for k in (0, 1) if r % 2 == 0 else (1, 0):
            runs[k].append(gms[k].profile(repeat=1, mode="sequence"))
    best = [np.min([[t for _, _, t in p] for p in rs], axis=0) for rs in runs]
    names = [[n for _, n, _ in rs[0]] for rs in runs]
    print(f"{a.model}, {gms[0].num_threads} threads, best of {a.rounds} rounds in sequence; "
          f"A = {a.against}, B = {ROOT}")
    if names[0] == names[1]:
        print(f"{'A ms':>8} {'B ms':>8} {'A/B':>6}  kernel")
        for n, ta, tb in zip(names[0], best[0], best[1]):
            print(f"{ta * 1e3:>8.3f} {tb * 1e3:>8.3f} {ta / tb:>6.3f}  "
                  f"{n.replace('tvmgen_default_fused_', '')[:60]}")
    else:
        print(f"the builds differ in their kernels ({len(names[0])} vs {len(names[1])}): "
              "totals only")
    print(f"sum A {best[0].sum() * 1e3:.3f} ms, B {best[1].sum() * 1e3:.3f} ms, A/B "
          f"{best[0].sum() / best[1].sum():.3f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mobilenet1.0")
    ap.add_argument("--threads", type=int, default=None, help="TVM_NUM_THREADS (default: all)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--ort", action="store_true", help="ONNX Runtime's per-node profile too")
    ap.add_argument("--peers-venv", default=os.path.join(HERE, ".peers-venv"))
    ap.add_argument("--against", help="another checkout: per-kernel A/B in sequence")
    a = ap.parse_args(argv)
    if a.threads:
        os.environ["TVM_NUM_THREADS"] = str(a.threads)
    sys.path.insert(0, ROOT)
    if a.against:
        compare(a)
        return
    import numpy as np
    import tvm

    import relay_tvm as relay
    from relay_tvm.runtime import GraphModule
    from relay_tvm.testing.gluon import random_zoo_model, zoo_image_size

    size = zoo_image_size(a.model)
    net, x = random_zoo_model(a.model, (1, 3, size, size))
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("data", x)
    gm.run()
    print(f"{a.model}, {gm.num_threads} threads, {a.rounds} rounds")
    whole, per = [], {"alone": [], "sequence": [], "cold": []}
    for _ in range(a.rounds):
        for _ in range(3):
            t = time.perf_counter()
            gm.run()
            whole.append(time.perf_counter() - t)
        for mode in per:
            per[mode].append(gm.profile(number=3, repeat=1, mode=mode))
    rows = []
    for k, (nid, name, _) in enumerate(per["alone"][0]):
        # the best round: on a shared machine the other processes' load only adds
        med = {m: min(r[k][2] for r in runs) for m, runs in per.items()}
        rows.append((nid, name, med))
    print(f"{'node':>5} {'alone':>8} {'in seq':>8} {'cold':>8}  kernel (ms, best of the rounds)")
    for nid, name, med in rows:
        short = name.replace("tvmgen_default_fused_", "")[:60]
        print(f"{nid:>5} {med['alone'] * 1e3:>8.3f} {med['sequence'] * 1e3:>8.3f} "
              f"{med['cold'] * 1e3:>8.3f}  {short}")
    kinds = sorted({_kind(n) for _, n, _ in rows})
    for kind in kinds + ["all"]:
        sel = [m for _, n, m in rows if kind in ("all", _kind(n))]
        print(f"sum {kind:<10} alone {sum(m['alone'] for m in sel) * 1e3:8.3f}  in seq "
              f"{sum(m['sequence'] for m in sel) * 1e3:8.3f}  cold "
              f"{sum(m['cold'] for m in sel) * 1e3:8.3f}  ({len(sel)} kernels)")
    seq = sum(m["sequence"] for _, _, m in rows)
    print(f"whole run: best {min(whole) * 1e3:.3f} ms, median {np.median(whole) * 1e3:.3f} ms "
          f"({len(whole)} runs); best - in-sequence sum {(min(whole) - seq) * 1e3:+.3f} ms, "
          f"median - best {(np.median(whole) - min(whole)) * 1e3:+.3f} ms")
    if a.ort:
        res = ort_profile(a.model, net, x, gm.num_threads, a.rounds * 3, a.peers_venv)
        if isinstance(res, str):
            print(f"ONNX Runtime: skipped: {res}")
            return
        print(f"ONNX Runtime per node (min / median of {a.rounds * 3} runs): sum of minima "
              f"{sum(r[2] for r in res) * 1e3:.3f} ms, of medians "
              f"{sum(r[3] for r in res) * 1e3:.3f} ms")
        ours = [(n, m) for _, n, m in rows if "conv2d" in n]
        theirs = [r for r in res if r[1] == "Conv"]
        if len(ours) == len(theirs):
            print(f"{'ours seq':>9} {'ORT min':>8} {'ORT med':>8}  layer")
            for (n, m), r in zip(ours, theirs):
                print(f"{m['sequence'] * 1e3:>9.3f} {r[2] * 1e3:>8.3f} {r[3] * 1e3:>8.3f}  "
                      f"{n.replace('tvmgen_default_fused_', '')[:40]} / {r[0][:30]}")
        else:
            for r in res:
                print(f"{r[2] * 1e3:>8.3f} {r[3] * 1e3:>8.3f}  {r[1]} {r[0][:50]}")


if __name__ == "__main__":
    main()

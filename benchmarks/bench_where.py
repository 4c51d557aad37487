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

Usage::

    python benchmarks/bench_where.py --model mobilenet1.0 --threads 2
    python benchmarks/bench_where.py --model mobilenetv2_1.0 --threads 1 --rounds 20 --ort

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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mobilenet1.0")
    ap.add_argument("--threads", type=int, default=None, help="TVM_NUM_THREADS (default: all)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--ort", action="store_true", help="ONNX Runtime's per-node profile too")
    ap.add_argument("--peers-venv", default=os.path.join(HERE, ".peers-venv"))
    a = ap.parse_args(argv)
    if a.threads:
        os.environ["TVM_NUM_THREADS"] = str(a.threads)
    sys.path.insert(0, ROOT)
    import numpy as np
    import tvm

    import relay_tvm as relay
    from relay_tvm.runtime import GraphModule
    from relay_tvm.testing.gluon import random_zoo_model

    size = 299 if a.model.startswith("inception") else 224
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
    print(f"whole run: best {min(whole) * 1e3:.3f} ms, median {np.median(whole) * 1e3:.3f} ms "
          f"({len(whole)} runs)")
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

"""Batch-1 latency of Gluon model-zoo networks: relay_tvm against MXNet, ONNX Runtime, OpenVINO.

    python benchmarks/bench_mxnet.py                       # all models, all usable cores
    python benchmarks/bench_mxnet.py --models resnet18_v1 mobilenet1.0 --repeat 10
    python benchmarks/bench_mxnet.py --mcpu haswell        # relay_tvm built for AVX2
    python benchmarks/bench_mxnet.py --processes 3         # each engine in 3 processes
    python benchmarks/bench_mxnet.py --models resnet18_v1 --engines relay_tvm mxnet --int8
                                     # + relay.quantize's int8 program and MXNet's own int8
                                     # model (quantize_net): "int8 / fp32" and "relay_tvm
                                     # int8 / MXNet int8" columns

Fair by construction:

- every engine runs in its OWN process (spinning thread pools of two runtimes in one process
  steal each other's cores), one after the other;
- all engines get the same thread count (``--threads``, default: every usable core):
  ``OMP_NUM_THREADS``/``TVM_NUM_THREADS``/``MKL_NUM_THREADS`` in their environment, ONNX Runtime's
  ``intra_op_num_threads``, OpenVINO's ``INFERENCE_NUM_THREADS`` (f32 precision, latency hint).
  One more relay_tvm column runs the same library with NO thread variable set: what a user gets;
- the weights are the same for all: each model is built once (``pretrained=False``, Xavier
  weights, random batch-norm statistics, seed 0), exported to MXNet symbol JSON + params and to
  ONNX (``mx.onnx.export_model``, needs ``onnx<1.15``) in a temporary directory, and every
  engine loads those files; each output is compared with MXNet's (max abs difference);
- each engine is timed the same way: the median wall time of ``--repeat`` single inferences from
  Python after ``--warmup`` ones (input already in memory, output left in the engine's buffer).

MXNet 1.9.1 (MKLDNN) runs in this Python; ONNX Runtime and OpenVINO need numpy 2, which MXNet
cannot load, so they run in a second virtual environment (``benchmarks/.peers-venv``, created
with ``python -m venv`` + ``pip install onnxruntime openvino numpy`` on first use). A peer that
does not install or fails to run is skipped with the reason printed.

relay_tvm is the checkout this script lives in (not an installed copy), compiled once per model
(opt level 3); the default-threads column loads the exported library.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # the relay_tvm of this checkout
import _machine  # noqa: E402

MODELS = ["resnet18_v1", "resnet50_v1", "mobilenet1.0", "mobilenetv2_1.0", "squeezenet1.0",
          "vgg16", "inceptionv3"]
GOAL = {"resnet18_v1": 0.8, "resnet50_v1": 0.8}  # relay_tvm default / fastest peer; others 1.0
ENGINES = ["relay_tvm", "relay_tvm_default", "relay_tvm_int8", "mxnet", "mxnet_int8",
           "onnxruntime", "openvino"]
INT8_ENGINES = ["relay_tvm_int8", "mxnet_int8"]
DEFAULT_ENGINES = [e for e in ENGINES if e not in INT8_ENGINES]  # --int8 adds them
PEERS = ["onnxruntime", "openvino"]
TITLES = {"relay_tvm": "relay_tvm", "relay_tvm_default": "relay_tvm default",
          "relay_tvm_int8": "relay_tvm int8", "mxnet_int8": "MXNet int8",
          "mxnet": "MXNet", "onnxruntime": "ONNX Runtime", "openvino": "OpenVINO"}


def input_shape(model):
    # relay_tvm.testing.gluon.zoo_image_size's rule, written out: the parent process and the
    # peers' workers do not import relay_tvm (nor TVM)
    size = 299 if "inception" in model.lower() else 224
    return (1, 3, size, size)


# ----------------------------------------------------------------------------- worker side

CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = time.perf_counter


def _time(fn, warmup, repeat, warmup_s=1.0):
    # At least `warmup` runs and `warmup_s` seconds (at most 100 runs): MXNet's oneDNN creates
    # its primitives over the first few calls, OpenVINO and TVM warm their thread pools.
    clock = _clock
    t0 = time.perf_counter()
    for i in range(100):
        if i >= warmup and time.perf_counter() - t0 >= warmup_s:
            break
        fn()
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    times.sort()
    return {"median_ms": times[len(times) // 2] * 1e3, "min_ms": times[0] * 1e3}


def work_export(a):
    import mxnet as mx
    import numpy as np

    from relay_tvm.testing.gluon import random_zoo_model

    shape = input_shape(a.model)
    # random weights, non-trivial batch-norm statistics: the output check means more
    net, x = random_zoo_model(a.model, shape)
    net.hybridize()
    net(mx.nd.array(x))
    prefix = os.path.join(a.dir, "model")
    net.export(prefix)
    np.save(os.path.join(a.dir, "x.npy"), x)
    res = {"version": f"MXNet {mx.__version__}"}
    try:
        import onnx

        path = os.path.join(a.dir, "model.onnx")
        mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [shape],
                             [np.float32], path)
        m = onnx.load(path)
        # MXNet lists the weights as graph inputs too; ONNX Runtime then treats them as
        # overridable and skips constant folding / conv+batch-norm fusion. Keep only the data.
        inits = {t.name for t in m.graph.initializer}
        keep = [i for i in m.graph.input if i.name not in inits]
        del m.graph.input[:]
        m.graph.input.extend(keep)
        onnx.save(m, path)
        res["onnx"] = f"onnx {onnx.__version__}"
    except Exception as e:  # reported as the peers' skip reason
        res["onnx_error"] = f"ONNX export failed: {type(e).__name__}: {e}"[:300]
    return res, None


def work_mxnet(a):
    import mxnet as mx
    import numpy as np

    x = mx.nd.array(np.load(os.path.join(a.dir, "x.npy")))
    blk = mx.gluon.SymbolBlock.imports(os.path.join(a.dir, "model-symbol.json"), ["data"],
                                       os.path.join(a.dir, "model-0000.params"), ctx=mx.cpu())
    mkldnn = mx.runtime.Features().is_enabled("MKLDNN")
    if mkldnn:  # MXNet 1.9's CPU inference path: oneDNN operator fusion (conv+bn+relu, ...)
        blk.optimize_for(x, backend="MKLDNN", static_alloc=True, static_shape=True)
        mode = "MKLDNN subgraph, static_alloc"
    else:
        blk.hybridize(static_alloc=True, static_shape=True)
        mode = "hybridized, static_alloc (no MKLDNN)"
    res = _time(lambda: blk(x).wait_to_read(), a.warmup, a.repeat, a.warmup_s)
    res["version"] = f"MXNet {mx.__version__} ({mode})"
    res["threads"] = int(os.environ.get("OMP_NUM_THREADS", "0")) or None
    return res, blk(x).asnumpy()


def _calibration_images(model):
    """The 32 calibration inputs both int8 engines use: noise with a random colour cast
    (seed 1)."""
    import numpy as np

    rng = np.random.default_rng(1)
    shape = input_shape(model)
    return [(rng.normal(0, 2, (1, 3, 1, 1)) + rng.uniform(-1, 1, shape)).astype("float32")
            for _ in range(32)]


def work_mxnet_int8(a):
    """MXNet's own int8 model of the same network: ``mx.contrib.quantization.quantize_net``
    (MKLDNN; int8 weights, uint8 / int8 activations chosen by MXNet, ``calib_mode="naive"``:
    min / max over the 32 calibration images relay_tvm_int8 uses), hybridized with
    static_alloc. Needs MXNet's MKLDNN backend (its only int8 CPU path)."""
    import mxnet as mx
    import numpy as np
    from mxnet.contrib.quantization import quantize_net

    if not mx.runtime.Features().is_enabled("MKLDNN"):
        raise RuntimeError("MXNet's int8 CPU path needs its MKLDNN backend")
    x = mx.nd.array(np.load(os.path.join(a.dir, "x.npy")))
    blk = mx.gluon.SymbolBlock.imports(os.path.join(a.dir, "model-symbol.json"), ["data"],
                                       os.path.join(a.dir, "model-0000.params"), ctx=mx.cpu())
    cal = np.concatenate(_calibration_images(a.model))
    t = time.perf_counter()
    qnet = quantize_net(blk, quantized_dtype="auto", calib_mode="naive",
                        calib_data=mx.io.NDArrayIter(data={"data": cal}, batch_size=8),
                        num_calib_examples=len(cal), ctx=mx.cpu())
    quantize_s = time.perf_counter() - t
    qnet.hybridize(static_alloc=True, static_shape=True)
    res = _time(lambda: qnet(x).wait_to_read(), a.warmup, a.repeat, a.warmup_s)
    res["version"] = f"MXNet {mx.__version__} int8 (quantize_net, MKLDNN, naive calibration)"
    res["threads"] = int(os.environ.get("OMP_NUM_THREADS", "0")) or None
    res["quantize_s"] = quantize_s
    return res, qnet(x).asnumpy()


def work_relay(a):

    import relay_tvm as relay
    from relay_tvm.runtime import load_module

    res = {}
    so = os.path.join(a.dir, "relay_tvm.so")
    if (a.engine == "relay_tvm" and not a.reuse_build) or not os.path.exists(so):
        t = time.perf_counter()
        mod, params = relay.frontend.from_mxnet(
            os.path.join(a.dir, "model-symbol.json"), shape={"data": input_shape(a.model)},
            arg_params=os.path.join(a.dir, "model-0000.params"))
        res["import_s"] = time.perf_counter() - t
        t = time.perf_counter()
        with relay.transform.PassContext(opt_level=a.opt_level):
            lib = relay.build(mod, target=a.target, params=params)
        res["compile_s"] = time.perf_counter() - t
        lib.export_library(so)
    else:
        lib = load_module(so)
    return _time_relay_lib(lib, a, res)


def _time_relay_lib(lib, a, res):
    """Time a relay_tvm build on the saved input (both relay_tvm workers): ``res`` gains the
    timings, the thread count and the version line; returns ``(res, output)``."""
    import numpy as np
    import tvm

    from relay_tvm.runtime import GraphModule

    gm = GraphModule(lib["default"](tvm.cpu(0)))
    x = np.load(os.path.join(a.dir, "x.npy"))

    def run():
        gm.set_input("data", x)
        gm.run()

    res.update(_time(run, a.warmup, a.repeat, a.warmup_s))
    nthreads = getattr(gm, "num_threads", None)
    if nthreads is None:
        f = tvm.get_global_func("runtime.NumThreads", allow_missing=True)
        nthreads = f() if f is not None else None
    res["threads"] = int(nthreads) if nthreads is not None else None
    res["version"] = f"relay_tvm {_machine.git_revision(ROOT)} on TVM {tvm.__version__}, " \
                     f"target {a.target!r}"
    return res, gm.get_output(0).numpy()


def work_relay_int8(a):
    """relay.quantize of the same model: percentile calibration on 32 noise images with a
    random colour cast (seed 1), per-output-channel weight scales (``weight_scale=
    "channel_max"``) and unsigned 8-bit activations after ReLU (``dtype_input="uint8"``), the
    configuration tests/quantize/test_quantize_resnet.py measures; then the int8 program
    compiled and timed like relay_tvm's."""
    import relay_tvm as relay

    res = {}
    t = time.perf_counter()
    mod, params = relay.frontend.from_mxnet(
        os.path.join(a.dir, "model-symbol.json"), shape={"data": input_shape(a.model)},
        arg_params=os.path.join(a.dir, "model-0000.params"))
    res["import_s"] = time.perf_counter() - t
    cal = [{"data": x} for x in _calibration_images(a.model)]
    t = time.perf_counter()
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="channel_max",
                                dtype_input="uint8"):
        qmod = relay.quantize.quantize(mod, params, dataset=cal)
    res["quantize_s"] = time.perf_counter() - t
    t = time.perf_counter()
    with relay.transform.PassContext(opt_level=a.opt_level):
        lib = relay.build(qmod, target=a.target)
    res["compile_s"] = time.perf_counter() - t
    return _time_relay_lib(lib, a, res)


def work_onnxruntime(a):
    import numpy as np
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(os.path.join(a.dir, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(a.dir, "x.npy"))
    feed = {sess.get_inputs()[0].name: x}
    res = _time(lambda: sess.run(None, feed), a.warmup, a.repeat, a.warmup_s)
    res["version"] = f"ONNX Runtime {ort.__version__}"
    res["threads"] = a.threads
    return res, sess.run(None, feed)[0]


def work_openvino(a):
    import numpy as np
    import openvino as ov

    core = ov.Core()
    model = core.read_model(os.path.join(a.dir, "model.onnx"))
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": a.threads, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32"})
    req = compiled.create_infer_request()
    x = np.load(os.path.join(a.dir, "x.npy"))
    res = _time(lambda: req.infer({0: x}), a.warmup, a.repeat, a.warmup_s)
    res["version"] = f"OpenVINO {ov.__version__} (f32, LATENCY)"
    res["threads"] = int(compiled.get_property("INFERENCE_NUM_THREADS"))
    return res, np.array(req.get_output_tensor(0).data)


WORKERS = {"export": work_export, "mxnet": work_mxnet, "relay_tvm": work_relay,
           "relay_tvm_default": work_relay, "relay_tvm_int8": work_relay_int8,
           "mxnet_int8": work_mxnet_int8,
           "onnxruntime": work_onnxruntime, "openvino": work_openvino}


def worker_main(a):
    import warnings

    global _clock
    _clock = CLOCK[a.clock]

    warnings.filterwarnings("ignore")
    res, out = WORKERS[a.engine](a)
    if out is not None:
        import numpy as np

        np.save(os.path.join(a.dir, f"out_{a.engine}.npy"), np.asarray(out, dtype="float32"))
    print("RESULT " + json.dumps(res), flush=True)


# ----------------------------------------------------------------------------- driver side

def peers_python(a):
    """``({peer: python}, {peer: reason})``: the interpreter to run each peer with, or why not."""
    if a.no_peers:
        return {}, {p: "--no-peers" for p in PEERS}
    py = a.peers_python
    log = ""
    if py is None:
        venv = a.peers_venv
        py = os.path.join(venv, "bin", "python")
        if not os.path.exists(py):
            print(f"... creating {venv} (onnxruntime, openvino, numpy)", flush=True)
            r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True,
                               text=True)
            if r.returncode == 0:
                for pkgs in (["onnxruntime", "openvino", "numpy"], ["onnxruntime", "numpy"],
                             ["openvino", "numpy"]):
                    r = subprocess.run([py, "-m", "pip", "install", "-q", *pkgs],
                                       capture_output=True, text=True, timeout=1800)
                    if r.returncode == 0:
                        break
                    log = (r.stderr or r.stdout).strip().splitlines()[-1:]
                    log = log[0] if log else ""
            else:
                log = r.stderr.strip()[-200:]
    found, why = {}, {}
    for p in PEERS:
        r = subprocess.run([py, "-c", f"import {p}"], capture_output=True, text=True) \
            if os.path.exists(py) else None
        if r is not None and r.returncode == 0:
            found[p] = py
        else:
            err = (f"no interpreter {py}" if r is None else
                   r.stderr.strip().splitlines()[-1] if r.stderr.strip() else
                   f"exit {r.returncode}")
            why[p] = f"{p} does not import in {py}: {err}" + (f" (pip: {log})" if log else "")
            if a.peers_python is None:
                why[p] += f"; delete {a.peers_venv} to install again"
    return found, why


def run_worker(engine, model, d, a, python, threads, reuse_build=False):
    """Run one engine in a fresh process; ``(result dict, None)`` or ``(None, reason)``.
    ``reuse_build``: the relay_tvm engine loads the library an earlier process built."""
    env = {k: v for k, v in os.environ.items() if k not in _machine.THREAD_VARS}
    if engine != "relay_tvm_default":
        env.update(_machine.thread_env(threads))
    cmd = [python, os.path.abspath(__file__), "--worker", engine, "--dir", d,
           "--models", model, "--threads", str(threads), "--repeat", str(a.repeat),
           "--warmup", str(a.warmup), "--warmup-s", str(a.warmup_s),
           "--opt-level", str(a.opt_level), "--target", a.target, "--clock", a.clock]
    if reuse_build:
        cmd.append("--reuse-build")
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {a.timeout} s"
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[7:]), None
    tail = [s for s in (r.stderr + r.stdout).strip().splitlines() if s.strip()][-1:]
    return None, f"exit {r.returncode}: {tail[0][:300] if tail else 'no output'}"


def bench_model(model, a, peers, skip, threads):
    import numpy as np

    d = tempfile.mkdtemp(prefix=f"bench_{model}_")
    row = {"model": model, "shape": input_shape(model), "ms": {}, "diff": {}, "skip": {}}
    try:
        t = time.perf_counter()
        exp, err = run_worker("export", model, d, a, sys.executable, threads)
        if err:
            raise RuntimeError(f"{model}: export failed: {err}")
        print(f"    exported in {time.perf_counter() - t:.1f} s", flush=True)
        if exp.get("onnx"):
            row["onnx"] = f"ONNX export by {exp['onnx']} (mx.onnx.export_model)"
        engines = [e for e in a.engines if not (
            e in PEERS and (e not in peers or "onnx_error" in exp))]
        for e in set(a.engines) - set(engines):
            row["skip"][e] = skip.get(e) or exp.get("onnx_error")
        runs: dict = {}
        for k in range(a.processes):
            # the engines in turn, the order rotated each round: a slow spell of the machine
            # falls on different engines
            for eng in engines[k % len(engines):] + engines[:k % len(engines)]:
                if eng in row["skip"]:
                    continue
                before = _machine.vcpu_round_trip_ns()
                res, err = run_worker(eng, model, d, a, peers.get(eng, sys.executable),
                                      threads, reuse_build=k > 0)
                trip = (before, _machine.vcpu_round_trip_ns())
                if err:
                    row["skip"][eng] = err
                    print(f"    {TITLES[eng]:<18} FAILED: {err}", flush=True)
                    continue
                runs.setdefault(eng, []).append(res["median_ms"])
                row.setdefault("res", {}).setdefault(eng, res)
                row.setdefault("round_trip_ns", {}).setdefault(eng, []).append(trip)
                extra = "".join(f", {k2} {res[k2]:.1f} s" for k2 in ("import_s", "compile_s")
                                if k2 in res)
                if None not in trip:  # the machine's state around the process (_machine)
                    extra += f", vCPU round trip {trip[0]:.0f} / {trip[1]:.0f} ns"
                print(f"    {TITLES[eng]:<18} {res['median_ms']:9.2f} ms (min "
                      f"{res['min_ms']:.2f}, {res.get('threads')} threads{extra})", flush=True)
        for eng, ms in runs.items():
            if eng not in row["skip"]:
                row["ms"][eng] = float(np.median(ms))
                row["ms_processes"] = dict(row.get("ms_processes", {}), **{eng: ms})
        ref_path = os.path.join(d, "out_mxnet.npy")
        if os.path.exists(ref_path):
            ref = np.load(ref_path)
            row["ref_max"] = float(np.abs(ref).max())
            for eng in row["ms"]:
                p = os.path.join(d, f"out_{eng}.npy")
                if eng != "mxnet" and os.path.exists(p):
                    out = np.load(p)
                    row["diff"][eng] = float(np.abs(out.reshape(ref.shape) - ref).max()) \
                        if out.size == ref.size else float("nan")
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
    return row


def _fmt(v, spec=".2f", none="—"):
    return none if v is None else format(v, spec)


def _diff(d, ref_max):
    if d is None:
        return "—"
    return f"{d:.1e} ({d / ref_max:.0e} rel)" if ref_max else f"{d:.1e}"


def report(rows, a, threads):
    engines = a.engines
    peers = [e for e in engines if e in ("mxnet", *PEERS)]
    dthreads = {r["res"]["relay_tvm_default"].get("threads") for r in rows
                if "relay_tvm_default" in r.get("res", {})}
    title = dict(TITLES, relay_tvm=f"relay_tvm ({threads} thr)",
                 relay_tvm_int8=f"relay_tvm int8 ({threads} thr)",
                 mxnet_int8=f"MXNet int8 ({threads} thr)",
                 relay_tvm_default=f"relay_tvm default ({'/'.join(map(str, dthreads)) or '?'}"
                                   " thr)",
                 mxnet=f"MXNet ({threads} thr)", onnxruntime=f"ONNX Runtime ({threads} thr)",
                 openvino=f"OpenVINO ({threads} thr)")
    ours = [e for e in ("relay_tvm", "relay_tvm_default") if e in engines]
    head = ["model", "input", *[title[e] + " ms" for e in engines], "fastest peer",
            *[f"{title[e].split(' (')[0]} / fastest" for e in ours], "goal (default)",
            "compile s"]
    int8 = "relay_tvm_int8" in engines and "relay_tvm" in engines
    if int8:
        head.append("int8 / fp32 (goal ≤ 0.8 on AVX2)")
    vs_mx = "relay_tvm_int8" in engines and "mxnet_int8" in engines
    if vs_mx:
        head.append("relay_tvm int8 / MXNet int8")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        best = min(((r["ms"][p], p) for p in peers if p in r["ms"]), default=None)
        cells = [r["model"], f"{r['shape'][2]}×{r['shape'][3]}"]
        cells += [_fmt(r["ms"].get(e)) for e in engines]
        cells.append(f"{TITLES[best[1]]}" if best else "—")
        ratios = {e: (r["ms"][e] / best[0] if best and e in r["ms"] else None) for e in ours}
        cells += [_fmt(ratios[e], ".2f") + ("×" if ratios[e] else "") for e in ours]
        goal = GOAL.get(r["model"], 1.0)
        rd = ratios.get("relay_tvm_default")
        cells.append("—" if rd is None else
                     f"≤ {goal:.1f}: {'met' if rd <= goal else '**not met**'}")
        res = r.get("res", {})
        compile_s = res.get("relay_tvm", res.get("relay_tvm_default", {})).get("compile_s")
        cells.append(_fmt(compile_s, ".1f"))
        if int8:
            i8, f32 = r["ms"].get("relay_tvm_int8"), r["ms"].get("relay_tvm")
            cells.append(_fmt(i8 / f32 if i8 and f32 else None, ".2f") + ("×" if i8 and f32
                                                                         else ""))
        if vs_mx:
            i8, m8 = r["ms"].get("relay_tvm_int8"), r["ms"].get("mxnet_int8")
            cells.append(_fmt(i8 / m8 if i8 and m8 else None, ".2f") + ("×" if i8 and m8
                                                                        else ""))
        lines.append("| " + " | ".join(cells) + " |")
    others = [e for e in engines if e != "mxnet"]
    lines += ["", "Max abs difference of each output from MXNet's (1000 logits), and relative to "
              "the largest MXNet logit:", "",
              "| model | max abs MXNet output | " + " | ".join(TITLES[e] for e in others) + " |",
              "|" + "---|" * (len(others) + 2)]
    for r in rows:
        lines.append(f"| {r['model']} | {_fmt(r.get('ref_max'), '.3g')} | " +
                     " | ".join(_diff(r["diff"].get(e), r.get("ref_max")) for e in others) + " |")
    skips = {(e, why) for r in rows for e, why in r["skip"].items()}
    if skips:
        lines += ["", "Skipped:"] + [f"- {TITLES[e]}: {why}" for e, why in sorted(skips)]
    trips = sorted(t for r in rows for ts in r.get("round_trip_ns", {}).values()
                   for pair in ts for t in pair if t is not None)
    if trips:
        lines += ["", f"Cache-line round trip between the first two usable cores, measured "
                  f"before and after each process: {trips[0]:.0f}-{trips[-1]:.0f} ns, median "
                  f"{trips[len(trips) // 2]:.0f} (on the idle 2-vCPU VMs of RESULTS.md: 50-90 ns "
                  f"while the vCPUs share a cache, 320-380 ns while they do not, when the "
                  f"multi-threaded engines run 10-15% slower; another process on a core "
                  f"makes it longer too; per process in the log above)"]
    versions = {r2["version"] for r in rows for r2 in r.get("res", {}).values()}
    versions |= {r["onnx"] for r in rows if r.get("onnx")}
    lines += ["", "Versions: " + "; ".join(sorted(versions))]
    return "\n".join(lines)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=MODELS,
                    help=f"model-zoo names (space or comma separated; default all: {MODELS})")
    ap.add_argument("--engines", nargs="+", default=DEFAULT_ENGINES,
                    help=f"subset of {ENGINES} (default: all but relay_tvm_int8)")
    ap.add_argument("--int8", action="store_true",
                    help="add the int8 engines: relay_tvm_int8 (relay.quantize) and mxnet_int8 "
                         "(MXNet's quantize_net, MKLDNN)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for every engine (default: all usable cores)")
    ap.add_argument("--repeat", type=int, default=30, help="timed runs per engine (median)")
    ap.add_argument("--processes", type=int, default=1,
                    help="time each engine in this many fresh processes, in rounds with the "
                         "engines' order rotated; the table gives the median of their medians "
                         "(one process's latency drifts by up to 25%% on a shared VM)")
    ap.add_argument("--reuse-build", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs first (at least)")
    ap.add_argument("--warmup-s", type=float, default=1.0,
                    help="and at least this many seconds of untimed runs")
    ap.add_argument("--opt-level", type=int, default=3)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                    help="wall: latency (default). cpu: the process's CPU seconds per run, for "
                         "comparing the work each engine does on a busy machine; only "
                         "meaningful with --threads 1 (spinning pool threads count as CPU time)")
    ap.add_argument("--target", default="llvm", help="relay_tvm target (default: the host)")
    ap.add_argument("--mcpu", default=None, help="build relay_tvm for this LLVM CPU "
                    "(e.g. haswell: AVX2 code on an AVX-512 machine)")
    ap.add_argument("--peers-venv", default=os.path.join(HERE, ".peers-venv"))
    ap.add_argument("--peers-python", default=None,
                    help="an interpreter with onnxruntime/openvino instead of the venv")
    ap.add_argument("--no-peers", action="store_true", help="skip ONNX Runtime and OpenVINO")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per engine process")
    ap.add_argument("--keep", action="store_true", help="keep the exported files")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--dir", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.models = [m for s in a.models for m in s.split(",") if m]
    a.engines = [e for s in a.engines for e in s.split(",") if e]
    if a.int8:
        a.engines += [e for e in INT8_ENGINES if e not in a.engines]
    bad = [e for e in a.engines if e not in ENGINES]
    if bad:
        ap.error(f"unknown engines {bad}; choose from {ENGINES}")
    if a.processes < 1:
        ap.error(f"--processes must be >= 1, got {a.processes}")
    if a.mcpu:
        a.target = f"{a.target} -mcpu={a.mcpu}"
    return a


def main(argv=None):
    a = parse_args(argv)
    if a.worker:
        a.engine, a.model = a.worker, a.models[0]
        return worker_main(a)
    m = _machine.machine(a.threads, a.target)
    threads = m["threads"]
    print(_machine.header(m))
    procs = (f"; the median over {a.processes} processes per engine (rounds of one process "
             f"per engine, order rotated)" if a.processes > 1 else "")
    print(f"batch 1, median of {a.repeat} runs after >= {a.warmup} warm-up runs and "
          f">= {a.warmup_s:g} s, each engine in its "
          f"own process{procs}; relay_tvm opt level {a.opt_level}; clock: "
          f"{'wall (latency)' if a.clock == 'wall' else 'process CPU time (work, not latency)'}",
          flush=True)
    peers, skip = peers_python(a) if any(e in PEERS for e in a.engines) else ({}, {})
    for p, why in skip.items():
        if p in a.engines:
            print(f"skipping {TITLES[p]}: {why}")
    rows = []
    t0 = time.perf_counter()
    for model in a.models:
        print(f"... {model}", flush=True)
        rows.append(bench_model(model, a, peers, skip, threads))
    print(f"\n(total {time.perf_counter() - t0:.0f} s)\n")
    print(_machine.header(m) + "\n")
    print(report(rows, a, threads))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"machine": m, "rows": rows}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()

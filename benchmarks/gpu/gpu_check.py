"""GPU check (issue 15): build CUDA libraries here, run them on a machine with an NVIDIA GPU, and
compare with the CPU build's outputs and with PyTorch. One prepared script, two steps:

    python benchmarks/gpu/gpu_check.py build [--arch sm_90] [--out benchmarks/gpu/artifacts]
        [--models resnet50_v1:1,resnet50_v1:16,mobilenetv2_1.0:1] [--dtypes float32,float16]
    python benchmarks/gpu/gpu_check.py run [--dir benchmarks/gpu/artifacts] [--repeat 100]

``build`` (any machine with relay_tvm and nvcc): each Gluon model-zoo network (random weights)
becomes a CUDA library with its weights as *inputs*, not bound (so ResNet-50's 100 MB of weights
do not travel; ``run`` makes them from the saved seed), in float32 and in float16
(``ToMixedPrecision``); the same network built for the CPU gives the reference output. Every
kernel is first compiled with ``nvcc`` for ``--arch`` (``relay_tvm.backend.cuda.compile_fatbin``),
so a failure shows here, not there. A ``manifest.json`` lists the libraries.

``run`` (the GPU machine; needs numpy, TVM's runtime with its CUDA library, ``nvcc``, and PyTorch
for the comparison row): loads TVM's CUDA runtime (``libcudart`` first, then TVM's
``tvm_runtime_cuda`` library), lets TVM compile each library's CUDA source with ``nvcc`` for the
local GPU when it loads it, checks the outputs against the CPU reference (float32: 1e-4 of the
largest logit, float16: 2e-2), and prints a table of milliseconds next to PyTorch eager and
PyTorch with CUDA graphs (torchvision's resnet50 / mobilenet_v2, the same shapes). Goal on an
H200: ResNet-50 batch 1 <= 2.72 ms, MobileNetV2 batch 1 <= 0.61 ms.

Not yet run on a GPU: no GPU has been lent to the sessions that wrote it (see the README).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = "resnet50_v1:1,resnet50_v1:16,mobilenetv2_1.0:1"


def _weights(params, seed):
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(v.shape) * 0.05).astype(v.dtype) if not k.endswith("var")
            else rng.uniform(0.5, 1.5, v.shape).astype(v.dtype) for k, v in params.items()}


def build(a):
    import mxnet as mx
    import tvm

    import relay_tvm as relay
    from relay_tvm.backend.cuda import compile_fatbin, cuda_source

    os.makedirs(a.out, exist_ok=True)
    manifest = []
    for spec in a.models.split(","):
        name, batch = spec.split(":")
        shape = (int(batch), 3, 224, 224)
        net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
        net.initialize()
        net(mx.nd.zeros((1, 3, 224, 224)))
        mod, params = relay.frontend.from_mxnet(net, shape={"data": shape})
        weights = _weights({k: v.numpy() for k, v in params.items()}, seed=0)
        x = np.random.default_rng(1).uniform(-1, 1, shape).astype("float32")
        ref_lib = relay.build(mod, target="llvm", params=weights)
        gm = relay.runtime.GraphModule(ref_lib["default"](tvm.cpu(0)))
        gm.set_input("data", x)
        gm.run()
        tag = f"{name}-b{batch}"
        np.save(os.path.join(a.out, f"{tag}-input.npy"), x)
        np.save(os.path.join(a.out, f"{tag}-ref.npy"), gm.get_output(0).numpy())
        for dtype in a.dtypes.split(","):
            m = mod
            if dtype == "float16":
                m = relay.transform.ToMixedPrecision("float16")(relay.transform.InferType()(mod))
            t0 = time.perf_counter()
            lib = relay.build(m, target=f"cuda -arch={a.arch}")
            src = cuda_source(lib)
            compile_fatbin(src, a.arch)  # fails here, with nvcc's message, if it would there
            path = f"{tag}-{dtype}.so"
            lib.export_library(os.path.join(a.out, path))
            manifest.append({"model": name, "batch": int(batch), "dtype": dtype, "lib": path,
                             "input": f"{tag}-input.npy", "ref": f"{tag}-ref.npy",
                             "weights_seed": 0, "build_s": time.perf_counter() - t0,
                             "weight_shapes": {k: [list(v.shape), str(v.dtype)]
                                               for k, v in weights.items()}})
            print(f"built {path} ({time.perf_counter() - t0:.0f} s)", flush=True)
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump({"arch": a.arch, "libs": manifest}, f, indent=1)


def _load_cuda_runtime():
    """TVM's CUDA runtime, loaded by hand (a runtime-only TVM install has it as a separate
    library); TVM then compiles each loaded module's CUDA source with nvcc for this GPU."""
    import ctypes

    import tvm_ffi

    ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
    tvm_ffi.libinfo.load_lib_ctypes("tvm_runtime_cuda")
    os.environ.setdefault("TVM_CUDA_COMPILE_MODE", "nvcc")


def _torch_ms(name, shape, dtype, repeat):
    try:
        import torch
        import torchvision
    except ImportError as e:
        return None, None, f"PyTorch not available: {e}"
    ctor = torchvision.models.resnet50 if name.startswith("resnet50") else \
        torchvision.models.mobilenet_v2
    tdt = torch.float16 if dtype == "float16" else torch.float32
    model = ctor().eval().cuda().to(tdt)
    x = torch.randn(*shape, device="cuda", dtype=tdt)
    with torch.no_grad():
        for _ in range(10):
            model(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(repeat):
            model(x)
        torch.cuda.synchronize()
        eager = (time.perf_counter() - t0) / repeat * 1e3
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model(x)
        g.replay()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(repeat):
            g.replay()
        torch.cuda.synchronize()
        graphs = (time.perf_counter() - t0) / repeat * 1e3
    return eager, graphs, None


def run(a):
    sys.path.insert(0, os.path.join(HERE, "..", ".."))
    _load_cuda_runtime()
    from relay_tvm.runtime.deploy import ExportedGraph

    with open(os.path.join(a.dir, "manifest.json")) as f:
        manifest = json.load(f)
    rows = []
    for e in manifest["libs"]:
        g = ExportedGraph(os.path.join(a.dir, e["lib"]), device="cuda")
        rng = np.random.default_rng(e["weights_seed"])
        weights = {k: (rng.standard_normal(s) * 0.05).astype(d) if not k.endswith("var")
                   else rng.uniform(0.5, 1.5, s).astype(d)
                   for k, (s, d) in e["weight_shapes"].items()}
        x = np.load(os.path.join(a.dir, e["input"]))
        inputs = {k: v for k, v in weights.items() if k in g.input_types}
        inputs["data"] = x.astype(g.input_types["data"][1])
        outs, ms = g.run(inputs, repeat=a.repeat)
        ref = np.load(os.path.join(a.dir, e["ref"]))
        err = float(np.abs(outs[0].astype("float32") - ref).max() / np.abs(ref).max())
        eager, graphs, why = _torch_ms(e["model"], x.shape, e["dtype"], a.repeat)
        rows.append((e, ms, err, eager, graphs, why))
        print(json.dumps({"lib": e["lib"], "ms": ms, "rel_err": err, "torch_eager_ms": eager,
                          "torch_graphs_ms": graphs}), flush=True)
    print("\n| model | batch | dtype | relay_tvm ms | PyTorch eager ms | PyTorch CUDA graphs ms | "
          "max rel. err vs CPU |")
    print("|---|---|---|---|---|---|---|")
    notes = set()
    for e, ms, err, eager, graphs, why in rows:
        f = (lambda v: "—" if v is None else f"{v:.3f}")
        print(f"| {e['model']} | {e['batch']} | {e['dtype']} | {ms:.3f} | {f(eager)} | "
              f"{f(graphs)} | {err:.1e} |")
        if why:
            notes.add(why)
    for n in sorted(notes):
        print(n)
    bad = [e["lib"] for e, _, err, *_ in rows if err > (2e-2 if e["dtype"] == "float16" else 1e-4)]
    if bad:
        print(f"outputs differ from the CPU reference: {bad}")
        return 1
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    b = sub.add_parser("build")
    b.add_argument("--arch", default="sm_90")
    b.add_argument("--out", default=os.path.join(HERE, "artifacts"))
    b.add_argument("--models", default=MODELS)
    b.add_argument("--dtypes", default="float32,float16")
    r = sub.add_parser("run")
    r.add_argument("--dir", default=os.path.join(HERE, "artifacts"))
    r.add_argument("--repeat", type=int, default=100)
    a = ap.parse_args(argv)
    return build(a) if a.step == "build" else run(a)


if __name__ == "__main__":
    sys.exit(main())

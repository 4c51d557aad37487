"""Training-step cost of a Gluon model-zoo network: relay_tvm's compiled first-order gradient
(``transform.gradient(mode="first_order")`` → graph executor) vs MXNet 1.9.1's
``autograd.record`` + ``backward``, each engine in its own process on 2 threads; plus relay_tvm's
forward pass on the same batch, for the "gradient within 1.5 × 3 forward passes" target.

    python benchmarks/bench_gradient.py [--model resnet18_v1] [--batch 8] [--image 224]

Random weights; BatchNorm uses its running statistics in both engines (MXNet's
``use_global_stats=True``: relay_tvm's ``nn.batch_norm`` is the inference operator), and the
data gradient is compared with MXNet's float64 one (see ``run_mxnet``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("TVM_NUM_THREADS", "2")
os.environ.setdefault("MXNET_CPU_WORKER_NTHREADS", "2")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def _net(name, shape):
    import functools

    import mxnet as mx

    mx.random.seed(0)  # the same weights in both processes

    bn = mx.gluon.nn.BatchNorm
    mx.gluon.nn.BatchNorm = functools.partial(bn, use_global_stats=True)
    try:
        net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    finally:
        mx.gluon.nn.BatchNorm = bn
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net(mx.nd.zeros(shape))
    return net


def _median_ms(fn, repeat):
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times[1:])) * 1e3


def run_mxnet(name, shape, repeat, out):
    """Timings of float32 autograd, imperative and hybridized. MXNet 1.9.1's float32 CPU
    backward through BatchNorm with ``use_global_stats`` (oneDNN) is wrong (it differs from its
    own float64 backward, which equals finite differences), so the reference gradient saved for
    the comparison comes from the float64 network."""
    import mxnet as mx

    xs = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
    res = {"engine": "mxnet"}
    for label in ("imperative", "hybridized", "float64"):
        net = _net(name, shape)
        x = mx.nd.array(xs)
        if label == "hybridized":
            net.hybridize(static_alloc=True, static_shape=True)
        if label == "float64":
            net.cast("float64")
            x = mx.nd.array(xs, dtype="float64")
        x.attach_grad()

        def step(net=net, x=x):
            with mx.autograd.record(train_mode=False):
                y = net(x)
            y.backward()
            x.grad.wait_to_read()

        if label == "float64":
            step()
            np.save(out, x.grad.asnumpy())
        else:
            res[f"{label}_ms"] = _median_ms(step, repeat)
    return res


def run_relay(name, shape, repeat, out):
    import tvm

    import relay_tvm as relay
    from relay_tvm.runtime import GraphModule

    net = _net(name, shape)
    mod, params = relay.frontend.from_mxnet(net, shape={"data": shape})
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
    t0 = time.perf_counter()
    grad = relay.transform.gradient(mod["main"], mode="first_order")
    t_ad = time.perf_counter() - t0
    res = {"engine": "relay_tvm", "gradient_s": t_ad}
    names = [p.name_hint for p in mod["main"].params]
    for label, func in (("forward", mod["main"]), ("grad", grad)):
        t0 = time.perf_counter()
        lib = relay.build(relay.IRModule.from_expr(func), target="llvm")
        res[f"{label}_compile_s"] = time.perf_counter() - t0
        gm = GraphModule(lib["default"](tvm.cpu(0)))
        for n in names:
            gm.set_input(n, x if n == "data" else np.asarray(params[n]))
        res[f"{label}_ms"] = _median_ms(gm.run, repeat)
        if label == "grad":
            np.save(out, gm.get_output(1 + names.index("data")).numpy())
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18_v1")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--engine", choices=["mxnet", "relay"], help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    shape = (a.batch, 3, a.image, a.image)
    if a.engine:
        fn = run_mxnet if a.engine == "mxnet" else run_relay
        print(json.dumps(fn(a.model, shape, a.repeat, a.out)))
        return
    rows = {}
    for engine in ("mxnet", "relay"):
        out = f"/tmp/bench_gradient_{engine}.npy"
        cmd = [sys.executable, __file__, "--engine", engine, "--out", out, "--model", a.model,
               "--batch", str(a.batch), "--image", str(a.image), "--repeat", str(a.repeat)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows[engine] = json.loads(proc.stdout.strip().splitlines()[-1])
    gm, gr = np.load("/tmp/bench_gradient_mxnet.npy"), np.load("/tmp/bench_gradient_relay.npy")
    rel = float(np.abs(gm - gr).max() / max(np.abs(gm).max(), 1e-30))
    r, m = rows["relay"], rows["mxnet"]
    print(f"{a.model} batch {a.batch} {a.image}x{a.image}, 2 threads")
    print(f"  MXNet autograd, imperative      : {m['imperative_ms']:9.1f} ms")
    print(f"  MXNet autograd, hybridized      : {m['hybridized_ms']:9.1f} ms")
    print(f"  relay_tvm compiled gradient     : {r['grad_ms']:9.1f} ms  "
          f"(AD {r['gradient_s']:.2f} s, "
          f"compile {r['grad_compile_s']:.1f} s)")
    print(f"  relay_tvm forward               : {r['forward_ms']:9.1f} ms  "
          f"(gradient / forward = {r['grad_ms'] / r['forward_ms']:.2f})")
    print(f"  data gradient max rel. difference vs MXNet (float64): {rel:.2e}")


if __name__ == "__main__":
    main()

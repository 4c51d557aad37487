"""Batch-1 inference latency of model-zoo networks: relay_tvm (compiled, llvm) vs MXNet 1.9.1,
both on 2 threads, in the same run; plus relay_tvm's import and compile times.

    python benchmarks/bench_mxnet.py [--models resnet18_v1,mobilenet1.0] [--repeat 20]

Weights are random (``get_model(name, pretrained=False)``); outputs are checked against MXNet.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("TVM_NUM_THREADS", "2")
os.environ.setdefault("MXNET_CPU_WORKER_NTHREADS", "2")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

MODELS = ["resnet18_v1", "resnet50_v1", "mobilenet1.0", "vgg16"]


def _randomize_batchnorm(net):
    import mxnet as mx

    rng = np.random.default_rng(0)
    for name, p in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape).astype("float32")))
        elif name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.2, 0.2, p.shape).astype("float32")))


def bench_one(name, repeat, opt_level, target):
    import mxnet as mx
    import tvm

    import relay_tvm as relay
    from relay_tvm.runtime import GraphModule

    shape = (1, 3, 224, 224)
    net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
    xin = mx.nd.array(x)
    net(xin)
    _randomize_batchnorm(net)  # non-trivial statistics, so the output check means something
    net.hybridize(static_alloc=True, static_shape=True)
    ref = net(xin).asnumpy()
    times = []
    for _ in range(repeat + 2):
        t0 = time.perf_counter()
        net(xin).wait_to_read()
        times.append(time.perf_counter() - t0)
    mx_ms = float(np.median(times[2:])) * 1e3

    t0 = time.perf_counter()
    mod, params = relay.frontend.from_mxnet(net, shape={"data": shape})
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with relay.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target=target, params=params)
    compile_s = time.perf_counter() - t0
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("data", x)
    gm.run()
    out = gm.get_output(0).numpy()
    err = float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-12))
    res = gm.benchmark(repeat=repeat, number=1)
    return dict(model=name, relay_ms=res.median * 1e3, mxnet_ms=mx_ms, import_s=import_s,
                compile_s=compile_s, rel_err=err)


def main(argv=None):
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--opt-level", type=int, default=3)
    ap.add_argument("--target", default="llvm")
    args = ap.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        print(f"... {name}", flush=True)
        rows.append(bench_one(name, args.repeat, args.opt_level, args.target))
    print(f"\nbatch 1, 224x224, {os.environ['OMP_NUM_THREADS']} threads, opt level "
          f"{args.opt_level}, target {args.target}, median of {args.repeat}")
    head = (f"{'model':<14}{'relay_tvm ms':>14}{'MXNet ms':>12}{'speedup':>9}"
            f"{'import s':>10}{'compile s':>11}{'max rel err':>13}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:<14}{r['relay_ms']:>14.2f}{r['mxnet_ms']:>12.2f}"
              f"{r['mxnet_ms'] / r['relay_ms']:>8.2f}x{r['import_s']:>10.2f}"
              f"{r['compile_s']:>11.2f}{r['rel_err']:>13.1e}")
    return rows


if __name__ == "__main__":
    main()

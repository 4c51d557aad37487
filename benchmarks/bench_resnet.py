"""End-to-end batch-1 latency and compile time of ResNet-18 and MobileNet on the graph executor.

The models come from ``relay_tvm.testing`` (``resnet.get_workload``, ``mobilenet.get_workload``,
tvm.relay.testing's API). Until that package exists, ResNet-18 is built here from Relay
operators with random weights (same layer structure), and MobileNet is skipped with a message.

Usage::

    python benchmarks/bench_resnet.py [--models resnet18,mobilenet] [--opt-level 3] [--check]

``--check`` also runs the model once in the reference interpreter and reports the largest
difference (slow: the interpreter is NumPy).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import relay_tvm as relay
from relay_tvm.runtime import GraphModule


def _conv_bn_relu(x, name, cin, cout, k, s, p, params, rng, relu=True):
    w = relay.var(f"{name}_weight", shape=(cout, cin, k, k))
    params[w.name_hint] = (rng.standard_normal((cout, cin, k, k)) *
                           np.sqrt(2.0 / (cin * k * k))).astype("float32")
    y = relay.nn.conv2d(x, w, strides=(s, s), padding=(p, p), channels=cout,
                        kernel_size=(k, k))
    bn = {}
    for part, init in (("gamma", 1.0), ("beta", 0.0), ("moving_mean", 0.0), ("moving_var", 1.0)):
        v = relay.var(f"{name}_bn_{part}", shape=(cout,))
        bn[part] = v
        params[v.name_hint] = (init + 0.1 * rng.standard_normal(cout)).astype("float32") \
            if part != "moving_var" else (1.0 + 0.1 * rng.random(cout)).astype("float32")
    y = relay.nn.batch_norm(y, bn["gamma"], bn["beta"], bn["moving_mean"], bn["moving_var"])[0]
    return relay.nn.relu(y) if relu else y


def resnet18_fallback(batch_size=1, image=224, num_classes=1000, seed=0):
    """ResNet-18 v1 (He et al. 2016) from Relay operators; returns ``(mod, params)``."""
    rng = np.random.default_rng(seed)
    params = {}
    data = relay.var("data", shape=(batch_size, 3, image, image))
    x = _conv_bn_relu(data, "conv0", 3, 64, 7, 2, 3, params, rng)
    x = relay.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for unit in range(2):
            s = 2 if (unit == 0 and stage > 0) else 1
            name = f"stage{stage + 1}_unit{unit + 1}"
            y = _conv_bn_relu(x, name + "_conv1", cin, cout, 3, s, 1, params, rng)
            y = _conv_bn_relu(y, name + "_conv2", cout, cout, 3, 1, 1, params, rng, relu=False)
            sc = x if (s == 1 and cin == cout) else _conv_bn_relu(
                x, name + "_sc", cin, cout, 1, s, 0, params, rng, relu=False)
            x = relay.nn.relu(relay.add(y, sc))
            cin = cout
    x = relay.nn.global_avg_pool2d(x)
    x = relay.reshape(x, (batch_size, -1))
    w = relay.var("fc_weight", shape=(num_classes, 512))
    b = relay.var("fc_bias", shape=(num_classes,))
    params["fc_weight"] = (rng.standard_normal((num_classes, 512)) * 0.05).astype("float32")
    params["fc_bias"] = np.zeros(num_classes, "float32")
    x = relay.nn.softmax(relay.nn.bias_add(relay.nn.dense(x, w), b))
    func = relay.Function(relay.analysis.free_vars(x), x)
    return relay.IRModule.from_expr(func), params


def get_model(name):
    try:
        from relay_tvm import testing
    except ImportError:
        testing = None
    if name == "resnet18":
        if testing is not None and hasattr(testing, "resnet"):
            return testing.resnet.get_workload(num_layers=18, batch_size=1), "relay_tvm.testing"
        return resnet18_fallback(), "built-in fallback"
    if name == "mobilenet":
        if testing is not None and hasattr(testing, "mobilenet"):
            return testing.mobilenet.get_workload(batch_size=1), "relay_tvm.testing"
        return None, "relay_tvm.testing.mobilenet is not available yet"
    raise SystemExit(f"unknown model {name!r}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="resnet18,mobilenet")
    ap.add_argument("--opt-level", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    print(f"{'model':<12}{'source':<20}{'compile s':>10}{'latency ms':>12}{'kernels':>9}"
          f"{'planned MB':>12}{'interm. MB':>12}")
    for name in args.models.split(","):
        model, source = get_model(name)
        if model is None:
            print(f"{name:<12}{source}")
            continue
        mod, params = model
        shape = [int(d) for d in mod["main"].params[0].type_annotation.shape]
        t = time.perf_counter()
        with relay.transform.PassContext(opt_level=args.opt_level):
            lib = relay.build(mod, target="llvm", params=params)
        compile_s = time.perf_counter() - t
        m = GraphModule(lib["default"]())
        x = np.random.default_rng(1).standard_normal(shape).astype("float32")
        m.set_input(mod["main"].params[0].name_hint, x)
        m.run()
        res = m.benchmark(number=1, repeat=args.repeat)
        mem = lib.memory
        print(f"{name:<12}{source:<20}{compile_s:>10.1f}{res.median * 1e3:>12.2f}"
              f"{lib.stats['num_kernels']:>9}{mem['planned_bytes'] / 2**20:>12.1f}"
              f"{mem['intermediate_bytes'] / 2**20:>12.1f}")
        if args.check:
            ref = relay.create_executor("debug", mod, params=params).evaluate()(x).numpy()
            diff = np.abs(m.get_output(0).numpy() - ref).max()
            print(f"  max |graph - interpreter| = {diff:.3g}")


if __name__ == "__main__":
    main()

"""GFLOP/s of the compiled ResNet-18 conv2d layers and of a 1024^3 dense, next to NumPy's BLAS
on a matmul of the same FLOPs, measured in the same run.

Each layer is compiled as ``relay.build`` compiles it in a model: conv2d + bias_add + relu fused
into one kernel, weights bound as parameters (so the schedule's weight packing happens at build
time). The relay time is the whole graph (with ``--opt-level 3`` that includes the layout
transforms AlterOpLayout adds around the NCHWc convolution). The NumPy column times ``A @ B``
with ``A: (O, C*k*k)`` and ``B: (C*k*k, OH*OW)``, the im2col matrix product of the same
convolution (same FLOPs).

Usage::

    python benchmarks/bench_ops.py            # all layers
    python benchmarks/bench_ops.py --quick    # fewer repeats
    python benchmarks/bench_ops.py --opt-level 3
    python benchmarks/bench_ops.py --opt-level 3 --winograd never   # direct 3x3 convolutions

At opt level 3 AlterOpLayout turns the stride-1 3x3 layers into Winograd convolutions where its
cost model says so (schedule ``conv2d_winograd``); their GFLOP/s count the direct convolution's
FLOPs (what the layer computes), so they can exceed the machine's peak.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import relay_tvm as relay
from relay_tvm.runtime import GraphModule

# ResNet-18 (batch 1, 224x224) conv2d layers: (name, C, O, H, kernel, stride, pad)
RESNET18_CONVS = [
    ("conv1", 3, 64, 224, 7, 2, 3),
    ("layer1 3x3", 64, 64, 56, 3, 1, 1),
    ("layer2 3x3 s2", 64, 128, 56, 3, 2, 1),
    ("layer2 1x1 s2", 64, 128, 56, 1, 2, 0),
    ("layer2 3x3", 128, 128, 28, 3, 1, 1),
    ("layer3 3x3 s2", 128, 256, 28, 3, 2, 1),
    ("layer3 1x1 s2", 128, 256, 28, 1, 2, 0),
    ("layer3 3x3", 256, 256, 14, 3, 1, 1),
    ("layer4 3x3 s2", 256, 512, 14, 3, 2, 1),
    ("layer4 1x1 s2", 256, 512, 14, 1, 2, 0),
    ("layer4 3x3", 512, 512, 7, 3, 1, 1),
]


def time_numpy(a, b, number, repeat) -> float:
    a @ b  # warm up
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            a @ b
        best.append((time.perf_counter() - t) / number)
    return float(np.median(best))


def time_relay(func, params, inputs, number, repeat, opt_level=2, winograd="auto"):
    t = time.perf_counter()
    config = {"relay.AlterOpLayout.winograd": winograd}
    with relay.transform.PassContext(opt_level=opt_level, config=config):
        lib = relay.build(relay.IRModule.from_expr(func), target="llvm", params=params)
    build_s = time.perf_counter() - t
    m = GraphModule(lib["default"]())
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    res = m.benchmark(number=number, repeat=repeat)
    rules = sorted({v.schedule_rule for v in lib.kernels.values()} - {"generic"})
    return float(res.median), build_s, m.get_output(0).numpy(), rules


def conv_case(C, O, H, k, s, p, rng):
    x = relay.var("x", shape=(1, C, H, H))
    w = relay.var("w", shape=(O, C, k, k))
    b = relay.var("b", shape=(O,))
    y = relay.nn.relu(relay.nn.bias_add(
        relay.nn.conv2d(x, w, strides=(s, s), padding=(p, p)), b))
    f = relay.Function([x, w, b], y)
    params = {"w": rng.standard_normal((O, C, k, k)).astype("float32") * 0.1,
              "b": rng.standard_normal((O,)).astype("float32")}
    xv = rng.standard_normal((1, C, H, H)).astype("float32")
    oh = (H + 2 * p - k) // s + 1
    flops = 2.0 * O * C * k * k * oh * oh
    return f, params, {"x": xv}, flops, (O, C * k * k, oh * oh)


def dense_case(n, rng):
    x = relay.var("x", shape=(n, n))
    w = relay.var("w", shape=(n, n))
    f = relay.Function([x, w], relay.nn.dense(x, w))
    params = {"w": rng.standard_normal((n, n)).astype("float32")}
    xv = rng.standard_normal((n, n)).astype("float32")
    return f, params, {"x": xv}, 2.0 * n ** 3, (n, n, n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--check", action="store_true", help="also compare with NumPy results")
    ap.add_argument("--opt-level", type=int, default=2,
                    help="3 runs AlterOpLayout (NCHWc convolutions with layout transforms)")
    ap.add_argument("--winograd", default="auto", choices=["auto", "never", "2", "4"],
                    help="Winograd for stride-1 3x3 layers at opt level 3: the cost model's "
                         "choice, never, or F(2x2) / F(4x4) forced")
    args = ap.parse_args(argv)
    winograd = int(args.winograd) if args.winograd.isdigit() else args.winograd
    number, repeat = (2, 3) if args.quick else (5, 5)
    rng = np.random.default_rng(0)
    cases = [(name, *conv_case(C, O, H, k, s, p, rng)) for name, C, O, H, k, s, p in RESNET18_CONVS]
    cases.append(("dense 1024^3", *dense_case(1024, rng)))
    hdr = f"{'layer':<16}{'GFLOP':>8}{'relay ms':>10}{'relay GF/s':>12}{'numpy GF/s':>12}" \
          f"{'ratio':>8}{'build s':>9}  schedule"
    print(hdr)
    print("-" * len(hdr))
    ratios = []
    tot_relay = tot_np = 0.0
    for name, f, params, inputs, flops, (m_, k_, n_) in cases:
        t_relay, build_s, out, rules = time_relay(f, params, inputs, number, repeat,
                                                  args.opt_level, winograd)
        a = rng.standard_normal((m_, k_)).astype("float32")
        b = rng.standard_normal((k_, n_)).astype("float32")
        t_np = time_numpy(a, b, number, repeat)
        if args.check and name.startswith("dense"):
            ref = inputs["x"] @ params["w"].T
            np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-2)
        g_relay, g_np = flops / t_relay / 1e9, flops / t_np / 1e9
        ratio = g_relay / g_np
        if not name.startswith("dense"):
            ratios.append(ratio)
            tot_relay += t_relay
            tot_np += t_np
        print(f"{name:<16}{flops / 1e9:>8.3f}{t_relay * 1e3:>10.3f}{g_relay:>12.1f}{g_np:>12.1f}"
              f"{ratio:>8.2f}{build_s:>9.2f}  {','.join(rules)}")
    print("-" * len(hdr))
    print(f"ResNet-18 conv layers: total {tot_relay * 1e3:.2f} ms (relay) vs {tot_np * 1e3:.2f} ms "
          f"(numpy BLAS, same FLOPs); min ratio {min(ratios):.2f}, geomean "
          f"{float(np.exp(np.mean(np.log(ratios)))):.2f} (target >= 0.50)")


if __name__ == "__main__":
    main()

"""GFLOP/s of the compiled ResNet-18 conv2d layers and of a 1024^3 dense, next to NumPy's BLAS
on a matmul of the same FLOPs, measured in the same run.

Each layer is compiled as ``relay.build`` compiles it in a model: conv2d + bias_add + relu fused
into one kernel, weights bound as parameters (so the schedule's weight packing happens at build
time). Two relay times: ``graph ms``, one run of the whole graph (with ``--opt-level 3`` that
includes the layout transforms AlterOpLayout adds around the NCHWc convolution at the graph's
input and output), and ``kernel ms``, the layer's own kernels timed alone
(``GraphModule.profile``: TVM's time_evaluator, data in cache), which is what the layer costs
inside a model, where the data stays NCHWc from one layer to the next. GFLOP/s, % of peak and
the ratio to NumPy are of the kernel time. Every layer is timed in ``--rounds`` rounds over
all layers (3 by default) and keeps its best round, for relay_tvm and NumPy alike: on a 2-vCPU
VM a layer's time sometimes doubles for a while, as if one of its two threads did not run
(2026-12-07, Zen 4: two layers at 47-50% of the peak in one run of three, 89-97% in the others;
the guest's steal counter stayed at 0); the run names the layers that had such a round. The NumPy column times ``A @ B``
with ``A: (O, C*k*k)`` and ``B: (C*k*k, OH*OW)``, the im2col matrix product of the same
convolution (same FLOPs).

Each layer is also given as a fraction of the machine's peak FP32 FLOP/s (``_machine.py``: FP32
lanes of the code's ISA x FMA units x 2 x clock x threads, printed with its assumptions), for
relay_tvm and for NumPy's BLAS. All relay layers are timed first, then all NumPy products, so
one library's spinning thread pool does not run while the other is timed. Both use ``--threads``
threads (default: every usable core; ``TVM_NUM_THREADS``, ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` are set before NumPy and TVM load).

Usage::

    python benchmarks/bench_ops.py                 # all layers, all usable cores
    python benchmarks/bench_ops.py --quick         # fewer repeats
    python benchmarks/bench_ops.py --threads 1     # one core (peak for one core)
    python benchmarks/bench_ops.py --mcpu haswell  # AVX2 code (on an AVX-512 machine)
    python benchmarks/bench_ops.py --opt-level 3
    python benchmarks/bench_ops.py --opt-level 3 --winograd never   # direct 3x3 convolutions

At opt level 3 AlterOpLayout turns the stride-1 3x3 layers into Winograd convolutions where its
cost model says so (schedule ``conv2d_winograd``); their GFLOP/s count the direct convolution's
FLOPs (what the layer computes), so they can exceed the machine's peak.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the relay_tvm of this checkout
import _machine  # noqa: E402

# Thread pools read their size when the libraries load: set it before importing them.
_pre = argparse.ArgumentParser(add_help=False)
_pre.add_argument("--threads", type=int, default=None)
THREADS = _pre.parse_known_args()[0].threads or _machine.usable_cores()[0]
os.environ.update(_machine.thread_env(THREADS))

import numpy as np  # noqa: E402

import relay_tvm as relay  # noqa: E402
from relay_tvm.runtime import GraphModule  # noqa: E402

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


def time_relay(func, params, inputs, number, repeat, opt_level=2, target="llvm",
               winograd="auto"):
    t = time.perf_counter()
    config = {"relay.AlterOpLayout.winograd": winograd}
    with relay.transform.PassContext(opt_level=opt_level, config=config):
        lib = relay.build(relay.IRModule.from_expr(func), target=target, params=params)
    build_s = time.perf_counter() - t
    m = GraphModule(lib["default"]())
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    rules = sorted({v.schedule_rule for v in lib.kernels.values()} - {"generic"})
    return m, build_s, m.get_output(0).numpy(), rules


def time_round(m, number, repeat):
    """One timing round of a built layer: ``(graph seconds, layer seconds)``. The layer's own
    kernels are timed alone (time_evaluator, data in cache): without the layout_transform
    kernels AlterOpLayout puts at the graph's input and output (inside a model the data stays
    NCHWc from one layer to the next) and without the graph's call."""
    res = m.benchmark(number=number, repeat=repeat)
    return float(res.median), layer_seconds(m.profile(number=max(number, 10), repeat=repeat))


def layer_seconds(profile) -> float:
    """The layer's time from ``GraphModule.profile`` rows ``(node, kernel name, seconds)``: the
    sum over its kernels but the ``layout_transform`` ones (a fused transform such as
    ``layout_transform_strided_slice`` included: it is a transform of the graph's input)."""
    return float(sum(t for _, name, t in profile if "layout_transform" not in name))


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


def dense_case(m, k, n, rng):
    """``dense(x: (m, k), w: (n, k))`` with ``w`` bound; NumPy's product is ``(m, k) @ (k, n)``."""
    x = relay.var("x", shape=(m, k))
    w = relay.var("w", shape=(n, k))
    f = relay.Function([x, w], relay.nn.dense(x, w))
    params = {"w": rng.standard_normal((n, k)).astype("float32")}
    xv = rng.standard_normal((m, k)).astype("float32")
    return f, params, {"x": xv}, 2.0 * m * k * n, (m, k, n)


GEMV = "dense 1x25088x4096"  # VGG-16's fc6 at batch 1: reads 411 MB of weights per call


def _blas_name():
    for key in ("blas_ilp64_opt_info", "blas_opt_info"):  # NumPy < 1.25's build record
        try:
            libs = np.__config__.get_info(key).get("libraries", [])
        except Exception:
            continue
        if libs:
            return ",".join(dict.fromkeys(libs))
    return "unknown"


def _pct(gflops, peak):
    return f"{100 * gflops / peak:.0f}%" if peak else "n/a"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--check", action="store_true", help="also compare with NumPy results")
    ap.add_argument("--opt-level", type=int, default=2,
                    help="3 runs AlterOpLayout (NCHWc convolutions with layout transforms)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for relay_tvm and NumPy's BLAS (default: all usable cores)")
    ap.add_argument("--target", default="llvm", help="relay_tvm target (default: the host)")
    ap.add_argument("--mcpu", default=None, help="build for this LLVM CPU (e.g. haswell)")
    ap.add_argument("--no-gemv", action="store_true",
                    help="skip the VGG-16 fc6 matrix-vector product (memory-bound, 411 MB)")
    ap.add_argument("--fma-units", type=int, default=None,
                    help="FMA units per core for the peak (default: guessed from the CPU)")
    ap.add_argument("--winograd", default="auto", choices=["auto", "never", "2", "4"],
                    help="Winograd for stride-1 3x3 layers at opt level 3: the cost model's "
                         "choice, never, or F(2x2) / F(4x4) forced")
    ap.add_argument("--rounds", type=int, default=3,
                    help="timing rounds over all layers; each layer keeps its best round")
    return ap


def main(argv=None):
    ap = _parser()
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    winograd = int(args.winograd) if args.winograd.isdigit() else args.winograd
    target = f"{args.target} -mcpu={args.mcpu}" if args.mcpu else args.target
    m = _machine.machine(THREADS, target, args.fma_units)
    peak = m["peak_gflops"]
    np_peak = _machine.machine(THREADS, "llvm", args.fma_units)["peak_gflops"]
    print(_machine.header(m))
    if np_peak != peak:
        print(f"NumPy's BLAS uses the host ISA ({m['host_isa']}): its % peak is of {np_peak:.1f}"
              f" GFLOP/s")
    print(f"NumPy {np.__version__}, BLAS {_blas_name()}; relay_tvm opt level {args.opt_level}")
    number, repeat = (2, 3) if args.quick else (5, 5)
    rng = np.random.default_rng(0)
    cases = [(name, *conv_case(C, O, H, k, s, p, rng)) for name, C, O, H, k, s, p in RESNET18_CONVS]
    cases.append(("dense 1024^3", *dense_case(1024, 1024, 1024, rng)))
    if not args.no_gemv:
        cases.append((GEMV, *dense_case(1, 25088, 4096, rng)))
    built = []
    for name, f, params, inputs, _flops, _ in cases:  # all relay layers first (see docstring)
        gm, build_s, out, rules = time_relay(f, params, inputs, number, repeat,
                                             args.opt_level, target, winograd)
        if args.check and name.startswith("dense"):
            ref = inputs["x"] @ params["w"].T
            np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-2)
        built.append((gm, build_s, rules))
    # Rounds over all layers: a layer keeps its best round, so a moment when the VM's host
    # takes a core away (the layer's time doubles) does not decide its figure.
    rounds_relay = [[time_round(gm, number, repeat) for gm, _, _ in built]
                    for _ in range(args.rounds)]
    relay_res = [(min(r[i][0] for r in rounds_relay), min(r[i][1] for r in rounds_relay),
                  max(r[i][1] for r in rounds_relay), build_s, rules)
                 for i, (_, build_s, rules) in enumerate(built)]
    del built
    np_mats = [(rng.standard_normal((m_, k_)).astype("float32"),
                rng.standard_normal((k_, n_)).astype("float32"))
               for *_, (m_, k_, n_) in cases]
    np_times = [min(ts) for ts in zip(*[[time_numpy(a, b, number, repeat) for a, b in np_mats]
                                        for _ in range(args.rounds)])]
    hdr = f"{'layer':<20}{'GFLOP':>8}{'graph ms':>10}{'kernel ms':>10}{'relay GF/s':>12}{'% peak':>8}" \
          f"{'numpy GF/s':>12}{'% peak':>8}{'ratio':>8}{'build s':>9}  schedule"
    print(hdr)
    print("-" * len(hdr))
    ratios, fracs, gbs = [], {}, None
    tot_relay = tot_np = 0.0
    unsteady = []
    for (name, _f, _params, _inputs, flops, (m_, k_, n_)), \
            (t_graph, t_relay, t_worst, build_s, rules), t_np in zip(cases, relay_res, np_times):
        if t_worst > 1.5 * t_relay:
            unsteady.append(f"{name} {t_worst / t_relay:.1f}x")
        g_relay, g_np = flops / t_relay / 1e9, flops / t_np / 1e9
        ratio = g_relay / g_np
        if name == GEMV:  # bytes moved per second, not FLOP/s, is what bounds it
            nbytes = 4.0 * (m_ * k_ + k_ * n_ + m_ * n_)
            gbs = (nbytes / t_relay / 1e9, nbytes / t_np / 1e9)
        if peak:
            fracs[name] = g_relay / peak
        if not name.startswith("dense"):
            ratios.append(ratio)
            tot_relay += t_relay
            tot_np += t_np
        print(f"{name:<20}{flops / 1e9:>8.3f}{t_graph * 1e3:>10.3f}{t_relay * 1e3:>10.3f}"
              f"{g_relay:>12.1f}"
              f"{_pct(g_relay, peak):>8}{g_np:>12.1f}{_pct(g_np, np_peak):>8}"
              f"{ratio:>8.2f}{build_s:>9.2f}  {','.join(rules)}")
    print("-" * len(hdr))
    print(f"ResNet-18 conv layers: total {tot_relay * 1e3:.2f} ms (relay) vs {tot_np * 1e3:.2f} ms "
          f"(numpy BLAS, same FLOPs); min ratio {min(ratios):.2f}, geomean "
          f"{float(np.exp(np.mean(np.log(ratios)))):.2f} (target >= 0.50)")
    print(f"each figure the best of {args.rounds} rounds over all layers"
          + (f"; a round {', '.join(unsteady)} slower than its best (an unsteady machine)"
             if unsteady else ""))
    if gbs:
        print(f"{GEMV} (memory-bound): relay {gbs[0]:.1f} GB/s, NumPy {gbs[1]:.1f} GB/s "
              f"({gbs[0] / gbs[1]:.2f}x)")
    if peak:
        goal = [n for n in fracs if n.startswith("layer") and ("3x3" in n or "1x1" in n)]
        low = [n for n in goal if fracs[n] < 0.7]
        print(f"fraction of peak ({peak:.1f} GFLOP/s): ResNet-18 3x3/1x1 layers min "
              f"{min(fracs[n] for n in goal):.0%}, geomean "
              f"{float(np.exp(np.mean(np.log([fracs[n] for n in goal])))):.0%}; goal >= 70%: "
              + ("met" if not low else f"NOT met on {len(low)} of {len(goal)} ({', '.join(low)})"))


if __name__ == "__main__":
    main()

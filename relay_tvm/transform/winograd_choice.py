"""Which convolutions AlterOpLayout turns into Winograd convolutions, and the rewrite.

A ``nn.conv2d`` is eligible when it is NCHW/OIHW, float32, 3x3, stride 1, dilation 1, groups 1,
with static shapes and a constant weight (a bound parameter: FoldConstant then transforms it
once at build time; a weight computed at run time would pay the transform on every call).

Among the eligible ones a small analytic model of the target picks F(4x4, 3x3), F(2x2, 3x3) or
the direct (NCHW{c}c) convolution, counting vector instructions per output:

- direct: ``9 C`` FMAs per output element, at the rate the direct template reaches, and its
  weight, ``9 C O`` floats, streamed from memory;
- Winograd F(m, 3): per ``m x m`` output tile (the last ones padded when ``m`` does not divide
  the output), ``alpha^2 C O`` FMAs of the batched GEMM, the input transform (its nonzero
  terms per element, ``C`` channels) and the output transform (``O`` channels), at the rate the
  Winograd stages reach; the transformed weight, ``alpha^2 C O`` floats (4x the direct weight
  for F(4x4), 1.8x for F(2x2)), streamed from memory; the transformed input and the GEMM's
  result, ``alpha^2 P (C + O)`` floats, each written by one stage and read by the next (not
  counted where the kernel fuses its stages per tile row: each row's stay in L2); and a
  fixed cost per layer (start-up of the extra stages, the GEMM's short reductions).

Weights stream from main memory, not from cache: a whole network's weights (ResNet-18's are
46 MB direct, ~180 MB as F(4x4) Winograd) overflow the last-level cache, so each layer reads its
own weights from DRAM on every run however it was timed alone. DRAM bandwidth does not grow with
the thread count the way FMA throughput does (this 2-core VM reads ~20 GB/s with one thread or
two), so the weight term is weighted by the number of threads the module will run on: with more
threads, layers whose transformed weights are large (7x7 planes of 512 channels) move from
F(4x4) to F(2x2).

The costs are in vector FMA slots of one core: the arithmetic scales with the vector width
(lanes of float32 from ``mcpu`` / ``mattr``, no CPU names), the weight's bytes do not (memory
is no faster for a core with wider vectors; with a per-lane rate, AVX-512 kept ResNet-18's
weight-heavy 512@7 layers as F(2x2): on Zen 5 with 2 threads the network ran 7.49 ms so, 7.10
with them direct and 6.83 with its 256@14 layers F(2x2) as well). The constants were
calibrated on 15 layer shapes of ResNet-18/50, VGG-16, SqueezeNet and Inception-v3 on an AVX2
machine (Zen 3), each
layer timed as direct, F(2x2) and F(4x4) in one process with one thread, every run after a
96 MB buffer was written (the weights and the stages' buffers come from DRAM, as they do inside
a whole network).

``PassContext`` config ``"relay.AlterOpLayout.winograd"``: ``"auto"`` (default, the model),
``"never"``, or ``2`` / ``4`` to force that tile size on every eligible convolution (with or
without a constant weight: tests and benchmarks).
"""

from __future__ import annotations

import functools

from .._threads import module_threads  # the cost model's thread count (re-exported)
from ..errors import RelayError
from ..ir.expr import Constant
from ..ir.types import TensorType
from ..op import nn_winograd
from ..op.registry import make_call
from ._rewrite import type_of as _ty

CONFIG_KEY = "relay.AlterOpLayout.winograd"

# Calibration (15 layer shapes: ResNet's 64@56, 128@28, 256@14, 512@7, VGG's 128@56, 256@28,
# 256@56, 512@14, 512@28, SqueezeNet's 64->256@13, 32->128@27, Inception's 96@35, 64->96@35,
# 448->384@8, 384@8; batch 1, AVX2 Zen 3, one thread, thread CPU time, best of 20 runs each
# after a 96 MB write, direct, F(2x2) and F(4x4) timed alternately; non-negative least squares
# on relative error: mean error 10%, and the cheapest predicted form is the fastest measured on
# 13 of 15 shapes, 8% and 35% slower on Inception's two 35x35 layers): in units of the direct
# template's FMA rate, the Winograd stages issue at the same rate (1.0), weights stream at
# ~5 bytes per FMA slot (0.63 per AVX2 lane-slot, ~25 GB/s at 5 G FMA slots/s), the
# stages' buffers at ~0.2 bytes per lane-slot (they are written and read back through the
# caches, cold on a first touch), and each Winograd layer costs ~0.8 M slots more (start-up,
# short GEMM reductions, the padded tail tiles' guards).
_DIRECT_EFF = 1.0
_WINOGRAD_EFF = 0.96
_WEIGHT_BYTES_PER_SLOT = 5.04  # on the calibration machine: 2 vector FMAs issued per cycle
_BUFFER_BYTES_PER_LANE_SLOT = 0.18
_LAYER_OVERHEAD = 1.1e5


@functools.lru_cache(maxsize=None)
def transform_terms(tile: int) -> tuple:
    """``(input terms per element of B^T d B, output terms per output element of A^T M A)``:
    the nonzero products the two-sided transforms compute one side at a time, averaged over
    the tile."""
    a, b, _ = nn_winograd.transform_matrices(tile, 3)
    alpha = tile + 2
    nb = float((b != 0).sum(axis=0).mean())
    na = float((a != 0).sum(axis=0).mean())
    return 2 * nb, na * (alpha / tile + 1)


def gemm_tile_efficiency(p, ob, feats) -> float:
    """Fraction of the FMA rate the batched GEMM's register tile allows (the tile the schedule
    picks, :func:`relay_tvm.backend.schedule.winograd.gemm_tile`, over the ``p`` tiles and the
    weight's ``ob``-channel block): too few accumulators leave FMA latency exposed, too few
    FMAs per load leave the FMA units waiting for the load ports, and a last block of tiles
    that ``mb`` does not fill computes padding."""
    from ..backend.schedule.winograd import gemm_tile

    lanes = feats.lanes(32)
    if ob % lanes:
        return 0.5
    m, nb = gemm_tile(p, ob, feats)
    v = nb // lanes
    need = feats.fma_latency * feats.fma_pipes
    return min(m * v, need) / need * min(1.0, m * v / (m + v)) * p / (-(-p // m) * m)


def winograd_cost(n, c, oh, ow, o, lanes, tile, feats=None, threads=1):
    """Estimated vector-FMA slots of one core for F(tile x tile, 3x3) on this layer: the batched
    GEMM (at its register tile's efficiency) and the transforms at the Winograd stages' rate,
    the transformed weight's bytes at the DRAM streaming rate (times ``threads``: the cores
    share the memory bandwidth), the stages' buffers (none where the kernel will fuse its
    stages per tile row: :func:`relay_tvm.backend.schedule.winograd.fused_default`), and the
    per-layer overhead."""
    from ..backend.schedule.winograd import fused_default
    from .layout import block_size

    alpha = tile + 2
    p = n * -(-oh // tile) * -(-ow // tile)
    t_in, t_out = transform_terms(tile)
    tile_eff = gemm_tile_efficiency(p, block_size(o), feats or _default_features(lanes))
    gemm = alpha * alpha * p * c * o / tile_eff
    trans = alpha * alpha * p * c * t_in + tile * tile * p * o * t_out
    weight_bytes = alpha * alpha * c * o * 4
    # the stages' buffers, unless the kernel fuses its stages per tile row (each group's
    # transformed data then stays in the core's L2: SqueezeNet's 48->192@13 as F(2x2), 7 rows
    # fused, 0.086 ms against 0.149 direct and 0.139 as F(4x4), whose 4 rows stay unfused)
    fused = fused_default(p, o, c, n * -(-oh // tile), threads)
    buffer_bytes = 0 if fused else alpha * alpha * p * (c + o) * 4
    return ((gemm + trans) / lanes / _WINOGRAD_EFF
            + threads * weight_bytes / weight_bytes_per_slot(feats)
            + buffer_bytes / (_BUFFER_BYTES_PER_LANE_SLOT * lanes) + _LAYER_OVERHEAD)


def weight_bytes_per_slot(feats) -> float:
    """Weight bytes streamed from DRAM per vector-FMA slot of one core. Memory delivers bytes
    per cycle, not per FMA: a core that issues half as many vector FMAs a cycle as the
    calibration machine (Zen 3: two 256-bit FMAs) gets twice the bytes per slot. Zen 4 runs a
    512-bit FMA on both of its 256-bit pipes (``split_512``: one a cycle); there the weights of
    F(2x2) on 512@7 and F(4x4) on 256@14 cost half of what the Zen 3 figure charged, and the
    model now picks what measures fastest on both (bench_winograd, 2 threads, cold caches,
    2026-12-04: 512@7 direct 1.20-1.27 ms, F(2x2) 0.97-1.05; 256@14 F(2x2) 0.68-0.71, F(4x4)
    0.60-0.61; it had chosen direct and F(2x2))."""
    if feats is None:
        return _WEIGHT_BYTES_PER_SLOT
    per_cycle = feats.fma_pipes / (2 if feats.split_512 else 1)
    return _WEIGHT_BYTES_PER_SLOT * 2 / per_cycle


def _default_features(lanes):
    """x86-like features for ``lanes`` float32 lanes (16 registers below AVX-512, 32 with it)."""
    from ..backend.schedule.cpu_model import CPUFeatures

    return CPUFeatures("x86", lanes * 32, 32 if lanes >= 16 else 16, 4, 2, 32768, 524288)


def direct_cost(n, c, oh, ow, o, lanes, threads=1, feats=None):
    """Estimated vector-FMA slots of one core for the direct NCHW{c}c 3x3 convolution (its FMAs,
    and its weight, ``9 C O`` floats, streamed from DRAM, times ``threads``)."""
    return n * o * oh * ow * c * 9 / lanes / _DIRECT_EFF + \
        threads * 9 * c * o * 4 / weight_bytes_per_slot(feats)


def winograd_tile(n, c, h, w, o, lanes, pad=(1, 1, 1, 1), feats=None, threads=1):
    """The tile size (4 or 2) the model prefers for a stride-1 3x3 convolution of (n, c, h, w)
    data into ``o`` channels with ``lanes`` float32 vector lanes and ``pad`` (top, left,
    bottom, right), or None for the direct convolution (always for fewer channels than
    lanes). ``feats``: the target's ``CPUFeatures`` (registers, FMA latency) for the GEMM tile;
    x86-like defaults for ``lanes`` when None. ``threads``: the threads the module will run on
    (the weights' share of the cost grows with it)."""
    oh, ow = h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2
    if oh < 1 or ow < 1 or c < lanes or o < lanes:
        # the stages vectorize over channels: fewer than a vector's worth leaves them scalar
        return None
    best, best_cost = None, direct_cost(n, c, oh, ow, o, lanes, threads, feats)
    for tile in (4, 2):
        cost = winograd_cost(n, c, oh, ow, o, lanes, tile, feats, threads)
        if cost < best_cost:
            best, best_cost = tile, cost
    return best


def plain_3x3(orig, new):
    """``(data type, weight type)`` when ``new`` (a ``nn.conv2d`` call; ``orig`` its typed
    original) is a static NCHW/OIHW 3x3 convolution of stride 1, no dilation, one group (what
    the Winograd forms compute), else None."""
    a = new.attrs
    t_in, t_w = _ty(orig.args[0]), _ty(orig.args[1])
    if not (isinstance(t_in, TensorType) and isinstance(t_w, TensorType)):
        return None
    if len(t_in.shape) != 4 or len(t_w.shape) != 4 or \
            not all(isinstance(d, int) for d in (*t_in.shape, *t_w.shape)):
        return None
    if (a.data_layout, a.kernel_layout, a.out_layout) != ("NCHW", "OIHW", ""):
        return None
    if tuple(t_w.shape[2:]) != (3, 3) or a.groups != 1 or tuple(a.strides) != (1, 1) or \
            tuple(a.dilation) not in ((1, 1), (1,)):
        return None
    return t_in, t_w


def eligible(orig, new, need_constant=True) -> bool:
    """Whether ``new`` (a ``nn.conv2d`` call; ``orig`` its typed original) can be Winograd."""
    types = plain_3x3(orig, new)
    if types is None:
        return False
    t_in, t_w = types
    if t_in.dtype != "float32" or t_w.dtype != "float32" or \
            new.attrs.out_dtype not in ("", "float32"):
        return False
    return not need_constant or type(new.args[1]) is Constant


def current_target():
    """The current ``tvm.target.Target`` (the host's LLVM target when none is set)."""
    from ..backend.target import make_target

    return make_target(None)  # the target in scope, else the host's


def target_features():
    """``CPUFeatures`` of the current target (host LLVM when none is set), or None for a target
    that is not a CPU."""
    # the ISA model lives with the CPU schedules (AlterOpLayout is a target-dependent pass)
    from ..backend.schedule.cpu_model import cpu_features

    tgt = current_target()
    if tgt.kind.name != "llvm":
        return None
    return cpu_features(tgt)


def parse_winograd_mode(mode):
    """A :data:`CONFIG_KEY` value: ``"auto"``, ``"never"``, 2 or 4. The words are
    taken in any case and the tiles also as the strings ``"2"``/``"4"`` (what a config read from
    text or a command line holds).

    Raises:
        RelayError: any other value.
    """
    if isinstance(mode, str):
        word = mode.strip().lower()
        if word in ("auto", "never"):
            return word
        if word in ("2", "4"):
            return int(word)
    elif not isinstance(mode, bool) and mode in (2, 4):
        return int(mode)
    raise RelayError(f"PassContext config {CONFIG_KEY!r} must be 'auto', 'never', 2 or 4, "
                     f"got {mode!r}")


def winograd_mode():
    """The current ``PassContext``'s :data:`CONFIG_KEY` (see :func:`parse_winograd_mode`)."""
    from .pass_infra import PassContext, config_value

    return config_value(PassContext.current().config, CONFIG_KEY, "auto")


def winograd_decider():
    """``decide(orig, new) -> tile or None`` under the current PassContext and target.

    Raises:
        RelayError: the config value is not ``"auto"``, ``"never"``, 2 or 4 (see
            :func:`winograd_mode`).
    """
    mode = winograd_mode()
    if mode == "never":
        return lambda orig, new: None
    if mode in (2, 4):
        return lambda orig, new: mode if eligible(orig, new, need_constant=False) else None
    feats = target_features()
    if feats is None:
        return lambda orig, new: None
    lanes = feats.lanes(32)
    threads = module_threads()

    def decide(orig, new):
        if not eligible(orig, new):
            return None
        n, c, h, w = _ty(orig.args[0]).shape
        o = _ty(orig.args[1]).shape[0]
        pad = nn_winograd._pad4(new.attrs.padding)
        return winograd_tile(n, c, h, w, o, lanes, pad, feats, threads)

    return decide


def winograd_conv(orig, new, tile):
    """``nn.conv2d`` -> layout_transform to ``NCHW{ic}c``, Winograd convolution of the weight
    transformed and packed to ``(alpha, alpha, O/oc, I, oc)``, layout_transform back (the blocks
    as the direct path chooses them, so the transforms between layers cancel)."""
    from .layout import block_size

    a = new.attrs
    c = _ty(orig.args[0]).shape[1]
    o = _ty(orig.args[1]).shape[0]
    ic, oc = block_size(c), block_size(o)
    alpha = tile + 2
    dl, ol = f"NCHW{ic}c", f"NCHW{oc}c"
    data = make_call("layout_transform", [new.args[0]], src_layout="NCHW", dst_layout=dl)
    # the weight's output channels blocked before its transform, which treats every (output,
    # input) channel pair alike: (O/oc, I, oc) pairs come out in the packed order, so the
    # transpose moves the 3x3 weight instead of the (alpha, alpha) one, 4x (F(4x4): 36 / 9)
    # larger. FoldConstant's transposing copies of ResNet-50's transformed weights took 0.17 s
    # of its build (one thread, Zen 1); the 3x3 weights' now take 0.06
    kh, kw = (int(d) for d in _ty(orig.args[1]).shape[2:])
    w = make_call("reshape", [new.args[1]], newshape=(o // oc, oc, c, kh, kw))
    w = make_call("transpose", [w], axes=(0, 2, 1, 3, 4))
    w = make_call("reshape", [w], newshape=(o // oc * c, oc, kh, kw))
    u = nn_winograd.contrib_conv2d_winograd_weight_transform(w, tile)
    u = make_call("reshape", [u], newshape=(alpha, alpha, o // oc, c, oc))
    conv = make_call(nn_winograd.OP, [data, u], span=new.span, tile_size=tile, strides=(1, 1),
                     padding=tuple(nn_winograd._pad4(a.padding)), dilation=(1, 1), groups=1,
                     channels=o, kernel_size=(3, 3), data_layout=dl, kernel_layout=f"OIHW{oc}o",
                     out_layout=ol, out_dtype=a.out_dtype)
    return make_call("layout_transform", [conv], span=new.span, src_layout=ol, dst_layout="NCHW")


__all__ = ["winograd_tile", "winograd_cost", "direct_cost", "gemm_tile_efficiency", "eligible",
           "winograd_decider", "winograd_mode", "module_threads", "winograd_conv", "CONFIG_KEY"]

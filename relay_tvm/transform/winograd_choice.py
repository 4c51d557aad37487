"""Which convolutions AlterOpLayout turns into Winograd convolutions, and the rewrite.

A ``nn.conv2d`` is eligible when it is NCHW/OIHW, float32, 3x3, stride 1, dilation 1, groups 1,
with static shapes and a constant weight (a bound parameter: FoldConstant then transforms it
once at build time; a weight computed at run time would pay the transform on every call).

Among the eligible ones a small analytic model of the target picks F(4x4, 3x3), F(2x2, 3x3) or
the direct (NCHW{c}c) convolution, counting vector instructions per output:

- direct: ``9 C`` FMAs per output element, at the rate the direct template reaches, and its
  weight streamed from memory once;
- Winograd F(m, 3): per ``m x m`` output tile (the last ones padded when ``m`` does not divide
  the output), ``alpha^2 C O`` FMAs of the batched GEMM, the input transform (its nonzero
  terms per element, ``C`` channels) and the output transform (``O`` channels), at the rate the
  Winograd stages reach; plus the transformed weight, ``alpha^2 C O`` floats (4x the direct
  weight for F(4x4), what favours F(2x2) when few tiles share each weight), streamed once; and
  a fixed start-up cost per extra stage (what keeps tiny convolutions direct).

The costs are in vector FMA slots, so they scale with the vector width (the only target input:
lanes of float32 from ``mcpu`` / ``mattr``, no CPU names). The constants were calibrated on
ResNet-18's 3x3 layers on an AVX2 machine, F(4x4) and F(2x2) timed against the direct template
in the same process.

``PassContext`` config ``"relay.AlterOpLayout.winograd"``: ``"auto"`` (default, the model),
``"never"``, or ``2`` / ``4`` to force that tile size on every eligible convolution (with or
without a constant weight: tests and benchmarks).
"""

from __future__ import annotations

import functools

from ..errors import RelayError
from ..ir.expr import Constant
from ..ir.types import TensorType
from ..op import nn_winograd
from ..op.registry import make_call

CONFIG_KEY = "relay.AlterOpLayout.winograd"

# Calibration (ResNet-18's 3x3 layers, batch 1, AVX2, 2 threads; F(4x4), F(2x2) and the direct
# NCHW{c}c template timed alternately in one process, medians, two runs; slots are in units of
# the direct template's FMA rate): the Winograd stages issue their FMAs at ~0.63 of the direct
# template's rate (shorter GEMM reductions, transforms that are load/store bound); weights
# stream at ~1.3 bytes per lane-slot; each extra kernel stage costs ~11k slots of start-up (a
# parallel launch; tens of microseconds on 6x6 and 8x8 layers, where both paths are equal).
_DIRECT_EFF = 1.0
_WINOGRAD_EFF = 0.63
_BYTES_PER_LANE_SLOT = 1.3
_STAGE_OVERHEAD = 11000.0


def _ty(e):
    return getattr(e, "_checked_type", None)


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


def winograd_cost(n, c, oh, ow, o, lanes, tile):
    """Estimated vector-FMA slots of F(tile x tile, 3x3) for this layer: the batched GEMM and
    the transforms at the Winograd stages' efficiency, the transformed weight's bytes at the
    streaming rate, and the start-up of three more stages than the direct kernel."""
    alpha = tile + 2
    p = n * -(-oh // tile) * -(-ow // tile)
    t_in, t_out = transform_terms(tile)
    fma = alpha * alpha * p * c * (o + t_in) + tile * tile * p * o * t_out
    weight_bytes = alpha * alpha * c * o * 4
    return (fma / lanes / _WINOGRAD_EFF + weight_bytes / (_BYTES_PER_LANE_SLOT * lanes)
            + 3 * _STAGE_OVERHEAD)


def direct_cost(n, c, oh, ow, o, lanes):
    """Estimated vector-FMA slots of the direct NCHW{c}c 3x3 convolution (its FMAs and its
    weight, ``9 C O`` floats, streamed once)."""
    return n * o * oh * ow * c * 9 / lanes / _DIRECT_EFF + \
        9 * c * o * 4 / (_BYTES_PER_LANE_SLOT * lanes)


def winograd_tile(n, c, h, w, o, lanes, pad=(1, 1, 1, 1)):
    """The tile size (4 or 2) the model prefers for a stride-1 3x3 convolution of (n, c, h, w)
    data into ``o`` channels with ``lanes`` float32 vector lanes and ``pad`` (top, left,
    bottom, right), or None for the direct convolution (always for fewer channels than
    lanes)."""
    oh, ow = h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2
    if oh < 1 or ow < 1 or c < lanes or o < lanes:
        # the stages vectorize over channels: fewer than a vector's worth leaves them scalar
        return None
    best, best_cost = None, direct_cost(n, c, oh, ow, o, lanes)
    for tile in (4, 2):
        cost = winograd_cost(n, c, oh, ow, o, lanes, tile)
        if cost < best_cost:
            best, best_cost = tile, cost
    return best


def eligible(orig, new, need_constant=True) -> bool:
    """Whether ``new`` (a ``nn.conv2d`` call; ``orig`` its typed original) can be Winograd."""
    a = new.attrs
    t_in, t_w = _ty(orig.args[0]), _ty(orig.args[1])
    if not (isinstance(t_in, TensorType) and isinstance(t_w, TensorType)):
        return False
    if len(t_in.shape) != 4 or len(t_w.shape) != 4 or \
            not all(isinstance(d, int) for d in (*t_in.shape, *t_w.shape)):
        return False
    if (a.data_layout, a.kernel_layout, a.out_layout) != ("NCHW", "OIHW", ""):
        return False
    if tuple(t_w.shape[2:]) != (3, 3) or a.groups != 1 or tuple(a.strides) != (1, 1) or \
            tuple(a.dilation) not in ((1, 1), (1,)):
        return False
    if t_in.dtype != "float32" or t_w.dtype != "float32" or a.out_dtype not in ("", "float32"):
        return False
    return not need_constant or type(new.args[1]) is Constant


def _target_lanes():
    """float32 lanes of the current target (host LLVM when none is set), or None for a target
    that is not a CPU."""
    import tvm

    # the ISA model lives with the CPU schedules (AlterOpLayout is a target-dependent pass)
    from ..backend.schedule.cpu import vector_lanes
    from ..backend.target import make_target

    tgt = tvm.target.Target.current(allow_none=True) or make_target(None)
    if tgt.kind.name != "llvm":
        return None
    return vector_lanes(tgt, 32)


def winograd_decider():
    """``decide(orig, new) -> tile or None`` under the current PassContext and target.

    Raises:
        RelayError: the config value is not ``"auto"``, ``"never"``, 2 or 4.
    """
    from .pass_infra import PassContext

    mode = PassContext.current().config.get(CONFIG_KEY, "auto")
    if mode not in ("auto", "never", 2, 4):
        raise RelayError(f"PassContext config {CONFIG_KEY!r} must be 'auto', 'never', 2 or 4, "
                         f"got {mode!r}")
    if mode == "never":
        return lambda orig, new: None
    if mode in (2, 4):
        return lambda orig, new: mode if eligible(orig, new, need_constant=False) else None
    lanes = _target_lanes()
    if lanes is None:
        return lambda orig, new: None

    def decide(orig, new):
        if not eligible(orig, new):
            return None
        n, c, h, w = _ty(orig.args[0]).shape
        o = _ty(orig.args[1]).shape[0]
        pad = nn_winograd._pad4(new.attrs.padding)
        return winograd_tile(n, c, h, w, o, lanes, pad)

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
    u = nn_winograd.contrib_conv2d_winograd_weight_transform(new.args[1], tile)
    u = make_call("reshape", [u], newshape=(alpha, alpha, o // oc, oc, c))
    u = make_call("transpose", [u], axes=(0, 1, 2, 4, 3))
    conv = make_call(nn_winograd.OP, [data, u], span=new.span, tile_size=tile, strides=(1, 1),
                     padding=tuple(nn_winograd._pad4(a.padding)), dilation=(1, 1), groups=1,
                     channels=o, kernel_size=(3, 3), data_layout=dl, kernel_layout=f"OIHW{oc}o",
                     out_layout=ol, out_dtype=a.out_dtype)
    return make_call("layout_transform", [conv], span=new.span, src_layout=ol, dst_layout="NCHW")


__all__ = ["winograd_tile", "winograd_cost", "direct_cost", "eligible", "winograd_decider",
           "winograd_conv", "CONFIG_KEY"]

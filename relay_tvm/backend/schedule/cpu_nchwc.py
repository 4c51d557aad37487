"""CPU template of ``nn.contrib_conv2d_NCHWc`` (rule ``"conv2d_NCHWc"``, registered in
:mod:`.cpu`), what AlterOpLayout makes of the NCHW convolutions of a model.

Data ``NCHW[ic]c``, weight ``OIHW[ic]i[oc]o`` and output ``NCHW[oc]c`` are blocked already, so
the register tile is ``wb`` output positions (unrolled, one broadcast input scalar each) x
``cg`` output-channel blocks (the contiguous vectors of the packed weight); the reduction runs
over input-channel blocks, then ``(kh, kw)``, then the contiguous channels of a block.

The output positions of a tile are consecutive in a *chunk* of ``rows`` output rows fused
(``rows x OW`` positions; 1x1 layers of 7x7 or 13x13 make one chunk of the whole plane), and
``wb`` need not divide the chunk: the chunk's last ``chunk % wb`` positions are a second,
narrower tile (``loop_partition``), so a 17-column row gets 6-wide tiles and a 5-wide tail
instead of 17 one-column tiles that wait on the FMA latency. The knobs come from the register
and cycle model of :mod:`.cpu_model` (:func:`~.cpu_model.row_tile`).

Loop order: ``(n, chunk, channel-block group)`` in parallel (knob ``rmajor``, see
:func:`rows_major_default`) or ``(n, channel-block group, chunk)``, the epilogue (bias,
activation, residual add) computed per chunk while it is in L1. Knob ``rfirst`` runs the input-channel
blocks outermost instead (one block's weights, L1-sized, serve the whole output plane, whose
partial sums stay in L1): better when the weights overflow L1 and the plane does not. Knob
``kc`` runs the reduction in passes of ``kc`` input-channel blocks over each chunk instead (the
cache blocking of a GEMM's reduction: one pass's weights stay in L1 for every tile of the
chunk, the partial sums wait in the output between passes), for large 1x1 reductions on
planes too large for ``rfirst``.
"""

from __future__ import annotations

from . import generic
from .cpu import (
    Knobs,
    NotApplicable,
    _finish_padding,
    _inline_all_but,
    _padding_blocks,
    _read_buffer,
    _reduction_blocks,
    _root_blocks,
    _vectorize_inner,
    _window_prologue,
    _write_buffer,
    register,
)
from .cpu_model import cpu_features, divisors, register_tile, row_tile


def np_prod(shape) -> int:
    out = 1
    for d in shape:
        out *= int(d)
    return out

_CHUNK_MAX = 256  # output positions of one chunk (a tail tile at most once per chunk)
_MIN_TASKS = 8  # parallel tasks wanted (two per thread on a 4-core machine)
# Software prefetch of the next output-channel block's weights (``prefetch.KEY``) in the one-pass
# reduction of planes of at most this many outputs, with 512-bit vectors. One Zen 4 core
# (AVX-512), ResNet-50 / MobileNet-1.0 in one process, CPU clock: 63.1 -> 56.5 / 11.7 -> 10.9 ms
# (up to 256 outputs: 60.0 / 11.0; two groups ahead instead of one: 57.8 / 11.4). One Zen 1 core
# (AVX2, 256-bit FMAs run as two halves): ResNet-50 unchanged, MobileNet and ResNet-18 0.7-2%
# slower, so AVX2 code takes none. Only tiles of one output-channel block take it: with
# several (one line of each of the next group's blocks per step, the addresses checked right)
# Zen 4 ran 2.4-2.6x slower on many layers whatever the tile's width, cause not found (2
# threads, one kernel: Inception-v3's 3x1 384->384 layer on 8x8 with 6 blocks 0.71 ms, with
# none 0.28; its 3x3 stride-2 192->320 on 17x17, 5 blocks: 0.86 / 0.34; ResNet-18's stride-2
# 64->128 on 56x56, 4 blocks: 1.43 / 0.60; 128->256 on 28x28: 2 blocks 1.33 / 0.56, 4 blocks
# 0.55 / 0.56), never faster. Whole networks (same process, A/B, 2 threads): Inception-v3
# 51.4 -> 47.0 ms, ResNet-18 10.36 -> 9.87; one thread 1.10x both; others within 2%.
# Chunks that end in a tail tile (``loop_partition``) take none: those figures are of that
# rule. On Zen 3 (AVX2, 256-bit FMAs; 2026-12-07) it paid nowhere: for AVX2 code ResNet-50 and
# MobileNet-1.0 ran 0.99x as fast at one thread (CPU time), 1.02x / 1.00x at two (best
# round); with the tail parts annotated as well, a chain of twelve 1024->256 1x1 layers on
# 14x14 (tiles 5+5+4) ran 12% slower alone and no faster in sequence (the tile is bound by
# its loads, and a prefetch is one more).
# A tail tile's innermost reduction loop unrolled by this much in TIR (0: left to LLVM).
# Left to LLVM, ResNet-18's stride-2 1x1 layer 128->256 on 14x14 (tiles of 5 + 5 + 4
# positions x 2 vectors) had its tail's loop unrolled by 2 and the 8 accumulators kept on the
# stack (AVX2 code for haswell, znver2, znver3: 64-81 FMAs reading the stack), 0.142 ms on
# two Zen 3 cores against 0.067 for a tile without tail; unrolled by 4 here: 0.067 ms, no FMA
# reads the stack. Whole models (one process, A/B, 2 threads, Zen 3, 2026-12-07): ResNet-18,
# ResNet-50, MobileNet-1.0, MobileNetV2 within 1%; every tile unrolled so: the same.
_TAIL_RED_UNROLL = 4
_DIRECT_PREFETCH_MAX_PLANE = 1024
_DIRECT_PREFETCH_MIN_BITS = 512  # vector width from which it is used
_L2_BYTES_PER_CYCLE = 32  # sustained reads per core (Haswell..Zen 4: 32-64 B/cycle from L2)
_L2_STREAM_SHARE = 0.75  # of the L2's refill rate (CPUFeatures.l2_bytes_per_cycle) sustained
# by weights re-read from L2 by every tile (24 B/cycle on Zen 3: a 3x3 layer's cg=2 tile
# streaming 73 KB of weights ran 10% slower than its cg=1 tile)
_L3_BYTES_PER_CYCLE = 12  # (from L3 / other cores' slices, measured 10-16 B/cycle on Zen 3)


def _plan(feats, knobs, *, N, OCC, OB, OH, OW, lanes, red_bytes, split_ic, in_bytes, icb=1,
          conditional=False, pointwise=False, rows_only=False):
    """``(cg, rows, wb, rfirst, kc)``: the knobs of the tile, chunk and reduction order (model
    defaults, see the module doc).

    For each ``(cg, rows)``: the reduction may run channel-block first (``rfirst``) when the
    tile's weights (``cg x OB x red_bytes``) take more than half of L1 and the block's output
    plane fits it; a multi-row chunk must leave the weights room in L1 (its output is
    re-read by the epilogue). The reduction may also run in passes of ``kc`` of the
    ``icb`` input-channel blocks over the chunk (the GEMM's cache blocking of its reduction:
    the pass's weights, at most a quarter of L1, serve every tile of the
    chunk, whose partial sums stay in L1 between passes), or in one pass (``kc == icb``). The
    estimated time is the register tile's cycles (:func:`.cpu_model.row_tile`; when the
    weights of a pass do not stay in L1 every tile, the row's tail included, waits for its
    weight vectors at ``_L2_STREAM_SHARE`` of the L2's refill rate, or at
    ``_L3_BYTES_PER_CYCLE`` when they exceed 3/4 of L2 and the next row of the group must
    fetch them again from L3; one reload and store of the accumulators per
    pass, and per channel block with ``rfirst``) plus the input's traffic: each of the
    ``OCC / cg`` channel groups reads the whole input (``in_bytes``), from L2 when it fits half
    of it, else from L3 (``_L2_BYTES_PER_CYCLE``, ``_L3_BYTES_PER_CYCLE``), so a larger ``cg``
    pays off on large inputs (ResNet-50's 1024-channel strided 1x1 layers). The plan's time is
    the sum of compute and reads, or the larger of the two where the reads stream in while
    the FMAs run (``CPUFeatures.overlapped_reads``: 256-bit x86). The fastest wins,
    then the fewest rows, among the choices leaving at least ``_MIN_TASKS`` parallel tasks when
    some do. ``conditional``: the input is read through its padding (conditional loads: the
    register tile leaves each broadcast a register, :func:`.cpu_model.row_tile`).
    ``pointwise``: a 1x1 layer. On cores that split 512-bit operations in halves
    (``CPUFeatures.split_512``, Zen 4) 1x1 layers and layers read through their padding take
    one channel block per tile, up to 8 positions wide (see the comment in the body).
    ``rows_only``: the parallel tasks are the chunks alone (every channel group of a chunk in
    one task, no ``rfirst``: the merged depthwise-pointwise kernel)."""
    per_block = max(1, OB // lanes)
    # up to 8 blocks: 8-channel blocks (1000 classes: 125 blocks of 8) need 5 for a 2x5 tile
    cg_choices = [c for c in divisors(OCC, 8) if c * per_block <= 8]
    rows_all = divisors(OH, OH)
    kc_all = divisors(icb, icb) if split_ic else [1]
    full = kc_all[-1]
    l1 = feats.l1d_bytes

    def channel_block_first(cg):
        return int(split_ic and cg * OB * red_bytes > l1 // 2 and OB * cg * OH * OW * 4 <= l1)

    def pass_blocks(cg):
        """The most input-channel blocks whose weights take at most a quarter of L1 (the rest
        holds the chunk's partial sums and the input streaming through; on Zen 3, ResNet-50's
        512->128 1x1 layer ran 5% faster with passes of 8 KB of weights than of 16 KB, and 1.4x
        faster than in one pass streaming 64 KB)."""
        fit = [k for k in kc_all if cg * OB * red_bytes * k // full <= l1 // 4]
        return fit[-1] if fit else kc_all[0]

    cands = []
    steps = red_bytes // 4
    stream = _L2_STREAM_SHARE * feats.l2_bytes_per_cycle()
    for cg in cg_choices:
        wbytes = cg * OB * red_bytes
        for rfirst in [0] if rows_only else sorted({0, channel_block_first(cg)}):
            for kc in [full] if rfirst else sorted({full, pass_blocks(cg)}, reverse=True):
                wpass = wbytes * kc // full
                for rows in rows_all:
                    chunk = rows * OW
                    out = chunk * cg * OB * 4
                    if (rows > 1 or kc != full) and (chunk > _CHUNK_MAX or out > l1 // 2
                                                     or (not rfirst and out + wpass > l1)):
                        continue
                    # each step's v weight vectors from L2 (every tile, the tail too), or
                    # from L3 when the next row's tiles find them no longer in L2
                    rate = None
                    if not rfirst and wpass > l1 // 2:
                        rate = stream if rows == OH or wpass <= feats.l2_bytes * 3 // 4 \
                            else _L3_BYTES_PER_CYCLE
                    wb, _, cost = row_tile(feats, chunk, [cg * per_block],
                                           conditional=conditional, stream=rate)
                    # accumulators loaded and stored once per pass (rfirst: per channel block;
                    # on Zen 5 rfirst ran 4-20% slower than one pass streaming the weights
                    # from L2 on every 1x1 layer of ResNet-50 and MobileNet where it applied)
                    if rfirst:
                        cost += 2.0 / feats.load_ports * icb / steps
                    elif kc != full:
                        cost += 2.0 / feats.load_ports * (full // kc) / steps
                    # rows counted as tasks for rfirst too, although its parallel loop is
                    # (n, channel groups): counting only those excluded rfirst on small
                    # planes and made SqueezeNet 1.3-1.5x slower end to end (Zen 3, 2 threads)
                    tasks = N * (1 if rows_only else OCC // cg) * (OH // rows)
                    compute = cost * N * OCC * per_block * OH * OW * steps
                    bw = _L2_BYTES_PER_CYCLE if in_bytes <= feats.l2_bytes // 2 \
                        else _L3_BYTES_PER_CYCLE
                    traffic = N * (OCC // cg) * in_bytes / bw
                    total = max(compute, traffic) if feats.overlapped_reads \
                        else compute + traffic
                    cands.append((round(total), rows, -kc, rfirst, cg, wb, tasks))
    enough = [c for c in cands if c[6] >= _MIN_TASKS] or cands
    _, rows0, nkc0, rfirst0, cg0, wb0, _ = min(enough)
    if feats.split_512 and (pointwise or conditional) and not rfirst0 and cg0 > 1 \
            and OB >= lanes:
        # One 512-bit FMA a cycle whatever the tile (Zen 4): every tile with enough
        # accumulators computes at the same rate, and for a 1x1 layer a tile of one channel
        # block (one output plane written, the smallest weight slice in L1, the input re-read
        # per block from L2 or L3 by the prefetchers while the FMAs run) ran fastest, up to 8
        # positions wide. The
        # one-thread knob sweep on Zen 4: MobileNet's 1x1 layers 4-16% faster than with 4 blocks
        # x 4 positions; whole models (same process, A/B): ResNet-50 1.05-1.09x, MobileNet
        # 1.02-1.05x, ResNet-18 unchanged. Not for blocks narrower than a vector (SqueezeNet's
        # 1000-channel layer on 8-channel blocks keeps its group of 5), nor for larger windows
        # (ResNet's 7x7 stem on a padded copy was within 4% of its best). A stem read through
        # its padding (conditional loads: MobileNet's 3x3 stride-2 one) ran 1.55-1.75x faster
        # with one block x 7-8 positions than with the model's 2 blocks x 8.
        cg0 = 1
        wb0 = row_tile(feats, rows0 * OW, [per_block], m_max=8, conditional=conditional)[0]
    cg = knobs.pick("cg", cg_choices, cg0)
    rows = knobs.pick("rows", rows_all, rows0)
    if (cg, rows) != (cg0, rows0):  # a tuner's cg / rows: the model's best choice for them
        mine = [c for c in cands if (c[4], c[1]) == (cg, rows)]
        if mine:
            _, _, nkc0, rfirst0, _, wb0, _ = min(mine)
        else:  # a chunk the model rules out: its register tile, one pass
            wb0 = row_tile(feats, rows * OW, [cg * per_block], conditional=conditional)[0]
            rfirst0, nkc0 = 0, -full
    wb = knobs.pick("wb", range(1, min(16, rows * OW) + 1), wb0)
    rfirst = knobs.pick("rfirst", [0, 1] if split_ic and not rows_only else [0], rfirst0)
    kc = knobs.pick("kc", [full] if rfirst else kc_all, full if rfirst else -nkc0)
    return cg, rows, wb, rfirst, kc


def rows_major_default(w_bytes: int, in_bytes: int, out_bytes: int) -> bool:
    """Whether the parallel loop runs output rows outermost (``(n, chunk, channel group)``: each
    thread computes every output channel of its rows, reading only its rows of the input)
    rather than channel groups outermost (each thread its channel groups, reading the whole
    input). Rows first when each thread reading the whole weight costs less than twice the
    activations that would otherwise go from one core's cache to the other's:
    ``w_bytes <= 2 * (in_bytes + out_bytes)`` (the rule of the Winograd template's
    ``tiles_first``). Rows first, every layer of a chain splits its plane the same way between
    the threads (the first thread takes chunks from the front, :mod:`..dynamic_parallel`), so
    a 1x1 layer's input rows, and all but a halo of a 3x3 layer's, were written by the same
    core. Both states of two Zen 4 vCPUs (RESULTS.md, 2026-12-05): the cache-line round trip
    between them 50-90 ns or 330-365 ns; in the slow one ResNet-50 31.2 -> 29.0 ms, SqueezeNet
    10.3 -> 8.9, MobileNet-1.0 7.6 -> 6.8, MobileNetV2 5.8 -> 5.1; in the fast one ResNet-50
    26.4 -> 25.7, the others within 2%. ResNet-50's 7x7 layers (512 and 2048 channels) keep
    channel groups first."""
    return w_bytes <= 2 * (in_bytes + out_bytes)


def _input_bytes(shape, OH: int, KH: int) -> int:
    """Bytes of the blocked input ``(N, C/c, H, W, c)`` a convolution reads: a strided 1x1
    layer skips the rows between its output rows (ResNet's stride-2 1x1 layers read every other
    row; the rows they read are counted whole, the hardware prefetcher fetching the lines they
    skip), which matters where the model weighs re-reading the input per channel group."""
    n, cb, h, w, c = (int(d) for d in shape)
    return n * cb * min(h, OH * KH) * w * c * 4


def _chunked_loops(sch, block, rows, OW, split_ic, ic_bn):
    """``(n, occ, oho, p, ocb, ico, ici, kh, kw)``: the block's loops with the output rows in
    chunks of ``rows`` (``oho``) and the chunk's positions one loop ``p``, the input channels
    in ``(ico, ici)`` blocks (``ici`` None when not split). A multi-row chunk is made a block
    iterator of its own (``transform_block_layout``), so splitting ``p`` by a ``wb`` that does
    not divide ``OW`` keeps the block's bindings affine."""
    if rows > 1:
        sch.transform_block_layout(block, lambda n, c, h, w, b, i, kh, kw: (
            n, c, h // rows, h % rows * OW + w, b, i, kh, kw))
    n, occ, oho, p, ocb, ic, kh, kw = sch.get_loops(block)
    if split_ic:
        ico, ici = sch.split(ic, factors=[None, ic_bn])
    else:
        ico, ici = ic, None
    return n, occ, oho, p, ocb, ico, ici, kh, kw


def _block_names(sch) -> set:
    """The names of every block of the function, at any depth."""
    names, stack = set(), [sch.get_sblock("root")]
    while stack:
        for b in sch.get_child_blocks(stack.pop()):
            names.add(sch.get(b).name_hint)
            stack.append(b)
    return names


def _tile_part(sch, block, wb, nred, decomposed, epi=None, chunk_loop=None, tail=False):
    """Tile one part (the whole chunk, or its main part / tail after partitioning): its loops
    end ``[p, occi, ocb, <nred reduction loops>]``; ``p`` is split by ``wb`` (when it is
    larger), the reduction moved outside the tile, the epilogue ``epi`` (when given) computed
    per tile, the tile's positions unrolled and the accumulator's initialisation split off
    (unless it was split off before: ``decomposed``). ``tail``: the chunk's tail tile, whose
    innermost reduction loop is unrolled by ``_TAIL_RED_UNROLL``."""
    loops = sch.get_loops(block)
    p, occi, ocb = loops[-3 - nred:-nred]
    red_loops = loops[-nred:]
    ext = generic.loop_extent(sch, p)
    if ext is not None and ext > wb:
        po, pi = sch.split(p, factors=[None, wb])
        sch.reorder(po, *red_loops, pi, occi, ocb)
    else:
        po, pi = chunk_loop, p
        sch.reorder(*red_loops, pi, occi, ocb)
    if epi is not None:
        sch.reverse_compute_at(epi, po, preserve_unit_loops=True)
    inner = red_loops[-1]
    red_ext = generic.loop_extent(sch, inner)
    step = _TAIL_RED_UNROLL if tail else 0
    if step and red_ext is not None and red_ext > step and red_ext % step == 0:
        sch.unroll(sch.split(inner, factors=[None, step])[1])
    sch.unroll(pi)
    if not decomposed:
        sch.decompose_reduction(block, red_loops[0])


_INLINE_PAD_MAX_FMAS = 16  # vector FMAs per input element below which a narrow pad is inlined


def _maybe_inline_padding(sch, anchor, pad_names, ic_bn, lanes, fmas_per_window, knobs=None):
    """Inline the padded input into the convolution (conditions in its loads) instead of
    materializing it when its channel block is narrower than half a vector and the layer does
    few FMAs per input element (``fmas_per_window`` vector FMAs per input position and
    channel over the strides' area at most ``_INLINE_PAD_MAX_FMAS``): the padding pass then
    writes partial vectors, one position at a time, and costs a large part of the
    convolution. MobileNet's 3x3 stride-2 stem on 3 channels (9 vector FMAs per element):
    0.36 -> 0.25-0.30 ms on one Zen 3 core; ResNet's 7x7 stem (98) keeps its pass. Returns
    the padding blocks still materialized."""
    if not pad_names:
        return pad_names
    strides = [int(s) for s in anchor.attrs.strides] if anchor.attrs is not None else [1, 1]
    default = int(2 * ic_bn <= lanes
                  and fmas_per_window / (strides[0] * strides[1]) <= _INLINE_PAD_MAX_FMAS)
    if not (knobs or Knobs()).pick("padin", [0, 1], default):
        return pad_names
    for b in _root_blocks(sch):
        if sch.get(b).name_hint in pad_names:
            try:
                sch.compute_inline(b)
            except Exception:  # TVM's ScheduleError: keep it materialized
                return pad_names
    return set()


def _prefetch_next_block(sch, loop, feats, cg, group):
    """Annotate the innermost reduction ``loop`` for :mod:`..prefetch`: the next output-channel
    block's weights (``group`` elements on), one line per step, for a tile of one block
    (``cg == 1``) where the vector width is at least ``_DIRECT_PREFETCH_MIN_BITS`` (see the
    constants' comment: tiles of several blocks ran up to 2.6x slower with it)."""
    if feats.vector_bits < _DIRECT_PREFETCH_MIN_BITS or cg != 1:
        return
    from ..prefetch import KEY

    sch.annotate(loop, KEY, group)


def _vnni_operands(sch, block, epi, feats) -> bool:
    """uint8 data, int8 weight, int32 output on a VNNI target (AlterOpLayout's quantized
    convolutions, ``transform/int8_conv.py``)."""
    dts = tuple(str(_read_buffer(sch, block, i).dtype) for i in (0, 1))
    return dts == ("uint8", "int8") and bool(feats.dot_lanes) and \
        str(_write_buffer(sch, block).dtype) == "int32" and not isinstance(epi, tuple)


def _schedule_vnni(sch, block, pad_names, epi, feats, knobs):
    from ..lower import Pack
    from . import cpu_int
    from .cpu import _param_index, _tile_epilogue

    return cpu_int.schedule_conv2d_nchwc_int(
        sch, block, pad_names, epi, cpu_int.vnni_form(feats.dot_lanes), feats, knobs,
        (Pack, _param_index, _read_buffer, _tile_epilogue, _vectorize_inner, _finish_padding,
         generic))


@register("conv2d_NCHWc")
def schedule_conv2d_nchwc(sch, anchor, target, knobs=None):
    """The NCHWc convolution template (see the module doc). Knobs: ``cg`` (output-channel
    blocks per tile), ``rows`` (output rows per chunk), ``wb`` (output positions per tile, any
    size up to 16: the chunk's remainder becomes a tail tile), ``rfirst`` (input-channel blocks
    outermost), ``kc`` (input-channel blocks per reduction pass over a chunk; all of them: one
    pass), ``rmajor`` (chunks of rows outer to the channel groups in the parallel loop)."""

    block, epi, pad_names = _window_prologue(sch, 5, 3, "an 8-loop NCHWc convolution")
    knobs, feats = knobs or Knobs(), cpu_features(target)
    if _vnni_operands(sch, block, epi, feats):
        return _schedule_vnni(sch, block, pad_names, epi, feats, knobs)
    _nchwc_tiles(sch, block, epi, pad_names, anchor, feats, knobs)
    return {}


def _nchwc_tiles(sch, block, epi, pad_names, anchor, feats, knobs, row_producers=None):
    """Schedule the float NCHWc convolution ``block`` (its epilogue ``epi``, padding blocks
    ``pad_names``) as the module doc says. ``row_producers``: a function that computes the
    block's producers at the parallel loop, called with it before the tiles are made (a
    producer computed at that loop then covers the block's exact reads: the blocks of a tail
    partition declare looser ones); the parallel loop is then ``(n, chunk)`` alone, the
    channel groups a serial loop inside it (``_plan``'s ``rows_only``)."""
    import tvm

    lanes = feats.lanes(tvm.DataType(str(_write_buffer(sch, block).dtype)).bits)
    n, occ, oh, ow, ocb, ic, kh, kw = sch.get_loops(block)
    ext = {k: generic.loop_extent(sch, lp) for k, lp in
           zip(("n", "occ", "oh", "ow", "ocb", "ic", "kh", "kw"), sch.get_loops(block))}
    if any(v is None for v in ext.values()):
        raise NotApplicable("symbolic extents")
    N, OCC, OH, OW, OB, IC = (ext[k] for k in ("n", "occ", "oh", "ow", "ocb", "ic"))
    KH, KW = ext["kh"], ext["kw"]
    ic_bn = int(_read_buffer(sch, block, 0).shape[-1])
    padded = bool(pad_names)
    pad_names = _maybe_inline_padding(sch, anchor, pad_names, ic_bn, lanes,
                                      OCC * OB * KH * KW / lanes, knobs)
    split_ic = ic_bn > 1 and IC % ic_bn == 0
    icb = IC // ic_bn if split_ic else 1
    in_bytes = _input_bytes(_read_buffer(sch, block, 0).shape, OH, KH)
    cg, rows, wb, rfirst, kc = _plan(
        feats, knobs, N=N, OCC=OCC, OB=OB, OH=OH, OW=OW, lanes=lanes, red_bytes=IC * KH * KW * 4,
        split_ic=split_ic, in_bytes=in_bytes,
        icb=icb, conditional=padded and not pad_names, pointwise=KH == 1 and KW == 1,
        rows_only=row_producers is not None)
    # (the candidates do not depend on rfirst, which fixes its own order: a tuner's joint
    # assignment of both stays valid)
    rows_only = row_producers is not None
    rmajor = 1 if rows_only else knobs.pick("rmajor", [0, 1], int(
        not rfirst and OH > rows and rows_major_default(
            OCC * OB * IC * KH * KW * 4, in_bytes, N * OCC * OB * OH * OW * 4)))
    n, occ, oho, p, ocb, ico, ici, kh, kw = _chunked_loops(sch, block, rows, OW, split_ic, ic_bn)
    occo, occi = sch.split(occ, factors=[None, cg])
    passes = kc < icb  # the reduction in passes of kc channel blocks over the chunk
    if passes:
        icoo, ico = sch.split(ico, factors=[None, kc])
    red = [ico, kh, kw] + ([ici] if ici is not None else [])
    outer = (oho, occo) if rmajor else (occo, oho)
    if rfirst:
        sch.reorder(n, occo, ico, oho, p, occi, ocb, kh, kw, ici)
    else:  # with passes, a pass's channel blocks over the chunk
        sch.reorder(n, *outer, *([icoo] if passes else []), p, occi, ocb, *red)
    # the tile's channel loops, annotated before the reduction is decomposed (the primitives
    # want a reduction block) and before any partition (which copies them)
    sch.unroll(occi)
    sch.vectorize(ocb)
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    chunk = rows * OW
    tail = chunk % wb if chunk > wb else 0
    # the epilogue per tile while its outputs are in registers/L1; with a tail tile per chunk,
    # with passes (per chunk) or with rfirst (per output block), placed before the partition
    # (loop_partition's blocks have loose write regions that would make a later one cover too
    # much). A tile straddling two rows of a multi-row chunk (``OW % wb != 0``) covers no
    # rectangle of the output: TVM's region of an epilogue computed at its loop then missed the
    # next row's first columns (wrong results: a (1, 3, 2, 15) input, 1x1 kernel, chunk 30,
    # tiles of 10), so such tiles get the epilogue per chunk too
    tile_epi = not (rfirst or tail or passes) and (rows == 1 or OW % wb == 0)
    if not tile_epi:
        sch.reverse_compute_at(epi, occo if rfirst else outer[1], preserve_unit_loops=True)
    fused = sch.fuse(n, occo) if rfirst else sch.fuse(n, oho) if rows_only \
        else sch.fuse(n, *outer)
    sch.parallel(fused)
    if rows_only:
        row_producers(fused)
    if rfirst or passes:
        sch.decompose_reduction(block, ico if rfirst else icoo)
        block = sch.get_sblock(sch.get(block).name_hint)
    nred = 3 if rfirst else len(red)
    decomposed = bool(rfirst or passes)
    if tail:
        before = _block_names(sch)
        sch.loop_partition(p, [chunk - tail, None])
        parts = sorted(b for b in _block_names(sch) - before
                       if not b.endswith(("_partition", "_common")))
        if len(parts) != 2:
            raise NotApplicable(f"loop_partition made blocks {parts}")
        for k, part in enumerate(parts):  # named in order: the second is the tail
            _tile_part(sch, sch.get_sblock(part), wb, nred, decomposed, tail=k == 1)
    else:
        _tile_part(sch, block, wb, nred, decomposed, epi if tile_epi else None,
                   occo if rows_only else fused)
        if not (rfirst or passes) and OH * OW <= _DIRECT_PREFETCH_MAX_PLANE \
                and str(_write_buffer(sch, block).dtype) == "float32":
            _prefetch_next_block(sch, red[-1], feats, cg, IC * KH * KW * OB)
    _vectorize_inner(sch, epi, lanes)
    _finish_padding(sch, pad_names)


def schedule_depthwise_pointwise(sch, target, knobs=None):
    """The kernel of a depthwise NCHWc convolution (and its elementwise tail) merged into the
    1x1 NCHWc convolution that reads it (``transform/fuse_depthwise.py``).

    The 1x1 convolution is tiled as :func:`schedule_conv2d_nchwc` tiles it, with chunks of
    output rows as the only parallel tasks (every channel group of a chunk in one task); at
    the start of each chunk the depthwise convolution computes those rows, every channel, into
    a scratch buffer of ``rows x OW x C`` (allocated per task: it stays in L1/L2 for the 1x1
    tiles that read it). The depthwise part reads its input through the padding (conditional
    loads, as the depthwise template's default ``padin``), its tile ``dwb`` columns x the
    channel block, its tail (bias, activation) computed per tile. Knobs: those of the 1x1
    template but ``rmajor`` and ``rfirst``, and ``dwb``. Raises NotApplicable for other
    functions."""

    reds = _reduction_blocks(sch)
    kinds = [generic.iter_kinds(sch, b) for b in reds]
    if len(reds) != 2 or kinds != [["S"] * 5 + ["R"] * 2, ["S"] * 5 + ["R"] * 3]:
        raise NotApplicable("not a depthwise convolution feeding an NCHWc convolution")
    dw, pw = reds
    dw_name, pw_name = sch.get(dw).name_hint, sch.get(pw).name_hint
    pad_names = _padding_blocks(sch)
    data = _read_buffer(sch, pw, 0)
    mids = [b for b in sch.get_producers(pw) if _write_buffer(sch, b).same_as(data)]
    mid_name = sch.get(mids[0]).name_hint if mids else dw_name
    _inline_all_but(sch, pad_names | {mid_name})
    for b in _root_blocks(sch):  # the depthwise input read through its padding
        if sch.get(b).name_hint in pad_names:
            sch.compute_inline(b)
    dw, pw = sch.get_sblock(dw_name), sch.get_sblock(pw_name)
    root = sch.get_sblock("root")
    outs = sch.get_output_blocks(root)
    if len(outs) != 1:
        raise NotApplicable(f"{len(outs)} output blocks")
    names = {sch.get(b).name_hint for b in _root_blocks(sch)}
    epi = None if sch.get(outs[0]).name_hint == pw_name else outs[0]
    if names - {dw_name, mid_name, pw_name} - ({sch.get(epi).name_hint} if epi else set()):
        raise NotApplicable(f"blocks {sorted(names)} besides the two convolutions and tails")
    if epi is not None and [int(d) for d in _write_buffer(sch, epi).shape] != \
            [int(d) for d in _write_buffer(sch, pw).shape]:
        raise NotApplicable("reshaping epilogue")
    knobs, feats = knobs or Knobs(), cpu_features(target)
    if str(_write_buffer(sch, pw).dtype) != "float32":
        raise NotApplicable("not float32")
    lanes = feats.lanes(32)

    def depthwise_rows(fused):
        if mid_name != dw_name:
            sch.compute_at(sch.get_sblock(mid_name), fused, preserve_unit_loops=True)
        sch.compute_at(sch.get_sblock(dw_name), fused, preserve_unit_loops=True)

    _nchwc_tiles(sch, pw, epi, set(), None, feats, knobs, row_producers=depthwise_rows)
    dw = sch.get_sblock(dw_name)
    mid = sch.get_sblock(mid_name) if mid_name != dw_name else None
    loops = sch.get_loops(dw)
    n, cb, oh, ow, c, ri, rj = loops[-7:]
    OW, CB = generic.loop_extent(sch, ow), generic.loop_extent(sch, c)
    # at most 8 columns: MobileNet-1.0's 112x112 32-channel layer merged with its 1x1 layer ran
    # 0.313 ms with 16-column depthwise tiles, 0.268-0.271 with 4, 7, 8 or 14 (one Zen 4
    # vCPU pair; the other layers within 1% whatever the width)
    wb0, _ = register_tile(feats, divisors(OW, 8), [max(1, CB // lanes)])
    wb = knobs.pick("dwb", divisors(OW, 16), wb0)
    owo, owi = sch.split(ow, factors=[None, wb])
    sch.reorder(cb, oh, owo, ri, rj, owi, c)
    if mid is None:
        mid = sch.cache_write(dw, 0, "global")
    sch.reverse_compute_at(mid, owo, preserve_unit_loops=True)
    sch.unroll(rj)
    sch.unroll(owi)
    sch.vectorize(c)
    sch.decompose_reduction(dw, ri)
    _vectorize_inner(sch, mid, lanes)
    return {}

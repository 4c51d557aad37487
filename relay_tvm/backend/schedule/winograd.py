"""CPU schedule of ``nn.contrib_conv2d_winograd_without_weight_transform`` (rule
``"conv2d_winograd"``, registered in :mod:`.cpu`).

The kernel (``relay_tvm.op.nn_winograd.winograd_compute``) has four stages, each a root block
scheduled on its own:

- ``data_pad``: the padded input, materialized in parallel (no branch in the transform);
- ``data_pack`` ``[a, b, p, c]``: the input transform ``B^T d B`` of tile ``p``; the loops
  ``(p, c / lanes)`` run in parallel, ``(a, b)`` are unrolled (so the transform's
  ``if_then_else`` over the tile position folds to the element's own nonzero terms) and the
  input channels, contiguous in ``NCHW{c}c`` data, are the vector lanes; the one-sided product
  ``data_tmp = B^T d`` is computed under the same loops, one transform row ``a`` at a time
  (``alpha`` vectors, in registers; knob ``rowtmp``);
- ``bgemm`` ``[a, b, p, o]``: ``alpha^2`` independent GEMMs ``(P x C) (C x O)`` with the
  register-blocked tile of the dense template: ``mb`` tiles (unrolled, their ``data_pack``
  value broadcast) x ``nb`` output channels (one or two vectors, read contiguously from the
  ``(alpha, alpha, O/k, C, k)`` packed weight), the reduction over ``C`` inside, the tiles in
  parallel. ``mb`` and ``nb`` come from the target's register model (``cpu_model``: the
  accumulators, loaded vectors and broadcast fit the register file, enough accumulators to
  hide the FMA latency); on planes of few tiles the accumulators are a buffer of their own
  and the reduction prefetches the weight (``backend/prefetch.py``);
- the output ``A^T M A`` (with the fused epilogue, bias / activation, inlined into it): the rows
  and columns are split by the tile size and unrolled (the inverse transform folds the same
  way, and ``inverse_tmp = A^T M`` is computed one output row at a time under it), the
  output-channel block is the vector, ``(n, channel block, tile row)`` in parallel.

Where the plane has tile rows enough for the threads and each thread may read the whole
transformed weight (:func:`fused_default`), the stages are instead fused per group of tile
rows (:func:`_fused_float`; the int16 pairs: :func:`_fused_pairs`): one parallel loop over the
groups, each computing its input transform, GEMMs and output transform into buffers of the
group's size, which stay in the core's L2.
"""

from __future__ import annotations

from ..._threads import module_threads

# cpu_nchwc as a module (not its names): cpu_nchwc imports .cpu, which imports this module
from . import cpu_nchwc, generic
from .cpu import Knobs, NotApplicable, _inline_all_but, _pick, _write_buffer, register, vector_lanes
from .cpu_model import cpu_features, divisors, register_tile

# how many output-channel blocks ahead the GEMM prefetches its weight: 2 ran ResNet-50 1-2%
# faster than 1 (one Zen 4 core, in one process, 2026-12-03)
PREFETCH_SLICES = 2
# the most GEMM rows (tiles) for which the GEMM prefetches its weight (see _batched_gemm)
PREFETCH_MAX_TILES = 256


def tiles_first_default(p: int, o: int, c: int) -> bool:
    """Whether the float Winograd kernel splits its work between the threads by tiles in every
    stage (input transform, GEMM, output transform: each thread transforms, multiplies and
    inverts its own tiles, so the transformed input ``V`` and the GEMM result ``M`` never go
    from one core's cache to the other's) rather than the GEMM by transform position and the
    output by channel block (each thread then reads only part of the transformed weight
    ``U``, but ``V`` and ``M`` cross between the threads). Tiles first when each thread
    reading all of ``U`` (``C x O`` per position) costs less than twice what would cross
    (``P x (C + O)``): ``C * O <= 2 * P * (C + O)``, the direct template's rule
    (:func:`.cpu_nchwc.rows_major_default`) per transform position. ResNet-18 on two Zen 4 vCPUs, the model's
    sequence, ms per kernel (fast / slow state of the machine, RESULTS.md 2026-12-05): 64@56
    (P = 196) 0.406 -> 0.389 / 0.733 -> 0.478, 128@28 (P = 49) 0.357 -> 0.345 / 0.503 ->
    0.415; 256@14 (P = 16, not chosen) 0.43 -> 0.49 / 0.56 -> 0.58; 512@7 (not chosen)
    0.70 -> 0.83 / 0.79 -> 0.84. Unknown extents: False."""
    if None in (p, o, c):
        return False
    return cpu_nchwc.rows_major_default(c * o, p * c, p * o)


def _blocks(sch):
    return {sch.get(b).name_hint: b for b in sch.get_child_blocks(sch.get_sblock("root"))}


def gemm_tile(p: int, ob: int, feats):
    """``(mb, nb)``: rows (tiles) and columns (output channels) of the register tile of the
    batched GEMM, from the target's model (:func:`.cpu_model.register_tile`): ``nb`` is whole
    vectors dividing the weight's channel block ``ob`` (contiguous). ``mb`` divides ``P`` when
    such a tile is as wide (vectors) as any and hides the FMA latency; otherwise (P = 49, 81,
    9: ``7 x 1`` or ``9 x 1`` vector tiles) the best tile over the ``mb`` that waste at most 10%
    of the rows is used and the last block of tiles is guarded (ResNet's 256@14 F(2x2) 2.67 -> 2.06 ms, Inception's 96@35
    F(4x4) 2.13 -> 1.31 ms, one AVX2 thread, cold caches)."""
    lanes = feats.lanes(32)
    vs = [v for v in (1, 2, 3, 4) if ob % (v * lanes) == 0]
    if not vs:  # a block narrower than a vector: one partial vector
        return _pick(p, [8, 7, 6, 5, 4, 3, 2]), ob
    need = feats.fma_latency * feats.fma_pipes
    # a one-vector tile gains nothing from more rows than latency x pipes (the latency is
    # hidden): on Zen 5 (AVX-512, 16-channel blocks) 13-16 rows ran the GEMM stage of the
    # 7x7 and 14x14 planes' layers (16 or 49 tiles) 1.6-2.2x slower than 7-8 (ResNet-18's
    # tuning run); on larger planes (81-1369 tiles: Inception-v3) 9-16 rows stayed faster
    cap = need if vs == [1] and p <= 64 else 16
    m, v = register_tile(feats, divisors(p, cap), vs)
    # a guarded last block may waste up to 10% of the rows
    near = [d for d in range(1, min(p, cap) + 1) if p >= 0.9 * -(-p // d) * d]
    m_any, v_any = register_tile(feats, near, vs)
    if m * v < min(need, m_any * v_any) or v < v_any:
        m, v = m_any, v_any
    return m, v * lanes


def _tmp_at(sch, block, loop, vector):
    """Compute a one-sided transform product under ``loop`` (a tile, or one transform row of
    it: see :func:`schedule_conv2d_winograd`'s ``rowtmp``), its tile axes unrolled and its
    innermost (channel) loop vectorized."""
    sch.compute_at(block, loop, preserve_unit_loops=True)
    loops = sch.get_loops(block)
    inner = loops[-4:]
    sch.unroll(inner[0])
    sch.unroll(inner[1])
    if vector and (generic.loop_extent(sch, inner[3]) or 1) > 1:
        sch.vectorize(inner[3])


def _input_transform(sch, names, a, lanes, rows_first=False, rowtmp=True):
    """Stage 1, the input transform: (p, c/lanes) parallel, (a, b) unrolled, channels
    vectorized; the one-sided product data_tmp is computed per tile and channel vector, in
    registers. With ``rows_first`` the transform's first index ``a`` leads the parallel loop
    (each thread transforms every tile for its rows of transform positions, the ones the
    GEMM split by position then reads on that thread). With ``rowtmp`` (and not
    ``rows_first``) the one-sided product is computed per transform row."""
    dp = names["data_pack"]
    la, lb, lp, lc = sch.get_loops(dp)
    c_ext = generic.loop_extent(sch, lc)
    blocked_in = a.data_layout != "NCHW"
    ic = int(a.data_layout[4:-1]) if blocked_in else 1
    vc = _pick(ic, [lanes, lanes // 2, 4]) if blocked_in else 1
    if vc > 1 and c_ext % vc == 0:
        lco, lci = sch.split(lc, factors=[None, vc])
        outer, inner, at = (lp, lco), (lb, lci), lco
    else:
        lci = None
        outer, inner, at = (lc, lp), (lb,), lp
    if rows_first:
        outer = (la, *outer)
    else:
        inner = (la, *inner)
        sch.unroll(la)
    sch.reorder(*outer, *inner)
    if lci is not None:
        sch.vectorize(lci)
    sch.unroll(lb)
    _tmp_at(sch, names["data_tmp"], la if rowtmp and not rows_first else at, vector=vc > 1)
    sch.parallel(sch.fuse(*outer))


def _batched_gemm_pairs(sch, bg, ob, p_ext, knobs):
    """Stage 2 for int16 pairs (``OIHW{k}o2i``): the register tile is ``mb`` tiles x the
    weight's ``ob`` channels (``ob / 8`` int32 vectors), each step one ``vpmaddwd`` per tile and
    vector (:mod:`.cpu_int`'s intrinsic: a broadcast input-channel pair times 8 x 2 weights)."""
    from . import cpu_int

    cpu_int.register()
    la, lb, lp, lo, lk = sch.get_loops(bg)
    nv = ob // 8
    # accumulators + the loaded weight vectors + a broadcast within the 16 ymm registers
    cands = [d for d in divisors(p_ext, 16) if d * nv <= 12] or [1]
    mb = knobs.pick("mb", cands, max(cands))
    po, pi = sch.split(lp, factors=[None, mb])
    oo, ov, o8 = sch.split(lo, factors=[None, nv, 8])
    ko, k2 = sch.split(lk, factors=[None, 2])
    if knobs.pick("tiles_out", [0, 1], 1):  # a tile group's data stays in L1 over the weights
        sch.reorder(la, lb, po, oo, ko, pi, ov, o8, k2)
        sch.parallel(sch.fuse(la, lb, po, oo))
    else:
        sch.reorder(la, lb, oo, po, ko, pi, ov, o8, k2)
        sch.parallel(sch.fuse(la, lb, oo, po))
    init = sch.decompose_reduction(bg, ko)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.tensorize(o8, cpu_int.INTRIN)
    sch.unroll(pi)
    sch.unroll(ov)


def _gemm_pairs_tile(sch, bg, nv, mb):
    """The int16-pairs GEMM's register tile over the block's last five loops ``(a, b, p, o,
    c)``: ``mb`` tiles x ``nv`` 8-channel vectors, the reduction over channel pairs inside the
    tile loop; returns the outer loops ``(a, b, p / mb, o / (8 nv))``."""
    from . import cpu_int

    cpu_int.register()
    la, lb, lp, lo, lk = sch.get_loops(bg)[-5:]
    po, pi = sch.split(lp, factors=[None, mb])
    oo, ov, o8 = sch.split(lo, factors=[None, nv, 8])
    ko, k2 = sch.split(lk, factors=[None, 2])
    sch.reorder(la, lb, po, oo, ko, pi, ov, o8, k2)
    init = sch.decompose_reduction(bg, ko)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.tensorize(o8, cpu_int.INTRIN)
    sch.unroll(pi)
    sch.unroll(ov)
    return la, lb, po, oo


def _pairs_mb(tiles: int, nv: int) -> list[int]:
    """Register-tile row counts for ``tiles`` GEMM rows: divisors whose accumulators
    (``mb * nv``) leave room for the loaded weight vectors and a broadcast in 16 ymm."""
    return [d for d in divisors(tiles, 16) if d * nv <= 12] or [1]


def _group_output(sch, out, m, g, osplit, lanes, rowtmp=True):
    """The output of a fused Winograd kernel (inverse transform + epilogue) by tile rows, in
    groups of ``g`` tile rows and ``osplit`` output-channel chunks outermost; returns the
    loops ``(batch, group, chunk)`` the other stages are computed under."""
    n, oc, y, x, c = sch.get_loops(out)
    yo, yi = sch.split(y, factors=[None, m])
    xo, xi = sch.split(x, factors=[None, m])
    yoo, yoi = sch.split(yo, factors=[None, g])
    oco, oc = sch.split(oc, factors=[osplit, None])
    sch.reorder(n, yoo, oco, oc, yoi, xo, yi, xi, c)
    cx = generic.loop_extent(sch, c)
    if cx > 2 * lanes and cx % lanes == 0:
        _, c = sch.split(c, factors=[None, lanes])
    if not generic.touches_bool(sch, out):
        sch.vectorize(c)
    _tmp_at(sch, _blocks(sch)["inverse_tmp"], yi if rowtmp else xo, vector=True)
    sch.unroll(yi)
    sch.unroll(xi)
    return n, yoo, oco


def _group_input_transform(sch, names, a, widths, rowtmp=True):
    """A fused kernel's input transform of one group (computed under the group loop): tiles x
    channel vectors (the first of ``widths`` dividing the input's channel block), ``(a, b)``
    unrolled, the one-sided product per transform row (``rowtmp``) or per tile and vector."""
    dp = names["data_pack"]
    la, lb, lp, lc = sch.get_loops(dp)[-4:]
    blocked_in = a.data_layout != "NCHW"
    vc = _pick(int(a.data_layout[4:-1]), widths) if blocked_in else 1
    c_ext = generic.loop_extent(sch, lc)
    if vc > 1 and c_ext % vc == 0:
        lco, lci = sch.split(lc, factors=[None, vc])
        sch.reorder(lp, lco, la, lb, lci)
        sch.vectorize(lci)
        at, vec = lco, True
    else:
        sch.reorder(lc, lp, la, lb)
        at, vec = lp, False
    sch.unroll(la)
    sch.unroll(lb)
    _tmp_at(sch, names["data_tmp"], la if rowtmp else at, vector=vec)


def _row_geometry(sch, bg, out, m):
    """``(alpha, P, O, C, N, output-channel blocks, tile rows, tile columns)`` for a kernel
    fused per tile row, or None where it cannot be: the output is not blocked (``NCHW{k}c``,
    five loops), an extent is not static, or the output's tiles are not the GEMM's rows."""
    la, _, lp, lo, lk = sch.get_loops(bg)
    alpha, p_ext, o_ext, c_ext = (generic.loop_extent(sch, v) for v in (la, lp, lo, lk))
    loops = sch.get_loops(out)
    if len(loops) != 5:
        return None
    n, oc, y, x, _ = loops
    n_ext, oc_ext, y_ext, x_ext = (generic.loop_extent(sch, v) for v in (n, oc, y, x))
    if None in (alpha, p_ext, o_ext, c_ext, n_ext, oc_ext, y_ext, x_ext):
        return None
    th, tw = -(-y_ext // m), -(-x_ext // m)
    if n_ext * th * tw != p_ext:
        return None
    return alpha, p_ext, o_ext, c_ext, n_ext, oc_ext, th, tw


def _fused_pairs(sch, names, out, a, m, target, knobs, rowtmp=True) -> bool:
    """The int16-pairs Winograd with its stages fused per group of tile rows (knob ``fuse``):
    for each group, in parallel over (batch, group), the input transform, the ``alpha^2`` GEMMs
    and the output transform run back to back, so the transformed input and the GEMM result
    (a few hundred KB for a 56x56 plane) stay in the core's L2 instead of going through L3
    between three parallel loops. Chosen when the packed weight fits in half of L2 (it is
    read once per group) and tile rows divide evenly into groups; returns False (nothing
    changed) otherwise, and the caller schedules the stages one by one."""
    knobs = knobs or Knobs()
    bg = names["bgemm"]
    ob = int(a.kernel_layout[4:-3])
    geo = _row_geometry(sch, bg, out, m)
    if geo is None:
        return False
    alpha, p_ext, o_ext, c_ext, n_ext, oc_ext, th, tw = geo
    # the weight is read once per group: fused only when it stays in L2 (in the whole network,
    # ResNet-18's 2 MB and 8 MB Winograd weights re-read per group from L3 or memory cost more
    # than the fusion saves: measured 2% slower on one thread, this Zen 3)
    w_bytes = alpha * alpha * o_ext * c_ext * 2
    if not knobs.pick("fuse", [0, 1], int(w_bytes <= cpu_features(target).l2_bytes // 2)):
        return False
    nv = ob // 8
    # tile rows per group: the fewest whose tiles give a register tile of >= 4 rows
    rows = [g for g in (1, 2, 4, 7, 8) if th % g == 0]
    good = [g for g in rows if max(_pairs_mb(g * tw, nv)) >= 4]
    g = knobs.pick("rows", rows, (good or rows)[0])
    cands = _pairs_mb(g * tw, nv)
    mb = knobs.pick("mb", cands, max(cands))
    # output-channel chunks per group (each recomputes the group's input transform): more
    # parallel iterations when there are few groups
    per_block = o_ext // oc_ext
    splits = [d for d in (1, 2, 4) if oc_ext % d == 0 and (oc_ext // d * per_block) % ob == 0]
    osplit = knobs.pick("osplit", splits, 1)  # 1: measured best on ResNet-18's layers

    n, yoo, oco = _group_output(sch, out, m, g, osplit, vector_lanes(target, 32), rowtmp)
    # the group's GEMMs, then its input transform, computed under the group loop
    dp = names["data_pack"]
    sch.compute_at(bg, oco, preserve_unit_loops=True)
    sch.compute_at(dp, oco, preserve_unit_loops=True)
    sch.parallel(sch.fuse(n, yoo, oco))  # before the GEMM's reduction is split and tensorized
    _gemm_pairs_tile(sch, bg, nv, mb)
    _group_input_transform(sch, names, a, [8], rowtmp)
    return True


def _fused_float(sch, names, out, a, m, target, knobs, lanes, rowtmp=True) -> bool:
    """The float Winograd with its stages fused per group of tile rows (knob ``fuse``): in
    parallel over (batch, group), each group's input transform, ``alpha^2`` GEMMs (the
    register tile of :func:`gemm_tile` over the group's tiles) and output transform run back
    to back on one thread, so the transformed input and the GEMM result (per group: ``alpha^2
    x tiles x channels``) stay in that core's L2 and never cross to the other core, and no
    plane-sized buffer goes through L3 or memory between three parallel loops. Each group
    reads the whole weight (from L2 or L3 after the first): fused by default where the
    stages would split by tiles anyway and there are rows enough for the threads
    (:func:`fused_default`). Inception-v3 on two Zen 4 vCPUs (2026-12-05): its 32->64@147
    layer 3.67 -> 1.23 ms, 32@147 (no padding) 1.59 -> 0.61, 80->192@71 2.12 -> 1.95; the
    whole network 47.7 -> 43.7 ms in the machine's fast state, 56.9 -> 51.1 in its slow one.
    Returns False (nothing changed) where the output is not blocked (``NCHW{k}c``), the
    weight's channel block is not whole vectors or the tiles do not map onto the GEMM's
    rows; the caller then schedules the stages one by one."""
    bg = names["bgemm"]
    kl = a.kernel_layout
    ob = int(kl[4:-1]) if kl != "OIHW" else 1
    geo = _row_geometry(sch, bg, out, m)
    if geo is None or ob % lanes:
        return False
    _, p_ext, o_ext, c_ext, n_ext, oc_ext, th, tw = geo
    feats = cpu_features(target)
    default = fused_default(p_ext, o_ext, c_ext, n_ext * th, module_threads())
    if not knobs.pick("fuse", [0, 1], int(default)):
        return False
    # tile rows per group: the fewest that give the GEMM's register tile its rows
    rows = divisors(th, th)
    mb_want = gemm_tile(p_ext, ob, feats)[0]
    good = [g for g in rows if g * tw >= mb_want]
    g = knobs.pick("rows", rows, (good or rows[-1:])[0])
    mb0, nb0 = gemm_tile(g * tw, ob, feats)
    mb = knobs.pick("mb", divisors(g * tw, 16), mb0)
    nb = knobs.pick("nb", [d for d in divisors(ob, 4 * lanes) if d % lanes == 0], nb0)

    # output-channel chunks per group (each reads its share of the weight and recomputes the
    # group's input transform; a tuning knob): one by default. Two balanced ResNet-50's
    # 128@28 layers (7 tile rows on two threads) and matched one chunk in the fast state of
    # two Zen 4 vCPUs (0.364 against 0.366 ms), but the group's rows then go to both threads
    # and its output is split by channels: 0.465 against 0.386 ms in the slow state
    splits = [d for d in (1, 2, 4) if oc_ext % d == 0 and (o_ext // d) % nb == 0]
    osplit = knobs.pick("osplit", splits, 1)

    n, yoo, oco = _group_output(sch, out, m, g, osplit, lanes, rowtmp)
    # the group's GEMMs, then its input transform, computed under the group loop
    dp = names["data_pack"]
    sch.compute_at(bg, oco, preserve_unit_loops=True)
    sch.compute_at(dp, oco, preserve_unit_loops=True)
    sch.parallel(sch.fuse(n, yoo, oco))
    la, lb, lp, lo, lk = sch.get_loops(bg)[-5:]
    po, pi = sch.split(lp, factors=[None, mb])
    oo, oi = sch.split(lo, factors=[None, nb])
    sch.reorder(la, lb, po, oo, lk, pi, oi)
    sch.unroll(pi)
    if nb > 1:
        sch.vectorize(oi)
    # the accumulators in a buffer of their own (registers: see _batched_gemm)
    wb = sch.cache_write(bg, 0, "global")
    sch.reverse_compute_at(wb, oo, preserve_unit_loops=True)
    wl = sch.get_loops(wb)
    sch.vectorize(wl[-1])
    for loop in wl[-3:-1]:
        sch.unroll(loop)
    sch.decompose_reduction(bg, lk)
    _group_input_transform(sch, names, a, [lanes, lanes // 2, 4], rowtmp)
    return True


def fused_default(p: int, o: int, c: int, groups: int, threads: int) -> bool:
    """Whether the float Winograd kernel fuses its stages per tile row by default
    (:func:`_fused_float`): where its stages split the work by tiles anyway
    (:func:`tiles_first_default`: the weight each thread then reads whole is small against
    the transformed data), and the ``groups`` tile rows (batch x rows) give every one of the
    ``threads`` threads at least three (a last round of fewer groups than threads then
    leaves at most a third of the time idle)."""
    return tiles_first_default(p, o, c) and groups >= 3 * max(1, threads)


def _batched_gemm(sch, names, a, lanes, target, knobs, tiles_first=False):
    """Stage 2, the batched GEMM (knobs ``mb``, ``nb``); with ``tiles_first`` the groups of
    ``mb`` tiles are the outermost parallel loop (see :func:`tiles_first_default`)."""
    # batched GEMM
    bg = names["bgemm"]
    la, lb, lp, lo, lk = sch.get_loops(bg)
    p_ext = generic.loop_extent(sch, lp)
    kl = a.kernel_layout
    if kl.endswith("o2i"):
        return _batched_gemm_pairs(sch, bg, int(kl[4:-3]), p_ext, knobs or Knobs())
    ob = int(kl[4:-1]) if kl != "OIHW" else 1
    mb0, nb0 = gemm_tile(p_ext, ob, cpu_features(target))
    knobs = knobs or Knobs()
    mb = knobs.pick("mb", divisors(p_ext, 16), mb0)  # mb0 may not divide P: a guarded tail
    nb = knobs.pick("nb", [d for d in divisors(ob, 4 * lanes) if d % 4 == 0 or d == ob], nb0)
    po, pi = sch.split(lp, factors=[None, mb])
    oo, oi = sch.split(lo, factors=[None, nb])
    if tiles_first:
        sch.reorder(po, la, lb, oo, lk, pi, oi)
        outer = sch.fuse(po, la, lb, oo)
    else:
        sch.reorder(la, lb, oo, po, lk, pi, oi)
        outer = sch.fuse(la, lb, oo, po)
    sch.parallel(outer)
    sch.unroll(pi)
    if nb > 1:
        sch.vectorize(oi)
    # Few tiles (P <= PREFETCH_MAX_TILES: ResNet's layers on 56x56 planes and smaller) reuse
    # each weight slice in few register tiles, and the slices come from L3 or memory: there the
    # accumulators go to a buffer of their own (registers; accumulating into the GEMM's output,
    # a workspace buffer LLVM cannot tell from the transformed input, made it store every
    # accumulator after every reduction step) and each reduction step prefetches a line of the
    # weight slice PREFETCH_SLICES channel blocks on (backend/prefetch.py). One Zen 4 core,
    # in one process against the code before: ResNet-50 1.12x and ResNet-18 1.18x as fast;
    # on VGG-16's 224x224 and 112x112 planes (784-3136 tiles) both made the layer slower
    # (27 -> 48 ms), so larger planes keep the plain schedule.
    c_ext = generic.loop_extent(sch, lk)
    fetch = nb == ob > 1 and c_ext and p_ext <= PREFETCH_MAX_TILES
    if fetch:
        wb = sch.cache_write(bg, 0, "global")
        sch.reverse_compute_at(wb, outer, preserve_unit_loops=True)
        wl = sch.get_loops(wb)
        sch.vectorize(wl[-1])
        for loop in wl[1:-1]:
            sch.unroll(loop)
    sch.decompose_reduction(bg, lk)
    if fetch:
        # a block's weight slice is C x ob contiguous elements
        from ..prefetch import KEY

        sch.annotate(lk, KEY, PREFETCH_SLICES * c_ext * ob)


def _output_transform(sch, out, m, lanes, tiles_first=False, rowtmp=True):
    """Stages 3 and 4: the inverse transform with the epilogue, into the output; in parallel
    over (batch, channel block, tile row), or with ``tiles_first`` over (batch, tile row,
    channel block)."""
    # output: inverse transform (+ epilogue), rows/columns split by the tile and unrolled
    loops = sch.get_loops(out)
    if len(loops) not in (4, 5):
        raise NotApplicable(f"output of rank {len(loops)}")
    n, oc, y, x = loops[:4]
    yo, yi = sch.split(y, factors=[None, m])
    xo, xi = sch.split(x, factors=[None, m])
    par = (n, yo, oc) if tiles_first else (n, oc, yo)
    if len(loops) == 5:
        c = loops[4]
        sch.reorder(*par, xo, yi, xi, c)
        c_ext = generic.loop_extent(sch, c)
        if c_ext > 2 * lanes and c_ext % lanes == 0:
            _, c = sch.split(c, factors=[None, lanes])
        if not generic.touches_bool(sch, out):
            sch.vectorize(c)
    else:
        sch.reorder(*par, xo, yi, xi)
    _tmp_at(sch, _blocks(sch)["inverse_tmp"], yi if rowtmp else xo, vector=len(loops) == 5)
    sch.parallel(sch.fuse(*par))
    sch.unroll(yi)
    sch.unroll(xi)


@register("conv2d_winograd")
def schedule_conv2d_winograd(sch, anchor, target, knobs=None):
    """The four stages above. Knobs: ``padin`` (the padding read through by the input
    transform instead of materialized; default wherever the layer pads), ``fuse`` (the stages
    fused per group of tile rows, :func:`_fused_float`, with ``rows``, ``mb``, ``nb`` and
    ``osplit``; only where no padded copy is materialized, so ``padin`` 0 on a padded layer
    keeps the stages apart), else ``tiles_first``, ``vpos`` (the input transform split by
    transform rows, as the GEMM is without ``tiles_first``) and the batched GEMM's register
    tile ``mb`` and ``nb`` (defaults from :func:`gemm_tile`); in every form ``rowtmp``.

    ``rowtmp`` (default 1): the one-sided products ``data_tmp = B^T d`` and ``inverse_tmp =
    A^T M`` are computed one row at a time, right before the row of ``data_pack`` / of the
    output that reads them: ``alpha`` vectors live instead of a whole tile's (``alpha^2`` for
    the input, ``m x alpha`` for the output: 36 and 24 vectors for F(4x4), more than AVX2's
    16 and than AVX-512's 32 registers, so LLVM kept part of them on the stack). Each row
    reloads the input (or GEMM result) values it needs, from L1. Stack references in
    ResNet's F(4x4) kernels: znver3 code 730 -> 488 (64@56), 688 -> 413 (128@28), 450 -> 321
    (256@14); skylake-avx512 code 175 -> 93, 136 -> 75, 104 -> 82. Two Zen 3 cores
    (2026-12-07), F(4x4) layers alone, best of 30-40 rounds alternated in one process: 64@56
    0.425 -> 0.392 and 0.415 -> 0.399 ms, 128@28 0.809 -> 0.782 (a loaded machine), 256@14
    0.566 -> 0.559; F(2x2) 512@7 0.934 -> 0.852. Whole networks within the VM's noise (best
    of 40 alternated runs: ResNet-50 33.53 -> 33.88 ms, ResNet-18 13.23 -> 13.12): the GEMM
    is most of each kernel (90% of the 256@14 one's samples under ``perf``)."""
    import tvm

    names = _blocks(sch)
    for need in ("data_tmp", "data_pack", "bgemm", "inverse_tmp"):
        if need not in names:
            raise NotApplicable(f"no {need} block")
    pad_cond = "data_pad" in names and "if_then_else" in str(
        getattr(sch.get(names["data_pad"]).body, "value", ""))
    knobs = knobs or Knobs()
    # reading through the padding (the pad inlined into the input transform, conditional
    # loads): one parallel loop and one copy fewer, the default wherever there is padding.
    # int8 ResNet-18's 13 int16-pairs Winograd kernels 13.14 -> 12.80 ms in the model's
    # sequence, outputs bit-identical. Float32, two Zen 4 vCPUs (2026-12-05), layers timed
    # alone with and without: ResNet's 256@14 0.38 -> 0.37 ms, 512@7 0.73 -> 0.62 (AVX2
    # code: 0.59 -> 0.57, 0.89 -> 0.84), 128@28 as AVX2 code 0.53 -> 0.47, VGG's 256@28,
    # 512@28 and 512@14 2-4% faster, Inception's 448->384@8 and 384@8 4-9%; ResNet-50 in its
    # sequence in the machine's slow state 28.77 -> 28.02 ms (fast: 25.55 / 25.62). The 2.2x
    # slowdown of 28x28 planes (7 tiles a row) that kept it off for float32 on one Zen 3
    # core (2026-12-02) did not recur on either ISA.
    a = anchor.attrs
    pairs = a.kernel_layout.endswith("o2i")
    ext = [generic.loop_extent(sch, v) for v in sch.get_loops(names["bgemm"])]
    padin = knobs.pick("padin", [0, 1] if pad_cond else [0], int(pad_cond))
    keep = {"data_tmp", "data_pack", "bgemm", "inverse_tmp"} | (
        {"data_pad"} if pad_cond and not padin else set())
    _inline_all_but(sch, keep, strict=True)  # epilogue and inverse transform into the output
    names = _blocks(sch)
    root = sch.get_sblock("root")
    outs = sch.get_output_blocks(root)
    if len(outs) != 1:
        raise NotApplicable(f"{len(outs)} output blocks")
    out = outs[0]
    m = int(a.tile_size)
    dtype = str(_write_buffer(sch, names["bgemm"]).dtype)
    lanes = vector_lanes(target, tvm.DataType(dtype).bits)

    rowtmp = bool(knobs.pick("rowtmp", [0, 1], 1))
    if pairs and _fused_pairs(sch, names, out, a, m, target, knobs, rowtmp):
        pass
    elif not pairs and "data_pad" not in names and \
            _fused_float(sch, names, out, a, m, target, knobs, lanes, rowtmp):
        pass
    else:
        # (picked only here: the fused kernels have no stages to split)
        tiles_first = knobs.pick("tiles_first", [0, 1],
                                 int(not pairs and tiles_first_default(*ext[-3:])))
        # the input transform split by transform rows where the GEMM splits by position: each
        # thread writes the transformed input its GEMM reads and reads the (smaller) input
        # instead. ResNet-50 on two Zen 4 vCPUs (2026-12-05), model's sequence, slow state:
        # 256@14 0.53 -> 0.46 ms, 512@7 0.775 -> 0.705, the network 28.41 -> 27.79 ms; fast
        # state unchanged (25.58 / 25.60)
        vpos = knobs.pick("vpos", [0, 1] if not tiles_first else [0],
                          int(not pairs and not tiles_first))
        _input_transform(sch, names, a, lanes, bool(vpos), rowtmp)
        _batched_gemm(sch, names, a, lanes, target, knobs, bool(tiles_first))
        _output_transform(sch, out, m, lanes, bool(tiles_first), rowtmp)
    if "data_pad" in _blocks(sch):
        generic.parallel_vectorize(sch, _blocks(sch)["data_pad"])
    return {}


__all__ = ["schedule_conv2d_winograd", "gemm_tile"]

"""CPU (LLVM) schedule rules, written with ``tvm.s_tir.Schedule``.

Rules are chosen by the anchor operator's ``schedule`` name (``Op.schedule``); kernels without a
rule get the generic schedule (injective producers inlined, outer loops parallel, inner loop
vectorized). The anchor templates follow the register-blocking design of TVM's x86 schedules
(Relay's ``topi/x86/dense.py`` and ``conv2d_avx_common.py``):

- ``dense`` / ``matmul`` / ``batch_matmul``: the weight is packed to ``[N/nb, K, nb]`` (a
  :class:`~relay_tvm.backend.lower.Pack`, done once at build time for constants), the output is
  tiled ``mb x nb`` (``mb`` rows unrolled, ``nb`` = two vector registers), the reduction runs
  inside the tile, the tiles run in parallel, and the fused epilogue (bias, activation) is
  computed per tile. A batch-1 dense whose packed row tile would have fewer accumulators than
  FMA latency x pipes (1000 classes: 5 AVX2 vectors or half vectors on AVX-512; 10, 1001 or
  1008 outputs) runs as vectorized dot products over the unpacked weight instead
  (``rfactor``; :func:`_gemv_dot`).
- ``conv2d`` (NCHW/OIHW, groups 1): the weight is packed to ``[O/ob, I, KH, KW, ob]``, the
  output tile is ``ob`` channels (vector) x ``wb`` columns (unrolled) accumulated in an
  NCHW[ob]c tile, the padded input is materialized once in parallel, ``(n, channel block,
  row)`` run in parallel. NHWC/HWIO needs no packing (channels are innermost already).
- sliding-window reductions (``pool``, grouped/depthwise ``conv2d``, ``conv1d``/``conv3d``):
  the innermost output row is split by the vector width and moved inside the window loops.

A template that does not fit an instance raises; the caller then uses the generic schedule.
"""

from __future__ import annotations

import contextlib

from . import generic
from .cpu_model import cpu_features, divisors, register_tile

_BY_NAME: dict = {}

# Op.schedule names whose kernels get the generic schedule on purpose (no template yet: the
# generic rule's inlining, parallel outer loops and vectorized inner loop are what they get).
GENERIC_BY_DESIGN = frozenset({
    "adaptive_pool",
    "conv1d_transpose",
    "conv2d_transpose",
    "conv3d_transpose",
})


def rule_names() -> frozenset:
    """The ``Op.schedule`` names that have a CPU rule (those of cpu_nchwc.py and winograd.py
    included: they are imported at the end of this module)."""
    return frozenset(_BY_NAME)


def register(*names):
    def deco(fn):
        for n in names:
            _BY_NAME[n] = fn
        return fn

    return deco


def select_rule(anchor):
    """``(rule function, rule name)`` for the anchor call, or None for the generic fallback."""
    if anchor is None:
        return None
    op = anchor.op
    if op.schedule and op.schedule in _BY_NAME:
        return _BY_NAME[op.schedule], op.schedule
    from ...op.registry import OpPattern

    if op.pattern == OpPattern.COMM_REDUCE:
        return _BY_NAME["reduce"], "reduce"
    return None


class NotApplicable(Exception):
    """The template does not fit this kernel (the generic schedule is used instead)."""


def vector_lanes(target, dtype_bits: int = 32) -> int:
    """SIMD lanes of ``dtype_bits`` elements: 512-bit vectors with AVX-512, 256 with AVX2 and on
    other x86, 128 on ARM (:func:`~relay_tvm.backend.schedule.cpu_model.cpu_features`)."""
    return cpu_features(target).lanes(dtype_bits)


_OVERRIDE: list = []


@contextlib.contextmanager
def override_knobs(fixed: dict):
    """Within the block, every template run without explicit knobs uses ``fixed`` (for knob
    sweeps and tests: ``with override_knobs({"wb": 2}): relay.build(...)``). A value that does
    not fit a kernel makes its template inapplicable (the generic schedule is used)."""
    _OVERRIDE.append(dict(fixed))
    try:
        yield
    finally:
        _OVERRIDE.pop()


class Knobs:
    """The tunable decisions of a template run (tile sizes, unroll and packing widths).

    A template asks ``knobs.pick(name, candidates, default)`` for each decision. ``Knobs()``
    answers the default (the analytic model's choice: the untuned build); ``Knobs(fixed=...)``
    answers the given values (a tuning record re-applied, or a tuner's sample). Every pick is
    recorded, so a run of a template tells its design space.

    Attributes:
        fixed: ``{name: value}`` to answer instead of the defaults.
        chosen: ``{name: value}`` of every pick made so far.
        space: ``[(name, candidates, default)]`` of every pick made so far, in order.
    """

    def __init__(self, fixed: dict | None = None):
        self.fixed = dict(_OVERRIDE[-1] if fixed is None and _OVERRIDE else fixed or {})
        self.chosen: dict = {}
        self.space: list = []

    def pick(self, name: str, candidates, default: int) -> int:
        """The value of knob ``name`` among ``candidates`` (``default`` is added if missing).

        Raises:
            NotApplicable: a fixed value that is not among this instance's candidates.
        """
        cands = list(dict.fromkeys(int(c) for c in candidates))
        if int(default) not in cands:
            cands.insert(0, int(default))
        self.space.append((name, cands, int(default)))
        value = int(self.fixed.get(name, default))
        if value not in cands:
            raise NotApplicable(f"knob {name}={value} is not among {cands}")
        self.chosen[name] = value
        return value


def _root_blocks(sch):
    return sch.get_child_blocks(sch.get_sblock("root"))


def _reduction_blocks(sch):
    return [b for b in _root_blocks(sch) if "R" in generic.iter_kinds(sch, b)]


def _param_index(sch, buf) -> int | None:
    """Index of ``buf`` among the PrimFunc's parameters, or None if it is internal."""
    func = sch.mod["main"]
    bmap = getattr(func, "buffer_map", None)
    for i, p in enumerate(func.params):
        b = bmap.get(p) if bmap is not None else p  # TVM 0.27: params are the buffers
        if b is not None and b.same_as(buf):
            return i
    return None


def _read_buffer(sch, block, i):
    r = sch.get(block).reads[i]
    return getattr(r, "buffer", None) or r.source


def _inline_all_but(sch, keep_names, strict: bool = False) -> None:
    """Inline every injective non-output block not named in ``keep_names`` into its consumers;
    a block that cannot be inlined stays, or with ``strict`` makes the template inapplicable."""
    root = sch.get_sblock("root")
    changed = True
    while changed:
        changed = False
        outputs = {sch.get(b).name_hint for b in sch.get_output_blocks(root)}
        for b in sch.get_child_blocks(root):
            name = sch.get(b).name_hint
            if name in outputs or name in keep_names or "R" in generic.iter_kinds(sch, b):
                continue
            if generic.inline_too_large(sch, b):
                if strict:
                    raise NotApplicable(f"inlining {name} would expand its consumer past "
                                        f"{generic.MAX_INLINED_EXPR_NODES} expression nodes")
                continue
            try:
                sch.compute_inline(b)
                changed = True
                break
            except Exception as e:  # TVM's ScheduleError
                if strict:
                    raise NotApplicable(f"cannot inline {name}: {e}") from e
                continue


def _write_buffer(sch, block):
    w = sch.get(block).writes[0]
    return getattr(w, "buffer", None) or w.source


def _epilogue(sch, anchor_block):
    """The single output block consuming the anchor (after inlining), or None when the anchor
    itself is the output. An epilogue that reshapes (output shape differs from the anchor's)
    is split off: the anchor gets a cache-write tile and the epilogue stays a separate loop
    nest (returned as ``("separate", block)``). Raises NotApplicable for other graphs."""
    root = sch.get_sblock("root")
    outs = sch.get_output_blocks(root)
    names = [sch.get(b).name_hint for b in outs]
    aname = sch.get(anchor_block).name_hint
    if names == [aname]:
        return None
    if len(outs) != 1:
        raise NotApplicable(f"{len(outs)} output blocks")
    rest = [b for b in _root_blocks(sch) if sch.get(b).name_hint not in (aname, names[0])]
    if any(not sch.get(b).name_hint.startswith(("pad", "data_pad")) for b in rest):
        raise NotApplicable("blocks between the anchor and the output")
    a_shape = [int(d) for d in _write_buffer(sch, anchor_block).shape]
    e_shape = [int(d) for d in _write_buffer(sch, outs[0]).shape]
    if a_shape != e_shape:
        return ("separate", outs[0])
    return outs[0]


def _padding_blocks(sch) -> set:
    """Names of the blocks that pad the input (``pad_temp``, ``data_pad``) with a condition:
    they stay materialized so the inner loops have no branch. A padding of zero is a plain
    copy and is inlined like any injective producer."""
    names = set()
    for b in _root_blocks(sch):
        blk = sch.get(b)
        if not blk.name_hint.startswith(("pad", "data_pad")):
            continue
        value = getattr(blk.body, "value", blk.body)
        if "if_then_else" in str(value):
            names.add(blk.name_hint)
    return names


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _pick(n: int, choices) -> int:
    for c in choices:
        if c <= n and n % c == 0:
            return c
    return 1


def _tile_epilogue(sch, block, epi, at_loop):
    """Write the anchor's tile (registers) out through the epilogue, or through a cache-write
    block when there is none, at ``at_loop``."""
    if isinstance(epi, tuple):
        generic.parallel_vectorize(sch, epi[1])
        epi = None
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(epi, at_loop, preserve_unit_loops=True)
    return epi


def _vectorize_inner(sch, block, lanes):
    if generic.touches_bool(sch, block):
        return
    loops = sch.get_loops(block)
    ext = generic.loop_extent(sch, loops[-1])
    if ext is None or ext <= 1:
        return
    if ext > lanes and ext % lanes == 0:
        _, vi = sch.split(loops[-1], factors=[None, lanes])
        sch.vectorize(vi)
    elif ext <= lanes:
        sch.vectorize(loops[-1])


def _window_prologue(sch, spatial: int, reduce: int, what: str):
    """The common start of the convolution templates: one reduction block with ``spatial``
    spatial and ``reduce`` reduction loops; injective producers inlined except the padding
    (kept materialized, so the inner loops have no branch). Returns ``(block, epilogue,
    padding block names)``; raises NotApplicable otherwise (or for a reshaping epilogue)."""
    reds = _reduction_blocks(sch)
    if len(reds) != 1:
        raise NotApplicable(f"{len(reds)} reduction blocks")
    pad_names = _padding_blocks(sch)
    _inline_all_but(sch, pad_names)
    block = _reduction_blocks(sch)[0]
    if generic.iter_kinds(sch, block) != ["S"] * spatial + ["R"] * reduce:
        raise NotApplicable(f"not {what}")
    epi = _epilogue(sch, block)
    if isinstance(epi, tuple):
        raise NotApplicable("reshaping epilogue")
    return block, epi, pad_names


def _finish_tile(sch, block, epi, fused, unrolled, vector, red_loop, lanes, pad_names):
    """The common end of the direct-convolution and window templates: the fused outer loop in
    parallel, the register-tile loops unrolled, the lane loop vectorized, the accumulator's
    initialisation split off at ``red_loop``, the epilogue vectorized, the padding finished."""
    sch.parallel(fused)
    for lp in unrolled:
        sch.unroll(lp)
    sch.vectorize(vector)
    sch.decompose_reduction(block, red_loop)
    _vectorize_inner(sch, epi, lanes)
    _finish_padding(sch, pad_names)


_PAD_MIN_ROWS = 64  # fewer padded rows than this: the columns are fused into the parallel loop


def _finish_padding(sch, pad_names) -> None:
    """Run the materialized padding blocks in parallel, vectorized: the loops above the row
    (``n, channel block, row``) fused in parallel, the columns a serial loop, the innermost
    loop (channels of a block, or columns) vectorized. Fusing the columns into the parallel
    loop too made every element recover its row and column by a division and a modulo: on
    a 3-channel stem (MobileNet's 3x3 stride-2 layer on 224x224) that padding cost as much
    as the convolution on one Zen 3 core."""
    for b in _root_blocks(sch):
        if sch.get(b).name_hint not in pad_names:
            continue
        loops = sch.get_loops(b)
        exts = [generic.loop_extent(sch, lp) for lp in loops]
        if len(loops) < 3 or any(e is None for e in exts) or \
                generic.iter_kinds(sch, b) != ["S"] * len(loops):
            generic.parallel_vectorize(sch, b)
            continue
        # the innermost loop, vectorized by parallel_vectorize's rule, and the leading ones
        # (all but the column loop) in parallel, unless there are too few rows to share out
        rows = _prod(exts[:-2])
        generic.parallel_vectorize(sch, b, **({"max_parallel_extent": rows}
                                              if rows >= _PAD_MIN_ROWS else {}))


# ---- dense / matmul / batch_matmul ------------------------------------------------------------


def _gemm_tile(feats, lanes: int, M: int, N: int, knobs):
    """``(mb, nb)``: output rows (unrolled) and columns (whole vectors when N allows) of a
    tile, the knobs' values when given, else the register model's choice."""
    m_choices = divisors(M, 16)
    v_choices = [v for v in range(1, 9) if N % (v * lanes) == 0]
    if v_choices:
        mb0, v0 = register_tile(feats, m_choices, v_choices)
        nb0 = v0 * lanes
    else:  # fewer columns than a vector, or no multiple of one: part-vector tiles
        nb0 = _pick(N, [lanes // 2, 8, 4])
        mb0 = _pick(M, [4, 2])
    nb = knobs.pick("nb", [v * lanes for v in v_choices] + divisors(N, lanes - 1)[1:], nb0)
    mb = knobs.pick("mb", m_choices, mb0)
    return mb, nb


def _gemm_weight_pack(wshape, nb: int, batch: bool, weight_nk: bool):
    """``(fwd, inv, new_shape)`` packing the weight to ``[N/nb, K, nb]`` (``[B, N/nb, K, nb]``
    for batch_matmul): the index map, its inverse and the packed shape."""
    if batch:
        if weight_nk:  # [B, N, K]
            fwd = lambda b, n, k: (b, n // nb, k, n % nb)  # noqa: E731
            inv = lambda b, no, k, ni: (b, no * nb + ni, k)  # noqa: E731
            return fwd, inv, (wshape[0], wshape[1] // nb, wshape[2], nb)
        # [B, K, N]
        fwd = lambda b, k, n: (b, n // nb, k, n % nb)  # noqa: E731
        inv = lambda b, no, k, ni: (b, k, no * nb + ni)  # noqa: E731
        return fwd, inv, (wshape[0], wshape[2] // nb, wshape[1], nb)
    if weight_nk:  # [N, K]
        fwd = lambda n, k: (n // nb, k, n % nb)  # noqa: E731
        inv = lambda no, k, ni: (no * nb + ni, k)  # noqa: E731
        return fwd, inv, (wshape[0] // nb, wshape[1], nb)
    # [K, N]
    fwd = lambda k, n: (n // nb, k, n % nb)  # noqa: E731
    inv = lambda no, k, ni: (k, no * nb + ni)  # noqa: E731
    return fwd, inv, (wshape[1] // nb, wshape[0], nb)


def _gemm(sch, target, knobs, *, batch: bool, weight_nk: bool):
    """Shared template of dense (weight [N, K]), matmul and batch_matmul.

    The anchor block iterates ``([b,] i, j, k)`` with ``out[b, i, j] += A[.., i, k] * W[..]``.
    Knobs: ``nb`` (output columns per tile = packing width of the weight, whole vectors),
    ``mb`` (output rows per tile, unrolled); defaults from :func:`cpu_model.register_tile`.
    """
    from ..lower import Pack

    reds = _reduction_blocks(sch)
    if len(reds) != 1:
        raise NotApplicable(f"{len(reds)} reduction blocks")
    block = reds[0]
    kinds = generic.iter_kinds(sch, block)
    if kinds != (["S"] * (3 if batch else 2) + ["R"]):
        raise NotApplicable(f"iteration kinds {kinds}")
    _inline_all_but(sch, ())
    block = _reduction_blocks(sch)[0]
    epi = _epilogue(sch, block)
    loops = sch.get_loops(block)
    exts = [generic.loop_extent(sch, lp) for lp in loops]
    if any(e is None for e in exts):
        raise NotApplicable("symbolic extents")
    import tvm

    feats = cpu_features(target)
    lanes = feats.lanes(tvm.DataType(str(_write_buffer(sch, block).dtype)).bits)
    M, N, K = exts[-3], exts[-2], exts[-1]
    # batch 1: the packed tile is one row of at most 8 vectors dividing N; with fewer
    # accumulators than FMA latency x pipes (N = 1000: 5 AVX2 vectors, or half vectors on
    # AVX-512; N = 1008: 7) vectorized dot products are faster (one core, K = 2048: AVX2 code
    # 0.244 -> 0.089 ms at N = 1000, AVX-512 0.18 -> 0.098 ms at N = 1008; at N = 1024, 8
    # vectors, the packed tile stays faster: 0.081 vs 0.098-0.103 ms)
    vmax = max([v for v in range(1, 9) if N % (v * lanes) == 0], default=0)
    if not batch and weight_nk and M == 1 and K % lanes == 0 and K >= 4 * lanes and \
            vmax < feats.fma_latency * feats.fma_pipes:
        return _gemv_dot(sch, block, feats, lanes, N, K, knobs)
    mb, nb = _gemm_tile(feats, lanes, M, N, knobs)
    packs = {}
    # Pack the weight to [N/nb, K, nb] (or [B, N/nb, K, nb]) when it is a kernel parameter.
    wbuf = _read_buffer(sch, block, 1)
    widx = _param_index(sch, wbuf)
    if widx is not None and nb > 1 and len(wbuf.shape) == (3 if batch else 2):
        wshape = [int(d) for d in wbuf.shape]
        fwd, inv, new_shape = _gemm_weight_pack(wshape, nb, batch, weight_nk)
        if all(d > 0 for d in new_shape) and (wshape[-2 if weight_nk else -1] % nb == 0):
            sch.transform_layout(block, ("read", 1), fwd)
            layout = ("B" if batch else "") + ("NK" if weight_nk else "KN")
            packs[widx] = Pack(f"{layout}->{layout}{nb}n", new_shape, inv)
    *bl, i, j, k = loops
    io, ii = sch.split(i, factors=[None, mb])
    jo, ji = sch.split(j, factors=[None, nb])
    kc = _pick(K, [256, 128, 64, 32, 16, 8, 4, 2]) if K > 512 else K
    if kc < K:
        ko, ki = sch.split(k, factors=[None, kc])
        sch.reorder(*bl, jo, io, ko, ki, ii, ji)
    else:
        ko = None
        sch.reorder(*bl, jo, io, k, ii, ji)
    epi = _tile_epilogue(sch, block, epi, io)
    outer = [*bl, jo, io]
    fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    sch.parallel(fused)
    sch.unroll(ii)
    sch.vectorize(ji)
    sch.decompose_reduction(block, ko if ko is not None else k)
    # the epilogue tile: vectorize its innermost loop
    _vectorize_inner(sch, epi, lanes)
    return packs


def _gemv_dot(sch, block, feats, lanes, N, K, knobs):
    """Batch-1 dense whose ``N`` outputs allow no packed row tile of latency x pipes vectors
    (10, 1000, 1001 or 1008 classes), as ``N`` dot products in the weight's own ``[N, K]``
    layout: the reduction is split into vectors (``rfactor``: each output row accumulates
    ``kv`` vectors of partial sums over ``K / (kv * lanes)`` steps, then adds them up), ``jb``
    rows at a time (``jb`` accumulators hide the FMA latency), rows in parallel; the epilogue
    stays a loop of its own. A packed ``[N/nb, K, nb]`` tile needs ``nb`` to divide ``N``:
    1001 = 7 x 11 x 13 left scalar columns (7.5x slower than 1000 outputs).
    Knobs ``jb`` (rows per step) and ``kv`` (vectors of partial sums per row)."""
    need = feats.fma_latency * feats.fma_pipes
    jb = knobs.pick("jb", [j for j in (1, 2, 4, 8) if j <= N], min(need, 8 if N >= 8 else 1))
    kv = knobs.pick("kv", [v for v in (1, 2) if K % (v * lanes) == 0], 1)
    i, j, k = sch.get_loops(block)
    ko, ki = sch.split(k, factors=[None, kv * lanes])
    rf = sch.rfactor(ki, factor_axis=2)  # rf[i, j, ki]: a row's partial sums, one vector
    i, j, ko_, ki_ = sch.get_loops(rf)[-4:]
    jo, ji = sch.split(j, factors=[None, jb])
    sch.reorder(i, jo, ko_, ji, ki_)
    # the jb x lanes partial sums live in registers (a global rf buffer was read and written
    # at every step, and rows of two threads sharing its cache lines ran 10-600x slower)
    tile = sch.cache_write(rf, 0, "local")
    sch.reverse_compute_at(tile, jo, preserve_unit_loops=True)
    fused = sch.fuse(i, jo)
    sch.parallel(fused)
    sch.unroll(ji)
    sch.vectorize(ki_)
    sch.decompose_reduction(rf, ko_)
    _vectorize_inner(sch, tile, lanes)
    return {}


@register("dense")
def schedule_dense(sch, anchor, target, knobs=None):
    return _gemm(sch, target, knobs or Knobs(), batch=False, weight_nk=True)


@register("matmul")
def schedule_matmul(sch, anchor, target, knobs=None):
    a = anchor.attrs
    if a is not None and a.get("transpose_a", False):
        raise NotApplicable("transpose_a")
    return _gemm(sch, target, knobs or Knobs(), batch=False,
                 weight_nk=bool(a.get("transpose_b", False)) if a is not None else False)


@register("batch_matmul")
def schedule_batch_matmul(sch, anchor, target, knobs=None):
    a = anchor.attrs
    if a is not None and a.get("transpose_a", False):
        raise NotApplicable("transpose_a")
    x, y = (arg.checked_type for arg in anchor.args)
    if int(x.shape[0]) != int(y.shape[0]):
        raise NotApplicable("broadcast batch")
    return _gemm(sch, target, knobs or Knobs(), batch=True,
                 weight_nk=bool(a.get("transpose_b", True)) if a is not None else True)


# ---- conv2d ----------------------------------------------------------------------------------


def _channel_tile(feats, knobs, lanes, OC, OW):
    """``(ob, wb)``: output channels (whole vectors where possible) x output columns of a
    direct-convolution tile, from :func:`cpu_model.register_tile` unless ``knobs`` fix them."""
    v_choices = [v for v in range(1, 5) if OC % (v * lanes) == 0]
    w_choices = divisors(OW, 16)
    if v_choices:
        wb0, v0 = register_tile(feats, w_choices, v_choices)
        ob0 = v0 * lanes
    else:
        ob0 = _pick(OC, [lanes // 2, 4])
        wb0 = register_tile(feats, w_choices, [1])[0]
    ob = knobs.pick("ob", [v * lanes for v in v_choices] + [c for c in (4, lanes // 2)
                                                              if c >= 4 and OC % c == 0], ob0)
    if ob < 4:
        raise NotApplicable(f"{OC} output channels")
    wb = knobs.pick("wb", w_choices, wb0)
    return ob, wb



@register("conv2d")
def schedule_conv2d(sch, anchor, target, knobs=None):
    """NCHW data, OIHW weight, groups 1 (what ResNet-style models use). Knobs: ``ob`` (output
    channels per tile = weight packing width), ``wb`` (output columns per tile, unrolled)."""
    import tvm

    from ..lower import Pack

    a = anchor.attrs
    knobs = knobs or Knobs()
    if a.groups != 1:
        return schedule_window(sch, anchor, target, knobs)
    if a.data_layout == "NHWC" and a.kernel_layout == "HWIO":
        return _conv2d_nhwc(sch, anchor, target, knobs)
    if a.data_layout != "NCHW" or a.kernel_layout != "OIHW":
        raise NotApplicable(f"layout {a.data_layout}/{a.kernel_layout}")
    reds = _reduction_blocks(sch)
    if len(reds) != 1:
        raise NotApplicable(f"{len(reds)} reduction blocks")
    block = reds[0]
    if generic.iter_kinds(sch, block) != ["S"] * 4 + ["R"] * 3:
        raise NotApplicable("not a 7-loop NCHW convolution")
    # keep the padded input materialized (no conditionals in the inner loop)
    pad_names = _padding_blocks(sch)
    _inline_all_but(sch, pad_names)
    block = _reduction_blocks(sch)[0]
    epi = _epilogue(sch, block)
    feats = cpu_features(target)
    lanes = feats.lanes(tvm.DataType(str(_write_buffer(sch, block).dtype)).bits)
    n, oc, oh, ow, ic, kh, kw = sch.get_loops(block)
    OC, OW = generic.loop_extent(sch, oc), generic.loop_extent(sch, ow)
    from . import cpu_int

    dts = [str(_read_buffer(sch, block, i).dtype) for i in (0, 1)]
    form = cpu_int.applicable(target, *dts, str(_write_buffer(sch, block).dtype),
                              generic.loop_extent(sch, ic), OC)
    if form is not None and not isinstance(epi, tuple):
        steps = generic.loop_extent(sch, ic) // form.group * generic.loop_extent(sch, kh) * \
            generic.loop_extent(sch, kw)
        wb, ob, ukw = cpu_int.tile_knobs(form, feats, knobs, OC, OW, steps)
        return cpu_int.schedule_conv2d_int(
            sch, block, pad_names, epi, wb,
            (Pack, _param_index, _read_buffer, _tile_epilogue, _vectorize_inner,
             _finish_padding, generic), form=form, ob=ob, unroll_kw=bool(ukw))
    if OC < 4 or (OC % 4 and OC % lanes):
        return _conv2d_narrow(sch, block, epi, pad_names, knobs, lanes, OC, OW)
    ob, wb = _channel_tile(feats, knobs, lanes, OC, OW)
    packs = {}
    wbuf = _read_buffer(sch, block, 1)
    # Batch items inside the channel blocks when the weights overflow L2 and one item's input
    # is smaller than them (small images, late layers, weight gradients): a thread then reads
    # its share of the weights once, instead of each thread reading all of them once per batch
    # item (measured on Zen 3, batch 8 at 1x1-4x4: 1.1-1.4x per kernel on one thread).
    item = _prod(int(d) for d in _read_buffer(sch, block, 0).shape[1:])
    wsize = _prod(int(d) for d in wbuf.shape)
    wbytes = wsize * tvm.DataType(str(wbuf.dtype)).bits // 8
    weights_outer = generic.loop_extent(sch, n) > 1 and wsize > item and \
        wbytes > feats.l2_bytes // 2
    widx = _param_index(sch, wbuf)
    if widx is not None:
        O, I, KH, KW = (int(d) for d in wbuf.shape)
        sch.transform_layout(block, ("read", 1),
                             lambda o, i, h, w: (o // ob, i, h, w, o % ob))
        packs[widx] = Pack(f"OIHW->OIHW{ob}o", (O // ob, I, KH, KW, ob),
                           lambda oo, i, h, w, oi: (oo * ob + oi, i, h, w))
    # accumulate in an NCHW[ob]c tile so the vector lanes (channels) are contiguous
    if isinstance(epi, tuple):
        raise NotApplicable("reshaping epilogue")
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    sch.transform_layout(block, ("write", 0), lambda n_, c, h, w: (n_, c // ob, h, w, c % ob))
    n, oc, oh, ow, ic, kh, kw = sch.get_loops(block)
    oco, oci = sch.split(oc, factors=[None, ob])
    owo, owi = sch.split(ow, factors=[None, wb])
    if weights_outer:
        sch.reorder(oco, n, oh, owo, ic, kh, kw, owi, oci)
        outer = (oco, n, oh)
    else:
        sch.reorder(n, oco, oh, owo, ic, kh, kw, owi, oci)
        outer = (n, oco, oh)
    epi = _tile_epilogue(sch, block, epi, owo)
    _finish_tile(sch, block, epi, sch.fuse(*outer), (kw, owi), oci, ic, lanes, pad_names)
    return packs


def _conv2d_narrow(sch, block, epi, pad_names, knobs, lanes, OC, OW):
    """An NCHW convolution with few output channels (the data gradient of an RGB stem: 3):
    vectors run along the output row instead of the channels. The tile is all ``OC`` channels
    x ``wv * wu`` columns (``wv`` lanes, ``wu`` vectors), accumulated in registers while the
    weights are broadcast. Knobs: ``wv``, ``wu``."""
    if isinstance(epi, tuple):
        raise NotApplicable("reshaping epilogue")
    wv_choices = [v for v in (lanes, lanes // 2, 4) if v >= 4 and OW % v == 0]
    if not wv_choices:
        raise NotApplicable(f"{OC} output channels and {OW} columns (no vector fits a row)")
    wv = knobs.pick("wv", wv_choices, wv_choices[0])
    # accumulators OC * wu (+ one loaded vector, one broadcast) within 16 registers
    wu_choices = [u for u in (4, 3, 2, 1) if (OW // wv) % u == 0 and OC * u <= 12] or [1]
    wu = knobs.pick("wu", wu_choices, wu_choices[0])
    n, oc, oh, ow, ic, kh, kw = sch.get_loops(block)
    owo, owu, owv = sch.split(ow, factors=[None, wu, wv])
    sch.reorder(n, oh, owo, ic, kh, kw, oc, owu, owv)
    epi = _tile_epilogue(sch, block, epi, owo)
    _finish_tile(sch, block, epi, sch.fuse(n, oh), (oc, owu), owv, ic, lanes, pad_names)
    return {}


@register("depthwise_conv2d_NCHWc")
def schedule_depthwise_nchwc(sch, anchor, target, knobs=None):
    """``nn.contrib_depthwise_conv2d_NCHWc``: data ``NCHW[c]c``, weight ``OIHW1i[c]o``. Each
    output is a ``kh x kw`` window of one channel, so the tile is ``wb`` columns x the channel
    block (vectors): every window step loads ``wb`` data vectors and one weight vector into
    ``wb`` independent accumulators (a 1-column tile would wait on the FMA latency at every
    step). ``(n, row, channel block)`` run in parallel (knob ``rmajor``; 0: ``(n, channel
    block, row)``). In the slow state of two Zen 4 vCPUs (a long cache-line round trip,
    RESULTS.md 2026-12-05) rows first ran MobileNet-1.0 6.9 -> 6.5 ms and MobileNetV2 5.1 ->
    4.7, each thread reading the input rows its core wrote (see
    :func:`.cpu_nchwc.rows_major_default`); unchanged in the fast state. Knobs: ``wb``, ``padin`` (the
    convolution reads the unpadded input through the padding, each window load conditional on
    its row and column: the default), ``padat`` (without ``padin``: the padded input rows
    computed per output row instead of in a pass of their own)."""
    import tvm

    if len(_reduction_blocks(sch)) == 2:  # merged with the 1x1 layer after it
        from .cpu_nchwc import schedule_depthwise_pointwise

        return schedule_depthwise_pointwise(sch, target, knobs)
    block, epi, pad_names = _window_prologue(sch, 5, 2, "a 7-loop depthwise NCHWc convolution")
    knobs = knobs or Knobs()
    feats = cpu_features(target)
    lanes = feats.lanes(tvm.DataType(str(_write_buffer(sch, block).dtype)).bits)
    n, cb, oh, ow, c, ri, rj = sch.get_loops(block)
    OW, CB = generic.loop_extent(sch, ow), generic.loop_extent(sch, c)
    wb0, _ = register_tile(feats, divisors(OW, 16), [max(1, CB // lanes)])
    wb = knobs.pick("wb", divisors(OW, 16), wb0)
    owo, owi = sch.split(ow, factors=[None, wb])
    # rows outermost in the parallel loop (each thread all channel blocks of its rows): the
    # weights are a few KB
    rmajor = knobs.pick("rmajor", [0, 1], 1)
    outer = (oh, cb) if rmajor else (cb, oh)
    sch.reorder(n, *outer, owo, ri, rj, owi, c)
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(epi, owo, preserve_unit_loops=True)
    fused = sch.fuse(n, *outer)
    # the padded input rows of one output row computed right before it (in L1) instead of the
    # whole padded tensor in a pass of its own: a depthwise layer does 9 FMAs per input element,
    # so when the padded input overflows L2 the extra pass over memory cost as much as the
    # convolution (Zen 3: 2.9x faster on MobileNetV2's stride-2 112x112 layer, 1.1-1.3x on
    # the 28..112 stride-1 ones; 0.8x on 14x14 and 7x7 ones, whose input stays in L2)
    pads = [b for b in _root_blocks(sch) if sch.get(b).name_hint in pad_names]
    pad_bytes = 4
    for d in (_write_buffer(sch, pads[0]).shape if len(pads) == 1 else ()):
        pad_bytes *= int(d)
    padat = knobs.pick("padat", [0, 1] if len(pads) == 1 else [0],
                       int(len(pads) == 1 and pad_bytes > feats.l2_bytes))
    # reading through the padding: no copy of the input and no second parallel loop. A
    # depthwise layer does only 9 FMAs per input element, so the padded copy (in a pass of
    # its own, or rows recomputed per output row) cost a large part of the kernel: MobileNet's
    # 13 depthwise kernels in the model's sequence 1.45 -> 0.89 ms, MobileNetV2 whole 8.58 ->
    # 7.96 ms (kernel sums, one Zen 3 core, 2026-12-02)
    padin = knobs.pick("padin", [0, 1] if len(pads) == 1 else [0], int(len(pads) == 1))
    if padin:
        sch.compute_inline(pads[0])
        pad_names = set()
    elif padat:
        sch.compute_at(pads[0], fused, preserve_unit_loops=True)
        inner = sch.get_loops(pads[0])[-1]
        if generic.loop_extent(sch, inner) == CB:
            sch.vectorize(inner)
        pad_names = set()
    _finish_tile(sch, block, epi, fused, (rj, owi), c, ri, lanes, pad_names)
    return {}


def _conv2d_nhwc(sch, anchor, target, knobs):
    """NHWC data, HWIO weight: channels are innermost in output and weight already, so no
    packing: the tile is ``wb`` columns x ``ob`` channels (vector), the reduction
    ``(kh, kw, ic)`` runs inside it, ``(n, row, column block)`` run in parallel."""
    import tvm

    block, epi, pad_names = _window_prologue(sch, 4, 3, "a 7-loop NHWC convolution")
    feats = cpu_features(target)
    lanes = feats.lanes(tvm.DataType(str(_write_buffer(sch, block).dtype)).bits)
    n, oh, ow, oc, kh, kw, ic = sch.get_loops(block)
    OC, OW = generic.loop_extent(sch, oc), generic.loop_extent(sch, ow)
    ob, wb = _channel_tile(feats, knobs, lanes, OC, OW)
    oco, oci = sch.split(oc, factors=[None, ob])
    owo, owi = sch.split(ow, factors=[None, wb])
    sch.reorder(n, oh, owo, oco, kh, kw, ic, owi, oci)
    epi = _tile_epilogue(sch, block, epi, oco)
    _finish_tile(sch, block, epi, sch.fuse(n, oh, owo), (owi,), oci, kh, lanes, pad_names)
    return {}


# ---- reductions (sum, mean, max, argmax, ...) ----------------------------------------------------


@register("reduce")
def schedule_reduce(sch, anchor, target, knobs=None):
    """Commutative reductions. When the input's innermost axis is kept (``sum(x, axis=1)`` of
    NCHW), the kept innermost axis is vectorized inside the reduction loops (the window rule);
    when the innermost axis is reduced, the kept axes run in parallel and the reduction stays a
    serial loop (the generic schedule)."""
    reds = _reduction_blocks(sch)
    if len(reds) != 1:
        raise NotApplicable(f"{len(reds)} reduction blocks")
    blk = sch.get(reds[0])
    kinds = generic.iter_kinds(sch, reds[0])
    spatial_vars = [iv.var for iv, k in zip(blk.iter_vars, kinds) if k == "S"]
    if not spatial_vars or not blk.reads:
        raise NotApplicable("no kept axes")
    inner = blk.reads[0].region[-1].min
    if not (hasattr(inner, "same_as") and inner.same_as(spatial_vars[-1])):
        raise NotApplicable("the innermost input axis is reduced")
    return schedule_window(sch, anchor, target, knobs)


# ---- sliding-window reductions: pooling, depthwise / grouped convolution -----------------------


@register("pool", "conv1d", "conv3d")
def schedule_window(sch, anchor, target, knobs=None):
    """A single reduction block ``out[s0..sa] = reduce over r0..rb`` with small reduction loops
    (a window): the innermost spatial loop is split by the vector width and moved inside the
    window loops, so each window step is one vector operation; the padded input stays
    materialized; the leading spatial loops run in parallel."""
    import tvm

    reds = _reduction_blocks(sch)
    if len(reds) != 1:
        raise NotApplicable(f"{len(reds)} reduction blocks")
    pad_names = _padding_blocks(sch)
    _inline_all_but(sch, pad_names)
    block = _reduction_blocks(sch)[0]
    if generic.touches_bool(sch, block):
        raise NotApplicable("bool buffers (not vectorized)")
    kinds = generic.iter_kinds(sch, block)
    a = kinds.index("R") if "R" in kinds else len(kinds)
    if a == 0 or kinds[a:] != ["R"] * (len(kinds) - a) or a == len(kinds):
        raise NotApplicable(f"iteration kinds {kinds}")
    epi = _epilogue(sch, block)
    lanes = vector_lanes(target, tvm.DataType(str(_write_buffer(sch, block).dtype)).bits)
    loops = sch.get_loops(block)
    spatial, window = loops[:a], loops[a:]
    ext = generic.loop_extent(sch, spatial[-1])
    vb = _pick(ext, [lanes, 2 * lanes, lanes // 2, 14, 7, 6, 5])
    if vb < 5:
        if ext <= 2 * lanes:
            vb = ext  # one (odd-width) vector for the whole row
        else:
            vb = _pick(ext, [4, 3, 2])
    vb = (knobs or Knobs()).pick("vb", [d for d in divisors(ext, 4 * lanes) if d > 1], vb)
    if vb == 1:
        raise NotApplicable(f"innermost extent {ext}")
    so, si = sch.split(spatial[-1], factors=[None, vb])
    sch.reorder(*spatial[:-1], so, *window, si)
    epi = _tile_epilogue(sch, block, epi, so)
    lead = [*spatial[:-1], so]
    take, total = [], 1
    for lp in lead:
        take.append(lp)
        total *= generic.loop_extent(sch, lp) or 1
        if total >= 1 << 12:
            break
    fused = sch.fuse(*take) if len(take) > 1 else take[0]
    _finish_tile(sch, block, epi, fused, (), si, window[0], lanes, pad_names)
    return {}


__all__ = ["select_rule", "register", "vector_lanes", "NotApplicable", "Knobs",
           "override_knobs"]

from . import cpu_nchwc, winograd  # noqa: E402,F401  (register "conv2d_NCHWc", "conv2d_winograd")

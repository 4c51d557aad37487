"""Integer convolution on x86: int16 pairs with AVX2's ``vpmaddwd``, or uint8 x int8 quads
with VNNI's ``vpdpbusd``, summed into int32.

The qnn canonicalization hands ``nn.conv2d`` int16 operands (int8/uint8 values shifted by
their zero points) with int32 accumulation. The int16 template packs the (padded) data as
``NCHW2c`` and the weight as ``OIHW{ob}o2i`` (a build-time constant transform), so that one
``vpmaddwd`` multiplies a broadcast pair of input channels by the 8 x 2 weights of 8 output
channels and adds the pairs: 16 multiply-adds per instruction, exact (int16 x int16 products
and their pair sums fit int32; no saturation, unlike ``vpmaddubsw``). The tensor intrinsic is
registered here as ``relay_tvm_pmaddwd_8x2``; the integer Winograd's batched GEMM
(``winograd.py``, kernel layout ``OIHW{k}o2i``) uses it too.

On a target with AVX512-VNNI (Cascade Lake and later Xeons, Zen 4 and 5) or AVX-VNNI (Alder
Lake and later), AlterOpLayout gives such convolutions uint8 data and int8 weights instead
(``transform/int8_conv.py``), and the same template packs ``NCHW4c`` / ``OIHW{ob}o4i``: one
``vpdpbusd`` multiplies a broadcast quad of input channels by the 16 x 4 (8 x 4 with
AVX-VNNI) weights and adds each quad's four products to its int32 lane: 64 multiply-adds per
instruction, exact (the products fit int16 and ``vpdpbusd`` adds without saturation). Its
intrinsics are registered as ``relay_tvm_vpdpbusd_16x4`` / ``relay_tvm_vpdpbusd_8x4``: TVM's own
``dot_16x4_vnni`` is the same operation, but importing ``tvm.s_tir.tensor_intrin`` takes
15-20 s (it builds every target's intrinsics) on each build.

Knobs of the direct template: ``wb`` (output columns per tile), ``ob`` (output channels per
tile, whole vectors), ``ukw`` (unroll the kernel columns).
"""

from __future__ import annotations

from typing import NamedTuple

INTRIN = "relay_tvm_pmaddwd_8x2"
_REGISTERED = []


def register():
    """Register the tensor intrinsic :data:`INTRIN` (once)."""
    if INTRIN in _REGISTERED:
        return
    from tvm.s_tir import TensorIntrin
    from tvm.script import tirx as T

    @T.prim_func(s_tir=True)
    def desc(A: T.Buffer((2,), "int16", offset_factor=1),
             B: T.Buffer((8, 2), "int16", offset_factor=1),
             C: T.Buffer((8,), "int32", offset_factor=1)) -> None:
        with T.sblock("root"):
            T.reads(C[0:8], A[0:2], B[0:8, 0:2])
            T.writes(C[0:8])
            for i in T.serial(0, 8):
                for k in T.serial(0, 2):
                    with T.sblock("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")

    @T.prim_func(s_tir=True)
    def impl(A: T.Buffer((2,), "int16", offset_factor=1),
             B: T.Buffer((8, 2), "int16", offset_factor=1),
             C: T.Buffer((8,), "int32", offset_factor=1)) -> None:
        with T.sblock("root"):
            T.reads(C[0:8], A[0:2], B[0:8, 0:2])
            T.writes(C[0:8])
            # one expression: a named value here (``a = ...``) becomes a buffer that the
            # lowered kernel allocates from the workspace pool on every tile (measured: ~13%
            # of the int8 ResNet-18's time went to TVMBackendAllocWorkspace/Free)
            C[T.ramp(T.int32(0), 1, 8)] += T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id("llvm.x86.avx2.pmadd.wd"),
                T.reinterpret(T.broadcast(T.reinterpret(A.vload([0], "int16x2"), dtype="int32"),
                                          8), dtype="int16x16"),
                B.vload([0, 0], dtype="int16x16"), dtype="int32x8")

    TensorIntrin.register(INTRIN, desc, impl)
    _REGISTERED.append(INTRIN)


class DotForm(NamedTuple):
    """One integer dot-product instruction: operand dtypes, input channels per product group,
    int32 lanes, and the registered tensor intrinsic (``C[lanes] += A[group] . B[lanes, group]``)."""

    data: str
    weight: str
    group: int
    lanes: int
    intrin: str


PMADDWD = DotForm("int16", "int16", 2, 8, INTRIN)
_VNNI_INTRIN = "relay_tvm_vpdpbusd_{}x4"


def vnni_form(lanes: int) -> DotForm | None:
    """The uint8 x int8 form with ``lanes`` int32 lanes (``CPUFeatures.dot_lanes``: 16 zmm
    with AVX512-VNNI, 8 ymm with AVX-VNNI), None for 0 (no VNNI)."""
    return DotForm("uint8", "int8", 4, lanes, _VNNI_INTRIN.format(lanes)) if lanes else None


def register_vnni(lanes: int) -> str:
    """Register the ``vpdpbusd`` intrinsic of ``lanes`` int32 lanes (once); returns its name."""
    name = _VNNI_INTRIN.format(lanes)
    if name in _REGISTERED:
        return name
    import tvm
    from tvm.s_tir import TensorIntrin
    from tvm.script import tirx as T

    bits = 32 * lanes
    # AVX-VNNI's VEX form is the 256-bit intrinsic too. LLVM >= 20 types its operands as
    # byte vectors (<64 x i8>), earlier ones as int32 vectors
    llvm_name = f"llvm.x86.avx512.vpdpbusd.{bits}"
    bytes_typed = tvm.target.codegen.llvm_version_major() >= 20
    a_type = f"uint8x{4 * lanes}" if bytes_typed else f"int32x{lanes}"
    b_type = f"int8x{4 * lanes}" if bytes_typed else f"int32x{lanes}"

    @T.prim_func(s_tir=True)
    def desc(A: T.Buffer((4,), "uint8", offset_factor=1),
             B: T.Buffer((lanes, 4), "int8", offset_factor=1),
             C: T.Buffer((lanes,), "int32", offset_factor=1)) -> None:
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            for i in T.serial(0, lanes):
                for k in T.serial(0, 4):
                    with T.sblock("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")

    @T.prim_func(s_tir=True)
    def impl(A: T.Buffer((4,), "uint8", offset_factor=1),
             B: T.Buffer((lanes, 4), "int8", offset_factor=1),
             C: T.Buffer((lanes,), "int32", offset_factor=1)) -> None:
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            # one expression, as in register(): no named temporaries
            C[T.ramp(T.int32(0), 1, lanes)] = T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id(llvm_name),
                C.vload([0], dtype=f"int32x{lanes}"),
                T.reinterpret(T.broadcast(T.reinterpret(A.vload([0], "uint8x4"), dtype="int32"),
                                          lanes), dtype=a_type),
                T.reinterpret(B.vload([0, 0], dtype=f"int8x{4 * lanes}"), dtype=b_type),
                dtype=f"int32x{lanes}")

    TensorIntrin.register(name, desc, impl)
    _REGISTERED.append(name)
    return name


def applicable(target, data_dtype, weight_dtype, out_dtype, ic, oc) -> DotForm | None:
    """The dot-product form of an NCHW convolution with these dtypes and channel counts on
    ``target``, or None: int16 operands with even input and 8k output channels on AVX2
    (``vpmaddwd``); uint8 data and int8 weights with 4k input and ``lanes * k`` output channels
    on a VNNI target (``vpdpbusd``). int32 output in both."""
    if out_dtype != "int32" or oc == 0:
        return None
    if (data_dtype, weight_dtype) == ("int16", "int16"):
        from .cpu_model import has_feature

        return PMADDWD if ic % 2 == 0 and oc % 8 == 0 and has_feature(target, "avx2") else None
    if (data_dtype, weight_dtype) == ("uint8", "int8"):
        from .cpu_model import cpu_features

        form = vnni_form(cpu_features(target).dot_lanes)
        if form is not None and ic % 4 == 0 and oc % form.lanes == 0:
            return form
    return None


def _first_divisor(n: int, choices) -> int:
    return next((c for c in choices if c <= n and n % c == 0), 1)


def tile_knobs(form: DotForm, feats, knobs, oc: int, ow: int, steps: int):
    """``(wb, ob, ukw)``: the register tile of :func:`schedule_conv2d_int` for ``oc`` output
    channels, ``ow`` output columns and ``steps`` dot-product steps per output (input channel
    groups x kernel taps) on a CPU with ``feats`` (``cpu_model.CPUFeatures``), unless
    ``knobs`` (``cpu.Knobs``) say otherwise."""
    # 16 AVX2 registers (int16 pairs, AVX-VNNI): two int32 vectors x 4 columns where they
    # divide the layer: 4 broadcasts + 2 weight loads per 8 vpmaddwd instead of 8 + 1 per
    # 8 (Zen 3, ResNet-18's 64->128 stride-2 layer: 1.5x; layers with 14 or 7 columns keep
    # 1 vector x 7 columns). 32 zmm registers (AVX512-VNNI): one vector x 7 columns, else
    # 8, 6 or 4 (Zen 4, ResNet-18's 3x3 layers: 79-91% of vpdpbusd's peak with 7 x 1,
    # 73-90% with 4 x 2; 2 vectors x 7 columns lost up to 30% on 56 columns)
    # Short reductions (1x1 layers of few channels: the tile's accumulators are written out
    # after few steps) do better with 4 columns, and with 2-4 vectors from 33 to 96 steps
    # (Zen 4, ResNet-50's 1x1 layers on 56x56 and 28x28: 64->256 1.44x, 256->64 1.17x,
    # 256->128 1.14x, 128->512 1.05x over 7 x 1).
    v = form.lanes
    zmm = v == 16 and feats.vector_registers >= 32
    wide = not zmm and oc % (2 * v) == 0 and ow % 4 == 0
    cols, vecs = _first_divisor(ow, (7, 8, 6, 4) if zmm else (8, 7, 4)), 1
    if zmm and ow % 4 == 0 and steps <= 96:
        cols = 4
        vecs = 1 if steps <= 32 else next(b for b in (4, 2, 1) if oc % (b * v) == 0)
    wb = knobs.pick("wb", [w for w in (8, 7, 6, 4, 3, 2, 1) if ow % w == 0],
                    4 if wide else cols)
    ob = knobs.pick("ob", [b * v for b in (1, 2, 3, 4) if oc % (b * v) == 0],
                    2 * v if wide else vecs * v)
    ukw = knobs.pick("ukw", [0, 1], 0 if wide or zmm else 1)
    return wb, ob, ukw


def schedule_conv2d_int(sch, block, pad_names, epi, wb, helpers, form=PMADDWD, ob=8,
                        unroll_kw=True):
    """The tensorized schedule of an NCHW/OIHW integer convolution block (after the caller's
    inlining) in the dot-product ``form`` (:func:`applicable`); returns the build-time weight
    packs. ``ob`` output channels per tile (whole ``form.lanes`` vectors), ``wb`` output
    columns. ``helpers`` are cpu.py's (Pack, _param_index, _read_buffer, _tile_epilogue,
    _vectorize_inner, _finish_padding, generic)."""
    Pack, param_index, read_buffer, _, _, _, generic = helpers
    if form.intrin == INTRIN:
        register()
    else:
        register_vnni(form.lanes)
    g, lanes = form.group, form.lanes
    packs = {}
    dbuf = read_buffer(sch, block, 0)
    if param_index(sch, dbuf) is None:  # the materialized padding block
        pad = next(b for b in sch.get_child_blocks(sch.get_sblock("root"))
                   if sch.get(b).name_hint in pad_names)
        sch.transform_layout(pad, ("write", 0), lambda n, c, h, w: (n, c // g, h, w, c % g))
    else:
        cache = sch.cache_read(block, 0, "global")
        sch.transform_layout(cache, ("write", 0), lambda n, c, h, w: (n, c // g, h, w, c % g))
        pad_names = set(pad_names) | {sch.get(cache).name_hint}
    wbuf = read_buffer(sch, block, 1)
    widx = param_index(sch, wbuf)
    if widx is None:
        from .cpu import NotApplicable

        raise NotApplicable(f"the {form.weight} weight is not a parameter")
    O, I, KH, KW = (int(d) for d in wbuf.shape)
    sch.transform_layout(block, ("read", 1),
                         lambda o, i, h, w: (o // ob, i // g, h, w, o % ob, i % g))
    packs[widx] = Pack(f"OIHW->OIHW{ob}o{g}i", (O // ob, I // g, KH, KW, ob, g),
                       lambda oo, ii, h, w, oi, i2: (oo * ob + oi, ii * g + i2, h, w))
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    sch.transform_layout(block, ("write", 0), lambda n_, c, h, w: (n_, c // ob, h, w, c % ob))
    n, oc, oh, ow, ic, kh, kw = sch.get_loops(block)
    oco, ocv, oci = sch.split(oc, factors=[None, ob // lanes, lanes])
    owo, owi = sch.split(ow, factors=[None, wb])
    ico, ici = sch.split(ic, factors=[None, g])
    sch.reorder(n, oco, oh, owo, ico, kh, kw, owi, ocv, oci, ici)
    _finish_tile(sch, block, epi, owo, (n, oco, oh), ico, oci,
                 (owi, ocv) + ((kw,) if unroll_kw else ()), form, helpers, pad_names)
    return packs


def _finish_tile(sch, block, epi, tile, parallel, ico, oci, unrolled, form, helpers, pad_names):
    """The end both templates share: the epilogue at the ``tile`` loop, the ``parallel`` loops
    fused, the accumulators' initialization vectorized, the dot product tensorized at ``oci``,
    the register tile's loops unrolled, the epilogue vectorized, the padding finished."""
    _, _, _, tile_epilogue, vectorize_inner, finish_padding, _ = helpers
    epi = tile_epilogue(sch, block, epi, tile)
    sch.parallel(sch.fuse(*parallel))
    init = sch.decompose_reduction(block, ico)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.tensorize(oci, form.intrin)
    for loop in unrolled:
        sch.unroll(loop)
    vectorize_inner(sch, epi, form.lanes)
    finish_padding(sch, pad_names)


def schedule_conv2d_nchwc_int(sch, block, pad_names, epi, form, feats, knobs, helpers):
    """The tensorized schedule of an ``nn.contrib_conv2d_NCHWc`` block with uint8 data
    (``NCHW{ib}c``, ``ib`` a multiple of 4: each quad of input channels is contiguous) and an
    int8 weight parameter (``OIHW{ib}i{ob}o``, packed at build time as ``OIHW{ib/4}i{ob}o4i``),
    int32 output ``NCHW{ob}c``: one ``vpdpbusd`` per quad, output column and vector of
    ``ob``; the epilogue vectorized over the output block. Returns the weight packs."""
    Pack, param_index, read_buffer, _, _, _, generic = helpers
    from .cpu import NotApplicable

    lanes = form.lanes
    register_vnni(lanes)
    wbuf = read_buffer(sch, block, 1)
    widx = param_index(sch, wbuf)
    if widx is None:
        raise NotApplicable("the int8 weight is not a parameter")
    occ_, icc_, kh_, kw_, ib, ob = (int(d) for d in wbuf.shape)
    if ib % 4 or ob % lanes:
        raise NotApplicable(f"blocks {ib}i{ob}o are not whole quads and vectors")
    sch.transform_layout(block, ("read", 1),
                         lambda a, b, h, w, i, o: (a, b, h, w, i // 4, o, i % 4))
    packs = {widx: Pack(f"OIHW{ib}i{ob}o->OIHW{ib // 4}i{ob}o4i",
                        (occ_, icc_, kh_, kw_, ib // 4, ob, 4),
                        lambda a, b, h, w, i4, o, i: (a, b, h, w, i4 * 4 + i, o))}
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    n, occ, oh, ow, ocb, ic, kh, kw = sch.get_loops(block)
    steps = generic.loop_extent(sch, ic) // 4 * kh_ * kw_
    wb, tile_oc, ukw = tile_knobs(form, feats, knobs, occ_ * ob, generic.loop_extent(sch, ow),
                                  steps)
    # the tile's output channels: whole blocks of the layout (cg of them), or part of one
    cg = tile_oc // ob if tile_oc % ob == 0 and occ_ % max(tile_oc // ob, 1) == 0 else 1
    occo, occi = sch.split(occ, factors=[None, cg])
    ocv, oci = sch.split(ocb, factors=[None, lanes])
    owo, owi = sch.split(ow, factors=[None, wb])
    ico, ici = sch.split(ic, factors=[None, 4])
    sch.reorder(n, occo, oh, owo, ico, kh, kw, owi, occi, ocv, oci, ici)
    _finish_tile(sch, block, epi, owo, (n, occo, oh), ico, oci,
                 (owi, occi, ocv) + ((kw,) if ukw else ()), form, helpers, pad_names)
    return packs

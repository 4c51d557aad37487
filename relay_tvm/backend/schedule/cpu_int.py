"""Integer convolution on x86 with AVX2's ``vpmaddwd``: int16 x int16 pairs summed into int32.

The qnn canonicalization hands ``nn.conv2d`` int16 operands (int8/uint8 values shifted by
their zero points) with int32 accumulation. This template packs the (padded) data as
``NCHW2c`` and the weight as ``OIHW8o2i`` (a build-time constant transform), so that one
``vpmaddwd`` multiplies a broadcast pair of input channels by the 8 x 2 weights of 8 output
channels and adds the pairs: 16 multiply-adds per instruction, exact (int16 x int16 products
and their pair sums fit int32; no saturation, unlike ``vpmaddubsw``). The tensor intrinsic is
registered here as ``relay_tvm_pmaddwd_8x2``; the integer Winograd's batched GEMM
(``winograd.py``, kernel layout ``OIHW{k}o2i``) uses it too.

Knobs of the direct template: ``wb`` (output columns per tile), ``ob`` (output channels per
tile, 8-channel vectors), ``ukw`` (unroll the kernel columns).
"""

from __future__ import annotations

INTRIN = "relay_tvm_pmaddwd_8x2"
_REGISTERED = []


def register():
    """Register the tensor intrinsic :data:`INTRIN` (once)."""
    if _REGISTERED:
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
    _REGISTERED.append(True)


def applicable(target, data_dtype, weight_dtype, out_dtype, ic, oc) -> bool:
    """int16 operands, int32 output, even input and 8k output channels, an AVX2 target."""
    import tvm

    if (data_dtype, weight_dtype, out_dtype) != ("int16", "int16", "int32"):
        return False
    if ic % 2 or oc % 8:
        return False
    try:
        return bool(tvm.target.codegen.target_has_features("avx2", target))
    except Exception:  # a target LLVM does not know
        return False


def schedule_conv2d_int16(sch, block, pad_names, epi, wb, helpers, ob=8, unroll_kw=True):
    """The tensorized schedule of an NCHW/OIHW int16 convolution block (after the caller's
    inlining); returns the build-time weight packs. ``helpers`` are cpu.py's
    (Pack, _param_index, _read_buffer, _tile_epilogue, _vectorize_inner, _finish_padding,
    generic)."""
    Pack, param_index, read_buffer, tile_epilogue, vectorize_inner, finish_padding, generic = \
        helpers
    register()
    packs = {}
    dbuf = read_buffer(sch, block, 0)
    if param_index(sch, dbuf) is None:  # the materialized padding block
        pad = next(b for b in sch.get_child_blocks(sch.get_sblock("root"))
                   if sch.get(b).name_hint in pad_names)
        sch.transform_layout(pad, ("write", 0), lambda n, c, h, w: (n, c // 2, h, w, c % 2))
    else:
        cache = sch.cache_read(block, 0, "global")
        sch.transform_layout(cache, ("write", 0), lambda n, c, h, w: (n, c // 2, h, w, c % 2))
        pad_names = set(pad_names) | {sch.get(cache).name_hint}
    wbuf = read_buffer(sch, block, 1)
    widx = param_index(sch, wbuf)
    if widx is None:
        from .cpu import NotApplicable

        raise NotApplicable("the int16 weight is not a parameter")
    O, I, KH, KW = (int(d) for d in wbuf.shape)
    sch.transform_layout(block, ("read", 1),
                         lambda o, i, h, w: (o // ob, i // 2, h, w, o % ob, i % 2))
    packs[widx] = Pack(f"OIHW->OIHW{ob}o2i", (O // ob, I // 2, KH, KW, ob, 2),
                       lambda oo, ii, h, w, oi, i2: (oo * ob + oi, ii * 2 + i2, h, w))
    if epi is None:
        epi = sch.cache_write(block, 0, "global")
    sch.transform_layout(block, ("write", 0), lambda n_, c, h, w: (n_, c // ob, h, w, c % ob))
    n, oc, oh, ow, ic, kh, kw = sch.get_loops(block)
    oco, ocv, oci = sch.split(oc, factors=[None, ob // 8, 8])
    owo, owi = sch.split(ow, factors=[None, wb])
    ico, ici = sch.split(ic, factors=[None, 2])
    sch.reorder(n, oco, oh, owo, ico, kh, kw, owi, ocv, oci, ici)
    epi = tile_epilogue(sch, block, epi, owo)
    sch.parallel(sch.fuse(n, oco, oh))
    init = sch.decompose_reduction(block, ico)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.tensorize(oci, INTRIN)
    sch.unroll(owi)
    sch.unroll(ocv)
    if unroll_kw:
        sch.unroll(kw)
    vectorize_inner(sch, epi, 8)
    finish_padding(sch, pad_names)
    return packs

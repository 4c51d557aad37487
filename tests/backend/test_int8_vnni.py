"""uint8 x int8 convolutions with VNNI's vpdpbusd (transform/int8_conv.py + the dot-product
template of backend/schedule/cpu_int.py): exact against NumPy's int64 convolution, bit-identical
to the int16 (vpmaddwd) path, and chosen only for VNNI targets."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.backend.target import make_target


def host_has(feature: str) -> bool:
    return bool(tvm.target.codegen.target_has_features(feature, make_target(None)))


needs_vnni = pytest.mark.skipif("not host_has('avx512vnni')",
                                reason="running vpdpbusd (zmm) needs an AVX512-VNNI host")


def np_conv(x, w, pad, stride=1, dilation=1):
    """int64 NCHW/OIHW convolution; ``pad`` (top, left, bottom, right) of zeros."""
    x = np.pad(x.astype("int64"), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    ekh, ekw = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    oh, ow = (h - ekh) // stride + 1, (wd - ekw) // stride + 1
    out = np.zeros((n, o, oh, ow), "int64")
    for i in range(kh):
        for j in range(kw):
            di, dj = i * dilation, j * dilation
            patch = x[:, :, di:di + stride * oh:stride, dj:dj + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype("int64"))
    return out


def program(shape, w, form, zp=0, pad=(1, 1, 1, 1), stride=1, dtype="uint8", dilation=1):
    """conv2d of ``x - zp`` (``form`` "int16": both operands cast to int16, what the qnn
    canonicalization and relay.quantize make; "plain": the 8-bit operands themselves)."""
    x = relay.var("x", shape=shape, dtype=dtype)
    k = w.shape[2]
    if form == "int16":
        d = relay.cast(x, "int16")
        if zp:
            d = relay.subtract(d, relay.const(zp, "int16"))
        wc = relay.const(w.astype("int16"))
    else:
        assert zp == 0
        d, wc = x, relay.const(w.astype("int8"))
    y = relay.nn.conv2d(d, wc, strides=(stride, stride), padding=pad, channels=w.shape[0],
                        kernel_size=(k, k), dilation=(dilation, dilation), out_dtype="int32")
    return relay.IRModule.from_expr(relay.Function([x], y))


def build(mod, target):
    with relay.transform.PassContext(opt_level=3):
        return relay.build(mod, target=target)


def run(lib, x):
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", x)
    gm.run()
    return gm.get_output(0).numpy()


def asm(lib) -> str:
    return lib.get_lib().get_source("asm")


CASES = [
    # c, o, h, w, k, pad, stride, zp, dtype
    (16, 32, 14, 14, 3, (1, 1, 1, 1), 1, 0, "uint8"),     # relay.quantize's uint8, zp 0
    (64, 64, 9, 9, 3, (1, 1, 1, 1), 1, 128, "uint8"),     # qnn uint8 with a zero point: padded
    (32, 48, 8, 10, 3, (1, 0, 2, 1), 1, 37, "uint8"),     # asymmetric padding
    (8, 16, 7, 7, 3, (1, 1, 1, 1), 1, 0, "int8"),         # int8 data: shifted by 128
    (8, 16, 7, 7, 3, (1, 1, 1, 1), 1, 5, "int8"),         # int8 with a zero point
    (6, 20, 9, 9, 3, (1, 1, 1, 1), 1, 3, "uint8"),        # channels padded to 8 and to 32
    (17, 29, 8, 8, 3, (0, 0, 0, 1), 1, 0, "uint8"),       # 0.19's odd case, padded
    (64, 128, 14, 14, 1, (0, 0, 0, 0), 2, 0, "uint8"),    # 1x1 stride 2 (a downsample)
    (32, 16, 11, 11, 1, (0, 0, 0, 0), 1, 255, "uint8"),   # largest shift: |x - zp| <= 255
    (16, 16, 12, 12, 3, (1, 1, 1, 1), 2, 9, "uint8"),     # 3x3 stride 2, padded with zp
]


@needs_vnni
def test_vnni_dilated_conv_equals_numpy():
    rng = np.random.default_rng(5)
    xv = rng.integers(0, 256, (1, 16, 13, 13)).astype("uint8")
    wv = rng.integers(-128, 128, (32, 16, 3, 3))
    lib = build(program(xv.shape, wv, "int16", 11, (2, 2, 2, 2), 1, "uint8", 2), "llvm")
    assert "vpdpbusd" in asm(lib)
    np.testing.assert_array_equal(run(lib, xv),
                                  np_conv(xv.astype("int64") - 11, wv, (2, 2, 2, 2), 1, 2))


@needs_vnni
@pytest.mark.parametrize("form,c,o,h,w,k,pad,stride,zp,dtype",
                         [(f, *case) for case in CASES for f in ("int16", "plain")
                          if f == "int16" or case[7] == 0])  # plain 8-bit: no zero point
def test_vnni_conv_equals_numpy(form, c, o, h, w, k, pad, stride, zp, dtype):
    rng = np.random.default_rng(c * o + h + zp)
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    xv = rng.integers(lo, hi, (1, c, h, w)).astype(dtype)
    wv = rng.integers(-128, 128, (o, c, k, k)).astype("int64")
    wv.flat[:2] = (-128, 127)  # the int8 extremes
    lib = build(program(xv.shape, wv, form, zp, pad, stride, dtype), "llvm")
    assert "vpdpbusd" in asm(lib)
    got = run(lib, xv)
    np.testing.assert_array_equal(got, np_conv(xv.astype("int64") - zp, wv, pad, stride))


@needs_vnni
def test_vnni_bit_identical_to_int16_path():
    # the same quantized layer built for VNNI and for AVX2 (vpmaddwd; the int16 Winograd
    # there): the exact same int32 outputs, at the extremes of the 8-bit ranges
    rng = np.random.default_rng(7)
    xv = rng.choice(np.array([0, 255], "uint8"), (1, 64, 12, 12))
    wv = rng.choice(np.array([-128, 127]), (32, 64, 3, 3))
    mod = program(xv.shape, wv, "int16", zp=128)
    vnni, avx2 = build(mod, "llvm"), build(mod, "llvm -mcpu=haswell")
    assert "vpdpbusd" in asm(vnni) and "vpdpbusd" not in asm(avx2)
    np.testing.assert_array_equal(run(vnni, xv), run(avx2, xv))


@pytest.mark.parametrize("target,expected", [
    ("llvm -mcpu=cascadelake", "vpdpbusd"),      # AVX512-VNNI: zmm
    ("llvm -mcpu=znver4", "vpdpbusd"),
    ("llvm -mcpu=alderlake", "{vex}\tvpdpbusd"),  # AVX-VNNI only: the VEX (ymm) form
    ("llvm -mcpu=skylake-avx512", None),         # AVX-512 without VNNI: vpmaddwd
    ("llvm -mcpu=haswell", None),
])
def test_vnni_chosen_by_target(target, expected):
    wv = np.random.default_rng(0).integers(-128, 128, (32, 16, 3, 3))
    text = asm(build(program((1, 16, 14, 14), wv, "int16", zp=3), target))
    if expected is None:
        assert "vpdpbusd" not in text
        assert "vpmaddwd" in text
    else:
        assert expected in text


@pytest.mark.parametrize("case", ["weight_not_int8", "data_unbounded", "weight_variable",
                                  "pad_value_not_uint8"])
def test_vnni_not_applied(case):
    # what the rewrite must refuse: int16 weights beyond int8, int16 data of unknown range
    # (neither fits vpdpbusd's operands), a weight that is not a constant (no build-time pack),
    # uint8 data shifted up (x + 37: its padding, 0, is -37 as uint8); the int16 template
    # then computes the same exact result
    rng = np.random.default_rng(11)
    dtype = "int16" if case == "data_unbounded" else "uint8"
    x = relay.var("x", shape=(1, 16, 8, 8), dtype=dtype)
    wv = rng.integers(-128, 128, (16, 16, 3, 3)).astype("int16")
    if case == "weight_not_int8":
        wv[0, 0, 0, 0] = 300
    d = x if case == "data_unbounded" else relay.cast(x, "int16")
    zp = -37 if case == "pad_value_not_uint8" else 0
    if zp:
        d = relay.subtract(d, relay.const(zp, "int16"))
    params, wexpr = [], relay.const(wv)
    if case == "weight_variable":
        wexpr = relay.var("w", shape=wv.shape, dtype="int16")
        params = [wexpr]
    y = relay.nn.conv2d(d, wexpr, padding=(1, 1), channels=16, kernel_size=(3, 3),
                        out_dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x, *params], y))
    lib = build(mod, "llvm -mcpu=cascadelake")
    assert "vpdpbusd" not in asm(lib)
    if host_has("avx512vnni"):
        xv = (rng.integers(-3000, 3000, (1, 16, 8, 8)) if case == "data_unbounded"
              else rng.integers(0, 256, (1, 16, 8, 8))).astype(dtype)
        gm = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
        gm.set_input("x", xv)
        if params:
            gm.set_input("w", wv)
        gm.run()
        np.testing.assert_array_equal(gm.get_output(0).numpy(),
                                      np_conv(xv.astype("int64") - zp, wv, (1, 1, 1, 1)))


@needs_vnni
def test_vnni_nchw_template_without_alter_op_layout():
    # below opt level 3 (no AlterOpLayout) a uint8 x int8 nn.conv2d stays NCHW: the NCHW
    # template packs NCHW4c data per run and runs vpdpbusd all the same
    rng = np.random.default_rng(2)
    xv = rng.integers(0, 256, (1, 16, 10, 10)).astype("uint8")
    wv = rng.integers(-128, 128, (32, 16, 3, 3))
    with relay.transform.PassContext(opt_level=2):
        lib = relay.build(program(xv.shape, wv, "plain"), target="llvm")
    assert "vpdpbusd" in asm(lib)
    assert not any("NCHWc" in gv.name_hint for gv in lib.ir_mod.functions)
    np.testing.assert_array_equal(run(lib, xv), np_conv(xv, wv, (1, 1, 1, 1)))


@needs_vnni
def test_vnni_blocked_layers_chain_exactly():
    # two quantized layers and a residual add in the blocked layout (NCHW16c between them, the
    # layout transforms only at the ends), against NumPy
    rng = np.random.default_rng(4)
    xv = rng.integers(0, 256, (1, 32, 9, 9)).astype("uint8")
    w1 = rng.integers(-128, 128, (32, 32, 3, 3))
    w2 = rng.integers(-128, 128, (32, 32, 1, 1))
    x = relay.var("x", shape=xv.shape, dtype="uint8")
    d = relay.subtract(relay.cast(x, "int16"), relay.const(7, "int16"))
    y1 = relay.nn.conv2d(d, relay.const(w1.astype("int16")), padding=(1, 1), channels=32,
                         kernel_size=(3, 3), out_dtype="int32")
    q = relay.cast(relay.clip(relay.right_shift(y1, relay.const(12)), 0, 255), "uint8")
    y2 = relay.nn.conv2d(relay.cast(q, "int16"), relay.const(w2.astype("int16")), channels=32,
                         kernel_size=(1, 1), out_dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(y2, y1)))
    lib = build(mod, "llvm")
    names = [gv.name_hint for gv in lib.ir_mod.functions]
    assert sum("layout_transform" in n for n in names) <= 2, names
    e1 = np_conv(xv.astype("int64") - 7, w1, (1, 1, 1, 1))
    eq = np.clip(e1 >> 12, 0, 255)
    np.testing.assert_array_equal(run(lib, xv), np_conv(eq, w2, (0, 0, 0, 0)) + e1)


@pytest.mark.parametrize("dtype,shift,value", [("uint8", 32700, 200), ("int8", -32700, -100)])
def test_vnni_refuses_a_shift_that_wraps_int16(dtype, shift, value):
    # found by a fresh-user trial: cast(x, int16) + 32700 wraps for x >= 68; the rewrite must
    # not take the shift as exact (it gave 131600 where int16 arithmetic gives -130544)
    x = relay.var("x", shape=(1, 4, 1, 1), dtype=dtype)
    d = relay.add(relay.cast(x, "int16"), relay.const(shift, "int16"))
    y = relay.nn.conv2d(d, relay.const(np.ones((16, 4, 1, 1), "int16")), channels=16,
                        kernel_size=(1, 1), out_dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    wrapped = (value + shift + 2 ** 15) % 2 ** 16 - 2 ** 15  # int16 arithmetic
    lib = build(mod, "llvm -mcpu=cascadelake")
    assert "vpdpbusd" not in asm(lib)
    if host_has("avx512vnni"):
        got = run(lib, np.full((1, 4, 1, 1), value, dtype))
        np.testing.assert_array_equal(got, np.full((1, 16, 1, 1), 4 * wrapped))


def test_quantized_conv_with_no_output_channels_builds():
    # found by a fresh-user trial: the integer Winograd's eligibility let 0 output channels
    # through (0 % 8 == 0) and its block choice failed on them
    x = relay.var("x", shape=(1, 16, 8, 8), dtype="uint8")
    y = relay.qnn.op.conv2d(x, relay.const(np.zeros((0, 16, 3, 3), "int8")),
                            relay.const(128, "int32"), relay.const(0, "int32"),
                            relay.const(0.1, "float32"), relay.const(0.1, "float32"),
                            kernel_size=(3, 3), channels=0, padding=(1, 1))
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    for target in ("llvm -mcpu=haswell", "llvm -mcpu=cascadelake"):
        lib = build(mod, target)
        if target.endswith("haswell"):
            assert run(lib, np.zeros((1, 16, 8, 8), "uint8")).shape == (1, 0, 8, 8)

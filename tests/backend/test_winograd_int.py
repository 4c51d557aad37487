"""Integer Winograd F(2x2, 3x3) for quantized convolutions (transform/winograd_int.py): at opt
level 3 an int16 x int16 -> int32 3x3 convolution whose data is provably 8-bit-sized becomes
the Winograd convolution with int16 pairs (``OIHW{k}o2i``, vpmaddwd); its result must equal
NumPy's int64 convolution exactly, including the extreme values and the ragged last tiles, and
the reference interpreter must agree with the compiled kernel on the new weight layout."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.transform.winograd_choice import CONFIG_KEY
from relay_tvm.transform.winograd_int import transformed_weight, value_bound

WINO = "winograd"


def np_conv(x, w, pad, stride=1):
    """int64 NCHW/OIHW convolution; ``pad`` (top, left, bottom, right)."""
    x = np.pad(x.astype("int64"), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    o, _, kh, kw = w.shape
    oh = (x.shape[2] - kh) // stride + 1
    ow = (x.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], o, oh, ow), "int64")
    for i in range(kh):
        for j in range(kw):
            xs = x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("oc,nchw->nohw", w[:, :, i, j].astype("int64"), xs)
    return out


def qconv(shape, w, zp=None, pad=(1, 1, 1, 1), stride=1, dtype="uint8"):
    """``conv2d(cast(x, int16) [- zp], w)`` as relay.quantize / the qnn canonicalization
    write it; ``w`` an int16 constant."""
    x = relay.var("x", shape=shape, dtype=dtype)
    d = relay.cast(x, "int16")
    if zp is not None:
        d = relay.subtract(d, relay.const(np.int16(zp)))
    y = relay.nn.conv2d(d, relay.const(w.astype("int16")), strides=(stride, stride),
                        padding=pad, channels=w.shape[0], kernel_size=(3, 3), out_dtype="int32")
    return relay.IRModule.from_expr(relay.Function([x], y))


def _int16_target():
    """The host, or where it has VNNI (whose uint8 x int8 form AlterOpLayout prefers to the
    int16 Winograd: tests/backend/test_int8_vnni.py) an older ISA it also runs."""
    from relay_tvm.backend.target import make_target

    host = make_target(None)
    if not tvm.target.codegen.target_has_features("avx512vnni", host) and \
            not tvm.target.codegen.target_has_features("avxvnni", host):
        return "llvm"
    if tvm.target.codegen.target_has_features("avx512bw", host):
        return "llvm -mcpu=skylake-avx512"
    return "llvm -mcpu=haswell"


INT16_TARGET = _int16_target()


def build_run(mod, x, config=None, target=INT16_TARGET):
    with relay.transform.PassContext(opt_level=3, config=config or {}):
        lib = relay.build(mod, target=target)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", x)
    gm.run()
    names = [gv.name_hint for gv in lib.ir_mod.functions]
    return gm.get_output(0).numpy(), names


def avx2():
    from relay_tvm.backend.target import make_target

    return bool(tvm.target.codegen.target_has_features("avx2", make_target(None)))


needs_avx2 = pytest.mark.skipif("not avx2()", reason="the int16 Winograd needs an AVX2 target")


@needs_avx2
@pytest.mark.parametrize("c,o,h,w,pad,zp", [
    (8, 16, 9, 9, (1, 1, 1, 1), None),      # odd size: the last tile row/column is ragged
    (6, 8, 7, 10, (1, 0, 2, 1), 128),       # asymmetric padding, 6 channels (block 6), zp
    (32, 48, 14, 14, (1, 1, 1, 1), -37),    # 48 = 3 x 16 output channels, negative zp
    (64, 64, 8, 8, (0, 0, 0, 0), 255),      # no padding, |data - zp| up to 255
])
def test_int16_winograd_equals_numpy(c, o, h, w, pad, zp):
    rng = np.random.default_rng(c + o + h)
    xv = rng.integers(0, 256, (1, c, h, w)).astype("uint8")
    wv = rng.integers(-128, 128, (o, c, 3, 3)).astype("int16")
    got, names = build_run(qconv(xv.shape, wv, zp, pad), xv)
    assert any(WINO in n for n in names), names
    exp = np_conv(xv.astype("int64") - (zp or 0), wv, pad)
    np.testing.assert_array_equal(got, exp)
    direct, names = build_run(qconv(xv.shape, wv, zp, pad), xv, {CONFIG_KEY: "never"})
    assert not any(WINO in n for n in names), names
    np.testing.assert_array_equal(direct, exp)


@needs_avx2
@pytest.mark.parametrize("zp,pattern", [(-255, "full"), (255, "full"), (-255, "random"),
                                        (128, "random")])
def test_int16_winograd_extremes(zp, pattern):
    # the largest magnitudes the proof allows: data 0 / 255 shifted by zp = +-255 (|d| up to
    # 510, |B^T d B| up to 2040) and weights -128 / 127 (|U| up to 1152); 64 channels keep 4x
    # the result inside int32
    rng = np.random.default_rng(abs(zp))
    c, o, h = 64, 16, 6
    if pattern == "full":
        xv = np.full((1, c, h, h), 255 if zp < 0 else 0, "uint8")
        wv = np.full((o, c, 3, 3), -128, "int16")
        wv[1::2] = 127
    else:
        xv = rng.choice(np.array([0, 255], "uint8"), (1, c, h, h))
        wv = rng.choice(np.array([-128, 127], "int16"), (o, c, 3, 3))
    got, names = build_run(qconv(xv.shape, wv, zp), xv)
    assert any(WINO in n for n in names)
    np.testing.assert_array_equal(got, np_conv(xv.astype("int64") - zp, wv, (1, 1, 1, 1)))


@needs_avx2
@pytest.mark.parametrize("case", ["unbounded", "odd_channels", "stride2", "channels_not_8k"])
def test_int16_winograd_not_applied(case):
    # the rewrite must refuse what it cannot prove exact or lay out: int16 data of unknown
    # range, an odd channel count, stride 2, output channels that are not whole 8-lane blocks;
    # the direct template then computes the same exact result
    rng = np.random.default_rng(3)
    c, o, stride, dtype = 8, 16, 1, "uint8"
    if case == "odd_channels":
        c = 7
    elif case == "stride2":
        stride = 2
    elif case == "channels_not_8k":
        o = 12
    elif case == "unbounded":
        dtype = "int16"
    xv = rng.integers(0, 256, (1, c, 10, 10)).astype(dtype)
    if dtype == "int16":
        xv = rng.integers(-30000, 30000, (1, c, 10, 10)).astype("int16")
    wv = rng.integers(-128, 128, (o, c, 3, 3)).astype("int16")
    got, names = build_run(qconv(xv.shape, wv, stride=stride, dtype=dtype), xv)
    assert not any(WINO in n for n in names), names
    np.testing.assert_array_equal(got, np_conv(xv, wv, (1, 1, 1, 1), stride))


def test_value_bound_rules():
    u8 = relay.var("a", shape=(2,), dtype="uint8")
    i8 = relay.var("b", shape=(2,), dtype="int8")
    i16 = relay.var("c", shape=(2,), dtype="int16")
    i32 = relay.var("d", shape=(2,), dtype="int32")

    def bound(e):
        mod = relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function(relay.analysis.free_vars(e), e)))
        return value_bound(mod["main"].body)

    assert bound(relay.cast(u8, "int16")) == 255
    assert bound(relay.cast(i8, "int16")) == 128
    assert bound(relay.subtract(relay.cast(u8, "int16"), relay.const(np.int16(-100)))) == 355
    assert bound(relay.cast(relay.clip(i32, -127, 127), "int16")) == 127
    assert bound(relay.cast(relay.clip(i32, -40000, 40000), "int16")) is None  # may wrap
    assert bound(relay.add(i16, relay.cast(u8, "int16"))) is None  # an unknown int16
    assert bound(relay.cast(i32, "int16")) is None


def test_transformed_weight_is_four_times_g_g_gt():
    from relay_tvm.op.nn_winograd import transform_matrices

    rng = np.random.default_rng(0)
    w = rng.integers(-128, 128, (3, 2, 3, 3))
    _, _, g = transform_matrices(2, 3)
    exp = 4 * np.einsum("ar,oirs,bs->aboi", g, w.astype("float64"), g)
    np.testing.assert_array_equal(transformed_weight(w), exp.astype("int64"))


def _pairs_program(xv, u, pad):
    x = relay.var("x", shape=xv.shape, dtype="int16")
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, relay.const(u), tile_size=2, padding=pad, channels=u.shape[2] * u.shape[4],
        kernel_size=(3, 3), kernel_layout=f"OIHW{u.shape[4]}o2i", out_dtype="int32")
    return relay.IRModule.from_expr(relay.Function([x], y))


@needs_avx2
def test_pairs_layout_interpreter_equals_compiled():
    # the op itself on an OIHW8o2i weight: the reference interpreter (NumPy, integers, the
    # transformed input held in int16) and the compiled kernel agree, and both are 4x the conv
    rng = np.random.default_rng(1)
    xv = rng.integers(-255, 256, (1, 4, 5, 6)).astype("int16")
    wv = rng.integers(-128, 128, (8, 4, 3, 3))
    u = transformed_weight(wv)  # (4, 4, 8, 4)
    u = np.ascontiguousarray(u.reshape(4, 4, 1, 8, 2, 2).transpose(0, 1, 2, 4, 3, 5))
    mod = _pairs_program(xv, u.astype("int16"), (1, 1))
    exp = 4 * np_conv(xv, wv, (1, 1, 1, 1))
    ref = relay.create_executor("debug", mod=mod).evaluate()(xv).numpy()
    np.testing.assert_array_equal(ref, exp)
    with relay.transform.PassContext(opt_level=0):
        got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(xv).numpy()
    np.testing.assert_array_equal(got, exp)


def test_pairs_layout_rejects_tile_4_and_bad_shapes():
    xv = np.zeros((1, 4, 6, 6), "int16")
    with pytest.raises(TypeInferenceError, match="integer input and output transforms"):
        relay.transform.InferType()(_pairs_program(xv, np.zeros((6, 6, 1, 2, 8, 2), "int16"),
                                                   (1, 1)))
    with pytest.raises(TypeInferenceError, match="I/2"):
        relay.transform.InferType()(_pairs_program(xv, np.zeros((4, 4, 1, 2, 8, 1), "int16"),
                                                   (1, 1)))


@needs_avx2
def test_haswell_target_is_avx2_only():
    # built for -mcpu=haswell the int8 path (direct and Winograd) uses no AVX-512 register
    rng = np.random.default_rng(2)
    xv = rng.integers(0, 256, (1, 16, 8, 8)).astype("uint8")
    wv = rng.integers(-128, 128, (16, 16, 3, 3)).astype("int16")
    mod = qconv(xv.shape, wv)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm -mcpu=haswell")
    asm = lib.get_source("asm")
    assert "vpmaddwd" in asm and "zmm" not in asm


def _wino_kernels(lib):
    """The TIR text of the built Winograd kernels."""
    return [f.script() for gv, f in lib.ir_mod.functions.items() if WINO in gv.name_hint]


def chained(shape, w1, w2, zp=5):
    """conv -> clip to int8 -> conv: the first convolution's output stays blocked
    (``NCHW{k}c``), the second's data is bounded by the clip, so both are Winograd."""
    x = relay.var("x", shape=shape, dtype="uint8")
    d = relay.subtract(relay.cast(x, "int16"), relay.const(np.int16(zp)))
    y = relay.nn.conv2d(d, relay.const(w1.astype("int16")), padding=(1, 1),
                        channels=w1.shape[0], kernel_size=(3, 3), out_dtype="int32")
    y = relay.cast(relay.clip(relay.right_shift(y, relay.const(np.int32(6))), -128, 127),
                   "int16")
    z = relay.nn.conv2d(y, relay.const(w2.astype("int16")), padding=(1, 1),
                        channels=w2.shape[0], kernel_size=(3, 3), out_dtype="int32")
    return relay.IRModule.from_expr(relay.Function([x], z))


def np_chained(xv, w1, w2, zp=5):
    y = np.clip(np_conv(xv.astype("int64") - zp, w1, (1, 1, 1, 1)) >> 6, -128, 127)
    return np_conv(y, w2, (1, 1, 1, 1))


@needs_avx2
@pytest.mark.parametrize("n,c,o,h,w,knobs", [
    (1, 64, 64, 56, 56, {}),                  # ResNet-18's layer 1: 28 groups of a tile row
    (2, 16, 32, 9, 11, {}),                   # batch 2, ragged last tile row and column
    (1, 32, 64, 14, 14, {"rows": 7, "osplit": 2}),  # one group, two output-channel chunks
    (1, 16, 64, 12, 12, {"rows": 2, "osplit": 4}),
    (1, 32, 32, 8, 8, {"fuse": 0}),           # the stages one by one (the earlier schedule)
    (1, 64, 64, 56, 56, {"padin": 0}),        # a padded copy instead of reading through
    (2, 16, 32, 9, 11, {"padin": 0, "fuse": 0}),
])
def test_int16_winograd_fused_stages_exact(n, c, o, h, w, knobs):
    # the int16 Winograd with its three stages fused per group of tile rows (one parallel
    # loop besides the padding) computes exactly NumPy's integer convolution, whatever the
    # grouping knobs, the batch and the ragged last tiles
    from relay_tvm.backend.schedule import LAST_ERRORS
    from relay_tvm.backend.schedule.cpu import override_knobs

    rng = np.random.default_rng(n + c + o + h + w)
    xv = rng.integers(0, 256, (n, c, h, w)).astype("uint8")
    w1 = rng.integers(-128, 128, (o, c, 3, 3)).astype("int16")
    w2 = rng.integers(-128, 128, (o, o, 3, 3)).astype("int16")
    LAST_ERRORS.clear()
    with override_knobs(knobs), relay.transform.PassContext(opt_level=3):
        lib = relay.build(chained(xv.shape, w1, w2), target=INT16_TARGET)
    assert not LAST_ERRORS, LAST_ERRORS  # no template fell back to the generic schedule
    kernels = _wino_kernels(lib)
    assert len(kernels) == 2
    for text in kernels:
        # fused: one parallel loop over the groups (and the padding's, when materialized);
        # stage by stage: one per stage
        parallel = text.count("T.parallel")
        assert parallel >= 3 if knobs.get("fuse") == 0 else parallel <= 2, text
        # the padding is read through (conditional loads) unless the knob says otherwise
        assert ('T.sblock("data_pad")' in text) == (knobs.get("padin") == 0), text
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", xv)
    gm.run()
    np.testing.assert_array_equal(gm.get_output(0).numpy(), np_chained(xv, w1, w2))

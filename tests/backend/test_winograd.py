"""End to end: a ResNet-style basic block built at opt level 3, where AlterOpLayout turns its 3x3
convolutions into Winograd convolutions (bound weights transformed at build time), equals the
reference interpreter and the opt level 0 build."""

import numpy as np
import pytest
from backend_util import assert_same, rand

import relay_tvm as relay
from relay_tvm.transform.winograd_choice import CONFIG_KEY

WINO = "nn.contrib_conv2d_winograd_without_weight_transform"


def basic_block(c, h, n=1):
    """conv3x3-bn-relu-conv3x3-bn, + the input, relu (ResNet v1), then a strided 3x3 conv
    (which stays direct)."""
    x = relay.var("x", shape=(n, c, h, h))
    p = {}

    def conv_bn(y, name, strides=(1, 1)):
        w = relay.var(f"{name}_w", shape=(c, c, 3, 3))
        g, b = relay.var(f"{name}_g", shape=(c,)), relay.var(f"{name}_b", shape=(c,))
        m, v = relay.var(f"{name}_m", shape=(c,)), relay.var(f"{name}_v", shape=(c,))
        p[f"{name}_w"] = (rand((c, c, 3, 3), seed=len(p)) / np.sqrt(9 * c)).astype("float32")
        p[f"{name}_g"] = (1 + 0.1 * rand((c,), seed=len(p))).astype("float32")
        p[f"{name}_b"] = (0.1 * rand((c,), seed=len(p))).astype("float32")
        p[f"{name}_m"] = (0.1 * rand((c,), seed=len(p))).astype("float32")
        p[f"{name}_v"] = (1 + 0.1 * np.abs(rand((c,), seed=len(p)))).astype("float32")
        y = relay.nn.conv2d(y, w, strides=strides, padding=(1, 1), channels=c, kernel_size=(3, 3))
        return relay.nn.batch_norm(y, g, b, m, v)[0]

    y = relay.nn.relu(conv_bn(x, "a"))
    y = relay.nn.relu(relay.add(conv_bn(y, "b"), x))
    y = conv_bn(y, "down", strides=(2, 2))
    free = relay.analysis.free_vars(y)
    return relay.Function(free, y), p


def _build(func, params, opt_level, config=None):
    mod = relay.IRModule.from_expr(func)
    with relay.transform.PassContext(opt_level=opt_level, config=config):
        return relay.build(mod, target="llvm", params=params)


def _run(lib, x):
    import tvm

    from relay_tvm.runtime import GraphModule

    gm = GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", x)
    gm.run()
    return gm.get_output(0).numpy()


@pytest.mark.parametrize("c, h, n, config", [
    # the cost model picks F(4x4, 3x3) on AVX2 and AVX-512 (at 16x16 it keeps 32 channels
    # direct: measured with cold caches the three forms are within 7% there; 32 channels at
    # 32x32 are within 2% of direct on AVX-512)
    (64, 32, 1, None),
    # 14x14 in F(2x2): 49 tiles, and 35x35 in F(4x4): 81 tiles; the GEMM's register tile
    # (6 tiles on AVX2, 13 on AVX-512) does not divide them: a guarded last block
    (16, 14, 1, {CONFIG_KEY: 2}),
    (16, 35, 1, {CONFIG_KEY: 4}),
    (16, 10, 2, {CONFIG_KEY: 2}),  # forced F(2x2, 3x3), batch 2, 10 = 5 tiles of 2
    (16, 7, 1, {CONFIG_KEY: 4}),  # forced F(4x4, 3x3) on 7x7: the last tiles are cropped
])
def test_resnet_block_opt3_equals_interpreter_and_opt0(c, h, n, config):
    func, params = basic_block(c, h, n)
    x = rand((n, c, h, h), seed=99)
    lib3 = _build(func, params, 3, config)
    rules = [(k.anchor, k.schedule_rule) for k in lib3.kernels.values()]
    assert rules.count((WINO, "conv2d_winograd")) == 2, rules
    assert ("nn.contrib_conv2d_NCHWc", "conv2d_NCHWc") in rules  # the strided conv
    # the weights were transformed at build time: no transform kernel runs
    assert not any(a == "nn.contrib_conv2d_winograd_weight_transform" for a, _ in rules)
    got3 = _run(lib3, x)
    got0 = _run(_build(func, params, 0), x)
    mod = relay.IRModule.from_expr(func)
    ref = relay.create_executor("debug", mod, params=params).evaluate()(x).numpy()
    scale = np.abs(ref).max()
    assert_same(ref, got3, rtol=1e-4, atol=1e-4 * scale)
    assert_same(got0, got3, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell",
                                    "llvm -mtriple=aarch64-linux-gnu"])
def test_winograd_template_applies_on_other_isas(target):
    """Built (not run) for ISAs this machine may not have: the template fits each vector width
    and register count (16 zmm lanes with 32 registers; 8 ymm with 16; 4 NEON with 32)."""
    func, params = basic_block(32, 16)
    mod = relay.IRModule.from_expr(func)
    with relay.transform.PassContext(opt_level=3, config={CONFIG_KEY: 4}):
        lib = relay.build(mod, target=target, params=params)
    rules = [(k.anchor, k.schedule_rule) for k in lib.kernels.values()]
    assert rules.count((WINO, "conv2d_winograd")) == 2, rules


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell",
                                    "llvm -mtriple=aarch64-linux-gnu"])
def test_fused_winograd_applies_on_other_isas(target):
    """The stages fused per tile row (knob ``fuse``) build for each vector width: one
    parallel loop per Winograd kernel, no generic fallback."""
    from relay_tvm.backend.schedule import LAST_ERRORS
    from relay_tvm.backend.schedule.cpu import override_knobs

    func, params = basic_block(32, 16)
    LAST_ERRORS.clear()
    with override_knobs({"fuse": 1}), relay.transform.PassContext(
            opt_level=3, config={CONFIG_KEY: 4}):
        lib = relay.build(relay.IRModule.from_expr(func), target=target, params=params)
    assert not LAST_ERRORS, LAST_ERRORS
    winos = [k for k in lib.kernels.values() if k.anchor == WINO]
    assert len(winos) == 2
    for k in winos:
        assert k.schedule_rule == "conv2d_winograd"
        assert k.prim_func.script().count("T.parallel") == 1


def test_gemm_tile_may_leave_a_guarded_last_block():
    """The batched GEMM's tile rows need not divide the tile count P when the dividing tiles
    are one vector wide or hide too little FMA latency; then at most 10% of the rows are
    padding, and the cost model prices the padding."""
    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.schedule.winograd import gemm_tile
    from relay_tvm.backend.target import make_target
    from relay_tvm.transform.winograd_choice import gemm_tile_efficiency

    for target in ("llvm -mcpu=haswell", "llvm -mcpu=skylake-avx512",
                   "llvm -mtriple=aarch64-linux-gnu"):
        feats = cpu_features(make_target(target))
        lanes = feats.lanes(32)
        for p in (4, 9, 16, 25, 49, 64, 81, 144, 196, 324, 784):
            mb, nb = gemm_tile(p, 16, feats)
            rows = -(-p // mb) * mb
            assert 1 <= mb <= min(p, 16) and p >= 0.9 * rows, (target, p, mb)
            assert nb % lanes == 0 and 16 % nb == 0, (target, p, nb)
            eff = gemm_tile_efficiency(p, 16, feats)
            assert 0 < eff <= p / rows + 1e-12, (target, p, eff)
    avx2 = cpu_features(make_target("llvm -mcpu=haswell"))
    # dividing tiles that are wide and deep enough stay: 16, 196 tiles -> 4 x 2 vectors
    assert gemm_tile(16, 16, avx2) == (4, 16) and gemm_tile(196, 16, avx2) == (4, 16)
    # 49 and 81 tiles: 7 x 1 and 9 x 1 vectors before; 6 x 2 vectors with a guarded block
    assert gemm_tile(49, 16, avx2) == (6, 16) and gemm_tile(81, 16, avx2) == (6, 16)
    # AVX-512's 16-channel blocks are one vector: on the 16- and 49-tile GEMMs of 7x7 and 14x14
    # planes at most latency x pipes rows (13-16 rows ran 1.6-2.2x slower on Zen 5; the model
    # 1.22x faster end to end on ResNet-18), larger GEMMs keep the widest dividing tile
    avx512 = cpu_features(make_target("llvm -mcpu=skylake-avx512"))
    assert gemm_tile(16, 16, avx512) == (8, 16) and gemm_tile(49, 16, avx512) == (7, 16)
    assert gemm_tile(81, 16, avx512) == (9, 16) and gemm_tile(196, 16, avx512) == (14, 16)


@pytest.mark.parametrize("c, h, config", [(32, 32, None), (16, 7, {CONFIG_KEY: 4}),
                                           (16, 14, {CONFIG_KEY: 2})])
def test_input_transform_reading_through_the_padding_equals_interpreter(c, h, config):
    """Knob ``padin`` (tunable; by default on wherever the convolution pads): the input
    transform reads the unpadded input with conditional loads instead of a padded copy; the
    block still equals the interpreter."""
    from relay_tvm.backend.schedule.cpu import override_knobs

    func, params = basic_block(c, h)
    x = rand((1, c, h, h), seed=98)
    with override_knobs({"padin": 1}):
        lib = _build(func, params, 3, config)
    for k in lib.kernels.values():
        if k.anchor == WINO:
            assert k.schedule_rule == "conv2d_winograd"
            assert 'T.sblock("data_pad")' not in k.prim_func.script()
    ref = relay.create_executor("debug", relay.IRModule.from_expr(func),
                                params=params).evaluate()(x).numpy()
    assert_same(ref, _run(lib, x), rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_tiles_first_rule():
    """Tiles first where each thread reading the whole transformed weight (C x O per
    position) costs less than twice the data that would cross between threads
    (P x (C + O)): ResNet-18's 64@56 (196 tiles) and 128@28 (49) layers, not its 256@14 and
    512@7 ones (16 tiles)."""
    from relay_tvm.backend.schedule.winograd import tiles_first_default

    assert tiles_first_default(196, 64, 64) and tiles_first_default(49, 128, 128)
    assert not tiles_first_default(16, 256, 256) and not tiles_first_default(16, 512, 512)
    assert tiles_first_default(8, 8, 8) and not tiles_first_default(8, 64, 64)
    assert not tiles_first_default(None, 64, 64)


@pytest.mark.parametrize("c, h, config, knobs", [
    (16, 14, {CONFIG_KEY: 4}, {"tiles_first": 1}),
    (16, 14, {CONFIG_KEY: 4}, {"tiles_first": 1, "padin": 0}),
    (16, 7, {CONFIG_KEY: 2}, {"tiles_first": 0}),
    (16, 7, {CONFIG_KEY: 2}, {"tiles_first": 0, "padin": 1}),
    (32, 32, None, {}),
    (96, 7, {CONFIG_KEY: 2}, {}),  # by position by default (C.O > 2.P.(C+O)), padding read
])
def test_stages_split_by_tiles_or_by_position_equal_interpreter(c, h, config, knobs):
    """Knob ``tiles_first``: the GEMM's parallel loop over tile groups outermost and the
    output transform over tile rows (each thread's tiles through all stages on that thread),
    or by transform position and channel block; the padding read through by default in
    both. Every combination equals the interpreter."""
    from relay_tvm.backend.schedule.cpu import override_knobs

    func, params = basic_block(c, h)
    x = rand((1, c, h, h), seed=97)
    with override_knobs(knobs):
        lib = _build(func, params, 3, config)
    winos = [k for k in lib.kernels.values() if k.anchor == WINO]
    assert winos
    for k in winos:
        assert k.schedule_rule == "conv2d_winograd"
        padin = knobs.get("padin", 1)
        assert ('T.sblock("data_pad")' not in k.prim_func.script()) == bool(padin)
    ref = relay.create_executor("debug", relay.IRModule.from_expr(func),
                                params=params).evaluate()(x).numpy()
    assert_same(ref, _run(lib, x), rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def _np_conv3x3(x, w, pad):
    """float64 NCHW/OIHW 3x3 convolution, stride 1, ``pad`` on every side (NumPy)."""
    x = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out


def _conv_relu(shape, w, pad):
    x = relay.var("x", shape=shape)
    y = relay.nn.conv2d(x, relay.const(w), padding=(pad, pad), channels=w.shape[0],
                        kernel_size=(3, 3))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(y)))


@pytest.mark.parametrize("n, c, o, h, w, pad, tile, knobs", [
    (1, 32, 64, 30, 30, 1, 4, {}),                      # the default: 8 groups of a tile row
    (2, 16, 32, 13, 11, 1, 4, {"fuse": 1}),             # batch 2, ragged last row and column
    (1, 16, 64, 17, 17, 0, 2, {"fuse": 1, "rows": 2, "osplit": 2}),  # no padding, 2 chunks
    (1, 32, 32, 24, 24, 1, 4, {"fuse": 1, "mb": 3}),    # a 3-tile register block
    (1, 32, 64, 30, 30, 1, 4, {"fuse": 0}),             # the stages one by one
])
def test_float_winograd_fused_stages_equal_numpy(monkeypatch, n, c, o, h, w, pad, tile, knobs):
    """Knob ``fuse``: the float Winograd with its input transform, GEMMs and output transform
    fused per group of tile rows (one parallel loop over the groups, per-group buffers)
    equals NumPy's convolution, whatever the batch, the ragged last tiles, the padding, the
    group size, the output-channel chunks and the register block; ``fuse`` 0 keeps the three
    parallel stages."""
    from relay_tvm.backend.schedule import LAST_ERRORS
    from relay_tvm.backend.schedule.cpu import override_knobs

    monkeypatch.setenv("TVM_NUM_THREADS", "2")  # the default's thread count, whatever the host
    rng = np.random.default_rng(n + c + o + h + w)
    xv = rng.standard_normal((n, c, h, w)).astype("float32")
    wv = (rng.standard_normal((o, c, 3, 3)) / np.sqrt(9 * c)).astype("float32")
    LAST_ERRORS.clear()
    with override_knobs(knobs), relay.transform.PassContext(
            opt_level=3, config={CONFIG_KEY: tile}):
        lib = relay.build(_conv_relu(xv.shape, wv, pad), target="llvm")
    assert not LAST_ERRORS, LAST_ERRORS  # the template applied, no generic fallback
    winos = [k for k in lib.kernels.values() if k.anchor == WINO]
    assert len(winos) == 1
    text = winos[0].prim_func.script()
    parallel = text.count("T.parallel")
    assert parallel >= 3 if knobs.get("fuse") == 0 else parallel == 1, text
    ref = np.maximum(_np_conv3x3(xv, wv, pad), 0)
    got = _run(lib, xv)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("knobs", [{}, {"vpos": 0}, {"vpos": 1, "padin": 0}])
def test_input_transform_by_transform_rows_equals_numpy(knobs):
    """Knob ``vpos``: where the GEMM splits by transform position (no ``tiles_first``: 96
    channels on 7x7, F(2x2)), the input transform's parallel loop leads with the transform
    row ``a`` by default, so each thread writes the transformed input its GEMM reads; either
    way, and with a padded copy, the kernel equals NumPy's convolution."""
    from relay_tvm.backend.schedule.cpu import override_knobs

    rng = np.random.default_rng(11)
    xv = rng.standard_normal((1, 96, 7, 7)).astype("float32")
    wv = (rng.standard_normal((96, 96, 3, 3)) / np.sqrt(9 * 96)).astype("float32")
    with override_knobs(knobs), relay.transform.PassContext(
            opt_level=3, config={CONFIG_KEY: 2}):
        lib = relay.build(_conv_relu(xv.shape, wv, 1), target="llvm")
    (k,) = [k for k in lib.kernels.values() if k.anchor == WINO]
    assert k.schedule_rule == "conv2d_winograd"
    first = next(ln for ln in k.prim_func.script().splitlines()
                 if "T.parallel" in ln and "data_pad" not in ln)
    assert first.strip().startswith("for a_p_") == bool(knobs.get("vpos", 1)), first
    ref = np.maximum(_np_conv3x3(xv, wv, 1), 0)
    np.testing.assert_allclose(_run(lib, xv), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_fused_default_rule():
    """Fused by default where the stages split by tiles anyway (``tiles_first``) and the
    tile rows give each thread at least three groups: ResNet's 64@56 (14 rows) and 128@28
    (7 rows) layers on two threads, not the 128@28 ones on four, nor 256@14 / 512@7."""
    from relay_tvm.backend.schedule.winograd import fused_default

    assert fused_default(196, 64, 64, 14, 2) and fused_default(49, 128, 128, 7, 2)
    assert not fused_default(49, 128, 128, 7, 4)
    assert not fused_default(16, 256, 256, 4, 2) and not fused_default(4, 512, 512, 2, 2)
    assert fused_default(1369, 64, 32, 37, 2)  # Inception-v3's 147x147 layer


@pytest.mark.parametrize("threads, fused", [("2", True), ("4", False)])
def test_fused_default_follows_the_thread_count(monkeypatch, threads, fused):
    """The default is taken at build time for the module's thread count: 8 tile rows are
    enough groups for two threads, not for four."""
    monkeypatch.setenv("TVM_NUM_THREADS", threads)
    wv = np.ones((32, 32, 3, 3), "float32")
    with relay.transform.PassContext(opt_level=3, config={CONFIG_KEY: 4}):
        lib = relay.build(_conv_relu((1, 32, 30, 30), wv, 1), target="llvm")
    (k,) = [k for k in lib.kernels.values() if k.anchor == WINO]
    assert (k.prim_func.script().count("T.parallel") == 1) == fused


def _loop_depths(prim_func, names):
    """``{block name: number of loops above it}`` in a scheduled kernel."""
    import tvm

    sch = tvm.s_tir.Schedule(prim_func)
    return {n: len(sch.get_loops(sch.get_sblock(n))) for n in names}


@pytest.mark.parametrize("tile, knobs", [
    (4, {"fuse": 1}),                     # stages fused per group of tile rows
    (4, {"fuse": 0, "tiles_first": 1}),   # the stages one by one, split by tiles
    (2, {"fuse": 0, "tiles_first": 0}),   # split by position (the input transform by rows)
])
def test_transform_products_per_row_or_per_tile_equal_numpy(tile, knobs):
    """Knob ``rowtmp``: the one-sided transform products (``data_tmp = B^T d``, ``inverse_tmp
    = A^T M``) computed one row at a time under the row loop of the stage that reads them
    (default: one loop deeper than per tile), or per tile; both equal NumPy's convolution,
    fused or not, F(4x4) and F(2x2)."""
    from relay_tvm.backend.schedule import LAST_ERRORS
    from relay_tvm.backend.schedule.cpu import override_knobs

    rng = np.random.default_rng(5 + tile)
    xv = rng.standard_normal((1, 32, 20, 20)).astype("float32")
    wv = (rng.standard_normal((32, 32, 3, 3)) / np.sqrt(9 * 32)).astype("float32")
    ref = np.maximum(_np_conv3x3(xv, wv, 1), 0)
    depths = {}
    for rowtmp in (0, 1):
        LAST_ERRORS.clear()
        with override_knobs({**knobs, "rowtmp": rowtmp}), relay.transform.PassContext(
                opt_level=3, config={CONFIG_KEY: tile}):
            lib = relay.build(_conv_relu(xv.shape, wv, 1), target="llvm")
        assert not LAST_ERRORS, LAST_ERRORS
        (k,) = [k for k in lib.kernels.values() if k.anchor == WINO]
        depths[rowtmp] = _loop_depths(k.prim_func, ["data_tmp", "inverse_tmp"])
        np.testing.assert_allclose(_run(lib, xv), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    vpos = not knobs.get("fuse") and not knobs.get("tiles_first")  # input split by rows already
    assert depths[1]["inverse_tmp"] == depths[0]["inverse_tmp"] + 1, depths
    assert depths[1]["data_tmp"] == depths[0]["data_tmp"] + (0 if vpos else 1), depths

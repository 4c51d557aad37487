"""AlterOpLayout's Winograd rewrite: an eligible nn.conv2d (3x3, stride 1, dilation 1, groups 1,
constant weight) becomes the weight transform + Winograd convolution pair where the cost model
says so (the transform folded by FoldConstant), and nothing else does."""

import numpy as np
import pytest
from pass_util import assert_same_result, op_names, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.errors import RelayError
from relay_tvm.transform.winograd_choice import CONFIG_KEY, module_threads, winograd_tile

RNG = np.random.default_rng(3)
WINO = "nn.contrib_conv2d_winograd_without_weight_transform"


def conv_net(c=64, o=64, h=28, k=3, **conv):
    x = relay.var("x", shape=(1, c, h, h))
    w = relay.const((RNG.standard_normal((o, c // conv.get("groups", 1), k, k)) * 0.1)
                    .astype("float32"))
    conv.setdefault("padding", (k // 2, k // 2))
    return relay.Function([x], relay.nn.relu(relay.nn.conv2d(x, w, **conv)))


def alter(func, config=None):
    return run_opt_pass(func, [transform.AlterOpLayout(), transform.FoldConstant()],
                        config=config)


def test_eligible_conv_becomes_winograd_with_folded_weight():
    before = conv_net()
    after = alter(before)
    names = op_names(after)
    assert WINO in names and "nn.conv2d" not in names and "nn.contrib_conv2d_NCHWc" not in names
    # the transform, reshape and transpose of the constant weight are folded away
    assert "nn.contrib_conv2d_winograd_weight_transform" not in names
    assert names.count("layout_transform") == 2
    call = [n for n in _calls(after) if n.op.name == WINO][0]
    assert call.attrs.tile_size == winograd_tile(1, 64, 28, 28, 64, 8,
                                                 threads=module_threads())
    alpha = call.attrs.tile_size + 2
    assert call.args[1].data.shape == (alpha, alpha, 4, 64, 16)  # (a, a, O/16, I, 16)
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def _calls(func):
    out = []
    relay.analysis.post_order_visit(
        func, lambda n: out.append(n)
        if isinstance(n, relay.Call) and isinstance(n.op, relay.op.Op) else None)
    return out


def test_folded_weight_is_g_w_gt_packed():
    from tvm.topi.nn.winograd_util import _cook_toom_convolution, _interpolation_points

    before = conv_net(c=16, o=32, h=12)
    after = alter(before, {CONFIG_KEY: 2})
    w = [n for n in _calls(before) if n.op.name == "nn.conv2d"][0].args[1].data
    _, _, g = _cook_toom_convolution(_interpolation_points(3), 2, 3)
    u = np.einsum("ar,oirs,bs->aboi", g, w.astype("float64"), g)  # (4, 4, 32, 16)
    packed = u.reshape(4, 4, 2, 16, 16).transpose(0, 1, 2, 4, 3)
    call = [n for n in _calls(after) if n.op.name == WINO][0]
    np.testing.assert_allclose(call.args[1].data, packed, rtol=1e-5, atol=1e-6)
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("conv, why", [
    (dict(strides=(2, 2)), "strided"),
    (dict(dilation=(2, 2), padding=(2, 2)), "dilated"),
    (dict(groups=4), "grouped"),
    (dict(k=5), "5x5"),
    (dict(k=1), "1x1"),
])
def test_ineligible_conv_is_not_winograd(conv, why):
    before = conv_net(**conv)
    for config in (None, {CONFIG_KEY: 4}):
        names = op_names(alter(before, config))
        assert WINO not in names, why
        expected = "nn.contrib_conv2d_NCHWc" if conv.get("groups", 1) == 1 else "nn.conv2d"
        assert expected in names, (why, names)


def test_weight_that_is_not_constant_stays_direct_unless_forced():
    x = relay.var("x", shape=(1, 64, 28, 28))
    w = relay.var("w", shape=(64, 64, 3, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1)))
    assert WINO not in op_names(alter(f))
    forced = alter(f, {CONFIG_KEY: 4})
    names = op_names(forced)
    # forced: the transform runs in the program (the weight is an input)
    assert WINO in names and "nn.contrib_conv2d_winograd_weight_transform" in names
    assert_same_result(f, forced, atol=1e-4, rtol=1e-4)


def test_small_conv_stays_direct_and_never_disables():
    assert WINO not in op_names(alter(conv_net(c=16, o=32, h=6)))
    assert WINO not in op_names(alter(conv_net(), {CONFIG_KEY: "never"}))
    with pytest.raises(RelayError, match="must be 'auto', 'never', 2 or 4"):
        alter(conv_net(), {CONFIG_KEY: 3})


def test_config_words_in_any_case_and_tiles_as_strings():
    """From a new-user trial: "2", "4", "NEVER" and "Auto" were refused; the strings read as
    the tiles and the words in any case (anything else is still refused)."""
    f = conv_net()
    for word in ("NEVER", "Never", " never "):
        assert WINO not in op_names(alter(f, {CONFIG_KEY: word})), word
    assert relay.analysis.structural_equal(alter(f, {CONFIG_KEY: "Auto"}), alter(f))
    for tile in (2, 4):
        assert relay.analysis.structural_equal(alter(f, {CONFIG_KEY: str(tile)}),
                                               alter(f, {CONFIG_KEY: tile}))
    assert not relay.analysis.structural_equal(alter(f, {CONFIG_KEY: "2"}),
                                               alter(f, {CONFIG_KEY: "4"}))
    for bad in ("3", "4x4", "", True, None, "nope"):
        with pytest.raises(RelayError, match="must be 'auto', 'never', 2 or 4"):
            alter(f, {CONFIG_KEY: bad})


def test_cost_model_choices():
    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.target import make_target

    avx2 = cpu_features(make_target("llvm -mcpu=haswell"))
    avx512 = cpu_features(make_target("llvm -mcpu=skylake-avx512"))
    for threads in (1, 2):
        # ResNet's 3x3 layers up to 14x14: F(4x4, 3x3) on AVX2 (AVX-512 below)
        for c, h in ((64, 56), (128, 28), (256, 14)):
            assert winograd_tile(1, c, h, h, c, 8, feats=avx2, threads=threads) == 4, (c, h)
        # 512 channels at 7x7: F(4x4)'s transformed weight (37.7 MB) streams from DRAM for 4
        # tiles (measured on Zen 3 with cold caches, one thread: F(2x2) 2.28 ms, F(4x4) 2.71,
        # direct 3.05); F(2x2)'s is 16.8 MB for 16 tiles
        assert winograd_tile(1, 512, 7, 7, 512, 8, feats=avx2, threads=threads) == 2
    for c, h in ((64, 56), (128, 28)):
        assert winograd_tile(1, c, h, h, c, 16, feats=avx512, threads=2) == 4, (c, h)
    # AVX-512 computes twice as fast per slot, but reads memory no faster: with 2 threads the
    # weight-heavy layers move to smaller weights (ResNet-18 on Zen 5, whole network, 2 threads,
    # alternating in one process: 512@7 direct instead of F(2x2) 7.49 -> 7.10 ms, then 256@14
    # F(2x2) instead of F(4x4) -> 6.83 ms)
    assert winograd_tile(1, 256, 14, 14, 256, 16, feats=avx512, threads=2) == 2
    assert winograd_tile(1, 512, 7, 7, 512, 16, feats=avx512, threads=2) is None
    assert winograd_tile(1, 512, 7, 7, 512, 16, feats=avx512, threads=1) == 2
    # Zen 4 issues one 512-bit FMA a cycle (both 256-bit pipes): per FMA slot memory delivers
    # twice the bytes, and the weight-heavy forms win there (bench_winograd, 2 threads, cold
    # caches, two runs on 2026-12-04: 256@14 F(2x2) 0.68-0.71 ms, F(4x4) 0.60-0.61; 512@7
    # direct 1.20-1.27, F(2x2) 0.97-1.05, F(4x4) 1.13-1.29)
    zen4 = cpu_features(make_target("llvm -mcpu=znver4"))
    assert zen4.split_512
    for c, h in ((64, 56), (128, 28), (256, 14)):
        assert winograd_tile(1, c, h, h, c, 16, feats=zen4, threads=2) == 4, (c, h)
    assert winograd_tile(1, 512, 7, 7, 512, 16, feats=zen4, threads=2) == 2
    # 8x8 planes of 384 channels (Inception-v3): F(2x2) measured 1.55 ms, F(4x4) 1.63
    assert winograd_tile(1, 384, 8, 8, 384, 8, feats=avx2, threads=2) == 2
    # 6x6 and 4x4 outputs: F(4x4)'s tiles would be mostly padding, F(2x2)'s fit exactly
    assert winograd_tile(1, 256, 6, 6, 256, 8, feats=avx2) == 2
    assert winograd_tile(1, 512, 4, 4, 512, 8, feats=avx2) == 2
    # fewer channels than vector lanes, or a few microseconds of work: direct
    assert winograd_tile(1, 3, 224, 224, 64, 8) is None
    assert winograd_tile(1, 8, 32, 32, 8, 16) is None
    assert winograd_tile(1, 16, 6, 6, 32, 8) is None
    # no room for a 3x3 window
    assert winograd_tile(1, 64, 1, 1, 64, 8, pad=(0, 0, 0, 0)) is None


def test_weight_cost_grows_with_threads():
    """The weights stream at the memory's rate however many threads compute: with more threads
    the choice never moves to a form with a larger weight (direct < F(2x2) < F(4x4))."""
    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.target import make_target
    from relay_tvm.transform.winograd_choice import direct_cost, winograd_cost

    avx2 = cpu_features(make_target("llvm -mcpu=haswell"))
    avx512 = cpu_features(make_target("llvm -mcpu=skylake-avx512"))
    size = {4: 2, 2: 1, None: 0}
    for c, o, h in ((64, 64, 56), (128, 128, 28), (256, 256, 14), (512, 512, 7),
                    (512, 512, 14), (96, 96, 35), (448, 384, 8), (256, 256, 6), (64, 256, 13)):
        picks = [winograd_tile(1, c, h, h, o, 8, feats=avx2, threads=t) for t in (1, 2, 4, 8)]
        assert [size[p] for p in picks] == sorted((size[p] for p in picks), reverse=True), \
            (c, o, h, picks)
        # the cost difference is exactly the extra weight bytes times the thread step
        d1 = winograd_cost(1, c, h, h, o, 8, 4, avx2, 1) - direct_cost(1, c, h, h, o, 8, 1)
        d2 = winograd_cost(1, c, h, h, o, 8, 4, avx2, 2) - direct_cost(1, c, h, h, o, 8, 2)
        extra = (36 - 9) * c * o * 4
        assert d2 - d1 == pytest.approx(extra / (0.63 * 8), rel=1e-9)
        # ... and the same on AVX-512: memory bandwidth does not grow with the vector width
        d1 = winograd_cost(1, c, h, h, o, 16, 4, avx512, 1) - direct_cost(1, c, h, h, o, 16, 1)
        d2 = winograd_cost(1, c, h, h, o, 16, 4, avx512, 2) - direct_cost(1, c, h, h, o, 16, 2)
        assert d2 - d1 == pytest.approx(extra / (0.63 * 8), rel=1e-9)
        # ... Zen 4's 512-bit FMAs issue once a cycle: the same bytes cost half the slots
        zen4 = cpu_features(make_target("llvm -mcpu=znver4"))
        d1 = winograd_cost(1, c, h, h, o, 16, 4, zen4, 1) - direct_cost(1, c, h, h, o, 16, 1,
                                                                       zen4)
        d2 = winograd_cost(1, c, h, h, o, 16, 4, zen4, 2) - direct_cost(1, c, h, h, o, 16, 2,
                                                                       zen4)
        assert d2 - d1 == pytest.approx(extra / (0.63 * 8 * 2), rel=1e-9)


def test_decider_uses_the_module_thread_count(monkeypatch):
    from relay_tvm._threads import usable_cores
    from relay_tvm.transform.winograd_choice import module_threads

    monkeypatch.setenv("TVM_NUM_THREADS", "3")
    assert module_threads() == 3
    monkeypatch.delenv("TVM_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert module_threads() == 5
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert module_threads() == usable_cores()
    # a 512-channel 7x7 layer: F(2x2) at one thread, direct with many (its 9.4 MB weight is the
    # smallest to stream); the rewrite follows the environment at build time
    monkeypatch.setenv("TVM_NUM_THREADS", "1")
    assert [n.attrs.tile_size for n in _calls(alter(conv_net(c=512, o=512, h=7)))
            if n.op.name == WINO] == [2]
    monkeypatch.setenv("TVM_NUM_THREADS", "16")
    assert WINO not in op_names(alter(conv_net(c=512, o=512, h=7)))

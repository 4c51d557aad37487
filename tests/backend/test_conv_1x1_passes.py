"""1x1 convolutions in the conv2d_NCHWc template with the reduction in passes (knob ``kc``:
input-channel blocks per pass over a chunk of output rows, the partial sums kept in the output
between passes), against a float64 NumPy convolution (1e-5 relative) and the reference
interpreter: strides 1 and 2, channel counts that are not multiples of 16 (8- and 4-channel
blocks), batch 2, odd and non-square planes, tail tiles, an epilogue with a residual add."""

import re

import numpy as np
import pytest
from backend_util import rand

import relay_tvm as relay
from relay_tvm.backend.schedule import cpu, cpu_nchwc
from relay_tvm.backend.schedule.cpu_model import CPUFeatures

AVX2 = CPUFeatures("x86", 256, 16, 4, 2, 32 << 10, 512 << 10)
AVX512 = CPUFeatures("x86", 512, 32, 4, 2, 32 << 10, 1 << 20)


def _np_1x1(x, w, b, s, res=None):
    patch = x.astype("float64")[:, :, ::s, ::s]
    out = np.einsum("nchw,oc->nohw", patch, w[:, :, 0, 0].astype("float64"))
    out += b.astype("float64")[None, :, None, None]
    if res is not None:
        out += res
    return np.maximum(out, 0)


def _conv_1x1(N, C, O, H, W, s, residual=False):
    x = relay.var("x", shape=(N, C, H, W))
    w = relay.var("w", shape=(O, C, 1, 1))
    b = relay.var("b", shape=(O,))
    y = relay.nn.bias_add(relay.nn.conv2d(x, w, strides=(s, s), channels=O,
                                          kernel_size=(1, 1)), b)
    oh, ow = (H - 1) // s + 1, (W - 1) // s + 1
    args = [x, w, b]
    if residual:
        r = relay.var("r", shape=(N, O, oh, ow))
        y = relay.add(y, r)
        args.append(r)
    func = relay.Function(args, relay.nn.relu(y))
    params = {"w": rand((O, C, 1, 1), seed=1) * 0.1, "b": rand((O,), seed=2)}
    inputs = {"x": rand((N, C, H, W), seed=3)}
    if residual:
        inputs["r"] = rand((N, O, oh, ow), seed=4)
    return func, params, inputs


def _run(func, params, inputs, knobs):
    import tvm

    with cpu.override_knobs(knobs), relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(func), target="llvm", params=params)
    (kern,) = [v for v in lib.kernels.values() if v.anchor == "nn.contrib_conv2d_NCHWc"]
    assert kern.schedule_rule == "conv2d_NCHWc", knobs
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    for k, v in inputs.items():
        gm.set_input(k, v)
    gm.run()
    return gm.get_output(0).numpy()


@pytest.mark.parametrize("case, knob_sets", [
    # 64 channels (4 blocks of 16) in passes of 1 and 2 blocks; 9 columns: 4-wide tiles + tail
    ((1, 64, 32, 9, 9, 1), [{"cg": 1, "rows": 1, "wb": 4, "rfirst": 0, "kc": 1},
                            {"cg": 2, "rows": 3, "wb": 4, "rfirst": 0, "kc": 2}]),
    # stride 2 on an odd plane (15 -> 8), batch 2, 48 input channels (3 blocks)
    ((2, 48, 32, 15, 15, 2), [{"cg": 1, "rows": 2, "wb": 5, "rfirst": 0, "kc": 1},
                              {"cg": 2, "rows": 1, "wb": 2, "rfirst": 0, "kc": 3}]),
    # 40 input channels (5 blocks of 8) and 20 output channels (5 blocks of 4), 7x11 -> 4x6
    ((1, 40, 20, 7, 11, 2), [{"cg": 5, "rows": 1, "wb": 6, "rfirst": 0, "kc": 1},
                             {"cg": 1, "rows": 2, "wb": 5, "rfirst": 0, "kc": 5}]),
    # batch 2, 13x13: a 13-row chunk with 6-wide tiles and a tail, passes of 2 of 8 blocks
    ((2, 128, 48, 13, 13, 1), [{"cg": 3, "rows": 13, "wb": 6, "rfirst": 0, "kc": 2},
                               {"cg": 1, "rows": 1, "wb": 13, "rfirst": 0, "kc": 4}]),
])
def test_1x1_in_passes_matches_numpy(case, knob_sets):
    N, C, O, H, W, s = case
    func, params, inputs = _conv_1x1(N, C, O, H, W, s)
    ref = _np_1x1(inputs["x"], params["w"], params["b"], s)
    for knobs in [{}] + knob_sets:
        got = _run(func, params, inputs, knobs)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5, err_msg=str(knobs))


@pytest.mark.parametrize("kc", [1, 4])
def test_1x1_in_passes_with_a_residual_equals_the_interpreter(kc):
    """The epilogue (bias, residual add, relu) runs once per chunk after the last pass."""
    func, params, inputs = _conv_1x1(2, 128, 64, 10, 10, 1, residual=True)
    got = _run(func, params, inputs, {"cg": 2, "rows": 2, "wb": 4, "rfirst": 0, "kc": kc})
    mod = relay.IRModule.from_expr(func)
    ref = relay.create_executor("debug", mod=mod).evaluate()(
        inputs["x"], params["w"], params["b"], inputs["r"]).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        got, _np_1x1(inputs["x"], params["w"], params["b"], 1, inputs["r"]), rtol=1e-5,
        atol=1e-5)


def _plan(feats, C, O, H, s, lanes):
    oh = (H - 1) // s + 1
    return cpu_nchwc._plan(feats, cpu.Knobs(), N=1, OCC=O // 16, OB=16, OH=oh, OW=oh,
                           lanes=lanes, red_bytes=C * 4, split_ic=True,
                           in_bytes=C * H * H * 4, icb=C // 16, pointwise=True)


def test_model_runs_large_reductions_in_passes_that_fit_l1():
    # ResNet-50's 512->128 at 28x28 on AVX2: a 2-block tile's 64 KB of weights would stream
    # from L2 at every tile; passes keep each pass's weights within a quarter of L1
    cg, rows, wb, rfirst, kc = _plan(AVX2, 512, 128, 28, 1, 8)
    assert not rfirst and kc < 512 // 16
    assert cg * 16 * kc * 16 * 4 <= AVX2.l1d_bytes // 4
    # 64 input channels: the whole reduction's weights fit, one pass
    cg, rows, wb, rfirst, kc = _plan(AVX2, 64, 128, 56, 2, 8)
    assert kc == 64 // 16
    # AVX-512 sizes its own tiles (32 registers, 16-lane vectors); its L2 refills L1 a line
    # per cycle, so a tile of at least 3 positions may stream its weights in one pass (on Zen
    # 5 one pass, cg=4 x wb=6, ran as fast as passes of 2-16 blocks: 0.213 vs 0.214-0.216 ms)
    cg, rows, wb, rfirst, kc = _plan(AVX512, 512, 128, 28, 1, 16)
    assert not rfirst
    assert kc < 512 // 16 or wb * 0.75 * AVX512.l2_bytes_per_cycle() >= 2 * 64


ZEN4 = CPUFeatures("x86", 512, 32, 4, 2, 32 << 10, 1 << 20, split_512=True)


@pytest.mark.parametrize("C, O, H, s, wb", [
    (32, 64, 112, 1, 8),  # MobileNet's first 1x1 layer: 8 positions divide the 112-wide row
    (128, 256, 28, 1, 7),  # 28-wide rows: 4 tiles of 7 rather than 3 of 8 and a tail of 4
    (512, 512, 14, 1, 7),
    (256, 512, 56, 2, 7),  # ResNet-50's strided projection: 28-wide output rows
])
def test_split_512_cores_take_one_channel_block_per_tile(C, O, H, s, wb):
    # On Zen 4 (one 512-bit FMA a cycle whatever the tile) MobileNet's 1x1 layers ran 4-16%
    # faster with one 16-channel block x 7-8 positions than with the model's 4 blocks x 4
    # positions (one thread, each knob point timed alone); the same layers on full-width
    # AVX-512 keep the wider channel groups the model picks there
    cg, rows, got_wb, rfirst, kc = _plan(ZEN4, C, O, H, s, 16)
    assert (cg, got_wb, rfirst) == (1, wb, 0)
    assert _plan(AVX512, C, O, H, s, 16)[0] > 1


def test_split_512_stem_read_through_its_padding_takes_one_block():
    # MobileNet's stem (3 -> 32 channels, 3x3 stride 2, 224 -> 112, read through its padding):
    # on Zen 4 one block x 7-8 positions ran 1.55-1.75x faster than 2 blocks x 8
    stem = dict(N=1, OCC=2, OB=16, OH=112, OW=112, lanes=16, red_bytes=3 * 9 * 4,
                split_ic=False, in_bytes=3 * 224 * 224 * 4, icb=1, conditional=True)
    cg, rows, wb, rfirst, kc = cpu_nchwc._plan(ZEN4, cpu.Knobs(), **stem)
    assert (cg, wb) == (1, 8)
    assert cpu_nchwc._plan(AVX512, cpu.Knobs(), **stem)[0] == 2
    # the same layer on a padded copy (no conditional loads) keeps the model's choice
    plain = dict(stem, conditional=False)
    assert cpu_nchwc._plan(ZEN4, cpu.Knobs(), **plain) == cpu_nchwc._plan(AVX512, cpu.Knobs(),
                                                                           **plain)


def test_knob_space_offers_kc_and_defaults_are_deterministic():
    spaces = []
    for _ in range(2):
        knobs = cpu.Knobs()
        _plan_with(knobs)
        spaces.append((knobs.space, knobs.chosen))
    assert spaces[0] == spaces[1]
    names = [n for n, _, _ in spaces[0][0]]
    assert names == ["cg", "rows", "wb", "rfirst", "kc"]
    kc_cands = dict((n, c) for n, c, _ in spaces[0][0])["kc"]
    assert kc_cands == [1, 2, 4, 8, 16, 32]


def _plan_with(knobs):
    return cpu_nchwc._plan(AVX2, knobs, N=1, OCC=8, OB=16, OH=28, OW=28, lanes=8,
                           red_bytes=512 * 4, split_ic=True, in_bytes=512 * 28 * 28 * 4,
                           icb=32)


@pytest.mark.parametrize("target", ["llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell"])
def test_other_isas_build_1x1_in_passes(target):
    """AVX-512 and AVX2 builds of a 1x1 layer in passes use the template and their own
    vector registers (compiled only: the host may lack AVX-512)."""
    func, params, _ = _conv_1x1(1, 256, 64, 14, 14, 1)
    with cpu.override_knobs({"cg": 2, "rows": 7, "wb": 4, "rfirst": 0, "kc": 2}), \
            relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(func), target=target, params=params)
    (kern,) = [v for v in lib.kernels.values() if v.anchor == "nn.contrib_conv2d_NCHWc"]
    assert kern.schedule_rule == "conv2d_NCHWc"
    asm = lib.get_source("asm")
    reg = "zmm" if "avx512" in target else "ymm"
    assert re.search(rf"vfmadd\d+ps\s[^\n]*%{reg}\d+", asm), f"no {reg} FMA in the kernel"


def test_avx2_plan_overlaps_input_reads_and_keeps_one_pass_tiles():
    """On 256-bit x86 the input's re-reads stream in under the FMAs (a roofline, not a sum):
    MobileNet's 512->512 1x1 layer on 14x14 takes one 16-channel block x 4-5 positions with
    its 32 KB of weights in one pass (measured on one Zen 3 core, 2026-12-07: 91.7 GFLOP/s,
    against 80.8 for the two blocks x 2 positions in passes the sum chose). The 1000-class
    layer on 8-channel blocks keeps its 5-block group: a one-vector tile broadcasts once per
    FMA and ran at 56% of peak. AVX-512 targets and Zen 1 keep the sum (their multi-block
    tiles)."""
    import tvm

    from relay_tvm.backend.schedule.cpu_model import cpu_features

    zen3 = cpu_features(tvm.target.Target({"kind": "llvm", "mcpu": "znver3"}))
    assert zen3.overlapped_reads and zen3.load_ports == 1.5
    cg, rows, wb, rfirst, kc = _plan(zen3, 512, 512, 14, 1, 8)
    assert (cg, rfirst, kc) == (1, 0, 512 // 16) and wb in (4, 5)
    plan = dict(N=1, lanes=8, red_bytes=512 * 4, split_ic=True, in_bytes=512 * 13 * 13 * 4,
                icb=32, pointwise=True)
    assert cpu_nchwc._plan(zen3, cpu.Knobs(), OCC=125, OB=8, OH=13, OW=13, **plan)[0] == 5
    skx = cpu_features(tvm.target.Target({"kind": "llvm", "mcpu": "skylake-avx512"}))
    assert not skx.overlapped_reads
    assert _plan(skx, 512, 512, 14, 1, 16)[0] > 1
    # Zen 1's 128-bit units: its knob sweep found the sum's two-block plan best
    zen1 = cpu_features(tvm.target.Target({"kind": "llvm", "mcpu": "znver1"}))
    assert not zen1.overlapped_reads and zen1.load_ports == 2
    assert _plan(zen1, 512, 512, 14, 1, 8)[0] == 2

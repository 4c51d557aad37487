"""The analytic CPU model behind the untuned templates, and the knobs that tuning varies.

Expected tiles are worked out by hand from the register budget (accumulators + loaded vectors +
one broadcast <= registers) and the FMA latency x pipes = 8 independent accumulators."""

import numpy as np
import pytest
from backend_util import assert_same, rand, run_both

import relay_tvm as relay
from relay_tvm.backend.schedule import cpu
from relay_tvm.backend.schedule.cpu_model import (
    CPUFeatures,
    cpu_features,
    divisors,
    register_tile,
    tile_registers,
)
from relay_tvm.backend.target import make_target

AVX2 = CPUFeatures("x86", 256, 16, 4, 2, 32 << 10, 512 << 10)
AVX512 = CPUFeatures("x86", 512, 32, 4, 2, 32 << 10, 1 << 20)


@pytest.mark.parametrize("target, bits, regs", [
    ("llvm -mcpu=haswell", 256, 16),
    ("llvm -mcpu=znver3", 256, 16),
    ("llvm -mcpu=skylake-avx512", 512, 32),
    ("llvm -mcpu=icelake-server", 512, 32),
    ("llvm -mcpu=skylake-avx512 -mattr=-avx512f", 256, 16),
    ("llvm -mcpu=haswell -mattr=+avx512f", 512, 32),
    # AVX-512 CPUs by names a list of CPU names missed (skx: LLVM's alias of skylake-avx512):
    # they got the 16-register AVX2 tiles; the features are now LLVM's
    ("llvm -mcpu=skx", 512, 32),
    ("llvm -mcpu=diamondrapids", 512, 32),
    ("llvm -mcpu=alderlake", 256, 16),
    ("llvm -mtriple=aarch64-linux-gnu", 128, 32),
])
def test_features_from_the_target(target, bits, regs):
    f = cpu_features(make_target(target))
    assert (f.vector_bits, f.vector_registers) == (bits, regs)
    assert f.lanes(32) == bits // 32


@pytest.mark.parametrize("mcpu, split", [
    ("znver4", True), ("znver5", False), ("skylake-avx512", False), ("haswell", False),
])
def test_split_512_only_where_512_bit_operations_run_as_halves(mcpu, split):
    # Zen 4 executes a 512-bit FMA on both of its 256-bit pipes; Zen 5 and Intel's AVX-512
    # cores have full-width units, and AVX2 code has no 512-bit operations
    assert cpu_features(make_target(f"llvm -mcpu={mcpu}")).split_512 is split


@pytest.mark.parametrize("feats, m_choices, v_choices, expected", [
    # AVX2, 28 columns, 16-channel blocks (2 ymm): (4, 2) = 8 acc + 2 + 1 = 11 registers;
    # (7, 2) would need 17, (4, 4) 21
    (AVX2, divisors(28, 16), [2, 4, 8], (4, 2)),
    # AVX2, 7 columns: (7, 2) needs 17 registers; one column x 8 vectors needs 8 + 1 (each
    # weight vector is an FMA memory operand)
    (AVX2, divisors(7, 16), [2, 4, 8], (1, 8)),
    # AVX-512, 56 columns: (4, 4) = 16 acc, 21 registers, 2 FMAs per load beats (14, 2)
    (AVX512, divisors(56, 16), [1, 2, 4], (4, 4)),
    # GEMV (one row): 8 accumulators hide the latency
    (AVX2, [1], list(range(1, 9)), (1, 8)),
])
def test_register_tile_by_hand(feats, m_choices, v_choices, expected):
    m, v = register_tile(feats, m_choices, v_choices)
    assert (m, v) == expected
    assert tile_registers(m, v) <= feats.vector_registers


def test_register_tile_never_spills():
    for feats in (AVX2, AVX512):
        for n in (7, 14, 28, 56, 112, 13):
            m, v = register_tile(feats, divisors(n, 16), [1, 2, 3, 4])
            assert tile_registers(m, v) <= feats.vector_registers
            assert n % m == 0


def test_knobs_record_the_space_and_answer_fixed_values():
    k = cpu.Knobs()
    assert k.pick("wb", [1, 2, 4], 2) == 2
    assert k.space == [("wb", [1, 2, 4], 2)] and k.chosen == {"wb": 2}
    k = cpu.Knobs(fixed={"wb": 4})
    assert k.pick("wb", [1, 2, 4], 2) == 4
    with pytest.raises(cpu.NotApplicable, match="wb=3"):
        cpu.Knobs(fixed={"wb": 3}).pick("wb", [1, 2, 4], 2)


def _conv_block(C, O, H, k, s, p):
    x = relay.var("x", shape=(1, C, H, H))
    w = relay.var("w", shape=(O, C, k, k))
    b = relay.var("b", shape=(O,))
    y = relay.nn.relu(relay.nn.bias_add(
        relay.nn.conv2d(x, w, strides=(s, s), padding=(p, p), channels=O, kernel_size=(k, k)), b))
    params = {"w": rand((O, C, k, k), seed=1) * 0.1, "b": rand((O,), seed=2)}
    return relay.Function([x, w, b], y), params, [rand((1, C, H, H))]


def _np_conv(x, w, b, s, p):
    n, c, h, _ = x.shape
    o, _, k, _ = w.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (p, p), (p, p)))
    oh = (h + 2 * p - k) // s + 1
    out = np.zeros((n, o, oh, oh))
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + s * oh:s, j:j + s * oh:s]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype("float64"))
    return np.maximum(out + b[None, :, None, None], 0).astype("float32")


@pytest.mark.parametrize("knobs", [
    {"wb": 1, "cg": 1, "rfirst": 0},
    {"wb": 2, "cg": 2, "rfirst": 1},
    {"wb": 7, "cg": 1, "rfirst": 1},
    {"wb": 1, "cg": 4, "rfirst": 1},
])
def test_nchwc_knobs_change_the_schedule_not_the_result(knobs):
    func, params, args = _conv_block(64, 64, 14, 3, 1, 1)
    mod = relay.IRModule.from_expr(func)
    # a stride-1 3x3 layer: keep it direct (AlterOpLayout would make it Winograd)
    no_winograd = {"relay.AlterOpLayout.winograd": "never"}
    with cpu.override_knobs(knobs), relay.transform.PassContext(opt_level=3, config=no_winograd):
        lib = relay.build(mod, target="llvm", params=params)
        got = relay.create_executor("graph", mod, target="llvm", params=params).evaluate()(
            *args).numpy()
    (k,) = [v for v in lib.kernels.values() if v.anchor == "nn.contrib_conv2d_NCHWc"]
    assert k.schedule_rule == "conv2d_NCHWc"
    ref = _np_conv(args[0], params["w"], params["b"], 1, 1)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_knobs_that_do_not_fit_fall_back_to_the_generic_schedule():
    func, params, args = _conv_block(16, 16, 6, 3, 1, 1)
    # a tile wider than the 16 the template allows (any width up to 16 fits: with a tail)
    with cpu.override_knobs({"wb": 17}), relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(func), target="llvm", params=params)
    (k,) = [v for v in lib.kernels.values() if v.anchor == "nn.contrib_conv2d_NCHWc"]
    assert k.schedule_rule == "generic"


@pytest.mark.parametrize("knobs", [{"nb": 8, "mb": 1}, {"nb": 16, "mb": 4}, {"nb": 24, "mb": 2}])
def test_dense_knobs(knobs):
    x = relay.var("x", shape=(8, 40))
    w = relay.var("w", shape=(48, 40))
    f = relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w)))
    xv, wv = rand((8, 40)), rand((48, 40), seed=4)
    with cpu.override_knobs(knobs):
        ref, got = run_both(f, [xv], 2, params={"w": wv})
    np.testing.assert_allclose(got, np.maximum(xv.astype("float64") @ wv.T, 0), rtol=1e-4,
                               atol=1e-4)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("C, H, s", [(32, 14, 1), (64, 15, 2), (16, 7, 1)])
def test_depthwise_nchwc_template(C, H, s):
    x = relay.var("x", shape=(1, C, H, H))
    w = relay.var("w", shape=(C, 1, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, strides=(s, s), padding=(1, 1), groups=C,
                                      channels=C, kernel_size=(3, 3)))
    f = relay.Function([x, w], y)
    params = {"w": rand((C, 1, 3, 3), seed=5)}
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(f), target="llvm", params=params)
    rules = {v.anchor: v.schedule_rule for v in lib.kernels.values()}
    assert rules["nn.contrib_depthwise_conv2d_NCHWc"] == "depthwise_conv2d_NCHWc"
    ref, got = run_both(f, [rand((1, C, H, H))], 3, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


def _host_has(flag):
    with open("/proc/cpuinfo", encoding="ascii") as f:
        return flag in f.read().split()


@pytest.mark.parametrize("mcpu, flag", [("haswell", "avx2"), ("skylake-avx512", "avx512f")])
def test_other_isa_builds(mcpu, flag):
    """Code for an ISA is built with its own tile sizes; it runs where the host has the ISA
    (an AVX-512 host runs the AVX2 build too), else it is only compiled."""
    func, params, args = _conv_block(32, 32, 14, 3, 1, 1)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(func), target=f"llvm -mcpu={mcpu}",
                          params=params)
    asm = lib.get_lib().inspect_source("asm") if hasattr(lib.get_lib(), "inspect_source") \
        else None
    if asm is not None:
        assert ("zmm" in asm) == (flag == "avx512f")
    if not _host_has(flag):
        pytest.skip(f"compiled only: this host has no {flag}")
    import tvm

    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", args[0])
    gm.run()
    ref = _np_conv(args[0], params["w"], params["b"], 1, 1)
    np.testing.assert_allclose(gm.get_output(0).numpy(), ref, rtol=1e-4, atol=1e-4)

"""Schedule templates are correct on awkward shapes (the graph executor against the reference
interpreter), and are actually chosen for the anchors they target."""

import numpy as np
import pytest
import tvm
from backend_util import assert_same, rand, run_both

import relay_tvm as relay


def _build(func, params=None, opt_level=2):
    with relay.transform.PassContext(opt_level=opt_level):
        return relay.build(relay.IRModule.from_expr(func), target="llvm", params=params)


def _rules(lib):
    """anchor operator -> schedule rule of each kernel"""
    return {v.anchor: v.schedule_rule for v in lib.kernels.values()}


CONV_CASES = [
    # (C, O, H, W, k, stride, pad, dilation)
    (3, 16, 9, 9, 3, 1, 1, 1),
    (4, 20, 13, 11, 3, 2, 1, 1),
    (8, 32, 7, 7, 1, 1, 0, 1),
    (5, 64, 10, 10, 3, 1, 2, 2),
    (2, 12, 6, 15, 5, 3, 2, 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("epilogue", [True, False])
def test_conv2d_template(case, epilogue):
    C, O, H, W, k, s, p, d = case
    x = relay.var("x", shape=(1, C, H, W))
    w = relay.var("w", shape=(O, C, k, k))
    b = relay.var("b", shape=(O,))
    y = relay.nn.conv2d(x, w, strides=(s, s), padding=(p, p), dilation=(d, d))
    if epilogue:
        y = relay.nn.relu(relay.nn.bias_add(y, b))
        params = {"w": rand((O, C, k, k), seed=1), "b": rand((O,), seed=2)}
    else:
        params = {"w": rand((O, C, k, k), seed=1)}
    f = relay.Function([x, w, b] if epilogue else [x, w], y)
    ref, got = run_both(f, [rand((1, C, H, W))], 2, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("O,W,epilogue", [(3, 32, True), (2, 12, False), (3, 20, True)])
def test_conv2d_narrow_output_channels(O, W, epilogue):
    # few output channels (the data gradient of an RGB stem): vectors along the output row
    x = relay.var("x", shape=(2, 6, 9, W))
    w = relay.var("w", shape=(O, 6, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1))
    if epilogue:
        y = relay.nn.relu(y)
    f = relay.Function([x, w], y)
    params = {"w": rand((O, 6, 3, 3), seed=1)}
    ref, got = run_both(f, [rand((2, 6, 9, W))], 2, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)
    assert _rules(_build(f, params, opt_level=0))["nn.conv2d"] == "conv2d"


def test_conv2d_template_is_used_and_weight_packed_once():
    x = relay.var("x", shape=(1, 8, 8, 8))
    w = relay.var("w", shape=(16, 8, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1))
    z = relay.nn.conv2d(relay.nn.relu(x), w, padding=(1, 1))
    f = relay.Function([x, w], relay.add(y, z))
    lib = _build(f, {"w": rand((16, 8, 3, 3))})
    assert "conv2d" in _rules(lib).values()
    # the shared weight is packed once: one parameter holds it, in the packed layout
    params = lib.get_params()
    assert len(params) == 1
    (packed,) = params.values()
    assert packed.shape[-1] in (8, 16) and len(packed.shape) == 5


def test_conv2d_runtime_weight_goes_through_a_packing_kernel():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(16, 4, 3, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1)))
    lib = _build(f)
    assert any(v.anchor == "layout_transform" for v in lib.kernels.values())
    ref, got = run_both(f, [rand((1, 4, 6, 6)), rand((16, 4, 3, 3), seed=3)], 2)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(1, 16, 32), (7, 33, 10), (64, 64, 64), (3, 5, 2, 24, 48)])
def test_dense_template(shape):
    *lead, K, N = shape
    x = relay.var("x", shape=(*lead, K))
    w = relay.var("w", shape=(N, K))
    y = relay.nn.relu(relay.nn.dense(x, w))
    f = relay.Function([x, w], y)
    ref, got = run_both(f, [rand((*lead, K))], 3, params={"w": rand((N, K), seed=1)})
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


def test_dense_template_is_used():
    x = relay.var("x", shape=(16, 32))
    w = relay.var("w", shape=(64, 32))
    lib = _build(relay.Function([x, w], relay.nn.dense(x, w)), {"w": rand((64, 32))})
    assert _rules(lib)["nn.dense"] == "dense"


@pytest.mark.parametrize("target", ["llvm", "llvm -mcpu=haswell", "llvm -mcpu=skylake-avx512"])
@pytest.mark.parametrize("N, K", [(10, 64), (17, 128), (1001, 256), (3, 96), (1000, 512),
                                  (1008, 128), (1024, 64)])
def test_batch1_dense_of_any_width_is_dot_products(N, K, target):
    """Batch-1 dense whose width allows no packed row tile of FMA latency x pipes vectors (10,
    1000, 1001 or 1008 classes; 1024 keeps the packed tile): vectorized dot products in the weight's own layout with a register-tiled rfactor
    (the packed template needs a width dividing N, and 1001 columns ran scalar: 2.2 ms against
    0.12 ms at K=2048 on one Zen 5 core), bias and ReLU fused; equal to NumPy."""
    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.target import make_target

    lanes = cpu_features(make_target(target)).lanes(32)
    x = relay.var("x", shape=(1, K))
    w = relay.var("w", shape=(N, K))
    b = relay.var("b", shape=(N,))
    f = relay.Function([x, w, b], relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b)))
    xv, wv, bv = rand((1, K)), rand((N, K), seed=2), rand((N,), seed=3)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(f), target=target,
                          params={"w": wv, "b": bv})
    (k,) = [v for v in lib.kernels.values() if v.anchor == "nn.dense"]
    assert k.schedule_rule == "dense"
    # the dot-product form (an rfactor buffer of per-lane partial sums) exactly when no packed
    # row tile of 8 accumulators (FMA latency x pipes) divides the width
    vmax = max([v for v in range(1, 9) if N % (v * lanes) == 0], default=0)
    assert ("T_matmul_NT_rf_local" in str(k.prim_func)) == (vmax < 8)
    from relay_tvm.backend.isa import host_isa

    flags = host_isa()[1] or ""
    if target == "llvm" or ("haswell" in target and "avx2" in flags) or "avx512f" in flags:
        gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
        gm.set_input("x", xv)
        gm.run()
        ref = np.maximum(xv.astype("float64") @ wv.T.astype("float64") + bv, 0)
        # float32 sums of K products: errors relative to the outputs' scale
        np.testing.assert_allclose(gm.get_output(0).numpy(), ref, rtol=1e-5,
                                   atol=1e-5 * float(np.abs(ref).max()))


@pytest.mark.parametrize("tb", [False, True])
def test_matmul_template(tb):
    x = relay.var("x", shape=(12, 20))
    w = relay.var("w", shape=(32, 20) if tb else (20, 32))
    f = relay.Function([x, w], relay.nn.matmul(x, w, transpose_b=tb))
    ref, got = run_both(f, [rand((12, 20)), rand((32, 20) if tb else (20, 32), seed=1)], 3)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tb", [False, True])
def test_batch_matmul_template(tb):
    x = relay.var("x", shape=(3, 9, 16))
    y = relay.var("y", shape=(3, 32, 16) if tb else (3, 16, 32))
    f = relay.Function([x, y], relay.nn.batch_matmul(x, y, transpose_b=tb))
    ref, got = run_both(f, [rand((3, 9, 16)), rand((3, 32, 16) if tb else (3, 16, 32), seed=1)], 3)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_pool_and_reductions(layout):
    shape = (1, 5, 9, 9) if layout == "NCHW" else (1, 9, 9, 5)
    x = relay.var("x", shape=shape)
    p = relay.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout=layout)
    a = relay.nn.avg_pool2d(x, pool_size=(2, 2), layout=layout)
    g = relay.nn.global_avg_pool2d(x, layout=layout)
    f = relay.Function([x], relay.Tuple([p, a, g, relay.sum(x, axis=[1]),
                                         relay.max(x, axis=[0, 2], keepdims=True)]))
    ref, got = run_both(f, [rand(shape)], 3)
    assert_same(ref, got, rtol=1e-5, atol=1e-5)


def test_softmax_and_injective():
    x = relay.var("x", shape=(4, 37))
    y = relay.nn.softmax(relay.transpose(relay.reshape(x, (37, 4)), (1, 0)))
    f = relay.Function([x], relay.Tuple([y, relay.strided_slice(x, (0, 3), (4, 30), (1, 2))]))
    ref, got = run_both(f, [rand((4, 37))], 3)
    assert_same(ref, got, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("C, H, W, s, mult",
                         [(6, 13, 11, 1, 1), (8, 16, 16, 2, 1), (4, 9, 9, 1, 2)])
def test_depthwise_and_grouped_conv_window_rule(C, H, W, s, mult):
    x = relay.var("x", shape=(1, C, H, W))
    w = relay.var("w", shape=(C * mult, 1, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, strides=(s, s), padding=(1, 1), groups=C))
    f = relay.Function([x, w], y)
    params = {"w": rand((C * mult, 1, 3, 3), seed=1)}
    assert _rules(_build(f, params))["nn.conv2d"] == "conv2d"
    ref, got = run_both(f, [rand((1, C, H, W))], 3, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_window_rule_used(kind):
    x = relay.var("x", shape=(1, 3, 17, 16))
    fn = relay.nn.max_pool2d if kind == "max" else relay.nn.avg_pool2d
    f = relay.Function([x], fn(x, pool_size=(3, 3), strides=(1, 1), padding=(1, 1)))
    assert _rules(_build(f))[f"nn.{kind}_pool2d"] == "pool"
    ref, got = run_both(f, [rand((1, 3, 17, 16))], 3)
    assert_same(ref, got, rtol=1e-5, atol=1e-5)


def test_residual_block_with_batch_norm():
    # conv + BN + relu, conv + BN, + identity shortcut, relu: the epilogues of the conv
    # template read a second tensor (the shortcut) and per-channel scale/shift
    C = 16
    x = relay.var("x", shape=(1, C, 8, 8))
    params = {}
    rng = np.random.default_rng(0)

    def conv_bn(v, name, relu):
        w = relay.var(name + "_w", shape=(C, C, 3, 3))
        params[w.name_hint] = (rng.standard_normal((C, C, 3, 3)) * 0.2).astype("float32")
        bn = []
        for part in ("g", "b", "m", "v"):
            p = relay.var(f"{name}_{part}", shape=(C,))
            val = rng.standard_normal(C).astype("float32") * 0.1
            params[p.name_hint] = (1 + np.abs(val)) if part in ("g", "v") else val
            bn.append(p)
        y = relay.nn.batch_norm(relay.nn.conv2d(v, w, padding=(1, 1)), *bn)[0]
        return relay.nn.relu(y) if relu else y

    y = relay.nn.relu(relay.add(conv_bn(conv_bn(x, "c1", True), "c2", False), x))
    f = relay.Function(relay.analysis.free_vars(y), y)
    lib = _build(f, params)
    assert "conv2d" in _rules(lib).values()
    ref, got = run_both(f, [rand((1, C, 8, 8))], 2, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


def test_dense_bias_tanh_epilogue_two_consumers():
    x = relay.var("x", shape=(5, 24))
    w = relay.var("w", shape=(32, 24))
    b = relay.var("b", shape=(32,))
    d = relay.nn.bias_add(relay.nn.dense(x, w), b)
    f = relay.Function([x, w, b], relay.Tuple([relay.tanh(d), relay.sigmoid(d)]))
    params = {"w": rand((32, 24), seed=1), "b": rand((32,), seed=2)}
    ref, got = run_both(f, [rand((5, 24))], 3, params=params)
    assert_same(ref, got, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, out_dtype", [("int8", "int32"), ("float16", "float16"),
                                              ("float64", "float64")])
def test_templates_with_other_dtypes(dtype, out_dtype):
    x = relay.var("x", shape=(1, 4, 6, 6), dtype=dtype)
    w = relay.var("w", shape=(16, 4, 3, 3), dtype=dtype)
    c = relay.nn.conv2d(x, w, padding=(1, 1), out_dtype=out_dtype)
    a = relay.var("a", shape=(5, 12), dtype=dtype)
    b = relay.var("b", shape=(32, 12), dtype=dtype)
    d = relay.nn.dense(a, b, out_dtype=out_dtype)
    f = relay.Function([x, w, a, b], relay.Tuple([c, d]))
    params = {"w": rand((16, 4, 3, 3), dtype, seed=1), "b": rand((32, 12), dtype, seed=2)}
    lib = _build(f, params)
    assert set(_rules(lib).values()) >= {"conv2d", "dense"}
    tol = 1e-2 if dtype == "float16" else 1e-6
    ref, got = run_both(f, [rand((1, 4, 6, 6), dtype), rand((5, 12), dtype, seed=3)], 2,
                        params=params)
    assert_same(ref, got, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CONV_CASES[:4])
def test_conv2d_nhwc_template(case):
    C, O, H, W, k, s, p, d = case
    x = relay.var("x", shape=(1, H, W, C))
    w = relay.var("w", shape=(k, k, C, O))
    y = relay.nn.relu(relay.nn.conv2d(x, w, strides=(s, s), padding=(p, p), dilation=(d, d),
                                      data_layout="NHWC", kernel_layout="HWIO"))
    f = relay.Function([x, w], y)
    params = {"w": rand((k, k, C, O), seed=1)}
    assert _rules(_build(f, params))["nn.conv2d"] == "conv2d"
    ref, got = run_both(f, [rand((1, H, W, C))], 3, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("axis, rule", [([1], "reduce"), ([0, 2], "reduce"), ([3], "generic"),
                                        ([1, 3], "generic")])
def test_reduction_rule(axis, rule):
    x = relay.var("x", shape=(2, 8, 5, 6))
    f = relay.Function([x], relay.Tuple([relay.sum(x, axis=axis),
                                         relay.max(x, axis=axis, keepdims=True)]))
    lib = _build(f, opt_level=0)
    assert {v.schedule_rule for v in lib.kernels.values()} == {rule}
    ref, got = run_both(f, [rand((2, 8, 5, 6))], 0)
    assert_same(ref, got, rtol=1e-5, atol=1e-5)
    g = relay.Function([x], relay.argmax(x, axis=axis))
    ref, got = run_both(g, [rand((2, 8, 5, 6))], 3)
    assert_same(ref, got)


@pytest.mark.parametrize("axis", [[1], [3], None])
def test_bool_reductions(axis):
    x = relay.var("x", shape=(2, 8, 5, 16), dtype="bool")
    f = relay.Function([x], relay.Tuple([relay.all(x, axis=axis), relay.any(x, axis=axis),
                                         relay.logical_not(x)]))
    ref, got = run_both(f, [rand((2, 8, 5, 16), "bool")], 3)
    assert_same(ref, got)



@pytest.mark.skipif(not hasattr(relay.transform, "AlterOpLayout"),
                    reason="AlterOpLayout (which makes contrib_conv2d_NCHWc) is not available")
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_nchwc_after_alter_op_layout(case):
    C, O, H, W, k, s, p, d = case
    x = relay.var("x", shape=(1, C, H, W))
    w = relay.var("w", shape=(O, C, k, k))
    b = relay.var("b", shape=(O,))
    y = relay.nn.relu(relay.nn.bias_add(
        relay.nn.conv2d(x, w, strides=(s, s), padding=(p, p), dilation=(d, d)), b))
    f = relay.Function([x, w, b], y)
    params = {"w": rand((O, C, k, k), seed=1), "b": rand((O,), seed=2)}
    rules = _rules(_build(f, params, opt_level=3))
    if "nn.contrib_conv2d_NCHWc" in rules:
        assert rules["nn.contrib_conv2d_NCHWc"] == "conv2d_NCHWc"
    ref, got = run_both(f, [rand((1, C, H, W))], 3, params=params)
    assert_same(ref, got, rtol=1e-4, atol=1e-4)


def test_inline_producers_one_round_per_chain():
    """The generic rule inlines a chain of elementwise blocks in one round over the blocks (then
    one more that finds nothing), after one pass that sizes the fully inlined expressions:
    listing every block again after each inlining made a fused group of ~420 blocks take 5 s.
    The inlined function computes what the chain does."""
    from tvm import te

    from relay_tvm.backend.schedule import generic

    n = 40
    x = te.placeholder((64,), name="x")
    y = x

    def step(prev, i):
        return te.compute((64,), lambda j: prev[j] * 0.5 + float(i), name=f"s{i}")

    for i in range(n):
        y = step(y, i)
    sch = tvm.s_tir.Schedule(te.create_prim_func([x, y]))

    class Counting:
        def __init__(self, s):
            self.s, self.lists = s, 0

        def get_child_blocks(self, b):
            self.lists += 1
            return self.s.get_child_blocks(b)

        def __getattr__(self, name):
            return getattr(self.s, name)

    counting = Counting(sch)
    generic.inline_producers(counting)
    assert counting.lists == 3
    assert len(sch.get_child_blocks(sch.get_sblock("root"))) == 1
    xv = np.random.default_rng(0).standard_normal(64).astype("float32")
    ref = xv.copy()
    for i in range(n):
        ref = ref * np.float32(0.5) + np.float32(i)
    f = tvm.compile(sch.mod, target="llvm")
    out = tvm.runtime.tensor(np.zeros(64, "float32"))
    f(tvm.runtime.tensor(xv), out)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("op", ["tanh", "fast_tanh", "fast_erf"])
def test_deep_chains_of_expanding_ops_stay_small(op):
    """A fused chain of operators that read their input several times once expanded (LLVM's
    tanh: 4 times; topi's fast_tanh / fast_erf polynomials: ~10) must not be inlined into one
    expression tree of ~4^K nodes (7 levels of tanh took 9.6 s in TVM's LowerIntrin, 9 never
    finished; fast_tanh 5 levels over two minutes): the generic rule keeps an intermediate stage
    once a consumer's expanded expression would pass MAX_INLINED_EXPR_NODES. Values against
    NumPy in float64."""
    import math

    from tvm import te, topi

    from relay_tvm.backend.schedule import generic

    n = 12
    x = te.placeholder((70,), name="x")
    y = x
    for _ in range(n):
        y = topi.multiply(getattr(topi, op)(y), 1.5)
    sch = tvm.s_tir.Schedule(te.create_prim_func([x, y]))
    generic.cpu_fallback(sch)
    blocks = sch.get_child_blocks(sch.get_sblock("root"))
    assert 1 < len(blocks) < 2 * n  # inlined where it stays small, not everywhere
    for b in blocks:
        value = generic._store_value(sch, b)
        assert generic.expanded_size(value) <= generic.MAX_INLINED_EXPR_NODES
    f = tvm.compile(sch.mod, target="llvm")
    xv = np.random.default_rng(0).uniform(-2, 2, 70).astype("float32")
    out = tvm.runtime.tensor(np.zeros(70, "float32"))
    f(tvm.runtime.tensor(xv), out)
    ref = xv.astype("float64")
    fn = np.vectorize(math.erf) if op == "fast_erf" else np.tanh
    for _ in range(n):
        ref = fn(ref) * 1.5
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=2e-6)


def test_expanded_size_counts_intrinsic_expansion():
    """tanh's argument counts 4 times (LLVM's lowering reads it in a select and two exponentials);
    a read of a buffer being inlined counts as that buffer's expression."""
    from tvm import te

    from relay_tvm.backend.schedule import generic

    x = te.placeholder((8,), name="x")
    y = te.compute((8,), lambda i: te.tanh(x[i] * 2.0) + x[i], name="y")
    sch = tvm.s_tir.Schedule(te.create_prim_func([x, y]))
    value = generic._store_value(sch, sch.get_sblock("y"))
    # add(tanh(mul(x[i], 2)), x[i]): 1 + (1 + 4 * (1 + 2 + 1)) + 2; each load is 1 + its index
    assert generic.expanded_size(value) == 1 + (1 + 4 * (1 + 2 + 1)) + 2
    buf = sch.get(sch.get_sblock("y")).reads[0]
    buf = getattr(buf, "buffer", None) or buf.source
    assert generic.expanded_size(value, {buf: 10}) == 1 + (1 + 4 * (1 + 10 + 1)) + 10


@pytest.mark.parametrize("name", ["cpu", "cpu_nchwc", "winograd", "cpu_int", "cpu_model",
                                  "generic"])
def test_each_schedule_module_imports_first(name):
    """``import relay_tvm.backend.schedule.cpu_nchwc`` as a process's first import failed on a
    circular import (cpu_nchwc -> cpu -> winograd -> a name of the half-run cpu_nchwc)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", f"import relay_tvm.backend.schedule.{name} as m; "
                        f"print(m.__name__)"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == f"relay_tvm.backend.schedule.{name}"

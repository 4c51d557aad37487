"""relay.quantize building blocks against NumPy: simulated_quantize, qconfig, the KL-divergence
and percentile thresholds, fixed-point multiplication, stop_fusion."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError, TypeInferenceError
from relay_tvm.quantize import QAnnotateKind, kl_divergence
from relay_tvm.quantize._calibrate import _find_scale_by_percentile
from relay_tvm.quantize._realize import fixed_point_multiplier_shift, fixed_point_multiply


def _sq_numpy(x, scale, lo, hi):
    # np.round ties to even; the reference applies the definition step by step in float32
    q = np.clip(x / np.float32(scale), lo, hi)
    return (np.round(q) * np.float32(scale)).astype("float32")


def _run_sq(x, scale, lo, hi, kind, executor):
    v = relay.var("x", shape=x.shape)
    y = relay.quantize.simulated_quantize(v, relay.const(scale, "float32"),
                                          relay.const(lo, "float32"), relay.const(hi, "float32"),
                                          kind=kind)
    mod = relay.IRModule.from_expr(relay.Function([v], y))
    return relay.create_executor(executor, mod=mod).evaluate()(x).numpy()


@pytest.mark.parametrize("executor", ["debug", "graph"])
def test_simulated_quantize_rounding_and_clipping(executor):
    scale = 0.25
    # ties at k + 0.5 steps (0.125 = 0.5 step, 0.375 = 1.5 steps, -0.625 = -2.5 steps) round to
    # even; values past +-127 steps clip to +-127 steps
    x = np.array([[0.125, 0.375, -0.625, 0.1, -0.13, 31.75, 40.0, -100.0, 0.0, 31.8]],
                 "float32")
    out = _run_sq(x, scale, -127.0, 127.0, QAnnotateKind.INPUT, executor)
    np.testing.assert_array_equal(out, _sq_numpy(x, scale, -127.0, 127.0))
    np.testing.assert_array_equal(out[0, :3], [0.0, 0.5, -0.5])
    np.testing.assert_array_equal(out[0, 5:8], [31.75, 31.75, -31.75])


@pytest.mark.parametrize("executor", ["debug", "graph"])
def test_simulated_quantize_random_and_identity(executor):
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, (2, 3, 5)).astype("float32")
    out = _run_sq(x, 0.05, -7.0, 7.0, QAnnotateKind.WEIGHT, executor)
    np.testing.assert_array_equal(out, _sq_numpy(x, 0.05, -7.0, 7.0))
    assert np.unique(np.round(out / np.float32(0.05))).size <= 15
    ident = _run_sq(x, 0.05, -7.0, 7.0, QAnnotateKind.IDENTITY, executor)
    np.testing.assert_array_equal(ident, x)


def test_simulated_quantize_type_errors():
    x = relay.var("x", shape=(3,))
    bad = relay.quantize.simulated_quantize(x, relay.const(np.ones(2, "float32")),
                                            relay.const(-1.0), relay.const(1.0), kind=1)
    with pytest.raises(TypeInferenceError, match=r"dom_scale must broadcast to the data's "
                       r"shape \(3,\), got \(2,\)"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], bad)))
    grow = relay.quantize.simulated_quantize(x, relay.const(np.ones((2, 1), "float32")),
                                             relay.const(-1.0), relay.const(1.0), kind=1)
    with pytest.raises(TypeInferenceError, match="must broadcast"):  # would change the shape
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], grow)))
    ints = relay.quantize.simulated_quantize(x, relay.const(np.ones(3, "int32")),
                                             relay.const(-1.0), relay.const(1.0), kind=1)
    with pytest.raises(TypeInferenceError, match="dom_scale must be a float32 scalar"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], ints)))
    s = relay.var("s", shape=())
    scalar = relay.quantize.simulated_quantize(s, relay.const(1.0), relay.const(-1.0),
                                               relay.const(1.0), kind=1)
    with pytest.raises(TypeInferenceError, match="at least one dimension"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([s], scalar)))


@pytest.mark.parametrize("executor", ["debug", "graph"])
def test_simulated_quantize_per_channel_scale(executor):
    # weight_scale="channel_max": one step per output channel, broadcasting over the kernel
    x = np.random.default_rng(3).normal(0, 2, (3, 2, 2, 2)).astype("float32")
    scale = np.array([0.5, 0.05, 0.01], "float32").reshape(3, 1, 1, 1)
    v = relay.var("x", shape=x.shape)
    y = relay.quantize.simulated_quantize(v, relay.const(scale), relay.const(-127.0),
                                          relay.const(127.0), kind=QAnnotateKind.WEIGHT)
    mod = relay.IRModule.from_expr(relay.Function([v], y))
    out = relay.create_executor(executor, mod=mod).evaluate()(x).numpy()
    want = np.round(np.clip(x / scale, -127, 127)) * scale
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=0)
    assert np.abs(out[2]).max() == pytest.approx(1.27)  # channel 2 saturates at 127 steps


def test_simulated_quantize_infers_scale_variable_types():
    x = relay.var("x", shape=(4,))
    d, lo, hi = relay.var("d"), relay.var("lo"), relay.var("hi")
    y = relay.quantize.simulated_quantize(x, d, lo, hi, kind=1)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, d, lo, hi], y)))
    assert [str(p.checked_type) for p in mod["main"].params[1:]] == ["float32"] * 3


def test_qconfig_scoping_defaults_and_errors():
    cur = relay.quantize.current_qconfig()
    assert (cur.nbit_input, cur.dtype_weight, cur.global_scale) == (8, "int8", 8.0)
    assert cur.skip_conv_layers == [0] and cur.calibrate_mode == "global_scale"
    with relay.quantize.qconfig(global_scale=4.0, skip_conv_layers=None) as outer:
        assert relay.quantize.current_qconfig() is outer
        with relay.quantize.qconfig(calibrate_mode="percentile") as inner:
            assert relay.quantize.current_qconfig() is inner
            assert inner.global_scale == 8.0  # fields not given take the defaults
        assert relay.quantize.current_qconfig().global_scale == 4.0
    assert relay.quantize.current_qconfig().global_scale == 8.0
    with pytest.raises(AttributeError, match="cannot set attribute"):
        cur.global_scale = 2.0
    with pytest.raises(RelayError, match="calibrate_mode='entropy' is not one of"):
        relay.quantize.qconfig(calibrate_mode="entropy")
    with pytest.raises(RelayError, match="unknown field"):
        relay.quantize.qconfig(nbits=8)
    # a new-user trial: a misspelt field named no field it could have meant
    with pytest.raises(RelayError, match=r"^qconfig: unknown field 'paritition_conversions' "
                       r"\(did you mean 'partition_conversions'\?\); expected one of "
                       r"nbit_input, .*, partition_conversions$"):
        relay.quantize.qconfig(paritition_conversions="enabled")
    with pytest.raises(RelayError, match=r"^qconfig: unknown fields 'Skip_dense_layer' \(did "
                       r"you mean 'skip_dense_layer'\?\), 'zzz'; expected one of "):
        relay.quantize.qconfig(zzz=1, Skip_dense_layer=False)
    with pytest.raises(RelayError, match=r"^qconfig: rounding='upward' is not one of UPWARD, "
                       r"TONEAREST \(did you mean 'UPWARD'\?\)$"):
        relay.quantize.qconfig(rounding="upward")
    with pytest.raises(RelayError, match="dtype_input='float16' is not an integer dtype"):
        relay.quantize.qconfig(dtype_input="float16")
    assert cur.get_nbit_by_kind(QAnnotateKind.ACTIVATION) == 32
    assert cur.get_dtype_by_kind(QAnnotateKind.WEIGHT) == "int8"
    # values the dtypes cannot hold, scales that negate or divide by zero (accepted before:
    # every output wrong; fresh-user trial)
    with pytest.raises(RelayError, match=r"nbit_input=16 does not fit dtype_input='int8' "
                                         r"\(8 bits\)"):
        relay.quantize.qconfig(nbit_input=16, nbit_weight=16)
    with pytest.raises(RelayError, match="nbit_activation=32 does not fit dtype_activation"):
        relay.quantize.qconfig(dtype_activation="int16")
    for bad in (-1.0, 0.0, float("inf"), float("nan"), "big"):
        with pytest.raises(RelayError, match="global_scale=.* must be a finite number > 0"):
            relay.quantize.qconfig(global_scale=bad)
    assert relay.quantize.qconfig(nbit_input=16, dtype_input="int16").nbit_input == 16


def _kl_direct(hist, i, nq):
    """The KL objective of half-width i written out with Python loops (MXNet/TVM's
    definition: tails folded into the end bins, groups of len // nq bins with the remainder in
    the last one, mass spread over the non-empty bins, eps = 1e-4 smoothing)."""
    nb = len(hist)
    z = nb // 2
    start, stop = z - i, z + i + 1
    n = stop - start
    sliced = [0.0] * n
    p = [0.0] * n
    for j in range(nb):
        if j <= start:
            p[0] += hist[j]
        elif j >= stop:
            p[n - 1] += hist[j]
        else:
            sliced[j - start] = float(hist[j])
            p[j - start] = float(hist[j])
    m = n // nq
    groups = [list(range(g * m, (g + 1) * m if g < nq - 1 else n)) for g in range(nq)]
    q = [0.0] * n
    for idx in groups:
        mass = sum(sliced[k] for k in idx)
        nonempty = sum(1 for k in idx if sliced[k] != 0)
        for k in idx:
            if nonempty and p[k] != 0:
                q[k] = mass / nonempty

    def smooth(d):
        zeros = sum(1 for v in d if v == 0)
        nz = len(d) - zeros
        if nz == 0 or 1e-4 * zeros / nz >= 1:
            return None
        e1 = 1e-4 * zeros / nz
        return [v + 1e-4 if v == 0 else v - e1 for v in d]

    ps, qs = smooth(p), smooth(q)
    if ps is None or qs is None:
        return float("inf")
    sp, sq = sum(ps), sum(qs)
    return sum((a / sp) * np.log((a / sp) / (b / sq)) for a, b in zip(ps, qs))


def test_kl_threshold_minimizes_the_objective_on_a_known_histogram():
    rng = np.random.default_rng(3)
    vals = np.concatenate([rng.laplace(0, 1.0, 20000), rng.uniform(-9, 9, 40)])
    nb, nq = 101, 15
    thres = np.abs(vals).max()
    hist, edges = np.histogram(vals, bins=nb, range=(-thres, thres))
    objective = {i: _kl_direct(list(hist), i, nq) for i in range(nq // 2, nb // 2 + 1)}
    for i, v in list(objective.items())[::7]:
        assert kl_divergence.kl_objective(hist, i, nq) == pytest.approx(v, rel=1e-9, abs=1e-12)
    best = min(objective, key=objective.get)
    got = kl_divergence.minimize_kl(hist, edges, nq)
    assert got == pytest.approx(edges[nb // 2 + best + 1])
    # the outliers make the full range a bad threshold: KL cuts well inside it
    assert got < 0.7 * thres
    # the same through the array entry point with these bin counts
    assert kl_divergence._find_scale_by_kl(vals, num_bins=nb, num_quantized_bins=nq) == \
        pytest.approx(got)


def test_percentile_threshold_is_the_rank_statistic():
    x = np.random.default_rng(1).normal(0, 2, 100001).astype("float32")
    rank = int(x.size * 0.99999)
    assert _find_scale_by_percentile(x) == np.sort(np.abs(x))[rank]
    assert _find_scale_by_percentile(x, 0.5) == np.sort(np.abs(x))[x.size // 2]


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
@pytest.mark.parametrize("factor", [0.3, 0.0123, 1.7, 0.5 + 2**-20])
def test_fixed_point_multiply_rounds_like_numpy(rounding, factor):
    mult, shift = fixed_point_multiplier_shift(factor)
    assert 2**30 <= mult < 2**31
    exact = mult * 2.0 ** (shift - 31)
    assert exact == pytest.approx(factor, rel=2**-30)
    xs = np.array([-1000, -7, -3, -1, 0, 1, 2, 3, 7, 1000, 123456, -123456, 2**20], "int64")
    v = relay.var("x", shape=xs.shape, dtype="int64")
    mod = relay.IRModule.from_expr(relay.Function([v], fixed_point_multiply(v, factor, rounding)))
    got = relay.create_executor("graph", mod=mod).evaluate()(xs).numpy()
    prod = xs * exact  # exact in float64 for these magnitudes
    want = (np.floor(prod + 0.5) if rounding == "UPWARD"
            else np.sign(prod) * np.floor(np.abs(prod) + 0.5))
    np.testing.assert_array_equal(got, want.astype("int64"))


def test_stop_fusion_ends_a_kernel_and_is_the_identity():
    x = relay.var("x", shape=(4, 4))
    y = relay.op.annotation.stop_fusion(relay.exp(x))
    z = relay.add(y, relay.const(1.0))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], z)))
    fused = relay.transform.FuseOps(2)(mod)
    text = str(fused)
    assert "stop_fusion" not in text
    assert text.count("Primitive=1") == 2  # exp and add in separate kernels
    unfused = relay.transform.FuseOps(2)(relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], relay.add(relay.exp(x), relay.const(1.0))))))
    assert str(unfused).count("Primitive=1") == 1
    xv = np.random.default_rng(0).normal(size=(4, 4)).astype("float32")
    for kind in ("debug", "graph"):
        out = relay.create_executor(kind, mod=mod).evaluate()(xv).numpy()
        np.testing.assert_allclose(out, np.exp(xv) + 1, rtol=1e-6)
    hint = relay.op.annotation.cast_hint(x, "int8")
    m2 = relay.IRModule.from_expr(relay.Function([x], hint))
    np.testing.assert_array_equal(relay.create_executor("debug", mod=m2).evaluate()(xv).numpy(),
                                  xv)

"""relay.quantize on a small conv net: each calibration mode's scales against NumPy, the
realized int8 program against fp32, the simulation and the interpreter, and errors."""

import functools

import numpy as np
import pytest
from _numpy_ref import conv3x3_same as _conv  # tests/quantize/_numpy_ref.py

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.quantize import QAnnotateKind, kl_divergence
from relay_tvm.quantize._calibrate import _find_scale_by_percentile

SQ = "relay.op.annotation.simulated_quantize"


@pytest.fixture(autouse=True)
def _fewer_kl_bins(monkeypatch):
    """KL calibration with 1001 histogram bins instead of 8001 (8x less search, same method;
    the search itself is checked bin for bin in test_quantize_ops) to keep CI fast."""
    from relay_tvm.quantize import _calibrate

    monkeypatch.setattr(_calibrate, "_find_scale_by_kl",
                        functools.partial(kl_divergence._find_scale_by_kl, num_bins=1001))


def _net():
    x = relay.var("data", shape=(1, 3, 12, 12))
    w0, w1, w2 = (relay.var(n) for n in ("w0", "w1", "w2"))
    b1 = relay.var("b1", shape=(16,))
    y = relay.nn.relu(relay.nn.conv2d(x, w0, channels=8, kernel_size=(3, 3), padding=(1, 1)))
    y = relay.nn.relu(relay.nn.bias_add(
        relay.nn.conv2d(y, w1, channels=16, kernel_size=(3, 3), padding=(1, 1)), b1))
    z = relay.nn.relu(relay.nn.conv2d(y, w2, channels=16, kernel_size=(3, 3), padding=(1, 1)))
    y = relay.nn.max_pool2d(relay.add(y, z), pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(y))
    return relay.IRModule.from_expr(relay.Function([x, w0, w1, b1, w2], y))


def _params(seed=0):
    r = np.random.default_rng(seed)
    p = {"w0": r.normal(0, 0.3, (8, 3, 3, 3)), "w1": r.normal(0, 0.1, (16, 8, 3, 3)),
         "b1": r.normal(0, 0.1, (16,)), "w2": r.normal(0, 0.1, (16, 16, 3, 3))}
    return {k: v.astype("float32") for k, v in p.items()}


def _data(seed, n):
    r = np.random.default_rng(seed)
    return [{"data": r.normal(0, 1, (1, 3, 12, 12)).astype("float32")} for _ in range(n)]


def _intermediates(x, p):
    """The values entering the quantized operators, computed in NumPy: conv1's data, conv2's
    data, and the activations meeting at the residual add."""
    a0 = np.maximum(_conv(x, p["w0"]), 0)
    a1 = np.maximum(_conv(a0, p["w1"]) + p["b1"][None, :, None, None], 0)
    a2 = np.maximum(_conv(a1, p["w2"]), 0)
    return a0, a1, a2


def _sq_scales(mod):
    """{kind: sorted dom_scale values} of the simulated_quantize calls of a simulation."""
    out: dict = {}
    for n in relay.transform._rewrite.post_order(mod["main"].body):
        if isinstance(n, relay.Call) and getattr(n.op, "name", "") == SQ:
            scale = float(n.args[1].data)
            assert float(n.args[2].data) == -127 and float(n.args[3].data) == 127
            out.setdefault(int(n.attrs.kind), []).append(scale)
    return {k: sorted(v) for k, v in out.items()}


def _simulate(mode, weight_scale="power2", data=None, **kw):
    """The calibrated simulation, made by running the public steps one by one."""
    q = relay.quantize
    mod = q.prerequisite_optimize(_net(), _params())
    with q.qconfig(calibrate_mode=mode, weight_scale=weight_scale, **kw), q.quantize_context():
        mod = q.annotate()(q.partition()(mod))
        return q.calibrate(data)(mod)


def test_global_scale_and_weight_scales():
    p = _params()
    sim = _simulate("global_scale", "power2", global_scale=4.0)
    scales = _sq_scales(sim)
    # conv0 is skipped: conv1 and conv2 quantize their data (INPUT) and weights (WEIGHT);
    # the bias (a constant added to an ACTIVATION) is a WEIGHT field too
    pw = sorted([2.0 ** np.ceil(np.log2(np.abs(p[k]).max())) / 128 for k in ("w1", "w2", "b1")])
    np.testing.assert_allclose(scales[QAnnotateKind.WEIGHT], pw, rtol=1e-6)
    assert set(scales[QAnnotateKind.INPUT]) == {np.float32(4.0 / 128)}
    sim_max = _simulate("global_scale", "max", global_scale=4.0)
    mw = sorted([np.abs(p[k]).max() / 128 for k in ("w1", "w2", "b1")])
    np.testing.assert_allclose(_sq_scales(sim_max)[QAnnotateKind.WEIGHT], mw, rtol=1e-6)


@pytest.mark.parametrize("mode", ["percentile", "kl_divergence"])
def test_data_calibration_thresholds_match_numpy(mode):
    p = _params()
    data = _data(1, 3)
    sim = _simulate(mode, "max", data=data)
    got = _sq_scales(sim)[QAnnotateKind.INPUT]
    a0s, a1s, a2s = zip(*[_intermediates(d["data"].astype("float64"), p) for d in data])
    # quantized inputs: conv1's data a0, conv2's data a1 (also the add's left side), conv2's
    # output a2 at the add, and the sum entering max_pool2d
    from relay_tvm.quantize import _calibrate

    find = (_find_scale_by_percentile if mode == "percentile"
            else _calibrate._find_scale_by_kl)
    sums = [a + b for a, b in zip(a1s, a2s)]
    want = sorted(find(np.concatenate([a.reshape(-1) for a in arrs])) / 128
                  for arrs in (a0s, a1s, a2s, sums))
    np.testing.assert_allclose(got, want, rtol=2e-3)


@pytest.mark.parametrize("mode,tol", [("global_scale", 0.08), ("percentile", 0.04),
                                      ("kl_divergence", 0.04)])
def test_quantized_net_stays_close_to_fp32(mode, tol):
    p = _params()
    cal, test = _data(1, 3), _data(2, 3)
    with relay.quantize.qconfig(calibrate_mode=mode, global_scale=4.0,
                                weight_scale="power2" if mode == "global_scale" else "max"):
        qmod = relay.quantize.quantize(_net(), p, dataset=cal)
    text = str(qmod)
    assert "simulated_quantize" not in text
    assert text.count('out_dtype="int32"') == 2 and "cast(" in text and "int8" in text
    ref_run = relay.create_executor("graph", mod=_net()).evaluate()
    q_run = relay.create_executor("graph", mod=qmod).evaluate()
    interp = relay.create_executor("debug", mod=qmod).evaluate()
    for d in test:
        ref = ref_run(d["data"], p["w0"], p["w1"], p["b1"], p["w2"]).numpy()
        out = q_run(d["data"]).numpy()
        # the integer program computes what the NumPy interpreter computes: exactly up to the
        # final float32 global_avg_pool2d, whose sums may be ordered differently
        np.testing.assert_allclose(out, interp(d["data"]).numpy(), rtol=1e-6, atol=0)
        err = np.abs(out - ref).max() / np.abs(ref).max()
        assert err < tol, (mode, err)


def test_realize_matches_the_simulation():
    p = _params()
    cal = _data(1, 2)
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max"):
        sim = relay.quantize.quantize(_net(), p, dataset=cal)
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                rounding="TONEAREST"):
        real = relay.quantize.quantize(_net(), p, dataset=cal)
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                do_simulation=True):
        simf = relay.quantize.quantize(_net(), p, dataset=cal)
    x = _data(2, 1)[0]["data"]
    s = relay.create_executor("graph", mod=simf).evaluate()(x).numpy()
    for m in (sim, real):
        out = relay.create_executor("graph", mod=m).evaluate()(x).numpy()
        # the output is global_avg_pool2d(float(q) * step) over the 6x6 max-pooled int8 values
        # q; the pooling runs in float32 (no truncating integer division, which biased 0.19's
        # result down by half a step): the program differs from the simulation only where an
        # integer rescale rounds a tie or a fixed-point product differently, by whole steps in a
        # few of the 36 pooled values, and without bias
        step = float(m["main"].body.args[0].args[0].args[1].data)
        units = (s - out) * 36 / step
        np.testing.assert_allclose(units, np.round(units), atol=0.02)
        assert np.abs(units).max() <= 6 and abs(units.mean()) <= 1.0


def test_concatenation_of_branches_of_different_scales_matches_the_simulation():
    """Two branches of different scales joined by ``concatenate`` were unified in int8 at the
    smaller scale: the other branch, multiplied by the ratio, wrapped (46% error against the
    simulation's 1%; fresh-user trial). The realized program now follows the simulation."""
    rs = np.random.RandomState(0)
    x = relay.var("x", shape=(1, 3, 8, 8))
    wa, wb = relay.var("wa", shape=(8, 3, 3, 3)), relay.var("wb", shape=(8, 8, 1, 1))
    wc = relay.var("wc", shape=(4, 16, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, wa, padding=(1, 1), channels=8, kernel_size=(3, 3)))
    z = relay.nn.relu(relay.nn.conv2d(y, wb, channels=8, kernel_size=(1, 1)))
    out = relay.nn.conv2d(relay.concatenate([y, z], axis=1), wc, padding=(1, 1), channels=4,
                          kernel_size=(3, 3))
    mod = relay.IRModule.from_expr(relay.Function([x, wa, wb, wc], out))
    params = {"wa": rs.randn(8, 3, 3, 3).astype("float32") * 0.3,
              "wb": rs.randn(8, 8, 1, 1).astype("float32") * 0.3,
              "wc": rs.randn(4, 16, 3, 3).astype("float32") * 0.1}
    xs = [rs.rand(1, 3, 8, 8).astype("float32") for _ in range(4)]

    def run(m, p):
        f = relay.create_executor("graph", mod=m, target="llvm").evaluate()
        return np.concatenate([f(v, **p).numpy() for v in xs])

    # the float32 reference in float64 NumPy
    ref = []
    for v in xs:
        ya = np.maximum(_conv(v, params["wa"]), 0)
        zb = np.maximum(np.einsum("nchw,oc->nohw", ya, params["wb"][:, :, 0, 0]), 0)
        ref.append(_conv(np.concatenate([ya, zb], axis=1), params["wc"]))
    ref = np.concatenate(ref)
    outs = {}
    for sim in (True, False):
        with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                    do_simulation=sim, skip_conv_layers=None):
            q = relay.quantize.quantize(mod, params, dataset=[{"x": v} for v in xs])
        outs[sim] = run(q, {})
    for got in outs.values():
        assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 0.03
    np.testing.assert_allclose(outs[False], outs[True], atol=0.02 * np.abs(ref).max())


def test_first_conv_skipped_and_all_quantized():
    p = _params()
    with relay.quantize.qconfig(skip_conv_layers=None):
        allq = relay.quantize.quantize(_net(), p)
    with relay.quantize.qconfig():
        default = relay.quantize.quantize(_net(), p)
    assert str(allq).count('out_dtype="int32"') == 3
    assert str(default).count('out_dtype="int32"') == 2
    with relay.quantize.qconfig(debug_enabled_ops=["nn.relu"]):
        none = relay.quantize.quantize(_net(), p)
    assert 'out_dtype="int32"' not in str(none)


def test_errors_are_clear():
    with relay.quantize.qconfig(calibrate_mode="kl_divergence"):
        with pytest.raises(RelayError, match="needs a dataset"):
            relay.quantize.quantize(_net(), _params())
    with pytest.raises(RelayError, match="constant weight"):
        relay.quantize.quantize(_net(), {})  # weights left as parameters
    # a misspelt parameter name was ignored (then "needs a constant weight"; fresh-user trial)
    p = _params()
    p["ww1"] = p.pop("w1")
    with pytest.raises(RelayError, match=r"params \['ww1'\] are not parameters of main"):
        relay.quantize.quantize(_net(), p)


def test_bad_qconfig_lists_and_datasets_are_refused_and_tensors_are_taken():
    """Fresh-user trial: ``debug_enabled_ops="nn.conv2d"`` became a list of characters and
    quantized nothing; ``skip_conv_layers=0`` was Python's "'int' object is not iterable";
    ``skip_conv_layers=[7]`` on a smaller net was accepted unsaid; a dataset of bare arrays or
    one dict failed on ``.items``; a tvm tensor in the dataset became an object array."""
    import warnings

    import tvm

    for kw, match in [(dict(debug_enabled_ops="nn.conv2d"), "must be a list of operator names"),
                      (dict(skip_conv_layers=0), "must be a list of indices of conv2d layers"),
                      (dict(skip_conv_layers=["a"]), "must be a list of conv2d layer indices"),
                      (dict(skip_conv_layers=[0.5]), "must be a list of conv2d layer indices"),
                      (dict(debug_enabled_ops=["nn.conv3"]),
                       r"debug_enabled_ops names no operator 'nn.conv3' \(did you mean 'nn.conv3d'")]:
        with pytest.raises(RelayError, match=match):
            with relay.quantize.qconfig(**kw):
                pass
    p = _params()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with relay.quantize.qconfig(skip_conv_layers=[7]):
            relay.quantize.quantize(_net(), p)
    assert any("skip_conv_layers [7] name no conv2d layer: the model has 3" in str(w.message)
               for w in said)
    x = _data(1, 1)[0]["data"]
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max"):
        for ds, match in [([x], "dataset item 0 is a ndarray; each item must be a dict"),
                          ({"data": x}, "must be a list .* got dict")]:
            with pytest.raises(RelayError, match=match):
                relay.quantize.quantize(_net(), p, dataset=ds)
        from_numpy = relay.quantize.quantize(_net(), p, dataset=[{"data": x}])
        from_tvm = relay.quantize.quantize(_net(), p, dataset=[{"data": tvm.runtime.tensor(x)}])
    assert relay.analysis.structural_equal(from_numpy, from_tvm)


def test_params_of_another_shape_and_constant_nan_weights_are_refused():
    # a weight of another shape was bound silently (the output shape changed), a NaN weight
    # written into the program as a constant was quantized to finite garbage (second trial)
    x = relay.var("data", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    declared = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(
        x, w, kernel_size=(3, 3), padding=(1, 1))))
    with pytest.raises(relay.InputError, match=r"param 'w': got shape \(2, 3, 3, 3\), "
                                               r"expected Tensor\[\(4, 3, 3, 3\)"):
        relay.quantize.quantize(declared, {"w": np.ones((2, 3, 3, 3), "float32")})
    wv = np.ones((4, 3, 3, 3), "float32")
    wv[1, 2, 0, 0] = np.nan
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.conv2d(
        x, relay.const(wv), channels=4, kernel_size=(3, 3), padding=(1, 1))))
    with relay.quantize.qconfig(calibrate_mode="global_scale", skip_conv_layers=[]):
        with pytest.raises(RelayError, match=r"weight of nn.conv2d .* non-finite values \(nan "
                                             r"at index \(1, 2, 0, 0\)\)"):
            relay.quantize.quantize(mod, {})


@pytest.mark.parametrize("weight_scale", ["power2", "max"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused(weight_scale, bad):
    # inf raised Python's OverflowError / ValueError from the scale's log2, NaN was quantized
    # silently (fresh-user trial): a RelayError names the parameter and the first bad index
    p = _params()
    p["w1"][2, 1, 0, 2] = bad
    with relay.quantize.qconfig(calibrate_mode="global_scale", weight_scale=weight_scale):
        with pytest.raises(RelayError, match=r"parameter 'w1' holds non-finite values "
                                             r"\(-?(nan|inf) at index \(2, 1, 0, 2\)\)"):
            relay.quantize.quantize(_net(), p)


def test_all_zero_calibration_value_falls_back_to_global_scale():
    # relu of a negative-only value is 0 on every calibration input: no threshold to find
    x = relay.var("data", shape=(1, 2, 6, 6))
    w0, w1 = relay.var("w0"), relay.var("w1")
    y = relay.nn.relu(relay.nn.conv2d(x, w0, channels=4, kernel_size=(1, 1)) - relay.const(50.0))
    y = relay.nn.conv2d(y, w1, channels=4, kernel_size=(1, 1))
    mod = relay.IRModule.from_expr(relay.Function([x, w0, w1], y))
    p = {"w0": np.full((4, 2, 1, 1), 0.1, "float32"), "w1": np.full((4, 4, 1, 1), 0.2, "float32")}
    cal = [{"data": np.ones((1, 2, 6, 6), "float32")}]
    with relay.quantize.qconfig(calibrate_mode="percentile", global_scale=2.0):
        qmod = relay.quantize.quantize(mod, p, dataset=cal)
    out = relay.create_executor("graph", mod=qmod).evaluate()(cal[0]["data"]).numpy()
    np.testing.assert_array_equal(out, np.zeros((1, 4, 6, 6), "float32"))
    assert "0.015625f" in str(qmod)  # 2.0 / 128 rescales the conv's int8 data


@pytest.mark.parametrize("mode", ["percentile", "kl_divergence"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_calibration_data_is_refused(mode, bad):
    """Calibration data giving NaN / inf values: percentile fell back to global_scale without a
    word, kl_divergence raised NumPy's ValueError (fresh-user trial); a RelayError names the
    quantized field."""
    x = relay.var("data", shape=(1, 2, 6, 6))
    w = relay.var("w")
    mod = relay.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.conv2d(x, w, channels=4, kernel_size=(1, 1))))
    p = {"w": np.full((4, 2, 1, 1), 0.1, "float32")}
    data = np.ones((1, 2, 6, 6), "float32")
    data[0, 0, 0, :3] = bad
    with relay.quantize.qconfig(calibrate_mode=mode, skip_conv_layers=None):
        with pytest.raises(RelayError, match=r"3 of the 72 values .* field 0 .* NaN or infinite"):
            relay.quantize.quantize(mod, p, dataset=[{"data": data}])


@pytest.mark.parametrize("weight_scale", ["power2", "max"])
def test_all_zero_weight_and_bias(weight_scale):
    # a batch norm with beta = mean = 0 folds into a zero bias: scale 1.0, values exact
    p = _params()
    p["b1"] = np.zeros(16, "float32")
    p["w2"] = np.zeros((16, 16, 3, 3), "float32")
    with relay.quantize.qconfig(weight_scale=weight_scale, global_scale=4.0):
        qmod = relay.quantize.quantize(_net(), p)
    x = _data(2, 1)[0]["data"]
    ref = relay.create_executor("graph", mod=_net()).evaluate()(
        x, p["w0"], p["w1"], p["b1"], p["w2"]).numpy()
    out = relay.create_executor("graph", mod=qmod).evaluate()(x).numpy()
    assert np.isfinite(out).all() and np.abs(out - ref).max() < 0.08 * np.abs(ref).max()


def test_channel_max_weight_scales_and_int32_bias():
    p = _params()
    sim = _simulate("global_scale", "channel_max", global_scale=4.0)
    op = relay.op.get(SQ)
    weights = [n for n in relay.transform._rewrite.post_order(sim["main"].body)
               if isinstance(n, relay.Call) and n.op is op
               and int(n.attrs.kind) == QAnnotateKind.WEIGHT]
    got = {tuple(w.args[0].data.shape): np.asarray(w.args[1].data) for w in weights}
    # kernels: max|w| per output channel / 128, shaped (O, 1, 1, 1); the bias: one max|b|
    for k in ("w1", "w2"):
        want = np.abs(p[k]).reshape(16, -1).max(1).reshape(16, 1, 1, 1) / 128
        np.testing.assert_allclose(got[p[k].shape], want, rtol=1e-6)
    bias = [v for s, v in got.items() if len(s) != 4]
    assert len(bias) == 1 and bias[0].shape == ()
    np.testing.assert_allclose(bias[0], np.abs(p["b1"]).max() / 128, rtol=1e-6)

    with relay.quantize.qconfig(global_scale=4.0, weight_scale="channel_max"):
        qmod = relay.quantize.quantize(_net(), p)
    # the folded bias is added to conv1's int32 accumulator at its per-channel scale
    # (4/128 * max|w1[c]|/128), quantized to int32 rather than to 8 bits
    # (the int32 (16, 1, 1) constant added to a conv2d: the rescalings have such constants too)
    conv = relay.op.get("nn.conv2d")
    consts = [a for n in relay.transform._rewrite.post_order(qmod["main"].body)
              if isinstance(n, relay.Call) and getattr(n.op, "name", None) == "add"
              and any(isinstance(b, relay.Call) and b.op is conv for b in n.args)
              for a in n.args if isinstance(a, relay.Constant) and a.data.dtype == "int32"
              and a.data.shape == (16, 1, 1)]
    assert len(consts) == 1
    s_acc = np.float32(4.0 / 128) * (np.abs(p["w1"]).reshape(16, -1).max(1) / 128).astype(
        "float32")
    np.testing.assert_array_equal(consts[0].data.numpy().reshape(-1),
                                  np.round(p["b1"] / s_acc.astype("float64")))
    x = _data(2, 1)[0]["data"]
    ref = relay.create_executor("graph", mod=_net()).evaluate()(
        x, p["w0"], p["w1"], p["b1"], p["w2"]).numpy()
    out = relay.create_executor("graph", mod=qmod).evaluate()(x).numpy()
    np.testing.assert_allclose(out, relay.create_executor("debug", mod=qmod).evaluate()(
        x).numpy(), rtol=1e-6)
    assert np.abs(out - ref).max() < 0.08 * np.abs(ref).max()


def test_unsigned_input_fields_after_relu():
    p = _params()
    cal = _data(1, 3)
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                dtype_input="uint8", skip_conv_layers=None):
        sim = relay.quantize.quantize(_net(), p, dataset=cal)
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                dtype_input="uint8", skip_conv_layers=None, do_simulation=True):
        simf = relay.quantize.quantize(_net(), p, dataset=cal)
    op = relay.op.get(SQ)
    bounds = sorted((float(n.args[2].data), float(n.args[3].data), bool(n.attrs.sign))
                    for n in relay.transform._rewrite.post_order(simf["main"].body)
                    if isinstance(n, relay.Call) and n.op is op
                    and int(n.attrs.kind) == QAnnotateKind.INPUT)
    # the network input (conv0's data) and the residual sum can be negative: signed int8;
    # conv1's and conv2's data and the add's right side are relu outputs: [0, 255]
    assert bounds == [(-127.0, 127.0, True)] * 2 + [(0.0, 255.0, False)] * 3
    a0s, a1s, a2s = zip(*[_intermediates(d["data"].astype("float64"), p) for d in cal])
    steps = sorted(float(n.args[1].data) for n in relay.transform._rewrite.post_order(
        simf["main"].body) if isinstance(n, relay.Call) and n.op is op
        and not n.attrs.sign)
    want = sorted(_find_scale_by_percentile(np.concatenate([a.reshape(-1) for a in arrs])) / 256
                  for arrs in (a0s, a1s, a2s))
    np.testing.assert_allclose(steps, want, rtol=2e-3)
    text = str(sim)
    assert text.count('dtype="uint8"') >= 3 and 'a_min=0f, a_max=255f' in text
    x = _data(2, 1)[0]["data"]
    ref = relay.create_executor("graph", mod=_net()).evaluate()(
        x, p["w0"], p["w1"], p["b1"], p["w2"]).numpy()
    out = relay.create_executor("graph", mod=sim).evaluate()(x).numpy()
    np.testing.assert_allclose(out, relay.create_executor("debug", mod=sim).evaluate()(
        x).numpy(), rtol=1e-6)
    s = relay.create_executor("graph", mod=simf).evaluate()(x).numpy()
    assert np.abs(out - s).max() < 0.02 * np.abs(s).max()
    assert np.abs(out - ref).max() < 0.04 * np.abs(ref).max()


def test_avg_pool2d_rounds_to_the_nearest_step():
    x = relay.var("data", shape=(1, 3, 9, 9))
    w0 = relay.var("w0")
    y = relay.nn.relu(relay.nn.conv2d(x, w0, channels=4, kernel_size=(3, 3), padding=(1, 1)))
    y = relay.nn.avg_pool2d(y, pool_size=(3, 3), strides=(3, 3))
    mod = relay.IRModule.from_expr(relay.Function([x, w0], y))
    r = np.random.default_rng(5)
    p = {"w0": r.normal(0, 0.3, (4, 3, 3, 3)).astype("float32")}
    cal = [{"data": r.normal(0, 1, (1, 3, 9, 9)).astype("float32")} for _ in range(2)]
    kw = dict(calibrate_mode="percentile", weight_scale="max", skip_conv_layers=None)
    with relay.quantize.qconfig(**kw):
        real = relay.quantize.quantize(mod, p, dataset=cal)
    with relay.quantize.qconfig(do_simulation=True, **kw):
        simf = relay.quantize.quantize(mod, p, dataset=cal)
    assert "left_shift" in str(real)  # 8-bit values shifted before the integer pooling
    # the pooled field: the INPUT simulated_quantize with the largest step (the conv output)
    op = relay.op.get(SQ)
    step = max(float(n.args[1].data) for n in relay.transform._rewrite.post_order(
        simf["main"].body) if isinstance(n, relay.Call) and n.op is op
        and int(n.attrs.kind) == QAnnotateKind.INPUT)
    x0 = r.normal(0, 1, (1, 3, 9, 9)).astype("float32")
    out = relay.create_executor("graph", mod=real).evaluate()(x0).numpy()
    s = relay.create_executor("graph", mod=simf).evaluate()(x0).numpy()
    # the simulation averages nine int8 steps exactly (k/9 steps); the integer program rounds
    # that to the nearest step (0.19 truncated: up to 8/9 of a step low)
    np.testing.assert_allclose(out / step, np.round(s / step), atol=1e-3)
    assert np.abs(s / step - np.round(s / step)).max() > 0.2  # the rounding was exercised

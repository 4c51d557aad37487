"""relay.quantize with ``debug_enabled_ops``: only the listed operators are quantized, the rest
runs in float, and the realized program follows the simulation and the float net within int8
error. Fresh-user trial: with ``["nn.conv2d"]`` the conv2d's int32 accumulator went through
relu and the partition's ``cast_hint`` in integers and was cast to int8 unclipped (99.5% error,
silently)."""

import numpy as np
import pytest
from _numpy_ref import conv3x3_same as _conv  # tests/quantize/_numpy_ref.py

import relay_tvm as relay

RS = np.random.RandomState(0)
W = {"wa": RS.randn(8, 3, 3, 3).astype("float32") * 0.3,
     "wb": RS.randn(8, 3, 3, 3).astype("float32") * 0.3,
     "ba": RS.randn(8).astype("float32") * 0.1,
     "wc": RS.randn(4, 16, 3, 3).astype("float32") * 0.1}
XS = [RS.randn(1, 3, 8, 8).astype("float32") for _ in range(3)]


def _c(d, w, ch):
    return relay.nn.conv2d(d, w, padding=(1, 1), channels=ch, kernel_size=(3, 3))


def _conv_relu(bias=False):
    """conv2d (-> bias_add) -> relu, and its NumPy reference."""
    x, wa, ba = relay.var("x", shape=(1, 3, 8, 8)), relay.var("wa"), relay.var("ba")
    y = _c(x, wa, 8)
    if bias:
        y = relay.nn.bias_add(y, ba)
    mod = relay.IRModule.from_expr(relay.Function([x, wa, ba] if bias else [x, wa],
                                                  relay.nn.relu(y)))

    def ref(v):
        b = W["ba"][None, :, None, None] if bias else 0
        return np.maximum(_conv(v, W["wa"]) + b, 0)

    return mod, {k: W[k] for k in (("wa", "ba") if bias else ("wa",))}, ref


def _conv_bias_relu():
    return _conv_relu(bias=True)


def _concat_branches():
    """Two conv2d -> relu branches concatenated, then a conv2d, and its NumPy reference."""
    x = relay.var("x", shape=(1, 3, 8, 8))
    wa, wb, wc = relay.var("wa"), relay.var("wb"), relay.var("wc")
    ya, yb = relay.nn.relu(_c(x, wa, 8)), relay.nn.relu(_c(x, wb, 8))
    y = _c(relay.concatenate([ya, yb], axis=1), wc, 4)
    mod = relay.IRModule.from_expr(relay.Function([x, wa, wb, wc], y))

    def ref(v):
        cat = np.concatenate([np.maximum(_conv(v, W["wa"]), 0), np.maximum(_conv(v, W["wb"]), 0)],
                             axis=1)
        return _conv(cat, W["wc"])

    return mod, {k: W[k] for k in ("wa", "wb", "wc")}, ref


def _quantized_outputs(mod, params, ops, simulation):
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                skip_conv_layers=None, debug_enabled_ops=ops,
                                do_simulation=simulation):
        q = relay.quantize.quantize(mod, params, dataset=[{"x": v} for v in XS])
    f = relay.create_executor("graph", mod=q).evaluate()
    return q, np.concatenate([f(v).numpy() for v in XS])


def _narrowings(mod):
    """The 8-bit casts of the program and whether each casts a clipped value."""
    out = []
    for n in relay.transform._rewrite.post_order(mod["main"].body):
        if (isinstance(n, relay.Call) and getattr(n.op, "name", "") == "cast"
                and n.attrs.dtype in ("int8", "uint8")):
            a = n.args[0]
            out.append(isinstance(a, relay.Call) and getattr(a.op, "name", "") == "clip")
    return out


def _rel_err(got, ref):
    return np.abs(got - ref).max() / np.abs(ref).max()


@pytest.mark.parametrize("net", [_conv_relu, _conv_bias_relu, _concat_branches])
@pytest.mark.parametrize("ops", [["nn.conv2d"], ["nn.conv2d", "add"]])
def test_only_listed_ops_quantized_and_result_close_to_float(net, ops):
    mod, params, ref_fn = net()
    ref = np.concatenate([ref_fn(v) for v in XS])
    real, out = _quantized_outputs(mod, params, ops, simulation=False)
    _, sim = _quantized_outputs(mod, params, ops, simulation=True)
    _, all_ops = _quantized_outputs(mod, params, None, simulation=False)
    text = str(real)
    assert "simulated_quantize" not in text
    n_conv = text.count("nn.conv2d(")
    assert text.count('out_dtype="int32"') == n_conv >= 1  # every conv2d in integers
    # only quantized (clipped) values are cast to int8: the conv2d data, never an accumulator
    narrowings = _narrowings(real)
    assert narrowings and all(narrowings), narrowings
    err, err_all = _rel_err(out, ref), _rel_err(all_ops, ref)
    assert err < 0.04, err  # int8 error; the unclipped narrowing gave ~1.0
    assert err < 2 * err_all + 0.005, (err, err_all)  # same order as with every op quantized
    # the realized program follows the simulation: the accumulators are dequantized exactly;
    # an integer bias add (with "add") rounds at the accumulator's scale
    np.testing.assert_allclose(out, sim, rtol=0, atol=1e-3 * np.abs(ref).max())


def test_an_unclipped_accumulator_is_never_narrowed():
    """The realize step itself: a cast_hint of an int32 accumulator no simulated_quantize
    clipped (annotated under ``debug_enabled_ops``, realized with every operator enabled) keeps
    int32 and is dequantized, instead of wrapping in int8."""
    q = relay.quantize
    mod, params, ref_fn = _conv_relu()
    ref = np.concatenate([ref_fn(v) for v in XS])
    mod = q.prerequisite_optimize(mod, params)
    with q.qconfig(calibrate_mode="percentile", weight_scale="max", skip_conv_layers=None,
                   debug_enabled_ops=["nn.conv2d"]), q.quantize_context():
        sim = q.calibrate([{"x": v} for v in XS])(q.annotate()(q.partition()(mod)))
    sim = relay.transform.InferType()(sim)
    with q.qconfig(calibrate_mode="percentile", weight_scale="max", skip_conv_layers=None):
        real = q.realize()(sim)
    narrowings = _narrowings(real)
    assert narrowings and all(narrowings), narrowings
    f = relay.create_executor("graph", mod=real).evaluate()
    out = np.concatenate([f(v).numpy() for v in XS])
    assert _rel_err(out, ref) < 0.04

"""relay.quantize of a multiply (and an add) of two activations: annotation leaves a multiply
whose two arguments are both annotated in float (the partition quantizes one side to INPUT, the
other is a conv2d's accumulator; 0.19 raised), and realize must follow it. Before, realize
multiplied the int8 value by the unclipped int32 accumulator in int32, which wrapped: 176%
error against NumPy (the simulation: 0.8%) on a 2048-channel 1x1 conv2d with positive data."""

import numpy as np
import pytest

import relay_tvm as relay

RS = np.random.RandomState(1)
C = 2048  # 1x1 conv2d: accumulators up to ~2e7, times an int8 value of ~127: > 2**31
WIDE = {"wa": (RS.uniform(0.5, 1.0, (4, C, 1, 1)) * 0.05).astype("float32"),
        "wb": (RS.uniform(0.5, 1.0, (4, C, 1, 1)) * 0.05).astype("float32")}
XW = [RS.uniform(0.5, 1.0, (1, C, 4, 4)).astype("float32") for _ in range(3)]
SMALL = {"wa": RS.randn(8, 3, 3, 3).astype("float32") * 0.3,
         "wb": RS.randn(8, 3, 3, 3).astype("float32") * 0.3}
XS = [RS.randn(1, 3, 8, 8).astype("float32") for _ in range(3)]

OPS = {"multiply": (relay.multiply, np.multiply), "add": (relay.add, np.add)}


def _conv(x, w, pad):  # NCHW/OIHW, stride 1, in float64
    k = w.shape[2]
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(k):
        for j in range(k):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd],
                             w[:, :, i, j].astype("float64"))
    return out


def _net(op, wide, relu):
    """``op(conv2d(x, wa), conv2d(x, wb))`` (relu on each side when ``relu``), its params,
    data and NumPy float64 output."""
    params, xs = (WIDE, XW) if wide else (SMALL, XS)
    pad, k = (0, 1) if wide else (1, 3)
    x = relay.var("x", shape=xs[0].shape)
    wa, wb = relay.var("wa"), relay.var("wb")
    ch = params["wa"].shape[0]
    sides = [relay.nn.conv2d(x, w, padding=(pad, pad), channels=ch, kernel_size=(k, k))
             for w in (wa, wb)]
    if relu:
        sides = [relay.nn.relu(s) for s in sides]
    mod = relay.IRModule.from_expr(relay.Function([x, wa, wb], OPS[op][0](*sides)))
    refs = []
    for v in xs:
        a, b = (_conv(v, params[n], pad) for n in ("wa", "wb"))
        if relu:
            a, b = np.maximum(a, 0), np.maximum(b, 0)
        refs.append(OPS[op][1](a, b))
    return mod, params, xs, np.concatenate(refs)


def _quantized(mod, params, xs, simulation):
    with relay.quantize.qconfig(calibrate_mode="percentile", weight_scale="max",
                                skip_conv_layers=None, do_simulation=simulation):
        q = relay.quantize.quantize(mod, params, dataset=[{"x": v} for v in xs])
    f = relay.create_executor("graph", mod=q).evaluate()
    return q, np.concatenate([f(v).numpy() for v in xs])


def _int_multiplies(mod):
    mod = relay.transform.InferType()(mod)
    return [n for n in relay.transform._rewrite.post_order(mod["main"].body)
            if isinstance(n, relay.Call) and getattr(n.op, "name", "") == "multiply"
            and n.checked_type.dtype != "float32"]


@pytest.mark.parametrize("op", ["multiply", "add"])
@pytest.mark.parametrize("wide,relu", [(True, False), (True, True), (False, True)])
def test_two_activations_follow_simulation_and_numpy(op, wide, relu):
    mod, params, xs, ref = _net(op, wide, relu)
    real_mod, real = _quantized(mod, params, xs, simulation=False)
    _, sim = _quantized(mod, params, xs, simulation=True)
    top = np.abs(ref).max()
    err_sim = np.abs(sim - ref).max() / top
    assert err_sim < 0.03, err_sim
    # the realized program computes what the simulation does (the wide multiply wrapped in
    # int32: 1.76 of the largest value off). The integer add brings the side of the larger
    # scale to the smaller one by a rounded fixed-point factor (as 0.19), which moves some
    # outputs by one 8-bit step (~0.8% of the largest value; 8% of them for the 3x3 net)
    step = 0.01 * top if op == "add" else 1e-4 * top
    np.testing.assert_allclose(real, sim, rtol=0, atol=step)
    assert np.abs(real - ref).max() / top < 0.03
    if op == "multiply":
        # left in float by annotation: no integer multiply of an unclipped accumulator
        assert not _int_multiplies(real_mod)


def test_multiply_of_two_quantized_values_stays_integer():
    """``y * y`` of a used-twice relu(conv2d) (both sides quantized to INPUT, clipped to 8
    bits): the int8 x int8 product fits int32 and is computed in integers, exactly as
    simulated."""
    x, wa = relay.var("x", shape=XS[0].shape), relay.var("wa")
    y = relay.nn.relu(relay.nn.conv2d(x, wa, padding=(1, 1), channels=8, kernel_size=(3, 3)))
    mod = relay.IRModule.from_expr(relay.Function([x, wa], y * y))
    params = {"wa": SMALL["wa"]}
    real_mod, real = _quantized(mod, params, XS, simulation=False)
    _, sim = _quantized(mod, params, XS, simulation=True)
    ref = np.concatenate([np.maximum(_conv(v, SMALL["wa"], 1), 0) ** 2 for v in XS])
    top = np.abs(ref).max()
    assert [m.checked_type.dtype for m in _int_multiplies(real_mod)] == ["int32"]
    np.testing.assert_allclose(real, sim, rtol=0, atol=1e-5 * top)
    assert np.abs(real - ref).max() / top < 0.03

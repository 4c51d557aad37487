"""FoldExplicitPadding: an nn.pad read only by a convolution / pooling becomes the operator's
own padding when that computes the same values (interpreter runs compared), else stays."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay


def _fold(func):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(func))
    return mod, relay.transform.InferType()(relay.transform.FoldExplicitPadding()(mod))


def _ops(mod):
    names = []
    relay.analysis.post_order_visit(mod["main"], lambda n: names.append(n.op.name) if isinstance(
        n, relay.Call) and hasattr(n.op, "name") else None)
    return names


def _same(mod_a, mod_b, *args):
    ev = relay.create_executor("debug")
    np.testing.assert_allclose(ev.evaluate(mod_b["main"])(*args).numpy(),
                               ev.evaluate(mod_a["main"])(*args).numpy(), rtol=1e-5, atol=1e-5)


def _expected(func):
    return relay.transform.InferType()(relay.IRModule.from_expr(func))["main"]


def test_conv2d_nchw_and_conv1d_nwc_take_the_pad():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 2, 6, 5))
    w = relay.var("w", shape=(3, 2, 3, 3))
    p = relay.nn.pad(x, ((0, 0), (0, 0), (1, 2), (0, 1)))
    mod, out = _fold(relay.Function([x, w], relay.nn.conv2d(p, w, padding=(1, 0, 0, 0))))
    want = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(2, 0, 2, 1)))
    assert relay.analysis.structural_equal(out["main"], _expected(want))
    _same(mod, out, rng.standard_normal((1, 2, 6, 5)).astype("float32"),
          rng.standard_normal((3, 2, 3, 3)).astype("float32"))

    y = relay.var("y", shape=(1, 7, 2))
    v = relay.var("v", shape=(3, 2, 4))
    p = relay.nn.pad(y, ((0, 0), (2, 1), (0, 0)))
    conv = relay.nn.conv1d(p, v, data_layout="NWC", kernel_layout="WIO")
    mod, out = _fold(relay.Function([y, v], conv))
    assert "nn.pad" not in _ops(out)
    _same(mod, out, rng.standard_normal((1, 7, 2)).astype("float32"),
          rng.standard_normal((3, 2, 4)).astype("float32"))


def test_pads_that_change_values_or_are_shared_stay():
    x = relay.var("x", shape=(1, 2, 5, 5))
    w = relay.var("w", shape=(2, 2, 3, 3))
    cases = [
        relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), pad_value=1.0),  # not conv's zero
        relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), pad_mode="edge"),
        relay.nn.pad(x, ((0, 0), (1, 0), (1, 1), (1, 1))),  # pads the channels
    ]
    for p in cases:
        conv = relay.nn.conv2d(p, w if p.attrs.pad_width[1] == (0, 0) else
                               relay.var("w3", shape=(2, 3, 3, 3)))
        mod, out = _fold(relay.Function(relay.analysis.free_vars(conv), conv))
        assert relay.analysis.structural_equal(out["main"], mod["main"])
    p = relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    shared = relay.Tuple([relay.nn.conv2d(p, w), p])
    mod, out = _fold(relay.Function([x, w], shared))
    assert relay.analysis.structural_equal(out["main"], mod["main"])


def test_qnn_conv2d_folds_only_its_zero_point():
    x = relay.var("x", shape=(1, 4, 4, 3), dtype="int8")
    w = relay.var("w", shape=(2, 2, 3, 3), dtype="int8")

    def conv(data, zp, pad=(0, 0)):
        return relay.qnn.op.conv2d(data, w, relay.const(zp, "int32"), relay.const(0, "int32"),
                                   relay.const(0.5, "float32"), relay.const(0.25, "float32"),
                                   kernel_size=(2, 2), channels=3, padding=pad,
                                   data_layout="NHWC", kernel_layout="HWIO")

    p = relay.nn.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), pad_value=3)
    mod, out = _fold(relay.Function([x, w], conv(p, 3)))
    assert relay.analysis.structural_equal(out["main"],
                                           _expected(relay.Function([x, w], conv(x, 3, (1, 1)))))
    rng = np.random.default_rng(1)
    xs = rng.integers(-20, 20, (1, 4, 4, 3)).astype("int8")
    ws = rng.integers(-20, 20, (2, 2, 3, 3)).astype("int8")
    _same(mod, out, xs, ws)
    mod, out = _fold(relay.Function([x, w], conv(p, 2)))
    assert "nn.pad" in _ops(out)


def test_pools():
    rng = np.random.default_rng(2)
    x = relay.var("x", shape=(1, 2, 6, 6))
    xs = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    p = relay.nn.pad(x, ((0, 0), (0, 0), (1, 0), (0, 1)))
    mod, out = _fold(relay.Function([x], relay.nn.avg_pool2d(p, pool_size=(2, 2))))
    want = relay.nn.avg_pool2d(x, pool_size=(2, 2), padding=(1, 0, 0, 1), count_include_pad=True)
    assert relay.analysis.structural_equal(out["main"], _expected(relay.Function([x], want)))
    _same(mod, out, xs)
    # count_include_pad=False with padding of its own: the divisor would change
    avg = relay.nn.avg_pool2d(p, pool_size=(2, 2), padding=(1, 1))
    mod, out = _fold(relay.Function([x], avg))
    assert "nn.pad" in _ops(out)

    low = float(np.finfo("float32").min)
    inside = relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), pad_value=low)
    mod, out = _fold(relay.Function([x], relay.nn.max_pool2d(inside, pool_size=(2, 2))))
    assert "nn.pad" not in _ops(out)
    _same(mod, out, xs)
    # a window wholly in the padding: relay_tvm's pool gives -inf there, the pad gave `low`
    outside = relay.nn.pad(x, ((0, 0), (0, 0), (2, 0), (0, 0)), pad_value=low)
    mod, out = _fold(relay.Function([x], relay.nn.max_pool2d(outside, pool_size=(2, 2))))
    assert "nn.pad" in _ops(out)

    u = relay.var("u", shape=(1, 1, 4, 4), dtype="uint8")
    p = relay.nn.pad(u, ((0, 0), (0, 0), (3, 0), (0, 0)), pad_value=0)
    mod, out = _fold(relay.Function([u], relay.nn.max_pool2d(p, pool_size=(2, 2))))
    assert "nn.pad" not in _ops(out)
    _same(mod, out, rng.integers(0, 255, (1, 1, 4, 4)).astype("uint8"))

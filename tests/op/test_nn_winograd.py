"""nn.contrib_conv2d_winograd_weight_transform + nn.contrib_conv2d_winograd_without_weight_transform
against NumPy's direct convolution: the reference kernels (interpreter) and the compiled kernels
(graph executor, CPU Winograd schedule), on every layout the operator takes."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.op.nn_conv import conv_nd_reference

RNG = np.random.default_rng(7)


def direct(x, w, pad):
    """NumPy direct convolution in float64 (stride 1), the oracle."""
    pt, pl, pb, pr = pad
    return conv_nd_reference(x.astype("float64"), w.astype("float64"), (1, 1), (1, 1),
                             (pt, pl), (pb, pr), 1)


def assert_rel(got, ref, rel=1e-4):
    """Within ``rel`` of the reference, relative to the reference's largest magnitude."""
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=rel, atol=rel * np.abs(ref).max())


def pair(x, w, tile, pad, data_layout="NCHW", packed=0):
    """Relay function of (x, w): transform w, (pack it), convolve, back to NCHW."""
    O, C = w.shape[:2]
    alpha = tile + 2
    xv, wv = relay.var("x", shape=x.shape), relay.var("w", shape=w.shape)
    data = xv if data_layout == "NCHW" else relay.layout_transform(xv, "NCHW", data_layout)
    u = relay.nn.contrib_conv2d_winograd_weight_transform(wv, tile_size=tile)
    kl = "OIHW"
    if packed:
        u = relay.transpose(relay.reshape(u, (alpha, alpha, O // packed, packed, C)),
                            (0, 1, 2, 4, 3))
        kl = f"OIHW{packed}o"
    y = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        data, u, tile, padding=pad, channels=O, kernel_size=(3, 3), data_layout=data_layout,
        kernel_layout=kl, out_layout="NCHW")
    return relay.Function([xv, wv], y)


CASES = [
    # (N, C, H, W, O, tile, pad (t, l, b, r), data layout, packed weight block)
    (1, 8, 8, 8, 16, 4, (1, 1, 1, 1), "NCHW", 0),
    (1, 8, 8, 8, 16, 4, (1, 1, 1, 1), "NCHW8c", 8),
    (2, 4, 7, 9, 8, 2, (1, 0, 2, 1), "NCHW", 4),
    (1, 12, 7, 7, 12, 4, (1, 1, 1, 1), "NCHW4c", 4),  # 7 rows: the last tile is cropped
    (1, 16, 10, 6, 8, 2, (0, 0, 0, 0), "NCHW16c", 8),  # no padding: 8 x 4 output
    (1, 3, 5, 11, 5, 4, (2, 2, 2, 2), "NCHW", 5),
]


@pytest.mark.parametrize("case", CASES)
def test_pair_equals_direct_convolution(case):
    n, c, h, w_, o, tile, pad, layout, packed = case
    x = RNG.standard_normal((n, c, h, w_)).astype("float32")
    w = RNG.standard_normal((o, c, 3, 3)).astype("float32")
    ref = direct(x, w, pad)
    mod = relay.IRModule.from_expr(pair(x, w, tile, pad, layout, packed))
    interp = relay.create_executor("debug", mod).evaluate()(x, w).numpy()
    assert_rel(interp, ref)
    with relay.transform.PassContext(opt_level=2):
        lib = relay.build(mod, target="llvm")
    rules = {v.anchor: v.schedule_rule for v in lib.kernels.values()}
    assert rules["nn.contrib_conv2d_winograd_without_weight_transform"] == "conv2d_winograd"
    got = relay.create_executor("graph", mod, target="llvm").evaluate()(x, w).numpy()
    assert_rel(got, ref)


def test_weight_transform_is_g_w_gt():
    from tvm.topi.nn.winograd_util import _cook_toom_convolution, _interpolation_points

    w = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    _, _, g = _cook_toom_convolution(_interpolation_points(5), 4, 3)  # degree m + r - 2
    want = np.stack([[g @ w[o, i].astype("float64") @ g.T for i in range(3)] for o in range(4)])
    want = want.transpose(2, 3, 0, 1)  # (6, 6, O, I)
    wv = relay.var("w", shape=w.shape)
    f = relay.Function([wv], relay.nn.contrib_conv2d_winograd_weight_transform(wv, 4))
    mod = relay.IRModule.from_expr(f)
    typed = relay.transform.InferType()(mod)["main"]
    assert typed.body.checked_type == relay.TensorType((6, 6, 4, 3))
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, mod, target="llvm").evaluate()(w).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _infer(y, *vs):
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(list(vs), y)))


@pytest.mark.parametrize("kwargs, match", [
    (dict(strides=(2, 2)), "strides"),
    (dict(dilation=(2, 2)), "dilation"),
    (dict(kernel_layout="HWOI"), "kernel_layout"),
    (dict(data_layout="NHWC"), "data_layout"),
    (dict(channels=7), "channels=7"),
    (dict(kernel_size=(5, 5)), "kernel_size"),
])
def test_relation_rejects(kwargs, match):
    x = relay.var("x", shape=(1, 8, 8, 8))
    u = relay.var("u", shape=(6, 6, 16, 8))
    with pytest.raises(TypeInferenceError, match=match):
        _infer(relay.nn.contrib_conv2d_winograd_without_weight_transform(x, u, 4, **kwargs), x, u)


def test_relation_rejects_mismatched_weight():
    x = relay.var("x", shape=(1, 8, 8, 8))
    u = relay.var("u", shape=(6, 6, 16, 4))  # 4 input channels, data has 8
    with pytest.raises(TypeInferenceError, match="does not fit data"):
        _infer(relay.nn.contrib_conv2d_winograd_without_weight_transform(x, u, 4), x, u)
    w = relay.var("w", shape=(16, 8, 3, 2))
    with pytest.raises(TypeInferenceError, match="square kernel"):
        _infer(relay.nn.contrib_conv2d_winograd_weight_transform(w, 4), w)
    w = relay.var("w", shape=(16, 8, 3, 3))
    with pytest.raises(TypeInferenceError, match="tile_size must be in 2..8"):
        _infer(relay.nn.contrib_conv2d_winograd_weight_transform(w, 9), w)


def test_relation_output_shape_blocked():
    x = relay.var("x", shape=(2, 2, 7, 9, 4))
    u = relay.var("u", shape=(4, 4, 2, 8, 8))
    mod = _infer(relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, u, 2, padding=(1, 1), data_layout="NCHW4c", kernel_layout="OIHW8o",
        out_layout="NCHW8c"), x, u)
    assert mod["main"].body.checked_type == relay.TensorType((2, 2, 7, 9, 8))

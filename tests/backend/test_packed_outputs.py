"""An injective kernel whose only consumer packs its result (a convolution's run-time weight)
writes the result packed itself: no separate ``layout_transform`` kernel, same values (the
graph executor against NumPy and the reference interpreter)."""

import numpy as np
from backend_util import assert_same, rand, run_both

import relay_tvm as relay


def _build(func):
    with relay.transform.PassContext(opt_level=2):
        return relay.build(relay.IRModule.from_expr(func), target="llvm")


def _kernels(lib):
    return {k: (v.anchor, v.schedule_rule, [tuple(t.shape) for t in v.output_types])
            for k, v in lib.kernels.items()}


def _conv_nchw(x, w, pad):
    n, c, h, ww = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    out = np.zeros((n, o, oh, ow), "float64")
    for p in range(kh):
        for q in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, p:p + oh, q:q + ow], w[:, :, p, q])
    return out


def test_flipped_transposed_weight_is_packed_by_its_producer():
    # the data-gradient weight of a convolution: reverse both spatial axes, swap O and I
    x = relay.var("x", shape=(2, 16, 6, 6))
    w = relay.var("w", shape=(16, 16, 3, 3))
    wf = relay.transpose(relay.reverse(relay.reverse(w, axis=2), axis=3), axes=(1, 0, 2, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, wf, padding=(1, 1)))
    lib = _build(f)
    ks = _kernels(lib)
    assert not any(a == "layout_transform" for a, _, _ in ks.values()), ks
    packed = [k for k in ks if k.endswith("_layout_transform")]
    assert len(packed) == 1, ks
    (shape,) = ks[packed[0]][2]
    assert len(shape) == 5 and shape[0] * shape[-1] == 16, shape  # OIHW[ob]o
    xa, wa = rand((2, 16, 6, 6)), rand((16, 16, 3, 3), seed=1)
    ref, got = run_both(f, [xa, wa])
    assert_same(ref, got, rtol=1e-4, atol=1e-4)
    want = _conv_nchw(xa.astype("float64"), wa[:, :, ::-1, ::-1].transpose(1, 0, 2, 3), 1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_producer_with_another_use_keeps_the_packing_kernel():
    # the transposed weight is also an output: it is computed unpacked, then packed
    x = relay.var("x", shape=(1, 8, 5, 5))
    w = relay.var("w", shape=(16, 8, 3, 3))
    wt = relay.transpose(w, axes=(0, 1, 3, 2))
    f = relay.Function([x, w], relay.Tuple([relay.nn.conv2d(x, wt, padding=(1, 1)), wt]))
    ks = _kernels(_build(f))
    assert any(a == "layout_transform" for a, _, _ in ks.values()), ks
    assert not any(k.endswith("_layout_transform") and a != "layout_transform"
                   for k, (a, _, _) in ks.items()), ks
    xa, wa = rand((1, 8, 5, 5)), rand((16, 8, 3, 3), seed=2)
    ref, got = run_both(f, [xa, wa])
    assert_same(ref, got, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0], _conv_nchw(xa, wa.transpose(0, 1, 3, 2), 1),
                               rtol=1e-4, atol=1e-4)


def test_compiled_conv_gradient_equals_the_interpreter():
    # the first-order gradient of conv (stride 1 and 2) -> relu -> sum, compiled: its weight
    # and data gradients go through producer-packed weights
    x = relay.var("x", shape=(2, 8, 8, 8))
    w1 = relay.var("w1", shape=(16, 8, 3, 3))
    w2 = relay.var("w2", shape=(16, 16, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1)))
    y = relay.nn.conv2d(y, w2, strides=(2, 2), padding=(1, 1))
    f = relay.Function([x, w1, w2], relay.sum(y * y))
    f = relay.transform.InferType()(relay.IRModule.from_expr(f))["main"]
    g = relay.transform.gradient(f, mode="first_order")
    ks = _kernels(_build(g))
    assert any(k.endswith("_layout_transform") and a != "layout_transform"
               for k, (a, _, _) in ks.items()), ks
    args = [rand((2, 8, 8, 8)), rand((16, 8, 3, 3), seed=1) * 0.3,
            rand((16, 16, 3, 3), seed=2) * 0.3]
    ref, got = run_both(g, args)
    assert_same(ref, got, rtol=1e-4, atol=1e-3)

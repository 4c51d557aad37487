"""image.dilation2d: interpreter and compiled kernel against a loop-by-loop NumPy
morphological dilation (zero padding, strides, dilations, both layouts)."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def _loops(x, w, s, d, pad):
    """NCHW data, IHW kernel, pad = (top, left, bottom, right) of zeros."""
    n, c, h, wd = x.shape
    _, kh, kw = w.shape
    xp = np.zeros((n, c, h + pad[0] + pad[2], wd + pad[1] + pad[3]), x.dtype)
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x
    oh = (xp.shape[2] - ((kh - 1) * d[0] + 1)) // s[0] + 1
    ow = (xp.shape[3] - ((kw - 1) * d[1] + 1)) // s[1] + 1
    out = np.empty((n, c, oh, ow), x.dtype)
    for b in range(n):
        for ch in range(c):
            for y in range(oh):
                for z in range(ow):
                    out[b, ch, y, z] = max(xp[b, ch, y * s[0] + i * d[0], z * s[1] + j * d[1]]
                                           + w[ch, i, j] for i in range(kh) for j in range(kw))
    return out


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("s, d, pad", [((1, 1), (1, 1), (0, 0, 0, 0)),
                                       ((2, 1), (1, 2), (1, 0, 2, 1)),
                                       ((1, 2), (2, 2), (1, 1, 1, 1))])
def test_dilation2d_matches_loops(layout, s, d, pad):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6)).astype("float32")
    w = rng.standard_normal((3, 2, 3)).astype("float32")
    want = _loops(x, w, s, d, pad)
    if layout == "NHWC":
        x, w, want = x.transpose(0, 2, 3, 1), w.transpose(1, 2, 0), want.transpose(0, 2, 3, 1)
    xv = relay.var("x", shape=x.shape)
    wv = relay.var("w", shape=w.shape)
    f = relay.Function([xv, wv], relay.image.dilation2d(
        xv, wv, strides=s, dilations=d, padding=pad, data_layout=layout,
        kernel_layout="IHW" if layout == "NCHW" else "HWI"))
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, target="llvm").evaluate(f)(x, w).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dilation2d_type_errors():
    x = relay.var("x", shape=(1, 3, 5, 5))
    w2, w3 = relay.var("w", shape=(2, 2, 2)), relay.var("w", shape=(3, 2, 2))
    with pytest.raises(TypeInferenceError, match="3 channels, weight 2"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(
            [x, w2], relay.image.dilation2d(x, w2))))
    with pytest.raises(TypeInferenceError, match="layouts"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(
            [x, w3], relay.image.dilation2d(x, w3, kernel_layout="HWI"))))

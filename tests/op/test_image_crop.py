"""image.crop_and_resize: hand-computed samples, and the NumPy reference (interpreter) against
the compiled kernel for both layouts and methods, boxes reaching outside the image."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay


def _func(shape, nboxes, crop, layout, method, ext=0.0):
    img = relay.var("img", shape=shape)
    bx = relay.var("bx", shape=(nboxes, 4))
    ix = relay.var("ix", shape=(nboxes,), dtype="int32")
    return relay.Function([img, bx, ix], relay.image.crop_and_resize(
        img, bx, ix, crop, layout, method, ext))


def test_bilinear_samples_by_hand():
    img = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)  # value = 4 * row + col
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 2.0, 1.0]],
                     "float32")
    f = _func((1, 1, 4, 4), 3, (2, 2), "NCHW", "bilinear", ext=-1.0)
    out = relay.create_executor("debug").evaluate(f)(img, boxes,
                                                     np.zeros(3, "int32")).numpy()
    np.testing.assert_allclose(out[0, 0], [[0, 3], [12, 15]])  # the corners
    np.testing.assert_allclose(out[1, 0], np.full((2, 2), 7.5))  # centre 1.5, 1.5
    # rows 0 and 6 of a 4-row image: the second is outside -> extrapolation value
    np.testing.assert_allclose(out[2, 0], [[0, 3], [-1, -1]])


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor"])
def test_reference_matches_compiled(layout, method):
    rng = np.random.default_rng(3)
    shape = (3, 2, 9, 7) if layout == "NCHW" else (3, 9, 7, 2)
    img = rng.standard_normal(shape).astype("float32")
    boxes = rng.uniform(-0.2, 1.2, (4, 4)).astype("float32")
    idx = np.array([2, 0, 1, 2], "int32")
    f = _func(shape, 4, (5, 3), layout, method, ext=0.5)
    ref = relay.create_executor("debug").evaluate(f)(img, boxes, idx).numpy()
    got = relay.create_executor("graph", target="llvm").evaluate(f)(img, boxes, idx).numpy()
    assert got.shape == ((4, 2, 5, 3) if layout == "NCHW" else (4, 5, 3, 2))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)

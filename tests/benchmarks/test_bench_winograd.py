"""benchmarks/bench_winograd.py: its shape syntax, and one layer's three forms agree."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_winograd  # noqa: E402


def test_parse_shape():
    assert bench_winograd.parse_shape("512@7") == (512, 512, 7)
    assert bench_winograd.parse_shape("448-384@8") == (448, 384, 8)
    for bad in ("512", "a@7", "64-@x"):
        with pytest.raises(SystemExit, match="bad shape"):
            bench_winograd.parse_shape(bad)
    for s in bench_winograd.SHAPES:
        c, o, h = bench_winograd.parse_shape(s)
        assert c > 0 and o > 0 and h > 0


def test_build_forms_compute_the_layer():
    """The three forms (checked against each other inside build_forms, rtol 1e-4) compute
    conv3x3(pad 1) + bias + relu: the direct one against NumPy, from the same seeded draws."""
    c, o, h = 16, 24, 6
    gms = bench_winograd.build_forms(c, o, h, np.random.default_rng(1))
    assert set(gms) == {"never", 2, 4}
    rng = np.random.default_rng(1)  # build_forms draws the weight, the bias, then the input
    w = (rng.standard_normal((o, c, 3, 3)) * 0.05).astype("float32")
    b = rng.standard_normal((o,)).astype("float32")
    x = rng.standard_normal((1, c, h, h)).astype("float32")
    xp = np.pad(x[0].astype("float64"), ((0, 0), (1, 1), (1, 1)))
    ref = np.zeros((o, h, h))
    for dy in range(3):
        for dx in range(3):
            ref += np.einsum("oc,chw->ohw", w[:, :, dy, dx], xp[:, dy:dy + h, dx:dx + h])
    ref = np.maximum(ref + b[:, None, None], 0)
    np.testing.assert_allclose(gms["never"].get_output(0).numpy()[0], ref, rtol=1e-4, atol=1e-5)
    best = bench_winograd.time_cold(gms, rounds=1, flush_bytes=1 << 20, clock=lambda: 0.0)
    assert set(best) == set(gms)

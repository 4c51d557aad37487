"""NumPy references shared by the quantization tests."""

import numpy as np


def conv3x3_same(x, w):
    """NCHW data ``x`` convolved with OIHW 3x3 weights ``w``, stride 1, padding 1, in float64
    (the float result a quantized convolution is measured against)."""
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, c, h, wd = x.shape
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out

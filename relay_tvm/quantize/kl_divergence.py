"""Threshold search by KL-divergence minimization (TensorRT's calibration, Migacz, "8-bit
Inference with TensorRT", GTC 2017; the variant of MXNet's and tvm.relay 0.19's calibrate.cc).

For a histogram of ``num_bins`` bins over ``[-t, t]`` and each candidate half-width ``i``
(from ``num_quantized_bins // 2`` to ``num_bins // 2``), the reference distribution ``p`` is
the central ``2i + 1`` bins with the mass outside folded into its two end bins, and the
candidate ``q`` is the same bins merged into ``num_quantized_bins`` groups, each group's mass
spread evenly over its non-empty bins (bins empty in ``p`` stay empty). Both are smoothed
(``eps = 1e-4`` moved onto the empty bins) and normalized; the threshold is the right edge of
the window minimizing ``KL(p || q)``.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-4


def smooth_distribution(p, eps: float = EPS):
    """``p`` with ``eps`` added to every zero bin and the same total taken evenly from the
    non-zero bins; None when ``p`` is all zeros or that would make a bin non-positive."""
    is_zero = p == 0
    n_zeros = int(is_zero.sum())
    n_nonzeros = p.size - n_zeros
    if n_nonzeros == 0:
        return None
    eps1 = eps * n_zeros / n_nonzeros
    if eps1 >= 1.0:
        return None
    return p + eps * is_zero - eps1 * (~is_zero)


def _kl(p, q) -> float:
    p = p / p.sum()
    q = q / q.sum()
    return float(np.sum(p * np.log(p / q)))


def kl_objective(hist, half_width: int, num_quantized_bins: int) -> float:
    """``KL(p || q)`` of the window of half-width ``half_width`` around the middle bin of
    ``hist`` (see the module docstring); ``inf`` when ``q`` cannot be smoothed."""
    hist = np.asarray(hist, dtype=np.float64)
    num_bins = hist.size
    zero = num_bins // 2
    start, stop = zero - half_width, zero + half_width + 1
    sliced = hist[start:stop].copy()
    sliced[0] = 0.0  # the first bin of the window belongs to the folded left tail
    p = sliced.copy()
    p[0] = hist[: start + 1].sum()
    p[-1] += hist[stop:].sum()
    n = sliced.size
    merged = n // num_quantized_bins
    body = num_quantized_bins * merged
    # the last group also takes the bins left over by the even split
    qbins = sliced[:body].reshape(num_quantized_bins, merged).sum(axis=1)
    qbins[-1] += sliced[body:].sum()
    nz = sliced != 0
    norm = nz[:body].reshape(num_quantized_bins, merged).sum(axis=1).astype(np.float64)
    norm[-1] += nz[body:].sum()
    per_group = np.divide(qbins, norm, out=np.zeros_like(qbins), where=norm > 0)
    per_bin = np.empty(n)
    per_bin[:body] = np.repeat(per_group, merged)
    per_bin[body:] = per_group[-1]
    q = np.where(p != 0, per_bin, 0.0)
    ps, qs = smooth_distribution(p), smooth_distribution(q)
    if qs is None or ps is None:
        return float("inf")
    return _kl(ps, qs)


def minimize_kl(hist, hist_edges, num_quantized_bins: int = 255) -> float:
    """The threshold (a right edge of ``hist_edges``) whose window minimizes the KL divergence.

    Args:
        hist: counts of ``num_bins`` bins (odd, symmetric around 0).
        hist_edges: the ``num_bins + 1`` bin edges.
        num_quantized_bins: levels of the quantized type (255 for int8).

    Returns:
        The threshold, a positive float.
    """
    hist = np.asarray(hist, dtype=np.float64)
    num_bins = hist.size
    zero = num_bins // 2
    half = num_quantized_bins // 2
    best, best_i = float("inf"), half
    for i in range(half, zero + 1):
        d = kl_objective(hist, i, num_quantized_bins)
        if d < best:
            best, best_i = d, i
    return float(hist_edges[zero + best_i + 1])


def _find_scale_by_kl(arr, quantized_dtype="int8", num_bins=8001, num_quantized_bins=255):
    """The KL-optimal threshold of the values ``arr`` (histogram of ``num_bins`` bins over
    ``[-max|arr|, max|arr|]``)."""
    arr = np.asarray(arr)
    min_val, max_val = float(np.min(arr)), float(np.max(arr))
    thres = max(abs(min_val), abs(max_val))
    if thres == 0:
        return 0.0
    if min_val >= 0 and quantized_dtype in ("uint8",):
        num_quantized_bins = num_quantized_bins * 2 + 1
    hist, edges = np.histogram(arr, bins=num_bins, range=(-thres, thres))
    return minimize_kl(hist, edges, num_quantized_bins)

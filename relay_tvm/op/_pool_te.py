"""TE computes of pooling with NumPy semantics on special values (see ``nn_pool``).

``topi.nn.pool*`` max pooling drops NaN and pads with the lowest finite value (an all ``-inf``
window gives ``-3.4e38``), and with ``dilation`` > 1 and ``count_include_pad=False`` its average
pooling divides by the wrong tap count. Here a window tap ``o * stride - pad_before + j *
dilation`` outside the input is skipped (max) or counted only when inside the padded input and
``count_include_pad`` (avg); max pooling reduces with the NaN-propagating reducer whose identity
is ``-inf``. Any layout that is a permutation of ``N``, ``C`` and the spatial letters works, with
the channels blocked or not (``NCHW16c``: the block is one more kept axis).
"""

from __future__ import annotations

from ._ieee import lowest, reducer


def _positions(layout, spatial):
    """The axis positions of the ``spatial`` letters in ``layout`` (``NCHW16c``: H 2, W 3)."""
    from .shape_ops import parse_layout

    names = [a if f is None else None for a, f in parse_layout(layout, "pool")]
    return [names.index(c) for c in spatial]


def _ceildiv(a, b):
    from tvm import tirx

    return tirx.floordiv(a + (b - 1), b)


def _sizes(x, pos):
    """The extents of ``x`` along axes ``pos``: ints where static, the symbolic ``PrimExpr``
    of a kernel with ``Any`` dimensions elsewhere."""
    from ._common import out_dims

    return out_dims([x.shape[p] for p in pos])


def window_pool(x, kind, layout, spatial, k, s, d, before, after, out_shape,
                count_include_pad=False):
    """Max or average pooling of ``x`` (layout ``layout``, spatial letters ``spatial``) with
    pool sizes ``k``, strides ``s``, dilations ``d`` and pads ``before``/``after``, to
    ``out_shape`` (ceil_mode is already in it; symbolic where the input's spatial extents are:
    the VM's kernels of ``Any`` height/width)."""
    from tvm import te, tirx

    nd = len(spatial)
    pos = _positions(layout, spatial)
    size = _sizes(x, pos)
    raxes = [te.reduce_axis((0, k[i]), name=f"r{i}") for i in range(nd)]
    dt = x.dtype

    def taps(idx):
        full, conds = list(idx), []
        for i, p in enumerate(pos):
            t = idx[p] * s[i] - before[i] + raxes[i] * d[i]
            full[p] = t
            conds.append(tirx.all(t >= 0, t < size[i]))
        return full, tirx.all(*conds) if len(conds) > 1 else conds[0]

    if kind == "max":
        red = reducer("max", dt)

        def fmax(*idx):
            full, inside = taps(idx)
            safe = [tirx.if_then_else(inside, v, 0) if i in pos else v
                    for i, v in enumerate(full)]
            return red(tirx.if_then_else(inside, x(*safe), lowest(dt)), axis=raxes)

        return te.compute(out_shape, fmax, name="pool_max", tag="pool_max")

    acc_dt = dt if str(dt).startswith("float") else "float64"  # ints: exact, then truncated

    def fsum(*idx):
        full, inside = taps(idx)
        safe = [tirx.if_then_else(inside, v, 0) if i in pos else v for i, v in enumerate(full)]
        val = tirx.if_then_else(inside, x(*safe).astype(acc_dt), tirx.const(0, acc_dt))
        return te.sum(val, axis=raxes)

    total = te.compute(out_shape, fsum, name="pool_sum", tag="pool_sum")

    def count(idx):
        n = tirx.const(1, "int32")
        for i, p in enumerate(pos):
            a = idx[p] * s[i] - before[i]  # first tap
            lo, hi = (-before[i], size[i] + after[i]) if count_include_pad else (0, size[i])
            first = tirx.max(0, _ceildiv(lo - a, d[i]))
            last = tirx.min(k[i] - 1, tirx.floordiv(hi - 1 - a, d[i]))
            n = n * tirx.max(last - first + 1, 0)
        return tirx.max(n, 1)

    def favg(*idx):
        return (total(*idx) / count(idx).astype(acc_dt)).astype(dt)

    return te.compute(out_shape, favg, name="pool_avg", tag="elemwise")


def adaptive_max_pool(x, layout, spatial, osz, out_shape):
    """Adaptive max pooling: output ``o`` of ``O`` covers input ``[floor(o*S/O),
    ceil((o+1)*S/O))`` along each spatial axis; NaN propagates."""
    from tvm import te, tirx

    nd = len(spatial)
    pos = _positions(layout, spatial)
    size = _sizes(x, pos)
    # the widest window; a symbolic size (the VM's Any height/width) gets the bound
    # ceil(S/O) + 1, the taps past a window's end masked below
    widths = [max(-((-(o + 1) * size[i]) // osz[i]) - (o * size[i] // osz[i])
                  for o in range(osz[i])) if isinstance(size[i], int)
              else _ceildiv(size[i], osz[i]) + 1 for i in range(nd)]
    raxes = [te.reduce_axis((0, widths[i]), name=f"r{i}") for i in range(nd)]
    red = reducer("max", x.dtype)

    def f(*idx):
        full, conds = list(idx), []
        for i, p in enumerate(pos):
            start = tirx.floordiv(idx[p] * size[i], osz[i])
            end = _ceildiv((idx[p] + 1) * size[i], osz[i])
            t = start + raxes[i]
            conds.append(t < end)
            full[p] = tirx.min(t, size[i] - 1)
        inside = tirx.all(*conds) if len(conds) > 1 else conds[0]
        return red(tirx.if_then_else(inside, x(*full), lowest(x.dtype)), axis=raxes)

    return te.compute(out_shape, f, name="adaptive_pool_max", tag="adaptive_pool_max")

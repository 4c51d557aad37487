"""Winograd convolution (tvm.relay.nn): ``nn.contrib_conv2d_winograd_weight_transform`` and
``nn.contrib_conv2d_winograd_without_weight_transform``.

Winograd's minimal filtering F(m x m, r x r) (Lavin and Gray, "Fast Algorithms for Convolutional
Neural Networks", CVPR 2016) computes an ``m x m`` output tile of a stride-1 ``r x r``
convolution from an ``alpha x alpha`` input tile, ``alpha = m + r - 1``, as
``Y = A^T [(G g G^T) . (B^T d B)] A`` summed over input channels. F(4x4, 3x3) needs 36
multiplications per tile and channel pair instead of 144; F(2x2, 3x3) needs 16 instead of 36.
The matrices ``A`` (alpha x m), ``B`` (alpha x alpha), ``G`` (alpha x r) are topi's
(``topi.nn.winograd_util``: Cook-Toom with the interpolation points of Barabasz et al.).

- ``contrib_conv2d_winograd_weight_transform(weight, tile_size)``: ``weight`` (O, I, r, r)
  -> ``U = G g G^T`` of shape (alpha, alpha, O, I) (Relay's shape; TE compute that of
  ``topi.nn.conv2d_winograd_weight_transform``). With a constant weight, FoldConstant computes
  it once at build time.
- ``contrib_conv2d_winograd_without_weight_transform(data, weight, tile_size, ...)``: the
  convolution from a transformed weight; attributes are ``nn.conv2d``'s plus ``tile_size``;
  ``strides`` and ``dilation`` must be 1 and ``groups`` 1. Layouts: data ``NCHW`` (N, C, H, W)
  or ``NCHW{c}c`` (N, C/c, H, W, c); the output has ``out_layout`` (default: the data layout),
  ``NCHW`` or ``NCHW{k}c``; the weight is ``kernel_layout="OIHW"`` (alpha, alpha, O, I), the
  weight transform's result, or ``"OIHW{k}o"`` (alpha, alpha, O/k, I, k), the same packed by
  output-channel blocks (what AlterOpLayout makes for the CPU schedule, the packing folded at
  build time), or ``"OIHW{k}o2i"`` (alpha, alpha, O/k, I/2, k, 2), integer weights with the
  input channels in pairs (our extension, for int16 x int16 -> int32 with tile_size 2, whose
  transforms are integer): the transformed input is then held in int16 and the GEMM multiplies
  int16 pairs (x86 ``vpmaddwd``), exact while ``|data| <= 8191`` (AlterOpLayout makes it only
  for quantized convolutions whose data it proves 8-bit-sized, ``transform/winograd_int.py``).
  ``kernel_size`` is ``alpha - tile_size + 1``.

AlterOpLayout (opt level 3) rewrites an eligible ``nn.conv2d`` into this pair when its cost model
says Winograd is faster (:mod:`relay_tvm.transform.layout`).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType
from ._common import shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

OP_WT = "nn.contrib_conv2d_winograd_weight_transform"
OP = "nn.contrib_conv2d_winograd_without_weight_transform"

_BLOCKED = re.compile(r"^NCHW(\d+)c$")
_PACKED_KERNEL = re.compile(r"^OIHW(\d+)o(2i)?$")

_WT_ATTRS = ("relay.attrs.ConvWinogradWeightTransformAttrs", [F("tile_size", "int", 4)])
_ATTRS = (
    "relay.attrs.Conv2DWinogradAttrs",
    [
        F("tile_size", "int", 4),
        F("strides", "ints", (1, 1)),
        F("padding", "ints", (0, 0)),
        F("dilation", "ints", (1, 1)),
        F("groups", "int", 1),
        F("channels", "int?", None),
        F("kernel_size", "ints?", None),
        F("data_layout", "str", "NCHW"),
        F("kernel_layout", "str", "OIHW"),
        F("out_layout", "str", ""),
        F("out_dtype", "dtype", ""),
    ],
)


@functools.lru_cache(maxsize=None)
def transform_matrices(tile_size: int, kernel_size: int):
    """``(A, B, G)`` as float64 NumPy arrays of shapes (alpha, m), (alpha, alpha), (alpha, r):
    the values ``topi.nn.winograd_transform_matrices`` builds its TE constants from.

    Raises:
        TypeInferenceError: ``tile_size`` not in 2..8 or ``kernel_size`` not in 3..7 (topi's
            range).
    """
    from tvm.topi.nn.winograd_util import _cook_toom_convolution, _interpolation_points

    if not 1 < tile_size < 9 or not 2 < kernel_size < 8:
        raise TypeInferenceError(
            f"Winograd: tile_size must be in 2..8 and kernel_size in 3..7, got tile_size="
            f"{tile_size}, kernel_size={kernel_size}"
        )
    pts = _interpolation_points(tile_size + kernel_size - 2)
    a, b, g = _cook_toom_convolution(pts, tile_size, kernel_size)
    return (np.asarray(a, "float64"), np.asarray(b, "float64"), np.asarray(g, "float64"))


def _pair(v):
    v = (v,) if isinstance(v, int) else tuple(v)
    return v * 2 if len(v) == 1 else v


def _pad4(p):
    p = (p,) if isinstance(p, int) else tuple(p)
    if len(p) not in (1, 2, 4):
        raise TypeInferenceError(f"{OP}: padding must have 1, 2 or 4 values, got {p}")
    if len(p) == 1:
        return p * 4
    return (p[0], p[1], p[0], p[1]) if len(p) == 2 else p


def _block(layout: str, what: str):
    """None for ``NCHW``, the block ``c`` for ``NCHW{c}c``."""
    if layout == "NCHW":
        return None
    m = _BLOCKED.match(layout)
    if m is None:
        raise TypeInferenceError(f"{OP}: {what} must be NCHW or NCHW<n>c, got {layout!r}")
    return int(m.group(1))


def _kernel_block(layout: str):
    """``(block, pairs)``: the output-channel block (None for ``OIHW``) and whether the input
    channels are packed in pairs (``OIHW{k}o2i``)."""
    if layout == "OIHW":
        return None, False
    m = _PACKED_KERNEL.match(layout)
    if m is None:
        raise TypeInferenceError(
            f"{OP}: kernel_layout must be OIHW (alpha, alpha, O, I), OIHW<n>o (alpha, alpha, "
            f"O/n, I, n) or OIHW<n>o2i (alpha, alpha, O/n, I/2, n, 2), got {layout!r}"
        )
    return int(m.group(1)), m.group(2) is not None


# ---- weight transform --------------------------------------------------------------------------


def _wt_rel(types, attrs):
    args = tensor_args(types, ("weight",), OP_WT)
    if args is None:
        return None
    (w,) = args
    if w.ndim != 4 or not all(isinstance(d, int) for d in w.shape[2:]) or w.shape[2] != w.shape[3]:
        raise TypeInferenceError(
            f"{OP_WT}: weight must be 4-d OIHW with a static square kernel, got "
            f"{shape_str(w.shape)}"
        )
    transform_matrices(attrs.tile_size, w.shape[2])
    alpha = attrs.tile_size + w.shape[2] - 1
    return TensorType((alpha, alpha, w.shape[0], w.shape[1]), w.dtype)


def _wt_ref(args, attrs, out_type):
    (w,) = args
    _, _, g = transform_matrices(attrs.tile_size, w.shape[2])
    o, i, r, _ = w.shape
    alpha = g.shape[0]
    # one (alpha^2, r^2) x (r^2, O I) product: kron(G, G)[a alpha + b, r' r + s] = G[a, r'] G[b, s],
    # in the weight's precision (at least float32: 9 terms, ~1e-7 relative; build-time speed)
    dt = np.promote_types(w.dtype, np.float32)
    u = np.kron(g, g).astype(dt) @ w.reshape(o * i, r * r).astype(dt, copy=False).T
    return u.reshape(alpha, alpha, o, i).astype(out_type.dtype, copy=False)


def _wt_compute(attrs, inputs, out_type):
    """``topi.nn.conv2d_winograd_weight_transform``'s compute (whose memoized matrix helper
    rejects TVM 0.27's dtype objects), with the same ``G``."""
    from tvm import te
    from tvm.topi.utils import const_matrix

    (w,) = inputs
    r = int(w.shape[2])
    alpha = attrs.tile_size + r - 1
    dtype = out_type.dtype
    g = const_matrix(transform_matrices(attrs.tile_size, r)[2].astype(dtype), "G")
    rh = te.reduce_axis((0, r), name="r_kh")
    rw = te.reduce_axis((0, r), name="r_kw")
    return te.compute(
        (alpha, alpha, w.shape[0], w.shape[1]),
        lambda a, b, o, i: te.sum(w[o, i, rh, rw].astype(dtype) * g[a, rh] * g[b, rw],
                                  axis=[rh, rw]),
        name="transform_weight")


register_op(
    OP_WT,
    num_inputs=1,
    arguments=("weight",),
    attrs=_WT_ATTRS,
    rel=_wt_rel,
    ref=_wt_ref,
    compute=_wt_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Winograd weight transform G g G^T: (O, I, r, r) -> (alpha, alpha, O, I) "
        "(as topi.nn.conv2d_winograd_weight_transform).",
    level=10,
)


# ---- convolution from the transformed weight ----------------------------------------------------


def geometry(attrs, data_shape, weight_shape):
    """``dict`` of the convolution's sizes from the attributes and the argument shapes:
    ``N, C, H, W, O, r, m, alpha, OH, OW, nH, nW, pads, ic, ob, oc, pairs`` (``ic``, ``ob``,
    ``oc`` the data, packed-weight and output blocks, None when unblocked; ``pairs`` whether
    the weight packs input channels in pairs, ``OIHW{k}o2i``).

    Raises:
        TypeInferenceError: attributes or shapes that do not describe a stride-1, dilation-1,
            groups-1 Winograd convolution.
    """
    if tuple(_pair(attrs.strides)) != (1, 1) or tuple(_pair(attrs.dilation)) != (1, 1) or \
            attrs.groups != 1:
        raise TypeInferenceError(
            f"{OP}: needs strides (1, 1), dilation (1, 1) and groups 1, got strides="
            f"{tuple(attrs.strides)}, dilation={tuple(attrs.dilation)}, groups={attrs.groups}"
        )
    ic = _block(attrs.data_layout, "data_layout")
    oc = _block(attrs.out_layout or attrs.data_layout, "out_layout")
    ob, pairs = _kernel_block(attrs.kernel_layout)
    if len(data_shape) != (4 if ic is None else 5):
        raise TypeInferenceError(
            f"{OP}: data must be {attrs.data_layout}, got shape {shape_str(data_shape)}"
        )
    n, cb, h, w = data_shape[:4]
    c = cb * (ic or 1)
    rank = 4 if ob is None else 6 if pairs else 5
    if len(weight_shape) != rank:
        raise TypeInferenceError(
            f"{OP}: weight must be {rank}-d for kernel_layout "
            f"{attrs.kernel_layout!r}, got {shape_str(weight_shape)}"
        )
    alpha = weight_shape[0]
    o = weight_shape[2] * (ob or 1)
    wi = weight_shape[3] * (2 if pairs else 1)
    if pairs and (tuple(weight_shape[4:]) != (ob, 2)):
        raise TypeInferenceError(
            f"{OP}: weight {shape_str(weight_shape)} is not (alpha, alpha, O/{ob}, I/2, {ob}, 2) "
            f"for kernel_layout {attrs.kernel_layout!r}")
    m = attrs.tile_size
    r = alpha - m + 1
    if weight_shape[1] != alpha or wi != c or (ob is not None and weight_shape[4] != ob):
        if pairs:
            raise TypeInferenceError(
                f"{OP}: weight {shape_str(weight_shape)} ({attrs.kernel_layout}) does not fit "
                f"data {shape_str(data_shape)} ({attrs.data_layout}): expected (alpha, alpha, "
                f"O/{ob}, {c // 2}, {ob}, 2)")
        raise TypeInferenceError(
            f"{OP}: weight {shape_str(weight_shape)} ({attrs.kernel_layout}) does not fit data "
            f"{shape_str(data_shape)} ({attrs.data_layout}): expected (alpha, alpha, O, {c})"
            + ("" if ob is None else f" packed as (alpha, alpha, O/{ob}, {c}, {ob})")
        )
    a_m, b_m, _ = transform_matrices(m, r)
    if pairs and not (np.array_equal(a_m, np.round(a_m)) and np.array_equal(b_m, np.round(b_m))):
        raise TypeInferenceError(
            f"{OP}: kernel_layout {attrs.kernel_layout!r} (integer pairs) needs integer input and "
            f"output transforms: tile_size 2 for a 3x3 kernel, got tile_size {m}")
    if pairs and c % 2:
        raise TypeInferenceError(f"{OP}: kernel_layout {attrs.kernel_layout!r} needs an even "
                                 f"number of input channels, got {c}")
    if attrs.kernel_size is not None and tuple(_pair(attrs.kernel_size)) != (r, r):
        raise TypeInferenceError(
            f"{OP}: kernel_size {tuple(attrs.kernel_size)} does not match the weight's alpha "
            f"{alpha} and tile_size {m} (kernel {r}x{r})"
        )
    if attrs.channels is not None and attrs.channels != o:
        raise TypeInferenceError(f"{OP}: channels={attrs.channels} but the weight has {o}")
    if oc is not None and o % oc:
        raise TypeInferenceError(f"{OP}: out_layout NCHW{oc}c does not divide {o} channels")
    pt, pl, pb, pr = _pad4(attrs.padding)
    oh, ow = h + pt + pb - r + 1, w + pl + pr - r + 1
    if oh < 1 or ow < 1:
        raise TypeInferenceError(f"{OP}: the {r}x{r} kernel does not fit the padded input")
    return dict(N=n, C=c, H=h, W=w, O=o, r=r, m=m, alpha=alpha, OH=oh, OW=ow,
                nH=-(-oh // m), nW=-(-ow // m), pads=(pt, pl, pb, pr), ic=ic, ob=ob, oc=oc,
                pairs=pairs)


def _rel(types, attrs):
    data, weight = types
    if isinstance(data, IncompleteType) or isinstance(weight, IncompleteType):
        return None
    data, weight = tensor_args([data, weight], ("data", "weight"), OP)
    if not all(isinstance(d, int) for d in (*data.shape, *weight.shape)):
        raise TypeInferenceError(f"{OP}: needs static shapes, got data "
                                 f"{shape_str(data.shape)}, weight {shape_str(weight.shape)}")
    g = geometry(attrs, data.shape, weight.shape)
    oc = g["oc"]
    shape = (g["N"], g["O"], g["OH"], g["OW"]) if oc is None else \
        (g["N"], g["O"] // oc, g["OH"], g["OW"], oc)
    return TensorType(shape, attrs.out_dtype or data.dtype)


def _to_nchw(x, block):
    if block is None:
        return x
    n, cb, h, w, c = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, cb * c, h, w)


def _ref(args, attrs, out_type):
    data, weight = args
    g = geometry(attrs, data.shape, weight.shape)
    a_m, b_m, _ = transform_matrices(g["m"], g["r"])
    x = _to_nchw(data, g["ic"]).astype("float64")
    u = weight.astype("float64")
    if g["pairs"]:  # (alpha, alpha, O/k, I/2, k, 2) -> (alpha, alpha, O, I)
        al, _, ko, i2, k, _ = u.shape
        u = u.transpose(0, 1, 2, 4, 3, 5).reshape(al, al, ko * k, i2 * 2)
    elif g["ob"] is not None:  # (alpha, alpha, O/k, I, k) -> (alpha, alpha, O, I)
        al, _, ko, i, k = u.shape
        u = u.transpose(0, 1, 2, 4, 3).reshape(al, al, ko * k, i)
    m, r, alpha, nh, nw = g["m"], g["r"], g["alpha"], g["nH"], g["nW"]
    pt, pl, _, _ = g["pads"]
    hp, wp = nh * m + r - 1, nw * m + r - 1
    xp = np.zeros((g["N"], g["C"], hp, wp))
    h_in, w_in = min(g["H"], hp - pt), min(g["W"], wp - pl)
    xp[:, :, pt:pt + h_in, pl:pl + w_in] = x[:, :, :h_in, :w_in]
    # tiles d[n, c, th, tw, alpha, alpha] overlapping by r - 1
    tiles = np.lib.stride_tricks.as_strided(
        xp, (g["N"], g["C"], nh, nw, alpha, alpha),
        xp.strides[:2] + (xp.strides[2] * m, xp.strides[3] * m) + xp.strides[2:])
    if g["pairs"]:  # integers all the way, the input transform held in int16 (see compute)
        b_i, a_i, u = b_m.astype("int64"), a_m.astype("int64"), u.astype("int64")
        v = np.einsum("ra,nctwrs,sb->abntwc", b_i, tiles.astype("int64"), b_i)
        if data.dtype == np.int16:
            v = v.astype("int16").astype("int64")
        mm = np.einsum("abntwc,aboc->abntwo", v, u).astype("int32").astype("int64")
        y = np.einsum("ai,abntwo,bj->notiwj", a_i, mm, a_i)
    else:
        v = np.einsum("ra,nctwrs,sb->abntwc", b_m, tiles, b_m, optimize=True)
        mm = np.einsum("abntwc,aboc->abntwo", v, u, optimize=True)
        y = np.einsum("ai,abntwo,bj->notiwj", a_m, mm, a_m, optimize=True)
    y = y.reshape(g["N"], g["O"], nh * m, nw * m)[:, :, :g["OH"], :g["OW"]]
    oc = g["oc"]
    if oc is not None:
        y = y.reshape(g["N"], g["O"] // oc, oc, g["OH"], g["OW"]).transpose(0, 1, 3, 4, 2)
    return np.ascontiguousarray(y).astype(out_type.dtype)


def _sparse_sum(coefs, term, dtype):
    """``sum_k coefs[k] * term(k)`` over the nonzero coefficients, as a TIR expression."""
    import tvm

    out = None
    for k, c in coefs:
        t = term(k)
        if c != 1.0:  # integer transforms (pairs) only reach here with integer coefficients
            t = t * tvm.tirx.const(int(c) if "int" in str(dtype) else c, dtype)
        out = t if out is None else out + t
    return out if out is not None else tvm.tirx.const(0, dtype)


def _select(i, n, expr_of):
    """``expr_of(k)`` for the loop variable ``i`` as nested ``if_then_else`` on its value: once
    the schedule unrolls ``i``, the simplifier keeps one branch, so each element computes only
    its own nonzero terms."""
    import tvm

    out = expr_of(n - 1)
    for k in range(n - 2, -1, -1):
        out = tvm.tirx.if_then_else(i == k, expr_of(k), out)
    return out


def _narrow(expr, narrow):
    return expr.astype("int16") if narrow else expr


def _column(mat, col):
    """``[(row, value)]`` of the nonzero entries of column ``col``."""
    return [(r, float(mat[r, col])) for r in range(mat.shape[0]) if mat[r, col] != 0]


def winograd_compute(data, weight, attrs, out_dtype):
    """TE compute of the convolution, in stages: the padded input ``data_pad``; the input
    transform ``B^T d B`` of each tile ``p`` (N x nH x nW tiles) and input channel, as two
    one-sided products (``data_tmp[a, s, p, c] = (B^T d)[a, s]``, then ``data_pack[a, b, p, c]
    = (data_tmp B)[a, b]``); the batched GEMM ``bgemm[a, b, p, o] = sum_c data_pack[a, b, p, c]
    * U[a, b, o, c]``; the output transform ``A^T M A``, again one side at a time
    (``inverse_tmp[i, b, p, o] = (A^T M)[i, b]``, then the output element ``(h, w)`` of tile
    ``p`` is ``(inverse_tmp A)[h % m, w % m]``). The transforms are sums of their nonzero terms
    selected by the tile position (injective blocks): a schedule that unrolls the tile axes
    computes no multiplication by zero."""
    from tvm import te, topi

    g = geometry(attrs, tuple(int(d) for d in data.shape), tuple(int(d) for d in weight.shape))
    a_m, b_m, _ = transform_matrices(g["m"], g["r"])
    m, r, alpha, nh, nw = g["m"], g["r"], g["alpha"], g["nH"], g["nW"]
    n_, c_, o_, ic, ob, oc = g["N"], g["C"], g["O"], g["ic"], g["ob"], g["oc"]
    # int16 pairs (OIHW{k}o2i): the transformed input is narrowed back to int16 so that the
    # GEMM multiplies int16 pairs into int32 (vpmaddwd); exact while |data| * (the input
    # transform's largest row sum)^2 <= 32767, which AlterOpLayout proves before choosing it
    narrow = g["pairs"] and str(data.dtype) == "int16" and str(weight.dtype) == "int16"
    pt, pl, _, _ = g["pads"]
    hp, wp = nh * m + r - 1, nw * m + r - 1
    acc = out_dtype
    if ic is None:
        before, after = (0, 0, pt, pl), (0, 0, hp - g["H"] - pt, wp - g["W"] - pl)
    else:
        before, after = (0, 0, pt, pl, 0), (0, 0, hp - g["H"] - pt, wp - g["W"] - pl, 0)
    dpad = topi.nn.pad(data, before, after, name="data_pad")

    def d(n, c, y, x):
        v = dpad[n, c, y, x] if ic is None else dpad[n, c // ic, y, x, c % ic]
        return v.astype(acc)

    def data_tmp_fn(a, s, p, c):
        n, y0, x0 = p // (nh * nw), (p // nw) % nh * m, p % nw * m
        return _select(a, alpha, lambda ai: _sparse_sum(
            _column(b_m, ai), lambda ri: d(n, c, y0 + ri, x0 + s), acc))

    p_ = n_ * nh * nw
    data_tmp = te.compute((alpha, alpha, p_, c_), data_tmp_fn, name="data_tmp")
    data_pack = te.compute(
        (alpha, alpha, p_, c_),
        lambda a, b, p, c: _narrow(_select(b, alpha, lambda bi: _sparse_sum(
            _column(b_m, bi), lambda si: data_tmp[a, si, p, c], acc)), narrow),
        name="data_pack", tag="winograd_data_pack")
    k = te.reduce_axis((0, c_), name="rc")
    if ob is None:
        def wt(a, b, o, c):
            return weight[a, b, o, c]
    elif g["pairs"]:
        def wt(a, b, o, c):
            return weight[a, b, o // ob, c // 2, o % ob, c % 2]
    else:
        def wt(a, b, o, c):
            return weight[a, b, o // ob, c, o % ob]
    bgemm = te.compute(
        (alpha, alpha, p_, o_),
        lambda a, b, p, o: te.sum(data_pack[a, b, p, k].astype(acc) * wt(a, b, o, k).astype(acc),
                                  axis=k),
        name="bgemm", tag="winograd_bgemm")
    inverse_tmp = te.compute(
        (m, alpha, p_, o_),
        lambda i, b, p, o: _select(i, m, lambda hi: _sparse_sum(
            _column(a_m, hi), lambda ai: bgemm[ai, b, p, o], acc)),
        name="inverse_tmp")

    def out_fn(n, o, y, x):
        p = (n * nh + y // m) * nw + x // m
        return _select(x % m, m, lambda wi: _sparse_sum(
            _column(a_m, wi), lambda bi: inverse_tmp[y % m, bi, p, o], acc))

    if oc is None:
        shape = (n_, o_, g["OH"], g["OW"])
        fn = out_fn
    else:
        shape = (n_, o_ // oc, g["OH"], g["OW"], oc)

        def fn(n, ob_, y, x, c):
            return out_fn(n, ob_ * oc + c, y, x)

    return te.compute(shape, fn, name="conv2d_winograd", tag="conv2d_winograd")


def _compute(attrs, inputs, out_type):
    return winograd_compute(inputs[0], inputs[1], attrs, out_type.dtype)


register_op(
    OP,
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=_ATTRS,
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Winograd 2-D convolution from a transformed weight (see the module docstring).",
    level=10,
    schedule="conv2d_winograd",
)


def contrib_conv2d_winograd_weight_transform(weight, tile_size):
    """Winograd weight transform ``U = G g G^T`` (tvm.relay.nn).

    Args:
        weight: (O, I, r, r) OIHW kernel, float.
        tile_size: output tile edge ``m``: 4 for F(4x4, 3x3), 2 for F(2x2, 3x3).

    Returns:
        a call of type (alpha, alpha, O, I), ``alpha = m + r - 1``, the weight's dtype.
    """
    return make_call(OP_WT, [weight], tile_size=int(tile_size))


def contrib_conv2d_winograd_without_weight_transform(
        data, weight, tile_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
        channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW",
        out_layout="", out_dtype=""):
    """Winograd 2-D convolution from a transformed weight (tvm.relay.nn).

    Args:
        data: (N, C, H, W) for ``NCHW``, (N, C/c, H, W, c) for ``NCHW{c}c``.
        weight: (alpha, alpha, O, C) for ``kernel_layout="OIHW"`` (the weight transform's
            result), (alpha, alpha, O/k, C, k) for ``"OIHW{k}o"``, or (alpha, alpha, O/k,
            C/2, k, 2) for ``"OIHW{k}o2i"`` (integer pairs, tile_size 2; see the module doc).
        tile_size: output tile edge ``m`` the weight was transformed for.
        strides, dilation, groups: must be (1, 1), (1, 1), 1.
        padding: 1, 2 or 4 values (top, left, bottom, right), as ``nn.conv2d``.
        channels, kernel_size: optional checks (O and (r, r)).
        data_layout, out_layout: ``NCHW`` or ``NCHW{c}c``; ``out_layout`` defaults to the data's.
        out_dtype: output dtype (default the data's).

    Returns:
        a call of type (N, O, OH, OW) (or its ``out_layout`` blocked form), ``OH = H + pads - r
        + 1``.

    Raises:
        TypeInferenceError (at type inference): strides/dilation/groups other than 1, layouts or
            shapes that do not fit.
    """
    return make_call(OP, [data, weight], tile_size=int(tile_size), strides=tuple(_pair(strides)),
                     padding=tuple(_pad4(padding)), dilation=tuple(_pair(dilation)),
                     groups=groups, channels=channels,
                     kernel_size=tuple(_pair(kernel_size)) if kernel_size is not None else None,
                     data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout, out_dtype=out_dtype)


__all__ = [
    "contrib_conv2d_winograd_weight_transform",
    "contrib_conv2d_winograd_without_weight_transform",
]

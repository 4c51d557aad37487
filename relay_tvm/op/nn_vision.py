"""``nn.deformable_conv2d`` and ``nn.correlation`` (tvm.relay.nn), the two nn operators of the
detection and optical-flow networks.

- deformable_conv2d (Dai et al., "Deformable Convolutional Networks", 2017; MXNet
  ``_contrib_DeformableConvolution``): a convolution whose tap ``(kh, kw)`` at output ``(y, x)``
  reads data at ``(y*sh - pt + kh*dh + off_y, x*sw - pl + kw*dw + off_x)``: 0 when that point
  is outside ``[0, H) x [0, W)``, else the bilinear interpolation of its neighbours with the
  lower-right neighbour clamped to the last row/column, as MXNet's kernel (whose CPU version
  reads out of bounds for points in ``(-1, 0)``). tvm 0.19's topi differs there: a neighbour
  past the last row/column counts 0, so points in ``(H-1, H)`` or ``(W-1, W)`` fade towards 0
  (0.19's test_op_level5 deformable test_run, with offsets in ``[0, 1)``, differs only
  there). ``offset`` is ``(N, deformable_groups * KH * KW * 2, OH, OW)``, ``(y, x)`` pairs,
  tap-major within a deformable group; input channel ``c`` uses group
  ``c // (C / deformable_groups)``. Layouts: data (and offset, output) any permutation of
  NCHW, kernel any permutation of OIHW (NHWC / HWIO as topi.nn.deformable_conv2d_nhwc), as
  0.19's relation took; other than NCHW / OIHW they are transposed around the NCHW kernel.
- correlation (FlowNet, Dosovitskiy et al. 2015; MXNet ``Correlation``): for each displacement
  ``(dy, dx)`` in ``[-max_displacement, max_displacement]`` by ``stride2``, the mean over
  channels and a ``kernel_size`` window of ``data1 * data2`` (``is_multiply``) or
  ``|data1 - data2|``, at output stride ``stride1`` (topi.nn.correlation_nchw).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType
from ._common import dim_floordiv, out_dims, shape_str, tensor_args
from ._nn_common import dims_match, ntuple, out_size, pad_before_after
from .registry import OpPattern, make_call, register_op


def _layout_perm(layout: str, canon: str, what: str) -> tuple:
    """Axes of ``layout`` in ``canon``'s order: ``layout`` must be a permutation of ``canon``
    (0.19's relation took every layout convertible to NCHW / OIHW)."""
    if len(layout) != len(canon) or sorted(layout) != sorted(canon):
        raise TypeInferenceError(f"nn.deformable_conv2d: {what} {layout!r} is not supported; "
                                 f"expected a permutation of {canon} (such as "
                                 f"{'NHWC' if canon == 'NCHW' else 'HWIO'})")
    return tuple(layout.index(ch) for ch in canon)


def _layouts(attrs):
    """(data, kernel, out) permutations to NCHW / OIHW / NCHW."""
    out = attrs.out_layout or attrs.data_layout
    return (_layout_perm(attrs.data_layout, "NCHW", "data_layout"),
            _layout_perm(attrs.kernel_layout, "OIHW", "kernel_layout"),
            _layout_perm(out, "NCHW", "out_layout"))


def _to_layout(shape, perm) -> tuple:
    """A canonical-order ``shape`` (NCHW / OIHW) in the layout whose permutation is ``perm``."""
    out = [None] * len(perm)
    for canon_axis, axis in enumerate(perm):
        out[axis] = shape[canon_axis]
    return tuple(out)


def _deform_rel(types, attrs):
    """Types of 0.19's DeformableConv2DRel: data decides; the weight comes from ``channels``
    and ``kernel_size`` when both are given (else from its own type), and the offset's type is
    filled in from the output size."""
    op = "nn.deformable_conv2d"
    if isinstance(types[0], IncompleteType):
        return None
    (data,) = tensor_args(types[:1], ("data",), op)
    dperm, kperm, operm = _layouts(attrs)
    if data.ndim != 4:
        raise TypeInferenceError(f"{op}: data must be 4-d ({attrs.data_layout}), got "
                                 f"{shape_str(data.shape)}")
    n, c, h, w = (data.shape[i] for i in dperm)
    dg, g = attrs.deformable_groups, attrs.groups
    if isinstance(c, int) and (c % dg or c % g):
        raise TypeInferenceError(f"{op}: {c} input channels do not divide by deformable_groups="
                                 f"{dg} and groups={g}")
    fill = {}
    weight = types[2]
    if attrs.channels is not None and attrs.kernel_size is not None:
        kh, kw = attrs.kernel_size
        wshape = (attrs.channels, dim_floordiv(c, g), kh, kw)
        fill[2] = TensorType(_to_layout(wshape, kperm), data.dtype)
    elif isinstance(weight, IncompleteType):
        return None
    else:
        (weight,) = tensor_args([weight], ("weight",), op)
        if weight.ndim != 4:
            raise TypeInferenceError(f"{op}: weight must be 4-d ({attrs.kernel_layout}), got "
                                     f"{shape_str(weight.shape)}")
        wshape = tuple(weight.shape[i] for i in kperm)
        if isinstance(c, int) and isinstance(wshape[1], int) and wshape[1] * g != c:
            raise TypeInferenceError(f"{op}: weight {shape_str(weight.shape)} does not fit data "
                                     f"{shape_str(data.shape)} with groups={g}")
        if attrs.kernel_size is not None and tuple(attrs.kernel_size) != tuple(wshape[2:]):
            raise TypeInferenceError(f"{op}: kernel_size={list(attrs.kernel_size)} does not "
                                     f"match weight {shape_str(weight.shape)}")
        if attrs.channels is not None and attrs.channels != wshape[0]:
            raise TypeInferenceError(f"{op}: channels={attrs.channels} does not match weight "
                                     f"{shape_str(weight.shape)}")
    o, _, kh, kw = wshape
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    (pt, pl), (pb, pr) = pad_before_after(attrs.padding, 2, op)
    oh = out_size(h, kh, pt, pb, sh, dh)  # Any stays Any
    ow = out_size(w, kw, pl, pr, sw, dw)
    want = _to_layout((n, dg * kh * kw * 2, oh, ow), dperm)
    offset = types[1]
    if isinstance(offset, IncompleteType):
        fill[1] = TensorType(want, data.dtype)
    else:
        (offset,) = tensor_args([offset], ("offset",), op)
        if offset.ndim != 4 or not all(
                dims_match(a, b, f"offset dimensions and {shape_str(want)}")
                for a, b in zip(offset.shape, want)):
            raise TypeInferenceError(f"{op}: offset must have shape {shape_str(want)}, got "
                                     f"{shape_str(offset.shape)}")
    out = TensorType(_to_layout((n, o, oh, ow), operm), attrs.out_dtype or data.dtype)
    return (out, fill) if fill else out


def _geometry(attrs, data_shape, w_shape, off_shape):
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    (pt, pl), _ = pad_before_after(attrs.padding, 2, "nn.deformable_conv2d")
    return sh, sw, dh, dw, pt, pl


def _sample_clamped(img, y, x):
    """img (C, H, W) at real (y, x) arrays of one shape -> (C, *shape), float64."""
    h, w = img.shape[1:]
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    y = np.where(inside, y, 0.0)
    x = np.where(inside, x, 0.0)
    y0, x0 = np.floor(y).astype("int64"), np.floor(x).astype("int64")
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    ly, lx = y - y0, x - x0
    out = (img[:, y0, x0] * (1 - ly) * (1 - lx) + img[:, y0, x1] * (1 - ly) * lx
           + img[:, y1, x0] * ly * (1 - lx) + img[:, y1, x1] * ly * lx)
    return np.where(inside, out, 0.0)


def _deform_ref(args, attrs, out_type):
    dperm, kperm, operm = _layouts(attrs)
    data, offset, weight = (a.astype("float64") for a in args)
    data, offset, weight = data.transpose(dperm), offset.transpose(dperm), weight.transpose(kperm)
    n, c, _, _ = data.shape
    o, cg, kh, kw = weight.shape
    _, _, oh, ow = offset.shape
    sh, sw, dh, dw, pt, pl = _geometry(attrs, data.shape, weight.shape, offset.shape)
    dg, g = attrs.deformable_groups, attrs.groups
    cpd = c // dg
    out = np.zeros((n, o, oh, ow))
    base_y = (np.arange(oh) * sh - pt)[:, None]
    base_x = (np.arange(ow) * sw - pl)[None, :]
    for b in range(n):
        cols = np.zeros((c, kh, kw, oh, ow))
        for gi in range(dg):
            chans = slice(gi * cpd, (gi + 1) * cpd)
            for i in range(kh):
                for j in range(kw):
                    t = gi * kh * kw * 2 + (i * kw + j) * 2
                    y = base_y + i * dh + offset[b, t]
                    x = base_x + j * dw + offset[b, t + 1]
                    cols[chans, i, j] = _sample_clamped(data[b, chans], y, x)
        og = o // g
        for gi in range(g):
            wg = weight[gi * og:(gi + 1) * og].reshape(og, -1)
            cg_cols = cols[gi * cg:(gi + 1) * cg].reshape(cg * kh * kw, oh * ow)
            out[b, gi * og:(gi + 1) * og] = (wg @ cg_cols).reshape(og, oh, ow)
    return out.transpose(np.argsort(operm)).astype(out_type.dtype)


def _deform_compute(attrs, inputs, out_type):
    from tvm import topi

    dperm, kperm, operm = _layouts(attrs)
    data, offset, weight = inputs
    ident = (0, 1, 2, 3)
    # other layouts: transposed to NCHW / OIHW around the NCHW kernel
    if dperm != ident:
        data, offset = topi.transpose(data, dperm), topi.transpose(offset, dperm)
    if kperm != ident:
        weight = topi.transpose(weight, kperm)
    out = _deform_nchw(attrs, data, offset, weight, out_type.dtype)
    if operm != ident:
        out = topi.transpose(out, [int(i) for i in np.argsort(operm)])
    return out


def _as_dtype(d, dtype):
    """A dimension (int or PrimExpr) as a ``dtype`` PrimExpr."""
    from tvm import tirx

    return tirx.const(d, dtype) if isinstance(d, int) else tirx.Cast(dtype, d)


def _deform_nchw(attrs, data, offset, weight, odt):
    from tvm import te, tirx

    # ints where static; PrimExprs in a VM kernel of Any dimensions (kernel sizes and
    # channel counts of the weight stay static: the type rule needs them)
    n, c, h, w = out_dims(data.shape)
    o, cg, kh, kw = out_dims(weight.shape)
    _, _, oh, ow = out_dims(offset.shape)
    sh, sw, dh, dw, pt, pl = _geometry(attrs, data.shape, weight.shape, offset.shape)
    cpd = c // attrs.deformable_groups
    dt = str(data.dtype)

    def sample(b, ch, i, j, y, x):
        t = ch // cpd * (kh * kw * 2) + (i * kw + j) * 2
        fy = tirx.Cast(dt, y * sh - pt + i * dh) + offset[b, t, y, x]
        fx = tirx.Cast(dt, x * sw - pl + j * dw) + offset[b, t + 1, y, x]
        zero, one = tirx.const(0, dt), tirx.const(1, dt)
        inside = tirx.all(fy >= zero, fy < _as_dtype(h, dt), fx >= zero,
                          fx < _as_dtype(w, dt))
        fy, fx = tirx.Select(inside, fy, zero), tirx.Select(inside, fx, zero)
        y0, x0 = te.floor(fy), te.floor(fx)
        ly, lx = fy - y0, fx - x0
        iy, ix = tirx.Cast("int32", y0), tirx.Cast("int32", x0)
        iy1 = te.min(iy + 1, _as_dtype(h, "int32") - 1)
        ix1 = te.min(ix + 1, _as_dtype(w, "int32") - 1)
        val = (data[b, ch, iy, ix] * (one - ly) * (one - lx)
               + data[b, ch, iy, ix1] * (one - ly) * lx
               + data[b, ch, iy1, ix] * ly * (one - lx)
               + data[b, ch, iy1, ix1] * ly * lx)
        return tirx.Select(inside, val, zero)

    cols = te.compute((n, c, kh, kw, oh, ow), sample, name="deform_cols")
    rc = te.reduce_axis((0, cg), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    og = o // attrs.groups
    return te.compute(
        (n, o, oh, ow),
        lambda b, f, y, x: te.sum(
            cols[b, f // og * cg + rc, ry, rx, y, x].astype(odt)
            * weight[f, rc, ry, rx].astype(odt), axis=[rc, ry, rx]),
        name="deformable_conv2d", tag="deformable_conv2d_nchw")


register_op(
    "nn.deformable_conv2d",
    num_inputs=3,
    arguments=("data", "offset", "weight"),
    attrs=("relay.attrs.DeformableConv2DAttrs", [
        F("strides", "ints", (1, 1)), F("padding", "ints", (0, 0)), F("dilation", "ints", (1, 1)),
        F("deformable_groups", "int", 1), F("groups", "int", 1), F("channels", "int?", None),
        F("kernel_size", "ints?", None), F("data_layout", "str", "NCHW"),
        F("kernel_layout", "str", "OIHW"), F("out_layout", "str", ""),
        F("out_dtype", "dtype", ""),
    ]),
    rel=_deform_rel,
    ref=_deform_ref,
    compute=_deform_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Deformable 2-D convolution (MXNet _contrib_DeformableConvolution).",
    level=5,
)


def deformable_conv2d(data, offset, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                      deformable_groups=1, groups=1, channels=None, kernel_size=None,
                      data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype=""):
    """Deformable 2-D convolution (tvm.relay.nn.deformable_conv2d); semantics in the module
    docstring.

    Args:
        data: ``(N, C, H, W)`` in NCHW (the axes of ``data_layout``, e.g. NHWC).
        offset: ``(N, deformable_groups * KH * KW * 2, OH, OW)`` sampling offsets in pixels,
            in ``data_layout``'s axis order; inferred when not annotated.
        weight: ``(O, C / groups, KH, KW)`` in OIHW (the axes of ``kernel_layout``, e.g.
            HWIO); inferred from ``channels`` and ``kernel_size`` when both are given, else
            its shape gives them.
        strides, padding, dilation: as ``nn.conv2d`` (padding 1, 2 or 4 values).
        data_layout, kernel_layout, out_layout: permutations of NCHW / OIHW / NCHW
            (``out_layout`` defaults to ``data_layout``).

    Returns:
        ``(N, O, OH, OW)`` in ``out_layout`` of ``out_dtype`` (data's dtype by default).

    Raises:
        TypeInferenceError: (at type inference) a layout that is not such a permutation, or
            shapes that do not fit (channels, groups, kernel_size, offset).
    """
    return make_call("nn.deformable_conv2d", [data, offset, weight],
                     strides=ntuple(strides, 2, "strides", "nn.deformable_conv2d"),
                     padding=tuple(padding) if not isinstance(padding, int) else (padding,) * 2,
                     dilation=ntuple(dilation, 2, "dilation", "nn.deformable_conv2d"),
                     deformable_groups=deformable_groups, groups=groups, channels=channels,
                     kernel_size=None if kernel_size is None else ntuple(
                         kernel_size, 2, "kernel_size", "nn.deformable_conv2d"),
                     data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout, out_dtype=out_dtype)


# ---- correlation --------------------------------------------------------------------------------


def _corr_geometry(attrs, h, w):
    (pt, pl), (pb, pr) = pad_before_after(attrs.padding, 2, "nn.correlation")
    kr = (attrs.kernel_size - 1) // 2
    border = attrs.max_displacement + kr
    rad = attrs.max_displacement // attrs.stride2
    oh = (h + pt + pb - 2 * border + attrs.stride1 - 1) // attrs.stride1
    ow = (w + pl + pr - 2 * border + attrs.stride1 - 1) // attrs.stride1
    return pt, pl, pb, pr, rad, oh, ow


def _corr_rel(types, attrs):
    op = "nn.correlation"
    ts = tensor_args(types, ("data1", "data2"), op)
    if ts is None:
        return None
    a, b = ts
    if attrs.layout != "NCHW":
        raise TypeInferenceError(f"{op}: only layout NCHW is supported, got {attrs.layout}")
    if a.ndim != 4 or tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
        raise TypeInferenceError(f"{op}: data1 and data2 must be NCHW of one shape and dtype, "
                                 f"got {shape_str(a.shape)} {a.dtype}, {shape_str(b.shape)} "
                                 f"{b.dtype}")
    if attrs.kernel_size < 1 or attrs.kernel_size % 2 == 0 or attrs.stride1 < 1 \
            or attrs.stride2 < 1 or attrs.max_displacement < 0:
        raise TypeInferenceError(f"{op}: kernel_size must be odd and positive, strides "
                                 f"positive, max_displacement >= 0; got {attrs.kernel_size}, "
                                 f"{attrs.stride1}, {attrs.stride2}, {attrs.max_displacement}")
    n, _, h, w = a.shape
    *_, rad, oh, ow = _corr_geometry(attrs, h, w)
    if oh < 1 or ow < 1:
        raise TypeInferenceError(f"{op}: output would be {oh}x{ow}: data "
                                 f"{shape_str(a.shape)} is too small for max_displacement="
                                 f"{attrs.max_displacement}, kernel_size={attrs.kernel_size}")
    return TensorType((n, (2 * rad + 1) ** 2, oh, ow), a.dtype)


def _corr_ref(args, attrs, out_type):
    a, b = (x.astype("float64") for x in args)
    n, c, h, w = a.shape
    pt, pl, pb, pr, rad, oh, ow = _corr_geometry(attrs, h, w)
    pad = ((0, 0), (0, 0), (pt, pb), (pl, pr))
    a, b = np.pad(a, pad), np.pad(b, pad)
    k, md, s1, s2 = attrs.kernel_size, attrs.max_displacement, attrs.stride1, attrs.stride2
    size = 2 * rad + 1
    out = np.zeros((n, size * size, oh, ow))
    for q in range(size * size):
        dy, dx = (q // size - rad) * s2, (q % size - rad) * s2
        for i in range(oh):
            for j in range(ow):
                y1, x1 = i * s1 + md, j * s1 + md
                p1 = a[:, :, y1:y1 + k, x1:x1 + k]
                p2 = b[:, :, y1 + dy:y1 + dy + k, x1 + dx:x1 + dx + k]
                v = p1 * p2 if attrs.is_multiply else np.abs(p1 - p2)
                out[:, q, i, j] = v.sum(axis=(1, 2, 3))
    return (out / (k * k * c)).astype(out_type.dtype)


register_op(
    "nn.correlation",
    num_inputs=2,
    arguments=("data1", "data2"),
    attrs=("relay.attrs.CorrelationAttrs", [
        F("kernel_size", "int", 1), F("max_displacement", "int", 1), F("stride1", "int", 1),
        F("stride2", "int", 1), F("padding", "ints", (0, 0)), F("is_multiply", "bool", True),
        F("layout", "str", "NCHW"),
    ]),
    rel=_corr_rel,
    ref=_corr_ref,
    compute=lambda attrs, inputs, out_type: __import__("tvm").topi.nn.correlation_nchw(
        inputs[0], inputs[1], attrs.kernel_size, attrs.max_displacement, attrs.stride1,
        attrs.stride2, list(attrs.padding), attrs.is_multiply),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="FlowNet correlation of two feature maps (topi.nn.correlation_nchw).",
    level=5,
)


def correlation(data1, data2, kernel_size=1, max_displacement=1, stride1=1, stride2=1,
                padding=(0, 0), is_multiply=True, layout="NCHW"):
    """Correlation of two NCHW feature maps (tvm.relay.nn.correlation); semantics in the module
    docstring.

    Returns:
        ``(N, (2 * (max_displacement // stride2) + 1)^2, OH, OW)`` with ``OH = ceil((H + pads
        - 2 * (max_displacement + kernel_size // 2)) / stride1)`` (W likewise).
    """
    if isinstance(padding, int):
        padding = (padding, padding)
    return make_call("nn.correlation", [data1, data2], kernel_size=kernel_size,
                     max_displacement=max_displacement, stride1=stride1, stride2=stride2,
                     padding=tuple(padding), is_multiply=is_multiply, layout=layout)


__all__ = ["deformable_conv2d", "correlation"]

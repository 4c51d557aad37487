"""R-CNN region operators (tvm.relay.vision): ``roi_align``, ``roi_pool``; and YOLO's
``yolo_reorg``.

- roi_align (Mask R-CNN; MXNet ``_contrib_ROIAlign`` with ``aligned=False``): region
  ``[batch_index, x1, y1, x2, y2]`` scaled by ``spatial_scale``, at least 1x1; each of the
  ``pooled_size`` bins averages (``mode="avg"``) or takes the maximum (``"max"``) of a grid of
  ``sample_ratio`` x ``sample_ratio`` bilinear samples (``<= 0``: ``ceil(roi size / pooled
  size)`` per axis) at the grid cells' centers. A sample at ``y < -1`` or ``y > H`` (or x) is
  0; otherwise the coordinate is clamped to the image. (topi.vision.roi_align.)
- roi_pool (Fast R-CNN; MXNet ``ROIPooling``): corners rounded half away from zero (C's
  ``round``, as MXNet; tvm 0.19 rounded half to even, topi 0.27 rounds ``floor(x + 0.5)``), region
  size ``end - start + 1`` (at least 1), bin ``[floor(p * size / pooled), ceil((p + 1) *
  size / pooled))`` offset by the start and clipped to the image; the maximum of the bin, 0
  for an empty bin.
- yolo_reorg (YOLOv2's passthrough, darknet's ``reorg``): with ``s = stride`` and
  ``C' = C / s^2``, the input read as ``(B, C', H*s, W*s)``; output element ``(b, k, j, i)`` of
  the input-shaped view is ``in_view[b, k % C', j*s + (k // C') // s, i*s + (k // C') % s]``,
  then reshaped to ``(B, C*s^2, H/s, W/s)``.
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import AttrField as F
from ...ir.types import TensorType
from .._common import dim_floordiv, dim_mul, out_dims, shape_str, tensor_args
from ..registry import OpPattern, make_call, register_op


def _roi_rel(op):
    def rel(types, attrs):
        ts = tensor_args(types, ("data", "rois"), op)
        if ts is None:
            return None
        data, rois = ts
        layouts = ("NCHW", "NHWC") if op == "vision.roi_align" else ("NCHW",)
        if attrs.layout not in layouts:
            raise TypeInferenceError(f"{op}: layout {attrs.layout!r} is not supported "
                                     f"({', '.join(layouts)})")
        if data.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
            raise TypeInferenceError(f"{op}: expected data 4-d {attrs.layout} and rois (num_roi, "
                                     f"5), got {shape_str(data.shape)}, {shape_str(rois.shape)}")
        if len(attrs.pooled_size) != 2 or min(attrs.pooled_size) < 1:
            raise TypeInferenceError(f"{op}: pooled_size must be 2 positive ints, got "
                                     f"{attrs.pooled_size}")
        if data.dtype != rois.dtype or not data.dtype.startswith("float"):
            raise TypeInferenceError(f"{op}: data and rois must share a float dtype, got "
                                     f"{data.dtype}, {rois.dtype}")
        if op == "vision.roi_align" and attrs.mode not in ("avg", "max"):
            raise TypeInferenceError(f"{op}: mode must be 'avg' or 'max', got {attrs.mode!r}")
        ph, pw = attrs.pooled_size
        if attrs.layout == "NCHW":
            return TensorType((rois.shape[0], data.shape[1], ph, pw), data.dtype)
        return TensorType((rois.shape[0], ph, pw, data.shape[3]), data.dtype)

    return rel


def _bilinear(img, y, x):
    """img (C, H, W) sampled at one point as roi_align does (float64)."""
    h, w = img.shape[1:]
    if y < -1.0 or x < -1.0 or y > h or x > w:
        return np.zeros(img.shape[0])
    y, x = min(max(y, 0.0), h - 1.0), min(max(x, 0.0), w - 1.0)
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    y1, x1 = min(int(np.ceil(y)), h - 1), min(int(np.ceil(x)), w - 1)
    ly, lx = y - y0, x - x0
    return (img[:, y0, x0] * (1 - ly) * (1 - lx) + img[:, y0, x1] * (1 - ly) * lx
            + img[:, y1, x0] * ly * (1 - lx) + img[:, y1, x1] * ly * lx)


def _roi_align_ref(args, attrs, out_type):
    data, rois = args
    if attrs.layout == "NHWC":
        data = data.transpose(0, 3, 1, 2)
    data = data.astype("float64")
    ph, pw = attrs.pooled_size
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    for r, roi in enumerate(rois.astype("float64")):
        img = data[int(roi[0])]
        x1, y1, x2, y2 = roi[1:] * attrs.spatial_scale
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = attrs.sample_ratio if attrs.sample_ratio > 0 else int(np.ceil(rh / ph))
        gw = attrs.sample_ratio if attrs.sample_ratio > 0 else int(np.ceil(rw / pw))
        for i in range(ph):
            for j in range(pw):
                vals = [_bilinear(img, y1 + i * bh + (a + 0.5) * bh / gh,
                                  x1 + j * bw + (b + 0.5) * bw / gw)
                        for a in range(gh) for b in range(gw)]
                if vals:
                    v = np.stack(vals)
                    out[r, :, i, j] = v.mean(0) if attrs.mode == "avg" else v.max(0)
    if attrs.layout == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return out.astype(out_type.dtype)


def _roi_align_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.vision.roi_align(inputs[0], inputs[1], list(attrs.pooled_size),
                                 attrs.spatial_scale, attrs.mode, attrs.sample_ratio,
                                 layout=attrs.layout)


register_op(
    "vision.roi_align",
    num_inputs=2,
    arguments=("data", "rois"),
    attrs=("relay.attrs.ROIAlignAttrs", [
        F("pooled_size", "ints"), F("spatial_scale", "float"), F("sample_ratio", "int", -1),
        F("layout", "str", "NCHW"), F("mode", "str", "avg"),
    ]),
    rel=_roi_rel("vision.roi_align"),
    ref=_roi_align_ref,
    compute=_roi_align_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Bilinearly sampled region pooling (topi.vision.roi_align).",
    level=5,
)


def roi_align(data, rois, pooled_size, spatial_scale, sample_ratio=-1, layout="NCHW",
              mode="avg"):
    """Region-of-interest align (tvm.relay.vision.roi_align); semantics in the module docstring.

    Args:
        data: ``(N, C, H, W)`` (NCHW) or ``(N, H, W, C)`` (NHWC) float feature map.
        rois: ``(num_roi, 5)`` of data's dtype: ``[batch_index, x1, y1, x2, y2]`` in image
            coordinates.
        pooled_size: ``(PH, PW)`` output bins.
        spatial_scale: image -> feature-map scale (1 / the feature stride).
        sample_ratio: samples per bin and axis; ``<= 0``: adaptive.
        layout: ``"NCHW"`` or ``"NHWC"``.
        mode: ``"avg"`` or ``"max"``.

    Returns:
        ``(num_roi, C, PH, PW)`` (or ``(num_roi, PH, PW, C)``).
    """
    return make_call("vision.roi_align", [data, rois], pooled_size=tuple(pooled_size),
                     spatial_scale=spatial_scale, sample_ratio=sample_ratio, layout=layout,
                     mode=mode)


def _roi_pool_ref(args, attrs, out_type):
    data, rois = args
    _, c, h, w = data.shape
    ph, pw = attrs.pooled_size
    f = rois.dtype.type
    out = np.zeros((len(rois), c, ph, pw), data.dtype)
    for r, roi in enumerate(rois):
        img = data[int(roi[0])]
        x1, y1, x2, y2 = (int(_round_away(v * f(attrs.spatial_scale))) for v in roi[1:])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bh, bw = f(rh) / f(ph), f(rw) / f(pw)
        for i in range(ph):
            hs = min(max(int(np.floor(f(i) * bh)) + y1, 0), h)
            he = min(max(int(np.ceil(f(i + 1) * bh)) + y1, 0), h)
            for j in range(pw):
                ws = min(max(int(np.floor(f(j) * bw)) + x1, 0), w)
                we = min(max(int(np.ceil(f(j + 1) * bw)) + x1, 0), w)
                if he > hs and we > ws:
                    out[r, :, i, j] = img[:, hs:he, ws:we].max(axis=(1, 2))
    return out


def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + v.dtype.type(0.5))


def _roi_pool_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    data, rois = inputs
    _, c, h, w = (int(d) for d in data.shape)
    ph, pw = attrs.pooled_size
    rdt = str(rois.dtype)

    def k(v):
        return tirx.const(v, rdt)

    def rnd(v):  # half away from zero, as C's round() in MXNet's ROIPooling
        v = v * k(attrs.spatial_scale)
        mag = te.floor(te.abs(v) + k(0.5))
        return tirx.Cast("int32", tirx.Select(v < k(0), -mag, mag))

    def bounds(r, i, j):
        x1, y1, x2, y2 = (rnd(rois[r, q]) for q in range(1, 5))
        bh = tirx.Cast(rdt, te.max(y2 - y1 + 1, 1)) / k(float(ph))
        bw = tirx.Cast(rdt, te.max(x2 - x1 + 1, 1)) / k(float(pw))

        def clip(v, off, size):
            return te.min(te.max(tirx.Cast("int32", v) + off, 0), size)

        return (clip(te.floor(tirx.Cast(rdt, i) * bh), y1, h),
                clip(te.ceil(tirx.Cast(rdt, i + 1) * bh), y1, h),
                clip(te.floor(tirx.Cast(rdt, j) * bw), x1, w),
                clip(te.ceil(tirx.Cast(rdt, j + 1) * bw), x1, w))

    ry = te.reduce_axis((0, h), name="ry")
    rx = te.reduce_axis((0, w), name="rx")
    low = tirx.min_value(data.dtype)

    def pooled(r, ch, i, j):
        hs, he, ws, we = bounds(r, i, j)
        inside = tirx.all(hs <= ry, ry < he, ws <= rx, rx < we)
        n = tirx.Cast("int32", rois[r, 0])
        return te.max(tirx.Select(inside, data[n, ch, ry, rx], low), axis=[ry, rx])

    mx = te.compute((int(rois.shape[0]), c, ph, pw), pooled, name="roi_pool_max")

    def final(r, ch, i, j):
        hs, he, ws, we = bounds(r, i, j)
        return tirx.Select(tirx.any(he <= hs, we <= ws), tirx.const(0, data.dtype),
                           mx[r, ch, i, j])

    return te.compute(mx.shape, final, name="roi_pool", tag="roi_pool")


register_op(
    "vision.roi_pool",
    num_inputs=2,
    arguments=("data", "rois"),
    attrs=("relay.attrs.ROIPoolAttrs", [
        F("pooled_size", "ints"), F("spatial_scale", "float"), F("layout", "str", "NCHW"),
    ]),
    rel=_roi_rel("vision.roi_pool"),
    ref=_roi_pool_ref,
    compute=_roi_pool_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Max pooling over quantized regions (MXNet ROIPooling).",
    level=5,
)


def roi_pool(data, rois, pooled_size, spatial_scale, layout="NCHW"):
    """Region-of-interest max pooling (tvm.relay.vision.roi_pool); semantics in the module
    docstring.

    Args:
        data: ``(N, C, H, W)`` float feature map (NCHW only).
        rois: ``(num_roi, 5)`` ``[batch_index, x1, y1, x2, y2]``, data's dtype.
        pooled_size: ``(PH, PW)``.
        spatial_scale: image -> feature-map scale.

    Returns:
        ``(num_roi, C, PH, PW)``.
    """
    return make_call("vision.roi_pool", [data, rois], pooled_size=tuple(pooled_size),
                     spatial_scale=spatial_scale, layout=layout)


# ---- yolo_reorg ---------------------------------------------------------------------------------


def _reorg_rel(types, attrs):
    op = "vision.yolo_reorg"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    s = attrs.stride
    if data.ndim != 4 or s < 1:
        raise TypeInferenceError(f"{op}: data must be NCHW and stride >= 1, got shape "
                                 f"{shape_str(data.shape)}, stride {s}")
    b, c, h, w = data.shape
    if any(isinstance(d, int) and d % m for d, m in ((c, s * s), (h, s), (w, s))):
        raise TypeInferenceError(f"{op}: channels must divide by stride^2={s * s} and height, "
                                 f"width by stride={s}; data shape {shape_str(data.shape)}")
    why = (f"{op}: channels must divide by stride^2={s * s} and height, width by "
           f"stride={s}")
    # Any stays Any; a symbolic size (a VM kernel being lowered) is checked at run time
    dim_floordiv(c, s * s, why)  # only the check: the kernel indexes by c // s^2
    return TensorType((b, dim_mul(c, s * s), dim_floordiv(h, s, why), dim_floordiv(w, s, why)),
                      data.dtype)


def _reorg_ref(args, attrs, out_type):
    x = args[0]
    b, c, h, w = x.shape
    s = attrs.stride
    oc = c // (s * s)
    view = x.reshape(b, oc, h * s, w * s)
    k, j, i = np.meshgrid(np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    off = k // oc
    out = view[:, k % oc, j * s + off // s, i * s + off % s]
    # the input's own shape: out_type has Any dimensions when the data's were
    return out.reshape(b, c * s * s, h // s, w // s)


def _reorg_compute(attrs, inputs, out_type):
    from tvm import te, topi

    x = inputs[0]
    b, c, h, w = out_dims(x.shape)  # symbolic where the kernel is dynamic
    s = attrs.stride
    oc = c // (s * s)

    def fcompute(n, k, j, i):
        off = k // oc
        flat = (i * s + off % s) + w * s * ((j * s + off // s) + h * s * (k % oc + oc * n))
        return x[flat // (c * h * w), flat // (h * w) % c, flat // w % h, flat % w]

    view = te.compute((b, c, h, w), fcompute, name="yolo_reorg", tag="injective")
    return topi.reshape(view, out_dims(out_type.shape))


register_op(
    "vision.yolo_reorg",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.YoloReorgAttrs", [F("stride", "int")]),
    rel=_reorg_rel,
    ref=_reorg_ref,
    compute=_reorg_compute,
    pattern=OpPattern.INJECTIVE,
    doc="YOLOv2 passthrough reorganization (darknet reorg).",
    level=5,
)


def yolo_reorg(data, stride):
    """YOLO reorg (tvm.relay.vision.yolo_reorg): ``(B, C, H, W)`` -> ``(B, C*s^2, H/s, W/s)``
    by darknet's index map (module docstring); C must divide by ``s^2``, H and W by ``s``."""
    return make_call("vision.yolo_reorg", [data], stride=stride)


__all__ = ["roi_align", "roi_pool", "yolo_reorg"]

from .proposal import proposal  # noqa: E402,F401  (tvm.relay.op.vision.rcnn had it)

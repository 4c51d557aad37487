"""MXNet converters of the detection operators: SSD's MultiBox operators, box_nms, box_decode,
box_iou, ROIAlign, ROIPooling, Proposal, MultiProposal, DeformableConvolution and Correlation.

Semantics and attribute defaults are MXNet 1.9.1's (the ``mx.nd.contrib`` operator docs).
Where MXNet differs from the Relay operator the converter says how it bridges the gap:
MXNet's box_nms suppresses at IoU strictly above ``overlap_thresh`` while Relay's NMS suppresses
at ``>=``, so the threshold passed on is the next float32 above it (exactly ``>`` for float32
IoUs).
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import const
from ._mx_util import R


def _strict(thresh: float) -> float:
    """The float32 threshold t' with ``iou >= t'`` exactly when ``iou > thresh``."""
    return float(np.nextafter(np.float32(thresh), np.float32(np.inf)))


def multibox_prior(ins, a, c):
    return R("vision.multibox_prior")(
        ins[0], sizes=a.get_float_tuple("sizes", (1.0,)),
        ratios=a.get_float_tuple("ratios", (1.0,)),
        steps=a.get_float_tuple("steps", (-1.0, -1.0)),
        offsets=a.get_float_tuple("offsets", (0.5, 0.5)), clip=a.get_bool("clip", False))


def multibox_detection(ins, a, c):
    if a.get_int("background_id", 0) != 0:
        raise c.error("background_id other than 0 is not supported (class 0 is the background)")
    cls, loc, anchor = ins
    r = R("vision.multibox_transform_loc")(
        cls, loc, anchor, clip=a.get_bool("clip", True), threshold=a.get_float("threshold", 0.01),
        variances=a.get_float_tuple("variances", (0.1, 0.1, 0.2, 0.2)))
    # indices are unused without return_indices (Relay 0.19 passed valid_count there too)
    return R("vision.non_max_suppression")(
        r[0], r[1], r[1], max_output_size=-1,
        iou_threshold=_strict(a.get_float("nms_threshold", 0.5)),
        force_suppress=a.get_bool("force_suppress", False), top_k=a.get_int("nms_topk", -1),
        coord_start=2, score_index=1, id_index=0, return_indices=False)


def box_nms(ins, a, c):
    for key in ("in_format", "out_format"):
        if a.get_str(key, "corner") != "corner":
            raise c.error(f"{key}={a.get_str(key)!r}: only 'corner' boxes are supported")
    if a.get_int("background_id", -1) != -1:
        raise c.error("background_id is not supported (only -1)")
    data = ins[0]
    shape = c.shape(data)
    flat = R("reshape")(data, (-1, shape[-2], shape[-1])) if len(shape) != 3 else data
    score_index = a.get_int("score_index", 1)
    id_index = a.get_int("id_index", -1)
    r = R("vision.get_valid_counts")(flat, a.get_float("valid_thresh", 0.0), id_index=id_index,
                                     score_index=score_index)
    out = R("vision.non_max_suppression")(
        r[1], r[0], r[2], max_output_size=-1,
        iou_threshold=_strict(a.get_float("overlap_thresh", 0.5)),
        force_suppress=a.get_bool("force_suppress", False), top_k=a.get_int("topk", -1),
        coord_start=a.get_int("coord_start", 2), score_index=score_index, id_index=id_index,
        return_indices=False, invalid_to_bottom=True)
    return R("reshape")(out, shape) if len(shape) != 3 else out


def box_decode(ins, a, c):
    # MXNet 1.9.1's default anchor format is "center" (x, y, w, h); Relay 0.19's converter
    # assumed "corner" and decoded default-format graphs wrongly
    data, anchors = ins
    dt = c.dtype(data)

    def k(v):
        return const(np.array(v, dt), dt)

    def split4(x):
        return [R("strided_slice")(x, begin=[i], end=[i + 1], axes=[-1]) for i in range(4)]

    an = split4(anchors)
    fmt = a.get_str("format", "center")
    if fmt == "corner":
        aw, ah = R("subtract")(an[2], an[0]), R("subtract")(an[3], an[1])
        ax = R("add")(an[0], R("multiply")(aw, k(0.5)))
        ay = R("add")(an[1], R("multiply")(ah, k(0.5)))
    elif fmt == "center":
        ax, ay, aw, ah = an
    else:
        raise c.error(f"format={fmt!r}: expected 'center' or 'corner'")
    p = split4(data)
    stds = [a.get_float(f"std{i}", 1.0) for i in range(4)]
    ox = R("add")(R("multiply")(R("multiply")(p[0], k(stds[0])), aw), ax)
    oy = R("add")(R("multiply")(R("multiply")(p[1], k(stds[1])), ah), ay)
    dw, dh = R("multiply")(p[2], k(stds[2])), R("multiply")(p[3], k(stds[3]))
    clip = a.get_float("clip", -1.0)
    if clip > 0:
        dw, dh = R("minimum")(dw, k(clip)), R("minimum")(dh, k(clip))
    hw = R("multiply")(R("multiply")(R("exp")(dw), aw), k(0.5))
    hh = R("multiply")(R("multiply")(R("exp")(dh), ah), k(0.5))
    return R("concatenate")([R("subtract")(ox, hw), R("subtract")(oy, hh), R("add")(ox, hw),
                             R("add")(oy, hh)], axis=-1)


def box_iou(ins, a, c):
    """MXNet's ``_contrib_box_iou(lhs, rhs, format='corner')``: the intersection over union of
    every box of ``lhs`` (shape ``L + (4,)``) with every box of ``rhs`` (``R + (4,)``), shape
    ``L + R``. Boxes are ``(xmin, ymin, xmax, ymax)`` ('corner') or ``(x, y, w, h)`` ('center').
    As MXNet computes it: the overlap along each axis is ``max(0, min(right) - max(left))``; a
    pair whose intersection is not positive (disjoint, touching, or a box of zero or negative
    size) has IoU 0; otherwise ``inter / (area_l + area_r - inter)``, where a box of negative
    width or height has area 0.
    (MXNet 1.9.1 ``src/operator/contrib/bounding_box-inl.h``, ``compute_overlap``.)"""
    lhs, rhs = ins
    fmt = a.get_str("format", "corner")
    if fmt not in ("corner", "center"):
        raise c.error(f"format={fmt!r}: expected 'corner' or 'center'")
    shapes = []
    for name, x in (("lhs", lhs), ("rhs", rhs)):
        shape = tuple(c.shape(x))
        if len(shape) < 2 or shape[-1] != 4:
            raise c.error(f"{name} has shape {shape}, expected rank >= 2 with a last dimension "
                          f"of 4 (one box per row)")
        shapes.append(shape)
    n_r = len(shapes[1]) - 1
    dt = c.dtype(lhs)
    zero = const(np.zeros((), dt), dt)

    def split(x, left_side):
        """The box array's four columns, each of its shape without the last axis; lhs's get
        ``n_r`` trailing axes of size 1 so that they broadcast against rhs's to ``L + R``."""
        p = [R("squeeze")(R("strided_slice")(x, begin=[i], end=[i + 1], axes=[-1]), axis=[-1])
             for i in range(4)]
        if left_side and n_r:
            p = [R("expand_dims")(v, axis=-1, num_newaxis=n_r) for v in p]
        return p

    def corners_and_area(p):
        if fmt == "corner":
            corners = p
            w, h = R("subtract")(p[2], p[0]), R("subtract")(p[3], p[1])
        else:  # MXNet takes the area from w, h themselves, not from the rebuilt corners
            w, h = p[2], p[3]
            half_w = R("divide")(w, const(np.array(2, dt), dt))
            half_h = R("divide")(h, const(np.array(2, dt), dt))
            corners = [R("subtract")(p[0], half_w), R("subtract")(p[1], half_h),
                       R("add")(p[0], half_w), R("add")(p[1], half_h)]
        ok = R("logical_and")(R("greater_equal")(w, zero), R("greater_equal")(h, zero))
        return corners, R("where")(ok, R("multiply")(w, h), zero)

    lb, l_area = corners_and_area(split(lhs, True))
    rb, r_area = corners_and_area(split(rhs, False))
    iw = R("maximum")(R("subtract")(R("minimum")(lb[2], rb[2]), R("maximum")(lb[0], rb[0])),
                      zero)
    ih = R("maximum")(R("subtract")(R("minimum")(lb[3], rb[3]), R("maximum")(lb[1], rb[1])),
                      zero)
    inter = R("multiply")(iw, ih)
    union = R("subtract")(R("add")(l_area, r_area), inter)
    hit = R("greater")(inter, zero)
    # the union is positive wherever inter is; elsewhere divide by 1 so no 0/0 is computed
    safe = R("where")(hit, union, const(np.ones((), dt), dt))
    return R("where")(hit, R("divide")(inter, safe), zero)


def roi_align(ins, a, c):
    if a.get_bool("position_sensitive", False):
        raise c.error("position_sensitive=True is not supported")
    if a.get_bool("aligned", False):
        raise c.error("aligned=True is not supported (Relay's roi_align has no half-pixel "
                      "offset)")
    return R("vision.roi_align")(ins[0], ins[1], pooled_size=a.get_tuple("pooled_size"),
                                 spatial_scale=a.get_float("spatial_scale"),
                                 sample_ratio=a.get_int("sample_ratio", -1), layout="NCHW")


def roi_pooling(ins, a, c):
    return R("vision.roi_pool")(ins[0], ins[1], pooled_size=a.get_tuple("pooled_size"),
                                spatial_scale=a.get_float("spatial_scale"), layout="NCHW")


def proposal(ins, a, c):
    if a.get_bool("output_score", False):
        raise c.error("output_score=True is not supported (vision.proposal returns the boxes)")
    return R("vision.proposal")(
        ins[0], ins[1], ins[2], scales=a.get_float_tuple("scales", (4.0, 8.0, 16.0, 32.0)),
        ratios=a.get_float_tuple("ratios", (0.5, 1.0, 2.0)),
        feature_stride=a.get_int("feature_stride", 16), threshold=a.get_float("threshold", 0.7),
        rpn_pre_nms_top_n=a.get_int("rpn_pre_nms_top_n", 6000),
        rpn_post_nms_top_n=a.get_int("rpn_post_nms_top_n", 300),
        rpn_min_size=a.get_int("rpn_min_size", 16), iou_loss=a.get_bool("iou_loss", False))


def deformable_convolution(ins, a, c):
    kernel = a.get_tuple("kernel")
    if len(kernel) != 2:
        raise c.error(f"kernel={kernel}: only 2-d deformable convolution is supported")
    if a.get_str("layout", "NCHW") not in ("NCHW", "None", ""):
        raise c.error(f"layout={a.get_str('layout')}: only NCHW is supported")
    channels = a.get_int("num_filter")
    out = R("nn.deformable_conv2d")(
        ins[0], ins[1], ins[2], strides=a.get_tuple("stride", ()) or (1, 1),
        padding=a.get_tuple("pad", ()) or (0, 0), dilation=a.get_tuple("dilate", ()) or (1, 1),
        deformable_groups=a.get_int("num_deformable_group", 1),
        groups=a.get_int("num_group", 1), channels=channels, kernel_size=kernel)
    if not a.get_bool("no_bias", False):
        if len(ins) < 4:
            raise c.error("no_bias=False but the node has no bias input")
        out = R("nn.bias_add")(out, ins[3], axis=1)
    return out


def correlation(ins, a, c):
    return R("nn.correlation")(
        ins[0], ins[1], kernel_size=a.get_int("kernel_size", 1),
        max_displacement=a.get_int("max_displacement", 1), stride1=a.get_int("stride1", 1),
        stride2=a.get_int("stride2", 1), padding=(a.get_int("pad_size", 0),) * 2,
        is_multiply=a.get_bool("is_multiply", True))


VISION_CONVERTERS = {
    "_contrib_MultiBoxPrior": multibox_prior,
    "_contrib_MultiBoxDetection": multibox_detection,
    "_contrib_box_nms": box_nms,
    "_contrib_box_non_maximum_suppression": box_nms,
    "_contrib_box_decode": box_decode,
    "_contrib_box_iou": box_iou,
    "_contrib_ROIAlign": roi_align,
    "ROIPooling": roi_pooling,
    "_contrib_DeformableConvolution": deformable_convolution,
    "Correlation": correlation,
    "_contrib_Proposal": proposal,
    "_contrib_MultiProposal": proposal,
}

__all__ = ["VISION_CONVERTERS"]

"""``vision.proposal`` (tvm.relay.vision.proposal): Faster R-CNN's region proposal layer, MXNet's
``_contrib_Proposal`` / ``_contrib_MultiProposal`` as tvm.relay 0.19's topi.vision.rcnn had it.

For batch ``b``, position ``(h, w)`` and anchor ``k`` (``A = len(scales) * len(ratios)``
anchors, ``ratio = ratios[k // len(scales)]``, ``scale = scales[k % len(scales)]``; box number
``(h * W + w) * A + k``):

1. the anchor: a ``feature_stride`` square centered at ``((s - 1) / 2, (s - 1) / 2)`` reshaped
   to ``ratio`` and ``scale`` (``ws = round(sqrt(floor(s*s / ratio))) * scale``, ``hs =
   round(ws / scale * ratio) * scale``, rounding half up), shifted by ``(w, h) *
   feature_stride``;
2. regressed by ``bbox_pred[b, 4k:4k+4, h, w]`` (``iou_loss``: corner deltas added; else
   center/size deltas with the ``+1`` pixel convention) and clipped to the image
   ``[0, im_w - 1] x [0, im_h - 1]`` (``im_info[b] = (im_h, im_w, scale)``);
3. scored ``cls_prob[b, A + k, h, w]``, or ``-1`` outside ``(int(im_h / stride),
   int(im_w / stride))``; a box narrower or shorter than ``rpn_min_size * im_info[b, 2]`` is
   grown by half of that on each side and scored ``-1``;
4. the ``rpn_pre_nms_top_n`` best (stable descending sort) go through NMS: in order, a box not
   yet removed removes every later box whose IoU (areas with ``+1``) is ``> threshold``;
5. the kept boxes fill ``rpn_post_nms_top_n`` output rows ``[b, x1, y1, x2, y2]`` in order,
   repeating the kept list when it is shorter (rows stay 0 when nothing is kept).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import AttrField as F
from ...ir.types import TensorType
from .._common import shape_str, tensor_args
from ..registry import OpPattern, make_call, register_op
from . import _ir

_OP = "vision.proposal"


def _anchors(attrs):
    """(A, 4) base anchors as float32, in anchor order."""
    s = float(attrs.feature_stride)
    ctr = 0.5 * (s - 1.0)
    out = []
    for k in range(len(attrs.scales) * len(attrs.ratios)):
        ratio, scale = attrs.ratios[k // len(attrs.scales)], attrs.scales[k % len(attrs.scales)]
        ws = math.floor(math.sqrt(math.floor(s * s / ratio)) + 0.5) * scale
        hs = math.floor(ws / scale * ratio + 0.5) * scale
        out.append([ctr - 0.5 * (ws - 1), ctr - 0.5 * (hs - 1), ctr + 0.5 * (ws - 1),
                    ctr + 0.5 * (hs - 1)])
    return np.array(out, "float32")


def _rel(types, attrs):
    ts = tensor_args(types, ("cls_prob", "bbox_pred", "im_info"), _OP)
    if ts is None:
        return None
    cls, bbox, info = ts
    a = len(attrs.scales) * len(attrs.ratios)
    if cls.ndim != 4 or bbox.ndim != 4 or info.ndim != 2 or info.shape[1] != 3:
        raise TypeInferenceError(f"{_OP}: expected cls_prob (B, 2A, H, W), bbox_pred (B, 4A, H, "
                                 f"W), im_info (B, 3); got {shape_str(cls.shape)}, "
                                 f"{shape_str(bbox.shape)}, {shape_str(info.shape)}")
    if {cls.dtype, bbox.dtype, info.dtype} != {"float32"}:
        raise TypeInferenceError(f"{_OP}: inputs must be float32, got {cls.dtype}, "
                                 f"{bbox.dtype}, {info.dtype}")
    b, _, h, w = cls.shape
    if (cls.shape[1], tuple(bbox.shape)) != (2 * a, (b, 4 * a, h, w)) or info.shape[0] != b:
        raise TypeInferenceError(f"{_OP}: {a} anchors (scales x ratios) need cls_prob (B, {2 * a}"
                                 f", H, W) and bbox_pred (B, {4 * a}, H, W); got "
                                 f"{shape_str(cls.shape)}, {shape_str(bbox.shape)}")
    if attrs.rpn_post_nms_top_n < 1:
        raise TypeInferenceError(f"{_OP}: rpn_post_nms_top_n must be >= 1, got "
                                 f"{attrs.rpn_post_nms_top_n}")
    return TensorType((b * attrs.rpn_post_nms_top_n, 5), cls.dtype)


def _pre_n(attrs, num):
    pre = attrs.rpn_pre_nms_top_n
    return min(pre, num) if pre > 0 else num


def _predict(cls, bbox, info, attrs):
    """(B, H*W*A, 5) boxes + scores, float32, computed in the kernel's operation order."""
    f = np.float32
    b, _, h, w = cls.shape
    base = _anchors(attrs)
    a = len(base)
    s = f(attrs.feature_stride)
    one, half = f(1), f(0.5)
    out = np.zeros((b, h, w, a, 5), f)
    ys, xs = np.meshgrid(np.arange(h, dtype=f), np.arange(w, dtype=f), indexing="ij")
    for n in range(b):
        im_h, im_w, im_s = info[n]
        for k in range(a):
            x1, y1 = base[k, 0] + xs * s, base[k, 1] + ys * s
            x2, y2 = base[k, 2] + xs * s, base[k, 3] + ys * s
            d = [bbox[n, k * 4 + i] for i in range(4)]
            if attrs.iou_loss:
                px1, py1, px2, py2 = x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]
            else:
                bw, bh = x2 - x1 + one, y2 - y1 + one
                cx, cy = x1 + half * (bw - one), y1 + half * (bh - one)
                pcx, pcy = d[0] * bw + cx, d[1] * bh + cy
                pw, ph = np.exp(d[2]) * bw, np.exp(d[3]) * bh
                px1, py1 = pcx - half * (pw - one), pcy - half * (ph - one)
                px2, py2 = pcx + half * (pw - one), pcy + half * (ph - one)
            px1, px2 = (np.maximum(np.minimum(v, im_w - one), f(0)) for v in (px1, px2))
            py1, py2 = (np.maximum(np.minimum(v, im_h - one), f(0)) for v in (py1, py2))
            score = cls[n, a + k].copy()
            score[(ys >= int(im_h / s)) | (xs >= int(im_w / s))] = -1
            min_size = im_s * f(attrs.rpn_min_size)
            small = (px2 - px1 + one < min_size) | (py2 - py1 + one < min_size)
            grow = min_size / f(2)
            out[n, :, :, k] = np.stack([np.where(small, px1 - grow, px1),
                                        np.where(small, py1 - grow, py1),
                                        np.where(small, px2 + grow, px2),
                                        np.where(small, py2 + grow, py2),
                                        np.where(small, f(-1), score)], -1)
    return out.reshape(b, h * w * a, 5)


def _iou_plus1(p, q):
    f = np.float32
    w = max(f(0), min(p[2], q[2]) - max(p[0], q[0]) + f(1))
    h = max(f(0), min(p[3], q[3]) - max(p[1], q[1]) + f(1))
    i = w * h
    u = (p[2] - p[0] + f(1)) * (p[3] - p[1] + f(1)) + (q[2] - q[0] + f(1)) * (q[3] - q[1] + f(1))
    return i / (u - i)


def _ref(args, attrs, out_type):
    cls, bbox, info = (x.astype("float32") for x in args)
    boxes = _predict(cls, bbox, info, attrs)
    b, num, _ = boxes.shape
    pre, post = _pre_n(attrs, num), attrs.rpn_post_nms_top_n
    out = np.zeros((b * post, 5), "float32")
    thr = np.float32(attrs.threshold)
    for n in range(b):
        srt = boxes[n, _ir.stable_desc_order(boxes[n, :, 4])[:pre]]
        removed = np.zeros(pre, bool)
        for p in range(pre - 1):
            if removed[p]:
                continue
            for q in range(p + 1, pre):
                if _iou_plus1(srt[p], srt[q]) > thr:
                    removed[q] = True
        kept = np.nonzero(~removed)[0]
        if len(kept):
            sel = kept[np.arange(post) % len(kept)]
            out[n * post:(n + 1) * post, 0] = n
            out[n * post:(n + 1) * post, 1:] = srt[sel, :4]
    return out.astype(out_type.dtype)


def _compute(attrs, inputs, out_type):
    from tvm import te, tirx, topi
    from tvm.script.ir_builder import tirx as T

    cls, bbox, info = inputs
    b, _, h, w = (int(d) for d in cls.shape)
    base = _anchors(attrs)
    a = len(base)
    num = h * w * a
    pre, post = _pre_n(attrs, num), attrs.rpn_post_nms_top_n
    f32 = "float32"

    def c(v):
        return tirx.const(float(v), f32)

    def predict_body(ins, outs):
        # imperative, anchors unrolled as constants: as te stages the schedule's inlining
        # multiplied the expressions beyond what the simplifier handles
        cp, bp, inf = ins
        (bx,) = outs
        s = c(attrs.feature_stride)
        with T.serial(0, b) as n:
            im_h, im_w, im_s = inf[n, 0], inf[n, 1], inf[n, 2]
            min_size = im_s * c(attrs.rpn_min_size)
            with T.serial(0, h) as y:
                with T.serial(0, w) as x:
                    fx, fy = tirx.Cast(f32, x) * s, tirx.Cast(f32, y) * s
                    for k in range(a):
                        i = (y * w + x) * a + k
                        x1, y1 = c(base[k, 0]) + fx, c(base[k, 1]) + fy
                        x2, y2 = c(base[k, 2]) + fx, c(base[k, 3]) + fy
                        d = [bp[n, k * 4 + m, y, x] for m in range(4)]
                        if attrs.iou_loss:
                            v = [x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]]
                        else:
                            bw, bh = x2 - x1 + c(1), y2 - y1 + c(1)
                            cx, cy = x1 + c(0.5) * (bw - c(1)), y1 + c(0.5) * (bh - c(1))
                            pcx, pcy = d[0] * bw + cx, d[1] * bh + cy
                            pw, ph = te.exp(d[2]) * bw, te.exp(d[3]) * bh
                            v = [pcx - c(0.5) * (pw - c(1)), pcy - c(0.5) * (ph - c(1)),
                                 pcx + c(0.5) * (pw - c(1)), pcy + c(0.5) * (ph - c(1))]
                        for m in range(4):
                            lim = (im_w if m % 2 == 0 else im_h) - c(1)
                            bx[n, i, m] = te.max(te.min(v[m], lim), c(0))
                        outside = tirx.any(y >= tirx.Cast("int32", im_h / s),
                                           x >= tirx.Cast("int32", im_w / s))
                        bx[n, i, 4] = tirx.Select(outside, c(-1), cp[n, a + k, y, x])
                        small = tirx.any(bx[n, i, 2] - bx[n, i, 0] + c(1) < min_size,
                                         bx[n, i, 3] - bx[n, i, 1] + c(1) < min_size)
                        with T.If(small):
                            with T.Then():
                                for m in range(4):
                                    grow = min_size / c(2)
                                    bx[n, i, m] = bx[n, i, m] + (grow if m >= 2 else -grow)
                                bx[n, i, 4] = c(-1)

    (boxes,) = _ir.extern("proposal_boxes", [(b, num, 5)], [f32],
                          [cls, bbox, info], predict_body)
    score = te.compute((b, num), lambda n, i: boxes[n, i, 4], name="proposal_score")
    order = topi.argsort(score, axis=1, is_ascend=False, dtype="int32")
    srt = te.compute((b, pre, 5), lambda n, i, q: boxes[n, order[n, i], q], name="proposal_srt")

    def body(ins, outs):
        sb, = ins
        removed, out = outs

        def iou(n, p, q):
            def g(x, m):
                return sb[n, x, m]
            wv = te.max(c(0), te.min(g(p, 2), g(q, 2)) - te.max(g(p, 0), g(q, 0)) + c(1))
            hv = te.max(c(0), te.min(g(p, 3), g(q, 3)) - te.max(g(p, 1), g(q, 1)) + c(1))
            i = wv * hv
            u = ((g(p, 2) - g(p, 0) + c(1)) * (g(p, 3) - g(p, 1) + c(1))
                 + (g(q, 2) - g(q, 0) + c(1)) * (g(q, 3) - g(q, 1) + c(1)))
            return i / (u - i)

        with T.serial(0, b) as n:
            with T.serial(0, pre) as p:
                removed[n, p] = 0
            with T.serial(0, pre) as p:
                with T.If(removed[n, p] == 0):
                    with T.Then():
                        with T.serial(0, pre) as q:
                            with T.If(tirx.all(q > p, removed[n, q] == 0)):
                                with T.Then():
                                    with T.If(iou(n, p, q) > c(attrs.threshold)):
                                        with T.Then():
                                            removed[n, q] = 1
            nkeep = _ir.local("int32", 0)
            with T.serial(0, pre) as p:
                with T.If(removed[n, p] == 0):
                    with T.Then():
                        nkeep[0] = nkeep[0] + 1
            with T.serial(0, post * 5) as r:
                out[n * post + r // 5, r % 5] = c(0)
            pos = _ir.local("int32", 0)
            with T.If(nkeep[0] > 0):
                with T.Then():
                    with T.serial(0, (post + nkeep[0] - 1) // nkeep[0]):
                        with T.serial(0, pre) as p:
                            with T.If(tirx.all(pos[0] < post, removed[n, p] == 0)):
                                with T.Then():
                                    out[n * post + pos[0], 0] = tirx.Cast(f32, n)
                                    with T.serial(0, 4) as m:
                                        out[n * post + pos[0], m + 1] = sb[n, p, m]
                                    pos[0] = pos[0] + 1

    removed, out = _ir.extern("proposal_nms", [(b, pre), (b * post, 5)], ["int32", f32],
                              [srt], body)
    return out


register_op(
    _OP,
    num_inputs=3,
    arguments=("cls_prob", "bbox_pred", "im_info"),
    attrs=("relay.attrs.ProposalAttrs", [
        F("scales", "floats", (4.0, 8.0, 16.0, 32.0)), F("ratios", "floats", (0.5, 1.0, 2.0)),
        F("feature_stride", "int", 16), F("threshold", "float", 0.7),
        F("rpn_pre_nms_top_n", "int", 6000), F("rpn_post_nms_top_n", "int", 300),
        F("rpn_min_size", "int", 16), F("iou_loss", "bool", False),
    ]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OPAQUE,
    doc="Faster R-CNN region proposals (MXNet _contrib_Proposal / _contrib_MultiProposal).",
    level=5,
)


def proposal(cls_prob, bbox_pred, im_info, scales=(4.0, 8.0, 16.0, 32.0), ratios=(0.5, 1.0, 2.0),
             feature_stride=16, threshold=0.7, rpn_pre_nms_top_n=6000, rpn_post_nms_top_n=300,
             rpn_min_size=16, iou_loss=False):
    """Region proposals (tvm.relay.vision.proposal); semantics in the module docstring.

    Args:
        cls_prob: ``(B, 2A, H, W)`` background then object scores per anchor.
        bbox_pred: ``(B, 4A, H, W)`` box deltas per anchor.
        im_info: ``(B, 3)`` ``(height, width, scale)`` of each input image, in pixels.

    Returns:
        ``(B * rpn_post_nms_top_n, 5)`` rows ``[batch_index, x1, y1, x2, y2]``.
    """
    return make_call(_OP, [cls_prob, bbox_pred, im_info], scales=tuple(scales),
                     ratios=tuple(ratios), feature_stride=feature_stride, threshold=threshold,
                     rpn_pre_nms_top_n=rpn_pre_nms_top_n, rpn_post_nms_top_n=rpn_post_nms_top_n,
                     rpn_min_size=rpn_min_size, iou_loss=iou_loss)


__all__ = ["proposal"]

"""SSD's anchor operators (tvm.relay.vision): ``multibox_prior`` and ``multibox_transform_loc``.

Semantics: MXNet's ``_contrib_MultiBoxPrior`` / the decoding half of ``MultiBoxDetection`` as
tvm.relay 0.19's topi.vision.ssd had them (Liu et al., "SSD: Single Shot MultiBox Detector").
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import AttrField as F
from ...ir.types import TensorType, TupleType
from .._common import TupleWrapper, dim_mul, out_dims, shape_str, tensor_args
from ..registry import OpPattern, make_call, register_op
from . import _ir


def _prior_rel(types, attrs):
    op = "vision.multibox_prior"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    if data.ndim != 4:
        raise TypeInferenceError(f"{op}: data must be NCHW, got shape {shape_str(data.shape)}")
    if not attrs.sizes or not attrs.ratios or any(v <= 0 for v in attrs.sizes + attrs.ratios):
        raise TypeInferenceError(f"{op}: sizes {attrs.sizes} and ratios {attrs.ratios} must be "
                                 f"non-empty and positive")
    if len(attrs.steps) != 2 or len(attrs.offsets) != 2:
        raise TypeInferenceError(f"{op}: steps and offsets must have 2 values (y, x), got "
                                 f"{attrs.steps}, {attrs.offsets}")
    per = len(attrs.sizes) + len(attrs.ratios) - 1
    return TensorType((1, dim_mul(dim_mul(data.shape[2], data.shape[3]), per), 4), data.dtype)


def _prior_halves(attrs, h, w):
    """Per anchor kind: (half width, half height), in float32 as the kernel computes them."""
    f = np.float32
    out = []
    for s in attrs.sizes:
        out.append((f(f(s) * f(h)) / f(w) / f(2), f(s) / f(2)))
    for r in attrs.ratios[1:]:
        sq = np.sqrt(f(r))
        out.append((f(f(attrs.sizes[0]) * f(h)) / f(w) * sq / f(2), f(attrs.sizes[0]) / sq / f(2)))
    return out


def _steps(attrs, h, w):
    f = np.float32
    sh = f(attrs.steps[0]) if attrs.steps[0] > 0 else f(1) / f(h)
    sw = f(attrs.steps[1]) if attrs.steps[1] > 0 else f(1) / f(w)
    return sh, sw


def _prior_ref(args, attrs, out_type):
    _, _, h, w = args[0].shape
    f = np.float32
    sh, sw = _steps(attrs, h, w)
    cy = (np.arange(h, dtype=f) + f(attrs.offsets[0])) * sh
    cx = (np.arange(w, dtype=f) + f(attrs.offsets[1])) * sw
    halves = _prior_halves(attrs, h, w)
    out = np.empty((h, w, len(halves), 4), f)
    for k, (hw, hh) in enumerate(halves):
        out[:, :, k, 0] = cx[None, :] - hw
        out[:, :, k, 1] = cy[:, None] - hh
        out[:, :, k, 2] = cx[None, :] + hw
        out[:, :, k, 3] = cy[:, None] + hh
    out = out.reshape(1, -1, 4)
    if attrs.clip:
        out = np.clip(out, 0, 1)
    return out.astype(out_type.dtype)


def _sym_prior_halves(attrs, h, w):
    """:func:`_prior_halves` and :func:`_steps` of a symbolic height and width (a VM kernel of
    ``Any`` spatial size): the same float32 operations in the same order, as PrimExprs."""
    from tvm import tirx

    def f(v):
        return tirx.const(float(np.float32(v)), "float32")

    fh, fw = tirx.Cast("float32", h), tirx.Cast("float32", w)
    two = f(2)
    halves = [(f(s) * fh / fw / two, f(s / 2)) for s in attrs.sizes]
    for r in attrs.ratios[1:]:
        sq = np.sqrt(np.float32(r))
        halves.append((f(attrs.sizes[0]) * fh / fw * f(sq) / two,
                       f(np.float32(attrs.sizes[0]) / sq / np.float32(2))))
    sh = f(attrs.steps[0]) if attrs.steps[0] > 0 else f(1) / fh
    sw = f(attrs.steps[1]) if attrs.steps[1] > 0 else f(1) / fw
    return halves, (sh, sw)


def _prior_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    _, _, h, w = out_dims(inputs[0].shape)
    f32 = "float32"
    if isinstance(h, int) and isinstance(w, int):
        halves = [tuple(tirx.const(float(v), f32) for v in hv)
                  for hv in _prior_halves(attrs, h, w)]
        sh, sw = (tirx.const(float(v), f32) for v in _steps(attrs, h, w))
    else:
        halves, (sh, sw) = _sym_prior_halves(attrs, h, w)
    per = len(halves)

    def fcompute(_, a, c):
        k = a % per
        pos = a // per
        i, j = pos // w, pos % w
        cy = (tirx.Cast(f32, i) + tirx.const(attrs.offsets[0], f32)) * sh
        cx = (tirx.Cast(f32, j) + tirx.const(attrs.offsets[1], f32)) * sw

        def pick(which):
            v = halves[-1][which]
            for kk in range(per - 2, -1, -1):
                v = tirx.Select(k == kk, halves[kk][which], v)
            return v

        hw, hh = pick(0), pick(1)
        val = tirx.Select(c == 0, cx - hw, tirx.Select(c == 1, cy - hh,
                                                        tirx.Select(c == 2, cx + hw, cy + hh)))
        if attrs.clip:
            val = te.min(te.max(val, tirx.const(0, f32)), tirx.const(1, f32))
        return tirx.Cast(out_type.dtype, val)

    return te.compute((1, h * w * per, 4), fcompute, name="multibox_prior", tag="injective")


register_op(
    "vision.multibox_prior",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.MultiBoxPriorAttrs", [
        F("sizes", "floats", (1.0,)), F("ratios", "floats", (1.0,)),
        F("steps", "floats", (-1.0, -1.0)), F("offsets", "floats", (0.5, 0.5)),
        F("clip", "bool", False),
    ]),
    rel=_prior_rel,
    ref=_prior_ref,
    compute=_prior_compute,
    pattern=OpPattern.INJECTIVE,
    doc="SSD prior (anchor) boxes over a feature map (MXNet _contrib_MultiBoxPrior).",
    level=5,
)


def multibox_prior(data, sizes=(1.0,), ratios=(1.0,), steps=(-1.0, -1.0), offsets=(0.5, 0.5),
                   clip=False):
    """SSD prior boxes for every position of a feature map (tvm.relay.vision.multibox_prior).

    Args:
        data: ``(N, C, H, W)`` feature map; only its H and W are used.
        sizes: box sizes relative to the image (fractions of the height).
        ratios: width/height aspect ratios; anchors are every size with ``ratios[0]`` then
            ``sizes[0]`` with each further ratio: ``len(sizes) + len(ratios) - 1`` per position.
        steps: ``(y, x)`` distance between centers as a fraction of the image; ``-1``: 1/H, 1/W.
        offsets: ``(y, x)`` center offset inside a cell, in cells.
        clip: clip the corners to ``[0, 1]``.

    Returns:
        ``(1, H * W * num_anchors_per_position, 4)`` of data's dtype: ``(xmin, ymin, xmax,
        ymax)`` normalized to ``[0, 1]`` (before clipping), position-major, computed in float32.
    """
    return make_call("vision.multibox_prior", [data], sizes=tuple(sizes), ratios=tuple(ratios),
                     steps=tuple(steps), offsets=tuple(offsets), clip=clip)


# ---- multibox_transform_loc ----------------------------------------------------------------------


def _mtl_rel(types, attrs):
    op = "vision.multibox_transform_loc"
    ts = tensor_args(types, ("cls_prob", "loc_pred", "anchor"), op)
    if ts is None:
        return None
    cls, loc, anchor = ts
    if cls.ndim != 3 or loc.ndim != 2 or anchor.ndim != 3 or anchor.shape[2] != 4:
        raise TypeInferenceError(
            f"{op}: expected cls_prob (batch, num_classes, num_anchors), loc_pred (batch, "
            f"num_anchors * 4), anchor (1, num_anchors, 4); got {shape_str(cls.shape)}, "
            f"{shape_str(loc.shape)}, {shape_str(anchor.shape)}")
    b, _, n = cls.shape
    if isinstance(n, int) and (loc.shape[1] != 4 * n or anchor.shape[1] != n):
        raise TypeInferenceError(
            f"{op}: {n} anchors in cls_prob {shape_str(cls.shape)}, but loc_pred "
            f"{shape_str(loc.shape)} and anchor {shape_str(anchor.shape)}")
    if len(attrs.variances) != 4:
        raise TypeInferenceError(f"{op}: variances must have 4 values, got {attrs.variances}")
    return TupleType([TensorType((b, n, 6), cls.dtype), TensorType((b,), "int32")])


def _decode(anchor, loc, variances, clip, dt):
    """Corners of the boxes (N, 4) decoded from anchors (N, 4) and offsets (N, 4), in ``dt``."""
    t = np.dtype(dt).type
    al, at, ar, ab = (anchor[:, k] for k in range(4))
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / t(2), (at + ab) / t(2)
    vx, vy, vw, vh = (t(v) for v in variances)
    ox = loc[:, 0] * vx * aw + ax
    oy = loc[:, 1] * vy * ah + ay
    ow = np.exp(loc[:, 2] * vw) * aw / t(2)
    oh = np.exp(loc[:, 3] * vh) * ah / t(2)
    out = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
    return np.clip(out, 0, 1) if clip else out


def _mtl_ref(args, attrs, out_type):
    cls, loc, anchor = args
    b, c, n = cls.shape
    dt = cls.dtype
    out = np.full((b, n, 6), -1, dt)
    count = np.zeros(b, "int32")
    start = 0 if attrs.keep_background else 1
    for i in range(b):
        boxes = _decode(anchor[0], loc[i].reshape(n, 4), attrs.variances, attrs.clip, dt)
        pos = 0
        for j in range(n):
            score, cid = dt.type(-1), 0
            for k in range(start, c):  # first maximum wins
                if cls[i, k, j] > score:
                    score, cid = cls[i, k, j], k
            if cid > 0 and score < dt.type(attrs.threshold):
                cid = 0
            if attrs.keep_background or cid > 0:
                out[i, pos, 0] = cid if attrs.keep_background else cid - 1
                out[i, pos, 1] = score
                out[i, pos, 2:] = boxes[j]
                pos += 1
        count[i] = pos
    return out, count


def _mtl_compute(attrs, inputs, out_type):
    from tvm import te, tirx
    from tvm.script.ir_builder import tirx as T

    cls, loc, anchor = inputs
    b, c, n = (int(d) for d in cls.shape)
    dt = str(cls.dtype)
    start = 0 if attrs.keep_background else 1

    def k(v):
        return tirx.const(v, dt)

    def box(i, j, q):  # decoded corner q of anchor j in batch i
        al, at, ar, ab = (anchor[0, j, m] for m in range(4))
        aw, ah = ar - al, ab - at
        ax, ay = (al + ar) / k(2), (at + ab) / k(2)
        v = attrs.variances
        ox = loc[i, j * 4] * k(v[0]) * aw + ax
        oy = loc[i, j * 4 + 1] * k(v[1]) * ah + ay
        ow = te.exp(loc[i, j * 4 + 2] * k(v[2])) * aw / k(2)
        oh = te.exp(loc[i, j * 4 + 3] * k(v[3])) * ah / k(2)
        val = [ox - ow, oy - oh, ox + ow, oy + oh][q]
        return te.min(te.max(val, k(0)), k(1)) if attrs.clip else val

    boxes = te.compute((b, n, 4), lambda i, j, q: tirx.Select(
        q == 0, box(i, j, 0), tirx.Select(q == 1, box(i, j, 1), tirx.Select(
            q == 2, box(i, j, 2), box(i, j, 3)))), name="multibox_decode")

    def body(ins, outs):
        p, bx = ins
        out, count = outs
        with T.parallel(0, b) as i:
            pos = _ir.local("int32", 0)
            with T.serial(0, n) as j:
                score = _ir.local(dt, k(-1))
                cid = _ir.local("int32", 0)
                with T.serial(start, c) as q:
                    with T.If(p[i, q, j] > score[0]):
                        with T.Then():
                            score[0] = p[i, q, j]
                            cid[0] = q
                with T.If(tirx.all(cid[0] > 0, score[0] < k(attrs.threshold))):
                    with T.Then():
                        cid[0] = 0
                keep = cid[0] > 0
                if attrs.keep_background:
                    keep = tirx.const(True)
                with T.If(keep):
                    with T.Then():
                        shift = 0 if attrs.keep_background else 1
                        out[i, pos[0], 0] = tirx.Cast(dt, cid[0] - shift)
                        out[i, pos[0], 1] = score[0]
                        with T.serial(0, 4) as q:
                            out[i, pos[0], 2 + q] = bx[i, j, q]
                        pos[0] = pos[0] + 1
            with T.serial(0, n) as j:
                with T.If(j >= pos[0]):
                    with T.Then():
                        with T.serial(0, 6) as q:
                            out[i, j, q] = k(-1)
            count[i] = pos[0]

    return _ir.extern("multibox_transform_loc", [(b, n, 6), (b,)], [dt, "int32"],
                      [cls, boxes], body)


register_op(
    "vision.multibox_transform_loc",
    num_inputs=3,
    arguments=("cls_prob", "loc_pred", "anchor"),
    attrs=("relay.attrs.MultiBoxTransformLocAttrs", [
        F("clip", "bool", True), F("threshold", "float", 0.01),
        F("variances", "floats", (0.1, 0.1, 0.2, 0.2)), F("keep_background", "bool", False),
    ]),
    rel=_mtl_rel,
    ref=_mtl_ref,
    compute=_mtl_compute,
    pattern=OpPattern.OPAQUE,
    doc="Decode SSD box offsets against anchors and pick each anchor's class (MXNet "
        "MultiBoxDetection before NMS).",
    level=5,
)


def multibox_transform_loc(cls_prob, loc_pred, anchor, clip=True, threshold=0.01,
                           variances=(0.1, 0.1, 0.2, 0.2), keep_background=False):
    """Decode SSD predictions (tvm.relay.vision.multibox_transform_loc).

    Args:
        cls_prob: ``(B, num_classes, N)`` class probabilities, class 0 the background.
        loc_pred: ``(B, N * 4)`` offsets ``(x, y, w, h)`` per anchor.
        anchor: ``(1, N, 4)`` corner anchors (multibox_prior's output).
        clip: clip decoded corners to ``[0, 1]``.
        threshold: a best class whose probability is below it makes the anchor background.
        variances: scales of the ``(x, y, w, h)`` offsets.
        keep_background: keep background anchors (ids unshifted) instead of dropping them.

    Returns:
        A :class:`TupleWrapper` of ``(B, N, 6)`` rows ``[class_id, score, xmin, ymin, xmax,
        ymax]`` (class id = best non-background class - 1; kept rows first in anchor order,
        then ``-1`` rows) and the ``(B,)`` int32 count of kept rows. The best class is the
        first maximum; center ``= off * var * anchor_size + anchor_center``, size
        ``= exp(off * var) * anchor_size``.
    """
    call = make_call("vision.multibox_transform_loc", [cls_prob, loc_pred, anchor], clip=clip,
                     threshold=threshold, variances=tuple(variances),
                     keep_background=keep_background)
    return TupleWrapper(call, 2)


__all__ = ["multibox_prior", "multibox_transform_loc"]

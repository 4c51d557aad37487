"""``vision.all_class_non_max_suppression`` (tvm.relay.vision; ONNX NonMaxSuppression and
TensorFlow's combined NMS).

Per batch ``b`` and class ``c``: the boxes whose score is ``> score_threshold``, sorted by score
(descending, stable: the lower box index first among ties), are kept greedily unless their IoU
(``nms._ir`` formula; coordinates may be ``[y1, x1, y2, x2]`` or ``[x1, y1, x2, y2]``, IoU is
symmetric in the axes) with an already kept box of that class is ``>= iou_threshold`` (Relay
0.19's comparison; ONNX says ``>``), at most ``max_output_boxes_per_class`` of them (``<= 0``:
no limit, as Relay 0.19).

``output_format="onnx"``: ``(selected (B*C*N, 3) int64 rows [b, c, box], total (1,) int64)``,
rows ordered by batch, class, then score; rows past ``total`` are 0.
``output_format="tensorflow"``: ``(selected (B, C*N, 2) int64 rows [c, box], scores (B, C*N),
counts (B,) int64)``, per batch ordered by class then score; rows past the count are 0.
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import AttrField as F
from ...ir.expr import Expr, const
from ...ir.types import TensorType, TupleType
from .._common import TupleWrapper, shape_str, tensor_args
from ..registry import OpPattern, make_call, register_op
from . import _ir

_OP = "vision.all_class_non_max_suppression"


def _rel(types, attrs):
    ts = tensor_args(types, ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                             "score_threshold"), _OP)
    if ts is None:
        return None
    boxes, scores, mo, iou, thr = ts
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3:
        raise TypeInferenceError(f"{_OP}: expected boxes (batch, num_boxes, 4) and scores "
                                 f"(batch, num_classes, num_boxes), got "
                                 f"{shape_str(boxes.shape)}, {shape_str(scores.shape)}")
    b, c, n = scores.shape
    if (boxes.shape[0], boxes.shape[1]) != (b, n) or boxes.dtype != scores.dtype:
        raise TypeInferenceError(f"{_OP}: boxes {shape_str(boxes.shape)} {boxes.dtype} and "
                                 f"scores {shape_str(scores.shape)} {scores.dtype} disagree")
    for t, what, kind in ((mo, "max_output_boxes_per_class", "int"), (iou, "iou_threshold",
                          "float"), (thr, "score_threshold", "float")):
        if t.ndim != 0 or not t.dtype.startswith(kind):
            raise TypeInferenceError(f"{_OP}: {what} must be a {kind} scalar, got {t.dtype} "
                                     f"shape {shape_str(t.shape)}")
    if attrs.output_format == "onnx":
        return TupleType([TensorType((b * c * n, 3), "int64"), TensorType((1,), "int64")])
    if attrs.output_format == "tensorflow":
        return TupleType([TensorType((b, c * n, 2), "int64"),
                          TensorType((b, c * n), scores.dtype), TensorType((b,), "int64")])
    raise TypeInferenceError(f"{_OP}: output_format must be 'onnx' or 'tensorflow', got "
                             f"{attrs.output_format!r}")


def _select(boxes, scores, max_out, iou_thr, score_thr):
    """For one batch: per class the kept box indices in score order."""
    dt = scores.dtype.type
    out = []
    for sc in scores:
        order = _ir.stable_desc_order(sc)
        kept = []
        for j in order:
            if not sc[j] > dt(score_thr) or (max_out > 0 and len(kept) >= max_out):
                continue
            if all(_ir.np_iou(boxes[j], boxes[k]) < dt(iou_thr) for k in kept):
                kept.append(j)
        out.append(kept)
    return out


def _ref(args, attrs, out_type):
    boxes, scores, mo, iou, thr = args
    b, c, n = scores.shape
    per = [_select(boxes[i], scores[i], int(mo), float(iou), float(thr)) for i in range(b)]
    if attrs.output_format == "onnx":
        rows = [(i, k, j) for i in range(b) for k in range(c) for j in per[i][k]]
        sel = np.zeros((b * c * n, 3), "int64")
        sel[:len(rows)] = np.array(rows, "int64").reshape(-1, 3)
        return sel, np.array([len(rows)], "int64")
    sel = np.zeros((b, c * n, 2), "int64")
    sc = np.zeros((b, c * n), scores.dtype)
    count = np.zeros(b, "int64")
    for i in range(b):
        rows = [(k, j) for k in range(c) for j in per[i][k]]
        count[i] = len(rows)
        if rows:
            sel[i, :len(rows)] = rows
            sc[i, :len(rows)] = [scores[i, k, j] for k, j in rows]
    return sel, sc, count


def _compute(attrs, inputs, out_type):
    from tvm import tirx, topi
    from tvm.script.ir_builder import tirx as T

    boxes, scores, mo, iou, thr = inputs
    dt = str(scores.dtype)
    b, c, n = (int(d) for d in scores.shape)
    mo = topi.cast(mo, "int32") if str(mo.dtype) != "int32" else mo
    iou = topi.cast(iou, dt) if str(iou.dtype) != dt else iou
    thr = topi.cast(thr, dt) if str(thr.dtype) != dt else thr
    order = topi.argsort(scores, axis=2, is_ascend=False, dtype="int32")
    onnx = attrs.output_format == "onnx"
    width = 3 if onnx else 2

    def body(ins, outs):
        bx, sc, od, m, it, st = ins
        sel, *rest = outs
        i64 = "int64"

        def set_row(i, pos, vals):
            for q, v in enumerate(vals):
                if onnx:
                    sel[pos, q] = v
                else:
                    sel[i, pos, q] = v

        with T.serial(0, 1):  # one frame holds the kernel's local scalars
            total = _ir.local("int32", 0)
            with T.serial(0, b) as i:
                pos = _ir.local("int32", 0 if not onnx else total[0])
                if not onnx:
                    pos[0] = 0
                with T.serial(0, c) as k:
                    start = _ir.local("int32", pos[0])
                    with T.serial(0, n) as j:
                        idx = od[i, k, j]
                        room = tirx.any(m[()] <= 0, pos[0] - start[0] < m[()])
                        with T.If(tirx.all(sc[i, k, idx] > st[()], room)):
                            with T.Then():
                                alive = _ir.local("int32", 1)
                                with T.serial(0, pos[0] - start[0]) as r:
                                    other = tirx.Cast("int32", (sel[start[0] + r, 2] if onnx
                                                                else sel[i, start[0] + r, 1]))
                                    ov = _ir.tir_iou(lambda x, q: bx[i, x, q], idx, other, dt)
                                    with T.If(ov >= it[()]):
                                        with T.Then():
                                            alive[0] = 0
                                with T.If(alive[0] == 1):
                                    with T.Then():
                                        vals = [tirx.Cast(i64, k), tirx.Cast(i64, idx)]
                                        if onnx:
                                            vals = [tirx.Cast(i64, i)] + vals
                                        else:
                                            rest[0][i, pos[0]] = sc[i, k, idx]
                                        set_row(i, pos[0], vals)
                                        pos[0] = pos[0] + 1
                if onnx:
                    total[0] = pos[0]
                else:
                    rest[1][i] = tirx.Cast(i64, pos[0])
                    with T.serial(0, c * n) as j:
                        with T.If(j >= pos[0]):
                            with T.Then():
                                set_row(i, j, [tirx.const(0, i64)] * width)
                                rest[0][i, j] = tirx.const(0, dt)
            if onnx:
                with T.serial(0, b * c * n) as j:
                    with T.If(j >= total[0]):
                        with T.Then():
                            set_row(None, j, [tirx.const(0, i64)] * width)
                rest[0][0] = tirx.Cast(i64, total[0])

    if onnx:
        shapes, dts = [(b * c * n, 3), (1,)], ["int64", "int64"]
    else:
        shapes, dts = [(b, c * n, 2), (b, c * n), (b,)], ["int64", dt, "int64"]
    return _ir.extern("all_class_nms", shapes, dts, [boxes, scores, order, mo, iou, thr], body)


register_op(
    _OP,
    num_inputs=5,
    arguments=("boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
               "score_threshold"),
    attrs=("relay.attrs.AllClassNonMaximumSuppressionAttrs",
           [F("output_format", "str", "onnx")]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OPAQUE,
    doc="Per-class greedy NMS returning selected (batch, class, box) indices (ONNX "
        "NonMaxSuppression).",
    level=5,
)


def all_class_non_max_suppression(boxes, scores, max_output_boxes_per_class=-1,
                                  iou_threshold=0.5, score_threshold=0.0, output_format="onnx"):
    """Non-maximum suppression per class (tvm.relay.vision.all_class_non_max_suppression).

    Args:
        boxes: ``(B, N, 4)`` float boxes (two opposite corners).
        scores: ``(B, C, N)`` of boxes' dtype.
        max_output_boxes_per_class: int or int scalar expression; ``<= 0``: no limit.
        iou_threshold, score_threshold: floats or float32 scalar expressions.
        output_format: ``"onnx"`` or ``"tensorflow"`` (module docstring).

    Returns:
        A :class:`TupleWrapper` of 2 (onnx) or 3 (tensorflow) fields.
    """
    def scalar(v, dt):
        return v if isinstance(v, Expr) else const(np.array(v, dt), dt)

    call = make_call(_OP, [boxes, scores, scalar(max_output_boxes_per_class, "int32"),
                           scalar(iou_threshold, "float32"), scalar(score_threshold, "float32")],
                     output_format=output_format)
    return TupleWrapper(call, 2 if output_format == "onnx" else 3)


__all__ = ["all_class_non_max_suppression"]

"""Box selection (tvm.relay.vision): ``get_valid_counts``, ``non_max_suppression``,
``all_class_non_max_suppression``.

Semantics are tvm.relay 0.19's (topi.vision.nms of that release), stated here in full because
the NumPy reference kernels and the compiled TIR kernels both implement exactly this:

- Sorting is by score, descending and stable: among equal scores the box that comes first in
  the input comes first (``std::stable_sort`` in TVM's sort kernel, MXNet's box_nms likewise).
- ``get_valid_counts`` keeps boxes whose score is ``> score_threshold`` and, when
  ``id_index >= 0``, whose class id is ``>= 0``; kept boxes move to the top in input order,
  the other rows become ``-1``.
- ``non_max_suppression`` takes the first ``valid_count[b]`` rows, sorts them, keeps the top
  ``top_k`` (``top_k <= 0``: all), then walks them in order: once ``max_output_size`` boxes
  are kept (``< 0``: no limit) the rest become ``-1``; a box with score ``> 0`` is suppressed
  (its row set to ``-1``) when its IoU with an earlier kept box with score ``> 0`` (and a
  class id ``>= 0`` when ``id_index >= 0``) is ``>= iou_threshold`` and either
  ``force_suppress``, ``id_index < 0``, or both have the same class id. Rows with score
  ``<= 0`` are neither suppressed nor counted. ``iou_threshold <= 0`` copies the valid rows
  unsorted. Rows past ``valid_count`` are ``-1``.
- ``return_indices``: the result is ``(indices, valid_box_count)``: the kept rows' positions
  in the original data (through ``indices``), compacted to the front, ``-1`` after; and their
  count, shape ``(batch, 1)``.
- ``invalid_to_bottom``: the kept rows move to the front in order, ``-1`` rows after them.
  (tvm 0.19 tested column 0 of a row for ``>= 0``; we test whether the row was kept, which
  is the same for SSD's ``[id, score, box]`` rows and right for others, as MXNet's box_nms.)
- ``all_class_non_max_suppression`` (ONNX NonMaxSuppression): per batch and class, boxes with
  score ``> score_threshold``, sorted, greedily kept unless their IoU with a kept box of that
  class is ``>= iou_threshold``, at most ``max_output_boxes_per_class``.

All are kOpaque and lower to sequential TIR kernels (``_ir.extern``) after topi's stable
``argsort`` (TVM's ``tvm.contrib.sort.argsort_nms`` runtime kernel).
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


def _check_boxes(data, op, what="data"):
    if data.ndim != 3:
        raise TypeInferenceError(f"{op}: {what} must be (batch, num_anchors, elem_length), got "
                                 f"shape {shape_str(data.shape)}")
    if not data.dtype.startswith("float"):
        raise TypeInferenceError(f"{op}: {what} has dtype {data.dtype}, expected a float dtype")


def _check_scalar(t, op, what, kinds):
    if t.ndim != 0 or not t.dtype.startswith(kinds):
        raise TypeInferenceError(f"{op}: {what} must be a scalar of a {'/'.join(kinds)} dtype, "
                                 f"got {t.dtype} shape {shape_str(t.shape)}")


def _check_index(idx, elem, op, name):
    if isinstance(elem, int) and not (-1 <= idx < elem) or (name != "id_index" and idx < 0):
        raise TypeInferenceError(f"{op}: {name}={idx} is outside the {elem} elements of a box")


# ---- get_valid_counts ---------------------------------------------------------------------------


def _gvc_rel(types, attrs):
    op = "vision.get_valid_counts"
    ts = tensor_args(types, ("data", "score_threshold"), op)
    if ts is None:
        return None
    data, thr = ts
    _check_boxes(data, op)
    _check_scalar(thr, op, "score_threshold", ("float",))
    _check_index(attrs.score_index, data.shape[2], op, "score_index")
    _check_index(attrs.id_index, data.shape[2], op, "id_index")
    b, n, _ = data.shape
    return TupleType([TensorType((b,), "int32"), data, TensorType((b, n), "int32")])


def _gvc_ref(args, attrs, out_type):
    data, thr = args
    b, n, _ = data.shape
    count = np.zeros(b, "int32")
    out = np.full_like(data, -1)
    idx = np.full((b, n), -1, "int32")
    for i in range(b):
        ok = data[i, :, attrs.score_index] > thr
        if attrs.id_index >= 0:
            ok &= data[i, :, attrs.id_index] >= 0
        keep = np.nonzero(ok)[0]
        count[i] = len(keep)
        out[i, :len(keep)] = data[i, keep]
        idx[i, :len(keep)] = keep
    return count, out, idx


def _gvc_compute(attrs, inputs, out_type):
    from tvm import tirx, topi
    from tvm.script.ir_builder import tirx as T

    data, thr = inputs
    if str(thr.dtype) != str(data.dtype):
        thr = topi.cast(thr, data.dtype)
    b, n, elem = data.shape  # ints, or symbolic in a VM kernel
    dt = str(data.dtype)

    def body(ins, outs):
        d, t = ins
        count, out, idx = outs
        with T.parallel(0, b) as i:
            pos = _ir.local("int32", 0)
            with T.serial(0, n) as j:
                ok = d[i, j, attrs.score_index] > t[()]
                if attrs.id_index >= 0:
                    ok = tirx.all(ok, d[i, j, attrs.id_index] >= tirx.const(0, dt))
                with T.If(ok):
                    with T.Then():
                        with T.serial(0, elem) as k:
                            out[i, pos[0], k] = d[i, j, k]
                        idx[i, pos[0]] = j
                        pos[0] = pos[0] + 1
            with T.serial(0, n) as j:
                with T.If(j >= pos[0]):
                    with T.Then():
                        with T.serial(0, elem) as k:
                            out[i, j, k] = tirx.const(-1, dt)
                        idx[i, j] = -1
            count[i] = pos[0]

    return _ir.extern("vision_get_valid_counts", [(b,), (b, n, elem), (b, n)],
                      ["int32", dt, "int32"], [data, thr], body)


register_op(
    "vision.get_valid_counts",
    num_inputs=2,
    arguments=("data", "score_threshold"),
    attrs=("relay.attrs.GetValidCountsAttrs",
           [F("id_index", "int", 0), F("score_index", "int", 1)]),
    rel=_gvc_rel,
    ref=_gvc_ref,
    compute=_gvc_compute,
    pattern=OpPattern.OPAQUE,
    doc="Boxes whose score exceeds score_threshold, moved to the top (topi.vision."
        "get_valid_counts).",
    level=5,
)


def get_valid_counts(data, score_threshold, id_index=0, score_index=1):
    """Count the boxes whose score is above a threshold and move them to the top
    (tvm.relay.vision.get_valid_counts).

    Args:
        data: ``(batch, num_anchors, elem_length)`` float boxes, e.g. ``[id, score, x1, y1,
            x2, y2]`` rows.
        score_threshold: a float or a float32 scalar expression; a box is valid when its score
            is strictly greater.
        id_index: column of the class id (a box with id ``< 0`` is invalid); ``-1``: none.
        score_index: column of the score.

    Returns:
        A :class:`TupleWrapper` of ``valid_count`` ``(batch,)`` int32, ``out`` (data's shape:
        valid rows first in input order, then ``-1`` rows) and ``out_indices`` ``(batch,
        num_anchors)`` int32 (the input row of each output row, ``-1`` after the valid ones).
    """
    if not isinstance(score_threshold, Expr):
        score_threshold = const(float(score_threshold), "float32")
    return TupleWrapper(make_call("vision.get_valid_counts", [data, score_threshold],
                                  id_index=id_index, score_index=score_index), 3)


# ---- non_max_suppression ------------------------------------------------------------------------


def _nms_rel(types, attrs):
    op = "vision.non_max_suppression"
    ts = tensor_args(types, ("data", "valid_count", "indices", "max_output_size",
                             "iou_threshold"), op)
    if ts is None:
        return None
    data, vc, ind, mos, iou = ts
    _check_boxes(data, op)
    b, n, elem = data.shape
    if vc.ndim != 1 or not vc.dtype.startswith("int"):
        raise TypeInferenceError(f"{op}: valid_count must be (batch,) int, got {vc.dtype} "
                                 f"shape {shape_str(vc.shape)}")
    if not attrs.return_indices and ind.ndim not in (1, 2):
        raise TypeInferenceError(f"{op}: indices must be (batch, num_anchors), got shape "
                                 f"{shape_str(ind.shape)}")
    if attrs.return_indices and (ind.ndim != 2 or not ind.dtype.startswith("int")):
        raise TypeInferenceError(f"{op}: indices must be (batch, num_anchors) int, got "
                                 f"{ind.dtype} shape {shape_str(ind.shape)}")
    _check_scalar(mos, op, "max_output_size", ("int",))
    _check_scalar(iou, op, "iou_threshold", ("float",))
    if isinstance(elem, int) and attrs.coord_start + 4 > elem or attrs.coord_start < 0:
        raise TypeInferenceError(f"{op}: coord_start={attrs.coord_start} leaves no 4 "
                                 f"coordinates in the {elem} elements of a box")
    _check_index(attrs.score_index, elem, op, "score_index")
    _check_index(attrs.id_index, elem, op, "id_index")
    if attrs.return_indices:
        return TupleType([TensorType((b, n), "int32"), TensorType((b, 1), "int32")])
    return data


def nms_reference(data, valid_count, indices, max_output_size, iou_threshold, attrs):
    """NumPy NMS with the semantics of the module docstring; returns ``(out, box_indices)``
    before any rearrangement (``box_indices`` already mapped through ``indices`` when
    ``return_indices``)."""
    b, n, _ = data.shape
    s, cs, idx_col = attrs.score_index, attrs.coord_start, attrs.id_index
    out = np.full_like(data, -1)
    box = np.full((b, n), -1, "int32")
    iou_thr = data.dtype.type(iou_threshold)
    for i in range(b):
        vc = int(min(max(valid_count[i], 0), n))
        if iou_thr > 0:
            if vc > 0:
                order = _ir.stable_desc_order(data[i, :vc, s])
                nkeep = attrs.top_k if 0 < attrs.top_k < vc else vc
                out[i, :nkeep] = data[i, order[:nkeep]]
                box[i, :nkeep] = order[:nkeep]
            kept = 0
            for j in range(vc):
                if kept == max_output_size:
                    out[i, j], box[i, j] = -1, -1
                elif out[i, j, s] > 0:
                    for k in range(j):
                        if not (out[i, k, s] > 0 and (idx_col < 0 or out[i, k, idx_col] >= 0)):
                            continue
                        if not (attrs.force_suppress or idx_col < 0
                                or out[i, j, idx_col] == out[i, k, idx_col]):
                            continue
                        if _ir.np_iou(out[i, j, cs:cs + 4], out[i, k, cs:cs + 4]) >= iou_thr:
                            out[i, j], box[i, j] = -1, -1
                            break
                    else:
                        kept += 1
        else:
            out[i, :vc] = data[i, :vc]
            box[i, :vc] = np.arange(vc)
        if attrs.return_indices:
            sel = box[i, :vc] >= 0
            box[i, :vc][sel] = indices[i, box[i, :vc][sel]]
    return out, box


def _compact(rows, keep):
    """Rows of ``rows`` where ``keep``, to the front; ``-1`` after."""
    out = np.full_like(rows, -1)
    k = rows[keep]
    out[:len(k)] = k
    return out


def _nms_ref(args, attrs, out_type):
    data, vc, ind, mos, iou = args
    out, box = nms_reference(data, vc, ind, int(mos), float(iou), attrs)
    if attrs.return_indices:
        comp = np.stack([_compact(box[i], box[i] >= 0) for i in range(len(box))])
        count = (box >= 0).sum(axis=1, keepdims=True).astype("int32")
        return comp.astype("int32"), count
    if attrs.invalid_to_bottom:
        return np.stack([_compact(out[i], box[i] >= 0) for i in range(len(out))])
    return out


def _nms_kernel(attrs, data, sorted_index, valid_count, indices, mos, iou_thr):
    """TIR: the NMS walk; returns ``(out, box_indices)`` tensors as :func:`nms_reference`."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    b, n, elem = data.shape  # ints, or symbolic in a VM kernel
    dt = str(data.dtype)
    top_k = attrs.top_k
    local = _ir.local

    def body(ins, outs):
        d, order, vcnt, ind, mo, thr = ins
        out, box = outs
        neg = tirx.const(-1, dt)
        zero = tirx.const(0, dt)

        def clear(i, j):
            with T.serial(0, elem) as k:
                out[i, j, k] = neg
            box[i, j] = -1

        with T.parallel(0, b) as i:
            vc = local("int32", tirx.max(0, tirx.min(vcnt[i], n)))
            with T.serial(0, n) as j:
                clear(i, j)
            with T.If(thr[()] > zero):
                with T.Then():
                    nkeep = local("int32", vc[0])
                    if top_k > 0:
                        with T.If(tirx.const(top_k, "int32") < vc[0]):
                            with T.Then():
                                nkeep[0] = top_k
                    with T.serial(0, n) as j:
                        with T.If(j < nkeep[0]):
                            with T.Then():
                                with T.serial(0, elem) as k:
                                    out[i, j, k] = d[i, order[i, j], k]
                                box[i, j] = order[i, j]
                    kept = local("int32", 0)
                    with T.serial(0, n) as j:
                        with T.If(j < vc[0]):
                            with T.Then():
                                _nms_step(out, box, i, j, kept, mo, thr, attrs, dt, clear)
                with T.Else():
                    with T.serial(0, n) as j:
                        with T.If(j < vc[0]):
                            with T.Then():
                                with T.serial(0, elem) as k:
                                    out[i, j, k] = d[i, j, k]
                                box[i, j] = j
            if attrs.return_indices:
                with T.serial(0, n) as j:
                    with T.If(tirx.all(j < vc[0], box[i, j] >= 0)):
                        with T.Then():
                            box[i, j] = ind[i, box[i, j]]

    return _ir.extern("vision_nms", [(b, n, elem), (b, n)], [dt, "int32"],
                      [data, sorted_index, valid_count, indices, mos, iou_thr], body)


def _nms_step(out, box, i, j, kept, mo, thr, attrs, dt, clear):
    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    s, cs, idc = attrs.score_index, attrs.coord_start, attrs.id_index
    zero = tirx.const(0, dt)
    with T.If(kept[0] == mo[()]):
        with T.Then():
            clear(i, j)
        with T.Else():
            with T.If(out[i, j, s] > zero):
                with T.Then():
                    alive = _ir.local("int32", 1)
                    with T.serial(0, j) as k:
                        cond = [alive[0] == 1, out[i, k, s] > zero]
                        if idc >= 0:
                            cond.append(out[i, k, idc] >= zero)
                            if not attrs.force_suppress:
                                cond.append(out[i, j, idc] == out[i, k, idc])
                        with T.If(tirx.all(*cond)):
                            with T.Then():
                                iou = _ir.tir_iou(lambda x, c: out[i, x, cs + c], j, k, dt)
                                with T.If(iou >= thr[()]):
                                    with T.Then():
                                        alive[0] = 0
                    with T.If(alive[0] == 0):
                        with T.Then():
                            clear(i, j)
                        with T.Else():
                            kept[0] = kept[0] + 1


def _compact_kernel(rows, box, name):
    """TIR: rows (B, N[, L]) where box >= 0 to the front, -1 after; plus the counts (B, 1)."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    shape = list(rows.shape)  # ints, or symbolic in a VM kernel
    b, n = shape[0], shape[1]
    dt = str(rows.dtype)

    def body(ins, outs):
        r, bx = ins
        out, cnt = outs
        with T.parallel(0, b) as i:
            pos = _ir.local("int32", 0)
            with T.serial(0, n) as j:
                with T.If(bx[i, j] >= 0):
                    with T.Then():
                        if len(shape) == 3:
                            with T.serial(0, shape[2]) as k:
                                out[i, pos[0], k] = r[i, j, k]
                        else:
                            out[i, pos[0]] = r[i, j]
                        pos[0] = pos[0] + 1
            with T.serial(0, n) as j:
                with T.If(j >= pos[0]):
                    with T.Then():
                        if len(shape) == 3:
                            with T.serial(0, shape[2]) as k:
                                out[i, j, k] = tirx.const(-1, dt)
                        else:
                            out[i, j] = tirx.const(-1, dt)
            cnt[i, 0] = pos[0]

    return _ir.extern(name, [tuple(shape), (b, 1)], [dt, "int32"], [rows, box], body)


def _nms_compute(attrs, inputs, out_type):
    from tvm import te, topi

    data, vc, ind, mos, thr = inputs
    if len(ind.shape) == 1:  # Relay 0.19's MultiBoxDetection passed valid_count as indices
        ind = te.compute(data.shape[:2], lambda i, j: j, name="nms_arange")
    vc = topi.cast(vc, "int32") if str(vc.dtype) != "int32" else vc
    mos = topi.cast(mos, "int32") if str(mos.dtype) != "int32" else mos
    thr = topi.cast(thr, data.dtype) if str(thr.dtype) != str(data.dtype) else thr
    ind = topi.cast(ind, "int32") if str(ind.dtype) != "int32" else ind
    score = te.compute(data.shape[:2], lambda i, j: data[i, j, attrs.score_index],
                       name="nms_score")
    order = topi.argsort(score, valid_count=vc, axis=1, is_ascend=False)
    out, box = _nms_kernel(attrs, data, order, vc, ind, mos, thr)
    if attrs.return_indices:
        return _compact_kernel(box, box, "vision_nms_indices")
    if attrs.invalid_to_bottom:
        return _compact_kernel(out, box, "vision_nms_rearrange")[0]
    return out


register_op(
    "vision.non_max_suppression",
    num_inputs=5,
    arguments=("data", "valid_count", "indices", "max_output_size", "iou_threshold"),
    attrs=("relay.attrs.NonMaximumSuppressionAttrs", [
        F("force_suppress", "bool", False), F("top_k", "int", -1), F("coord_start", "int", 2),
        F("score_index", "int", 1), F("id_index", "int", 0), F("return_indices", "bool", True),
        F("invalid_to_bottom", "bool", False),
    ]),
    rel=_nms_rel,
    ref=_nms_ref,
    compute=_nms_compute,
    pattern=OpPattern.OPAQUE,
    doc="Greedy non-maximum suppression of scored boxes (tvm.relay 0.19's topi.vision.nms).",
    level=5,
)


def non_max_suppression(data, valid_count, indices, max_output_size=-1, iou_threshold=0.5,
                        force_suppress=False, top_k=-1, coord_start=2, score_index=1,
                        id_index=0, return_indices=True, invalid_to_bottom=False):
    """Greedy non-maximum suppression (tvm.relay.vision.non_max_suppression).

    Args:
        data: ``(batch, num_anchors, elem_length)`` float rows holding a score at
            ``score_index``, 4 corner coordinates from ``coord_start`` and (``id_index >= 0``)
            a class id; usually get_valid_counts' second output.
        valid_count: ``(batch,)`` int: how many leading rows are candidates.
        indices: ``(batch, num_anchors)`` int: each row's index in the original data
            (get_valid_counts' third output); used when ``return_indices``.
        max_output_size: int or int32 scalar expression; ``< 0``: no limit.
        iou_threshold: float or float32 scalar expression; suppress at IoU ``>=`` it.
        force_suppress: suppress across classes.
        top_k: keep the ``top_k`` best rows before suppression; ``<= 0``: all.
        return_indices: return ``(indices (batch, num_anchors) int32, valid_box_count
            (batch, 1) int32)`` instead of the boxes.
        invalid_to_bottom: move the kept rows to the top.

    Returns:
        data's shape (the kept rows sorted by score, others ``-1``), or a
        :class:`TupleWrapper` of two when ``return_indices``. Semantics: the module docstring.
    """
    if not isinstance(max_output_size, Expr):
        max_output_size = const(int(max_output_size), "int32")
    if not isinstance(iou_threshold, Expr):
        iou_threshold = const(float(iou_threshold), "float32")
    call = make_call("vision.non_max_suppression",
                     [data, valid_count, indices, max_output_size, iou_threshold],
                     force_suppress=force_suppress, top_k=top_k, coord_start=coord_start,
                     score_index=score_index, id_index=id_index,
                     return_indices=return_indices, invalid_to_bottom=invalid_to_bottom)
    return TupleWrapper(call, 2) if return_indices else call

__all__ = ["get_valid_counts", "non_max_suppression"]

from .all_class_nms import all_class_non_max_suppression  # noqa: E402,F401  (0.19 had it here)

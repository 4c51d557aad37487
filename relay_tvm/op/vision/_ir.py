"""Shared pieces of the vision kernels: the box IoU formula in NumPy and in TIR, and the
``te.extern`` wrapper the sequential kernels are written with.

The IoU is computed in the data's dtype by one formula, the same in the reference kernel and in
the compiled one, so that a threshold test gives the same answer in both (boxes are taken as
``(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))``, as Relay's NMS did)::

    w = max(0, min(ar, br) - max(al, bl));  h = max(0, min(ab, bb) - max(at, bt))
    inter = h * w;  union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - inter
    iou = 0 if union <= 0 else inter / union
"""

from __future__ import annotations

import numpy as np


def np_corners(box):
    """``(l, t, r, b)`` of a 4-vector of corners, in its own dtype."""
    x1, y1, x2, y2 = box[0], box[1], box[2], box[3]
    return min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)


def np_iou(a, b):
    """The IoU of two corner boxes (4-vectors), computed in their dtype."""
    al, at, ar, ab = np_corners(a)
    bl, bt, br, bb = np_corners(b)
    zero = a.dtype.type(0)
    w = max(zero, min(ar, br) - max(al, bl))
    h = max(zero, min(ab, bb) - max(at, bt))
    inter = h * w
    union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - inter
    return zero if union <= zero else inter / union


def tir_iou(load, a, b, dtype):
    """The IoU in TIR; ``load(box, k)`` reads coordinate ``k`` of box ``a`` or ``b``."""
    from tvm import te, tirx

    def corners(x):
        c = [load(x, k) for k in range(4)]
        return (te.min(c[0], c[2]), te.min(c[1], c[3]), te.max(c[0], c[2]), te.max(c[1], c[3]))

    al, at, ar, ab = corners(a)
    bl, bt, br, bb = corners(b)
    zero = tirx.const(0, dtype)
    w = te.max(zero, te.min(ar, br) - te.max(al, bl))
    h = te.max(zero, te.min(ab, bb) - te.max(at, bt))
    inter = h * w
    union = (ar - al) * (ab - at) + (br - bl) * (bb - bt) - inter
    one = tirx.const(1, dtype)
    return tirx.Select(union <= zero, zero, inter / tirx.Select(union <= zero, one, union))


def extern(name, out_shapes, out_dtypes, inputs, body):
    """A ``te.extern`` whose body is written with TVM's IR builder.

    ``body(ins, outs)`` receives buffer proxies (indexable like arrays) and builds the
    statements inside an ``IRBuilder`` context; the result is one tensor or a list of them.
    """
    import tvm
    from tvm import te
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as T

    in_bufs = [tvm.tirx.decl_buffer(t.shape, t.dtype, f"{name}_in{i}", layout=None)
               for i, t in enumerate(inputs)]
    out_bufs = [tvm.tirx.decl_buffer(s, d, f"{name}_out{i}", layout=None)
                for i, (s, d) in enumerate(zip(out_shapes, out_dtypes))]

    def build(ins, outs):
        with IRBuilder() as ib:
            body([T.buffer_proxy(b) for b in ins], [T.buffer_proxy(b) for b in outs])
        return ib.get()

    res = te.extern(list(out_shapes), list(inputs), build, dtype=list(out_dtypes),
                    in_buffers=in_bufs, out_buffers=out_bufs, name=name, tag=name)
    return res if isinstance(res, list) else [res]


def local(dtype, init=None):
    """A one-element local buffer (a mutable scalar inside an IR-builder body)."""
    from tvm.script.ir_builder import tirx as T

    buf = T.buffer_proxy(T.alloc_buffer((1,), dtype, scope="local"))
    if init is not None:
        buf[0] = init
    return buf


def stable_desc_order(scores):
    """Indices that sort ``scores`` descending, ties in index order (``std::stable_sort`` with a
    greater-than comparator, what TVM's sort kernels do)."""
    return np.argsort(-scores.astype("float64"), kind="stable")

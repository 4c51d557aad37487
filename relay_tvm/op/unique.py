"""tvm.relay 0.19's ``unique``: the distinct elements of a 1-D integer tensor, padded to the
input's length.

Outputs (0.19's order): ``output`` (the distinct values, data's dtype), ``indices`` (where each
first occurs), ``inverse_indices`` (for each element, its value's position in ``output``),
``num_unique`` (shape ``(1,)``), and with ``return_counts`` ``counts``; all but ``output`` are
int32, all but ``num_unique`` have data's length. Entries at positions ``>= num_unique[0]``
are padding (0.19: undefined); here they are 0 in ``output`` and ``counts`` and ``n`` in
``indices``, the same in the interpreter and in compiled code.

The TE compute (TVM 0.27's topi has no ``unique``): argsort, a flag where the sorted value
changes, its inclusive cumsum (each element's rank among the distinct values), then
``scatter_elements`` for the values, first indices (``min``), counts (``add``) and the inverse;
for ``is_sorted=False`` the distinct values are reordered by first occurrence with a second
argsort.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType, TupleType
from ._common import TupleWrapper, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op


def _unique_rel(types, attrs):
    ts = tensor_args(types, ("data",), "unique")
    if ts is None:
        return None
    (data,) = ts
    if data.ndim != 1:
        raise TypeInferenceError(f"unique: data must be 1-D, got shape {shape_str(data.shape)}")
    if not data.dtype.startswith(("int", "uint")):
        raise TypeInferenceError(f"unique: data must have an integer dtype, got {data.dtype}")
    n = data.shape
    fields = [TensorType(n, data.dtype), TensorType(n, "int32"), TensorType(n, "int32"),
              TensorType((1,), "int32")]
    if attrs.return_counts:
        fields.append(TensorType(n, "int32"))
    return TupleType(fields)


def _unique_ref(args, attrs, out_type):
    data = np.asarray(args[0])
    n = data.shape[0]
    vals, first, inverse, counts = np.unique(
        data, return_index=True, return_inverse=True, return_counts=True
    )
    if not attrs.sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        vals, first, counts, inverse = vals[order], first[order], counts[order], rank[inverse]
    k = vals.size

    def pad(a, fill, dtype):
        out = np.full(n, fill, dtype)
        out[:k] = a
        return out

    res = [pad(vals, 0, data.dtype), pad(first, n, "int32"), inverse.astype("int32"),
           np.array([k], "int32")]
    if attrs.return_counts:
        res.append(pad(counts, 0, "int32"))
    return tuple(res)


def _unique_compute(attrs, inputs, out_type):
    from tvm import te, tirx, topi

    from .algorithm import _sortable

    x = inputs[0]
    n = x.shape[0]  # static, or symbolic for an ``Any`` length (run by the VM)
    i32 = "int32"
    order = topi.argsort(_sortable(x), axis=0, is_ascend=True, dtype=i32)
    srt = topi.take(x, order, mode="clip")
    change = te.compute(
        (n,),
        lambda i: tirx.Select(
            tirx.all(i > 0, srt[i] != srt[tirx.max(i - 1, 0)]),
            tirx.const(1, i32), tirx.const(0, i32)),
        name="unique_change",
    )
    rank = topi.cumsum(change, axis=0, dtype=i32)  # sorted position -> distinct value's rank
    num = te.compute(
        (1,),
        lambda _: tirx.if_then_else(n > 0, rank[tirx.max(n - 1, 0)] + 1, tirx.const(0, i32)),
        name="unique_num",
    )
    zeros_v = topi.full((n,), x.dtype, 0)
    zeros = topi.full((n,), i32, 0)
    ones = topi.full((n,), i32, 1)
    vals = topi.scatter_elements(zeros_v, rank, srt, 0, "update")
    n32 = n if isinstance(n, int) else tirx.Cast(i32, n)
    first = topi.scatter_elements(topi.full((n,), i32, n32), rank, order, 0, "min")
    counts = topi.scatter_elements(zeros, rank, ones, 0, "add")
    inverse = topi.scatter_elements(zeros, order, rank, 0, "update")
    if not attrs.sorted:
        # distinct values by first occurrence: padding (first == n) sorts last
        perm = topi.argsort(first, axis=0, is_ascend=True, dtype=i32)
        where = topi.scatter_elements(zeros, perm, topi.arange(0, n, dtype=i32), 0, "update")
        vals, first, counts = (topi.take(t, perm, mode="clip") for t in (vals, first, counts))
        inverse = topi.take(where, inverse, mode="clip")
    outs = [vals, first, inverse, num]
    if attrs.return_counts:
        outs.append(counts)
    return outs


register_op(
    "unique",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.UniqueAttrs", [F("sorted", "bool", True),
                                       F("return_counts", "bool", False)]),
    rel=_unique_rel,
    ref=_unique_ref,
    compute=_unique_compute,
    pattern=OpPattern.OPAQUE,
    doc="Distinct elements of a 1-D integer tensor, padded to its length (see the module doc).",
    level=3,
)


def unique(data, is_sorted=True, return_counts=False):
    """The distinct elements of a 1-D integer tensor (tvm.relay 0.19's ``relay.unique``).

    Args:
        data: a 1-D integer tensor of length ``n`` (``Any`` too: then run it on the VM).
        is_sorted: order the distinct values ascending (True) or by first occurrence (False).
        return_counts: also return how often each distinct value occurs.

    Returns:
        A TupleWrapper of ``output`` (``(n,)``, data's dtype), ``indices`` (``(n,)`` int32:
        each distinct value's first position), ``inverse_indices`` (``(n,)`` int32:
        ``output[inverse_indices[i]] == data[i]``), ``num_unique`` (``(1,)`` int32) and, with
        ``return_counts``, ``counts`` (``(n,)`` int32). Positions ``>= num_unique[0]`` are
        padding (0; ``n`` in ``indices``).

    Raises:
        TypeInferenceError: (at type inference) data is not 1-D or not of an integer dtype.
    """
    call = make_call("unique", [data], sorted=bool(is_sorted), return_counts=bool(return_counts))
    return TupleWrapper(call, 5 if return_counts else 4)


__all__ = ["unique"]

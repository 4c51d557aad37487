"""Sorting operators (tvm.relay.op.algorithm): ``sort``, ``argsort`` and ``topk``.

Both are opaque to fusion (kOpaque) and lower to topi's extern sort kernels. Ties keep the
original order (a stable sort, as TVM's CPU kernels and ``numpy.argsort(kind="stable")``); NaN
sorts last (largest), as in numpy, and -0.0 ties with 0.0; int8/int16/uint8/uint16/bool data
is sorted as int32.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType, TupleType
from ._common import TupleWrapper, normalize_axis, require_equal_dims, static_value, tensor_args
from .registry import OpPattern, make_call, register_op


def _stable_order(x, axis, ascend):
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    # descending and stable: sort the reversed array ascending, then map indices back
    n = x.shape[axis]
    rev = np.flip(x, axis=axis)
    idx = np.argsort(rev, axis=axis, kind="stable")
    idx = np.flip(idx, axis=axis)
    return n - 1 - idx


# TVM's sort kernels take float16/32/64 and int32/64 only ("Unsupported input dtype: int8"):
# narrower integers and bools are sorted as int32, which keeps their order and values. Its
# float comparator puts NaN before inf; numpy puts NaN last (largest). Floats are therefore
# sorted by an integer key in the same total order as numpy's: the bits of the value with NaN
# made one positive NaN (above +inf) and -0.0 made +0.0, negative values' bits flipped.
_WIDEN = ("int8", "int16", "uint8", "uint16", "bool")
_KEY = {"float16": ("int16", 0x7FFF, 0x7E00), "float32": ("int32", 0x7FFFFFFF, 0x7FC00000),
        "float64": ("int64", 0x7FFFFFFFFFFFFFFF, 0x7FF8000000000000)}


def _sortable(x):
    """The tensor topi sorts in ``x``'s stead (``x`` itself for int32/int64)."""
    from tvm import te, tirx, topi

    dt = str(x.dtype)
    if dt in _WIDEN:
        return topi.cast(x, "int32")
    if dt not in _KEY:
        return x
    ity, flip, qnan = _KEY[dt]

    def key(*i):
        v = x(*i)
        b = tirx.reinterpret(ity, v)
        isnan = (b & tirx.const(flip, ity)) > tirx.const(_NAN_INF[dt], ity)
        b = tirx.Select(isnan, tirx.const(qnan, ity),
                        tirx.Select(v == tirx.const(0, dt), tirx.const(0, ity), b))
        return tirx.Select(b < tirx.const(0, ity), b ^ tirx.const(flip, ity), b)

    k = te.compute(x.shape, key, name="sort_key", tag="elemwise")
    return topi.cast(k, "int32") if ity == "int16" else k


_NAN_INF = {"float16": 0x7C00, "float32": 0x7F800000, "float64": 0x7FF0000000000000}


def _back(x, dtype):
    from tvm import topi

    return topi.cast(x, dtype) if str(x.dtype) != str(dtype) else x


def _sort_compute(attrs, inputs, out_type):
    from tvm import topi

    x = inputs[0]
    if str(x.dtype) not in _KEY:
        return _back(topi.sort(_sortable(x), axis=attrs.axis, is_ascend=attrs.is_ascend),
                     x.dtype)
    idx = topi.argsort(_sortable(x), axis=attrs.axis, is_ascend=attrs.is_ascend, dtype="int32")
    return topi.gather(x, attrs.axis % len(x.shape), idx)


def _argsort_rel(types, attrs):
    ts = tensor_args(types, ("data",), "argsort")
    if ts is None:
        return None
    normalize_axis(attrs.axis, ts[0].ndim, "argsort")
    if not attrs.dtype.startswith(("int", "float")):
        raise TypeInferenceError(f"argsort: dtype must be an int or float dtype, got {attrs.dtype}")
    return TensorType(ts[0].shape, attrs.dtype)


def _argsort_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.argsort(
        _sortable(inputs[0]), axis=attrs.axis, is_ascend=attrs.is_ascend, dtype=out_type.dtype
    )


register_op(
    "argsort",
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.ArgsortAttrs",
        [F("axis", "int", -1), F("is_ascend", "bool", True), F("dtype", "dtype", "int32")],
    ),
    rel=_argsort_rel,
    ref=lambda args, attrs, out_type: _stable_order(args[0], attrs.axis, attrs.is_ascend),
    compute=_argsort_compute,
    pattern=OpPattern.OPAQUE,
    doc="Indices that sort data along axis (topi.argsort).",
    level=6,
)


def argsort(data, axis=-1, is_ascend=1, dtype="int32"):
    """The indices that sort ``data`` along ``axis`` (ascending unless ``is_ascend`` is false);
    ``dtype`` is the index dtype."""
    return make_call("argsort", [data], axis=axis, is_ascend=bool(is_ascend), dtype=dtype)


def _sort_rel(types, attrs):
    ts = tensor_args(types, ("data",), "sort")
    if ts is None:
        return None
    normalize_axis(attrs.axis, ts[0].ndim, "sort")
    return ts[0]


register_op(
    "sort",
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.ArgsortAttrs",
        [F("axis", "int", -1), F("is_ascend", "bool", True), F("dtype", "dtype", "int32")],
    ),
    rel=_sort_rel,
    ref=lambda args, attrs, out_type: np.take_along_axis(
        args[0], _stable_order(args[0], attrs.axis, attrs.is_ascend), attrs.axis
    ),
    compute=_sort_compute,
    pattern=OpPattern.OPAQUE,
    doc="data sorted along axis (topi.sort).",
    level=6,
)


def sort(data, axis=-1, is_ascend=1):
    """``data`` sorted along ``axis``, ascending unless ``is_ascend`` is false."""
    return make_call("sort", [data], axis=axis, is_ascend=bool(is_ascend))


def _topk_k(attrs, dim):
    k = attrs.k
    if k is None or k < 1:
        return dim
    return min(k, dim) if isinstance(dim, int) else k


def _topk_rel(types, attrs):
    ts = tensor_args(types, ("data",), "topk")
    if ts is None:
        return None
    t = ts[0]
    axis = normalize_axis(attrs.axis, t.ndim, "topk")
    if attrs.ret_type not in ("both", "values", "indices"):
        raise TypeInferenceError(
            f"topk: ret_type must be 'both', 'values' or 'indices', got {attrs.ret_type!r}"
        )
    shape = list(t.shape)
    if attrs.k is not None and isinstance(shape[axis], int) and attrs.k > shape[axis]:
        from ._common import shape_str

        raise TypeInferenceError(
            f"topk: k={attrs.k} exceeds the size {shape[axis]} of axis {axis} of data shape "
            f"{shape_str(t.shape)}"
        )
    shape[axis] = _topk_k(attrs, shape[axis])
    values = TensorType(shape, t.dtype)
    indices = TensorType(shape, attrs.dtype)
    return {"both": TupleType([values, indices]), "values": values, "indices": indices}[
        attrs.ret_type
    ]


def _topk_ref(args, attrs, out_type):
    x = args[0]
    axis = attrs.axis % x.ndim
    k = _topk_k(attrs, x.shape[axis])
    idx = np.take(_stable_order(x, axis, attrs.is_ascend), np.arange(k), axis=axis)
    vals = np.take_along_axis(x, idx, axis)
    idx = idx.astype(attrs.dtype)
    return {"both": (vals, idx), "values": vals, "indices": idx}[attrs.ret_type]


def _topk_compute(attrs, inputs, out_type):
    from tvm import topi

    # k < 1 selects every element (0.19's rule, as the type relation has it); topi's kernel
    # takes 0 for that and failed at run time on k < -1 (vector::reserve)
    k = attrs.k if attrs.k is not None and attrs.k >= 1 else 0
    x = inputs[0]
    if str(x.dtype) in _KEY:  # the indices of the keys' top k, then the values gathered
        # gather needs integer indices; the result's index dtype may be a float (MXNet's topk
        # returns float32 indices by default)
        idx = topi.topk(_sortable(x), k, attrs.axis, "indices", attrs.is_ascend, "int32")
        vals = topi.gather(x, attrs.axis % len(x.shape), idx)
        if str(attrs.dtype) != "int32":
            idx = topi.cast(idx, attrs.dtype)
        return {"both": [vals, idx], "values": vals, "indices": idx}[attrs.ret_type]
    out = topi.topk(_sortable(x), k, attrs.axis, attrs.ret_type, attrs.is_ascend, attrs.dtype)
    if attrs.ret_type == "both":
        return [_back(out[0], inputs[0].dtype), out[1]]
    return _back(out, inputs[0].dtype) if attrs.ret_type == "values" else out


register_op(
    "topk",
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.TopKAttrs",
        [
            F("k", "int?", 1),
            F("axis", "int", -1),
            F("ret_type", "str", "both"),
            F("is_ascend", "bool", False),
            F("dtype", "dtype", "int32"),
        ],
    ),
    rel=_topk_rel,
    ref=_topk_ref,
    compute=_topk_compute,
    pattern=OpPattern.OPAQUE,
    doc="The k largest (or smallest) elements along axis and their indices (topi.topk).",
    level=6,
)


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """The top ``k`` elements of ``data`` along ``axis`` (k < 1: all of them, sorted).

    Args:
        ret_type: ``"both"`` (a :class:`TupleWrapper` of values and indices), ``"values"`` or
            ``"indices"``.
        is_ascend: take the smallest instead of the largest.
        dtype: the index dtype.
    """
    from . import dyn

    if dyn.is_dynamic_arg(k):
        call = dyn.topk(data, k, axis, ret_type, is_ascend, dtype)
        return TupleWrapper(call, 2) if ret_type == "both" else call
    k = static_value(k, "k", "topk")
    call = make_call(
        "topk", [data], k=k, axis=axis, ret_type=ret_type, is_ascend=bool(is_ascend), dtype=dtype
    )
    return TupleWrapper(call, 2) if ret_type == "both" else call


def _searchsorted_rel(types, attrs):
    ts = tensor_args(types, ("sorted_sequence", "values"), "searchsorted")
    if ts is None:
        return None
    seq, vals = ts
    if vals.ndim < 1:
        raise TypeInferenceError("searchsorted: values must have rank >= 1")
    if seq.ndim > 1 and (
        seq.ndim != vals.ndim
        or any(
            isinstance(a, int) and isinstance(b, int) and a != b
            for a, b in zip(seq.shape[:-1], vals.shape[:-1])
        )
    ):
        from ._common import shape_str

        raise TypeInferenceError(
            f"searchsorted: sorted_sequence shape {shape_str(seq.shape)} and values shape "
            f"{shape_str(vals.shape)} must agree on all but the last axis"
        )
    if seq.ndim > 1:
        for j, (a, b) in enumerate(zip(seq.shape[:-1], vals.shape[:-1])):
            require_equal_dims(a, b, f"sorted_sequence and values differ on axis {j}")
    if seq.dtype != vals.dtype:
        raise TypeInferenceError(
            f"searchsorted: sorted_sequence dtype {seq.dtype} differs from values dtype "
            f"{vals.dtype}"
        )
    return TensorType(vals.shape, attrs.dtype)


def _searchsorted_ref(args, attrs, out_type):
    seq, vals = args
    side = "right" if attrs.right else "left"
    if seq.ndim == 1:
        return np.searchsorted(seq, vals, side=side).astype(out_type.dtype)
    out = np.empty(vals.shape, out_type.dtype)
    for pos in np.ndindex(*vals.shape[:-1]):
        out[pos] = np.searchsorted(seq[pos], vals[pos], side=side)
    return out


def _searchsorted_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.searchsorted(
        inputs[0], inputs[1], attrs.right, out_type.dtype
    )


register_op(
    "searchsorted",
    num_inputs=2,
    arguments=("sorted_sequence", "values"),
    attrs=(
        "relay.attrs.SearchSortedAttrs",
        [F("right", "bool", False), F("dtype", "dtype", "int32")],
    ),
    rel=_searchsorted_rel,
    ref=_searchsorted_ref,
    compute=_searchsorted_compute,
    pattern=OpPattern.OPAQUE,
    doc="Insertion indices of values in the sorted last axis of sorted_sequence "
    "(numpy.searchsorted).",
    level=6,
)


def searchsorted(sorted_sequence, values, right=False, dtype="int32"):
    """Indices where ``values`` would be inserted into ``sorted_sequence`` (sorted on its last
    axis; 1-d, or the same leading axes as values) to keep it sorted."""
    return make_call("searchsorted", [sorted_sequence, values], right=right, dtype=dtype)


__all__ = ["sort", "argsort", "topk", "searchsorted"]

"""Reductions (tvm.relay.op.reduce): ``axis`` (None = all), ``keepdims``, ``exclude``."""

from __future__ import annotations

import numpy as np

from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import normalize_axis, tensor_args
from .registry import OpPattern, make_call, register_op

REDUCE_ATTRS = (
    "relay.attrs.ReduceAttrs",
    [F("axis", "ints?", None), F("keepdims", "bool", False), F("exclude", "bool", False)],
)


def reduce_axes(attrs, ndim: int, op_name: str) -> tuple:
    """The sorted axes reduced, after negative axes and ``exclude``."""
    if attrs.axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(sorted({normalize_axis(a, ndim, op_name) for a in attrs.axis}))
    if attrs.exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def reduce_rel(op_name: str, out_dtype: str | None = None):
    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op_name)
        if ts is None:
            return None
        t = ts[0]
        axes = reduce_axes(attrs, t.ndim, op_name)
        if attrs.keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
        else:
            shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
        return TensorType(shape, out_dtype or t.dtype)

    return rel


def _sum_ref(args, attrs, out_type):
    x = args[0]
    axes = reduce_axes(attrs, x.ndim, "sum")
    return np.sum(x, axis=axes, keepdims=attrs.keepdims).astype(out_type.dtype)


def _sum_compute(attrs, inputs, out_type):
    from tvm import topi

    axes = reduce_axes(attrs, len(inputs[0].shape), "sum")
    return topi.sum(inputs[0], axis=list(axes), keepdims=attrs.keepdims)


register_op(
    "sum",
    num_inputs=1,
    arguments=("data",),
    attrs=REDUCE_ATTRS,
    rel=reduce_rel("sum"),
    ref=_sum_ref,
    compute=_sum_compute,
    pattern=OpPattern.COMM_REDUCE,
    doc="Sum over ``axis`` (topi.sum).",
    level=4,
)


def sum(data, axis=None, keepdims=False, exclude=False):  # noqa: A001 - Relay's name
    """Sum of ``data`` over ``axis`` (int, tuple or None for all axes)."""
    if isinstance(axis, int):
        axis = (axis,)
    return make_call("sum", [data], axis=axis, keepdims=keepdims, exclude=exclude)


__all__ = ["sum", "reduce_axes", "reduce_rel", "REDUCE_ATTRS"]

"""``nn.fifo_buffer`` (tvm.relay 0.19's ``relay.nn.fifo_buffer``): push ``data`` into a FIFO
``buffer`` along one axis, dropping as many of the oldest entries.

``out = concatenate([buffer, data], axis)[..., d : d + b, ...]`` along ``axis``, with ``d`` and
``b`` data's and buffer's lengths there (``d < b``); other dimensions must match. The result has
buffer's shape and dtype. TE compute: ``topi.nn.fifo_buffer``.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ._common import normalize_axis, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

OP = "nn.fifo_buffer"


def _rel(types, attrs):
    ts = tensor_args(types, ("data", "buffer"), OP)
    if ts is None:
        return None
    data, buf = ts
    if data.ndim != buf.ndim or data.dtype != buf.dtype:
        raise TypeInferenceError(
            f"{OP}: data {shape_str(data.shape)} {data.dtype} and buffer "
            f"{shape_str(buf.shape)} {buf.dtype} must have the same rank and dtype"
        )
    axis = normalize_axis(attrs.axis, buf.ndim, OP)
    for i, (a, b) in enumerate(zip(data.shape, buf.shape)):
        bad = (a != b) if i != axis else (isinstance(a, int) and isinstance(b, int) and a >= b)
        if bad:
            raise TypeInferenceError(
                f"{OP}: data {shape_str(data.shape)} does not fit buffer {shape_str(buf.shape)} "
                f"on axis {axis}: other dimensions must be equal, data's shorter on the axis"
            )
    return buf


def _ref(args, attrs, out_type):
    data, buf = args
    axis = attrs.axis % buf.ndim
    both = np.concatenate([buf, data], axis=axis)
    return np.ascontiguousarray(np.take(both, np.arange(data.shape[axis], both.shape[axis]),
                                        axis=axis))


def _compute(attrs, inputs, out_type):
    from tvm import topi

    data, buf = inputs
    return topi.nn.fifo_buffer(data, buf, attrs.axis % len(buf.shape))


register_op(
    OP,
    num_inputs=2,
    arguments=("data", "buffer"),
    attrs=("relay.attrs.FIFOBufferAttrs", [F("axis", "int", 0)]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OPAQUE,
    doc="Push data into a FIFO buffer along an axis (topi.nn.fifo_buffer).",
    level=10,
)


def fifo_buffer(data, buffer, axis):
    """``buffer`` with ``data`` appended along ``axis`` and as many oldest entries dropped
    (see the module doc).

    Args:
        data: the new entries; buffer's rank, dtype and dimensions off ``axis``, shorter on it.
        buffer: the FIFO's previous value.
        axis: the FIFO axis (negative counts from the end).

    Returns:
        The new buffer: buffer's shape and dtype.

    Raises:
        TypeInferenceError: (at type inference) the shapes or dtypes do not fit.
    """
    return make_call(OP, [data, buffer], axis=int(axis))


__all__ = ["fifo_buffer"]

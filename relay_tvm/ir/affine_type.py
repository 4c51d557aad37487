"""Affine types of quantized tensors (tvm.ir 0.19's ``TensorAffineType`` / ``TupleAffineType``).

A tensor of affine type ``(scale, zero_point, dtype, axis)`` holds integers ``q`` of ``dtype``
standing for the reals ``(q - zero_point) * scale``; ``scale`` and ``zero_point`` are Relay
expressions (constants in practice), per tensor or per channel along ``axis``. The
FakeQuantizationToInteger rules registered with
``relay.op.register_fake_quantization_to_integer`` receive and return these.
"""

from __future__ import annotations

import numpy as np

from .expr import Constant


class TensorAffineType:
    """The affine type of one quantized tensor (tvm.ir 0.19's ``TensorAffineType``).

    Args:
        scale: float32 Relay expression, scalar or one value per channel of ``axis``.
        zero_point: int32 Relay expression, same shape as ``scale``.
        dtype: the integer dtype of the quantized tensor (``"int8"``, ``"uint8"``, ``"int32"``).
        axis: the channel axis of per-channel parameters (-1: the last, or per tensor).
    """

    __slots__ = ("scale", "zero_point", "dtype", "axis")

    def __init__(self, scale, zero_point, dtype, axis=-1):
        self.scale, self.zero_point = scale, zero_point
        self.dtype, self.axis = str(dtype), int(axis)

    def __eq__(self, other):
        # 0.19 compared affine types structurally: constant parameters by value
        if not isinstance(other, TensorAffineType):
            return NotImplemented
        return (self.dtype == other.dtype and self.axis == other.axis
                and _same(self.scale, other.scale) and _same(self.zero_point, other.zero_point))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __repr__(self):
        return (f"TensorAffineType({_show(self.scale)}, {_show(self.zero_point)}, "
                f"{self.dtype}, axis={self.axis})")


class TupleAffineType:
    """The affine types of a tuple's fields (tvm.ir 0.19's ``TupleAffineType``).

    Args:
        types: a :class:`TensorAffineType` per field.
    """

    __slots__ = ("types",)

    def __init__(self, types):
        self.types = list(types)

    def __eq__(self, other):
        if not isinstance(other, TupleAffineType):
            return NotImplemented
        return len(self.types) == len(other.types) and all(
            a == b for a, b in zip(self.types, other.types))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __repr__(self):
        return f"TupleAffineType({self.types!r})"


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, Constant) and isinstance(b, Constant):
        x, y = np.asarray(a.data), np.asarray(b.data)
        return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
    return False


def _show(e) -> str:
    if isinstance(e, Constant):
        return np.array2string(np.asarray(e.data), threshold=8)
    return type(e).__name__


__all__ = ["TensorAffineType", "TupleAffineType"]

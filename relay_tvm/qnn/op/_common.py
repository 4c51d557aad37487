"""Type-relation helpers of the qnn operators: checking scales and zero points."""

from __future__ import annotations

from ...errors import TypeInferenceError
from ...ir.types import AnyDim, IncompleteType, TensorType
from ...op._common import shape_str

INT_DTYPES = ("int8", "uint8", "int16", "int32")


def known(types) -> bool:
    return not any(isinstance(t, IncompleteType) for t in types)


def check_tensor(t, what: str, op: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise TypeInferenceError(f"{op}: {what} must be a tensor, got {t}")
    return t


def check_qparam(t, what: str, dtype: str, op: str, data=None, axis=None) -> None:
    """A scale (float32) or zero point (int32): a scalar, or a 1-D tensor with one value per
    channel of ``data`` along ``axis`` (per-channel quantization).

    Raises:
        TypeInferenceError: wrong dtype, rank > 1, or a length that is neither 1 nor the number
            of channels.
    """
    check_tensor(t, what, op)
    if t.dtype != dtype:
        raise TypeInferenceError(f"{op}: {what} must have dtype {dtype}, got {t.dtype}")
    if t.ndim > 1:
        raise TypeInferenceError(
            f"{op}: {what} must be a scalar or 1-D (one value per channel), got shape "
            f"{shape_str(t.shape)}")
    if t.ndim == 1 and data is not None:
        n = t.shape[0]
        if data.ndim == 0:
            return
        ax = axis % data.ndim if -data.ndim <= axis < data.ndim else None
        if ax is None:
            raise TypeInferenceError(
                f"{op}: axis {axis} is out of range for data of shape {shape_str(data.shape)}")
        c = data.shape[ax]
        if isinstance(n, int) and n != 1 and isinstance(c, int) and n != c \
                and not isinstance(c, AnyDim):
            raise TypeInferenceError(
                f"{op}: {what} has {n} values but data shape {shape_str(data.shape)} has {c} "
                f"channels along axis {axis}")


def check_dtype_in(t, allowed, what: str, op: str) -> None:
    if t.dtype not in allowed:
        raise TypeInferenceError(
            f"{op}: {what} has dtype {t.dtype}, expected one of {', '.join(allowed)}")


def check_out_dtype(dtype, allowed, op: str) -> None:
    if dtype not in allowed:
        raise TypeInferenceError(
            f"{op}: out_dtype {dtype!r} is not supported; expected one of {', '.join(allowed)}")

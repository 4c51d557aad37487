"""Helpers shared by the nn.* and image.* operator modules: attribute tuples, Relay's padding
rules, layout strings and dimension checks."""

from __future__ import annotations

from ..errors import AttributeSchemaError, TypeInferenceError
from ..ir.types import AnyDim, IncompleteType, TensorType, dim_equal
from ._common import (  # noqa: F401  (TupleWrapper, shape_str, tensor_args: re-exported)
    LOWERING,
    TupleWrapper,
    require_equal_dims,
    shape_str,
    tensor_args,
)

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def int_seq(v, name: str, op: str) -> tuple:
    """``v`` (an int, or a list / tuple / array of them) as a tuple; what is not a sequence of
    values (a string, None, ...) is refused instead of being iterated character by character.

    Raises:
        AttributeSchemaError: naming the operator and attribute.
    """
    import numpy as np

    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, (str, bytes)) or v is None or not hasattr(v, "__iter__"):
        raise AttributeSchemaError(f"{op}: attribute {name}: expected an int or a tuple of "
                                   f"ints, got {v!r}")
    return tuple(v)


def ntuple(v, n: int, name: str, op: str) -> tuple:
    """``v`` (an int, or 1 or ``n`` ints) as ``n`` ints.

    Raises:
        TypeInferenceError: ``v`` has another length.
        AttributeSchemaError: ``v`` is not an int or a sequence (e.g. a string or None).
    """
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    v = int_seq(v, name, op)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        count = "1 value" if n == 1 else f"1 or {n} values"
        raise TypeInferenceError(f"{op}: {name} must have {count} (one per spatial axis of "
                                 f"the data), got {v}")
    return v


def pad_before_after(padding, nd: int, op: str):
    """Relay's padding rules for ``nd`` spatial axes: 1 value for every side, ``nd`` values
    (each axis symmetric), or ``2 * nd`` values (all befores, then all afters, e.g.
    ``(top, left, bottom, right)`` in 2-D).

    Returns:
        ``(before, after)`` tuples of ``nd`` ints.
    """
    p = int_seq(padding, "padding", op)
    if len(p) == 1:
        return p * nd, p * nd
    if len(p) == nd:
        return p, p
    if len(p) == 2 * nd:
        return p[:nd], p[nd:]
    raise TypeInferenceError(f"{op}: padding must have 1, {nd} or {2 * nd} values, got {p}")


def check_window(op: str, strides, dilation, before, after, kernel=None,
                 kernel_name: str = "pool_size") -> None:
    """Sliding-window attributes as tvm.relay's relations and topi accept them: ``strides``,
    ``dilation`` and the kernel (``pool_size``) at least 1, every padding at least 0.

    Raises:
        TypeInferenceError: naming the attribute and its value.
    """
    checks = [("strides", strides, 1), ("dilation", dilation, 1)]
    if kernel is not None:
        checks.append((kernel_name, kernel, 1))
    for name, vals, least in checks:
        bad = [v for v in vals if isinstance(v, int) and v < least]
        if bad:
            raise TypeInferenceError(
                f"{op}: {name} must be >= {least} in every dimension, got {tuple(vals)}")
    pads = tuple(before) + tuple(after)
    if any(isinstance(v, int) and v < 0 for v in pads):
        raise TypeInferenceError(f"{op}: padding must be >= 0 on every side, got {pads}")


def dims_match(a, b, what: str = "two dimensions its type rule requires equal") -> bool:
    """Whether two dimensions may be equal (``Any`` matches everything). While a dynamic kernel
    is lowered, a symbolic dimension matches too and the kernel checks at run time that the two
    are equal (:func:`relay_tvm.op._common.require_equal_dims`), failing with "``what`` differ
    at run time". Outside lowering a symbolic dimension matches only a structurally equal one
    (stricter than Relay's AssertEQ, which accepts what is not provably different: a named
    symbolic width against a static one is refused here, because the kernel built for it does
    not yet check the two at run time)."""
    if isinstance(a, AnyDim) or isinstance(b, AnyDim) or dim_equal(a, b):
        return True
    if LOWERING[0] and not (isinstance(a, int) and isinstance(b, int)):
        require_equal_dims(a, b, f"{what} differ at run time")
        return True
    return False


def dense_operands(types, op: str):
    """The preamble of the type relations of dense layers (``nn.dense``,
    ``nn.bitserial_dense``): ``(data, weight)`` as ``TensorType`` s, data of rank >= 1 and
    weight 2-d ``(units, in)``; ``weight`` is ``None`` while its type is not known yet, and the
    result is ``None`` while data's is not (the relation waits).

    Raises:
        TypeInferenceError: data or weight is not a tensor, data is a scalar, weight is not 2-d.
    """
    data, weight = types
    if isinstance(data, IncompleteType):
        return None
    (data,) = tensor_args([data], ("data",), op)
    if data.ndim < 1:
        raise TypeInferenceError(f"{op}: data must have rank >= 1, got a scalar")
    if isinstance(weight, IncompleteType):
        return data, None
    (weight,) = tensor_args([weight], ("weight",), op)
    if weight.ndim != 2:
        raise TypeInferenceError(
            f"{op}: weight must be 2-d (units, in), got shape {shape_str(weight.shape)}")
    return data, weight


def layout_axes(layout: str, letters: str, op: str, what: str) -> dict:
    """Positions of the letters of ``layout``, which must be a permutation of ``letters``.

    Raises:
        TypeInferenceError: ``layout`` is not such a permutation (e.g. a packed layout).
    """
    if sorted(layout) != sorted(letters):
        raise TypeInferenceError(
            f"{op}: {what} {layout!r} is not supported; expected a permutation of {letters!r}"
        )
    return {c: i for i, c in enumerate(layout)}


def check_rank(t: TensorType, ndim: int, op: str, what: str, layout: str = "") -> None:
    if t.ndim != ndim:
        lay = f" {layout}" if layout else ""
        raise TypeInferenceError(
            f"{op}: {what} must be {ndim}-d{lay}, got shape {shape_str(t.shape)}"
        )


def check_float(t: TensorType, op: str, what: str = "data") -> None:
    if not t.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op}: {what} has dtype {t.dtype}, expected a float dtype")


def out_size(size, k, pad_lo, pad_hi, stride, dil, ceil_mode=False):
    """Output extent of a sliding window (Relay's Conv/Pool relations): ``floor`` (or, with
    ``ceil_mode``, ``ceil``) of ``(size + pads - (k-1)*dil - 1) / stride``, plus one. Symbolic
    sizes stay symbolic, ``Any`` stays ``Any``."""
    if isinstance(size, AnyDim):
        return AnyDim()
    eff = (k - 1) * dil + 1
    if ceil_mode:
        out = (size + pad_lo + pad_hi - eff + stride - 1) // stride + 1
        # PyTorch's rule, which topi.nn.pool follows: the last window must start inside the
        # input or its leading padding.
        if isinstance(out, int):
            if (out - 1) * stride >= size + pad_lo:
                out -= 1
            return out
        from tvm import tirx  # symbolic: a VM kernel of Any spatial size being lowered

        one, zero = tirx.const(1, "int64"), tirx.const(0, "int64")
        return out - tirx.Select((out - 1) * stride >= size + pad_lo, one, zero)
    return (size + pad_lo + pad_hi - eff) // stride + 1


def check_positive(dims, names, op, data, extra=""):
    for d, name in zip(dims, names):
        name = {"D": "depth", "H": "height", "W": "width"}.get(name, name)
        if isinstance(d, int) and d <= 0:
            raise TypeInferenceError(
                f"{op}: output {name} would be {d}: data shape {shape_str(data.shape)} is too "
                f"small{extra}"
            )


def vector_params(types, first: int, length, dtype: str, op: str, names, data_shape=None) -> dict:
    """Check or infer 1-D parameters (``gamma``, ``beta``, ``bias``, ...) of shape ``(length,)``.

    Args:
        types: all argument types of the call; ``types[first:]`` are the vectors.
        names: names of those arguments for messages.

    Returns:
        ``{arg_index: TensorType}`` for the arguments whose type is not known yet.

    Raises:
        TypeInferenceError: a known vector has another shape or dtype.
    """
    want = TensorType((length,), dtype)
    fill = {}
    for k, t in enumerate(types[first:]):
        i = first + k
        if isinstance(t, IncompleteType):
            fill[i] = want
            continue
        (t,) = tensor_args([t], (names[k],), op)
        if t.ndim != 1 or not dims_match(
                t.shape[0], length, f"the length of {names[k]} and the size of the data axis "
                                    f"it runs along (a {names[k]} of length 1 is not "
                                    "broadcast)"):
            data = f" of data shape {shape_str(data_shape)}" if data_shape is not None else ""
            raise TypeInferenceError(
                f"{op}: {names[k]} must have shape ({length},) to match the axis{data}, got "
                f"shape {shape_str(t.shape)}"
            )
        if t.dtype != dtype:
            raise TypeInferenceError(f"{op}: {names[k]} has dtype {t.dtype}, data has {dtype}")
    return fill


def np_acc(dtype) -> str:
    """The NumPy accumulation dtype of reference kernels."""
    import numpy as np

    return "float64" if np.dtype(dtype).kind == "f" else "int64"


def check_operand_dtypes(a: str, b: str, out_dtype, names, op: str) -> None:
    """The two operands of a product (convolution, dense, matmul) share a dtype, except the
    quantized pattern of Relay: two integer operands of up to 16 bits (uint8 data with int8
    weights, as x86's int8 kernels take them) with an explicit integer ``out_dtype`` of at least
    32 bits, which every product is computed in.

    Raises:
        TypeInferenceError: other dtype pairs, naming both and what is expected.
    """
    if a == b:
        return
    import tvm

    def small_int(d):
        t = tvm.DataType(d)
        return t.type_code in (0, 1) and t.bits <= 16 and t.lanes == 1

    if small_int(a) and small_int(b) and out_dtype:
        o = tvm.DataType(out_dtype)
        if o.type_code == 0 and o.bits >= 32:
            return
    raise TypeInferenceError(
        f"{op}: {names[0]} dtype {a} and {names[1]} dtype {b} differ (operands of different "
        f"dtypes are accepted only as integers of up to 16 bits with out_dtype='int32' or "
        f"wider)")


def np_operands(arrays, out_dtype):
    """Reference-kernel operands of a product (dense, matmul, conv) with ``out_dtype``: float
    operands of an integer ``out_dtype`` are first cast to it (truncated toward zero), as topi's
    computes cast each operand to ``out_dtype`` before multiplying; every executor then agrees
    (``dense([[1.7]], [[1.5]], out_dtype="int32")`` is 1). Others are returned unchanged."""
    import numpy as np

    if np.dtype(out_dtype).kind not in "iu":
        return list(arrays)
    return [a.astype(out_dtype) if a.dtype.kind == "f" else a for a in arrays]


__all__ = [
    "SPATIAL",
    "check_operand_dtypes",
    "ntuple",
    "pad_before_after",
    "dims_match",
    "layout_axes",
    "check_rank",
    "check_float",
    "out_size",
    "check_positive",
    "vector_params",
    "TupleWrapper",
    "np_acc",
    "np_operands",
]

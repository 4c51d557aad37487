"""``nn.bitserial_dense`` (tvm.relay.nn.bitserial_dense): a dense layer of low-bit integers.

The operands' lowest ``data_bits`` / ``weight_bits`` bits (two's complement) are split into bit
planes, packed ``pack_dtype``-wide along the reduction axis and multiplied by popcount, as
topi.nn.bitserial_dense computes it: for data plane ``a`` and weight plane ``b`` the product
adds ``2**(a+b)`` times

- unipolar (the default): ``popcount(w & d) - popcount(~w & d)``, i.e. each set data bit counts
  +1 where the weight bit is set and -1 where it is clear;
- bipolar (``unipolar=False``): ``popcount(w & d)``.

The sum is taken in ``out_dtype`` (wrapping as that integer type does). Shapes: data
``(..., in)``, weight ``(units, in)``, output ``(..., units)``; ``in`` must be a multiple of
the packing width. Relay's BinaryDenseRel checked only ``units``; here the weight's dimensions
are checked where both sides are known integers (the kernel itself needs static shapes).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import out_dims, shape_str
from ._nn_common import dense_operands
from .registry import OpPattern, make_call, register_op

_PACK_WIDTH = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def _is_int(dtype: str) -> bool:
    return np.dtype(dtype).kind in "iu" if dtype != "bool" else False


def _bitserial_dense_rel(types, attrs):
    op = "nn.bitserial_dense"
    operands = dense_operands(types, op)  # nn.dense's checks of rank and of unknown types
    if operands is None:
        return None
    data, weight = operands
    width = _PACK_WIDTH.get(attrs.pack_dtype)
    if width is None:
        raise TypeInferenceError(
            f"{op}: pack_dtype must be one of {sorted(_PACK_WIDTH)}, got {attrs.pack_dtype!r}")
    out_dtype = attrs.out_dtype or data.dtype
    for what, dt in (("data", data.dtype), ("out_dtype", out_dtype)):
        if not _is_int(dt):
            raise TypeInferenceError(f"{op}: {what} has dtype {dt}, expected an integer dtype")
    for what, bits in (("data_bits", attrs.data_bits), ("weight_bits", attrs.weight_bits)):
        if not 1 <= bits <= 8:
            raise TypeInferenceError(f"{op}: {what} must be in [1, 8], got {bits}")
    k = data.shape[-1]
    if isinstance(k, int) and k % width:
        raise TypeInferenceError(
            f"{op}: the reduction axis ({k}) must be a multiple of the packing width {width} "
            f"(pack_dtype={attrs.pack_dtype})")
    units = attrs.units
    if weight is not None:
        if not _is_int(weight.dtype):
            raise TypeInferenceError(
                f"{op}: weight has dtype {weight.dtype}, expected an integer dtype")
        rows, cols = weight.shape
        if units is None:
            units = rows
        for a, b, what in ((rows, units, "rows and units"), (cols, k, "columns and data's "
                                                                          "reduction axis")):
            if isinstance(a, int) and isinstance(b, int) and a != b:
                raise TypeInferenceError(
                    f"{op}: weight shape {shape_str(weight.shape)} disagrees with data shape "
                    f"{shape_str(data.shape)} and units={attrs.units} on the weight's {what} "
                    f"({a} vs {b})")
    if units is None:
        return None
    return TensorType((*data.shape[:-1], units), out_dtype)


def _bit_planes(x, bits):
    x = x.astype(np.int64)
    return [(x >> b) & 1 for b in range(bits)]


def _bitserial_dense_ref(args, attrs, out_type):
    data, weight = args
    d2 = data.reshape(-1, data.shape[-1])
    out = np.zeros((d2.shape[0], weight.shape[0]), np.int64)
    for a, dp in enumerate(_bit_planes(d2, attrs.data_bits)):
        for b, wp in enumerate(_bit_planes(weight, attrs.weight_bits)):
            signed = 2 * wp - 1 if attrs.unipolar else wp
            out += (dp @ signed.T) << (a + b)
    return out.reshape(*data.shape[:-1], weight.shape[0]).astype(out_type.dtype)


def _bitserial_dense_compute(attrs, inputs, out_type):
    from tvm import topi

    data, weight = inputs
    for t in (data, weight):
        if any(type(d).__name__ != "IntImm" for d in t.shape):
            raise TypeInferenceError(
                "nn.bitserial_dense: the kernel needs static shapes, got "
                f"{tuple(t.shape)}")
    flat = data
    if len(data.shape) != 2:
        rows = 1
        for d in data.shape[:-1]:
            rows = rows * d
        flat = topi.reshape(data, (rows, data.shape[-1]))
    out = _packed_product(flat, weight, attrs, out_type.dtype)
    if len(data.shape) != 2:
        out = topi.reshape(out, out_dims(out_type.shape))
    return out


def _packed_product(data, weight, attrs, out_dtype):
    """topi.nn.bitserial_dense's algorithm, with each popcount cast to ``out_dtype`` before
    the unipolar difference: topi subtracts the two unsigned popcounts first, and where its
    reduction axes all have extent 1 (one packed word, one bit each) the negative differences
    came out as 0 in compiled code."""
    from tvm import te, tirx, topi

    dp = topi.nn.bitpack(data, attrs.data_bits, pack_axis=1, bit_axis=1,
                         pack_type=attrs.pack_dtype)
    wp = topi.nn.bitpack(weight, attrs.weight_bits, pack_axis=1, bit_axis=1,
                         pack_type=attrs.pack_dtype)
    rows, planes_d, words = (int(d) for d in dp.shape)
    units, planes_w, _ = (int(d) for d in wp.shape)
    k = te.reduce_axis((0, words), name="k")
    a = te.reduce_axis((0, planes_d), name="a")
    b = te.reduce_axis((0, planes_w), name="b")

    def term(i, j):
        both = tirx.popcount(wp[j, b, k] & dp[i, a, k]).astype(out_dtype)
        if attrs.unipolar:
            both = both - tirx.popcount(~wp[j, b, k] & dp[i, a, k]).astype(out_dtype)
        return both << (a + b).astype(out_dtype)

    return te.compute((rows, units), lambda i, j: te.sum(term(i, j), axis=[b, a, k]),
                      name="bitserial_dense")


register_op(
    "nn.bitserial_dense",
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=("relay.attrs.BinaryDenseAttrs", [
        F("units", "int?", None),
        F("data_bits", "int", 1),
        F("weight_bits", "int", 1),
        F("pack_dtype", "dtype", "uint32"),
        F("out_dtype", "dtype", "int16"),
        F("unipolar", "bool", True),
    ]),
    rel=_bitserial_dense_rel,
    ref=_bitserial_dense_ref,
    compute=_bitserial_dense_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Dense layer of low-bit integers by bit planes and popcount (topi.nn.bitserial_dense).",
    level=1,
)


def bitserial_dense(data, weight, units=None, data_bits=1, weight_bits=1, pack_dtype="uint32",
                    out_dtype="int16", unipolar=True):
    """Bit-serial dense layer ``Y = X W^T`` of low-bit integers (tvm.relay.nn.bitserial_dense).

    Args:
        data: ``(d0, ..., in)`` integer tensor; its lowest ``data_bits`` bits are used.
        weight: ``(units, in)`` integer tensor; its lowest ``weight_bits`` bits are used.
        units: number of output units (the weight's rows when not given).
        data_bits: bit planes taken from data (1 to 8).
        weight_bits: bit planes taken from weight (1 to 8).
        pack_dtype: word the bits are packed into (``uint8/16/32/64``); ``in`` must be a
            multiple of its width.
        out_dtype: integer dtype of the output and of the accumulation.
        unipolar: a clear weight bit counts -1 (True) or 0 (False).

    Returns:
        ``(d0, ..., units)`` tensor of ``out_dtype``.

    Raises:
        TypeInferenceError: at inference, for non-integer dtypes, an unknown ``pack_dtype``,
            a reduction axis not a multiple of its width, or a weight of another shape.
    """
    return make_call("nn.bitserial_dense", [data, weight], units=units, data_bits=data_bits,
                     weight_bits=weight_bits, pack_dtype=pack_dtype, out_dtype=out_dtype,
                     unipolar=unipolar)


__all__ = ["bitserial_dense"]

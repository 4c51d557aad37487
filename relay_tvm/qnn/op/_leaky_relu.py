"""``qnn.leaky_relu`` (tvm.relay 0.19's ``relay.qnn.op.leaky_relu``): quantized leaky ReLU.

For an input code ``q`` the result is ``quantize(leaky_relu(dequantize(q), alpha))``:
dequantized with ``(input_scale, input_zero_point)`` in float32, ``v if v >= 0 else alpha * v``,
quantized with ``(output_scale, output_zero_point)`` rounding half to even and saturating to the
input's dtype. 0.19 computed the same with a requantize of each branch (its test allows one
unit of difference). Inputs are int8 / uint8 / int16; the parameters are scalars. Like the qnn
unary operators (:mod:`relay_tvm.qnn.op._unary`), CanonicalizeOps turns it into a lookup
table of one entry per input code.
"""

from __future__ import annotations

import numpy as np

from ...ir.attrs import AttrField as F
from ...op.registry import OpPattern, make_call, register_op
from . import _arith
from ._unary import _rel

OP = "qnn.leaky_relu"


def table(dtype, alpha, scale, zero_point, output_scale, output_zero_point):
    """Entry ``i``: the output code of the input code ``min(dtype) + i``."""
    lo, hi = _arith.qrange(dtype)
    codes = np.arange(lo, hi + 1, dtype="int64").astype(dtype)
    real = _arith.dequantize(codes, scale, zero_point, -1)
    out = np.where(real >= 0, real, real * np.float32(alpha)).astype("float32")
    return _arith.quantize(out, output_scale, output_zero_point, -1, dtype)


def _ref(a, attrs, out_type):
    x = a[0]
    tab = table(str(x.dtype), attrs.alpha, *a[1:])
    return tab[x.astype("int64") - _arith.qrange(str(x.dtype))[0]]


register_op(OP, num_inputs=5, batch_rows=True,
            arguments=("x", "input_scale", "input_zero_point", "output_scale",
                       "output_zero_point"),
            attrs=("relay.attrs.LeakyReluAttrs", [F("alpha", "float", 0.25)]),
            rel=_rel(OP), ref=_ref, pattern=OpPattern.ELEMWISE, level=11,
            doc="Quantized leaky ReLU by table lookup (see relay_tvm.qnn.op._leaky_relu).")


def leaky_relu(x, alpha, input_scale, input_zero_point, output_scale, output_zero_point):
    """Quantized leaky ReLU (see the module doc).

    Args:
        x: int8 / uint8 / int16 tensor.
        alpha: the slope for negative values (a float).
        input_scale, output_scale: float32 scalars; input_zero_point, output_zero_point:
            int32 scalars (constants, to be canonicalized and compiled).

    Returns:
        x's shape and dtype.

    Raises:
        TypeInferenceError: (at type inference) dtypes or parameter shapes do not fit.
    """
    return make_call(OP, [x, input_scale, input_zero_point, output_scale, output_zero_point],
                     alpha=float(alpha))


__all__ = ["leaky_relu"]

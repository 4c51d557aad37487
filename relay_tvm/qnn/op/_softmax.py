"""``qnn.softmax`` (tvm.relay 0.19's ``relay.qnn.op.softmax``): quantized softmax.

The result for input codes ``q`` is ``quantize(softmax(dequantize(q), axis))``: dequantized
with ``(scale, zero_point)`` in float32, softmax along ``axis``, quantized with
``(output_scale, output_zero_point)`` (rounding half to even, as ``qnn.quantize``) and
saturated to the input's dtype. CanonicalizeOps writes it as those float32 operations. 0.19
computed an integer approximation instead (exp by shifts), whose results are within a few codes
of these; relay_tvm keeps the float definition. Inputs are int8 / uint8 / int16; the
parameters are scalars. FakeQuantizationToInteger uses it for ``nn.softmax`` only when asked
(``optional_qnn_ops=["nn.softmax"]``), as 0.19 did.
"""

from __future__ import annotations

import numpy as np

from ...ir.attrs import AttrField as F
from ...op.registry import OpPattern, make_call, register_op, rows_unless_axis_0
from . import _arith
from ._unary import _rel

OP = "qnn.softmax"


def _ref(a, attrs, out_type):
    x = a[0]
    real = _arith.dequantize(x, a[1], a[2], -1)
    axis = attrs.axis
    if real.size:
        z = real - real.max(axis=axis, keepdims=True)
        e = np.exp(z)
        real = (e / e.sum(axis=axis, keepdims=True)).astype("float32")
    return _arith.quantize(real, a[3], a[4], -1, str(x.dtype))


def _checked_rel(types, attrs):
    out = _rel(OP)(types, attrs)
    if out is not None:
        from ...op._common import normalize_axis

        normalize_axis(attrs.axis, len(out.shape), OP)
    return out


register_op(OP, num_inputs=5, batch_rows=rows_unless_axis_0("axis"),
            arguments=("x", "scale", "zero_point", "output_scale", "output_zero_point"),
            attrs=("relay.attrs.SoftmaxAttrs", [F("axis", "int", -1)]),
            rel=_checked_rel, ref=_ref, pattern=OpPattern.OPAQUE, level=11,
            doc="Quantized softmax (see relay_tvm.qnn.op._softmax).")


def softmax(x, scale, zero_point, output_scale, output_zero_point, axis=-1):
    """Quantized softmax along ``axis`` (see the module doc).

    Args:
        x: int8 / uint8 / int16 tensor.
        scale, output_scale: float32 scalars; zero_point, output_zero_point: int32 scalars
            (constants, to be canonicalized and compiled).
        axis: the axis to normalize over.

    Returns:
        x's shape and dtype.

    Raises:
        TypeInferenceError: (at type inference) dtypes, parameter shapes or the axis do not
            fit.
    """
    return make_call(OP, [x, scale, zero_point, output_scale, output_zero_point], axis=axis)


__all__ = ["softmax"]

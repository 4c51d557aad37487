"""The qnn unary operators: sqrt, rsqrt, exp, erf, sigmoid, hardswish, tanh, log, abs
(tvm.relay 0.19's ``relay.qnn.op``; signature ``(x, scale, zero_point, output_scale,
output_zero_point)``).

As in 0.19 (which legalizes them into a table lookup), the result for an input code ``q`` is
``quantize(f(dequantize(q)))``: dequantized with ``(scale, zero_point)`` in float32, the
float32 function ``f`` applied (:data:`legalizations.UNARY_FUNCS`), quantized with
``(output_scale, output_zero_point)`` rounding half to even and saturating to the input's
dtype. Inputs are int8 / uint8 / int16 (the table has one entry per code); the parameters are
scalars. Outside ``f``'s domain (``log`` of a negative number) the float value is NaN and the
code it maps to is unspecified, as in 0.19.
"""

from __future__ import annotations

import numpy as np

from ...ir.types import TensorType
from ...op._common import named
from ...op.registry import OpPattern, make_call, register_op
from . import _arith
from ._common import check_dtype_in, check_qparam, check_tensor, known
from .legalizations import UNARY_FUNCS

_DTYPES = ("int8", "uint8", "int16")
_ARGS = ("x", "scale", "zero_point", "output_scale", "output_zero_point")


def table(name: str, dtype: str, scale, zero_point, output_scale, output_zero_point):
    """The lookup table of qnn unary operator ``name``: entry ``i`` is the output code of the
    input code ``min(dtype) + i``."""
    lo, hi = _arith.qrange(dtype)
    codes = np.arange(lo, hi + 1, dtype="int64").astype(dtype)
    real = _arith.dequantize(codes, scale, zero_point, -1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = UNARY_FUNCS[name](real).astype("float32")
        return _arith.quantize(out, output_scale, output_zero_point, -1, dtype)


def _rel(op):
    def rel(types, attrs):
        if not known(types):
            return None
        x = check_tensor(types[0], "x", op)
        check_dtype_in(x, _DTYPES, "x", op)
        for t, n in zip(types[1:], _ARGS[1:]):
            check_qparam(t, n, "float32" if "scale" in n else "int32", op)
            if t.ndim == 1 and t.shape[0] != 1:
                from ...errors import TypeInferenceError

                raise TypeInferenceError(f"{op}: {n} must be a scalar, got shape {t.shape}")
        return TensorType(x.shape, x.dtype)

    return rel


def _ref(op):
    def ref(a, attrs, out_type):
        x = a[0]
        tab = table(op, str(x.dtype), *a[1:])
        return tab[x.astype("int64") - _arith.qrange(str(x.dtype))[0]]

    return ref


def _ctor(op):
    def ctor(x, scale, zero_point, output_scale, output_zero_point):
        return make_call(op, [x, scale, zero_point, output_scale, output_zero_point])

    named(ctor, op[4:])
    ctor.__doc__ = (
        f"Quantized {op[4:]} (tvm.relay.qnn.op.{op[4:]}): ``quantize({op[4:]}(dequantize(x)))`` "
        "with the input's (scale, zero_point) and the output's (output_scale, "
        "output_zero_point), float32 scalars and int32 scalars; x int8 / uint8 / int16, the "
        "result has x's shape and dtype (see the module doc).")
    return ctor


for _op in UNARY_FUNCS:
    register_op(_op, batch_rows=True, num_inputs=5, arguments=_ARGS, rel=_rel(_op),
                ref=_ref(_op),
                pattern=OpPattern.ELEMWISE, level=11,
                doc=f"Quantized {_op[4:]} by table lookup (see relay_tvm.qnn.op._unary).")

sqrt = _ctor("qnn.sqrt")
rsqrt = _ctor("qnn.rsqrt")
exp = _ctor("qnn.exp")
erf = _ctor("qnn.erf")
sigmoid = _ctor("qnn.sigmoid")
hardswish = _ctor("qnn.hardswish")
tanh = _ctor("qnn.tanh")
log = _ctor("qnn.log")
abs = _ctor("qnn.abs")  # noqa: A001 - Relay's name

__all__ = ["sqrt", "rsqrt", "exp", "erf", "sigmoid", "hardswish", "tanh", "log", "abs", "table"]

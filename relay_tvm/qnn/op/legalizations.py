"""The floating-point functions behind the qnn unary operators (tvm.relay 0.19's
``relay.qnn.op.legalizations`` names ``hardswish_func`` among them).

Each qnn unary operator (``qnn.sqrt``, ``qnn.exp`` ...) is computed by a lookup table: every
integer code of the input dtype is dequantized, passed through the float32 function here,
and quantized with the output's parameters (:mod:`relay_tvm.qnn.op._unary`).
"""

from __future__ import annotations

import math

import numpy as np


def hardswish_func(x):
    """``x * clip(x + 3, 0, 6) / 6`` (float32 in, float32 out)."""
    x = np.asarray(x)
    return x * np.clip(x + x.dtype.type(3.0), 0.0, 6.0).astype(x.dtype) / x.dtype.type(6.0)


def _erf(x):
    x = np.asarray(x)
    return np.vectorize(math.erf, otypes=["float64"])(x).astype(x.dtype)


#: qnn unary operator name -> the float function its table approximates.
UNARY_FUNCS = {
    "qnn.sqrt": np.sqrt,
    "qnn.rsqrt": lambda x: np.float32(1.0) / np.sqrt(x),
    "qnn.exp": np.exp,
    "qnn.erf": _erf,
    "qnn.sigmoid": lambda x: np.float32(1.0) / (np.float32(1.0) + np.exp(-x)),
    "qnn.hardswish": hardswish_func,
    "qnn.tanh": np.tanh,
    "qnn.log": np.log,
    "qnn.abs": np.abs,
}

__all__ = ["hardswish_func", "UNARY_FUNCS"]

"""Elementwise and broadcasting tensor operators (tvm.relay.op.tensor).

Semantics: NumPy broadcasting; integer ``divide``/``mod`` truncate toward zero (C, as TVM's
``truncdiv``/``truncmod``), ``floor_divide``/``floor_mod`` round toward negative infinity. No
operator casts implicitly: both operands must have one dtype. TE computes are topi's.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from ._common import broadcast_rel, identity_rel, tensor_args
from .registry import OpPattern, make_call, register_op


def _np_trunc_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * q).astype(a.dtype)
    return np.divide(a, b).astype(a.dtype)


def _np_trunc_mod(a, b):
    if np.issubdtype(a.dtype, np.integer):
        return np.fmod(a, b).astype(a.dtype)
    return np.fmod(a, b).astype(a.dtype)


def _np_floor_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        return np.floor_divide(a, b).astype(a.dtype)
    return np.floor(np.divide(a, b)).astype(a.dtype)


def _topi(name):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        return getattr(topi, name)(*inputs)

    return compute


# (relay name, numpy kernel, topi function, pattern, output dtype override)
_BINARY = [
    ("add", np.add, "add", None),
    ("subtract", np.subtract, "subtract", None),
    ("multiply", np.multiply, "multiply", None),
    ("divide", _np_trunc_div, "divide", None),
    ("floor_divide", _np_floor_div, "floor_divide", None),
    ("mod", _np_trunc_mod, "mod", None),
    ("floor_mod", lambda a, b: np.mod(a, b).astype(a.dtype), "floor_mod", None),
    ("power", lambda a, b: np.power(a, b).astype(a.dtype), "power", None),
    ("maximum", np.maximum, "maximum", None),
    ("minimum", np.minimum, "minimum", None),
    ("equal", np.equal, "equal", "bool"),
    ("not_equal", np.not_equal, "not_equal", "bool"),
    ("less", np.less, "less", "bool"),
    ("less_equal", np.less_equal, "less_equal", "bool"),
    ("greater", np.greater, "greater", "bool"),
    ("greater_equal", np.greater_equal, "greater_equal", "bool"),
    ("logical_and", np.logical_and, "logical_and", None),
    ("logical_or", np.logical_or, "logical_or", None),
    ("logical_xor", np.logical_xor, "logical_xor", None),
]

for _name, _np_fn, _topi_name, _out in _BINARY:
    register_op(
        _name,
        num_inputs=2,
        arguments=("lhs", "rhs"),
        rel=broadcast_rel(_name, _out),
        ref=(lambda f: lambda args, attrs, out_type: np.asarray(f(args[0], args[1])).astype(out_type.dtype))(_np_fn),
        compute=_topi(_topi_name),
        pattern=OpPattern.BROADCAST,
        doc=f"Elementwise {_name} with NumPy broadcasting (topi.{_topi_name}).",
        level=1,
    )


def _erf(x):
    from math import erf

    return np.vectorize(erf, otypes=[x.dtype])(x) if x.size else x.copy()


# (relay name, numpy kernel, topi function, accepted dtype prefixes)
_UNARY = [
    ("negative", np.negative, "negative", None),
    ("abs", np.abs, "abs", None),
    ("sign", np.sign, "sign", None),
    ("exp", np.exp, "exp", ("float",)),
    ("log", np.log, "log", ("float",)),
    ("log2", np.log2, "log2", ("float",)),
    ("log10", np.log10, "log10", ("float",)),
    ("sqrt", np.sqrt, "sqrt", ("float",)),
    ("rsqrt", lambda x: 1 / np.sqrt(x), "rsqrt", ("float",)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), "sigmoid", ("float",)),
    ("tanh", np.tanh, "tanh", ("float",)),
    ("erf", _erf, "erf", ("float",)),
    ("floor", np.floor, "floor", ("float",)),
    ("ceil", np.ceil, "ceil", ("float",)),
    ("round", np.round, "round", ("float",)),
    ("trunc", np.trunc, "trunc", ("float",)),
    ("sin", np.sin, "sin", ("float",)),
    ("cos", np.cos, "cos", ("float",)),
    ("tan", np.tan, "tan", ("float",)),
    ("asin", np.arcsin, "asin", ("float",)),
    ("acos", np.arccos, "acos", ("float",)),
    ("atan", np.arctan, "atan", ("float",)),
    ("sinh", np.sinh, "sinh", ("float",)),
    ("cosh", np.cosh, "cosh", ("float",)),
    ("asinh", np.arcsinh, "asinh", ("float",)),
    ("acosh", np.arccosh, "acosh", ("float",)),
    ("atanh", np.arctanh, "atanh", ("float",)),
    ("logical_not", np.logical_not, "logical_not", ("bool",)),
    ("copy", np.copy, "identity", None),
    ("isnan", np.isnan, "isnan", ("float",)),
    ("isinf", np.isinf, "isinf", ("float",)),
    ("isfinite", np.isfinite, "isfinite", ("float",)),
]

_BOOL_OUT = {"isnan", "isinf", "isfinite"}


def _bool_rel(name, base):
    def rel(types, attrs):
        t = base(types, attrs)
        return None if t is None else TensorType(t.shape, "bool")

    return rel


for _name, _np_fn, _topi_name, _dts in _UNARY:
    _rel = identity_rel(_name, _dts)
    register_op(
        _name,
        num_inputs=1,
        arguments=("data",),
        rel=_bool_rel(_name, _rel) if _name in _BOOL_OUT else _rel,
        ref=(lambda f: lambda args, attrs, out_type: np.asarray(f(args[0])).astype(out_type.dtype))(_np_fn),
        compute=_topi(_topi_name),
        pattern=OpPattern.ELEMWISE,
        doc=f"Elementwise {_name} (topi.{_topi_name}).",
        level=1,
    )


# ---- constructors (tvm.relay names) ------------------------------------------------------------

def _binary_ctor(name):
    def ctor(lhs, rhs):
        return make_call(name, [lhs, rhs])

    ctor.__name__ = name
    ctor.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting; both operands of one dtype."
    return ctor


def _unary_ctor(name):
    def ctor(data):
        return make_call(name, [data])

    ctor.__name__ = name
    ctor.__doc__ = f"Elementwise ``{name}``; the output has the input's shape."
    return ctor


_g = globals()
for _name, *_ in _BINARY:
    _g[_name] = _binary_ctor(_name)
for _name, *_ in _UNARY:
    _g[_name] = _unary_ctor(_name)


__all__ = [n for n, *_ in _BINARY] + [n for n, *_ in _UNARY] + ["tensor_args"]

"""More SimplifyExpr rules of Relay's ``simplify_expr.cc`` (used by :mod:`.simplify_expr`).

====================================================  =========================================
pattern (types known statically)                      rewrite
====================================================  =========================================
``zeros_like(x)``, ``ones_like(x)``                   ``zeros(shape, dtype)``, ``ones(...)``
``full_like(x, v)``                                   ``full(v, shape, dtype)``
``reshape_like(x, y, ...)``                           ``reshape(x, output shape)``
``collapse_sum_like(x, y)``                           ``collapse_sum_to(x, y's shape)``
``broadcast_to_like(x, y)``                           ``broadcast_to(x, y's shape)``
``cast_like(x, y)``                                   ``cast(x, y's dtype)``
``cast(x, dtype of x)``                               ``x``
``cast(cast(x, a), b)`` with ``x -> a`` lossless      ``cast(x, b)`` (lossless: same kind, int /
                                                      uint / float, and ``a`` at least as wide)
``x + zeros``, ``x * ones``, ``x - zeros``, ...       ``x`` (when the type stays the same;
                                                      float: ``x + (-0.0)``, ``x - (+0.0)`` only)
``x + x``                                             ``x * 2``
``c / sqrt(x)`` (float)                               ``rsqrt(x)`` if ``c`` is 1, else
                                                      ``c * rsqrt(x)``
``argmax/argmin/argsort(qnn.dequantize(x, s, z))``    the same of ``x`` (dequantize is strictly
                                                      increasing; only for constant ``s > 0``)
``cast(...cast(clip(x, lo, hi), t1)..., tn)`` (ints)  the casts whose integer type holds
                                                      [lo, hi] dropped (they change no value)
``clip(x, lo, hi)``, x of an integer type within      ``x``
[lo, hi]
``f(x, full(v))``, ``f(zeros(..), x)``, ... for a     ``f(x, v)`` with the scalar ``v`` (0, 1, the
broadcasting ``f`` whose result has ``x``'s type      fill value): no tensor is materialized
====================================================  =========================================

Every rule keeps the expression's type; a rewritten node gets the type of the node it replaces
(the rules read types of the nodes they look at).
"""

from __future__ import annotations

import math

import numpy as np

from .. import op
from ..ir.expr import Constant, const
from ..ir.types import TensorType
from ..op.registry import OpPattern
from ._rewrite import op_name
from ._rewrite import type_of as ty


def typed(e, t):
    """``e`` with checked type ``t`` recorded (a node made by a rule)."""
    if t is not None and ty(e) is None and hasattr(e, "_set_checked_type"):
        e._set_checked_type(t)
    return e


def _static(t):
    return isinstance(t, TensorType) and all(isinstance(d, int) for d in t.shape)


def is_value(e, v) -> bool:
    """``e`` is a tensor whose every element is ``v`` (a constant, or zeros/ones calls)."""
    if type(e) is Constant:
        d = e.data
        if d.size == 1:
            return bool(d.item() == v)
        return d.size > 0 and bool(np.all(d == v))
    name = op_name(e)
    if name in ("full", "full_like"):
        fill = e.args[-1] if name == "full_like" else e.args[0]
        return type(fill) is Constant and fill.data.size == 1 and bool(fill.data.item() == v)
    return (v == 0 and name in ("zeros", "zeros_like")) or (v == 1 and name in ("ones",
                                                                              "ones_like"))


def is_signed_zero(e, negative: bool) -> bool:
    """``e`` is a float tensor whose every element is the zero of sign ``negative`` (``-0.0``
    when true), a constant or a zeros / full call: ``x + (-0.0)`` and ``x - (+0.0)`` are ``x``
    for every float ``x``, but ``x + (+0.0)`` turns ``x = -0.0`` into ``+0.0`` (IEEE 754)."""
    if type(e) is Constant:
        d = np.asarray(e.data)
        if d.size == 1 and d.dtype.kind in "fiub":  # a scalar: no array temporaries
            x = d.item()
            return x == 0 and (math.copysign(1.0, x) < 0) == negative
        return d.size > 0 and bool(np.all(d == 0)) and bool(np.all(np.signbit(d) == negative))
    name = op_name(e)
    if name in ("zeros", "zeros_like"):
        return not negative
    if name in ("full", "full_like"):
        fill = e.args[-1] if name == "full_like" else e.args[0]
        return type(fill) is Constant and is_signed_zero(fill, negative)
    return False


def _concretize(orig, new):
    out = ty(orig)
    name = op_name(new)
    if name == "cast_like":
        return cast_to(new.args[0], out.dtype, out) if isinstance(out, TensorType) else None
    if not _static(out):
        return None
    shape = tuple(out.shape)
    if name == "zeros_like":
        return op.zeros(shape, out.dtype)
    if name == "ones_like":
        return op.ones(shape, out.dtype)
    if name == "full_like":
        return op.full(new.args[1], shape, out.dtype)
    if name == "reshape_like":
        return op.reshape(new.args[0], shape)
    if name == "collapse_sum_like":
        return op.collapse_sum_to(new.args[0], shape)
    if name == "broadcast_to_like":
        return op.broadcast_to(new.args[0], shape)
    return None


def _kind(dtype: str) -> str:
    return "uint" if dtype.startswith("uint") else "int" if dtype.startswith("int") else \
        "float" if dtype.startswith(("float", "bfloat")) else dtype


def _bits(dtype: str) -> int:
    digits = "".join(c for c in dtype if c.isdigit())
    return int(digits) if digits else 0


def lossless(src: str, dst: str) -> bool:
    """Casting ``src`` to ``dst`` keeps every value (same kind, at least as many bits)."""
    return _kind(src) == _kind(dst) and _kind(src) in ("int", "uint", "float") and \
        _bits(dst) >= _bits(src)


def cast_to(x, dtype: str, out_type):
    """``cast(x, dtype)`` simplified: ``x`` when it has the dtype; the inner cast skipped when
    it lost nothing."""
    src = ty(x)
    if isinstance(src, TensorType) and src.dtype == dtype:
        return x
    if op_name(x) == "cast":
        inner = x.args[0]
        it = ty(inner)
        if isinstance(it, TensorType) and isinstance(src, TensorType) and lossless(it.dtype,
                                                                                   src.dtype):
            return cast_to(inner, dtype, out_type)
    return typed(op.cast(x, dtype), out_type)


def _cast(orig, new):
    out = cast_to(new.args[0], new.attrs.dtype, ty(orig))
    return None if out is new else out


def _add_self(orig, new):
    lhs, rhs = new.args
    t = ty(orig)
    if lhs is rhs and isinstance(t, TensorType) and t == ty(lhs):
        return op.multiply(lhs, const(np.array(2, dtype=t.dtype), dtype=t.dtype))
    return None


def _rsqrt(orig, new):
    num, den = new.args
    t = ty(orig)
    if (type(num) is not Constant or op_name(den) != "sqrt" or not isinstance(t, TensorType)
            or not t.dtype.startswith("float") or t != ty(den)):
        return None
    r = typed(op.rsqrt(den.args[0]), t)
    return r if is_value(num, 1) else op.multiply(num, r)


def _dq_arg(orig, new):
    """argmax / argmin / argsort see only the order of the values, which dequantizing with a
    positive scale keeps (0.19's SimplifyDQArgFunc; a negative or unknown scale is left)."""
    dq = new.args[0]
    if op_name(dq) != "qnn.dequantize":
        return None
    scale = dq.args[1]
    if type(scale) is not Constant or not bool(np.all(scale.data > 0)):
        return None
    return typed(type(new)(new.op, [dq.args[0]], new.attrs, (), new.span), ty(orig))


def _int_range(dtype: str):
    """(min, max) of an integer dtype, or None."""
    if dtype == "bool" or not dtype.startswith(("int", "uint")):
        return None
    info = np.iinfo(dtype)
    return float(info.min), float(info.max)


def _holds(dtype: str, lo: float, hi: float) -> bool:
    r = _int_range(dtype)
    return r is not None and r[0] <= lo and hi <= r[1]


def _clip_casts(orig, new):
    """Integer casts after a clip that hold the clipped range change no value (0.19's
    SimplifyClipAndConsecutiveCast, kept to the exact cases: every cast is to an integer type
    and the last one holds the range; a float clipped value is truncated once, by the last)."""
    chain, e = [], new
    while op_name(e) == "cast":
        chain.append(e)
        e = e.args[0]
    if op_name(e) != "clip":
        return None
    clip, casts = e, chain[::-1]  # innermost first
    lo, hi = float(clip.attrs.a_min), float(clip.attrs.a_max)
    t = ty(clip)
    dtypes = [c.attrs.dtype for c in casts]
    if not isinstance(t, TensorType) or not all(_int_range(d) for d in dtypes):
        return None
    final = dtypes[-1]
    if not _holds(final, lo, hi):
        return None
    out, cur, cur_t = clip, t.dtype, t
    for d in dtypes[:-1]:
        if _holds(d, lo, hi):
            continue  # every clipped value passes through unchanged
        cur_t = TensorType(cur_t.shape, d)
        out, cur = typed(op.cast(out, d), cur_t), d
        lo, hi = _int_range(d)
    if cur != final:
        out = typed(op.cast(out, final), ty(orig))
    if out is new:
        return None
    kept = []
    e = out
    while op_name(e) == "cast":
        kept.append(e)
        e = e.args[0]
    return None if len(kept) == len(chain) else out


def _clip_of_narrow_int(orig, new):
    x = new.args[0]
    t = ty(x)
    if isinstance(t, TensorType) and _int_range(t.dtype):
        lo, hi = _int_range(t.dtype)
        if new.attrs.a_min <= lo and hi <= new.attrs.a_max:
            return x
    return None


_BROADCAST_OPS = (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
    "floor_mod", "mod", "trunc_divide", "trunc_mod", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
)


def _fill_value(e, dtype):
    """The scalar every element of ``e`` has, as a constant of ``dtype``, when ``e`` is a
    zeros / ones / full (or *_like) call with a constant fill; else None."""
    name = op_name(e)
    # dtype given: relay.const alone makes float64 / int64 values 32-bit
    if name in ("zeros", "zeros_like"):
        return const(np.array(0, dtype=dtype), dtype=dtype)
    if name in ("ones", "ones_like"):
        return const(np.array(1, dtype=dtype), dtype=dtype)
    if name in ("full", "full_like"):
        fill = e.args[-1] if name == "full_like" else e.args[0]
        if type(fill) is Constant and fill.data.size == 1:
            return const(np.array(fill.data.reshape(()), dtype=dtype), dtype=dtype)
    return None


def _full_operand(orig, new):
    """0.19's FullElementwise: a filled tensor operand of a broadcasting operator is its scalar
    when the other operand alone already has the result's type."""
    if new.op.pattern != OpPattern.BROADCAST or len(new.args) != 2:
        return None
    t = ty(orig)
    if not isinstance(t, TensorType):
        return None
    for i in (0, 1):
        other = orig.args[1 - i]
        if ty(other) != t:
            continue
        v = _fill_value(new.args[i], t.dtype)
        if v is not None:
            args = [v, new.args[1]] if i == 0 else [new.args[0], v]
            return typed(type(new)(new.op, args, new.attrs, (), new.span), t)
    return None


RULES_019 = [
    ("zeros_like", _concretize), ("ones_like", _concretize), ("full_like", _concretize),
    ("reshape_like", _concretize), ("collapse_sum_like", _concretize),
    ("broadcast_to_like", _concretize), ("cast_like", _concretize),
    ("cast", _clip_casts), ("cast", _cast), ("add", _add_self), ("divide", _rsqrt),
    ("argmax", _dq_arg), ("argmin", _dq_arg), ("argsort", _dq_arg),
    ("clip", _clip_of_narrow_int),
    *((name, _full_operand) for name in _BROADCAST_OPS),
]

__all__ = ["RULES_019", "is_value", "is_signed_zero", "cast_to", "lossless"]

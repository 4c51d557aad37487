"""Bounds of integer values from the form of the expressions that compute them (the realize
step's rescalings use them to stay in int32: :func:`._realize.rescale`)."""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Var

_RANGE = {"int8": 128, "uint8": 255, "int16": 2 ** 15, "uint16": 2 ** 16 - 1, "int32": 2 ** 31,
          "uint32": 2 ** 32 - 1, "bool": 1}
# the integer dtypes whose values an int32 holds, and their largest |value|: the data of the
# int32 rescalings (qnn.canonicalize's requantization, relay.quantize's realize step)
INT32_SAFE = {k: _RANGE[k] for k in ("int8", "uint8", "int16", "uint16", "int32")}
_SAME = ("nn.relu", "annotation.stop_fusion", "copy", "nn.max_pool2d", "annotation.cast_hint")


def _const_max(e) -> int | None:
    if type(e) is not Constant:
        return None
    v = e.data.numpy()
    if not v.size:
        return 0
    if v.dtype.kind == "f" and not np.isfinite(v).all():
        return None
    return int(np.ceil(np.abs(v.astype("float64")).max()))


def _const_min(e) -> int | None:
    if type(e) is not Constant or not e.data.numpy().size:
        return None
    return int(np.floor(e.data.numpy().astype("float64").min()))


def _type_range(expr) -> int | None:
    """The range of ``expr``'s integer dtype where its type is known (a typed node, a
    variable's annotation)."""
    t = getattr(expr, "_checked_type", None)
    if t is None and type(expr) is Var:
        t = expr.type_annotation
    return _RANGE.get(str(getattr(t, "dtype", "")))


def value_bound(expr, depth: int = 12) -> int | None:
    """An upper bound of ``|x|`` over the values of ``expr`` (an integer, or float holding
    integers) that follows from its form alone, or None: constants; casts (to the target
    dtype's range when narrow); clip (its limits); add/subtract/multiply of bounded terms;
    relu, max pooling and annotations (their operand); round (its operand + 1); shifts by
    non-negative constants; ``qnn.multiply_high`` by a constant; else the range of a known
    8-, 16- or 32-bit integer type. ``depth`` limits the (short) descent into the producers;
    ``expr`` need not be typed."""
    c = _const_max(expr)
    if c is not None:
        return c
    if depth <= 0 or not isinstance(expr, Call) or not hasattr(expr.op, "name"):
        return _type_range(expr)
    name, args = expr.op.name, expr.args

    def sub(i):
        return value_bound(args[i], depth - 1)

    if name == "cast":
        inner = sub(0)
        rng = _RANGE.get(str(expr.attrs.dtype))
        if rng is None:  # int64 or a float: the operand's values are kept (float32 exactly
            # up to 2**24)
            return inner if inner is None or inner <= 2 ** 24 else None
        return rng if inner is None else min(rng, inner)
    if name == "clip":
        lim = int(np.ceil(max(abs(expr.attrs.a_min), abs(expr.attrs.a_max))))
        inner = sub(0)
        return lim if inner is None else min(lim, inner)
    if name in _SAME:
        return sub(0)
    if name == "round":
        inner = sub(0)
        return None if inner is None else inner + 1
    if name in ("add", "subtract", "multiply", "qnn.multiply_high"):
        a, b = sub(0), sub(1)
        if a is None or b is None:
            return _type_range(expr)
        if name in ("add", "subtract"):
            return a + b
        return a * b if name == "multiply" else ((a * b) >> 32) + 1
    if name in ("right_shift", "left_shift"):
        a, lo, hi = sub(0), _const_min(args[1]), _const_max(args[1])
        if a is None or lo is None or lo < 0 or hi > 62:
            return None
        return (a >> lo) + 1 if name == "right_shift" else a << hi
    return None


__all__ = ["INT32_SAFE", "value_bound"]

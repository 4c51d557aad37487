"""SimplifyExpr: peephole rewrites as a table of (pattern, rewrite) rules (opt level 0).

After Relay's ``simplify_expr.cc`` (SimplifyReshape, SimplifyTranspose, SimplifyCast and the
arithmetic identities). Each rule only fires when the result keeps the call's type exactly
(shape and dtype), so an identity never hides a broadcast:

====================================  ============================================
pattern                               rewrite
====================================  ============================================
``x * 1``, ``1 * x``                  ``x``
``x + 0``, ``0 + x``, ``x - 0``       ``x`` (floats: only ``x + (-0.0)``, ``-0.0 + x``,
                                      ``x - (+0.0)``, as ``-0.0 + 0.0`` is ``+0.0``)
``x / 1``                             ``x``
``reshape(reshape(x, a), b)``         ``reshape(x, b's static shape)`` (either may be
                                      ``contrib_reverse_reshape``)
``reshape(x, shape of x)``            ``x``
``transpose(transpose(x, a), b)``     ``transpose(x, a[b])`` (``x`` if identity)
``transpose(x, identity)``            ``x``
``cast(x, dtype of x)``               ``x``
====================================  ============================================

and the rules of :mod:`.simplify_rules` (concretizing ``*_like`` operators, consecutive casts,
``x + x``, ``c / sqrt(x)``, additive / multiplicative identities given as ``zeros`` / ``ones``).
"""

from __future__ import annotations

from ..ir.types import TensorType
from ..op.registry import make_call
from ._rewrite import Rewriter, op_name
from ._rewrite import type_of as _ty
from .pass_infra import FunctionPass, PassInfo
from .simplify_rules import RULES_019, is_signed_zero, is_value


def _is_value(e, v) -> bool:
    return is_value(e, v)


def _is_unit(e, name: str, t) -> bool:
    """``e`` is the identity operand of ``name`` (result type ``t``). A float zero must have the sign
    that keeps every ``x`` exactly, signed zeros included (``x + (-0.0)``, ``x - (+0.0)``)."""
    if name in ("multiply", "divide"):
        return _is_value(e, 1)
    if isinstance(t, TensorType) and str(t.dtype).startswith(("float", "bfloat")):
        return is_signed_zero(e, negative=(name == "add"))
    return _is_value(e, 0)


def _static(t):
    return isinstance(t, TensorType) and all(isinstance(d, int) for d in t.shape)


def _keeps_type(orig, operand_orig) -> bool:
    a, b = _ty(orig), _ty(operand_orig)
    return a is not None and b is not None and a == b


def _identity_operand(orig, new):
    """``x`` for ``x*1``, ``1*x``, ``x+0``, ``0+x``, ``x-0``, ``x/1`` when types allow."""
    name = op_name(new)
    lhs, rhs = new.args
    olhs, orhs = orig.args
    t = _ty(orig)
    if _is_unit(rhs, name, t) and _keeps_type(orig, olhs):
        return lhs
    if name in ("multiply", "add") and _is_unit(lhs, name, t) and _keeps_type(orig, orhs):
        return rhs
    return None


_RESHAPES = ("reshape", "contrib_reverse_reshape")


def _reshape(orig, new):
    (x,) = new.args
    out = _ty(orig)
    if not _static(out):
        return None
    inner = x
    while op_name(inner) in _RESHAPES:
        inner = inner.args[0]
    src = _ty(orig.args[0]) if inner is x else None
    if inner is x:
        # reshape to the same shape
        if src is not None and src == out:
            return x
        return None
    return make_call("reshape", [inner], span=new.span, newshape=tuple(out.shape))


def _axes(attrs, ndim):
    ax = attrs.axes
    if ax is None or len(ax) == 0:
        return tuple(range(ndim - 1, -1, -1))
    return tuple(a % ndim for a in ax)


def _transpose(orig, new):
    (x,) = new.args
    t = _ty(orig)
    if t is None:
        return None
    ndim = len(t.shape)
    axes = _axes(new.attrs, ndim)
    if op_name(x) == "transpose":
        inner_axes = _axes(x.attrs, ndim)
        composed = tuple(inner_axes[b] for b in axes)
        if composed == tuple(range(ndim)):
            return x.args[0]
        return make_call("transpose", [x.args[0]], span=new.span, axes=composed)
    if axes == tuple(range(ndim)):
        return x
    return None


# (operator, rule): the rule returns the replacement or None
RULES = [
    ("multiply", _identity_operand),
    ("divide", _identity_operand),
    ("add", _identity_operand),
    ("subtract", _identity_operand),
    ("reshape", _reshape),
    ("contrib_reverse_reshape", _reshape),
    ("transpose", _transpose),
    *RULES_019,
]
_BY_OP: dict = {}
for _op, _rule in RULES:
    _BY_OP.setdefault(_op, []).append(_rule)


class _Simplify(Rewriter):
    def post_call(self, orig, new):
        for rule in _BY_OP.get(op_name(new), ()):
            out = rule(orig, new)
            if out is not None:
                # the replacement has the replaced node's type (later rules read it)
                t = _ty(orig)
                if t is not None and _ty(out) is None and hasattr(out, "_set_checked_type"):
                    out._set_checked_type(t)
                return out
        return new


def simplify_expr(func):
    """Apply the rules to a typed function (types are read from the original nodes)."""
    return _Simplify().rewrite(func)


def SimplifyExpr():  # noqa: N802 - Relay's name
    """Peephole simplifications (opt level 0); see the module docstring for the rule table."""
    return FunctionPass(lambda f, m, c: simplify_expr(f),
                        PassInfo(0, "SimplifyExpr", ("InferType",)))


__all__ = ["SimplifyExpr", "simplify_expr", "RULES"]

"""Operator sugar on Relay expressions, as ``tvm.relay.Expr`` had it: ``x + y``, ``2 * x``,
``x < y``, ``-x``, ``x.astype("int32")`` build calls of ``add``, ``multiply``, ``less``,
``negative``, ``cast``. A Python scalar beside an expression becomes a constant of the
expression's annotated dtype when it has one (``float32`` otherwise, as ``relay.const``).

The IR is the bottom layer and knows no operator, so the operators attach this sugar to
:class:`relay_tvm.ir.base.RelayExpr` when :mod:`relay_tvm.op` is imported.
"""

from __future__ import annotations

from ..ir.base import RelayExpr
from ..ir.expr import const
from ._common import named


def _lift(value, like):
    """Python scalars in operator sugar become constants of ``like``'s dtype when it is known."""
    if isinstance(value, RelayExpr):
        return value
    dtype = None
    ann = getattr(like, "type_annotation", None)
    if ann is not None and getattr(ann, "dtype", None):
        dtype = ann.dtype
    return const(value, dtype)


def _binary(name: str, reflected: bool = False):
    """``x <op> y`` (or ``y <op> x`` when ``reflected``) as a call of the operator ``name``."""
    if reflected:
        def method(self, other):
            return getattr(_ops(), name)(_lift(other, self), self)
    else:
        def method(self, other):
            return getattr(_ops(), name)(self, _lift(other, self))

    named(method, name)
    return method


def _ops():
    import relay_tvm.op as ops  # the whole operator namespace (add, less, cast, ...)

    return ops


def _neg(self):
    return _ops().negative(self)


def _astype(self, dtype: str):
    return _ops().cast(self, dtype)


def attach() -> None:
    """Give :class:`RelayExpr` its arithmetic and comparison operators (idempotent)."""
    for dunder, name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                         ("truediv", "divide")):
        setattr(RelayExpr, f"__{dunder}__", _binary(name))
        setattr(RelayExpr, f"__r{dunder}__", _binary(name, reflected=True))
    # comparisons build calls, as in tvm.relay (expressions compare by identity with ==)
    for dunder, name in (("lt", "less"), ("gt", "greater"), ("le", "less_equal"),
                         ("ge", "greater_equal")):
        setattr(RelayExpr, f"__{dunder}__", _binary(name))
    RelayExpr.__neg__ = _neg
    RelayExpr.astype = _astype

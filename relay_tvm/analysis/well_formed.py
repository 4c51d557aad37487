"""Well-formedness: every variable is bound once and used only in the scope of its binding."""

from __future__ import annotations

from ..errors import WellFormedError
from ..ir.adt import Match, pattern_vars
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import children
from ..ir.module import IRModule


def check_well_formed(expr, allow_free: bool = False, where: str = "") -> None:
    """Raise :class:`WellFormedError` naming the first variable bound twice or used out of scope.

    Args:
        allow_free: accept free variables (for a bare expression given to inference).
        where: a name for the message (``"@main"``).
    """
    if isinstance(expr, IRModule):
        for gv, f in expr.functions.items():
            check_well_formed(f, False, f"@{gv.name_hint}")
        return
    ever_bound: set = set()
    in_scope: set = set()
    done: set = set()
    suffix = f" in {where}" if where else ""

    def bind(v, what):
        if v in ever_bound:
            raise WellFormedError(f"variable %{v.name_hint} is bound twice ({what}){suffix}", v.span)
        ever_bound.add(v)
        in_scope.add(v)

    # The stack holds nodes to visit and, as tuples, (_UNBIND | _BIND, variables) actions; a
    # Relay node is never a plain tuple. One visit per node: this runs before every inference.
    stack = [expr]
    pop, push = stack.pop, stack.append
    while stack:
        e = pop()
        t = type(e)
        if t is tuple:
            action, vs = e
            if action is _UNBIND:
                in_scope.difference_update(vs)
            else:
                for v in vs:
                    bind(v, "pattern")
            continue
        if t is Var or (t not in _KNOWN and isinstance(e, Var)):
            if e in in_scope:
                continue
            from .free import bound_vars  # only to word the error

            if e in set(bound_vars(expr)):
                raise WellFormedError(
                    f"variable %{e.name_hint} is used outside the scope of its binding{suffix}",
                    e.span,
                )
            if not allow_free:
                raise WellFormedError(
                    f"variable %{e.name_hint} is used but not bound{suffix}; bind it with a "
                    f"function parameter, a let or a pattern",
                    e.span,
                )
            continue
        if e in done:
            continue
        done.add(e)
        if t is Function or (t not in _KNOWN and isinstance(e, Function)):
            for p in e.params:
                bind(p, "function parameter")
            push((_UNBIND, list(e.params)))
            push(e.body)
        elif t is Let or (t not in _KNOWN and isinstance(e, Let)):
            bind(e.var, "let")
            push((_UNBIND, [e.var]))
            push(e.body)
            push(e.value)
        elif t is Match or (t not in _KNOWN and isinstance(e, Match)):
            for c in reversed(e.clauses):
                pv = pattern_vars(c.lhs)
                push((_UNBIND, pv))
                push(c.rhs)
                push((_BIND, pv))
            push(e.data)
        else:
            kids = children(e)
            if kids:
                stack.extend(reversed(kids))


_UNBIND = object()
_BIND = object()
_KNOWN = frozenset({Call, Constant, Tuple, TupleGetItem, If, GlobalVar, RefCreate, RefRead,
                    RefWrite, Var, Function, Let, Match})


def well_formed(expr) -> bool:
    """Whether ``expr`` is well formed (free variables allowed at top level, as in Relay)."""
    try:
        check_well_formed(expr, allow_free=True)
        return True
    except WellFormedError:
        return False


__all__ = ["well_formed", "check_well_formed"]

"""Well-formedness: every variable is bound once and used only in the scope of its binding."""

from __future__ import annotations

from ..errors import WellFormedError
from ..ir.adt import Match, pattern_vars
from ..ir.expr import Function, Let, Var
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

    from .free import bound_vars

    binders = set(bound_vars(expr))
    stack = [("visit", expr)]
    while stack:
        action, e = stack.pop()
        if action == "unbind":
            in_scope.difference_update(e)
            continue
        if action == "bind":
            for v in e:
                bind(v, "pattern")
            continue
        if isinstance(e, Var):
            if e in in_scope:
                continue
            if e in binders:
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
        if id(e) in done:
            continue
        done.add(id(e))
        if isinstance(e, Function):
            for p in e.params:
                bind(p, "function parameter")
            stack.append(("unbind", list(e.params)))
            stack.append(("visit", e.body))
        elif isinstance(e, Let):
            bind(e.var, "let")
            stack.append(("unbind", [e.var]))
            stack.append(("visit", e.body))
            stack.append(("visit", e.value))
        elif isinstance(e, Match):
            for c in reversed(e.clauses):
                pv = pattern_vars(c.lhs)
                stack.append(("unbind", pv))
                stack.append(("visit", c.rhs))
                stack.append(("bind", pv))
            stack.append(("visit", e.data))
        else:
            for c in reversed(children(e)):
                stack.append(("visit", c))


def well_formed(expr) -> bool:
    """Whether ``expr`` is well formed (free variables allowed at top level, as in Relay)."""
    try:
        check_well_formed(expr, allow_free=True)
        return True
    except WellFormedError:
        return False


__all__ = ["well_formed", "check_well_formed"]

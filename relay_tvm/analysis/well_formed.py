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

    def bind(v, what, site, clause=None):
        if v in ever_bound:
            err = WellFormedError(f"variable %{v.name_hint} is bound twice ({what}){suffix}; "
                                  f"give each binding a variable of its own (relay.var)",
                                  v.span)
            err.rebinding = (site, v, clause)  # for rebind_duplicates
            raise err
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
            action, vs = e[0], e[1]
            if action is _UNBIND:
                in_scope.difference_update(vs)
            else:
                for v in vs:
                    bind(v, "pattern", e[2], e[3])
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
                bind(p, "function parameter", e)
            push((_UNBIND, list(e.params)))
            push(e.body)
        elif t is Let or (t not in _KNOWN and isinstance(e, Let)):
            bind(e.var, "let", e)
            push((_UNBIND, [e.var]))
            push(e.body)
            push(e.value)
        elif t is Match or (t not in _KNOWN and isinstance(e, Match)):
            for k in range(len(e.clauses) - 1, -1, -1):
                c = e.clauses[k]
                pv = pattern_vars(c.lhs)
                push((_UNBIND, pv))
                push(c.rhs)
                push((_BIND, pv, e, k))
            push(e.data)
        else:
            kids = children(e)
            if kids:
                stack.extend(reversed(kids))


_UNBIND = object()
_BIND = object()
_KNOWN = frozenset({Call, Constant, Tuple, TupleGetItem, If, GlobalVar, RefCreate, RefRead,
                    RefWrite, Var, Function, Let, Match})


def rebind_duplicates(func, where: str = ""):
    """``func`` with a fresh variable for every binding of a variable already bound elsewhere
    in it (a ``Var`` object used as the parameter of two functions, the variable of two
    ``let`` s, or in two patterns), its uses in that binding's scope renamed with it; ``func``
    itself when it binds each variable once. tvm.relay 0.19's ``IRModule`` accepted such
    functions (its well-formedness check ran on a de-duplicated copy), and scripts build them
    (one ``relay.var`` pair for two lambdas); relay_tvm's inference and passes take each
    variable bound once, so ``InferType`` on a module renames the later bindings.

    Raises:
        WellFormedError: ``func`` is ill-formed otherwise (a variable used out of scope or
            unbound).
    """
    from ..ir.adt import Clause
    from ..ir.functor import Replace, map_pattern

    while True:
        try:
            check_well_formed(func, False, where)
            return func
        except WellFormedError as e:
            if getattr(e, "rebinding", None) is None:
                raise
            site, v, clause = e.rebinding
            err = e
        fresh = Var(v.name_hint, v.type_annotation, v.span)
        if isinstance(site, Let) and not isinstance(site.value, Function):
            # a let of a value that is no function: the value is outside the variable's scope
            # (``let %x = %x + 1`` reads the outer %x, as 0.19's interpreter did)
            new_site = Let(fresh, site.value, Replace({v: fresh}, True).rewrite(site.body),
                           site.span)
        elif clause is None:  # a function's parameters, or a let of a (recursive) function
            new_site = Replace({v: fresh}, True).rewrite(site)
        else:  # a pattern variable: that clause only (another may bind the variable too)
            cl = site.clauses[clause]
            new_cl = Clause(map_pattern(cl.lhs, lambda x, m={v: fresh}: m.get(x, x)),
                            Replace({v: fresh}, True).rewrite(cl.rhs), cl.span)
            new_site = Match(site.data, [new_cl if k == clause else c
                                         for k, c in enumerate(site.clauses)],
                             site.complete, site.span)
        renamed = Replace({site: new_site}, True).rewrite(func)
        if renamed is func:  # (the binding is nowhere the rewrite reaches: nothing to rename)
            raise err
        func = renamed


def well_formed(expr) -> bool:
    """Whether ``expr`` is well formed (free variables allowed at top level, as in Relay)."""
    try:
        check_well_formed(expr, allow_free=True)
        return True
    except WellFormedError:
        return False


__all__ = ["well_formed", "check_well_formed", "rebind_duplicates"]

"""Variable analyses: free, bound and all variables, free type variables. All iterative.

The IR itself needs them (``IRModule.from_expr`` abstracts over the free variables), so they
live here; :mod:`relay_tvm.analysis` exports them under their tvm.relay.analysis names.
"""

from __future__ import annotations

from .adt import Match, pattern_vars
from .expr import Function, Let, Var
from .functor import children
from .types import (
    FuncType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
)


def _preorder(expr):
    """Every distinct sub-expression, pre-order, left to right."""
    seen = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack.extend(reversed(children(e)))


def _binders(e):
    if isinstance(e, Function):
        return e.params
    if isinstance(e, Let):
        return (e.var,)
    if isinstance(e, Match):
        out = []
        for c in e.clauses:
            out.extend(pattern_vars(c.lhs))
        return out
    return ()


def bound_vars(expr) -> list:
    """Variables bound inside ``expr`` (parameters, lets, patterns), in pre-order."""
    if hasattr(expr, "functions"):  # IRModule-like argument is not supported here
        raise TypeError("bound_vars takes an expression")
    out, seen = [], set()
    for e in _preorder(expr):
        for v in _binders(e):
            if v not in seen:
                seen.add(v)
                out.append(v)
    return out


def all_vars(expr) -> list:
    """Every variable occurring in ``expr``, in pre-order."""
    out, seen = [], set()
    for e in _preorder(expr):
        for v in (*_binders(e), e):
            if isinstance(v, Var) and v not in seen:
                seen.add(v)
                out.append(v)
    return out


def free_vars(expr) -> list:
    """Variables used in ``expr`` but not bound in it, in order of first occurrence (pre-order).

    This order is the parameter order of ``IRModule.from_expr`` for a non-function expression.
    """
    bound = set()
    for e in _preorder(expr):
        bound.update(_binders(e))
    out, seen = [], set()
    for e in _preorder(expr):
        if isinstance(e, Var) and e not in bound and e not in seen:
            seen.add(e)
            out.append(e)
    return out


def _type_vars(t, out, seen, bound):
    stack = [t]
    while stack:
        t = stack.pop()
        if isinstance(t, TypeVar):
            if t not in bound and t not in seen:
                seen.add(t)
                out.append(t)
        elif isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        elif isinstance(t, FuncType):
            bound = bound | set(t.type_params)
            for a in t.arg_types:
                _type_vars(a, out, seen, bound)
            _type_vars(t.ret_type, out, seen, bound)
        elif isinstance(t, RefType):
            stack.append(t.value)
        elif isinstance(t, TypeCall):
            stack.extend(reversed(t.args))
        elif isinstance(t, TensorType) or t is None:
            pass


def free_type_vars(expr_or_type, mod=None) -> list:
    """Type variables used in annotations (or in a type) but not bound by a type parameter list."""
    from .types import Type

    out, seen = [], set()
    if isinstance(expr_or_type, Type):
        _type_vars(expr_or_type, out, seen, frozenset())
        return out
    bound = set()
    for e in _preorder(expr_or_type):
        if isinstance(e, Function):
            bound.update(e.type_params)
    for e in _preorder(expr_or_type):
        if isinstance(e, Var) and e.type_annotation is not None:
            _type_vars(e.type_annotation, out, seen, bound)
        elif isinstance(e, Function) and e.ret_type is not None:
            _type_vars(e.ret_type, out, seen, bound)
    return out


def bound_type_vars(expr) -> list:
    out = []
    for e in _preorder(expr):
        if isinstance(e, Function):
            out.extend(e.type_params)
    return out


def all_type_vars(expr) -> list:
    out = bound_type_vars(expr)
    for v in free_type_vars(expr):
        if v not in out:
            out.append(v)
    return out


__all__ = ["free_vars", "bound_vars", "all_vars", "free_type_vars", "bound_type_vars", "all_type_vars"]

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


def _preorder_binding(expr):
    """``(node, binders)`` pre-order, where a ``Match``'s pattern variables come clause by
    clause, just before that clause's right-hand side (0.19's visiting order)."""
    seen = set()
    stack = [(expr, None)]
    while stack:
        e, marker = stack.pop()
        if marker is not None:
            yield None, marker
            continue
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Match):
            yield e, ()
            for c in reversed(e.clauses):
                stack.append((c.rhs, None))
                stack.append((None, tuple(pattern_vars(c.lhs))))
            stack.append((e.data, None))
            continue
        yield e, _binders(e)
        stack.extend((c, None) for c in reversed(children(e)))


def all_vars(expr) -> list:
    """Every variable occurring in ``expr``, in pre-order (a binder where it binds; a
    ``Match``'s pattern variables before their clause's right-hand side)."""
    out, seen = [], set()
    for e, binders in _preorder_binding(expr):
        for v in (*binders, e):
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


def _types_in(expr_or_type):
    """The types written in ``expr_or_type`` (itself, if a type; else its annotations), each
    walked pre-order, as ``(type, is_binder_list)`` items: a ``FuncType``'s / ``Function``'s
    type parameters come first, then its argument (parameter) types, then its return type."""
    from .types import Type

    def walk(t):
        stack = [t]
        while stack:
            t = stack.pop()
            if isinstance(t, TypeVar):
                yield t, False
            elif isinstance(t, TupleType):
                stack.extend(reversed(t.fields))
            elif isinstance(t, FuncType):
                for v in t.type_params:
                    yield v, True
                stack.append(t.ret_type)
                stack.extend(reversed(t.arg_types))
            elif isinstance(t, RefType):
                stack.append(t.value)
            elif isinstance(t, TypeCall):
                stack.extend(reversed(t.args))

    if isinstance(expr_or_type, Type):
        yield from walk(expr_or_type)
        return
    for e in _preorder(expr_or_type):
        if isinstance(e, Function):
            for v in e.type_params:
                yield v, True
            for p in e.params:  # the parameters' annotations are read here, in order
                if p.type_annotation is not None:
                    yield from walk(p.type_annotation)
            if e.ret_type is not None:
                yield from walk(e.ret_type)
        elif isinstance(e, Var) and e.type_annotation is not None:
            yield from walk(e.type_annotation)


def bound_type_vars(expr_or_type) -> list:
    """Type variables bound by a type parameter list (of a ``Function`` or a ``FuncType``)
    in an expression or a type, in order of occurrence."""
    out = []
    for v, binder in _types_in(expr_or_type):
        if binder and v not in out:
            out.append(v)
    return out


def all_type_vars(expr_or_type, mod=None) -> list:
    """Every type variable in an expression or a type, bound or free, in order of first
    occurrence (type parameters, then parameter types, return type, body)."""
    out = []
    for v, _ in _types_in(expr_or_type):
        if v not in out:
            out.append(v)
    return out


__all__ = ["free_vars", "bound_vars", "all_vars", "free_type_vars", "bound_type_vars", "all_type_vars"]

"""Functors over expressions and types: ``ExprFunctor``, ``ExprVisitor``, ``ExprMutator``,
``TypeFunctor``, ``TypeVisitor``, ``TypeMutator``, and :func:`post_order_visit`.

Deep programs are normal, so visiting is iterative: before a node's ``visit_*`` method runs, its
children are visited (post-order, with an explicit stack) and memoized, so the default methods'
``self.visit(child)`` calls return at once. A subclass that overrides ``visit_call`` (say) keeps
full control of calls: their children are not visited ahead of the override, which then recurses
as it chooses. Memoization is by node identity, as in Relay.

Mutators rebuild a node only when a child changed, keep its span, and otherwise return the same
object.
"""

from __future__ import annotations

from .adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .expr import (
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
from .types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeRelation,
    TypeVar,
)


def children(e) -> tuple:
    """The sub-expressions of ``e`` in evaluation order (callee first, then arguments)."""
    t = type(e)
    if t is Call:
        return (e.op, *e.args)
    if t is Tuple:
        return e.fields
    if t is TupleGetItem:
        return (e.tuple_value,)
    if t is Let:
        return (e.var, e.value, e.body)
    if t is Function:
        return (*e.params, e.body)
    if t is If:
        return (e.cond, e.true_branch, e.false_branch)
    if t is Match:
        return (e.data, *(c.rhs for c in e.clauses))
    if t is RefCreate:
        return (e.value,)
    if t is RefRead:
        return (e.ref,)
    if t is RefWrite:
        return (e.ref, e.value)
    return ()


_METHOD = {
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    Constant: "visit_constant",
    Call: "visit_call",
    Function: "visit_function",
    Let: "visit_let",
    If: "visit_if",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
    Constructor: "visit_constructor",
    Match: "visit_match",
}


def _method_name(node) -> str:
    name = _METHOD.get(type(node))
    if name is None:
        from ..op.registry import Op

        if isinstance(node, Op):
            return "visit_op"
        for cls, n in _METHOD.items():
            if isinstance(node, cls):
                return n
        raise TypeError(f"not a Relay expression: {type(node).__name__}")
    return name


class ExprFunctor:
    """Dispatch on the expression kind to ``visit_<kind>``, memoized by identity."""

    _expandable_cache: dict = {}

    def __init__(self):
        self.memo_map = {}

    def _expandable(self) -> frozenset:
        """Node kinds whose ``visit_*`` is the default of a deep-safe base class."""
        return frozenset()

    def visit(self, expr):
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        expandable = self._expandable()
        if not expandable:
            res = getattr(self, _method_name(expr))(expr)
            memo[expr] = res
            return res
        stack = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if node in memo:
                continue
            if ready or type(node) not in expandable:
                memo[node] = getattr(self, _method_name(node))(node)
                continue
            stack.append((node, True))
            for c in reversed(children(node)):
                if c not in memo:
                    stack.append((c, False))
        return memo[expr]

    def visit_var(self, e):
        raise NotImplementedError

    def visit_global_var(self, e):
        raise NotImplementedError

    def visit_constant(self, e):
        raise NotImplementedError

    def visit_call(self, e):
        raise NotImplementedError

    def visit_function(self, e):
        raise NotImplementedError

    def visit_let(self, e):
        raise NotImplementedError

    def visit_if(self, e):
        raise NotImplementedError

    def visit_tuple(self, e):
        raise NotImplementedError

    def visit_tuple_getitem(self, e):
        raise NotImplementedError

    def visit_ref_create(self, e):
        raise NotImplementedError

    def visit_ref_read(self, e):
        raise NotImplementedError

    def visit_ref_write(self, e):
        raise NotImplementedError

    def visit_constructor(self, e):
        raise NotImplementedError

    def visit_match(self, e):
        raise NotImplementedError

    def visit_op(self, e):
        raise NotImplementedError


def _defaults(cls, base) -> frozenset:
    key = (cls, base)
    cached = ExprFunctor._expandable_cache.get(key)
    if cached is None:
        kinds = [k for k, m in _METHOD.items() if getattr(cls, m) is getattr(base, m)]
        cached = frozenset(kinds)
        ExprFunctor._expandable_cache[key] = cached
    return cached


class ExprVisitor(ExprFunctor):
    """Visits every sub-expression once; override ``visit_*`` to act on some kinds."""

    def _expandable(self):
        return _defaults(type(self), ExprVisitor)

    def visit_var(self, e):
        pass

    def visit_global_var(self, e):
        pass

    def visit_constant(self, e):
        pass

    def visit_op(self, e):
        pass

    def visit_constructor(self, e):
        pass

    def visit_call(self, e):
        self.visit(e.op)
        for a in e.args:
            self.visit(a)

    def visit_function(self, e):
        for p in e.params:
            self.visit(p)
        self.visit(e.body)

    def visit_let(self, e):
        self.visit(e.var)
        self.visit(e.value)
        self.visit(e.body)

    def visit_if(self, e):
        self.visit(e.cond)
        self.visit(e.true_branch)
        self.visit(e.false_branch)

    def visit_tuple(self, e):
        for f in e.fields:
            self.visit(f)

    def visit_tuple_getitem(self, e):
        self.visit(e.tuple_value)

    def visit_ref_create(self, e):
        self.visit(e.value)

    def visit_ref_read(self, e):
        self.visit(e.ref)

    def visit_ref_write(self, e):
        self.visit(e.ref)
        self.visit(e.value)

    def visit_match(self, e):
        self.visit(e.data)
        for c in e.clauses:
            self.visit_pattern(c.lhs)
            self.visit(c.rhs)

    def visit_pattern(self, p):
        pass


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class ExprMutator(ExprFunctor):
    """Rebuilds expressions bottom-up; a node whose children did not change is returned as is.
    Spans are kept."""

    def _expandable(self):
        return _defaults(type(self), ExprMutator)

    def visit_var(self, e):
        return e

    def visit_global_var(self, e):
        return e

    def visit_constant(self, e):
        return e

    def visit_op(self, e):
        return e

    def visit_constructor(self, e):
        return e

    def visit_call(self, e):
        op = self.visit(e.op)
        args = [self.visit(a) for a in e.args]
        if op is e.op and _same(args, e.args):
            return e
        return Call(op, args, e.attrs, e.type_args, e.span)

    def visit_function(self, e):
        params = [self.visit(p) for p in e.params]
        body = self.visit(e.body)
        if body is e.body and _same(params, e.params):
            return e
        return Function(params, body, e.ret_type, e.type_params, e.attrs, e.span)

    def visit_let(self, e):
        v = self.visit(e.var)
        value = self.visit(e.value)
        body = self.visit(e.body)
        if v is e.var and value is e.value and body is e.body:
            return e
        return Let(v, value, body, e.span)

    def visit_if(self, e):
        c, t, f = self.visit(e.cond), self.visit(e.true_branch), self.visit(e.false_branch)
        if c is e.cond and t is e.true_branch and f is e.false_branch:
            return e
        return If(c, t, f, e.span)

    def visit_tuple(self, e):
        fields = [self.visit(f) for f in e.fields]
        if _same(fields, e.fields):
            return e
        return Tuple(fields, e.span)

    def visit_tuple_getitem(self, e):
        t = self.visit(e.tuple_value)
        if t is e.tuple_value:
            return e
        return TupleGetItem(t, e.index, e.span)

    def visit_ref_create(self, e):
        v = self.visit(e.value)
        return e if v is e.value else RefCreate(v, e.span)

    def visit_ref_read(self, e):
        r = self.visit(e.ref)
        return e if r is e.ref else RefRead(r, e.span)

    def visit_ref_write(self, e):
        r, v = self.visit(e.ref), self.visit(e.value)
        return e if (r is e.ref and v is e.value) else RefWrite(r, v, e.span)

    def visit_match(self, e):
        data = self.visit(e.data)
        clauses = []
        changed = data is not e.data
        for c in e.clauses:
            lhs = self.visit_pattern(c.lhs)
            rhs = self.visit(c.rhs)
            if lhs is c.lhs and rhs is c.rhs:
                clauses.append(c)
            else:
                changed = True
                clauses.append(Clause(lhs, rhs, c.span))
        return Match(data, clauses, e.complete, e.span) if changed else e

    def visit_pattern(self, p):
        return p


# ---- types -------------------------------------------------------------------------------------

_TMETHOD = {
    TensorType: "visit_tensor_type",
    TupleType: "visit_tuple_type",
    FuncType: "visit_func_type",
    TypeVar: "visit_type_var",
    GlobalTypeVar: "visit_global_type_var",
    IncompleteType: "visit_incomplete_type",
    RefType: "visit_ref_type",
    TypeCall: "visit_type_call",
    TypeRelation: "visit_type_relation",
    TypeData: "visit_type_data",
}


class TypeFunctor:
    """Dispatch on the type kind to ``visit_<kind>`` (types are shallow: plain recursion).
    A kind without an override raises ``NotImplementedError`` (tvm.relay's TypeFunctor)."""

    def visit(self, t):
        try:
            name = _TMETHOD[type(t)]
        except KeyError:
            raise TypeError(f"TypeFunctor: not a Relay type: {type(t).__name__}") from None
        return getattr(self, name)(t)


def _unimplemented(name):
    def method(self, t):
        raise NotImplementedError(f"{type(self).__name__}.{name} is not implemented")

    method.__name__ = name
    return method


for _name in _TMETHOD.values():
    setattr(TypeFunctor, _name, _unimplemented(_name))


class TypeVisitor(TypeFunctor):
    def visit_tensor_type(self, t):
        pass

    def visit_type_var(self, t):
        pass

    def visit_global_type_var(self, t):
        pass

    def visit_incomplete_type(self, t):
        pass

    def visit_tuple_type(self, t):
        for f in t.fields:
            self.visit(f)

    def visit_func_type(self, t):
        for p in t.type_params:
            self.visit(p)
        for a in t.arg_types:
            self.visit(a)
        self.visit(t.ret_type)

    def visit_ref_type(self, t):
        self.visit(t.value)

    def visit_type_call(self, t):
        self.visit(t.func)
        for a in t.args:
            self.visit(a)

    def visit_type_relation(self, t):
        for a in t.args:
            self.visit(a)

    def visit_type_data(self, t):
        self.visit(t.header)
        for v in t.type_vars:
            self.visit(v)


class TypeMutator(TypeFunctor):
    def visit_tensor_type(self, t):
        return t

    def visit_type_var(self, t):
        return t

    def visit_global_type_var(self, t):
        return t

    def visit_incomplete_type(self, t):
        return t

    def visit_tuple_type(self, t):
        fields = [self.visit(f) for f in t.fields]
        return t if _same(fields, t.fields) else TupleType(fields, t.span)

    def visit_func_type(self, t):
        args = [self.visit(a) for a in t.arg_types]
        ret = self.visit(t.ret_type)
        if ret is t.ret_type and _same(args, t.arg_types):
            return t
        return FuncType(args, ret, t.type_params, t.type_constraints, t.span)

    def visit_ref_type(self, t):
        v = self.visit(t.value)
        return t if v is t.value else RefType(v, t.span)

    def visit_type_call(self, t):
        f = self.visit(t.func)
        args = [self.visit(a) for a in t.args]
        return t if (f is t.func and _same(args, t.args)) else TypeCall(f, args, t.span)

    def visit_type_relation(self, t):
        return t

    def visit_type_data(self, t):
        return t


# ---- helpers -----------------------------------------------------------------------------------


def post_order(expr, kids=children, skip=None) -> list:
    """Every distinct sub-expression of ``expr`` (by identity), children before parents, in
    evaluation order; iterative, so any depth is fine.

    Args:
        kids: ``kids(node) -> children`` (default: all sub-expressions).
        skip: optional set of ``id`` s of nodes to leave out together with what only they reach
            (nodes already handled by an earlier traversal).
    """
    out = []
    seen = set(skip) if skip else set()
    if id(expr) in seen:
        return out
    stack = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for c in reversed(kids(node)):
            if id(c) not in seen:
                stack.append((c, False))
    return out


def post_order_visit(expr, fvisit) -> None:
    """Call ``fvisit(node)`` on every sub-expression of ``expr`` once, children first
    (Relay's ``post_order_visit``). Iterative."""
    for node in post_order(expr):
        fvisit(node)


class _Substitute(ExprMutator):
    def __init__(self, binds):
        super().__init__()
        self.binds = binds

    def visit_var(self, e):
        return self.binds.get(e, e)


def substitute(expr, binds: dict):
    """Replace variables by expressions (``relay.bind``). For a ``Function``, parameters that are
    bound are dropped from its parameter list."""
    if isinstance(expr, Function):
        body = _Substitute(binds).visit(expr.body)
        params = [p for p in expr.params if p not in binds]
        if body is expr.body and len(params) == len(expr.params):
            return expr
        return Function(params, body, expr.ret_type, expr.type_params, expr.attrs, expr.span)
    return _Substitute(binds).visit(expr)


__all__ = [
    "ExprFunctor",
    "ExprVisitor",
    "ExprMutator",
    "TypeFunctor",
    "TypeVisitor",
    "TypeMutator",
    "post_order_visit",
    "post_order",
    "substitute",
    "children",
    "PatternWildcard",
    "PatternVar",
    "PatternConstructor",
    "PatternTuple",
]

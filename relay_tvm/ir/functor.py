"""Functors over expressions and types: ``ExprFunctor``, ``ExprVisitor``, ``ExprMutator``,
``TypeFunctor``, ``TypeVisitor``, ``TypeMutator``, and :func:`post_order_visit`.

Deep programs are normal, so visiting is iterative: ``ExprVisitor.visit`` and
``ExprMutator.visit`` first walk the expression with an explicit stack, children before parents
(the order of :func:`children`), and call each node's ``visit_*`` method once its children are
memoized, so every ``self.visit(child)`` inside a ``visit_*`` method returns at once. This is the
same whichever methods a subclass overrides: every sub-expression is visited exactly once,
before its parent (an override cannot hide a sub-expression from the walk; it decides what the
parent becomes). ``ExprFunctor`` itself only dispatches (``visit`` calls ``visit_<kind>``), for
functors that direct their own recursion. Memoization is by node identity, as in Relay.

Mutators rebuild a node only when a child changed, keep its span, and otherwise return the same
object.
"""

from __future__ import annotations

import operator

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


def children(e, *, binders: bool = True, callee: bool = True, branches: bool = True) -> tuple:
    """The sub-expressions of ``e`` in evaluation order (callee first, then arguments).

    The one definition of an expression's children; the options give the views the passes
    need (pass them through ``functools.partial`` as ``post_order``'s ``kids``):

    Args:
        binders: include the variables a node binds (a ``Let``'s variable, a ``Function``'s
            parameters); without them only the expressions that are evaluated remain.
        callee: include a ``Call``'s callee (without it: only the arguments, the dataflow view
            in which operators and primitive functions are not values).
        branches: include the arms of ``If`` and ``Match`` (without them: only the condition and
            the scrutinee, the parts evaluated in the enclosing scope).
    """
    t = type(e)
    if t is Call:
        return (e.op, *e.args) if callee else tuple(e.args)
    if t is Tuple:
        return e.fields
    if t is TupleGetItem:
        return (e.tuple_value,)
    if t is Let:
        return (e.var, e.value, e.body) if binders else (e.value, e.body)
    if t is Function:
        return (*e.params, e.body) if binders else (e.body,)
    if t is If:
        return (e.cond, e.true_branch, e.false_branch) if branches else (e.cond,)
    if t is Match:
        return (e.data, *(c.rhs for c in e.clauses)) if branches else (e.data,)
    if t is RefCreate:
        return (e.value,)
    if t is RefRead:
        return (e.ref,)
    if t is RefWrite:
        return (e.ref, e.value)
    return ()


def value_children(e) -> tuple:
    """``children(e, binders=False)``: the evaluated sub-expressions, no binding variables."""
    return children(e, binders=False)


def dataflow_children(e) -> tuple:
    """The sub-expressions of a dataflow node (``Call`` arguments, ``Tuple`` fields, a
    projection's tuple, a ``Let``'s value and body); other kinds are leaves here: the view of
    passes and codegen that handle dataflow programs only and report any other kind."""
    t = type(e)
    if t is Call or t is Tuple or t is TupleGetItem or t is Let:
        return children(e, binders=False, callee=False)
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


def register_expr_kind(cls: type, method: str) -> None:
    """Dispatch nodes of ``cls`` (an expression kind defined above the IR, such as
    :class:`relay_tvm.op.Op`) to the functors' ``method``."""
    _METHOD[cls] = method


def _method_name(node) -> str:
    name = _METHOD.get(type(node))
    if name is None:
        for cls, n in _METHOD.items():
            if isinstance(node, cls):
                return n
        raise TypeError(f"not a Relay expression: {type(node).__name__}")
    return name


class ExprFunctor:
    """Dispatch on the expression kind to ``visit_<kind>``, memoized by identity.

    ``visit`` on a node not seen yet calls its ``visit_*`` method directly: the method directs
    the recursion. :class:`ExprVisitor` and :class:`ExprMutator` walk children first instead,
    iteratively: ``_children_first`` is ``True`` there (every kind), and a functor may declare a
    frozenset of the node kinds whose children it wants visited first (a class attribute, the
    same whichever methods a subclass overrides).
    """

    _children_first = False
    _returns_exprs = False  # a mutator: a visit method's None is a mistake, named at once

    def __init__(self):
        self.memo_map = {}

    def _returned_none(self, node):
        from ..errors import RelayError

        op = getattr(getattr(node, "op", None), "name", None)
        name = getattr(node, "name_hint", None)
        what = type(node).__name__ + (f" of {op}" if op else f" %{name}" if name else "")
        raise RelayError(f"{type(self).__name__}.{_method_name(node)} returned None for a "
                         f"{what}: a mutator's visit methods return an expression (the node "
                         f"itself to keep it)")

    def visit(self, expr):
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        first = self._children_first
        if first is False or (first is not True and type(expr) not in first):
            res = getattr(self, _method_name(expr))(expr)
            if res is None and self._returns_exprs:
                self._returned_none(expr)
            memo[expr] = res
            return res
        stack = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if node in memo:
                continue
            if ready or (first is not True and type(node) not in first):
                res = memo[node] = getattr(self, _method_name(node))(node)
                if res is None and self._returns_exprs:
                    self._returned_none(node)
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


class ExprVisitor(ExprFunctor):
    """Visits every sub-expression once, children before parents; override ``visit_*`` to act
    on some kinds."""

    _children_first = True

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
    Spans are kept. Children are rewritten before their parent (see the module docstring)."""

    _children_first = True
    _returns_exprs = True

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


# ---- the rewriter: bottom-up rewriting without recursion ------------------------------------
# Every pass must handle 100,000-node programs, so nothing recurses over expression depth.
# :class:`Rewriter` visits each node once (memoized by identity), rebuilds it from its rewritten
# children (keeping its span, returning the same object when nothing changed), then hands
# ``(original, rebuilt)`` to a per-kind hook that may return a replacement. Primitive functions
# are not entered (they are kernels, already final), as in Relay's passes.


def is_primitive(e) -> bool:
    return type(e) is Function and e.is_primitive


def rebuild(node, new_children):
    """``node`` with its children (in :func:`children` order) replaced; ``node`` itself when all
    are the same objects. The span is kept."""
    if _same(children(node), new_children):
        return node
    return _rebuild(node, new_children)


def _rebuild(node, c):
    """``node`` rebuilt from the new children ``c`` (at least one differs); the span is kept."""
    t = type(node)
    if t is Call:
        return Call(c[0], c[1:], node.attrs, node.type_args, node.span)
    if t is Tuple:
        return Tuple(c, node.span)
    if t is TupleGetItem:
        return TupleGetItem(c[0], node.index, node.span)
    if t is Let:
        return Let(c[0], c[1], c[2], node.span)
    if t is Function:
        n = len(node.params)
        return Function(c[:n], c[n], node.ret_type, node.type_params, node.attrs, node.span)
    if t is If:
        return If(c[0], c[1], c[2], node.span)
    if t is Match:
        clauses = [
            cl if rhs is cl.rhs else Clause(cl.lhs, rhs, cl.span)
            for cl, rhs in zip(node.clauses, c[1:])
        ]
        return Match(c[0], clauses, node.complete, node.span)
    if t is RefCreate:
        return RefCreate(c[0], node.span)
    if t is RefRead:
        return RefRead(c[0], node.span)
    if t is RefWrite:
        return RefWrite(c[0], c[1], node.span)
    raise TypeError(f"cannot rebuild {t.__name__}")


class Rewriter:
    """Bottom-up rewriting without recursion.

    Subclasses override :meth:`post` (or the per-kind ``post_call`` ...) which receive the original
    node and the node rebuilt from rewritten children, and return the replacement. ``memo`` maps
    each original node to its replacement.

    The walk does a small, constant amount of work per node: children are listed once, an
    unchanged node is detected by identity and kept without rebuilding, and only the hooks a
    subclass overrides are called (the base hooks return ``new`` unchanged).
    """

    enter_primitive = False
    has_let_hook = False  # set True in subclasses that define after_let_value

    def __init__(self):
        self.memo: dict = {}

    def _hooks(self) -> dict | None:
        """``type -> bound hook`` for the per-kind hooks this class overrides, or None when it
        overrides :meth:`post` itself (then every node goes through ``post``)."""
        cls = type(self)
        if cls.post is not Rewriter.post:
            return None
        table = _HOOK_TABLES.get(cls)
        if table is None:
            table = {t: name for t, name in _HOOKS.items()
                     if getattr(cls, name) is not getattr(Rewriter, name)}
            _HOOK_TABLES[cls] = table
        return {t: getattr(self, name) for t, name in table.items()}

    def rewrite(self, expr):
        memo = self.memo
        if expr in memo:
            return memo[expr]
        hooks = self._hooks()
        post = self.post
        enter_primitive = self.enter_primitive
        let_hook = self.has_let_hook
        is_ = operator.is_
        stack = [(expr, None)]
        pop, push = stack.pop, stack.append
        while stack:
            node, kids = pop()
            if kids is None:  # first visit
                if node in memo:
                    continue
                t = type(node)
                if t is Function and not enter_primitive and node.is_primitive:
                    memo[node] = post(node, node)  # a leaf
                    continue
                kids = children(node)
                if not kids:
                    if hooks is None:
                        memo[node] = post(node, node)
                    else:
                        h = hooks.get(t)
                        memo[node] = node if h is None else h(node, node)
                    continue
                push((node, kids))
                if t is Let and let_hook:
                    # var, value, <hook>, body: the hook may give the bound variable a
                    # replacement that the body then sees (how let-bound constants fold and GNF
                    # inlines)
                    if node.body not in memo:
                        push((node.body, None))
                    push((node, _LET_HOOK))
                    for c in (node.value, node.var):
                        if c not in memo:
                            push((c, None))
                    continue
                for c in reversed(kids):
                    if c not in memo:
                        push((c, None))
                continue
            if kids is _LET_HOOK:
                self.after_let_value(node, memo[node.value])
                continue
            if node in memo:
                continue
            t = type(node)
            if t is Let:
                # the binder stays a variable even when the hook replaced its uses
                binder = memo.get(node.var, node.var)
                if type(binder) is not Var:
                    binder = node.var
                new_kids = [binder, memo[node.value], memo[node.body]]
            else:
                new_kids = [memo[c] for c in kids]
            new = node if all(map(is_, new_kids, kids)) else _rebuild(node, new_kids)
            if hooks is None:
                memo[node] = post(node, new)
            else:
                h = hooks.get(t)
                memo[node] = new if h is None else h(node, new)
        return memo[expr]

    def after_let_value(self, let, new_value):
        """Called once the value of ``let`` is rewritten, before its body; may set
        ``self.memo[let.var]`` to what uses of the variable become."""

    def post(self, orig, new):
        hook = _HOOKS.get(type(orig))
        if hook is None:
            return new
        return getattr(self, hook)(orig, new)

    def post_call(self, orig, new):
        return new

    def post_tuple(self, orig, new):
        return new

    def post_tuple_getitem(self, orig, new):
        return new

    def post_let(self, orig, new):
        return new

    def post_function(self, orig, new):
        return new

    def post_if(self, orig, new):
        return new


_HOOK_TABLES: dict = {}

_LET_HOOK = object()

_HOOKS = {
    Call: "post_call",
    Tuple: "post_tuple",
    TupleGetItem: "post_tuple_getitem",
    Let: "post_let",
    Function: "post_function",
    If: "post_if",
}


def post_order_visit(expr, fvisit) -> None:
    """Call ``fvisit(node)`` on every sub-expression of ``expr`` once, children first
    (Relay's ``post_order_visit``). Iterative."""
    for node in post_order(expr):
        fvisit(node)


def map_pattern(p, var_fn):
    """Pattern ``p`` rebuilt with each bound variable ``v`` replaced by ``var_fn(v)``
    (constructor, tuple and wildcard patterns keep their shape)."""
    if isinstance(p, PatternVar):
        return PatternVar(var_fn(p.var), p.span)
    if isinstance(p, PatternConstructor):
        return PatternConstructor(p.constructor, [map_pattern(q, var_fn) for q in p.patterns],
                                  p.span)
    if hasattr(p, "patterns"):  # a tuple pattern
        return type(p)([map_pattern(q, var_fn) for q in p.patterns], p.span)
    return p


class Replace(Rewriter):
    """Every occurrence of a node of ``mapping`` (a variable, or any node, by identity) replaced
    by its value, without recursion; primitive functions are entered with
    ``enter_primitive``. Patterns are not rewritten (a ``Match`` keeps its clauses' ``lhs``)."""

    def __init__(self, mapping: dict, enter_primitive: bool = False):
        super().__init__()
        self.mapping = mapping
        self.enter_primitive = enter_primitive

    def post(self, orig, new):
        return self.mapping.get(orig, new)


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
    "rebuild",
    "Rewriter",
    "Replace",
    "map_pattern",
    "is_primitive",
    "PatternWildcard",
    "PatternVar",
    "PatternConstructor",
    "PatternTuple",
]

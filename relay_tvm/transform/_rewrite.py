"""Helpers shared by the passes: iterative post-order traversal and bottom-up rewriting.

Every pass here must handle 100,000-node programs, so nothing recurses over expression depth.
:class:`Rewriter` is the workhorse: it visits each node once (memoized by identity), rebuilds it
from its rewritten children (keeping its span, returning the same object when nothing changed),
then hands ``(original, rebuilt)`` to a per-kind hook that may return a replacement. Primitive
functions are not entered (they are kernels, already final), as in Relay's passes.
"""

from __future__ import annotations

import operator

from ..ir.adt import Clause, Match
from ..ir.expr import (
    Call,
    Function,
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
from ..ir.functor import post_order as _post_order
from ..op.registry import Op


def is_primitive(e) -> bool:
    return type(e) is Function and e.is_primitive


def post_order(expr, enter_primitive: bool = False) -> list:
    """Every sub-expression of ``expr`` once, children before parents (callee first, then
    arguments, as Relay's ``post_order_visit``). Primitive functions are leaves unless
    ``enter_primitive``."""
    if enter_primitive:
        return _post_order(expr)
    return _post_order(expr, lambda n: () if is_primitive(n) else children(n))


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


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


def op_name(call) -> str | None:
    """The operator name of ``call`` when it calls a registered operator, else ``None``."""
    if type(call) is Call and isinstance(call.op, Op):
        return call.op.name
    return None


def typed(mod_or_expr):
    """Run type inference on a module (returns the new module) or a bare expression."""
    from ..ir.module import IRModule
    from ..typing.infer import infer_expr, infer_module

    if isinstance(mod_or_expr, IRModule):
        return infer_module(mod_or_expr)
    return infer_expr(mod_or_expr)


def called_ops(func) -> frozenset:
    """Names of the operators called anywhere in ``func`` (inside primitive functions too).

    A pass that only rewrites calls of certain operators returns ``func`` as it is when none of
    them occurs; the answer is remembered per function object (functions are immutable), so the
    passes of one pipeline that leave a function unchanged share one walk over it.
    """
    hit = _CALLED_OPS.get(id(func))
    if hit is not None and hit[0] is func:
        return hit[1]
    names = frozenset(n.op.name for n in _post_order(func)
                      if type(n) is Call and isinstance(n.op, Op))
    remember(_CALLED_OPS, id(func), (func, names))  # holding func keeps its id from being reused
    return names


def remember(cache: dict, key, value, size: int = 8) -> None:
    """Put ``key: value`` in a small per-process cache of recent functions, dropping the oldest
    entry past ``size`` (a remembered function stays alive, constants and all, until dropped or
    :func:`forget_functions`)."""
    if len(cache) >= size:
        del cache[next(iter(cache))]
    cache[key] = value


def forget_functions() -> None:
    """Drop the functions the passes remember (``relay.build`` calls this when done)."""
    from .fold_constant import _FIXPOINTS

    _CALLED_OPS.clear()
    _FIXPOINTS.clear()


_CALLED_OPS: dict = {}


def has_type(e) -> bool:
    return getattr(e, "_checked_type", None) is not None


__all__ = ["post_order", "rebuild", "Rewriter", "op_name", "is_primitive", "typed", "has_type",
           "called_ops"]

"""Helpers shared by the passes: post-order traversal that leaves primitive functions alone,
operator names, typing, and the small caches of recent functions.

The traversal core (``children``, ``rebuild``, ``post_order``, :class:`Rewriter`) is in
:mod:`relay_tvm.ir.functor`; it is re-exported here for the passes.
"""

from __future__ import annotations

from ..ir.expr import Call, Function, Var
from ..ir.functor import (  # noqa: F401  (the core)
    ExprMutator,
    Rewriter,
    children,
    is_primitive,
    map_pattern,
    rebuild,
)
from ..ir.functor import post_order as _post_order
from ..op.registry import Op
from ..typing.solver import substitute_type_vars


def post_order(expr, enter_primitive: bool = False) -> list:
    """Every sub-expression of ``expr`` once, children before parents (callee first, then
    arguments, as Relay's ``post_order_visit``). Primitive functions are leaves unless
    ``enter_primitive``."""
    if enter_primitive:
        return _post_order(expr)
    return _post_order(expr, lambda n: () if is_primitive(n) else children(n))


def node_uses(expr) -> dict:
    """``node -> number of parent nodes that use it`` over ``expr`` (primitive functions not
    entered): a rewrite that folds a producer into its consumer checks the producer has one."""
    uses: dict = {}
    for n in post_order(expr):
        for c in children(n):
            uses[c] = uses.get(c, 0) + 1
    return uses


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


def type_of(e):
    """The type inference gave ``e``, or None where it has not run (no UntypedError)."""
    return getattr(e, "_checked_type", None)


class FreshCopy(ExprMutator):
    """A copy of an expression whose bound variables are fresh (so that the copy and the
    original can live in one module) and whose types have type variables substituted."""

    def __init__(self, bound, tmap):
        super().__init__()
        self.bound = bound
        self.tmap = tmap

    def ty(self, t):
        return None if t is None else substitute_type_vars(t, self.tmap)

    def visit_var(self, e):
        if e not in self.bound:
            return e
        return Var(e.name_hint, self.ty(e.type_annotation), e.span)

    def visit_call(self, e):
        new = super().visit_call(e)
        if not e.type_args or not self.tmap:
            return new
        return Call(new.op, new.args, new.attrs, [self.ty(t) for t in e.type_args], e.span)

    def visit_function(self, e):
        new = super().visit_function(e)
        ret = self.ty(e.ret_type)
        if new is e and ret is e.ret_type:
            return e
        return Function(new.params, new.body, ret, new.type_params, new.attrs, new.span)

    def visit_pattern(self, p):
        return map_pattern(p, self.visit)


def fresh_copy(expr, tmap=None):
    """A copy of ``expr`` with fresh bound variables and type variables replaced by ``tmap``
    (``TypeVar -> Type``) in its annotations, return types and type arguments."""
    from ..ir.free import bound_vars

    return FreshCopy(set(bound_vars(expr)), tmap or {}).visit(expr)


__all__ = ["post_order", "rebuild", "Rewriter", "op_name", "is_primitive", "typed", "has_type",
           "called_ops", "FreshCopy", "fresh_copy"]

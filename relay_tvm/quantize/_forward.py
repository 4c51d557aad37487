"""Forward rewriting with temporary expressions (Relay's ``ForwardRewrite`` and ``TempExpr``),
the engine of the partition, annotate and realize steps.

The body of a function is walked once in post-order (iteratively). For each operator call,
the rule registered under ``attr_key`` (``FQPartitionRewrite``, ``FQAnnotateRewrite``,
``FQRealizeRewrite``) gets ``(ref_call, new_args, ctx)``: the original call and its rewritten
arguments, some of which may be :class:`TempExpr` s carrying extra information (an annotation
kind, a scale). The rule returns the replacement (an expression or a TempExpr), or ``None``:
then the call is rebuilt on its arguments made real (:meth:`TempExpr.realize`). Every other
node (tuples excepted, which may hold TempExprs) sees real children, and so does the result.
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.base import RelayExpr
from ..ir.expr import Call, Function, Tuple
from ..ir.functor import children
from ..op.op_attrs import get_op_attr
from ..op.registry import Op
from ..transform._rewrite import post_order, rebuild


class TempExpr(RelayExpr):
    """An expression that exists only during a rewrite; :meth:`realize` gives the real one."""

    __slots__ = ()

    def realize(self):
        raise NotImplementedError


def realize_deep(e):
    """``e`` with every TempExpr (also inside tuples) replaced by its real expression."""
    if isinstance(e, TempExpr):
        return e.realize()
    if type(e) is Tuple and any(isinstance(f, (TempExpr, Tuple)) for f in e.fields):
        return Tuple([realize_deep(f) for f in e.fields], e.span)
    return e


def _ref_counts(body) -> dict:
    counts: dict = {}
    for n in post_order(body):
        for c in children(n):
            counts[c] = counts.get(c, 0) + 1
    return counts


def forward_rewrite(func: Function, attr_key: str, ctx=None, fmulti_ref=None) -> Function:
    """Rewrite the body of ``func`` forward with the rules registered under ``attr_key``.

    Args:
        func: a (typed) Relay function.
        attr_key: the operator attribute holding the rules, ``f(ref_call, new_args, ctx)``.
        ctx: passed to every rule.
        fmulti_ref: optional ``f(new_expr) -> expr`` applied to the rewritten value of an
            expression used more than once (annotation quantizes such values once).

    Returns:
        The function with the rewritten, realized body (parameters and attributes kept).

    Raises:
        RelayError: a rule returned something that is not an expression.
    """
    body = func.body
    counts = _ref_counts(body) if fmulti_ref is not None else None
    new: dict = {}

    def arg(e):
        v = new.get(e, e)
        if counts is not None and counts.get(e, 0) > 1 and isinstance(v, TempExpr):
            v = fmulti_ref(v)
            new[e] = v
        return v

    rules: dict = {}
    for e in post_order(body):
        t = type(e)
        if isinstance(e, Op):
            continue
        if t is Call and isinstance(e.op, Op):
            new_args = [arg(a) for a in e.args]
            rule = rules.get(e.op)
            if rule is None and e.op not in rules:
                rule = rules[e.op] = get_op_attr(e.op.name, attr_key)
            out = rule(e, new_args, ctx) if rule is not None else None
            if out is None:
                args = [realize_deep(a) for a in new_args]
                out = rebuild(e, [e.op, *args])
            elif not isinstance(out, RelayExpr):
                raise RelayError(f"{attr_key} rule of {e.op.name} returned "
                                 f"{type(out).__name__}, expected an expression")
            new[e] = out
        elif t is Tuple:
            new[e] = rebuild(e, [arg(f) for f in e.fields])
        else:
            cs = children(e)
            new[e] = rebuild(e, [c if isinstance(c, Op) else realize_deep(arg(c)) for c in cs])
    out_body = realize_deep(new.get(body, body))
    if out_body is body:
        return func
    return Function(func.params, out_body, None, func.type_params, func.attrs, func.span)

"""Pieces shared by the two automatic-differentiation modes of :func:`gradient`: walking the
tensor leaves of a type, the float test, calling an operator's gradient rule on a typed call.
"""

from __future__ import annotations

from ..errors import GradientError, RelayError
from ..ir.expr import Call, Tuple, TupleGetItem
from ..ir.functor import ExprMutator
from ..ir.types import FuncType, TensorType, TupleType, type_str


def is_float(t) -> bool:
    """Whether ``t`` is a floating-point tensor type (the values gradients flow through)."""
    return isinstance(t, TensorType) and str(t.dtype).startswith(("float", "bfloat"))


def leaf_paths(t, what: str) -> list:
    """``[(path, TensorType)]`` for every tensor inside the (nested) tuple type ``t``.

    Raises:
        GradientError: ``t`` holds something other than tensors and tuples (``what`` names it).
    """
    out, stack = [], [((), t)]
    while stack:
        path, ty = stack.pop()
        if isinstance(ty, TensorType):
            out.append((path, ty))
        elif isinstance(ty, TupleType):
            for i in reversed(range(len(ty.fields))):
                stack.append((path + (i,), ty.fields[i]))
        else:
            raise GradientError(
                f"gradient: {what} has type {type_str(t)}; expected a tensor or a (nested) tuple "
                f"of tensors"
            )
    return out


def project(e, path):
    """``e.i.j...`` along ``path``, reading fields of tuple literals directly."""
    for i in path:
        e = e.fields[i] if isinstance(e, Tuple) else TupleGetItem(e, i)
    return e


def build(t, leaf, path=()):
    """An expression of the tuple type ``t`` whose tensor at each path is ``leaf(path, type)``.
    Iterative over the nesting depth is not needed: types are shallow."""
    if isinstance(t, TensorType):
        return leaf(path, t)
    return Tuple([build(f, leaf, path + (i,)) for i, f in enumerate(t.fields)])


def check_params(func) -> list:
    """The parameters' types, each a tensor or a (nested) tuple of tensors. A non-float tensor
    parameter (a condition, a counter) gets a zero gradient, as in Relay: no gradient flows into
    integer or boolean values.

    Raises:
        GradientError: a parameter that is not a tensor or a tuple of tensors.
    """
    types = []
    for p in func.params:
        t = p.checked_type
        leaf_paths(t, f"parameter %{p.name_hint}")
        types.append(t)
    return types


class _ReplaceNode(ExprMutator):
    def __init__(self, node, by):
        super().__init__()
        self.node, self.by = node, by

    def visit(self, expr):
        if expr is self.node:
            return self.by
        return super().visit(expr)


def apply_rule(op, orig: Call, out_grad, result):
    """The argument gradients of ``orig`` (a typed call of ``op`` on variables) for the output
    gradient ``out_grad``; rules that mention ``orig`` (softmax, exp, ...) read ``result``, the
    variable holding its value, instead of recomputing it.

    Raises:
        GradientError: ``op`` has no gradient rule, or its rule rejects these attributes.
    """
    rule = op.gradient
    if rule is None:
        raise GradientError(
            f"gradient: operator {op.name} has no gradient rule (it is not differentiable, or its "
            f"rule is not written); it is applied to floating-point data here: "
            f"{type_str(orig.checked_type)}"
        )
    try:
        grads = rule(orig, out_grad)
    except NotImplementedError as err:
        raise GradientError(f"gradient: operator {op.name}: {err}") from err
    except GradientError:
        raise
    except RelayError as err:
        raise GradientError(f"gradient: operator {op.name}: {err}") from err
    grads = list(grads)
    if len(grads) != len(orig.args):
        raise GradientError(
            f"gradient: the rule of {op.name} gave {len(grads)} gradients for {len(orig.args)} "
            f"arguments"
        )
    rep = _ReplaceNode(orig, result)
    return [rep.visit(g) for g in grads]


def typed_call(op, args, arg_types, call) -> Call:
    """``op(args)`` with ``call``'s attributes, its checked type and the arguments' types set, as
    gradient rules expect."""
    for a, t in zip(args, arg_types):
        if getattr(a, "_checked_type", None) is None:
            a._set_checked_type(t)
    new = Call(op, args, call.attrs, call.type_args, call.span)
    new._set_checked_type(call.checked_type)
    return new


def result_type(func_type: FuncType, param_types) -> TupleType:
    """``(t, (dx1, ..., dxn))``: the type of the differentiated function's result."""
    return TupleType([func_type.ret_type, TupleType(list(param_types))])


def infer(expr, mod=None):
    """``infer_expr(expr, mod)``, type-checking ``mod`` only when ``expr`` mentions one of its
    globals or constructors (re-checking a whole module for a self-contained function costs
    more than the function)."""
    from ..ir.adt import Constructor, Match
    from ..ir.expr import GlobalVar
    from ..ir.functor import post_order
    from ..typing.infer import infer_expr

    if mod is not None and not any(isinstance(e, (GlobalVar, Constructor, Match))
                                   for e in post_order(expr)):
        mod = None
    return infer_expr(expr, mod)


__all__ = ["is_float", "leaf_paths", "project", "build", "check_params", "apply_rule",
           "typed_call", "result_type", "infer"]

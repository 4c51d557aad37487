"""First-order reverse-mode AD (``gradient(..., mode="first_order")``): for a dataflow function it
emits the forward computation as a chain of ``let`` s, then the backward sweep in reverse
evaluation order, summing each value's adjoints; no closures or references, so the graph executor
compiles the result. Relay's ``FirstOrderGradient`` (src/relay/transforms/first_order_gradient.cc)
is the model; the walk here is iterative.
"""

from __future__ import annotations

from ..errors import GradientError
from ..ir.expr import Call, Constant, Function, Let, Tuple, TupleGetItem, Var
from ..ir.functor import dataflow_children, post_order
from ..ir.types import TensorType, TupleType
from ._ad_common import apply_rule, build, check_params, is_float, leaf_paths, project, typed_call


def _kind(e) -> str:
    return type(e).__name__


def first_order_gradient(func: Function, seed=None) -> Function:
    """``fn(x1..xn) -> t`` to ``fn(x1..xn) -> (t, (dx1..dxn))`` for a typed dataflow function
    (operator calls, tuples, tuple fields, ``let``, variables, constants). The output gradient
    seed is one for every tensor of ``t`` (the gradient of the sum of the outputs), or
    ``seed(path, forward_leaf)`` (a vector-Jacobian product: how gradient rules written by
    decomposition use it).

    Raises:
        GradientError: the body holds ``if``, closures, references, ``match`` or calls of
            non-operators (use ``mode="higher_order"``), or an operator without a rule.
    """
    from ..op.tensor import ones_like, zeros_like

    param_types = check_params(func)
    out_type = func.body.checked_type
    leaf_paths(out_type, "the function's result")
    sweep = _Sweep(func)
    sweep.forward()
    fwd = sweep.fwd
    root = sweep.canon(func.body)
    for path, ty in leaf_paths(out_type, "the function's result"):
        leaf = project(fwd[root], path)
        sweep.add_adj(root, path, ones_like(leaf) if seed is None else seed(path, leaf), ty)
    sweep.backward()
    grads = []
    for p, pt in zip(func.params, param_types):
        def leaf(path, ty, p=p):
            g = sweep.take(p, path, ty)
            return g if g is not None else zeros_like(project(p, path))

        grads.append(build(pt, leaf))
    body = Tuple([fwd[root], Tuple(grads)])
    for v, value in reversed(sweep.binds):
        body = Let(v, value, body)
    return Function(func.params, body, None, func.type_params, func.attrs, func.span)


class _Sweep:
    """The forward chain of ``let`` s and the adjoints of one function's backward sweep."""

    def __init__(self, func: Function):
        from ..op.registry import get

        self.func = func
        self.params = set(func.params)
        self.order = post_order(func.body, kids=dataflow_children)
        self.let_of = _check_dataflow(self.order)
        self.binds = []  # (var, value) in evaluation order
        self.fwd = {}
        self.calls = []
        # adjoints: (canonical node, path to a tensor leaf) -> contributions
        self.adj = {}
        self.add_op = get("add")

    def canon(self, e):
        let_of = self.let_of
        while True:
            if type(e) is Let:
                e = e.body
            elif type(e) is Var and e in let_of:
                e = let_of[e].value
            else:
                return e

    def bind(self, name, value, ty):
        v = Var(name, ty)
        v._set_checked_type(ty)
        self.binds.append((v, value))
        return v

    def forward(self) -> None:
        """The forward computation: each operator call bound to a variable, in order."""
        fwd, canon = self.fwd, self.canon
        for e in self.order:
            t = type(e)
            if t is Var:
                if e in self.params:
                    fwd[e] = e
                elif e not in self.let_of:
                    raise GradientError(f"gradient: free variable %{e.name_hint}", e.span)
            elif t is Constant:
                fwd[e] = e
            elif t is Let:
                continue
            elif t is Tuple:
                fwd[e] = Tuple([fwd[canon(f)] for f in e.fields], e.span)
            elif t is TupleGetItem:
                fwd[e] = project(fwd[canon(e.tuple_value)], (e.index,))
            else:  # operator call
                args = [fwd[canon(a)] for a in e.args]
                orig = typed_call(e.op, args, [a.checked_type for a in e.args], e)
                fwd[e] = self.bind(f"v{len(self.binds)}", orig, e.checked_type)
                self.calls.append((e, orig))

    def add_adj(self, node, path, g, ty):
        if is_float(ty):
            self.adj.setdefault((self.canon(node), path), []).append(g)

    def take(self, node, path, ty):
        """The summed adjoint of a leaf, bound to a variable; None when no gradient reaches it."""
        gs = self.adj.pop((node, path), None)
        if not gs:
            return None
        s = gs[0]
        for g in gs[1:]:
            s = Call(self.add_op, [s, g])
        if len(gs) == 1 and isinstance(s, Var):
            return s
        return self.bind(f"g{len(self.binds)}", s, ty)

    def backward(self) -> None:
        """The backward sweep in reverse evaluation order."""
        from ..op.tensor import zeros_like

        orig_of = dict(self.calls)
        take, add_adj = self.take, self.add_adj
        for e in reversed(self.order):
            t = type(e)
            if t is Tuple:
                for path, ty in leaf_paths(e.checked_type, "a tuple"):
                    g = take(e, path, ty)
                    if g is not None:
                        add_adj(e.fields[path[0]], path[1:], g, ty)
            elif t is TupleGetItem:
                for path, ty in leaf_paths(e.checked_type, "a tuple field"):
                    g = take(e, path, ty)
                    if g is not None:
                        add_adj(e.tuple_value, (e.index,) + path, g, ty)
            elif t is Call:
                _backward_call(e, self.fwd[e], orig_of[e], take, add_adj, self.bind, zeros_like)


def _check_dataflow(order) -> dict:
    """Reject what first-order AD cannot differentiate; returns ``let`` variable -> its let."""
    from ..op.registry import Op

    let_of = {}
    for e in order:
        t = type(e)
        if t is Let:
            let_of[e.var] = e
        elif t is Call:
            if not isinstance(e.op, Op):
                raise GradientError(
                    f"gradient(mode='first_order') differentiates dataflow programs of operator "
                    f"calls; found a call of a {_kind(e.op)} (use mode='higher_order')", e.span
                )
        elif t not in (Var, Constant, Tuple, TupleGetItem):
            raise GradientError(
                f"gradient(mode='first_order') differentiates dataflow programs; found "
                f"{_kind(e)} (use mode='higher_order', or PartialEvaluate first)", e.span
            )
    return let_of


def _backward_call(e, result, orig, take, add_adj, bind, zeros_like):
    out_t = e.checked_type
    leaves = leaf_paths(out_t, f"the result of {e.op.name}")
    got = {path: take(e, path, ty) for path, ty in leaves}
    if all(g is None for g in got.values()):
        return
    if not any(is_float(ty) for _, ty in leaves):
        return
    if isinstance(out_t, TensorType):
        g = got[()]
    else:
        g = build(out_t, lambda path, ty: got[path] if got[path] is not None
                  else zeros_like(project(result, path)))
    float_args = [i for i, a in enumerate(e.args)
                  if any(is_float(ty) for _, ty in _leaves_or_empty(a.checked_type))]
    if not float_args:
        return
    grads = apply_rule(e.op, orig, g, result)
    for i in float_args:
        a = e.args[i]
        at = a.checked_type
        gi = grads[i]
        if isinstance(at, TupleType) and not isinstance(gi, (Tuple, Var)):
            gi = bind(f"t{i}", gi, at)
        for path, ty in leaf_paths(at, f"argument {i} of {e.op.name}"):
            add_adj(a, path, project(gi, path), ty)


def _leaves_or_empty(t):
    if isinstance(t, (TensorType, TupleType)):
        return leaf_paths(t, "an argument")
    return []


__all__ = ["first_order_gradient"]

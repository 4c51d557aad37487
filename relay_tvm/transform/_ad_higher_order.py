"""Higher-order reverse-mode AD (``gradient(..., mode="higher_order")``), the method of the Relay
paper (Roesch et al., section 4.2 "Automatic Differentiation"): every tensor ``x`` becomes a pair
``(x, ref(dx))``; each operator call pushes a backpropagator closure onto a reference ``bp`` that
holds the rest of the backward pass; the transformed program runs forward, seeds the output
gradients with ones, then calls ``!bp()``. Because backpropagators are ordinary closures and
gradients live in references, the transformation covers the whole language: ``let``, ``if``,
closures, recursion (local and global), references, tuples and ADTs whose fields are type
parameters (``List[Tensor]`` becomes ``List[(Tensor, Ref[Tensor])]``).

Types are mapped by ``T``: ``Tensor -> (Tensor, Ref[Tensor])``, structurally through tuples,
functions, references and type calls. A global function ``@f`` becomes ``@f_grad(bp, ...)``
added to the module; ``@f`` used as a value becomes a closure over the caller's ``bp``.
"""

from __future__ import annotations

from ..errors import GradientError
from ..ir.adt import Clause, Constructor, Match
from ..ir.expr import (
    Call,
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
from ..ir.functor import ExprFunctor
from ..ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
    type_str,
)
from ._ad_common import apply_rule, build, check_params, is_float, leaf_paths, project, typed_call
from ._rewrite import map_pattern

UNIT = TupleType([])


def _peel(binds, e):
    """Append the bindings of the let chain ``e`` to ``binds``; its final body. Keeps the
    transformed program's let chains flat (nesting them makes every scope analysis deep)."""
    while type(e) is Let:
        binds.append((e.var, e.value))
        e = e.body
    return e


def _wrap(binds, body):
    for var, value in reversed(binds):
        body = Let(var, value, body)
    return body
BP_TYPE = RefType(FuncType([], UNIT))


def _has_float(t) -> bool:
    if isinstance(t, (TensorType, TupleType)):
        return any(is_float(ty) for _, ty in leaf_paths(t, "a value"))
    return False


class _Ctx:
    """What the transformation of one program shares: the module, the ``@f -> @f_grad`` map and
    the globals still to transform."""

    def __init__(self, mod):
        self.mod = mod
        self.globals = {}
        self.todo = []
        self.checked_adts = set()

    def lift(self, t):
        """``T(t)``: the type of a value of type ``t`` after the transformation."""
        if isinstance(t, TensorType):
            return TupleType([t, RefType(t)])
        if isinstance(t, TupleType):
            return TupleType([self.lift(f) for f in t.fields])
        if isinstance(t, FuncType):
            return FuncType([self.lift(a) for a in t.arg_types], self.lift(t.ret_type),
                            t.type_params, t.type_constraints)
        if isinstance(t, RefType):
            return RefType(self.lift(t.value))
        if isinstance(t, TypeCall):
            self._check_adt(t.func)
            return TypeCall(t.func, [self.lift(a) for a in t.args])
        if isinstance(t, (TypeVar, GlobalTypeVar, IncompleteType)):
            return t
        raise GradientError(f"gradient(mode='higher_order'): cannot differentiate through a "
                            f"value of type {type_str(t)}")

    def _check_adt(self, gtv):
        """ADT fields must reach tensors only through the type's parameters."""
        if gtv in self.checked_adts or self.mod is None:
            return
        self.checked_adts.add(gtv)
        data = self.mod.type_definitions.get(gtv)
        if data is None:
            return
        for c in data.constructors:
            stack = list(c.inputs)
            while stack:
                t = stack.pop()
                if isinstance(t, TensorType):
                    raise GradientError(
                        f"gradient(mode='higher_order'): constructor {c.name_hint} of "
                        f"{gtv.name_hint} holds a tensor field {type_str(t)}; only ADTs whose "
                        f"tensors come through type parameters (List[Tensor], Option[...]) are "
                        f"supported")
                if isinstance(t, TupleType):
                    stack.extend(t.fields)
                elif isinstance(t, FuncType):
                    stack.extend(t.arg_types)
                    stack.append(t.ret_type)
                elif isinstance(t, RefType):
                    stack.append(t.value)
                elif isinstance(t, TypeCall):
                    stack.extend(t.args)

    def global_grad(self, gv) -> GlobalVar:
        new = self.globals.get(gv)
        if new is None:
            if self.mod is None or gv not in self.mod:
                raise GradientError(f"gradient: @{gv.name_hint} is called but no module holding "
                                    f"it was given (pass mod=)")
            names = {g.name_hint for g in self.mod.get_global_vars()}
            name = f"{gv.name_hint}_grad"
            while name in names:
                name += "_"
            new = GlobalVar(name)
            self.globals[gv] = new
            self.todo.append(gv)
        return new


class _Reverse(ExprFunctor):
    """``[[e]]`` for the body of one function, given the backpropagator reference ``bp``."""

    def __init__(self, ctx: _Ctx, bp: Var):
        super().__init__()
        self.ctx, self.bp = ctx, bp

    _children_first = True

    def fresh(self, name, t):
        return Var(name, t)

    def visit_var(self, e):
        return Var(e.name_hint, self.ctx.lift(e.checked_type), e.span)

    def visit_global_var(self, e):
        ft = self.ctx.mod[e].checked_type
        params = [Var(f"p{i}", self.ctx.lift(t)) for i, t in enumerate(ft.arg_types)]
        g = self.ctx.global_grad(e)
        return Function(params, Call(g, [self.bp, *params]))

    def visit_constant(self, e):
        from ..op.tensor import zeros_like

        return Tuple([e, RefCreate(zeros_like(e))])

    def visit_op(self, e):
        return e

    def visit_constructor(self, e):
        return e

    def visit_tuple(self, e):
        return Tuple([self.visit(f) for f in e.fields], e.span)

    def visit_tuple_getitem(self, e):
        return TupleGetItem(self.visit(e.tuple_value), e.index, e.span)

    def visit_let(self, e):
        binds = []
        value = _peel(binds, self.visit(e.value))
        binds.append((self.visit(e.var), value))
        return _wrap(binds, self.visit(e.body))

    def visit_if(self, e):
        return If(TupleGetItem(self.visit(e.cond), 0), self.visit(e.true_branch),
                  self.visit(e.false_branch), e.span)

    def visit_function(self, e):
        if e.is_primitive:
            raise GradientError("gradient: cannot differentiate a fused primitive function "
                                "(differentiate before FuseOps)", e.span)
        ret = None
        if e.ret_type is not None and not isinstance(e.ret_type, IncompleteType):
            ret = self.ctx.lift(e.ret_type)
        return Function([self.visit(p) for p in e.params], self.visit(e.body), ret,
                        e.type_params, None, e.span)

    def visit_ref_create(self, e):
        return RefCreate(self.visit(e.value), e.span)

    def visit_ref_read(self, e):
        return RefRead(self.visit(e.ref), e.span)

    def visit_ref_write(self, e):
        return RefWrite(self.visit(e.ref), self.visit(e.value), e.span)

    def visit_match(self, e):
        clauses = [Clause(self._pattern(c.lhs), self.visit(c.rhs), c.span) for c in e.clauses]
        return Match(self.visit(e.data), clauses, e.complete, e.span)

    def _pattern(self, p):
        return map_pattern(p, self.visit)

    def visit_call(self, e):
        from ..op.registry import Op

        op = e.op
        args = [self.visit(a) for a in e.args]
        if isinstance(op, Op):
            return self._op_call(e, args)
        if isinstance(op, GlobalVar):
            return Call(self.ctx.global_grad(op), [self.bp, *args], None, (), e.span)
        if isinstance(op, Constructor):
            return Call(op, args, None, (), e.span)
        return Call(self.visit(op), args, None, (), e.span)

    def _op_call(self, e, args):
        from ..op.registry import get
        from ..op.tensor import zeros_like

        binds = []

        def let(name, value, t=None):
            v = Var(name, t)
            binds.append((v, _peel(binds, value)))
            return v

        arg_types = [a.checked_type for a in e.args]
        for t in arg_types:
            if not isinstance(t, (TensorType, TupleType)):
                raise GradientError(f"gradient: operator {e.op.name} takes a {type_str(t)}",
                                    e.span)
        pairs = [let(f"a{i}", a, self.ctx.lift(t)) for i, (a, t) in
                 enumerate(zip(args, arg_types))]
        xs = [let(f"x{i}", build(t, lambda path, ty, p=p: project(project(p, path), (0,))), t)
              for i, (p, t) in enumerate(zip(pairs, arg_types))]
        orig = typed_call(e.op, xs, arg_types, e)
        out_t = e.checked_type
        v = let("v", orig, out_t)
        out = let("o", build(out_t, lambda path, ty: Tuple(
            [project(v, path), RefCreate(zeros_like(project(v, path)))])), self.ctx.lift(out_t))
        float_args = [i for i, t in enumerate(arg_types) if _has_float(t)]
        if float_args and _has_float(out_t):
            # the output's gradient and each argument's reference let-bound: every value is
            # a let of its own, no node used twice (0.19's backpropagators were in A-normal
            # form: detect_feature finds no fGraph in them)
            g = Var("grad_out", out_t)
            steps = [(g, build(out_t, lambda path, ty: RefRead(project(project(out, path),
                                                                       (1,)))))]
            grads = apply_rule(e.op, orig, g, v)
            add = get("add")
            for i in float_args:
                gi = Var(f"g{i}", arg_types[i])
                steps.append((gi, grads[i]))
                for path, ty in leaf_paths(arg_types[i], f"argument {i} of {e.op.name}"):
                    if is_float(ty):
                        r = Var("r")
                        steps.append((r, project(project(pairs[i], path), (1,))))
                        steps.append((Var("_"), RefWrite(r, Call(add, [RefRead(r),
                                                                       project(gi, path)]))))
            old = let("old", RefRead(self.bp), FuncType([], UNIT))
            body = Call(old, [])
            for var, value in reversed(steps):
                body = Let(var, value, body)
            let("_", RefWrite(self.bp, Function([], body, UNIT)))
        return _wrap(binds, out)


def _seed_and_run(res, out_t, bp):
    """Set every float output's gradient to ones, run the backpropagators: a list of lets."""
    from ..op.tensor import ones_like

    steps = []
    for path, ty in leaf_paths(out_t, "the function's result"):
        if is_float(ty):
            leaf = project(res, path)
            steps.append((Var("_"), RefWrite(TupleGetItem(leaf, 1),
                                             ones_like(TupleGetItem(leaf, 0)))))
    steps.append((Var("_"), Call(RefRead(bp), [])))
    return steps


def higher_order_gradient(func: Function, mod=None) -> Function:
    """The paper's reverse-mode AD of the typed function ``func`` (globals it calls come from
    ``mod``, which receives their transformed ``@name_grad`` versions).

    Returns:
        ``fn(x1..xn) -> (t, (dx1..dxn))``, untyped (run InferType).

    Raises:
        GradientError: see :func:`relay_tvm.transform.gradient`.
    """
    from ..op.tensor import zeros_like

    func = _anf(func, mod)
    param_types = check_params(func)
    out_t = func.body.checked_type
    leaf_paths(out_t, "the function's result")
    ctx = _Ctx(mod)
    bp = Var("bp", BP_TYPE)
    rev = _Reverse(ctx, bp)
    binds = [(bp, RefCreate(Function([], Tuple([]), UNIT)))]
    for p, t in zip(func.params, param_types):
        lifted = build(t, lambda path, ty, p=p: Tuple([project(p, path),
                                                      RefCreate(zeros_like(project(p, path)))]))
        pv = Var(p.name_hint + "_ad", ctx.lift(t))
        rev.memo_map[p] = pv
        binds.append((pv, lifted))
    res = Var("res", ctx.lift(out_t))
    binds.append((res, _peel(binds, rev.visit(func.body))))
    binds.extend(_seed_and_run(res, out_t, bp))
    fwd = build(out_t, lambda path, ty: TupleGetItem(project(res, path), 0))
    grads = Tuple([build(t, lambda path, ty, p=p: RefRead(TupleGetItem(project(
        rev.memo_map[p], path), 1))) for p, t in zip(func.params, param_types)])
    body = Tuple([fwd, grads])
    for var, value in reversed(binds):
        body = Let(var, value, body)
    _transform_globals(ctx)
    return Function(func.params, body, None, func.type_params, None, func.span)


def _anf(func, mod):
    """``func`` in A-normal form, typed: every shared value is let-bound once, so each
    transformed operator call (and its backpropagator) is emitted once."""
    from ._ad_common import infer
    from .normal_forms import to_normal_form

    return infer(to_normal_form(func, "anf"), mod)


def _transform_globals(ctx: _Ctx):
    while ctx.todo:
        gv = ctx.todo.pop()
        f = _anf(ctx.mod[gv], ctx.mod)
        bp = Var("bp", BP_TYPE)
        rev = _Reverse(ctx, bp)
        params = [rev.visit(p) for p in f.params]
        body = rev.visit(f.body)
        ret = ctx.lift(f.checked_type.ret_type)  # annotated: polymorphic recursion needs it
        ctx.mod[ctx.globals[gv]] = Function([bp, *params], body, ret, f.type_params, None,
                                            f.span)


__all__ = ["higher_order_gradient"]

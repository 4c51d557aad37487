"""PartialEvaluate: online partial evaluation with static values
(tvm.relay.transform.PartialEvaluate; Relay's src/relay/transforms/partial_eval.cc is the model,
the code here is its own).

The function is first put in A-normal form; then each ``let`` is evaluated in order. A value is a
pair (static part, residual expression): static parts are known tensors (NumPy arrays), tuples,
closures (a ``Function`` and the environment it captured), references (a cell holding a value)
and ADT values. Operator calls on known tensors are computed with the operator's NumPy reference
kernel; ``if`` / ``match`` on known data take their branch; calls of known closures and globals
are inlined; reference reads and writes on a known cell update the cell instead of the program.
Everything else is emitted, in order, as residual ``let`` s.

Termination on recursive programs: a call of a function already being inlined is inlined again
only while no dynamic ``if``/``match`` has been entered since its outermost inlining (so
unrolling follows static control only) and at most ``MAX_UNROLL`` deep; otherwise the call is
left in the program and the function is emitted once as a residual (recursive) closure. A
closure made again while it is being emitted (recursion through a function that returns it, the
shape LambdaLift gives a local recursive closure) is a call of the one being emitted when it
captured the same values; with other captured values it is emitted once more with no call
inlined, so its calls of the function that makes it stay calls (0.19 likewise residualizes a
recursive call whose arguments are not static). Before
a dynamic branch, every reference still known is written out (``ref(value)``) so the branches
see real cells; each branch still starts knowing their contents (writes are emitted and tracked,
as Relay's versioned store does), and after the branch, or a call of unknown code, nothing is
known about a real cell until it is written again. Tail calls (the backpropagator chains of ``gradient``) are inlined in a loop,
not by recursion.
"""

from __future__ import annotations

import sys

import numpy as np

from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar
from ..ir.expr import (
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
from ..ir.types import FuncType, IncompleteType, RefType, TupleType, TypeCall, TypeVar
from .pass_infra import FunctionPass, PassInfo

MAX_UNROLL = 64


class _Env:
    __slots__ = ("vals", "parent")

    def __init__(self, parent=None):
        self.vals, self.parent = {}, parent

    def get(self, v):
        e = self
        while e is not None:
            pv = e.vals.get(v)
            if pv is not None:
                return pv
            e = e.parent
        return None


class _PV:
    """A partially known value: ``kind`` in tensor/tuple/closure/ref/adt/None (unknown), the
    static payload, and the residual expression (made on demand for closures, refs, tuples)."""

    __slots__ = ("kind", "data", "dyn", "scope")

    def __init__(self, kind, data, dyn=None):
        self.kind, self.data, self.dyn, self.scope = kind, data, dyn, None


def _mono(t, bound=frozenset()):
    """``t``, or None when it mentions type variables other than ``bound`` (the type parameters
    of the function being evaluated, in scope everywhere): code inlined from a polymorphic
    function would carry the callee's type variables, so inference fills those annotations in."""
    stack = [t]
    while stack:
        u = stack.pop()
        if isinstance(u, TypeVar) and u in bound:
            continue
        if isinstance(u, (TypeVar, IncompleteType)):
            return None
        if isinstance(u, TupleType):
            stack.extend(u.fields)
        elif isinstance(u, FuncType):
            if u.type_params:
                return None
            stack.extend(u.arg_types)
            stack.append(u.ret_type)
        elif isinstance(u, RefType):
            stack.append(u.value)
        elif isinstance(u, TypeCall):
            stack.extend(u.args)
    return t


def _ty(v, bound=frozenset()):
    return _mono(v.checked_type, bound)


def _dyn(e):
    return _PV(None, None, e)


UNIT = _PV("tuple", [], Tuple([]))


def _same(a, b):
    """Surely the same value: one object, or the same residual variable."""
    if a is b:
        return True
    return (a is not None and b is not None and a.kind is None and b.kind is None
            and a.dyn is b.dyn)


class _Closure:
    __slots__ = ("func", "env", "gv")

    def __init__(self, func, env, gv=None):
        self.func, self.env, self.gv = func, env, gv


class _Cell:
    __slots__ = ("value", "live", "known")

    def __init__(self, value):
        # live: not yet in the residual program (only the evaluator holds it);
        # known: ``value`` is its current content (also after it became a real ``ref``)
        self.value, self.live, self.known = value, True, True


class PartialEvaluator:
    """Partially evaluates one (type-checked, A-normal) function of ``mod``."""

    def __init__(self, mod):
        self.mod = mod
        self.lists = []  # stack of residual let lists: [(var, value)]
        self.cells = []  # every cell created, live or real
        self.active = {}  # Function node -> [depth, dynamic-branch count at outermost entry]
        self.dyn_branches = 0
        self.entered = []  # functions being inlined, innermost last
        self.bound = frozenset()  # type parameters of the function evaluated
        self.reifying = {}  # Function -> [(captured values, var, scope)] being emitted
        self.no_inline = 0  # > 0 inside a closure emitted again with other captured values
        self._free = {}  # Function -> its free variables

    # ---- residual code ---------------------------------------------------------------------
    def emit(self, name, value, ty):
        v = Var(name, None if ty is None else _mono(ty, self.bound))
        self.lists[-1].append((v, value))
        return v

    def block(self, fn):
        """Run ``fn()`` (returning a _PV) into a fresh let list; the residual expression."""
        self.lists.append([])
        try:
            body = self.reify(fn())
        finally:
            binds = self.lists.pop()
        for v, value in reversed(binds):
            body = Let(v, value, body)
        return body

    def reify(self, pv):
        if pv.dyn is not None and (pv.scope is None or any(pv.scope is s for s in self.lists)):
            return pv.dyn
        k = pv.kind
        if k == "tuple":
            return Tuple([self.reify(f) for f in pv.data])
        if k == "adt":
            ctor, fields = pv.data
            return Call(ctor, [self.reify(f) for f in fields])
        if k == "tensor":
            pv.dyn = Constant(pv.data)
            return pv.dyn
        if k == "ref":
            cell = pv.data
            self.materialize(cell, pv)
            return pv.dyn
        if k == "closure":
            return self.reify_closure(pv)
        raise AssertionError("unknown value without a residual")

    def materialize(self, cell, pv):
        if not cell.live:
            return
        cell.live = False
        pv.dyn = self.emit("r", RefCreate(self.reify(cell.value)), None)
        pv.scope = self.lists[-1]

    def materialize_all(self):
        for pv in list(self.cells):
            self.materialize(pv.data, pv)

    def store(self) -> list:
        """What is known of every cell (to restore after a branch or a closure body)."""
        return [(pv.data, pv.data.known, pv.data.value) for pv in self.cells]

    def restore(self, saved) -> None:
        n = len(saved)
        for cell, known, value in saved:
            cell.known, cell.value = known, value
        for pv in self.cells[n:]:  # created meanwhile, unreachable now
            pv.data.known = False
        del self.cells[n:]

    def forget(self) -> None:
        """Unknown code may have written every real cell (a dynamic call, after a branch)."""
        for pv in self.cells:
            if not pv.data.live:
                pv.data.known = False

    def reify_closure(self, pv):
        c = pv.data
        if c.gv is not None:
            return c.gv
        f = c.func
        if f.is_primitive:
            return f
        captured = self.captured(f, c.env)
        outer = self.reifying.get(f)
        for seen, v, scope in outer or ():
            if all(_same(a, b) for a, b in zip(seen, captured)):
                # the closure being emitted made again (recursion through a function that
                # returns it, as LambdaLift's output does): call the one being emitted
                pv.dyn, pv.scope = v, scope
                return v
        self.materialize_all()  # the closure may run at any time: its cells must be real
        var = Var("f", _mono(f.checked_type, self.bound))
        pv.dyn, pv.scope = var, self.lists[-1]
        self.reifying.setdefault(f, []).append((captured, var, pv.scope))
        # the same function captured other values: unfolding its body again could go on
        # forever (each round makes new values); emit this copy with no calls inlined
        fresh = outer is not None
        params = [Var(p.name_hint, _ty(p, self.bound)) for p in f.params]
        env = _Env(c.env)
        for p, q in zip(f.params, params):
            env.vals[p] = _dyn(q)
        saved, store = self.dyn_branches, self.store()
        self.dyn_branches += 1  # the body runs under unknown control, on an unknown store
        self.no_inline += int(fresh)
        self.forget()
        try:
            body = self.block(lambda: self.eval_body(f.body, env))
        finally:
            self.dyn_branches = saved
            self.no_inline -= int(fresh)
            self.restore(store)
            entries = self.reifying[f]
            entries.pop()
            if not entries:
                del self.reifying[f]
        ret = None if f.ret_type is None or f.type_params else _mono(f.ret_type, self.bound)
        self.lists[-1].append((var, Function(params, body, ret, f.type_params, f.attrs, f.span)))
        return var

    # ---- evaluation ------------------------------------------------------------------------
    def eval_body(self, e, env):
        """A let chain, iteratively; a tail call of a known closure continues the loop."""
        entered = 0
        try:
            while True:
                if type(e) is Let:
                    if e.body is e.var and type(e.value) is Call:
                        e = e.value  # `let v = f(..); v` (A-normal form): a tail call
                        continue
                    pv = self.eval(e.value, env, e.var)
                    env.vals[e.var] = pv
                    e = e.body
                    continue
                if type(e) is Call and not self._is_op_or_ctor(e.op):
                    fpv = self.atom(e.op, env)
                    target = self.inline_target(e, env, fpv)
                    if target is None:
                        return self.eval_call(e, env, "v", fpv)
                    e, env = target
                    entered += 1
                    continue
                return self.eval(e, env, None)
        finally:
            for _ in range(entered):
                self.leave(self.entered.pop())

    @staticmethod
    def _is_op_or_ctor(op):
        from ..op.registry import Op

        return isinstance(op, (Op, Constructor))

    def inline_target(self, call, env, fpv):
        """``(body, env)`` to evaluate when ``call`` inlines a known closure (the caller then
        calls ``leave``); None otherwise."""
        if fpv.kind != "closure":
            return None
        c = fpv.data
        f = c.func
        if f.is_primitive or not self.may_inline(f):
            return None
        args = [self.atom(a, env) for a in call.args]
        new = _Env(c.env)
        for p, a in zip(f.params, args):
            new.vals[p] = a
        self.enter(f)
        self.entered.append(f)
        return f.body, new

    def captured(self, f, env):
        """The values ``f``'s free variables have in ``env`` (None where unbound)."""
        fv = self._free.get(f)
        if fv is None:
            from ..ir.free import free_vars

            fv = self._free[f] = free_vars(f)
        return [env.get(v) for v in fv]

    def may_inline(self, f):
        if self.no_inline:
            return False
        st = self.active.get(f)
        return st is None or (st[0] < MAX_UNROLL and st[1] == self.dyn_branches)

    def enter(self, f):
        st = self.active.get(f)
        if st is None:
            self.active[f] = [1, self.dyn_branches]
        else:
            st[0] += 1

    def leave(self, f):
        st = self.active[f]
        st[0] -= 1
        if st[0] == 0:
            del self.active[f]

    def atom(self, e, env):
        t = type(e)
        if t is Var:
            pv = env.get(e)
            return pv if pv is not None else _dyn(e)
        if t is Constant:
            return _PV("tensor", np.asarray(e.data), e)
        if t is GlobalVar:
            f = self.mod[e] if self.mod is not None and e in self.mod else None
            return _PV("closure", _Closure(f, _Env(), e), e) if f is not None else _dyn(e)
        if t is Function:
            if e.is_primitive:
                return _dyn(e)
            return _PV("closure", _Closure(e, env))
        return self.eval(e, env, None)

    def eval(self, e, env, bound):
        t = type(e)
        name = bound.name_hint if bound is not None else "v"
        if t in (Var, Constant, GlobalVar):
            return self.atom(e, env)
        if t is Function:
            pv = self.atom(e, env)
            if bound is not None and pv.kind == "closure":
                env.vals[bound] = pv  # local recursion sees itself
            return pv
        if t is Tuple:
            return _PV("tuple", [self.atom(f, env) for f in e.fields])
        if t is TupleGetItem:
            tv = self.atom(e.tuple_value, env)
            if tv.kind == "tuple":
                return tv.data[e.index]
            return _dyn(self.emit(name, TupleGetItem(self.reify(tv), e.index), e.checked_type))
        if t is Call:
            return self.eval_op_call(e, env, name)
        if t is If:
            c = self.atom(e.cond, env)
            if c.kind == "tensor":
                return self.eval_body(e.true_branch if bool(np.asarray(c.data).reshape(-1)[0])
                                      else e.false_branch, _Env(env))
            self.materialize_all()
            self.dyn_branches += 1
            store = self.store()  # each branch starts from what is known before the if
            try:
                tb = self.block(lambda: self.eval_body(e.true_branch, _Env(env)))
                self.restore(store)
                fb = self.block(lambda: self.eval_body(e.false_branch, _Env(env)))
            finally:
                self.dyn_branches -= 1
                self.restore(store)
            self.forget()  # either branch may have written: nothing is known after the if
            return _dyn(self.emit(name, If(self.reify(c), tb, fb), e.checked_type))
        if t is Match:
            return self.eval_match(e, env, name)
        if t is RefCreate:
            pv = _PV("ref", _Cell(self.atom(e.value, env)))
            self.cells.append(pv)
            return pv
        if t is RefRead:
            r = self.atom(e.ref, env)
            if r.kind == "ref" and r.data.known:
                return r.data.value
            return _dyn(self.emit(name, RefRead(self.reify(r)), e.checked_type))
        if t is RefWrite:
            r, v = self.atom(e.ref, env), self.atom(e.value, env)
            if r.kind == "ref" and r.data.live:
                r.data.value = v
            else:
                self.emit("_", RefWrite(self.reify(r), self.reify(v)), None)
                if r.kind == "ref":  # a real cell: its content is known again
                    r.data.value, r.data.known = v, True
            return UNIT
        if isinstance(e, Constructor):
            return _dyn(e)
        return _dyn(e)  # Op used as a value

    def eval_op_call(self, e, env, name):
        from ..op.registry import Op

        op = e.op
        if isinstance(op, Op):
            args = [self.atom(a, env) for a in e.args]
            folded = self.fold(e, args)
            if folded is not None:
                return folded
            return _dyn(self.emit(name, Call(op, [self.reify(a) for a in args], e.attrs,
                                             e.type_args, e.span), e.checked_type))
        if isinstance(op, Constructor):
            return _PV("adt", (op, [self.atom(a, env) for a in e.args]))
        return self.eval_call(e, env, name, self.atom(op, env))

    def eval_call(self, e, env, name, fpv):
        """A call of a function value ``fpv``: inlined, or emitted."""
        target = self.inline_target(e, env, fpv)
        if target is not None:
            body, new = target
            try:
                return self.eval_body(body, new)
            finally:
                self.leave(self.entered.pop())
        args = [self.atom(a, env) for a in e.args]
        callee = self.reify(fpv)
        rargs = [self.reify(a) for a in args]
        self.materialize_all()  # an unknown function may read or write any cell it can reach
        out = _dyn(self.emit(name, Call(callee, rargs, e.attrs, e.type_args, e.span),
                             e.checked_type))
        self.forget()
        return out

    def fold(self, call, args):
        op = call.op
        if op.ref_impl is None or not all(self._known(a) for a in args):
            return None
        vals = [self._np(a) for a in args]
        out_t = call.checked_type
        try:
            res = op.ref_impl(vals, call.attrs, out_t)
        except Exception:  # noqa: BLE001 - an error at run time stays a run-time error
            return None
        if isinstance(res, (tuple, list)):
            return _PV("tuple", [_PV("tensor", np.asarray(r, dtype=t.dtype))
                                 for r, t in zip(res, out_t.fields)])
        return _PV("tensor", np.asarray(res, dtype=out_t.dtype))

    def _known(self, pv):
        if pv.kind == "tensor":
            return True
        return pv.kind == "tuple" and all(self._known(f) for f in pv.data)

    def _np(self, pv):
        if pv.kind == "tensor":
            return np.asarray(pv.data)
        return tuple(self._np(f) for f in pv.data)

    def eval_match(self, e, env, name):
        data = self.atom(e.data, env)
        for clause in e.clauses:
            binds = {}
            res = self.match_static(clause.lhs, data, binds)
            if res is None:
                break  # not decidable statically
            if res:
                new = _Env(env)
                new.vals.update(binds)
                return self.eval_body(clause.rhs, new)
        else:
            return self.eval_body(e.clauses[-1].rhs, _Env(env))  # unreachable when complete
        self.materialize_all()
        rdata = self.reify(data)
        clauses = []
        self.dyn_branches += 1
        store = self.store()
        try:
            for clause in e.clauses:
                new = _Env(env)
                lhs = self.fresh_pattern(clause.lhs, new)
                clauses.append(Clause(lhs, self.block(lambda c=clause, n=new:
                                                      self.eval_body(c.rhs, n)), clause.span))
                self.restore(store)
        finally:
            self.dyn_branches -= 1
            self.restore(store)
        self.forget()
        return _dyn(self.emit(name, Match(rdata, clauses, e.complete, e.span), e.checked_type))

    def match_static(self, p, pv, binds):
        """True / False when ``p`` surely matches / fails on ``pv``; None when unknown."""
        if isinstance(p, PatternVar):
            binds[p.var] = pv
            return True
        if isinstance(p, PatternConstructor):
            if pv.kind != "adt":
                return None
            ctor, fields = pv.data
            if ctor is not p.constructor:
                return False
            return self._all(p.patterns, fields, binds)
        if isinstance(p, PatternTuple):
            if pv.kind != "tuple":
                return None
            return self._all(p.patterns, pv.data, binds)
        return True  # wildcard

    def _all(self, pats, fields, binds):
        result = True
        for q, f in zip(pats, fields):
            r = self.match_static(q, f, binds)
            if r is False:
                return False
            if r is None:
                result = None
        return result

    def fresh_pattern(self, p, env):
        if isinstance(p, PatternVar):
            v = Var(p.var.name_hint, _ty(p.var, self.bound))
            env.vals[p.var] = _dyn(v)
            return PatternVar(v, p.span)
        if isinstance(p, PatternConstructor):
            return PatternConstructor(p.constructor, [self.fresh_pattern(q, env)
                                                      for q in p.patterns], p.span)
        if isinstance(p, PatternTuple):
            return PatternTuple([self.fresh_pattern(q, env) for q in p.patterns], p.span)
        return p

    def run(self, func: Function) -> Function:
        self.bound = frozenset(func.type_params)
        env = _Env()
        for p in func.params:
            env.vals[p] = _dyn(p)
        body = self.block(lambda: self.eval_body(func.body, env))
        return Function(func.params, body, func.ret_type, func.type_params, func.attrs,
                        func.span)


def partial_evaluate(func: Function, mod=None) -> Function:
    """Partially evaluate the typed function ``func`` (globals looked up in ``mod``)."""
    from ._ad_common import infer
    from .normal_forms import to_normal_form

    anf = infer(to_normal_form(func, "anf"), mod)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))  # nesting of non-tail inlined calls
    try:
        return PartialEvaluator(mod).run(anf)
    finally:
        sys.setrecursionlimit(limit)


def PartialEvaluate():  # noqa: N802 - Relay's name
    """Evaluate the static fragment of every function (opt level 2); see the module docstring.
    Follow it with ``DeadCodeElimination`` to drop the bindings it left unused."""

    def run(func, mod, ctx):
        return partial_evaluate(func, mod)

    return FunctionPass(run, PassInfo(2, "PartialEvaluate"))


__all__ = ["PartialEvaluate", "partial_evaluate", "MAX_UNROLL"]

"""Continuation-passing style: ``to_cps`` and ``un_cps`` (tvm.relay 0.19's
``relay.transform.to_cps`` / ``un_cps`` and the ``ToCPS`` / ``UnCPS`` passes, to_cps.cc).

``to_cps`` turns every function ``a -> b`` into ``(a, b -> answer) -> answer``, ``answer`` a
fresh type parameter of the converted function: instead of returning, a function calls its
continuation ``k`` with the result, so every call becomes a tail call and control flow is
explicit. A join point is reified once: ``let y = if c {e1} else {e2}; rest`` becomes
``let j = fn (y) {rest}; if c {e1 then j} else {e2 then j}``, so ``rest`` is not duplicated (and
PartialEvaluate can specialise it per branch). Globals the function calls are converted too, as
``<name>_cps`` added to the module. Function types inside other types (a parameter of type
``fn (t) -> t``, a reference to a function) are converted the same way.

``un_cps`` wraps a converted function back into the original interface: it passes the identity
continuation and instantiates ``answer`` with the result type.

The ``ToCPS`` pass converts every Relay function of a module together, in place: ``@g`` becomes
its CPS form and calls of ``@g`` in converted bodies pass continuations, so the module stays
well-typed without ``<name>_cps`` copies (0.19 added a copy per conversion under a name the
module no longer held). ``UnCPS`` gives every CPS function its interface back; one that module
code still calls in CPS keeps its CPS form under a fresh ``<name>_cps``.

The program is first put in A-normal form, so the conversion walks ``let`` chains with a loop
and recurses only into nested scopes (function bodies, branches). Data types holding functions
are not converted (as in 0.19).
"""

from __future__ import annotations

from ..errors import RelayError
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
from ..ir.functor import Rewriter, TypeMutator, post_order
from ..ir.module import IRModule
from ..ir.types import FuncType, TypeVar
from ..op.registry import Op
from .pass_infra import ModulePass, PassInfo


class _CPSType(TypeMutator):
    def __init__(self, answer):
        super().__init__()
        self.answer = answer

    def visit_func_type(self, t):
        args = [self.visit(a) for a in t.arg_types]
        k = FuncType([self.visit(t.ret_type)], self.answer)
        return FuncType(args + [k], self.answer, t.type_params, t.type_constraints, t.span)


def cps_type(t, answer: TypeVar):
    """The type of a value of type ``t`` after conversion (function types gain a continuation
    parameter ``ret -> answer`` and return ``answer``)."""
    return _CPSType(answer).visit(t)


def _ty(v: Var):
    t = getattr(v, "_checked_type", None)
    return t if t is not None else v.type_annotation


def _is_direct(callee) -> bool:
    """Calls of operators and constructors stay direct calls."""
    return isinstance(callee, (Op, Constructor))


class _Converter:
    def __init__(self, mod: IRModule):
        self.mod = mod
        self.globals: dict = {}

    # ---- whole functions ---------------------------------------------------------------------
    def top(self, func: Function) -> Function:
        from ..typing.infer import infer_expr
        from .normal_forms import to_normal_form

        if not isinstance(func, Function):
            raise RelayError(f"to_cps expects a relay.Function, got {type(func).__name__}")
        anf = to_normal_form(func, "anf")
        infer_expr(anf, self.mod)
        answer = TypeVar("answer")
        self.answer, self.conv = answer, _CPSType(answer)
        self.vm = {}
        for n in post_order(anf):
            if type(n) is Var:
                self._new_var(n)
            elif type(n) is Match:
                for c in n.clauses:
                    for v in _pattern_vars(c.lhs):
                        self._new_var(v)
        out = self.function(anf)
        return Function(out.params, out.body, out.ret_type, (*out.type_params, answer),
                        out.attrs, out.span)

    def _new_var(self, v):
        if v not in self.vm:
            t = _ty(v)
            self.vm[v] = Var(v.name_hint, None if t is None else self.conv.visit(t), v.span)

    def function(self, f: Function) -> Function:
        if f.attrs is not None and int(dict(f.attrs.items()).get("Primitive", 0) or 0):
            raise RelayError("to_cps: primitive (fused) functions are not supported; run it "
                             "before FuseOps")
        ret = f.checked_type.ret_type
        k = Var("k", FuncType([self.conv.visit(ret)], self.answer))
        body = self.body(f.body, k)
        return Function([self.vm[p] for p in f.params] + [k], body, self.answer, f.type_params,
                        f.attrs, f.span)

    # ---- A-normal-form bodies -----------------------------------------------------------------
    def body(self, e, k):
        """``e`` (a let chain) converted to pass its value to continuation ``k``."""
        frames = []
        while type(e) is Let:
            x, v = self.vm[e.var], e.value
            if type(v) in (If, Match):
                j = Var(f"{e.var.name_hint}_k", FuncType([x.type_annotation], self.answer)
                        if x.type_annotation is not None else None)
                frames.append(("join", j, x, self.branch(v, j)))
            elif type(v) is Call and not _is_direct(v.op):
                frames.append(("call", self.atom(v.op), [self.atom(a) for a in v.args], x))
            else:
                frames.append(("let", x, self.value(v), e.span))
            e = e.body
        out = self.tail(e, k)
        for fr in reversed(frames):
            if fr[0] == "join":
                _, j, x, branching = fr
                out = Let(j, Function([x], out, self.answer), branching)
            elif fr[0] == "call":
                _, f, args, x = fr
                out = Call(f, args + [Function([x], out, self.answer)])
            else:
                _, x, val, span = fr
                out = Let(x, val, out, span)
        return out

    def tail(self, e, k):
        if type(e) in (If, Match):
            return self.branch(e, k)
        if type(e) is Call and not _is_direct(e.op):
            return Call(self.atom(e.op), [self.atom(a) for a in e.args] + [k])
        return Call(k, [self.value(e)])

    def branch(self, e, k):
        if type(e) is If:
            return If(self.atom(e.cond), self.body(e.true_branch, k),
                      self.body(e.false_branch, k), e.span)
        clauses = [Clause(self.pattern(c.lhs), self.body(c.rhs, k)) for c in e.clauses]
        return Match(self.atom(e.data), clauses, e.complete, e.span)

    def pattern(self, p):
        if isinstance(p, PatternVar):
            return PatternVar(self.vm[p.var], p.span)
        if isinstance(p, PatternConstructor):
            return PatternConstructor(p.constructor, [self.pattern(q) for q in p.patterns], p.span)
        if isinstance(p, PatternTuple):
            return PatternTuple([self.pattern(q) for q in p.patterns], p.span)
        return p

    # ---- values -------------------------------------------------------------------------------
    def atom(self, e):
        t = type(e)
        if t is Var:
            return self.vm.get(e, e)
        if t is GlobalVar:
            return self.global_var(e)
        if t is Function:
            return self.function(e)
        if t is Constant or isinstance(e, Op):
            return e
        if t is Constructor:
            raise RelayError(f"to_cps: constructor {e.name_hint} used as a value (not called) "
                             f"is not supported")
        raise RelayError(f"to_cps: unexpected {t.__name__} where A-normal form has an atom")

    def value(self, e):
        t = type(e)
        if t is Call:
            return Call(e.op, [self.atom(a) for a in e.args], e.attrs, e.type_args, e.span)
        if t is Tuple:
            return Tuple([self.atom(f) for f in e.fields], e.span)
        if t is TupleGetItem:
            return TupleGetItem(self.atom(e.tuple_value), e.index, e.span)
        if t is RefCreate:
            return RefCreate(self.atom(e.value), e.span)
        if t is RefRead:
            return RefRead(self.atom(e.ref), e.span)
        if t is RefWrite:
            return RefWrite(self.atom(e.ref), self.atom(e.value), e.span)
        return self.atom(e)

    def global_var(self, gv):
        hit = self.globals.get(gv)
        if hit is not None:
            return hit
        try:
            func = self.mod[gv]
        except (RelayError, KeyError):
            return gv  # not a Relay function of this module: left as it is (as 0.19)
        if not isinstance(func, Function):
            return gv
        cps_gv = GlobalVar(gv.name_hint + "_cps")
        self.globals[gv] = cps_gv
        saved = self.answer, self.conv, self.vm
        try:
            self.mod[cps_gv] = self.top(func)
        finally:
            self.answer, self.conv, self.vm = saved
        return cps_gv


def _pattern_vars(p):
    from ..ir.adt import pattern_vars

    return pattern_vars(p)


def to_cps(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` in continuation-passing style (see the module docstring).

    Args:
        func: a function; it is type-checked (in ``mod``) first.
        mod: the module defining the globals ``func`` calls; their converted versions
            (``<name>_cps``) are added to it.

    Returns:
        A function with one more parameter, the continuation ``k: fn (ret') -> answer``, and one
        more type parameter, ``answer``; it returns ``answer``.

    Raises:
        RelayError: ``func`` is not a function, or contains a primitive (fused) function.
        TypeInferenceError: ``func`` does not type-check.
    """
    return _Converter(mod if mod is not None else IRModule()).top(func)


def un_cps(func: Function) -> Function:
    """A function with ``func``'s original interface that runs the CPS function ``func`` (the
    result of :func:`to_cps`) with the identity continuation.

    Only the types of ``func``'s parameters are needed: their checked types where ``func`` was
    type-checked, else their annotations (every parameter of a :func:`to_cps` result has one,
    so ``un_cps(to_cps(f))`` needs no InferType between the two, which 0.19 did), else ``func``
    is type-checked here.

    Raises:
        RelayError: ``func`` does not have a continuation parameter and an answer type
            parameter.
        UntypedError: a parameter has neither a checked type nor an annotation and ``func``
            does not type-check on its own (it calls globals of a module): the message names
            the parameter and says to run InferType on the module first.
    """
    return _un_cps(func, func)


def _param_types(func: Function) -> list:
    """The types of ``func``'s parameters: checked, else annotated, else inferred here."""
    from ..errors import UntypedError

    def known(p):
        return getattr(p, "_checked_type", None) or p.type_annotation

    untyped = [p for p in func.params if known(p) is None]
    if untyped:
        from ..typing.infer import infer_expr

        try:
            infer_expr(func)
        except RelayError as err:
            names = ", ".join(f"%{p.name_hint}" for p in untyped)
            raise UntypedError(
                f"un_cps: parameter{'s' if len(untyped) > 1 else ''} {names} of the CPS "
                f"function (of {len(func.params)} parameters) ha{'ve' if len(untyped) > 1 else 's'}"
                f" no type annotation and no checked type, and the function does not "
                f"type-check on its own ({type(err).__name__}: {str(err).splitlines()[0]}); "
                f"run relay.transform.InferType() on the module holding it first") from None
    return [known(p) for p in func.params]


def _un_cps(func: Function, callee) -> Function:
    """``un_cps(func)``, calling ``callee`` (``func`` itself, or the global now holding it)."""
    if not isinstance(func, Function) or not func.params or not func.type_params:
        raise RelayError("un_cps expects a function produced by to_cps (a continuation "
                         "parameter and an answer type parameter)")
    from ..typing.solver import substitute_type_vars

    types = _param_types(func)
    cont_t = types[-1]
    if not isinstance(cont_t, FuncType) or len(cont_t.arg_types) != 1:
        raise RelayError(f"un_cps: the last parameter {func.params[-1].name_hint} is not a "
                         f"continuation (a function of one argument)")
    # the wrapper binds its own type parameters (as 0.19): reusing ``func``'s would bind them
    # twice when ``func`` (a literal) is called inside the wrapper; ``answer`` is the result
    # type (a parameter of a function type, still in CPS, answers with it too)
    fresh = {tp: TypeVar(tp.name_hint) for tp in func.type_params[:-1]}
    ret = substitute_type_vars(cont_t.arg_types[0], fresh)
    fresh[func.type_params[-1]] = ret
    params = [Var(p.name_hint, substitute_type_vars(t, fresh), p.span)
              for p, t in zip(func.params[:-1], types)]
    x = Var("x", ret)
    body = Call(callee, [*params, Function([x], x, ret)])
    return Function(params, body, ret, list(fresh.values())[:-1], None, func.span)


def _module_functions(mod):
    """The Relay functions of ``mod`` a whole-module conversion handles (not primitive ones)."""
    return {gv: f for gv, f in mod.functions.items()
            if isinstance(f, Function) and not f.is_primitive}


def _to_cps_module(mod, ctx):
    """Every Relay function of ``mod`` replaced by its CPS form (as 0.19's pass replaced each
    function by ``ToCPS(f, mod)``). The functions are converted together, in place: a call of
    ``@g`` in a converted body calls the converted ``@g`` (with a continuation), so no
    ``<name>_cps`` copies are added and the module stays well-typed; the input module is not
    changed."""
    funcs = _module_functions(mod)
    conv = _Converter(mod)
    conv.globals = {gv: gv for gv in funcs}
    out = mod.copy()
    for gv, f in funcs.items():
        out[gv] = conv.top(f)
    return out


def _is_cps(f) -> bool:
    """Whether ``f`` (type-checked) has the shape of a :func:`to_cps` result: a last parameter
    ``fn (ret) -> answer`` and ``answer`` its last type parameter, also its return type."""
    if not f.params or not f.type_params:
        return False
    k = getattr(f.params[-1], "_checked_type", None) or f.params[-1].type_annotation
    answer = f.type_params[-1]
    return (isinstance(k, FuncType) and len(k.arg_types) == 1 and k.ret_type == answer
            and (f.ret_type is None or f.ret_type == answer))


class _RenameGlobals(Rewriter):
    def __init__(self, names: dict):
        super().__init__()
        self.names = names

    def post(self, orig, new):
        if type(orig) is GlobalVar:
            return self.names.get(orig.name_hint, new)
        return new


def _un_cps_module(mod, ctx):
    """:func:`un_cps` on every CPS function of ``mod`` (one with a continuation parameter and an
    ``answer`` type parameter; the others are left as they are). A CPS function that module
    code calls through its global (as ``ToCPS`` leaves the module) keeps its CPS form under a
    fresh ``<name>_cps`` global, which those calls are redirected to, and its own name gets the
    original interface, calling it."""
    funcs = _module_functions(mod)
    cps = {gv: f for gv, f in funcs.items() if _is_cps(f)}
    called = set()
    for f in funcs.values():
        for n in post_order(f):
            if type(n) is GlobalVar:
                called.add(n.name_hint)
    taken = {gv.name_hint for gv in mod.get_global_vars()}
    renamed = {}
    for gv in cps:
        if gv.name_hint in called:
            name, i = gv.name_hint + "_cps", 1
            while name in taken:
                name, i = f"{gv.name_hint}_cps{i}", i + 1
            taken.add(name)
            renamed[gv.name_hint] = GlobalVar(name)
    out = mod.copy()
    if renamed:
        rename = _RenameGlobals(renamed)
        for gv, f in funcs.items():
            out[gv] = rename.rewrite(f)
    for gv in cps:
        f = out[gv]  # with the calls redirected
        cps_gv = renamed.get(gv.name_hint)
        if cps_gv is None:
            out[gv] = un_cps(f)
        else:
            out[cps_gv] = f
            out[gv] = _un_cps(f, cps_gv)
    return out


def ToCPS():  # noqa: N802 - Relay's name
    """Every Relay function of the module in continuation-passing style (opt level 1): each
    gains the continuation parameter and ``answer`` type parameter of :func:`to_cps`, and the
    calls between them pass continuations. Run :func:`UnCPS` (or :func:`un_cps` on one function)
    for functions with the original interfaces again."""
    return ModulePass(_to_cps_module, PassInfo(1, "ToCPS", ("InferType",)))


def UnCPS():  # noqa: N802 - Relay's name
    """:func:`un_cps` on every CPS function of the module (opt level 1); a CPS function called
    through its global stays, as ``<name>_cps``, for those calls (see ``_un_cps_module``)."""
    return ModulePass(_un_cps_module, PassInfo(1, "UnCPS", ("InferType",)))


__all__ = ["ToCPS", "UnCPS", "cps_type", "to_cps", "un_cps"]

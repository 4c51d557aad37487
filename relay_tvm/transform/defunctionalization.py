"""Defunctionalization: a higher-order Relay program rewritten as a first-order one
(``relay.transform.Defunctionalization``; Relay 0.19's ``defunctionalization.cc``, after
Reynolds, "Definitional interpreters for higher-order programming languages", 1972).

Every function type ``fn(T..) -> R`` that is passed as an argument gets an algebraic data type
``DefuncK`` with one constructor per function value passed where that type is expected, and a
global ``@apply_defuncK(%f: DefuncK, %y..: T..) -> R`` that matches on the constructor and runs
the function it stands for:

- a global function ``@g`` (or an ADT constructor) becomes a constructor without fields;
- a function literal ``fn (%x) { ... %v ... }`` becomes a constructor whose fields are its free
  variables, and its body, with the fields bound by the pattern, becomes a clause of ``apply``;
- a function-typed parameter is typed ``DefuncK`` instead, and a call of it becomes a call of
  ``@apply_defuncK``.

Each global function called with function arguments is cloned per instantiation of its type
parameters (``@map`` at ``A=B=float32`` becomes ``@map_defunc0``, monomorphic and first order).
Immediate applications of function literals are beta-reduced first (function-valued arguments
substituted, the others let-bound).

Not supported, each refused with a :class:`~relay_tvm.errors.RelayError` naming the expression:
functions returning functions, functions stored in tuples, references or ADT values, let-bound
function values, function arguments whose type is itself higher order, and an entry function
that is polymorphic or takes or returns functions (all types must be known, as in 0.19).
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternVar, TypeData
from ..ir.expr import Call, Function, GlobalVar, Let, Var
from ..ir.free import free_vars
from ..ir.functor import substitute
from ..ir.module import IRModule
from ..ir.types import FuncType, GlobalTypeVar, TypeCall, mentions_func_type, type_str
from ..op.registry import Op
from ..typing.infer import infer_expr, infer_module
from ..typing.solver import substitute_type_vars
from ._rewrite import Rewriter, fresh_copy, post_order

# Cloning a polymorphic function per instantiation does not terminate on polymorphic recursion
# (each clone asks for a bigger instantiation); this bounds it.
_MAX_SPECIALIZATIONS = 1000


def _is_higher_order(ft: FuncType) -> bool:
    return any(mentions_func_type(a) for a in ft.arg_types) or mentions_func_type(ft.ret_type)


def _var_type(v: Var):
    return v.type_annotation if v.type_annotation is not None else getattr(v, "_checked_type",
                                                                             None)


def _show(e) -> str:
    text = e.astext() if hasattr(e, "astext") else str(e)
    text = text.split("\n", 1)[-1] if text.startswith("#[version") else text
    return text if len(text) <= 300 else text[:300] + " ..."


def _refuse(what: str, expr, where: str) -> RelayError:
    return RelayError(f"Defunctionalization: {what}\n  in {where}\n  {_show(expr)}")


class _Beta(Rewriter):
    """``(fn (%p..) { body })(a..)``: function-valued arguments (variables, globals,
    constructors, function literals, all values without effects) are substituted for their
    parameters, the other arguments are let-bound, in order."""

    def post_call(self, orig, new):
        f = new.op
        if type(f) is not Function or f.is_primitive:
            return new
        binds, lets = {}, []
        for p, a in zip(f.params, new.args):
            if isinstance(a, (Var, GlobalVar, Constructor)) or (
                    type(a) is Function and not a.is_primitive):
                binds[p] = a
            elif f.type_params:
                # the annotation may mention the literal's own type parameters
                nv = Var(p.name_hint, None, p.span)
                binds[p] = nv
                lets.append((nv, a))
            else:
                lets.append((p, a))
        body = substitute(f.body, binds) if binds else f.body
        for p, a in reversed(lets):
            body = Let(p, a, body, orig.span)
        return body


def _beta_reduce(func):
    for _ in range(10000):
        new = _Beta().rewrite(func)
        if new is func:
            return func
        func = new
    raise _refuse("beta-reducing immediate applications of function literals does not "
                  "terminate", func, "the program")


def _using_function_values(mod) -> set:
    """The globals of ``mod`` whose bodies use function values (function literals, globals or
    constructors passed as arguments, calls of higher-order globals), directly or through the
    globals they call."""
    direct, callers = set(), {}
    for gv, f in mod.functions.items():
        if f.is_primitive:
            continue
        for n in post_order(f.body):
            if type(n) is Function and not n.is_primitive:
                direct.add(gv)
            elif type(n) is Call:
                if any(isinstance(a, (GlobalVar, Constructor, Function)) for a in n.args):
                    direct.add(gv)
                if type(n.op) is GlobalVar and n.op in mod:
                    callers.setdefault(n.op, set()).add(gv)
                    t = getattr(mod[n.op], "_checked_type", None)
                    if t is None or _is_higher_order(t):
                        direct.add(gv)
    out, stack = set(direct), list(direct)
    while stack:
        for caller in callers.get(stack.pop(), ()):
            if caller not in out:
                out.add(caller)
                stack.append(caller)
    return out


class _Encoding:
    """The ADT, constructors and ``apply`` function that stand for one function type."""

    def __init__(self, ft: FuncType, name: str, apply_name: str):
        self.ft = ft
        self.gtv = GlobalTypeVar(name)
        self.apply = GlobalVar(apply_name)
        self.ys = [Var(f"y{i}", t) for i, t in enumerate(ft.arg_types)]
        self.constructors: list = []
        self.clauses: list = []


class _Defunc:
    def __init__(self, mod: IRModule):
        self.mod = mod
        self.orig = infer_module(mod)  # the program as given: what clones are typed against
        self.encodings: dict = {}  # FuncType -> _Encoding
        self.by_gtv: dict = {}  # GlobalTypeVar -> _Encoding
        self.specialized: dict = {}  # (GlobalVar, type args) -> GlobalVar
        self.leaf_ctor: dict = {}  # (GlobalVar or Constructor, _Encoding) -> Constructor
        self.in_place: set = set()  # first-order monomorphic globals rewritten where they are
        self.work: list = []  # (GlobalVar, source GlobalVar, function to rewrite) still to do
        self.needing = None  # globals that use function values, found when first asked
        self.names = {gv.name_hint for gv in mod.get_global_vars()} | {
            g.name_hint for g in mod.get_global_type_vars()}

    # ---- names and encodings ------------------------------------------------------------------
    def fresh_name(self, base: str) -> str:
        k = 0
        while f"{base}{k}" in self.names:
            k += 1
        self.names.add(f"{base}{k}")
        return f"{base}{k}"

    def encoding(self, ft: FuncType, expr, where) -> _Encoding:
        enc = self.encodings.get(ft)
        if enc is None:
            if ft.type_params:
                raise _refuse(f"a polymorphic function type {type_str(ft)} is expected here; "
                              "function arguments must have monomorphic types", expr, where)
            if _is_higher_order(ft):
                raise _refuse(f"a function of higher-order type {type_str(ft)} is passed as an "
                              "argument; only first-order functions can be passed", expr, where)
            name = self.fresh_name("Defunc")
            enc = _Encoding(ft, name, self.fresh_name("apply_defunc"))
            self.encodings[ft] = enc
            self.by_gtv[enc.gtv] = enc
        return enc

    def new_constructor(self, enc: _Encoding, hint: str, inputs) -> Constructor:
        c = Constructor(f"{enc.gtv.name_hint}_{hint}", list(inputs), enc.gtv)
        enc.constructors.append(c)
        return c

    # ---- encoding function values -------------------------------------------------------------
    def encode(self, arg, ft, where):
        """The first-order value standing for function ``arg`` of type ``ft``."""
        if not isinstance(ft, FuncType):
            raise _refuse(f"an argument of type {type_str(ft)} holds functions inside a "
                          "tuple, reference or ADT; only plain function arguments are "
                          "supported", arg, where)
        enc = self.encoding(ft, arg, where)
        if type(arg) is Var:
            t = arg.type_annotation
            if isinstance(t, TypeCall) and self.by_gtv.get(t.func) is enc:
                return arg  # a parameter already standing for a function of this type
            raise _refuse(f"the function variable %{arg.name_hint} is passed on, but only "
                          "parameters of function type can be (let-bound or pattern-bound "
                          "function values are not supported)", arg, where)
        if isinstance(arg, (GlobalVar, Constructor)):
            c = self.leaf_ctor.get((arg, enc))
            if c is None:
                c = self.leaf_ctor[(arg, enc)] = self.new_constructor(enc, arg.name_hint, [])
                enc.clauses.append(Clause(PatternConstructor(c, []), Call(arg, enc.ys)))
            return Call(c, [])
        if type(arg) is Function and not arg.is_primitive:
            captured = free_vars(arg)
            fields, fresh = [], {}
            for v in captured:
                t = _var_type(v)
                if t is None:
                    raise _refuse(f"the type of %{v.name_hint}, captured by a function "
                                  "argument, is not known; run InferType first", arg, where)
                if mentions_func_type(t) and not (isinstance(t, TypeCall) and t.func in self.by_gtv):
                    raise _refuse(f"the function argument captures %{v.name_hint} of type "
                                  f"{type_str(t)}, a function value that is not a parameter",
                                  arg, where)
                fields.append(t)
                fresh[v] = Var(v.name_hint, t, v.span)
            c = self.new_constructor(enc, f"fn{len(enc.constructors)}", fields)
            if arg.type_params:
                rhs = Call(substitute(Function(arg.params, arg.body, arg.ret_type,
                                               arg.type_params, arg.attrs, arg.span), fresh),
                           enc.ys)
            else:
                fresh.update(zip(arg.params, enc.ys))
                rhs = substitute(arg.body, fresh)
            enc.clauses.append(Clause(PatternConstructor(c, [PatternVar(fresh[v])
                                                             for v in captured]), rhs))
            return Call(c, captured, span=arg.span)
        raise _refuse("a function argument must be a parameter, a global function, a "
                      "constructor or a function literal; computed function values are not "
                      "supported", arg, where)

    # ---- calls of globals ---------------------------------------------------------------------
    def global_type(self, gv: GlobalVar, where) -> FuncType:
        if gv not in self.orig:
            raise _refuse(f"@{gv.name_hint} is not a function of the module", gv, where)
        t = getattr(self.orig[gv], "_checked_type", None)
        if not isinstance(t, FuncType):
            raise _refuse(f"@{gv.name_hint} has no inferred type; run InferType first", gv,
                          where)
        return t

    def call_global(self, orig: Call, new: Call, where):
        gv = orig.op
        fty = self.global_type(gv, where)
        type_args = tuple(orig.type_args)
        if len(type_args) != len(fty.type_params):
            raise _refuse(f"the call of @{gv.name_hint} has {len(type_args)} type arguments, "
                          f"its type {type_str(fty)} has {len(fty.type_params)} type "
                          "parameters; run InferType first", orig, where)
        tmap = dict(zip(fty.type_params, type_args))
        inst = FuncType([substitute_type_vars(a, tmap) for a in fty.arg_types],
                        substitute_type_vars(fty.ret_type, tmap))
        if mentions_func_type(inst.ret_type):
            raise _refuse(f"@{gv.name_hint} returns a function ({type_str(inst.ret_type)}); "
                          "functions returning functions are not supported", orig, where)
        if not _is_higher_order(inst):
            if not self.needs_rewrite(gv):
                return new
            if not fty.type_params:
                if gv not in self.in_place:
                    self.in_place.add(gv)
                    self.work.append((gv, gv, self.orig[gv]))
                return new
            return Call(self.specialize(gv, type_args, fty, orig, where), new.args, new.attrs,
                        (), new.span)
        args = [self.encode(a, t, where) if mentions_func_type(t) else a
                for a, t in zip(new.args, inst.arg_types)]
        return Call(self.specialize(gv, type_args, fty, orig, where), args, new.attrs, (),
                    new.span)

    def needs_rewrite(self, gv) -> bool:
        """Whether ``@gv`` uses function values, or calls a global that does."""
        if self.needing is None:
            self.needing = _using_function_values(self.orig)
        return gv in self.needing

    def specialize(self, gv, type_args, fty, orig, where) -> GlobalVar:
        key = (gv, type_args)
        sgv = self.specialized.get(key)
        if sgv is None:
            if len(self.specialized) >= _MAX_SPECIALIZATIONS:
                raise _refuse(f"more than {_MAX_SPECIALIZATIONS} specialized clones of global "
                              "functions (polymorphic recursion?)", orig, where)
            f = self.orig[gv]
            tmap = dict(zip(f.type_params, type_args))
            clone = fresh_copy(f, tmap)
            clone = Function(clone.params, clone.body, clone.ret_type, (), clone.attrs,
                             clone.span)
            sgv = self.specialized[key] = GlobalVar(self.fresh_name(f"{gv.name_hint}_defunc"))
            self.work.append((sgv, gv, clone))
        return sgv

    # ---- one function -------------------------------------------------------------------------
    def rewrite_function(self, func: Function, where: str) -> Function:
        func = _beta_reduce(func)
        infer_expr(func, self.orig)
        params, seed = [], {}
        for p in func.params:
            t = _var_type(p)
            if isinstance(t, FuncType):
                enc = self.encoding(t, p, where)
                nv = Var(p.name_hint, TypeCall(enc.gtv, []), p.span)
                seed[p] = nv
                params.append(nv)
            elif mentions_func_type(t):
                raise _refuse(f"parameter %{p.name_hint} has type {type_str(t)}, with "
                              "functions inside a tuple, reference or ADT; not supported", p,
                              where)
            else:
                params.append(p)
        rw = _Firstify(self, where)
        rw.memo.update(seed)
        body = rw.rewrite(func.body)
        ret = func.ret_type if func.ret_type is not None else func.checked_type.ret_type
        return Function(params, body, ret, (), func.attrs, func.span)

    def run(self, func: Function) -> Function:
        if not isinstance(func, Function):
            raise RelayError(f"Defunctionalization expects a relay.Function, got "
                             f"{type(func).__name__}")
        if func.type_params:
            raise _refuse("the entry function is polymorphic; all types must be known",
                          func, "the entry function")
        infer_expr(func, self.orig)
        for p in func.params:
            if mentions_func_type(p.checked_type):
                raise _refuse(f"the entry function's parameter %{p.name_hint} has type "
                              f"{type_str(p.checked_type)}; functions cannot be passed into the "
                              "program", func, "the entry function")
        if mentions_func_type(func.checked_type.ret_type):
            raise _refuse("the entry function returns a function "
                          f"({type_str(func.checked_type.ret_type)})", func,
                          "the entry function")
        for gv, f in self.orig.functions.items():
            if f is func or self.mod[gv] is func:
                self.in_place.add(gv)  # rewritten as the entry
        out = self.rewrite_function(func, "the entry function")
        while self.work:
            gv, src, f = self.work.pop()
            self.mod[gv] = self.rewrite_function(f, f"@{gv.name_hint} (from @{src.name_hint})")
        for enc in self.encodings.values():
            self.mod[enc.gtv] = TypeData(enc.gtv, [], enc.constructors)
        for enc in self.encodings.values():
            x = Var("f", TypeCall(enc.gtv, []))
            if enc.clauses:
                body = Match(x, enc.clauses, True)
                self.mod[enc.apply] = Function([x, *enc.ys], body, enc.ft.ret_type)
        return out


class _Firstify(Rewriter):
    """Calls of function parameters become calls of ``apply``; calls of higher-order globals
    become calls of their first-order clones with encoded arguments."""

    def __init__(self, d: _Defunc, where: str):
        super().__init__()
        self.d = d
        self.where = where

    def post_call(self, orig, new):
        op = orig.op
        if type(op) is GlobalVar:
            return self.d.call_global(orig, new, self.where)
        if type(op) is Var:
            nv = new.op
            t = nv.type_annotation
            enc = self.d.by_gtv.get(t.func) if isinstance(t, TypeCall) else None
            if enc is not None:
                return Call(enc.apply, [nv, *new.args], span=orig.span)
            raise _refuse(f"%{op.name_hint} is called but is not a parameter of function "
                          "type (let-bound or pattern-bound function values are not "
                          "supported)", orig, self.where)
        if type(op) is Function and not op.is_primitive:
            raise _refuse("an immediate application of a function literal was left after "
                          "beta reduction", orig, self.where)
        if not isinstance(op, (Constructor, Function, Op)):
            raise _refuse("a computed function value is called; only globals, "
                          "constructors, operators and function parameters can be", orig,
                          self.where)
        return new

    def post_let(self, orig, new):
        if mentions_func_type(_var_type(orig.var)):
            raise _refuse(f"%{orig.var.name_hint} is let-bound to a function value; let-bound "
                          "functions are not supported (inline them or make them global)",
                          orig, self.where)
        return new


def Defunctionalization(func: Function, mod: IRModule) -> Function:  # noqa: N802
    """Rewrite ``func``, a higher-order program, into an equivalent first-order one.

    At each call of a global function with function arguments, the global is cloned with its
    type parameters instantiated, the function arguments become constructors of a generated
    ADT, and calls of function parameters become calls of a generated ``apply`` function that
    matches on the constructor (TVM 0.19 ``relay.transform.Defunctionalization``).

    Args:
        func: the entry function, monomorphic, with no function-typed parameters or result
            (usually ``mod["main"]``).
        mod: the module holding the global functions and type definitions ``func`` uses. As
            in Relay it is updated in place: the clones, ``DefuncK`` ADTs and
            ``apply_defuncK`` functions are added to it.

    Returns:
        The rewritten ``func`` (store it back, e.g. ``mod["main"] = ...``).

    Raises:
        RelayError: ``func`` is polymorphic or passes functions in or out, or the program
            uses function values in a way not supported (see the module docstring); the
            message names the construct and the function it is in.
        TypeInferenceError: ``func`` or ``mod`` does not type-check.
    """
    return _Defunc(mod).run(func)


__all__ = ["Defunctionalization"]

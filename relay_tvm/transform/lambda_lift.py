"""Module-level passes the VM pipeline uses (opt level 1 unless said): LambdaLift, EtaExpand,
Inline / InlineGlobals, RemoveUnusedFunctions.

- **LambdaLift** (Relay's ``lambda_lift.cc``, opt 0): every local non-primitive function becomes
  a global function. One without free variables is referred to by its ``GlobalVar``; one that
  captures variables ``v1..vn`` becomes ``@lifted_k(v1..vn)``, a global function of the captured
  variables returning the closure (inner function attribute ``Closure=1``). A ``let``-bound
  recursive local function calls the lifted global instead of itself. Type variables of
  enclosing polymorphic functions that a lifted function mentions become its own type
  parameters (fresh copies, its type written out); each use instantiates them.
- **EtaExpand** (``eta_expand.cc``, opt 1): a global function or constructor used as a value
  (not called) is wrapped in ``fn (x..) { f(x..) }``.
- **Inline** (``inline.cc``, opt 1): calls of global functions with attribute ``Inline=1``
  are replaced by their bodies (arguments substituted for the parameters; a function for an
  external ``Compiler`` is kept as a local function instead), and inlined functions left
  without references are removed; **InlineGlobals** does this
  for every non-recursive global function reachable from ``main``, then drops them.
- **RemoveUnusedFunctions** (opt 1): drops global functions not reachable from the entries.

Parameters of lifted functions take the captured variables' types, so the module should be
typed first (InferType annotates variables).
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.adt import Constructor
from ..ir.attrs import DictAttrs
from ..ir.expr import Call, Function, GlobalVar, Let, Var
from ..ir.functor import Replace, children, substitute
from ..ir.module import IRModule
from ..ir.types import TypeVar
from ..typing.solver import substitute_type_vars
from ._rewrite import Rewriter, fresh_copy, is_primitive, post_order
from .pass_infra import ModulePass, PassInfo


def _free_vars(e):
    from ..analysis.free import free_vars

    return free_vars(e)


def _fresh_var(v, tmap=None):
    ty = v.type_annotation or getattr(v, "_checked_type", None)
    if tmap and ty is not None:
        ty = substitute_type_vars(ty, tmap)
    return Var(v.name_hint, ty, v.span)  # the span carried over, as every rebuild does


def _annotate(func, ft):
    """``func`` with its unannotated parameters and return type annotated from its type
    ``ft`` (None: as it is)."""
    if ft is None:
        return func
    params, binds = [], {}
    for p, t in zip(func.params, ft.arg_types):
        if p.type_annotation is None:
            binds[p] = Var(p.name_hint, t, p.span)
        params.append(binds.get(p, p))
    body = substitute(func.body, binds) if binds else func.body
    ret = func.ret_type if func.ret_type is not None else ft.ret_type
    return Function(params, body, ret, func.type_params, func.attrs, func.span)


def _free_type_vars(func, captured) -> list:
    """Type variables free in local function ``func``: in its annotations, its type and the
    types of the variables it captures (bound by enclosing functions), in order."""
    from ..ir.free import free_type_vars

    out = [v for v in free_type_vars(func) if v not in func.type_params]
    types = [getattr(func, "_checked_type", None)]
    types += [v.type_annotation or getattr(v, "_checked_type", None) for v in captured]
    for t in types:
        if t is not None:
            out += [v for v in free_type_vars(t) if v not in out and v not in func.type_params]
    return out


# ---- LambdaLift ----------------------------------------------------------------------------------


class _Lift(Rewriter):
    has_let_hook = True

    def __init__(self, mod, out, prefix):
        super().__init__()
        self.mod = mod
        self.out = out
        self.prefix = prefix
        self.top = None
        self.letrec: dict = {}  # let var of a recursive local function -> its replacement

    def _name(self):
        k = 0
        while f"{self.prefix}{k}" in self.out:
            k += 1
        return f"{self.prefix}{k}"

    def after_let_value(self, let, new_value):
        pass

    def rewrite_function(self, func):
        # pre-register recursive let-bound functions so that their bodies call the global
        for n in post_order(func):
            if type(n) is Let and type(n.value) is Function and not is_primitive(n.value):
                if n.var in _free_vars(n.value):
                    gv = GlobalVar(self._name())
                    self.out[gv] = Function([], n.value.body)  # placeholder, replaced below
                    captured = [v for v in _free_vars(n.value) if v is not n.var]
                    self.letrec[n.value] = (gv, captured, n.var)
                    self.memo[n.var] = Call(gv, captured) if captured else gv
        self.top = func
        return self.rewrite(func)

    def post_function(self, orig, new):
        if orig is self.top or is_primitive(orig):
            return new
        rec = self.letrec.get(orig)
        if rec is not None:
            gv, captured, _ = rec
        else:
            gv, captured = None, [v for v in _free_vars(orig)]
            gv = GlobalVar(self._name())
        # the type variables of enclosing polymorphic functions it mentions become its own
        # type parameters (0.19: FreeTypeVars of the function), fresh ones so that each global
        # binds its own; type inference instantiates them at each use
        tvs = _free_type_vars(orig, captured)
        tmap = {tv: TypeVar(tv.name_hint, tv.kind) for tv in tvs}
        ft = None
        if tmap:
            # with its type written out: a caller inferred before it would otherwise fix an
            # unannotated parameter or return type to the caller's own type variables
            ft = getattr(orig, "_checked_type", None)
            ft = None if ft is None else substitute_type_vars(ft, tmap)
            new = _annotate(fresh_copy(new, tmap), ft)
        if not captured:
            self.out[gv] = Function(new.params, new.body, new.ret_type,
                                    [*tmap.values(), *new.type_params], new.attrs, new.span)
            return gv
        fresh = {v: _fresh_var(v, tmap) for v in captured}
        inner = substitute(new, fresh)
        attrs = dict(inner.attrs._fields) if inner.attrs is not None else {}
        attrs["Closure"] = 1
        inner = Function(inner.params, inner.body, inner.ret_type, inner.type_params,
                         DictAttrs(attrs), inner.span)
        self.out[gv] = Function([fresh[v] for v in captured], inner, ft, list(tmap.values()),
                                None, new.span)
        return Call(gv, captured, None, (), orig.span)

    def post_let(self, orig, new):
        if orig.value in self.letrec and type(new) is Let:
            return new.body  # the function now lives in the module
        return new


def lambda_lift(mod: IRModule) -> IRModule:
    out = mod.copy()
    for gv, f in mod.functions.items():
        if is_primitive(f):
            continue
        lifter = _Lift(mod, out, f"lifted_{gv.name_hint}_")
        nf = lifter.rewrite_function(f)
        if nf is not f:
            out[gv] = nf
    return out


def LambdaLift():  # noqa: N802 - Relay's name
    """Lift local functions to global functions (opt level 0); see the module docstring."""
    return ModulePass(lambda m, c: lambda_lift(m), PassInfo(0, "LambdaLift", ("InferType",)))


# ---- EtaExpand -----------------------------------------------------------------------------------


class _Eta(Rewriter):
    def __init__(self, mod, expand_constructor, expand_global_var, value_uses):
        super().__init__()
        self.mod = mod
        self.expand_constructor = expand_constructor
        self.expand_global_var = expand_global_var
        self.value_uses = value_uses

    def post(self, orig, new):
        t = type(orig)
        if t is GlobalVar and self.expand_global_var and orig in self.value_uses:
            # 0.19: the global's own signature (parameter annotations, return type, type
            # parameters) on the wrapper
            f = self.mod[orig]
            ft = f.checked_type
            params = [Var(f"x{i}", p.type_annotation if p.type_annotation is not None else ty)
                      for i, (p, ty) in enumerate(zip(f.params, ft.arg_types))]
            return Function(params, Call(orig, params), f.ret_type, f.type_params)
        if isinstance(orig, Constructor) and self.expand_constructor and orig in self.value_uses:
            # polymorphic in fresh copies of the data type's type variables, returning it
            from ..ir.types import TypeCall, TypeVar
            from ..typing.solver import substitute_type_vars

            data = self.mod[orig.belong_to]
            fresh = {tv: TypeVar(tv.name_hint, tv.kind) for tv in data.type_vars}
            params = [Var(f"x{i}", substitute_type_vars(ty, fresh))
                      for i, ty in enumerate(orig.inputs)]
            tps = [fresh[tv] for tv in data.type_vars]
            return Function(params, Call(orig, params), TypeCall(orig.belong_to, tps), tps)
        return super().post(orig, new)


def eta_expand(mod, expand_constructor=False, expand_global_var=False):
    from ..typing.infer import infer_module

    mod = infer_module(mod)
    out = mod.copy()
    for gv, f in mod.functions.items():
        if is_primitive(f):
            continue
        value_uses = set()
        for n in post_order(f):
            kids = children(n)
            if type(n) is Call:
                kids = n.args
            for c in kids:
                if type(c) is GlobalVar or isinstance(c, Constructor):
                    value_uses.add(c)
        if not value_uses:
            continue
        nf = _Eta(mod, expand_constructor, expand_global_var, value_uses).rewrite(f)
        if nf is not f:
            out[gv] = nf
    return out


def EtaExpand(expand_constructor: bool = False, expand_global_var: bool = False):  # noqa: N802
    """Wrap global functions / constructors used as values in a function (opt level 1)."""
    return ModulePass(lambda m, c: eta_expand(m, expand_constructor, expand_global_var),
                      PassInfo(1, "EtaExpand"))


# ---- Inline / InlineGlobals / RemoveUnusedFunctions ----------------------------------------------


def _calls_of(f):
    return {n for n in post_order(f) if type(n) is GlobalVar}


def _recursive(mod) -> set:
    """Global functions on a call cycle."""
    graph = {gv: _calls_of(f) for gv, f in mod.functions.items()}
    rec = set()
    for start in graph:
        stack, seen = list(graph[start]), set()
        while stack:
            g = stack.pop()
            if g is start:
                rec.add(start)
                break
            if g in seen or g not in graph:
                continue
            seen.add(g)
            stack.extend(graph[g])
    return rec


class _Inline(Rewriter):
    """Inlines calls of the global functions ``targets``; with ``literals``, also calls of
    function literals that are neither primitive nor for an external compiler (the
    ``Composite`` functions of ``pattern.partition`` / ``MergeComposite``)."""

    def __init__(self, mod, targets, literals=False):
        super().__init__()
        self.mod = mod
        self.targets = targets
        self.literals = literals
        self.inlined: set = set()

    def post_call(self, orig, new):
        if self.literals and type(new.op) is Function and not is_primitive(new.op) and \
                not new.op.get_attr("Compiler", None):
            f = new.op
        elif type(new.op) is not GlobalVar or new.op not in self.targets:
            return new
        else:
            f = self.mod[new.op]
            self.inlined.add(new.op)
        if f.get_attr("Compiler", None):
            # a function for an external compiler stays a function: the call gets a local copy
            return Call(_rename_bound(f), new.args, new.attrs, new.type_args, orig.span)
        if len(f.params) != len(new.args):
            return new
        # the arguments replace the parameters (a shared argument is still computed once:
        # dataflow is a graph), in a fresh copy of the body so each inlining is distinct
        return _rename_bound(substitute(f.body, dict(zip(f.params, new.args))))


def _rename_bound(expr):
    """A copy of ``expr`` whose bound variables are fresh (well-formedness forbids binding one
    variable twice in a module)."""
    from ..analysis.free import bound_vars

    bvs = bound_vars(expr)
    if not bvs:
        return expr
    return Replace({v: _fresh_var(v) for v in bvs}).rewrite(expr)


def inline(mod, targets=None):
    if targets is None:
        targets = {gv for gv, f in mod.functions.items() if f.get_attr("Inline", 0)}
    targets = set(targets) - _recursive(mod)
    if not targets:
        return mod
    out = mod.copy()
    inlined: set = set()
    # callees first: repeat until no call of a target is left (targets are not recursive, so
    # each round removes a level of the call graph)
    for _round in range(len(targets) + 1):
        changed = False
        for gv, f in list(out.functions.items()):
            if is_primitive(f):
                continue
            rw = _Inline(out, targets)
            nf = rw.rewrite(f)
            if nf is not f:
                out[gv] = nf
                inlined |= rw.inlined
                changed = True
        if not changed:
            break
    # inlined functions nothing refers to any more leave the module (tvm.relay's Inline)
    used = set()
    for gv, f in out.functions.items():
        used |= {g for g in _calls_of(f) if g is not gv}
    for gv in inlined:
        if gv not in used and gv.name_hint != "main" and gv in out:
            del out[gv]
    return out


def Inline():  # noqa: N802 - Relay's name
    """Inline global functions marked ``Inline=1`` (opt level 1)."""
    return ModulePass(lambda m, c: inline(m), PassInfo(1, "Inline"))


def remove_unused_functions(mod, entry_functions=("main",)):
    keep = set()
    stack = [mod.get_global_var(n) for n in entry_functions if n in mod]
    while stack:
        gv = stack.pop()
        if gv in keep:
            continue
        keep.add(gv)
        stack.extend(g for g in _calls_of(mod[gv]) if g in mod)
    if len(keep) == len(mod):
        return mod
    out = IRModule(type_definitions=mod.type_definitions)
    for gv, f in mod.functions.items():
        if gv in keep:
            out[gv] = f
    return out


def RemoveUnusedFunctions(entry_functions=None):  # noqa: N802 - Relay's name
    """Drop global functions unreachable from ``entry_functions`` (default ``["main"]``)."""
    entries = tuple(entry_functions or ("main",))
    return ModulePass(lambda m, c: remove_unused_functions(m, entries),
                      PassInfo(1, "RemoveUnusedFunctions"))


def inline_globals(mod):
    if "main" not in mod:
        raise RelayError("InlineGlobals: the module has no @main")
    targets = {gv for gv, f in mod.functions.items()
               if gv.name_hint != "main" and not is_primitive(f)}
    return remove_unused_functions(inline(mod, targets))


def InlineGlobals():  # noqa: N802
    """Inline every non-recursive global function into its callers and drop the unused ones
    (opt level 1)."""
    return ModulePass(lambda m, c: inline_globals(m), PassInfo(1, "InlineGlobals"))


__all__ = ["LambdaLift", "EtaExpand", "Inline", "InlineGlobals", "RemoveUnusedFunctions"]

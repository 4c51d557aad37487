"""Type inference (Relay paper §3.3): constraint generation, unification and type relations.

Every expression gets a type, possibly an :class:`IncompleteType` to be found later. Structural
constraints (an argument's type is the parameter's type, both branches of an ``if`` agree, ...)
are solved at once by unification with a union-find over incomplete types. Operator calls add a
type relation (the operator's ``type_rel``); relations run as soon as their argument types are
known and again, to a fixpoint, until none makes progress. Function types with type parameters
are instantiated with fresh incomplete types at each call. Global functions share one signature
per module, so (mutual) recursion through ``GlobalVar`` s type-checks.

Constraint generation is an iterative post-order walk, and each relation runs a bounded number
of times, so inference is linear in program size. Afterwards every expression's
``checked_type`` is set.

Inference runs before nearly every pass, so it avoids repeating itself: an expression whose type
follows from the expression alone is *sealed* once typed, and a later inference takes its type
without walking it (a pass that changes a few nodes of a 100,000-node program re-types only the
path from them to the root); a module whose functions are all sealed is not walked at all; and
relation results are cached per (operator, attributes, argument types).
"""

from __future__ import annotations

from .._gc import paused_gc
from ..errors import RelayError, TypeInferenceError
from ..ir.adt import (
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from ..ir.base import is_sealed, seal_epoch
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
from ..ir.functor import children
from ..ir.module import IRModule
from ..ir.types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    type_str,
)
from ..op.registry import Op
from .exhaustive import check_exhaustive
from .solver import (
    TypeSolver,
    _has_incomplete,
    _instantiate,
    _UnifyError,
    short,
)

# (relation, id(attrs), *argument types) -> (attrs, relation result), for complete tensor
# arguments
_REL_CACHE: dict = {}
_REL_CACHE_SIZE = 65536

# Kinds of node whose type is fixed by the node itself once its children's are: everything but
# variables (a binding decides their type), globals and constructors (the module decides) and
# match (exhaustiveness depends on the module's type definitions). A node of these kinds whose
# children are all sealed (annotated variables with complete types, or sealed nodes) is sealed
# after a successful inference; a later inference takes its ``checked_type`` as it is, without
# walking it again. Nodes are immutable, so a sealed node's type can never become stale; setting
# ``checked_type`` by any other path unseals the node.
_SEALABLE = frozenset({Call, Constant, Tuple, TupleGetItem, Let, If, Function, RefCreate, RefRead,
                       RefWrite})


def _complete_result(res) -> bool:
    """Whether a relation's result holds no incomplete type (sharing one between calls would
    tie their unknowns together)."""
    if isinstance(res, tuple):
        out, fill = res
        return not _has_incomplete(out) and not any(_has_incomplete(t) for t in fill.values())
    return not _has_incomplete(res)


class _Pending:
    __slots__ = ("call", "kind")

    def __init__(self, call, kind):
        self.call = call
        self.kind = kind


class TypeInferencer:
    """Infers the types of the functions of a module (or of one bare expression)."""

    def __init__(self, mod: IRModule | None = None, allow_free_vars: bool = False,
                 reuse: bool = True):
        self.mod = mod
        self.allow_free_vars = allow_free_vars
        self.reuse = reuse
        self.solver = TypeSolver()
        self.types: dict = {}
        self.global_types: dict = {}
        self.pending: list = []
        self.match_nodes: list = []
        # nodes whose type follows from the node alone (see _SEALABLE), and nodes whose type a
        # previous inference sealed and this one reuses without walking them again
        self.sealable: set = set()
        self.reused: set = set()
        # every binding of a variable without a type annotation, in binding order
        self.unannotated: list = []
        # every function walked that has no return type annotation
        self.no_ret_type: list = []
        # a call of a polymorphic function -> the fresh types of its type parameters
        self.instances: dict = {}

    # ---- errors ----
    def _unify(self, a, b, expr, what: str):
        try:
            return self.solver.unify(a, b)
        except _UnifyError as e:
            ra, rb = self.solver.resolve(a), self.solver.resolve(b)
            detail = f" ({e.detail})" if e.detail else ""
            raise TypeInferenceError(
                f"{what}: expected {type_str(rb)}, got {type_str(ra)}{detail}\n"
                f"  in expression: {short(expr)}",
                getattr(expr, "span", None),
            ) from None

    # ---- global signatures ----
    def global_type(self, gv: GlobalVar, use=None):
        t = self.global_types.get(gv)
        if t is not None:
            return t
        if self.mod is None or gv not in self.mod:
            raise TypeInferenceError(
                f"global function @{gv.name_hint} is not defined in the module", getattr(use, "span", None)
            )
        f = self.mod[gv]
        params = []
        for p in f.params:
            pt = self.types.get(p)
            if pt is None:
                pt = p.type_annotation if p.type_annotation is not None else IncompleteType()
                self.types[p] = pt
            params.append(pt)
        ret = f.ret_type if f.ret_type is not None else IncompleteType()
        t = FuncType(params, ret, f.type_params)
        self.global_types[gv] = t
        return t

    def constructor_type(self, c: Constructor, use=None) -> FuncType:
        data = None
        if self.mod is not None and c.belong_to in self.mod:
            data = self.mod[c.belong_to]
        if data is None:
            raise TypeInferenceError(
                f"constructor {c.name_hint} of type {c.belong_to.name_hint} is not defined in the "
                f"module (add its TypeData to the IRModule)",
                getattr(use, "span", None),
            )
        return FuncType(c.inputs, TypeCall(c.belong_to, data.type_vars), data.type_vars)

    # ---- traversal ----
    def _bind(self, v: Var):
        ann = v.type_annotation
        if ann is None:
            self.unannotated.append(v)
        if v not in self.types:
            self.types[v] = IncompleteType() if ann is None else ann
        if ann is not None and not _has_incomplete(ann):
            self.sealable.add(v)

    def visit(self, root):
        types = self.types
        sealable = self.sealable
        reuse = self.reuse
        epoch = seal_epoch()
        stack = [(root, 0)]
        while stack:
            e, stage = stack.pop()
            if stage == 0:
                if e in types:
                    continue
                t = type(e)
                if reuse and t is not Var and getattr(e, "_type_sealed", 0) == epoch:
                    # typed before, and its type depends on nothing outside it: reuse it
                    types[e] = e._checked_type
                    sealable.add(e)
                    self.reused.add(e)
                    continue
                if t is Var:
                    if not self.allow_free_vars:
                        from ..errors import WellFormedError

                        raise WellFormedError(f"variable %{e.name_hint} is not bound", e.span)
                    self._bind(e)
                    continue
                if t is Function:
                    for p in e.params:
                        self._bind(p)
                    if e.ret_type is None:
                        self.no_ret_type.append(e)
                elif t is Let:
                    # the variable takes the value's type before the body is walked, so a
                    # polymorphic function bound by let is instantiated at each call in the
                    # body (let-polymorphism: `let %id = fn[A](%x: A) {%x}; (%id(1), %id(()))`)
                    self._bind(e.var)
                    stack.append((e, 1))
                    if e.body not in types:
                        stack.append((e.body, 0))
                    stack.append((e, 3))
                    if e.value not in types:
                        stack.append((e.value, 0))
                    continue
                elif t is Match:
                    stack.append((e, 1))
                    for c in reversed(e.clauses):
                        stack.append((c.rhs, 0))
                    stack.append((e, 2))  # type the patterns once the data is typed
                    stack.append((e.data, 0))
                    continue
                stack.append((e, 1))
                cs = e.args if t is Call and isinstance(e.op, Op) else children(e)
                for c in reversed(cs):
                    if c not in types:
                        stack.append((c, 0))
            elif stage == 3:
                self._unify(types[e.value], types[e.var], e, f"let %{e.var.name_hint}")
            elif stage == 2:
                dt = types[e.data]
                for c in e.clauses:
                    self.pattern(c.lhs, dt, e)
            else:
                if e not in types:
                    types[e] = self.type_of(e)
                t = type(e)
                if t in _SEALABLE:
                    cs = e.args if t is Call and isinstance(e.op, Op) else children(e)
                    for c in cs:
                        if c not in sealable:
                            break
                    else:
                        sealable.add(e)

    def pattern(self, p, expected, match):
        if isinstance(p, PatternWildcard):
            return
        if isinstance(p, PatternVar):
            self._bind(p.var)
            self._unify(self.types[p.var], expected, match, f"pattern variable %{p.var.name_hint}")
            return
        if isinstance(p, PatternConstructor):
            ft = _instantiate(self.constructor_type(p.constructor, match))
            self._unify(expected, ft.ret_type, match, f"pattern {p.constructor.name_hint}")
            if len(p.patterns) != len(ft.arg_types):
                raise TypeInferenceError(
                    f"pattern {p.constructor.name_hint} has {len(p.patterns)} sub-patterns, the "
                    f"constructor takes {len(ft.arg_types)}\n  in expression: {short(match)}",
                    match.span,
                )
            for sub, at in zip(p.patterns, ft.arg_types):
                self.pattern(sub, at, match)
            return
        if isinstance(p, PatternTuple):
            fields = [IncompleteType() for _ in p.patterns]
            self._unify(expected, TupleType(fields), match, "tuple pattern")
            for sub, ft in zip(p.patterns, fields):
                self.pattern(sub, ft, match)

    def type_of(self, e):
        types = self.types
        t = type(e)
        if t is Constant:
            return e.tensor_type
        if t is Tuple:
            return TupleType([types[f] for f in e.fields])
        if t is Call:
            return self.call_type(e)
        if t is Function:
            body = types[e.body]
            if e.ret_type is not None:
                self._unify(body, e.ret_type, e, "function body against its return annotation")
                body = e.ret_type
            return FuncType([types[p] for p in e.params], body, e.type_params)
        if t is Let:
            self._unify(types[e.value], types[e.var], e, f"let %{e.var.name_hint}")
            return types[e.body]
        if t is If:
            cond = self.solver.resolve(types[e.cond])
            if not (isinstance(cond, IncompleteType) or (isinstance(cond, TensorType) and cond.shape == () and cond.dtype == "bool")):
                raise TypeInferenceError(
                    f"if condition must be a boolean scalar (bool), got {type_str(cond)}\n"
                    f"  in expression: {short(e)}",
                    e.span,
                )
            self._unify(cond, TensorType((), "bool"), e, "if condition")
            # the true branch sets the type the false branch must have
            return self._unify(types[e.false_branch], types[e.true_branch], e,
                               "the two branches of if must have one type; the false "
                               "branch, against the true branch's")
        if t is TupleGetItem:
            out = IncompleteType()
            types[e] = out
            if not self._solve_getitem(e):
                self.pending.append(_Pending(e, "getitem"))
            return out
        if t is GlobalVar:
            return self.global_type(e, e)
        if t is Constructor:
            return self.constructor_type(e, e)
        if t is RefCreate:
            return RefType(types[e.value])
        if t is RefRead:
            v = IncompleteType()
            self._unify(types[e.ref], RefType(v), e, "ref_read of a non-reference")
            return v
        if t is RefWrite:
            self._unify(types[e.ref], RefType(types[e.value]), e, "ref_write")
            return TupleType([])
        if t is Match:
            self.match_nodes.append(e)
            out = IncompleteType()
            for c in e.clauses:
                self._unify(types[c.rhs], out, e, "all match clauses must have one type; clause")
            return out
        if isinstance(e, Op):
            raise TypeInferenceError(
                f"operator {e.name} is used as a value; operators can only be called", e.span
            )
        raise TypeInferenceError(f"cannot type a {t.__name__}", getattr(e, "span", None))

    def call_type(self, call: Call):
        types = self.types
        op = call.op
        if isinstance(op, Op):
            if op.type_rel is None:
                raise TypeInferenceError(f"operator {op.name} has no type relation", call.span)
            if op.num_inputs >= 0 and len(call.args) != op.num_inputs:
                raise TypeInferenceError(
                    f"{op.name} expects {op.num_inputs} argument(s) "
                    f"({', '.join(op.arguments)}), got {len(call.args)}\n  in expression: {short(call)}",
                    call.span,
                )
            res = self._relation(call)
            if res is None:  # not enough known yet: solved later, with the call's type a hole
                out = IncompleteType()
                types[call] = out
                self.pending.append(_Pending(call, "rel"))
                return out
            if isinstance(res, tuple):
                out, fill = res
                for i, ty in fill.items():
                    self._unify(types[call.args[i]], ty, call, f"argument {i} of {op.name}")
                return out
            return res
        ft = self.solver.find(types[op])
        if isinstance(ft, IncompleteType):
            ft = FuncType([IncompleteType() for _ in call.args], IncompleteType())
            self._unify(types[op], ft, call, "callee")
        if not isinstance(ft, FuncType):
            raise TypeInferenceError(
                f"cannot call a value of type {type_str(self.solver.resolve(ft))}; only functions "
                f"can be called\n  in expression: {short(call)}",
                call.span,
            )
        if ft.type_params:
            # instantiate what is known of a polymorphic function's type by now (its return
            # type, when not annotated, is known only once its body has been walked)
            ft = self.solver.resolve(ft)
        fresh: list = []
        ft = _instantiate(ft, fresh)
        if fresh:
            self.instances[call] = fresh
        if len(ft.arg_types) != len(call.args):
            raise TypeInferenceError(
                f"{short(call.op)} expects {len(ft.arg_types)} argument(s), got {len(call.args)}\n"
                f"  in expression: {short(call)}",
                call.span,
            )
        for i, (a, pt) in enumerate(zip(call.args, ft.arg_types)):
            self._unify(types[a], pt, call, f"argument {i} of the call to {short(call.op)}")
        return ft.ret_type

    def _solve_getitem(self, e) -> bool:
        tt = self.solver.find(self.types[e.tuple_value])
        if isinstance(tt, IncompleteType):
            return False
        if not isinstance(tt, TupleType):
            raise TypeInferenceError(
                f"tuple index .{e.index} applied to a value of type {type_str(self.solver.resolve(tt))}, "
                f"expected a tuple\n  in expression: {short(e)}",
                e.span,
            )
        if not 0 <= e.index < len(tt.fields):
            raise TypeInferenceError(
                f"tuple index {e.index} is out of range for a tuple of {len(tt.fields)} fields\n"
                f"  in expression: {short(e)}",
                e.span,
            )
        self._unify(self.types[e], tt.fields[e.index], e, "tuple field")
        return True

    def _solve_relation(self, call) -> bool:
        """Run the relation of a pending call; unify its result with the call's type."""
        res = self._relation(call)
        if res is None:
            return False
        op = call.op
        if isinstance(res, tuple):
            out, fill = res
            for i, ty in fill.items():
                self._unify(self.types[call.args[i]], ty, call, f"argument {i} of {op.name}")
        else:
            out = res
        self._unify(self.types[call], out, call, f"result of {op.name}")
        return True

    def _relation(self, call):
        """The operator's relation on the call's current argument types: ``None`` (not known
        yet), the result type, or ``(result type, {argument index: type})``."""
        op = call.op
        resolve = self.solver.resolve
        arg_types = [resolve(self.types[a]) for a in call.args]
        attrs = call.attrs
        key = None
        for t in arg_types:
            if type(t) is not TensorType:
                break
        else:
            # a relation is a function of its argument types and attributes: a chain of the same
            # operator on the same shapes, or a program typed again after a pass, asks the same
            # question many times
            key = (op.type_rel, id(attrs), *arg_types)  # the relation itself: it may be replaced
            hit = _REL_CACHE.get(key)
            if hit is not None and hit[0] is attrs:
                return hit[1]
        try:
            res = op.type_rel(arg_types, attrs)
        except TypeInferenceError as err:
            raise TypeInferenceError(f"{err}\n  in expression: {short(call)}", call.span) from None
        except RelayError as err:
            if type(err) is not RelayError:  # (a kind of its own: schema errors, ...)
                raise
            # a type the relation could not build (a negative dimension from `full`'s shape
            # attribute said "TensorType shape: ..." naming neither the operator nor the call)
            raise TypeInferenceError(f"{op.name}: {err}\n  in expression: {short(call)}",
                                     call.span) from None
        except Exception as err:  # a bug in a relation must still point at the call
            wrong = _wrong_attrs(op, attrs)
            if wrong is not None:  # the relation read a field the attrs of another op lack
                raise TypeInferenceError(f"{wrong}\n  in expression: {short(call)}",
                                         call.span) from err
            raise TypeInferenceError(
                f"type relation of {op.name} failed on argument types "
                f"{', '.join(type_str(t) for t in arg_types)}: {type(err).__name__}: {err}\n"
                f"  in expression: {short(call)}",
                call.span,
            ) from err
        if res is not None and key is not None and _complete_result(res):
            if len(_REL_CACHE) >= _REL_CACHE_SIZE:
                _REL_CACHE.clear()
            _REL_CACHE[key] = (attrs, res)  # holding attrs keeps its id from being reused
        return res

    def solve_pending(self):
        while self.pending:
            remaining = []
            for p in self.pending:
                ok = self._solve_getitem(p.call) if p.kind == "getitem" else self._solve_relation(p.call)
                if not ok:
                    remaining.append(p)
            if len(remaining) == len(self.pending):
                p = remaining[0]
                e = p.call
                if p.kind == "getitem":
                    raise TypeInferenceError(
                        f"cannot infer the type of the tuple in {short(e)}; annotate it", e.span
                    )
                unknown = [
                    short(a) for a in e.args if _has_incomplete(self.solver.resolve(self.types[a]))
                ]
                raise TypeInferenceError(
                    f"cannot infer the type of {e.op.name}'s arguments {', '.join(unknown)}: their "
                    f"types are unknown; annotate them (or give the operator's shape attributes)\n"
                    f"  in expression: {short(e)}",
                    e.span,
                )
            self.pending = remaining

    def finish(self):
        self.solve_pending()
        for m in self.match_nodes:
            if m.complete:
                check_exhaustive(m, self)
        resolve = self.solver.resolve
        reused, sealable = self.reused, self.sealable
        done = []
        for e, t in self.types.items():
            if e in reused:
                continue
            rt = resolve(t)
            if _has_incomplete(rt) and not isinstance(e, (GlobalVar, Constructor)):
                raise TypeInferenceError(
                    f"could not infer the type of {short(e)}: it is only known as {type_str(rt)}; "
                    f"add a type annotation",
                    getattr(e, "span", None),
                )
            done.append((e, rt))
        # seal only once every type is known to be complete: a failed inference seals nothing
        for e, rt in done:
            e._set_checked_type(rt, e in sealable and type(e) is not Var)
        self._fill_type_args(done)

    def _fill_type_args(self, done) -> None:
        """Relay's ``Call.type_args``, as 0.19's InferType filled them in: an operator call's
        argument types; a polymorphic function's type arguments at this call. Calls that were
        given type arguments keep them."""
        resolve, instances = self.solver.resolve, self.instances
        setattr_ = object.__setattr__
        for e, _ in done:
            if type(e) is not Call or e.type_args:
                continue
            if type(e.op) is Op:
                # the arguments were typed just before (their _checked_type is set)
                setattr_(e, "type_args", tuple([a._checked_type for a in e.args]))
            elif e in instances:
                setattr_(e, "type_args", tuple(resolve(t) for t in instances[e]))


def _wrong_attrs(op, attrs) -> str | None:
    """Why ``attrs`` cannot be ``op``'s attributes (an attrs object of another class than its
    schema's, e.g. a hand-built ``nn.softmax`` call given ``Conv2DAttrs``), or None when their
    class is the one expected or the operator has no attribute schema."""
    schema = op.attrs_schema
    if not schema.fields:
        return None
    got = getattr(attrs, "type_key", None)
    if got == schema.type_key:
        return None
    what = "no attributes" if attrs is None else (
        f"attributes {got}" if got is not None else f"a {type(attrs).__name__} for attributes")
    return (f"{op.name} expects attributes {schema.type_key}, got {what}; build the call with "
            f"the operator's function, or with relay.op.get({op.name!r}).make_attrs(...)")


# ---- entry points ------------------------------------------------------------------------------

def infer_module(mod: IRModule, reuse: bool = True, annotate: bool = True) -> IRModule:
    """Type-check every function of ``mod`` (jointly, so globals may call each other); fills in
    ``checked_type`` everywhere and returns a new module holding the same functions.

    Args:
        reuse: take the types of sealed expressions (typed before, see ``_SEALABLE``) as they
            are; ``False`` types every expression again (the ``relay.debug.check_each_pass``
            check, and tests that the reused types are right).
        annotate: fill in missing variable annotations and return types (what InferType
            does, see :func:`annotate_missing`); ``False`` only sets ``checked_type``, leaving
            the functions as they were (loading a saved module exactly).

    Raises:
        TypeInferenceError: with the expression, expected and actual types and the span.
        WellFormedError: a function uses a variable it does not bind.
    """
    with paused_gc():
        return _infer_module(mod, reuse, annotate)


def _infer_module(mod: IRModule, reuse: bool = True, annotate: bool = True) -> IRModule:
    from ..analysis.well_formed import rebind_duplicates

    funcs = mod.functions

    def sealed(f):
        return reuse and is_sealed(f)

    if all(sealed(f) and (f.ret_type is not None or not annotate) for f in funcs.values()):
        # every function was type-checked before and refers to no global: nothing can have
        # changed (a sealed function was well formed too, and it is immutable)
        return mod.copy()
    renamed = {}
    for gv, f in funcs.items():
        if not sealed(f):
            # (0.19's modules took a variable bound in two places: the later ones renamed)
            g = rebind_duplicates(f, f"@{gv.name_hint}")
            if g is not f:
                renamed[gv] = g
    if renamed:
        mod = mod.shallow_copy()
        for gv, g in renamed.items():
            mod[gv] = g
        funcs = mod.functions
    inf = TypeInferencer(mod, reuse=reuse)
    missing = {}
    # polymorphic functions first: a call instantiates the callee's type as known at the call
    order = sorted(funcs.items(), key=lambda item: not item[1].type_params)
    for gv, f in order:
        sig = inf.global_type(gv)
        start, fstart = len(inf.unannotated), len(inf.no_ret_type)
        try:
            inf.visit(f)
        except TypeInferenceError as e:
            # which function of the module (a span names the place only in parsed text)
            where = f"in @{gv.name_hint}"
            if where in str(e) or len(funcs) == 1:
                raise
            err = TypeInferenceError(f"{e}\n  {where}")
            err.span = e.span
            raise err from e
        fns = inf.no_ret_type[fstart:]
        if f.ret_type is None and f in inf.reused:
            fns.append(f)  # sealed by an earlier local inference, never annotated
        missing[gv] = (inf.unannotated[start:], fns)
        inf._unify(inf.types[f], sig, f, f"the type of @{gv.name_hint}")
    inf.finish()
    out = mod.copy()
    if not annotate:
        return out
    for gv, f in funcs.items():
        nf = annotate_missing(f, *missing[gv])
        if nf is not f:
            out[gv] = nf
    return out


def annotate_missing(func, missing=None, functions=None):
    """A copy of a type-checked ``func`` whose variables bound without an annotation carry their
    inferred type, and whose functions (``func`` and those inside it) without a return type
    annotation carry their inferred return type, with ``checked_type`` set on every rebuilt
    node. This is Relay 0.19's ``update_missing_type_annotation`` (type_infer.cc's Resolver set
    a missing ``Var.type_annotation`` and ``Function.ret_type`` after solving). The caller's own
    expression is left as it was.

    This is what lets a later pass remove the operator that determined a parameter's type
    (SimplifyInference dropping ``nn.batch_norm``, ...) and still leave a typeable program.
    Returns ``func`` itself when every variable and function is annotated already.

    Args:
        missing: the variables ``func`` binds without an annotation, when the caller knows
            them already (the inferencer records them); found by a walk over ``func`` if None.
        functions: the functions in ``func`` (``func`` included) without a return type, when
            the caller knows them; found by the same walk if None.
    """
    from ..ir.functor import ExprMutator

    if missing is None or functions is None:
        from ..analysis.free import bound_vars
        from ..ir.functor import post_order_visit

        if missing is None:
            missing = [v for v in bound_vars(func) if v.type_annotation is None]
        if functions is None:
            functions = []
            post_order_visit(func, lambda e: functions.append(e)
                             if type(e) is Function and e.ret_type is None else None)
    if not missing and not functions:
        return func
    if not missing and len(functions) == 1 and functions[0] is func:
        # only the function itself lacks its return type: no walk over the body
        t = func.checked_type
        out = Function(func.params, func.body, t.ret_type, func.type_params, func.attrs,
                       func.span)
        out._set_checked_type(t, _closed(out))
        return out
    fresh = {}
    for v in missing:
        nv = fresh[v] = Var(v.name_hint, v.checked_type, v.span)
        nv._set_checked_type(v.checked_type)  # sealed parents are not walked again
    no_ret = {id(f): f for f in functions}

    class _Annotate(ExprMutator):
        def visit_var(self, v):
            return fresh.get(v, v)

        def visit_function(self, e):
            new = super().visit_function(e)
            if id(e) not in no_ret:
                return new
            ret = e.checked_type.ret_type
            return Function(new.params, new.body, ret, new.type_params, new.attrs, new.span)

        def visit_pattern(self, p):
            if isinstance(p, PatternVar):
                nv = fresh.get(p.var)
                return p if nv is None else PatternVar(nv, p.span)
            if isinstance(p, PatternConstructor):
                subs = [self.visit_pattern(q) for q in p.patterns]
                if all(a is b for a, b in zip(subs, p.patterns)):
                    return p
                return PatternConstructor(p.constructor, subs, p.span)
            if isinstance(p, PatternTuple):
                subs = [self.visit_pattern(q) for q in p.patterns]
                if all(a is b for a, b in zip(subs, p.patterns)):
                    return p
                return PatternTuple(subs, p.span)
            return p

    m = _Annotate()
    out = m.visit(func)
    # memo_map holds children before parents: a rebuilt node is sealed when its children are
    # (its variables now carry the complete types inference found for them)
    for old, new in m.memo_map.items():
        if new is not old:
            t = getattr(old, "_checked_type", None)
            if t is not None:
                new._set_checked_type(t, _closed(new))
    return out


def adopt_type(new, old):
    """Give ``new`` the checked type of ``old`` and return ``new``.

    For a pass that rebuilds ``old`` as ``new`` of the same kind, with the same operator and
    attributes, and with children whose types are those of ``old``'s children (FuseOps moving
    operators into primitive functions: a parameter annotated with the argument's type takes
    the argument's place). Inference would find ``old``'s type again, so ``new`` carries it, and
    is sealed when its children are (a later inference does not walk it). Nothing is set when
    ``old`` has no type.
    """
    t = getattr(old, "_checked_type", None)
    if t is not None and new is not old:
        new._set_checked_type(t, not _has_incomplete(t) and _closed(new))
    return new


def _closed(e) -> bool:
    """Whether ``e`` may be sealed: its kind is sealable and every child is a variable annotated
    with a complete type or a sealed node."""
    t = type(e)
    if t not in _SEALABLE:
        return False
    cs = e.args if t is Call and isinstance(e.op, Op) else children(e)
    for c in cs:
        if type(c) is Var:
            ann = c.type_annotation
            if ann is None or _has_incomplete(ann):
                return False
        elif not is_sealed(c):
            return False
    return True


def infer_expr(expr, mod: IRModule | None = None):
    """Type-check a bare expression (free variables take their annotations); returns ``expr``
    with ``checked_type`` filled in. Globals and constructors are looked up in ``mod``."""
    from ..analysis.well_formed import check_well_formed

    check_well_formed(expr, allow_free=True)
    if mod is not None:
        mod = _typed_module(mod) if len(mod) else mod
    inf = TypeInferencer(mod, allow_free_vars=True)
    if mod is not None:
        for gv, f in mod.functions.items():
            inf.global_types[gv] = f.checked_type
    inf.visit(expr)
    inf.finish()
    return expr


# the last module infer_expr type-checked: (its contents' identities, the typed module, the
# module itself, held so that its id stays its own)
_LAST_TYPED: list = [None]


def _typed_module(mod: IRModule) -> IRModule:
    """``infer_module(mod)``, reused while ``mod`` holds the same functions and type
    definitions: a function pass that types each function against its module (PartialEvaluate,
    the gradient) checked the whole module once per function, quadratic in its size (the
    Prelude's 243 functions: 66 s of PartialEvaluate on a one-line main; fresh-user trial)."""
    key = (id(mod), tuple((id(g), id(f)) for g, f in mod.functions.items()),
           tuple((id(g), id(t)) for g, t in mod.type_definitions.items()), seal_epoch())
    last = _LAST_TYPED[0]
    if last is not None and last[0] == key and last[2] is mod:
        return last[1]
    typed = infer_module(mod)
    _LAST_TYPED[0] = (key, typed, mod)
    return typed


def InferTypeLocal(expr) -> Type:  # noqa: N802 - Relay's name
    """The type of a bare expression (``relay.transform.InferTypeLocal``)."""
    return infer_expr(expr).checked_type



__all__ = ["infer_module", "infer_expr", "InferTypeLocal", "TypeSolver", "TypeInferencer", "short"]

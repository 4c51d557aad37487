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
from ..op.registry import Op
from ..ir.module import IRModule
from ..ir.types import (
    AnyDim,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    type_str,
)


class _UnifyError(Exception):
    def __init__(self, detail: str = ""):
        super().__init__(detail)
        self.detail = detail


def short(expr, limit: int = 160) -> str:
    """A one-line rendering of an expression for error messages: the node with its direct
    arguments named, not the whole program."""

    def name(e):
        if isinstance(e, Var):
            return f"%{e.name_hint}"
        if isinstance(e, GlobalVar):
            return f"@{e.name_hint}"
        if isinstance(e, Constant):
            return "meta[relay.Constant]" if e.data.ndim else repr(e.data.item())
        if isinstance(e, Constructor):
            return e.name_hint
        if hasattr(e, "name") and not isinstance(e, Call):
            return e.name
        return f"<{type(e).__name__}>"

    e = expr
    if isinstance(e, Call):
        parts = [name(a) for a in e.args]
        if e.attrs is not None:
            parts += [f"{k}={v}" for k, v in e.attrs.items() if v not in (None, "")]
        s = f"{name(e.op)}({', '.join(parts)})"
    elif isinstance(e, Let):
        s = f"let %{e.var.name_hint} = {short(e.value, 80)}; ..."
    elif isinstance(e, If):
        s = f"if ({name(e.cond)}) {{...}} else {{...}}"
    elif isinstance(e, Tuple):
        s = f"({', '.join(name(f) for f in e.fields)})"
    elif isinstance(e, TupleGetItem):
        s = f"{name(e.tuple_value)}.{e.index}"
    elif isinstance(e, Function):
        s = f"fn ({', '.join(name(p) for p in e.params)}) {{...}}"
    elif isinstance(e, Match):
        s = f"match ({name(e.data)}) {{...}}"
    else:
        s = name(e)
    return s if len(s) <= limit else s[: limit - 3] + "..."


class TypeSolver:
    """Union-find over incomplete types, plus unification of the type structure."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, t):
        root = t
        while isinstance(root, IncompleteType) and root in self.parent:
            root = self.parent[root]
        while isinstance(t, IncompleteType) and t in self.parent and self.parent[t] is not root:
            nxt = self.parent[t]
            self.parent[t] = root
            t = nxt
        return root

    def resolve(self, t):
        """``t`` with every solved incomplete type replaced by its solution."""
        t = self.find(t)
        if isinstance(t, (TensorType, TypeVar, GlobalTypeVar, IncompleteType)) or t is None:
            return t
        if isinstance(t, TupleType):
            fields = tuple(self.resolve(f) for f in t.fields)
            return t if all(a is b for a, b in zip(fields, t.fields)) else TupleType(fields)
        if isinstance(t, FuncType):
            args = tuple(self.resolve(a) for a in t.arg_types)
            ret = self.resolve(t.ret_type)
            if ret is t.ret_type and all(a is b for a, b in zip(args, t.arg_types)):
                return t
            return FuncType(args, ret, t.type_params, t.type_constraints)
        if isinstance(t, RefType):
            v = self.resolve(t.value)
            return t if v is t.value else RefType(v)
        if isinstance(t, TypeCall):
            args = tuple(self.resolve(a) for a in t.args)
            return t if all(a is b for a, b in zip(args, t.args)) else TypeCall(t.func, args)
        return t

    def occurs(self, hole, t) -> bool:
        t = self.find(t)
        if t is hole:
            return True
        if isinstance(t, TupleType):
            return any(self.occurs(hole, f) for f in t.fields)
        if isinstance(t, FuncType):
            return any(self.occurs(hole, a) for a in t.arg_types) or self.occurs(hole, t.ret_type)
        if isinstance(t, RefType):
            return self.occurs(hole, t.value)
        if isinstance(t, TypeCall):
            return any(self.occurs(hole, a) for a in t.args)
        return False

    def unify(self, a, b):
        a, b = self.find(a), self.find(b)
        if a is b:
            return a
        if isinstance(a, IncompleteType):
            if not isinstance(b, (TensorType, IncompleteType)) and self.occurs(a, b):
                raise _UnifyError("a type would contain itself")
            self.parent[a] = b
            return b
        if isinstance(b, IncompleteType):
            return self.unify(b, a)
        if isinstance(a, TensorType) and isinstance(b, TensorType):
            if a.dtype != b.dtype:
                raise _UnifyError(f"dtype {a.dtype} vs {b.dtype}")
            if len(a.shape) != len(b.shape):
                raise _UnifyError(f"rank {len(a.shape)} vs {len(b.shape)}")
            for i, (x, y) in enumerate(zip(a.shape, b.shape)):
                if not _dim_unify(x, y):
                    raise _UnifyError(f"dimension {i}: {x} vs {y}")
            return a
        if isinstance(a, TupleType) and isinstance(b, TupleType):
            if len(a.fields) != len(b.fields):
                raise _UnifyError(f"tuple of {len(a.fields)} fields vs {len(b.fields)}")
            for x, y in zip(a.fields, b.fields):
                self.unify(x, y)
            return a
        if isinstance(a, FuncType) and isinstance(b, FuncType):
            if len(a.arg_types) != len(b.arg_types):
                raise _UnifyError(f"function of {len(a.arg_types)} parameters vs {len(b.arg_types)}")
            if len(a.type_params) != len(b.type_params):
                raise _UnifyError("functions with different numbers of type parameters")
            if b.type_params:
                b = substitute_type_vars(b, dict(zip(b.type_params, a.type_params)))
            for x, y in zip(a.arg_types, b.arg_types):
                self.unify(x, y)
            self.unify(a.ret_type, b.ret_type)
            return a
        if isinstance(a, RefType) and isinstance(b, RefType):
            self.unify(a.value, b.value)
            return a
        if isinstance(a, TypeCall) and isinstance(b, TypeCall):
            self.unify(a.func, b.func)
            if len(a.args) != len(b.args):
                raise _UnifyError("type calls with different numbers of arguments")
            for x, y in zip(a.args, b.args):
                self.unify(x, y)
            return a
        if isinstance(a, GlobalTypeVar) and isinstance(b, GlobalTypeVar):
            if a.name_hint == b.name_hint:
                return a
        raise _UnifyError()


def _dim_unify(x, y) -> bool:
    if isinstance(x, AnyDim) or isinstance(y, AnyDim):
        return True
    if isinstance(x, int) and isinstance(y, int):
        return x == y
    if isinstance(x, int) or isinstance(y, int):
        return False
    from ..ir.types import dim_equal

    if dim_equal(x, y):
        return True
    from tvm import sym

    return bool(sym.Analyzer().can_prove_equal(x, y))


def substitute_type_vars(t, mapping: dict):
    """Replace type variables in ``t`` by ``mapping``."""
    if not mapping:
        return t
    if isinstance(t, TypeVar):
        return mapping.get(t, t)
    if isinstance(t, TupleType):
        return TupleType([substitute_type_vars(f, mapping) for f in t.fields])
    if isinstance(t, FuncType):
        inner = {k: v for k, v in mapping.items() if k not in t.type_params}
        return FuncType(
            [substitute_type_vars(a, inner) for a in t.arg_types],
            substitute_type_vars(t.ret_type, inner),
            t.type_params,
            t.type_constraints,
        )
    if isinstance(t, RefType):
        return RefType(substitute_type_vars(t.value, mapping))
    if isinstance(t, TypeCall):
        return TypeCall(t.func, [substitute_type_vars(a, mapping) for a in t.args])
    return t


def _instantiate(ft: FuncType) -> FuncType:
    if not ft.type_params:
        return ft
    fresh = {tp: IncompleteType(tp.kind) for tp in ft.type_params}
    return FuncType(
        [substitute_type_vars(a, fresh) for a in ft.arg_types],
        substitute_type_vars(ft.ret_type, fresh),
    )


def _has_incomplete(t) -> bool:
    if isinstance(t, IncompleteType):
        return True
    if isinstance(t, TupleType):
        return any(_has_incomplete(f) for f in t.fields)
    if isinstance(t, FuncType):
        return any(_has_incomplete(a) for a in t.arg_types) or _has_incomplete(t.ret_type)
    if isinstance(t, RefType):
        return _has_incomplete(t.value)
    if isinstance(t, TypeCall):
        return any(_has_incomplete(a) for a in t.args)
    return False


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
        stack = [(root, 0)]
        while stack:
            e, stage = stack.pop()
            if stage == 0:
                if e in types:
                    continue
                t = type(e)
                if reuse and t is not Var and getattr(e, "_type_sealed", False):
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
                elif t is Let:
                    self._bind(e.var)
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
        ft = _instantiate(ft)
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
        except RelayError:
            raise
        except Exception as err:  # a bug in a relation must still point at the call
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


# ---- exhaustiveness (usefulness of a wildcard after all clauses) -----------------------------

def _ctor_arity(c):
    return len(c.inputs)


def _useful(rows, vec, sigs) -> bool:
    if not vec:
        return not rows
    head = vec[0]
    if isinstance(head, PatternVar):
        head = PatternWildcard()
    if isinstance(head, PatternConstructor):
        return _useful(_specialize(rows, head.constructor, len(head.patterns)),
                       list(head.patterns) + vec[1:], sigs)
    if isinstance(head, PatternTuple):
        return _useful(_specialize(rows, "tuple", len(head.patterns)), list(head.patterns) + vec[1:], sigs)
    # wildcard
    used = {}
    tuple_arity = None
    for r in rows:
        p = r[0]
        if isinstance(p, PatternConstructor):
            used[p.constructor.name_hint] = p.constructor
        elif isinstance(p, PatternTuple):
            tuple_arity = len(p.patterns)
    if tuple_arity is not None:
        return _useful(_specialize(rows, "tuple", tuple_arity), [PatternWildcard()] * tuple_arity + vec[1:], sigs)
    if used:
        some = next(iter(used.values()))
        allc = sigs(some)
        if all(c.name_hint in used for c in allc):
            return any(
                _useful(_specialize(rows, c, _ctor_arity(c)), [PatternWildcard()] * _ctor_arity(c) + vec[1:], sigs)
                for c in allc
            )
    default = [r[1:] for r in rows if isinstance(r[0], (PatternWildcard, PatternVar))]
    return _useful(default, vec[1:], sigs)


def _specialize(rows, ctor, arity):
    out = []
    for r in rows:
        p = r[0]
        if isinstance(p, (PatternWildcard, PatternVar)):
            out.append([PatternWildcard()] * arity + r[1:])
        elif ctor == "tuple" and isinstance(p, PatternTuple):
            out.append(list(p.patterns) + r[1:])
        elif isinstance(p, PatternConstructor) and ctor != "tuple" and p.constructor.name_hint == ctor.name_hint:
            out.append(list(p.patterns) + r[1:])
    return out


def check_exhaustive(m: Match, inf: TypeInferencer) -> None:
    def sigs(c):
        return inf.mod[c.belong_to].constructors

    rows = [[c.lhs] for c in m.clauses]
    if _useful(rows, [PatternWildcard()], sigs):
        missing = []
        covered = {c.lhs.constructor.name_hint for c in m.clauses if isinstance(c.lhs, PatternConstructor)}
        top = [c.lhs for c in m.clauses if isinstance(c.lhs, PatternConstructor)]
        if top:
            missing = [c.name_hint for c in sigs(top[0].constructor) if c.name_hint not in covered]
        hint = f"; no clause for {', '.join(missing)}" if missing else ""
        raise TypeInferenceError(
            f"match is not exhaustive: some values of type "
            f"{type_str(inf.solver.resolve(inf.types[m.data]))} match no clause{hint}. Add clauses "
            f"or use an incomplete match (match?)\n  in expression: {short(m)}",
            m.span,
        )


# ---- entry points ------------------------------------------------------------------------------

def infer_module(mod: IRModule, reuse: bool = True) -> IRModule:
    """Type-check every function of ``mod`` (jointly, so globals may call each other); fills in
    ``checked_type`` everywhere and returns a new module holding the same functions.

    Args:
        reuse: take the types of sealed expressions (typed before, see ``_SEALABLE``) as they
            are; ``False`` types every expression again (the ``relay.debug.check_each_pass``
            check, and tests that the reused types are right).

    Raises:
        TypeInferenceError: with the expression, expected and actual types and the span.
        WellFormedError: a function uses a variable it does not bind.
    """
    with paused_gc():
        return _infer_module(mod, reuse)


def _infer_module(mod: IRModule, reuse: bool = True) -> IRModule:
    from ..analysis.well_formed import check_well_formed

    funcs = mod.functions

    def sealed(f):
        return reuse and getattr(f, "_type_sealed", False)

    if all(sealed(f) for f in funcs.values()):
        # every function was type-checked before and refers to no global: nothing can have
        # changed (a sealed function was well formed too, and it is immutable)
        return mod.copy()
    for gv, f in funcs.items():
        if not sealed(f):
            check_well_formed(f, False, f"@{gv.name_hint}")
    inf = TypeInferencer(mod, reuse=reuse)
    missing = {}
    for gv, f in funcs.items():
        sig = inf.global_type(gv)
        start = len(inf.unannotated)
        inf.visit(f)
        missing[gv] = inf.unannotated[start:]
        inf._unify(inf.types[f], sig, f, f"the type of @{gv.name_hint}")
    inf.finish()
    out = mod.copy()
    for gv, f in funcs.items():
        nf = annotate_missing(f, missing[gv])
        if nf is not f:
            out[gv] = nf
    return out


def annotate_missing(func, missing=None):
    """A copy of a type-checked ``func`` whose variables bound without an annotation carry their
    inferred type (Relay's ``update_missing_type_annotation``), with ``checked_type`` set on
    every rebuilt node. The caller's own expression is left as it was.

    This is what lets a later pass remove the operator that determined a parameter's type
    (SimplifyInference dropping ``nn.batch_norm``, ...) and still leave a typeable program.
    Returns ``func`` itself when every variable is annotated already.

    Args:
        missing: the variables ``func`` binds without an annotation, when the caller knows
            them already (the inferencer records them); found by a walk over ``func`` if None.
    """
    from ..ir.functor import ExprMutator

    if missing is None:
        from ..analysis.free import bound_vars

        missing = [v for v in bound_vars(func) if v.type_annotation is None]
    if not missing:
        return func
    fresh = {}
    for v in missing:
        nv = fresh[v] = Var(v.name_hint, v.checked_type, v.span)
        nv._set_checked_type(v.checked_type)  # sealed parents are not walked again

    class _Annotate(ExprMutator):
        def visit_var(self, v):
            return fresh.get(v, v)

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
        elif not getattr(c, "_type_sealed", False):
            return False
    return True


def infer_expr(expr, mod: IRModule | None = None):
    """Type-check a bare expression (free variables take their annotations); returns ``expr``
    with ``checked_type`` filled in. Globals and constructors are looked up in ``mod``."""
    from ..analysis.well_formed import check_well_formed

    check_well_formed(expr, allow_free=True)
    if mod is not None:
        mod = infer_module(mod) if len(mod) else mod
    inf = TypeInferencer(mod, allow_free_vars=True)
    if mod is not None:
        for gv, f in mod.functions.items():
            inf.global_types[gv] = f.checked_type
    inf.visit(expr)
    inf.finish()
    return expr


def InferTypeLocal(expr) -> Type:  # noqa: N802 - Relay's name
    """The type of a bare expression (``relay.transform.InferTypeLocal``)."""
    return infer_expr(expr).checked_type



__all__ = ["infer_module", "infer_expr", "InferTypeLocal", "TypeSolver", "TypeInferencer", "short"]

"""The type solver of inference: unification of types with a union-find over incomplete
types (symbolic dimensions unified with ``tvm.arith``), instantiation of polymorphic function
types, and :func:`short`, how errors quote an expression."""

from __future__ import annotations

from ..ir.adt import (
    Constructor,
    Match,
)
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.types import (
    AnyDim,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
)


class _UnifyError(Exception):
    def __init__(self, detail: str = ""):
        super().__init__(detail)
        self.detail = detail


def short(expr, limit: int = 160) -> str:
    """A one-line rendering of an expression for error messages: the node with its direct
    arguments named, not the whole program."""

    def name(e, depth=1):
        if isinstance(e, Call) and depth:  # a nested call by its operator and arguments
            return f"{name(e.op, 0)}({', '.join(name(a, depth - 1) for a in e.args)})"
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
            # string values quoted, as the text format writes them
            parts += [f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}"
                      for k, v in e.attrs.items() if v not in (None, "")]
        s = f"{name(e.op, 0)}({', '.join(parts)})"
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
            if len(a.type_params) < len(b.type_params):
                a, b = b, a
            if a.type_params:
                # Relay's rule for quantified functions: the type parameters of the one with more
                # are renamed to the other's, and its extra ones become unknowns to solve
                ren = dict(zip(a.type_params, b.type_params))
                for tp in a.type_params[len(b.type_params):]:
                    ren[tp] = IncompleteType(tp.kind)
                a = substitute_type_vars(FuncType(a.arg_types, a.ret_type), ren)
            for x, y in zip(a.arg_types, b.arg_types):
                self.unify(x, y)
            self.unify(a.ret_type, b.ret_type)
            return b
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


def _instantiate(ft: FuncType, fresh_out: list | None = None) -> FuncType:
    """``ft`` with fresh incomplete types for its type parameters (appended, in order, to
    ``fresh_out`` when given: a call's type arguments)."""
    if not ft.type_params:
        return ft
    fresh = {tp: IncompleteType(tp.kind) for tp in ft.type_params}
    if fresh_out is not None:
        fresh_out.extend(fresh[tp] for tp in ft.type_params)
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

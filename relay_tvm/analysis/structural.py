"""Structural equality (alpha-equivalence with graph sharing) and a matching structural hash.

Two programs are structurally equal when they are the same up to the names of bound variables:
variables bound at the same places (parameters, lets, patterns, type parameters) correspond, free
variables must be the same object (or, with ``map_free_vars=True``, correspond one to one),
constants hold equal values, attributes are equal, global variables and constructors have the
same names. Sharing counts, as in Relay: a node used twice on one side must correspond to a
single node used twice on the other. Both algorithms are iterative.
"""

from __future__ import annotations

import tvm
import tvm_ffi

from ..errors import StructuralMismatchError
from ..ir.adt import (
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from ..ir.attrs import public_attrs
from ..ir.expr import (
    Call,
    Constant,
    Expr,
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
    AnyDim,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeRelation,
    TypeVar,
    dim_equal,
)
from ..op.registry import Op


class _Mismatch(Exception):
    pass


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.vmap: dict = {}  # lhs var -> rhs var
        self.vrev: dict = {}
        self.tmap: dict = {}  # lhs type var -> rhs type var
        self.trev: dict = {}
        self.dmap: dict = {}  # hash of a lhs TIR variable (symbolic dimension) -> rhs one
        self.drev: dict = {}
        self.pairs: dict = {}  # id(lhs node) -> rhs node
        self.prev: dict = {}
        self.first = None  # the first pair of expression nodes found different

    # -- types --
    def bind_tvar(self, a, b):
        if self.tmap.get(a, b) is not b or self.trev.get(b, a) is not a:
            raise _Mismatch
        self.tmap[a] = b
        self.trev[b] = a

    def type_eq(self, a, b) -> bool:
        if a is b:
            return True
        if a is None or b is None:
            return a is None and b is None
        if type(a) is not type(b):
            return False
        if isinstance(a, TensorType):
            if a == b:
                return True
            if not self.map_free_vars or a.dtype != b.dtype or len(a.shape) != len(b.shape):
                return False
            # symbolic dimensions are free TIR variables: they pair one to one, like free Relay
            # variables (0.19 mapped them; a parsed program has its own `n`)
            return all(self.dim_eq(x, y) for x, y in zip(a.shape, b.shape))
        if isinstance(a, TypeVar):
            if a in self.tmap:
                return self.tmap[a] is b
            if self.map_free_vars and b not in self.trev:
                self.bind_tvar(a, b)
                return True
            return False
        if isinstance(a, GlobalTypeVar):
            return a.name_hint == b.name_hint
        if isinstance(a, IncompleteType):
            return True
        if isinstance(a, TupleType):
            return len(a.fields) == len(b.fields) and all(
                self.type_eq(x, y) for x, y in zip(a.fields, b.fields)
            )
        if isinstance(a, FuncType):
            if len(a.type_params) != len(b.type_params) or len(a.arg_types) != len(b.arg_types):
                return False
            # a FuncType binds its type parameters for itself alone: one TypeVar object may
            # quantify two function types (a parameter's annotation and the return type
            # inference gave), which the other side spells with two TypeVars
            saved = []
            for x, y in zip(a.type_params, b.type_params):
                if x.kind != y.kind:
                    return False
                saved.append((x, self.tmap.pop(x, None), y, self.trev.pop(y, None)))
                self.bind_tvar(x, y)
            try:
                return all(self.type_eq(x, y) for x, y in zip(a.arg_types, b.arg_types)) and (
                    self.type_eq(a.ret_type, b.ret_type))
            finally:
                for x, px, y, py in saved:
                    self.tmap.pop(x, None)
                    self.trev.pop(y, None)
                    if px is not None:
                        self.tmap[x] = px
                    if py is not None:
                        self.trev[y] = py
        if isinstance(a, RefType):
            return self.type_eq(a.value, b.value)
        if isinstance(a, TypeCall):
            return (
                self.type_eq(a.func, b.func)
                and len(a.args) == len(b.args)
                and all(self.type_eq(x, y) for x, y in zip(a.args, b.args))
            )
        if isinstance(a, TypeRelation):
            return a.func is b.func and all(self.type_eq(x, y) for x, y in zip(a.args, b.args))
        return a == b

    def dim_eq(self, x, y) -> bool:
        if dim_equal(x, y) and not _is_tir_var(x):
            return True
        if _is_tir_var(x) and _is_tir_var(y):
            kx, ky = hash(x), hash(y)
            px, py = self.dmap.get(kx), self.drev.get(ky)
            if px is None and py is None:
                self.dmap[kx], self.drev[ky] = y, x
                return True
            return px is not None and py is not None and px.same_as(y) and py.same_as(x)
        if isinstance(x, (int, AnyDim)) or isinstance(y, (int, AnyDim)):
            return False
        return bool(tvm_ffi.structural_equal(x, y, map_free_vars=True))

    # -- variables --
    def bind_var(self, a: Var, b: Var):
        if self.vmap.get(a, b) is not b or self.vrev.get(b, a) is not a:
            raise _Mismatch
        if not self.type_eq(a.type_annotation, b.type_annotation):
            raise _Mismatch
        self.vmap[a] = b
        self.vrev[b] = a

    def var_eq(self, a: Var, b: Var) -> bool:
        if a in self.vmap:
            return self.vmap[a] is b
        if b in self.vrev:
            return False
        if a is b:
            if self.map_free_vars:  # the pairing is one to one: %x<->%x, then %y<->%x fails
                self.vmap[a] = b
                self.vrev[b] = a
            return True
        if self.map_free_vars:
            self.bind_var(a, b)
            return True
        return False

    def attrs_eq(self, a, b) -> bool:
        """Attributes, where variables inside values (dict keys) pair as variables do."""
        if _attrs_eq(a, b):
            return True
        fa, fb = getattr(a, "_fields", None), getattr(b, "_fields", None)
        if fa is None or fb is None or a.type_key != b.type_key or fa.keys() != fb.keys():
            return False
        return all(self.value_eq(fa[k], fb[k]) for k in fa)

    def value_eq(self, x, y) -> bool:
        if isinstance(x, Var) and isinstance(y, Var):
            return self.var_eq(x, y)
        if isinstance(x, dict) and isinstance(y, dict):
            return len(x) == len(y) and all(
                self.value_eq(k, q) and self.value_eq(x[k], y[q]) for k, q in zip(x, y))
        if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
            return len(x) == len(y) and all(self.value_eq(p, q) for p, q in zip(x, y))
        if isinstance(x, Expr) and isinstance(y, Expr):
            return structural_equal(x, y)
        return _close(x, y)

    def pattern_eq(self, a, b) -> bool:
        if type(a) is not type(b):
            return False
        if isinstance(a, PatternWildcard):
            return True
        if isinstance(a, PatternVar):
            self.bind_var(a.var, b.var)
            return True
        if isinstance(a, PatternConstructor):
            if not _ctor_eq(a.constructor, b.constructor) or len(a.patterns) != len(b.patterns):
                return False
            return all(self.pattern_eq(x, y) for x, y in zip(a.patterns, b.patterns))
        if isinstance(a, PatternTuple):
            return len(a.patterns) == len(b.patterns) and all(
                self.pattern_eq(x, y) for x, y in zip(a.patterns, b.patterns)
            )
        return False

    # -- expressions --
    def shallow(self, a, b) -> bool:
        """Compare the node itself (not its children); bind the variables it introduces."""
        t = type(a)
        if t is not type(b):
            return False
        if t is Var:
            return self.var_eq(a, b)
        if t is GlobalVar:
            return a.name_hint == b.name_hint
        if t is Constant:
            x, y = a.data, b.data
            if x.dtype != y.dtype or x.shape != y.shape:
                return False
            # bit for bit, as 0.19 (memcmp) and as structural_hash hashes them: 0.0 and -0.0
            # differ (1 / x tells them apart), a NaN equals a NaN of the same bits
            return x.tobytes() == y.tobytes()
        if t is Constructor:
            return _ctor_eq(a, b)
        if t is Call:
            return len(a.args) == len(b.args) and _attrs_eq(a.attrs, b.attrs)
        if t is Function:
            if len(a.params) != len(b.params) or len(a.type_params) != len(b.type_params):
                return False
            for x, y in zip(a.type_params, b.type_params):
                self.bind_tvar(x, y)
            for x, y in zip(a.params, b.params):
                self.bind_var(x, y)
            # after the parameters: attributes may name them ({%x: 1}, 0.19's test_fn_vid_map)
            if not self.attrs_eq(public_attrs(a.attrs), public_attrs(b.attrs)):
                return False
            return self.type_eq(a.ret_type, b.ret_type)
        if t is Let:
            self.bind_var(a.var, b.var)
            return True
        if t is Tuple:
            return len(a.fields) == len(b.fields)
        if t is TupleGetItem:
            return a.index == b.index
        if t in (If, RefCreate, RefRead, RefWrite):
            return True
        if t is Match:
            if a.complete != b.complete or len(a.clauses) != len(b.clauses):
                return False
            return all(self.pattern_eq(x.lhs, y.lhs) for x, y in zip(a.clauses, b.clauses))
        return a is b  # operators

    def expr_eq(self, lhs, rhs) -> bool:
        stack = [(lhs, rhs, None, None)]
        while stack:
            a, b, pa, pb = stack.pop()
            if not self._node_eq(a, b, pa, pb, stack):
                if self.first is None:
                    self.first = (a, b, pa, pb)
                return False
        return True

    def _node_eq(self, a, b, pa, pb, stack) -> bool:
        leaf = isinstance(a, (Var, GlobalVar, Constant, Constructor)) or not children(a)
        if not leaf:
            seen = self.pairs.get(id(a))
            if seen is not None:
                return seen is b
            if id(b) in self.prev:
                return False
            self.pairs[id(a)] = b
            self.prev[id(b)] = a
        try:
            if not self.shallow(a, b):
                return False
        except _Mismatch:
            if self.first is None:
                self.first = (a, b, pa, pb)
            raise
        ca, cb = children(a), children(b)
        if len(ca) != len(cb):
            return False
        stack.extend((x, y, a, b) for x, y in zip(reversed(ca), reversed(cb)))
        return True


def _is_tir_var(d) -> bool:
    return isinstance(d, tvm.tirx.Var)


def _ctor_eq(a, b) -> bool:
    return a.name_hint == b.name_hint and a.belong_to.name_hint == b.belong_to.name_hint


def _attrs_eq(a, b) -> bool:
    if a is None or b is None:
        return (a is None or len(a) == 0) and (b is None or len(b) == 0)
    if a == b:
        return True
    # TVM's structural equality compares float attributes with an absolute tolerance of 1e-9
    # (epsilon=1e-5 equals the float32 constant 1e-5 read back as a double)
    fa, fb = getattr(a, "_fields", None), getattr(b, "_fields", None)
    if fa is None or fb is None or a.type_key != b.type_key or fa.keys() != fb.keys():
        return False
    return all(_close(fa[k], fb[k]) for k in fa)


def _close(x, y) -> bool:
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return len(x) == len(y) and all(_close(p, q) for p, q in zip(x, y))
    if isinstance(x, float) or isinstance(y, float):
        try:
            return abs(float(x) - float(y)) <= 1e-9
        except (TypeError, ValueError):
            return False
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - incomparable values are different
        return False


def _typedata_eq(eq: _Equal, a: TypeData, b: TypeData) -> bool:
    if a.header.name_hint != b.header.name_hint or len(a.type_vars) != len(b.type_vars):
        return False
    for x, y in zip(a.type_vars, b.type_vars):
        eq.bind_tvar(x, y)
    if len(a.constructors) != len(b.constructors):
        return False
    for c, d in zip(a.constructors, b.constructors):
        if c.name_hint != d.name_hint or len(c.inputs) != len(d.inputs):
            return False
        if not all(eq.type_eq(x, y) for x, y in zip(c.inputs, d.inputs)):
            return False
    return True


def structural_equal(lhs, rhs, map_free_vars: bool = False) -> bool:
    """Whether ``lhs`` and ``rhs`` (expressions, types or IRModules) are alpha-equivalent.

    Args:
        map_free_vars: let free variables of ``lhs`` correspond to distinct free variables of
            ``rhs`` instead of requiring the same objects.
    """
    return _structural_equal(_Equal(map_free_vars), lhs, rhs)


def _structural_equal(eq: _Equal, lhs, rhs) -> bool:
    try:
        if isinstance(lhs, IRModule) or isinstance(rhs, IRModule):
            if not (isinstance(lhs, IRModule) and isinstance(rhs, IRModule)):
                return False
            if set(lhs._global_type_vars) != set(rhs._global_type_vars):
                return False
            for name, gtv in lhs._global_type_vars.items():
                if not _typedata_eq(eq, lhs[gtv], rhs[rhs.get_global_type_var(name)]):
                    return False
            if set(lhs._global_vars) != set(rhs._global_vars):
                return False
            return all(
                eq.expr_eq(lhs[name], rhs[name]) for name in sorted(lhs._global_vars)
            )
        if isinstance(lhs, TypeData):
            return isinstance(rhs, TypeData) and _typedata_eq(eq, lhs, rhs)
        from ..ir.types import Type

        if isinstance(lhs, Type) or isinstance(rhs, Type):
            return eq.type_eq(lhs, rhs)
        return eq.expr_eq(lhs, rhs)
    except _Mismatch:
        return False


def _snippet(node, lines: int = 6, width: int = 160) -> str:
    """``node``'s text without the version line and free variable declarations, cut short."""
    text = [ln for ln in str(node).splitlines()
            if not ln.startswith(("#[version", "free_var "))]
    cut = [ln if len(ln) <= width else ln[:width - 3] + "..." for ln in text[:lines]]
    if len(text) > lines:
        cut.append(f"... ({len(text) - lines} more lines)")
    return "\n".join("    " + ln for ln in cut)


def first_difference(lhs, rhs, map_free_vars: bool = False) -> str | None:
    """The first pair of expression nodes where ``lhs`` and ``rhs`` differ, as text (``None``
    when they are equal, or differ elsewhere than in an expression: module contents, types).

    Variables bound at corresponding places are paired, so a renamed variable is not a
    difference; a variable shows which one its counterpart was paired with."""
    if isinstance(lhs, (list, tuple)) and isinstance(rhs, (list, tuple)):
        if len(lhs) != len(rhs):
            return None
        for i, (x, y) in enumerate(zip(lhs, rhs)):
            where = first_difference(x, y, map_free_vars)
            if where is not None:
                return f"item {i}: {where}"
        return None
    eq = _Equal(map_free_vars)
    if _structural_equal(eq, lhs, rhs) or eq.first is None:
        return None
    a, b, pa, pb = eq.first
    if isinstance(a, Op) and pa is not None:  # a call of another operator: show the calls
        a, b, pa, pb = pa, pb, None, None
    note = ""
    if type(a) is not type(b):
        note = f" (a {type(a).__name__} against a {type(b).__name__})"
    elif isinstance(a, Var):
        if a in eq.vmap:
            note = f" (%{a.name_hint} was paired with %{eq.vmap[a].name_hint} where it is bound)"
        elif b in eq.vrev:
            note = f" (%{b.name_hint} was paired with %{eq.vrev[b].name_hint} where it is bound)"
        elif not map_free_vars:
            note = (" (free variables must be the same object; map_free_vars=True pairs "
                    "distinct ones)")
    text = f"first difference{note} ---\nlhs:\n{_snippet(a)}\nrhs:\n{_snippet(b)}"
    if pa is not None:
        text += f"\nin lhs:\n{_snippet(pa)}\nin rhs:\n{_snippet(pb)}"
    return text


def mismatch_message(lhs, rhs, map_free_vars: bool = False) -> str:
    """The message of a failed ``assert_structural_equal``: both sides, then their first
    difference (or a text diff when the difference is not in an expression)."""
    where = first_difference(lhs, rhs, map_free_vars)
    if where is not None:
        where = "\n--- " + where
    else:
        import difflib

        a, b = str(lhs).splitlines(), str(rhs).splitlines()
        diff = list(difflib.unified_diff(a, b, "lhs", "rhs", lineterm="", n=1))
        where = ("\n--- where the texts differ ---\n" + "\n".join(diff[:40]) if diff else
                 "\n(the texts are equal: the difference is in what text does not show, e.g. "
                 "attribute value types, spans or variable identity)")
    return f"structural mismatch:\n--- lhs ---\n{lhs}\n--- rhs ---\n{rhs}{where}"


def assert_graph_equal(lhs, rhs, map_free_vars: bool = False) -> None:
    """Raise :class:`~relay_tvm.errors.StructuralMismatchError` (a ``RelayError`` and a
    ``ValueError``) showing both programs and their first difference when they are not
    structurally equal."""
    if not structural_equal(lhs, rhs, map_free_vars):
        raise StructuralMismatchError(mismatch_message(lhs, rhs, map_free_vars))


assert_structural_equal = assert_graph_equal


# ---- hashing -----------------------------------------------------------------------------------


def _type_hash(t, tvars: dict) -> int:
    if t is None:
        return 0
    if isinstance(t, TensorType):  # symbolic dimensions by structure, not by identity
        return hash(("T", t.dtype, tuple(
            d if isinstance(d, int) else hash(d) if isinstance(d, AnyDim)
            else hash("dim") if _is_tir_var(d)
            else int(tvm_ffi.structural_hash(d, map_free_vars=True)) for d in t.shape)))
    if isinstance(t, TypeVar):
        return hash(("TV", tvars.get(t, t.name_hint), int(t.kind)))
    if isinstance(t, GlobalTypeVar):
        return hash(("GTV", t.name_hint))
    if isinstance(t, IncompleteType):
        return hash("_")
    if isinstance(t, TupleType):
        return hash(("Tup", tuple(_type_hash(f, tvars) for f in t.fields)))
    if isinstance(t, FuncType):
        tv = dict(tvars)
        for p in t.type_params:
            tv[p] = len(tv)
        return hash(("Fn", tuple(_type_hash(a, tv) for a in t.arg_types), _type_hash(t.ret_type, tv)))
    if isinstance(t, RefType):
        return hash(("Ref", _type_hash(t.value, tvars)))
    if isinstance(t, TypeCall):
        return hash(("TC", _type_hash(t.func, tvars), tuple(_type_hash(a, tvars) for a in t.args)))
    return hash(type(t).__name__)


def _attrs_hash(a) -> int:
    if a is None or len(a) == 0:
        return 0
    fields = getattr(a, "_fields", None)
    if fields is not None and any(isinstance(v, dict) for v in fields.values()):
        # variables in values pair by position (see _Equal.attrs_eq): hash without them
        return hash((a.type_key, tuple((k, _value_hash(v)) for k, v in sorted(fields.items()))))
    return hash(a)


def _value_hash(v) -> int:
    if isinstance(v, Var):
        return hash("Var")
    if isinstance(v, dict):
        return hash(tuple((_value_hash(k), _value_hash(x)) for k, x in v.items()))
    if isinstance(v, (tuple, list)):
        return hash(tuple(_value_hash(x) for x in v))
    try:
        return hash(v)
    except TypeError:
        return hash(type(v).__name__)


def _pattern_hash(p, index) -> int:
    if isinstance(p, PatternWildcard):
        return hash("P_")
    if isinstance(p, PatternVar):
        return hash(("PV", index.get(p.var, 0)))
    if isinstance(p, PatternConstructor):
        return hash(("PC", p.constructor.name_hint, tuple(_pattern_hash(q, index) for q in p.patterns)))
    if isinstance(p, PatternTuple):
        return hash(("PT", tuple(_pattern_hash(q, index) for q in p.patterns)))
    return 0


def structural_hash(node, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`: alpha-equivalent programs hash alike."""
    if isinstance(node, IRModule):
        return hash(tuple((name, structural_hash(node[name])) for name in sorted(node._global_vars)))
    from ..ir.types import Type

    if isinstance(node, Type):
        return _type_hash(node, {})
    from ..ir.free import _binders, _preorder

    index: dict = {}
    tvars: dict = {}
    for e in _preorder(node):
        for v in _binders(e):
            index.setdefault(v, len(index))
        if isinstance(e, Function):
            for tp in e.type_params:
                tvars.setdefault(tp, len(tvars))
    hashes: dict = {}
    stack = [(node, False)]
    while stack:
        e, ready = stack.pop()
        if id(e) in hashes:
            continue
        cs = children(e)
        if not ready:
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(cs) if id(c) not in hashes)
            continue
        ch = tuple(hashes[id(c)] for c in cs)
        t = type(e)
        if t is Var:
            if e in index:
                h = hash(("V", index[e], _type_hash(e.type_annotation, tvars)))
            else:
                h = hash(("FV", 0 if map_free_vars else id(e)))
        elif t is GlobalVar:
            h = hash(("GV", e.name_hint))
        elif t is Constant:
            h = hash(("C", e.data.dtype, e.data.shape, e.data.tobytes()))
        elif t is Constructor:
            h = hash(("Ctor", e.name_hint, e.belong_to.name_hint))
        elif t is Call:
            h = hash(("Call", ch, _attrs_hash(e.attrs)))
        elif t is Function:
            h = hash(("Fn", ch, _type_hash(e.ret_type, tvars), _attrs_hash(public_attrs(e.attrs)), len(e.type_params)))
        elif t is TupleGetItem:
            h = hash(("TGI", ch, e.index))
        elif t is Match:
            h = hash(("M", ch, e.complete, tuple(_pattern_hash(c.lhs, index) for c in e.clauses)))
        elif t in (Let, If, Tuple, RefCreate, RefRead, RefWrite):
            h = hash((t.__name__, ch))
        else:
            h = hash(("Op", getattr(e, "name", id(e))))
        hashes[id(e)] = h
    return hash((hashes[id(node)], _sharing_signature(node, index)))


def _sharing_signature(node, bound: dict) -> tuple:
    """How ``node``'s graph shares subexpressions and free variables, in the order
    :meth:`_Equal.expr_eq` visits it (preorder, left to right): for each repeated reference to
    an already visited compound expression or free variable, its first-visit number. Equal
    programs have equal signatures; ``add(%0, %0)`` (one ``%0``) and ``add(a, b)`` (two equal
    trees) do not, as structural equality tells them apart (0.19's ``test_graph_equal``)."""
    seen: dict = {}
    sig = []
    stack = [node]
    while stack:
        e = stack.pop()
        if isinstance(e, Var):
            if e not in bound:  # free: which one, by first occurrence
                sig.append(seen.setdefault(id(e), len(seen)))
            continue
        if isinstance(e, (GlobalVar, Constant, Constructor)):
            continue
        cs = children(e)
        if not cs:
            continue
        k = seen.get(id(e))
        if k is not None:
            sig.append(("R", k))
            continue
        seen[id(e)] = len(seen)
        stack.extend(reversed(cs))
    return tuple(sig)


__all__ = ["structural_equal", "structural_hash", "assert_graph_equal", "assert_structural_equal"]

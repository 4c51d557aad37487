"""The printer of Relay's text format, version 0.0.5 (as tvm.relay 0.19 printed it).

Layout of the output::

    #[version = "0.0.5"]
    type List[A] {
      Cons(A, List[A]),
      Nil,
    }

    def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32]) -> Tensor[(1, 4), float32] {
      %0 = nn.dense(%x, %w, units=4);
      %1 = add(%0, 1f);
      multiply(%1, %1)
    }

    #[metadata]
    {"relay.Constant": [...]}

Placement: an expression is printed inline only where it is used once and that use is the tail
of a block (function body, ``if`` branch, ``match`` arm, ``let`` body) or the value of a ``let``;
every other compound expression is bound once to ``%n = ...;`` in the innermost block that
encloses all its uses, so sharing (a DAG) survives the round trip and no printed expression is
deeper than one node. Both passes are iterative: a 100,000-node chain prints without recursion.

Scalar constants print inline (``1f``, ``2i64``, ``3i8``, ``1.5f16``, ``True``); other constants
print as ``meta[relay.Constant][n]`` with their values in the ``#[metadata]`` section (JSON,
raw little-endian bytes in base64, see :mod:`relay_tvm.text.metadata`).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from .._gc import paused_gc
from ..ir.adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from ..ir.attrs import FIELD_KINDS, Attrs, _values_equal, internal_attrs, public_attrs
from ..ir.base import RelayExpr
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
from ..ir.functor import post_order, value_children
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
    TypeKind,
    TypeVar,
)
from .metadata import encode_metadata

VERSION = "0.0.5"
META_OMITTED = "// meta data omitted. you can use show_meta_data=True to include meta data"

# dtype -> literal suffix of inline scalars (int32 and float32 get the short forms)
SCALAR_SUFFIX = {
    "int32": "",
    "int64": "i64",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float32": "f",
    "float16": "f16",
    "float64": "f64",
}

_ATOMIC = (Var, GlobalVar, Constant, Constructor)
_DIM_INFIX = {"Add": "+", "Sub": "-", "Mul": "*"}
_DIM_CALLS = {"FloorDiv": "floordiv", "FloorMod": "floormod", "Max": "max", "Min": "min"}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TAIL, _LETVAL, _ARG = 0, 1, 2


def _is_atomic(e) -> bool:
    return isinstance(e, _ATOMIC) or not isinstance(e, _COMPOUND)


_COMPOUND = (Call, Function, Let, If, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite, Match)


def _compound_children(n) -> list:
    return [c for c in value_children(n) if not _is_atomic(c)]


def _placement(root, block: _Block):
    """Pass 1 of printing ``root`` as the tail of ``block``: where each compound node is printed.

    Returns:
        ``(home, inline, own)``: by node id, the block that prints the node, whether it is
        printed inline in its single user (else bound to a ``%n``), and the blocks a node opens
        (a ``let`` chain, a function body, ``if`` arms, ``match`` clauses).
    """
    order = post_order(root, _compound_children)
    uses = {id(root): [(block, _TAIL)]}
    home, inline, own = {}, {}, {}
    for n in reversed(order):
        us = uses.pop(id(n))
        if len(us) == 1 and us[0][1] != _ARG:
            h, inl = us[0][0], True
        else:
            h, inl = us[0][0], False
            for b, _ in us[1:]:
                h = _lca(h, b)
        home[id(n)], inline[id(n)] = h, inl
        t = type(n)
        if t is Let:
            chain = inl and us[0][1] == _TAIL
            b = h if chain else _Block(h)
            own[id(n)], own[id(n), "chain"] = b, chain
            edges = ((n.value, b, _LETVAL), (n.body, b, _TAIL))
        elif t is Function:
            b = own[id(n)] = _Block(h)
            edges = ((n.body, b, _TAIL),)
        elif t is If:
            bt, bf = _Block(h), _Block(h)
            own[id(n)] = (bt, bf)
            edges = ((n.cond, h, _ARG), (n.true_branch, bt, _TAIL), (n.false_branch, bf, _TAIL))
        elif t is Match:
            bs = tuple(_Block(h) for _ in n.clauses)
            own[id(n)] = bs
            edges = ((n.data, h, _ARG), *((c.rhs, b, _TAIL) for c, b in zip(n.clauses, bs)))
        else:
            edges = tuple((c, h, _ARG) for c in value_children(n))
        for c, b, k in edges:
            if not _is_atomic(c):
                uses.setdefault(id(c), []).append((b, k))
    return home, inline, own


class _Block:
    """A ``{ ... }`` scope: the ``%n = ...;`` and ``let`` lines printed in it."""

    __slots__ = ("parent", "depth", "lines")

    def __init__(self, parent):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.lines = []


def _lca(a: _Block, b: _Block) -> _Block:
    while a.depth > b.depth:
        a = a.parent
    while b.depth > a.depth:
        b = b.parent
    while a is not b:
        a, b = a.parent, b.parent
    return a


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def _block_text(block: _Block, tail: str) -> str:
    items = [*block.lines, tail]
    return "{\n  " + "\n  ".join(_indent(x) for x in items) + "\n}"


def quote(s: str) -> str:
    """A string literal of the text format (JSON escapes)."""
    return json.dumps(s)


def _float_text(v: float) -> str:
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s


class Printer:
    """Prints expressions, types and modules. One printer per ``astext`` call; it owns the
    metadata table (constants printed as ``meta[relay.Constant][n]``).

    Args:
        show_meta_data: append the ``#[metadata]`` section when constants went to it.
        show_types: add ``/* ty=... */`` comments with the inferred types of bound expressions
            (where type inference has run).
        show_spans: add ``span=...`` to those comments (e.g. the MXNet node an importer
            converted the expression from).
    """

    def __init__(self, show_meta_data: bool = True, show_types: bool = False,
                 show_spans: bool = False, annotate=None):
        self.show_meta_data = show_meta_data
        self.show_types = show_types
        self.show_spans = show_spans
        self.annotate = annotate
        self.meta: list = []
        self.meta_index: dict = {}
        self.function_attrs: dict = {}  # global name -> relay_tvm's internal attributes
        self._attr_defaults: dict = {}
        self._reset_names()

    # ---- names --------------------------------------------------------------------------------
    def _reset_names(self):
        self.var_names: dict = {}
        self.used_names: set = set()
        self.next_suffix: dict = {}
        self.free_vars: list = []

    def _fresh(self, hint: str) -> str:
        # 0.19 kept '/' in names (importers' scopes: %base/x); the lexer reads it between
        # name characters
        base = re.sub(r"/(?![A-Za-z_])", "_", re.sub(r"[^A-Za-z0-9_/]", "_", hint or ""))
        if not base or not (base[0].isalpha() or base[0] == "_"):
            base = "v" + base
        name = base
        if name in self.used_names:
            i = self.next_suffix.get(base, 1)
            while f"{base}{i}" in self.used_names:
                i += 1
            self.next_suffix[base] = i + 1
            name = f"{base}{i}"
        self.used_names.add(name)
        return name

    def bind_var(self, v: Var) -> str:
        """Name ``v`` at its binding site and return its declaration ``%x: T``."""
        name = self.var_names.get(v)
        if name is None:
            name = self.var_names[v] = self._fresh(v.name_hint)
        if v.type_annotation is not None:
            return f"%{name}: {self.type(v.type_annotation)}"
        return f"%{name}"

    def var_ref(self, v: Var) -> str:
        name = self.var_names.get(v)
        if name is None:  # a free variable
            name = self.var_names[v] = self._fresh(v.name_hint)
            self.free_vars.append(v)
        return f"%{name}"

    # ---- types ----------------------------------------------------------------------------------
    def type(self, t) -> str:
        if isinstance(t, TensorType):
            if not t.shape:
                return t.dtype
            return f"Tensor[({', '.join(self.dim(d) for d in t.shape)}), {t.dtype}]"
        if isinstance(t, TupleType):
            inner = ", ".join(self.type(f) for f in t.fields)
            return f"({inner},)" if len(t.fields) == 1 else f"({inner})"
        if isinstance(t, FuncType):
            return (
                f"fn {self.type_params(t.type_params)}"
                f"({', '.join(self.type(a) for a in t.arg_types)}) -> {self.type(t.ret_type)}"
            )
        if isinstance(t, (TypeVar, GlobalTypeVar)):
            return t.name_hint
        if isinstance(t, TypeCall):
            return f"{self.type(t.func)}[{', '.join(self.type(a) for a in t.args)}]"
        if isinstance(t, RefType):
            return f"ref({self.type(t.value)})"
        if isinstance(t, IncompleteType):
            return "_"
        return f"<{type(t).__name__}>"

    @staticmethod
    def dim(d, prec: int = 0) -> str:
        """A dimension: ``3``, ``?``, or a symbolic expression such as ``n * 2 + 1``; ``prec``
        is the binding strength of the surrounding operator (parentheses where needed)."""
        if isinstance(d, AnyDim):
            return "?"
        if isinstance(d, int):
            return str(d)
        kind = type(d).__name__
        if kind == "IntImm":
            return str(int(d.value))
        if kind in ("Var", "SizeVar") and _NAME_RE.match(d.name):
            return d.name
        if kind in _DIM_INFIX:
            op = _DIM_INFIX[kind]
            mine = 2 if op == "*" else 1
            s = f"{Printer.dim(d.a, mine)} {op} {Printer.dim(d.b, mine + (op != '+'))}"
            return f"({s})" if mine < prec else s
        if kind in _DIM_CALLS:
            return f"{_DIM_CALLS[kind]}({Printer.dim(d.a)}, {Printer.dim(d.b)})"
        return str(d)

    def type_params(self, tps) -> str:
        if not tps:
            return ""
        parts = []
        for tv in tps:
            kind = getattr(tv, "kind", TypeKind.Type)
            parts.append(tv.name_hint if kind == TypeKind.Type else f"{tv.name_hint}: {kind.name}")
        return f"[{', '.join(parts)}]"

    def type_data(self, td: TypeData) -> str:
        lines = [f"type {td.header.name_hint}{self.type_params(td.type_vars)} {{"]
        for c in td.constructors:
            args = f"({', '.join(self.type(t) for t in c.inputs)})" if c.inputs else ""
            lines.append(f"  {c.name_hint}{args},")
        lines.append("}")
        return "\n".join(lines)

    # ---- leaves ---------------------------------------------------------------------------------
    def constant(self, c: Constant) -> str:
        a = c.data
        dtype = "bool" if a.dtype == np.bool_ else a.dtype.name
        if a.ndim == 0:
            if dtype == "bool":
                return "True" if bool(a) else "False"
            suffix = SCALAR_SUFFIX.get(dtype)
            if suffix is not None:
                v = a.item()
                if isinstance(v, int):
                    return f"{v}{suffix}"
                if math.isfinite(v):
                    s = str(a.astype(dtype)[()]) if dtype != "float64" else repr(v)
                    return (s[:-2] if s.endswith(".0") else s) + suffix
        idx = self.meta_index.get(id(c))
        if idx is None:
            idx = self.meta_index[id(c)] = len(self.meta)
            self.meta.append(c)
        return f"meta[relay.Constant][{idx}]"

    def atom(self, e) -> str:
        if isinstance(e, Var):
            return self.var_ref(e)
        if isinstance(e, GlobalVar):
            return self.global_name(e.name_hint)
        if isinstance(e, Constant):
            return self.constant(e)
        if isinstance(e, Constructor):
            return e.name_hint
        name = getattr(e, "name", None)  # an operator
        if isinstance(name, str):
            return name
        return f"<{type(e).__name__}>"

    @staticmethod
    def global_name(name: str) -> str:
        return f"@{name}" if _NAME_RE.match(name) else f"@{quote(name)}"

    # ---- attributes -----------------------------------------------------------------------------
    def attr_value(self, v) -> str:
        if v is None:
            return "None"
        if isinstance(v, (bool, np.bool_)):
            return "True" if v else "False"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            return _float_text(v) + "f"
        if isinstance(v, str):
            return quote(v)
        if isinstance(v, (tuple, list)):
            return f"[{', '.join(self.attr_value(x) for x in v)}]"
        if hasattr(v, "value") and isinstance(v.value, (int, float)):  # tvm IntImm / FloatImm
            return self.attr_value(v.value)
        return quote(str(v))

    def _defaults(self, op):
        d = self._attr_defaults.get(op.name)
        if d is None:
            d = {}
            for name, f in op.attrs_schema.fields.items():
                if f.required or f.always_printed:
                    continue
                try:
                    v = f.default
                    d[name] = FIELD_KINDS[f.kind](v, name) if v is not None else None
                except Exception:  # an odd default: always print the field
                    pass
            self._attr_defaults[op.name] = d
        return d

    def call_attrs(self, call: Call) -> list:
        attrs = call.attrs
        if attrs is None or not isinstance(attrs, Attrs) or len(attrs) == 0:
            return []
        schema = getattr(call.op, "attrs_schema", None)
        defaults = {}
        if schema is not None and schema.type_key == attrs.type_key:
            defaults = self._defaults(call.op)
        out = []
        for k, v in attrs.items():
            if k in defaults and _values_equal(defaults[k], v):
                continue
            out.append(f"{k}={self.attr_value(v)}")
        if schema is None and attrs.type_key != "DictAttrs":  # a non-operator call's attrs
            out.append(f"attrs_type_key={quote(attrs.type_key)}")
        return out

    def func_attrs(self, attrs) -> list:
        attrs = public_attrs(attrs)  # relay_tvm's bookkeeping is no part of the program
        if attrs is None or len(attrs) == 0:
            return []
        return [f"{k}={self.attr_value(v)}" for k, v in attrs.items()]

    # ---- patterns -------------------------------------------------------------------------------
    def pattern(self, p) -> str:
        if isinstance(p, PatternWildcard):
            return "_"
        if isinstance(p, PatternVar):
            return self.bind_var(p.var)
        if isinstance(p, PatternConstructor):
            if not p.patterns:
                return p.constructor.name_hint
            return f"{p.constructor.name_hint}({', '.join(self.pattern(q) for q in p.patterns)})"
        if isinstance(p, PatternTuple):
            inner = ", ".join(self.pattern(q) for q in p.patterns)
            return f"({inner},)" if len(p.patterns) == 1 else f"({inner})"
        return f"<{type(p).__name__}>"

    # ---- expressions ----------------------------------------------------------------------------
    def _ty_comment(self, e) -> str:
        parts = []
        t = getattr(e, "_checked_type", None) if self.show_types else None
        if t is not None and not isinstance(t, IncompleteType):
            parts.append(f"ty={self.type(t)}")
        span = getattr(e, "span", None) if self.show_spans else None
        if span is not None:
            parts.append(f"span={span}")
        note = self.annotate(e) if self.annotate is not None else None
        if note:
            parts.append(str(note))
        if not parts:
            return ""
        return " /* " + " ".join(parts).replace("*/", "* /") + " */"  # a comment never closes early

    def body(self, root, block: _Block) -> str:
        """Print ``root`` as the tail of ``block``: fills ``block.lines``, returns the tail text."""
        if _is_atomic(root):
            return self.atom(root)
        home, inline, own = _placement(root, block)
        # Pass 2: post-order printing; lines go to each node's home block.
        ref: dict = {}
        counter = [self._temp]
        stack = [(0, root)]
        while stack:
            step, n = stack.pop()
            if step == 0:  # visit
                if id(n) in ref or _is_atomic(n):
                    continue
                stack.append((1, n))
                t = type(n)
                if t is Function:
                    # parameters are named before the body uses them
                    own[id(n), "params"] = [self.bind_var(p) for p in n.params]
                    stack.append((0, n.body))
                elif t is Let:
                    own[id(n), "var"] = self.bind_var(n.var)
                    stack.append((0, n.body))
                    stack.append((2, n))
                    stack.append((0, n.value))
                elif t is Match:
                    own[id(n), "pats"] = [self.pattern(c.lhs) for c in n.clauses]
                    for c in reversed(n.clauses):
                        stack.append((0, c.rhs))
                    stack.append((0, n.data))
                elif t is Call:  # arguments first: a local callee prints next to its call
                    stack.append((0, n.op))
                    for c in reversed(n.args):
                        stack.append((0, c))
                else:
                    for c in reversed(value_children(n)):
                        stack.append((0, c))
            elif step == 2:  # the let line
                val = self._ref(ref, n.value)
                own[id(n)].lines.append(
                    f"let {own[id(n), 'var']} = {val}{self._ty_comment(n.value)};"
                )
            else:  # finish
                text = self._render(n, ref, own)
                if inline[id(n)]:
                    ref[id(n)] = text
                else:
                    k = counter[0]
                    counter[0] += 1
                    home[id(n)].lines.append(f"%{k} = {text}{self._ty_comment(n)};")
                    ref[id(n)] = f"%{k}"
        self._temp = counter[0]
        return self._tail(ref, root)

    _temp = 0

    def _ref(self, ref, e) -> str:
        r = ref.get(id(e))
        return r if r is not None else self.atom(e)

    def _tail(self, ref, e) -> str:
        """``e`` as the last expression of a block, with its ``/* ty= span= */`` comment when
        it is printed there (0.19 printed the type of a function's result there; it had no
        comment). A ``%n`` carries its comment on its own line; a block-like tail (let, fn,
        if, match) ends in its own tail's comment."""
        text = self._ref(ref, e)
        if id(e) not in ref or text.startswith("%") or type(e) in (Let, Function, If, Match):
            return text
        return text + self._ty_comment(e)

    def _render(self, n, ref, own) -> str:
        t = type(n)
        r = self._ref
        if t is Call:
            if isinstance(n.op, Constructor) and not n.args and not n.op.inputs:
                return n.op.name_hint  # Relay prints a nullary constructor call bare: `Nil`
            parts = [r(ref, a) for a in n.args] + self.call_attrs(n)
            return f"{r(ref, n.op)}({', '.join(parts)})"
        if t is Tuple:
            inner = ", ".join(r(ref, f) for f in n.fields)
            return f"({inner},)" if len(n.fields) == 1 else f"({inner})"
        if t is TupleGetItem:
            return f"{r(ref, n.tuple_value)}.{n.index}"
        tail = self._tail
        if t is Let:
            b = own[id(n)]
            body = tail(ref, n.body)
            return body if own[id(n), "chain"] else _block_text(b, body)
        if t is Function:
            return self.function_head("fn ", n, own.pop((id(n), "params"))) + _block_text(
                own[id(n)], tail(ref, n.body)
            )
        if t is If:
            bt, bf = own[id(n)]
            return (
                f"if ({r(ref, n.cond)}) {_block_text(bt, tail(ref, n.true_branch))} "
                f"else {_block_text(bf, tail(ref, n.false_branch))}"
            )
        if t is Match:
            arms = []
            for c, b, pat in zip(n.clauses, own[id(n)], own.pop((id(n), "pats"))):
                rhs = tail(ref, c.rhs)
                arms.append(f"{pat} => {_block_text(b, rhs) if b.lines else rhs},")
            kw = "match" if n.complete else "match?"
            return f"{kw} ({r(ref, n.data)}) {{\n  " + "\n  ".join(_indent(a) for a in arms) + "\n}"
        if t is RefCreate:
            return f"ref({r(ref, n.value)})"
        if t is RefRead:
            return f"ref_read({r(ref, n.ref)})"
        if t is RefWrite:
            return f"ref_write({r(ref, n.ref)}, {r(ref, n.value)})"
        return f"<{t.__name__}>"

    def function_head(self, prefix: str, f: Function, params: list) -> str:
        parts = params + self.func_attrs(f.attrs)
        ret = f" -> {self.type(f.ret_type)}" if f.ret_type is not None else ""
        return f"{prefix}{self.type_params(f.type_params)}({', '.join(parts)}){ret} "

    # ---- top level ------------------------------------------------------------------------------
    def definition(self, gv: GlobalVar, f: Function) -> str:
        self._reset_names()
        self._temp = 0
        params = [self.bind_var(p) for p in f.params]
        block = _Block(None)
        tail = self.body(f.body, block)
        head = self.function_head(f"def {self.global_name(gv.name_hint)}", f, params)
        hidden = internal_attrs(f.attrs)
        if hidden:  # not printed in the definition; kept in the metadata section
            self.function_attrs[gv.name_hint] = hidden
        return head + _block_text(block, tail)

    def module(self, mod: IRModule) -> str:
        parts = [f'#[version = "{VERSION}"]']
        for td in mod._type_defs.values():
            parts.append(self.type_data(td))
        for gv, f in mod._functions.items():
            parts.append(self.definition(gv, f))
        return self._finish("\n".join(parts[:1]) + "\n" + "\n\n".join(parts[1:]))

    def expression(self, e) -> str:
        self._reset_names()
        self._temp = 0
        block = _Block(None)
        tail = self.body(e, block)
        free = [f"free_var {self.bind_var(v)};" for v in self.free_vars]
        lines = [f'#[version = "{VERSION}"]', *free, *block.lines, tail]
        return self._finish("\n".join(lines))

    def _finish(self, text: str) -> str:
        if not self.show_meta_data:
            return f"{text}\n{META_OMITTED}" if self.meta else text
        if not (self.meta or self.function_attrs):
            return text
        return f"{text}\n\n#[metadata]\n{encode_metadata(self.meta, self.function_attrs)}"


def astext(node, show_meta_data: bool = True, show_types: bool = False,
           show_spans: bool = False, annotate=None) -> str:
    """The Relay text of ``node`` (``relay.astext``, ``mod.astext()``, ``str(expr)``).

    Args:
        node: an :class:`IRModule`, an expression, a type, a type definition, a pattern or an
            operator.
        show_meta_data: include the ``#[metadata]`` section holding non-scalar constants (without
            it the text refers to ``meta[relay.Constant][n]`` it does not define, and cannot be
            parsed back unless the table is passed to the parser).
        show_types: add ``/* ty=... */`` comments with inferred types (the parser ignores them).
        show_spans: add ``span=...`` to those comments (where an expression came from, e.g.
            the MXNet/NNVM node name set by the importers).
        annotate: optional ``f(expr) -> str | None`` whose result is added to the comment after
            each bound expression (tvm.relay's ``astext(annotate=...)``).

    Returns:
        the text; modules and expressions start with ``#[version = "0.0.5"]``.
    """
    with paused_gc():
        return _astext(node, show_meta_data, show_types, show_spans, annotate)


def _astext(node, show_meta_data, show_types, show_spans=False, annotate=None) -> str:
    p = Printer(show_meta_data, show_types, show_spans, annotate)
    if isinstance(node, IRModule):
        return p.module(node)
    if isinstance(node, Type):
        return p.type(node)
    if isinstance(node, TypeData):
        return p.type_data(node)
    if isinstance(node, Pattern):
        return p.pattern(node)
    if isinstance(node, Clause):
        pat = p.pattern(node.lhs)  # names the pattern's variables before the arm uses them
        block = _Block(None)
        tail = p.body(node.rhs, block)
        return f"{pat} => {_block_text(block, tail) if block.lines else tail}"
    if isinstance(node, RelayExpr):
        if _is_atomic(node) and not isinstance(node, (Var, Constant)):
            return p.atom(node)
        return p.expression(node)
    return repr(node)


__all__ = ["astext", "Printer", "VERSION", "SCALAR_SUFFIX"]

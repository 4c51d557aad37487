"""The parser of Relay's text format, version 0.0.5 (the grammar tvm.relay 0.19 parsed).

Recursive descent within one binding, iteration over the bindings of a block: a block
``{ %0 = ...; let %x = ...; ...; tail }`` is a loop, and the ``let`` s it holds are assembled
inside out without recursion, so 100,000-binding programs parse in linear time and constant
Python stack. ``%n = e;`` is a graph binding: later uses of ``%n`` share the node ``e``.

Errors never stop at the first one: each is recorded as ``(line, column, message)`` and the
parser recovers (at the next ``;`` of the block, or at the next ``def``/``type``), then raises
one :class:`~relay_tvm.errors.ParseError` listing them all with the source line and a caret.

Operator attributes are typed by the operator's ``attrs_schema`` (attributes left out get their
defaults); function attributes (``Primitive=1``) become ``DictAttrs``.

Besides what the printer writes, the parser reads the rest of tvm.relay 0.19's syntax: infix
``+ - * / < > <= >= == !=`` (usual precedence, left associative), unary minus, ``e1; e2``
(``let %_ = e1; e2``), a bare nullary constructor ``Nil`` as the call ``Nil()``, nested
``/* */`` comments, unsuffixed integer literals beyond int32 as int64, and symbolic dimensions
(``Tensor[(n, 2 * n + 1), float32]``; one ``tvm.tirx.Var`` per name and parse).

Known limits: symbolic dimensions parse to fresh variables, so a program using them prints and
parses back to the same text but is not ``structural_equal`` to the original (variables compare
by identity); a node shared between the inside of a recursive local function and the code after
its ``let`` cannot be printed with that sharing (the printer would reference it before the
``let``).
"""

from __future__ import annotations

import math

import numpy as np

from .._gc import paused_gc
from ..errors import AttributeSchemaError, ParseError, RelayError, did_you_mean
from ..ir.adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from ..ir.attrs import INTERNAL_ATTR_PREFIX, Attrs, DictAttrs
from ..ir.base import Span
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
from ..ir.module import IRModule
from ..ir.types import (
    GlobalTypeVar,
    IncompleteType,
)
from ..op import registry
from .lexer import EOF, GLOBAL, IDENT, LOCAL, NUM, PUNCT, STR, VERSION, tokenize
from .metadata import FUNCTION_ATTRS, KEY, decode_metadata
from .parse_types import TypeSyntax

VERSION_SUPPORTED = "0.0.5"
MAX_DIAGNOSTICS = 50
_OPENERS = {"(": ")", "[": "]", "{": "}"}
# infix operators of the text format: token -> (operator, precedence); all left associative
_BINARY = {
    "==": ("equal", 1), "!=": ("not_equal", 1),
    "<": ("less", 2), ">": ("greater", 2), "<=": ("less_equal", 2), ">=": ("greater_equal", 2),
    "+": ("add", 3), "-": ("subtract", 3),
    "*": ("multiply", 4), "/": ("divide", 4),
}
_FLOAT_MAX = {d: float(np.finfo(d).max) for d in ("float16", "float32", "float64")}


# the shortest decimal form of each largest finite value (float32: 3.4028235e+38, a little
# above the value itself), which the printer writes and which must parse back to it
_FLOAT_MAX_TEXT = {d: float(repr(np.finfo(d).max)) for d in ("float16", "float32", "float64")}


def _overflows(v: float, dtype: str) -> bool:
    """Whether a finite literal is beyond the largest finite ``dtype`` value (0.19's parser
    refused these rather than rounding them: ``65505f16``, ``3.40283e+38f32``)."""
    a = abs(v)
    return a > _FLOAT_MAX[dtype] and a != _FLOAT_MAX_TEXT[dtype] and a != float("inf")


class _Abort(Exception):
    """Unwinds to the nearest recovery point after an error was recorded."""


class SourceName(str):
    """The name of a parsed source (``tvm.ir.SourceName``); spans refer to it."""

    @property
    def name(self) -> str:
        return str(self)


class Parser(TypeSyntax):
    """One parse of one text. Use :func:`parse` / :func:`parse_expr` rather than this class."""

    def __init__(self, text: str, source_name="from_string", init_module=None, init_meta_table=None):
        if not isinstance(text, str):
            raise RelayError(f"the parser takes the program text as str, got {type(text).__name__}")
        self.text = text
        self.source_name = str(source_name)
        toks, diags, self.meta_text, self.meta_line = tokenize(text)
        self.toks, self.i = toks, 0
        self.diags = list(diags)
        self.init_meta = init_meta_table
        self._meta = None
        self._meta_consts: dict = {}
        self.scopes: list = [{}]
        self.tscopes: list = [{}]
        self.poisoned: set = set()
        self.shape_vars: dict = {}
        self.mod = init_module.copy() if init_module is not None else IRModule()
        self.globals = {gv.name_hint: gv for gv in self.mod.get_global_vars()}
        self.gtypes = {g.name_hint: g for g in self.mod.get_global_type_vars()}
        self.type_arity: dict = {}  # number of type parameters of each ADT
        self.ctors = {}
        # parse_expr: an unknown @f is a global of the module the expression will join (0.19
        # interned it); in a module text every global must be defined
        self.free_globals = False
        for td in self.mod.type_definitions.values():
            self.type_arity[td.header.name_hint] = len(td.type_vars)
            for c in td.constructors:
                self.ctors[c.name_hint] = c

    # ---- tokens and errors ----------------------------------------------------------------------
    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def next(self):
        t = self.toks[self.i]
        if t.kind != EOF:
            self.i += 1
        return t

    @staticmethod
    def is_p(t, v) -> bool:
        return t.kind == PUNCT and t.value == v

    @staticmethod
    def is_kw(t, v) -> bool:
        return t.kind == IDENT and t.value == v

    def accept_p(self, v) -> bool:
        if self.is_p(self.peek(), v):
            self.next()
            return True
        return False

    def error(self, t, msg: str) -> None:
        if len(self.diags) < MAX_DIAGNOSTICS:
            self.diags.append((t.line, t.col, msg))

    def fail(self, t, msg: str):
        self.error(t, msg)
        raise _Abort

    def expect_p(self, v: str, opener=None):
        t = self.peek()
        if self.is_p(t, v):
            return self.next()
        where = f" to close '{opener.value}' at {opener.line}:{opener.col}" if opener else ""
        self.fail(t, f"expected '{v}'{where} but got {t.describe()}")

    def expect_kind(self, kind: str, what: str):
        t = self.peek()
        if t.kind != kind:
            self.fail(t, f"expected {what} but got {t.describe()}")
        return self.next()

    def span(self, t) -> Span:
        return Span(self.source_name, t.line, t.col)

    def finish(self):
        if not self.diags:
            return
        diags = sorted(set(self.diags), key=lambda d: (d[0], d[1]))
        lines = self.text.splitlines()
        parts = []
        for line, col, msg in diags:
            parts.append(f"{self.source_name}:{line}:{col}: error: {msg}")
            if 1 <= line <= len(lines):
                src = lines[line - 1]
                parts.append("    " + src)
                # the caret under the column: tabs before it kept as tabs, so it lines up
                # however the terminal expands them (spaces alone put it off; fresh-user trial)
                pad = "".join(ch if ch == "\t" else " " for ch in src[:col - 1])
                parts.append("    " + pad + "^")
        n = len(diags)
        head = f"{n} error{'s' if n > 1 else ''} in {self.source_name}:\n"
        raise ParseError(head + "\n".join(parts), diagnostics=diags)

    # ---- scopes ---------------------------------------------------------------------------------
    def define(self, name: str, value) -> None:
        self.scopes[-1][name] = value
        self.poisoned.discard(name)

    def lookup(self, t):
        name = t.value
        for scope in reversed(self.scopes):
            v = scope.get(name)
            if v is not None:
                return v
        if name not in self.poisoned:
            known = [n for s in self.scopes for n in s]
            hint = did_you_mean(name, known, clause=True, show=lambda c: f"%{c}")
            self.error(t, f"undefined variable %{name}{hint}")
            self.poisoned.add(name)
        return Var(name, span=self.span(t))

    def _count_type_params(self, j: int) -> int:
        """The number of names in the ``[A, B]`` starting at token ``j`` (0 when none): the type
        parameters of the ``type`` definition whose name precedes it."""
        toks = self.toks
        if j >= len(toks) or toks[j].kind != PUNCT or toks[j].value != "[":
            return 0
        n = 0
        for t in toks[j + 1:]:
            if t.kind == PUNCT and t.value == "]":
                break
            n += t.kind == IDENT
        return n

    def lookup_type(self, name: str):
        for scope in reversed(self.tscopes):
            v = scope.get(name)
            if v is not None:
                return v
        return self.gtypes.get(name)

    # ---- top level ------------------------------------------------------------------------------
    def header(self) -> None:
        t = self.peek()
        if t.kind == VERSION:
            self.next()
            if t.value != VERSION_SUPPORTED:
                self.error(
                    t, f"unsupported text format version {t.value!r}; expected {VERSION_SUPPORTED!r}"
                )

    def parse_module(self) -> IRModule:
        self.header()
        items = [
            j
            for j, t in enumerate(self.toks)
            if t.kind == IDENT and t.value in ("def", "type") and j >= self.i
        ]
        # `extern type T[A]`: the item starts at `extern`
        items = [j - 1 if j > self.i and self.is_kw(self.toks[j - 1], "extern") else j
                 for j in items]
        first = items[0] if items else len(self.toks) - 1
        if first != self.i:
            # the text of an expression (`free_var %x ...; %x + 1f`) is no module
            hint = (" (the text of an expression, not of a module: parse it with "
                    "relay.parse_expr / tvm.relay.parse_expr)"
                    if self.is_kw(self.peek(), "free_var") or first == len(self.toks) - 1
                    else "")
            self.error(self.peek(), f"expected 'def' or 'type' but got "
                                    f"{self.peek().describe()}{hint}")
        for j in items:  # forward declarations: functions and types may refer to later ones
            j += self.is_kw(self.toks[j], "extern")
            t, n = self.toks[j], self.toks[j + 1]
            if t.value == "def" and n.kind == GLOBAL and n.value not in self.globals:
                self.globals[n.value] = GlobalVar(n.value, self.span(n))
            elif t.value == "type" and n.kind == IDENT and n.value not in self.gtypes:
                self.gtypes[n.value] = GlobalTypeVar(n.value, span=self.span(n))
                self.type_arity[n.value] = self._count_type_params(j + 2)
        ends = items[1:] + [len(self.toks) - 1]
        defined: set = set()
        # type definitions first: constructors must exist before the functions that use them
        for kind in ("type", "def"):
            for j, end in zip(items, ends):
                if self.toks[j].value != kind and not (kind == "type" and self.toks[j].value
                                                       == "extern"):
                    continue
                self.i = j
                before = len(self.diags)
                try:
                    if kind == "type":
                        self.parse_type_def(defined)
                    else:
                        self.parse_def(defined)
                    if self.i != end and len(self.diags) == before:  # else: a cascade
                        t = self.peek()
                        self.error(
                            t, f"unexpected {t.describe()} after a definition; expected 'def', "
                            "'type' or the end of input"
                        )
                except _Abort:
                    pass
                self.scopes, self.tscopes = [{}], [{}]
        self._restore_function_attrs()
        self.finish()
        return self.mod

    def _restore_function_attrs(self) -> None:
        """Put back the internal attributes (``relay_tvm.bound_params``, ...) the printer kept
        in the metadata section's ``relay_tvm.function_attrs`` instead of the definitions."""
        doc = self._meta_doc()
        table = doc.get(FUNCTION_ATTRS) if doc else None
        if table is None:
            return
        if not isinstance(table, dict) or not all(
                isinstance(a, dict) and all(isinstance(k, str) and isinstance(v, str)
                                            and k.startswith(INTERNAL_ATTR_PREFIX)
                                            for k, v in a.items()) for a in table.values()):
            self.diags.append((self.meta_line, 1, f"metadata {FUNCTION_ATTRS!r} must map global "
                                                  f"function names to {{'relay_tvm.<key>': string}}"))
            return
        for name, extra in table.items():
            gv = self.globals.get(name)
            if gv is None or gv not in self.mod:
                self.diags.append((self.meta_line, 1, f"metadata {FUNCTION_ATTRS!r} names @{name}, "
                                                      f"which the text does not define"))
                continue
            f = self.mod[gv]
            for k, v in extra.items():
                f = f.with_attr(k, v)
            self.mod[gv] = f

    def _meta_doc(self):
        """The decoded metadata section (cached), ``{}`` without one, None when malformed
        (the error is recorded once)."""
        if not hasattr(self, "_meta_cache"):
            self._meta_cache = {}
            if self.meta_text is not None:
                try:
                    self._meta_cache = decode_metadata(self.meta_text)
                except RelayError as e:
                    self.diags.append((self.meta_line, 1, str(e)))
                    self._meta_cache = None
        return self._meta_cache

    def parse_type_def(self, defined: set) -> None:
        """``type T[A] { C1(A), C2 }``; ``extern type T[A]`` (or a type without ``{...}``) is
        an external type, one without constructors."""
        extern = self.is_kw(self.peek(), "extern")
        if extern:
            self.next()
            if not self.is_kw(self.peek(), "type"):
                self.fail(self.peek(), f"expected 'type' after 'extern' but got "
                                       f"{self.peek().describe()}")
        kw = self.next()
        name = self.expect_kind(IDENT, "a type name")
        if name.value in defined:
            self.error(name, f"type {name.value} is defined twice")
        defined.add(name.value)
        gtv = self.gtypes[name.value]
        tvars = self.parse_type_params() if self.is_p(self.peek(), "[") else []
        self.tscopes.append({tv.name_hint: tv for tv in tvars})
        ctors = []
        if not self.is_p(self.peek(), "{"):  # no constructor list: an external type
            self.tscopes.pop()
            self.mod[gtv] = TypeData(gtv, tvars, [], span=self.span(kw))
            return
        opener = self.expect_p("{")
        if extern and not self.is_p(self.peek(), "}"):
            self.error(self.peek(), f"an external type may not have constructors (extern type "
                                    f"{name.value})")
        while not self.is_p(self.peek(), "}"):
            cname = self.expect_kind(IDENT, "a constructor name")
            inputs = []
            if self.accept_p("("):
                if not self.is_p(self.peek(), ")"):
                    inputs.append(self.parse_type())
                    while self.accept_p(","):
                        inputs.append(self.parse_type())
                self.expect_p(")")
            if cname.value in self.ctors:
                self.error(cname, f"constructor {cname.value} is defined twice")
            c = Constructor(cname.value, inputs, gtv, span=self.span(cname))
            self.ctors[cname.value] = c
            ctors.append(c)
            if not self.accept_p(","):
                break
        self.expect_p("}", opener)
        self.tscopes.pop()
        self.mod[gtv] = TypeData(gtv, tvars, ctors, span=self.span(kw))

    def parse_def(self, defined: set) -> None:
        kw = self.next()
        name = self.expect_kind(GLOBAL, "a global function name such as @main")
        if name.value in defined:
            self.error(name, f"function @{name.value} is defined twice")
        defined.add(name.value)
        f = self.parse_function_rest(kw)
        self.mod[self.globals[name.value]] = f

    def parse_expression_text(self):
        self.header()
        self.free_globals = True
        while self.is_kw(self.peek(), "free_var"):
            self.next()
            t = self.expect_kind(LOCAL, "a variable such as %x")
            ann = self.parse_annotation()
            self.define(t.value, Var(t.value, ann, self.span(t)))
            self.expect_semi()
        e = self.parse_block_items(closing=None)
        t = self.peek()
        if t.kind != EOF:
            self.error(t, f"expected the end of input but got {t.describe()}")
        self.finish()
        return e

    def parse_annotation(self):
        """An optional ``: type`` after a variable. ``_`` (the incomplete type) is no annotation:
        0.19 parsed ``let %x: _ = e`` equal to an unannotated ``let %x = e``."""
        if not self.accept_p(":"):
            return None
        ann = self.parse_type()
        return None if isinstance(ann, IncompleteType) else ann

    # ---- blocks ---------------------------------------------------------------------------------
    def expect_semi(self) -> None:
        t = self.peek()
        if self.is_p(t, ";"):
            self.next()
        else:  # report and go on as if it were there: the next statement usually parses
            self.error(t, f"expected ';' but got {t.describe()}")

    def _at_close(self, closing) -> bool:
        t = self.peek()
        return t.kind == EOF or (closing is not None and self.is_p(t, closing))

    def recover(self) -> None:
        """Skip to just after the next ';' of this block, or to its end."""
        depth = 0
        while True:
            t = self.peek()
            if t.kind == EOF or (t.kind == IDENT and t.value in ("def", "type") and depth == 0):
                return
            if t.kind == PUNCT:
                if t.value in _OPENERS:
                    depth += 1
                elif t.value in (")", "]", "}"):
                    if depth == 0:
                        if t.value == "}":
                            return
                    else:
                        depth -= 1
                elif t.value == ";" and depth == 0:
                    self.next()
                    return
            self.next()

    def parse_block(self):
        opener = self.expect_p("{")
        e = self.parse_block_items("}")
        self.expect_p("}", opener)
        return e

    def parse_block_items(self, closing):
        """Statements ``%n = e;`` / ``let %x = e;`` then a tail expression, up to ``closing``."""
        self.scopes.append({})
        lets = []
        tail = None
        while True:
            t = self.peek()
            if self._at_close(closing):
                self.error(t, f"expected an expression but got {t.describe()}")
                break
            name, start = None, self.i
            try:
                if t.kind == LOCAL and self.is_p(self.peek(1), "="):
                    self.next()
                    self.next()
                    name = t.value
                    value = self.parse_expr()
                    self.define(name, value)
                    self.expect_semi()
                    continue
                if self.is_kw(t, "let"):
                    self.next()
                    v = self.expect_kind(LOCAL, "a variable such as %x after 'let'")
                    name = v.value
                    ann = self.parse_annotation()
                    self.expect_p("=")
                    var = Var(v.value, ann, self.span(v))
                    recursive = self.is_kw(self.peek(), "fn")
                    if recursive:  # a local function may call itself
                        self.define(v.value, var)
                    value = self.parse_expr()
                    self.define(v.value, var)
                    lets.append((var, value, self.span(t)))
                    self.expect_semi()
                    continue
                tail = self.parse_expr()
                if self.is_p(self.peek(), ";"):  # `e1; e2` sequences: let %_ = e1; e2
                    semi = self.next()
                    if self._at_close(closing):
                        self.fail(semi, f"expected an expression after ';' but got "
                                        f"{self.peek().describe()} (a block ends with its value)")
                    lets.append((Var("_", span=self.span(t)), tail, self.span(semi)))
                    tail = None
                    continue
                break
            except _Abort:
                if name is not None and not any(name in s for s in self.scopes):
                    self.poisoned.add(name)  # no second error for each later use
                self.recover()
                if self.i == start:
                    self.next()  # always make progress
                t = self.peek()
                if self._at_close(closing) or (t.kind == IDENT and t.value in ("def", "type")):
                    break
        self.scopes.pop()
        if tail is None:
            tail = Tuple([])
        for var, value, span in reversed(lets):
            tail = Let(var, value, tail, span)
        return tail

    # ---- expressions ----------------------------------------------------------------------------
    def parse_expr(self, min_prec: int = 0):
        """Infix operators (``1 + %x * 2``, ``%a == %b``): precedence climbing over
        :meth:`parse_unary`; left associative, loops rather than recursing along a chain."""
        lhs = self.parse_unary()
        while True:
            t = self.peek()
            if t.kind == PUNCT and t.value in _BINARY:
                op_name, prec = _BINARY[t.value]
                if prec < min_prec:
                    return lhs
                self.next()
                rhs = self.parse_expr(prec + 1)
            elif t.kind == NUM and t.text.startswith("-") and min_prec <= _BINARY["-"][1]:
                # `%x -1`: the lexer made `-1` a literal; it is a subtraction here
                op_name, prec = _BINARY["-"]
                self.next()
                rhs = self.scalar(t, negate=True)
            else:
                return lhs
            lhs = Call(registry.get(op_name), [lhs, rhs], span=self.span(t))

    def parse_unary(self):
        t = self.peek()
        if self.is_p(t, "-"):
            self.next()
            e = self.parse_unary()
            if isinstance(e, Constant) and e.data.ndim == 0 and e.data.dtype.kind in "if":
                return Constant(-e.data, self.span(t))  # `--10` is the literal 10
            return Call(registry.get("negative"), [e], span=self.span(t))
        return self.parse_postfix()

    def parse_postfix(self):
        t = self.peek()
        e = self.parse_primary()
        while True:
            p = self.peek()
            if self.is_p(p, "("):
                e = self.parse_call(e, t)
            elif self.is_p(p, "."):
                self.next()
                n = self.peek()
                if n.kind != NUM or not isinstance(n.value, int) or n.value < 0:
                    self.fail(n, f"expected a field index after '.' but got {n.describe()}")
                self.next()
                e = TupleGetItem(e, n.value, self.span(p))
            else:
                return e

    def parse_primary(self):
        t = self.peek()
        if t.kind == LOCAL:
            self.next()
            return self.lookup(t)
        if t.kind == GLOBAL:
            self.next()
            gv = self.globals.get(t.value)
            if gv is None:
                if not self.free_globals:
                    self.error(t, f"undefined global function @{t.value}")
                gv = self.globals[t.value] = GlobalVar(t.value, self.span(t))
            return gv
        if t.kind == NUM:
            self.next()
            return self.scalar(t)
        if t.kind == STR:
            self.fail(t, "a string is not an expression (strings are only attribute values)")
        if t.kind == IDENT:
            v = t.value
            c = self.ctors.get(v)  # before keywords: Option's constructor is called None
            if c is not None:
                self.next()
                if not c.inputs and not self.is_p(self.peek(), "("):
                    return Call(c, [], span=self.span(t))  # a bare `Nil` is the value Nil()
                return c
            if v in ("True", "False"):
                self.next()
                return Constant(np.array(v == "True"), self.span(t))
            if v == "fn":
                return self.parse_function_rest(self.next())
            if v == "if":
                return self.parse_if()
            if v == "match":
                return self.parse_match()
            if v in ("ref", "ref_read", "ref_write"):
                return self.parse_ref()
            if v == "meta":
                return self.parse_meta()
            if v in ("let", "def", "type", "free_var", "else", "None"):
                self.fail(t, f"expected an expression but got {t.describe()}")
            self.next()
            if registry.is_registered(v):
                return registry.get(v)
            hint = did_you_mean(v, list(self.ctors) + registry.list_op_names(), cutoff=0.75,
                                clause=True, show=str)
            self.error(t, f"unknown operator or constructor {v!r}{hint}")
            return Var(f"<unknown {v}>", span=self.span(t))
        if self.is_p(t, "("):
            self.next()
            return self.paren_tuple(t, self.parse_expr, Tuple)
        if self.is_p(t, "{"):
            return self.parse_block()
        self.fail(t, f"expected an expression but got {t.describe()}")

    def scalar(self, t, negate: bool = False) -> Constant:
        dtype, v = t.dtype, (-t.value if negate else t.value)
        if dtype.startswith(("int", "uint")):
            info = np.iinfo(dtype)
            if not info.min <= v <= info.max:
                self.error(t, f"bad number {t.text}: out of range for {dtype} [{info.min}, {info.max}]")
                v = 0
            return Constant(np.array(v, dtype=dtype), self.span(t))
        # a decimal past float64's range reads as infinity: out of range too unless written
        # as inf (1e999f became an inf constant silently; fresh-user trial)
        if v == v and (_overflows(v, dtype) or (math.isinf(v) and "inf" not in t.text)):
            self.error(t, f"bad number {t.text}: out of range for {dtype}")
            v = 0.0
        return Constant(np.array(v, dtype=dtype), self.span(t))

    def parse_call(self, callee, start):
        opener = self.next()
        args, attrs = [], []
        while not self.is_p(self.peek(), ")"):
            t = self.peek()
            if t.kind == IDENT and self.is_p(self.peek(1), "="):
                self.next()
                self.next()
                attrs.append((t, self.parse_attr_value()))
            else:
                if attrs:
                    self.error(t, "positional argument after keyword attributes")
                args.append(self.parse_expr())
            if not self.accept_p(","):
                break
        close = self.expect_p(")", opener)
        span = self.span(start)
        if isinstance(callee, registry.Op):
            bad = callee.num_inputs >= 0 and len(args) != callee.num_inputs
            if bad:
                lo, hi = (opener.line, opener.col), (close.line, close.col)
                bad = not any(lo <= (d[0], d[1]) <= hi for d in self.diags)
            if bad:  # (not when an argument failed to parse)
                self.error(
                    start, f"operator {callee.name} takes {callee.num_inputs} argument"
                    f"{'s' if callee.num_inputs != 1 else ''}, got {len(args)}"
                )
            return Call(callee, args, self.op_attrs(callee, attrs, start), span=span)
        fields = self.unique_attrs(attrs)
        if not fields:
            return Call(callee, args, None, span=span)
        key = fields.pop("attrs_type_key", "DictAttrs")  # attributes of a non-operator call
        return Call(callee, args, Attrs(str(key), fields), span=span)

    def unique_attrs(self, attrs) -> dict:
        out = {}
        for t, v in attrs:
            if t.value in out:
                self.error(t, f"attribute {t.value} is given twice")
            out[t.value] = v
        return out

    def op_attrs(self, op, attrs, start):
        schema = op.attrs_schema
        known = {}
        for t, v in attrs:
            if t.value not in schema.fields:
                expected = ", ".join(schema.fields) or "none"
                self.error(
                    t, f"unknown attribute {t.value!r} of operator {op.name}; expected one of "
                    f"{expected}" if schema.fields else
                    f"unknown attribute {t.value!r}: operator {op.name} takes no attributes"
                )
            elif t.value in known:
                self.error(t, f"attribute {t.value} is given twice")
            else:
                known[t.value] = (t, v)
        try:
            return op.make_attrs(**{k: v for k, (_, v) in known.items()})
        except AttributeSchemaError as e:
            msg = str(e)
            where = next((t for k, (t, _) in known.items() if f"attribute {k}:" in msg), start)
            self.error(where, msg)
            return None

    def parse_attr_value(self):
        t = self.next()
        if t.kind == NUM:
            return t.value
        if t.kind == STR:
            return t.value
        if t.kind == IDENT and t.value in ("True", "False"):
            return t.value == "True"
        if t.kind == IDENT and t.value == "None":
            return None
        if self.is_p(t, "[") or self.is_p(t, "("):
            close = "]" if t.value == "[" else ")"
            items = []
            while not self.is_p(self.peek(), close):
                items.append(self.parse_attr_value())
                if not self.accept_p(","):
                    break
            self.expect_p(close, t)
            return tuple(items)
        self.fail(t, f"expected an attribute value (number, string, True/False, None or [...]) "
                     f"but got {t.describe()}")

    def parse_function_rest(self, kw):
        """After ``fn`` or ``def @name``: ``[tparams](params, attrs) -> ret { body }``."""
        tps = self.parse_type_params() if self.is_p(self.peek(), "[") else []
        self.tscopes.append({tv.name_hint: tv for tv in tps})
        self.scopes.append({})
        try:
            opener = self.expect_p("(")
            params, attrs = [], []
            while not self.is_p(self.peek(), ")"):
                t = self.peek()
                if t.kind == IDENT and self.is_p(self.peek(1), "="):
                    self.next()
                    self.next()
                    attrs.append((t, self.parse_attr_value()))
                else:
                    v = self.expect_kind(LOCAL, "a parameter such as %x or an attribute key=value")
                    ann = self.parse_annotation()
                    if v.value in self.scopes[-1]:
                        self.error(v, f"parameter %{v.value} appears twice")
                    var = Var(v.value, ann, self.span(v))
                    self.define(v.value, var)
                    params.append(var)
                if not self.accept_p(","):
                    break
            self.expect_p(")", opener)
            ret = self.parse_type() if self.accept_p("->") else None
            body = self.parse_block()
        finally:
            self.scopes.pop()
            self.tscopes.pop()
        fields = self.unique_attrs(attrs)
        return Function(params, body, ret, tps, DictAttrs(fields) if fields else None, self.span(kw))

    def parse_if(self):
        kw = self.next()
        opener = self.expect_p("(")
        cond = self.parse_expr()
        self.expect_p(")", opener)
        then = self.parse_block()
        t = self.peek()
        if not self.is_kw(t, "else"):
            self.fail(t, f"expected 'else' but got {t.describe()} (an if needs both branches)")
        self.next()
        other = self.parse_if() if self.is_kw(self.peek(), "if") else self.parse_block()
        return If(cond, then, other, self.span(kw))

    def parse_match(self):
        kw = self.next()
        complete = not self.accept_p("?")
        opener = self.expect_p("(")
        data = self.parse_expr()
        self.expect_p(")", opener)
        brace = self.expect_p("{")
        clauses = []
        while not self.is_p(self.peek(), "}"):
            self.scopes.append({})
            try:
                start = self.peek()
                lhs = self.parse_pattern()
                self.expect_p("=>")
                t = self.peek()
                if (t.kind == LOCAL and self.is_p(self.peek(1), "=")) or self.is_kw(t, "let"):
                    # bindings before the clause's value, up to its ',' (TVM's parser takes
                    # `Cons(%x, %r) => %0 = fn ...; @f(%0, %r),` as printed graph form does)
                    rhs = self.parse_block_items("}")
                else:
                    rhs = self.parse_expr()
            finally:
                self.scopes.pop()
            clauses.append(Clause(lhs, rhs, self.span(start)))
            if not self.accept_p(","):
                break
        self.expect_p("}", brace)
        return Match(data, clauses, complete, self.span(kw))

    def parse_pattern(self):
        t = self.next()
        if self.is_kw(t, "_"):
            return PatternWildcard(self.span(t))
        if t.kind == LOCAL:
            ann = self.parse_annotation()
            var = Var(t.value, ann, self.span(t))
            self.define(t.value, var)
            return PatternVar(var, self.span(t))
        if t.kind == IDENT:
            c = self.ctors.get(t.value)
            if c is None:
                hint = did_you_mean(t.value, self.ctors, clause=True, show=str)
                self.error(t, f"unknown constructor {t.value!r} in pattern{hint}")
            pats = []
            if self.accept_p("("):
                while not self.is_p(self.peek(), ")"):
                    pats.append(self.parse_pattern())
                    if not self.accept_p(","):
                        break
                self.expect_p(")", t)
            if c is None:
                return PatternWildcard(self.span(t))
            return PatternConstructor(c, pats, self.span(t))
        if self.is_p(t, "("):
            pats = []
            while not self.is_p(self.peek(), ")"):
                pats.append(self.parse_pattern())
                if not self.accept_p(","):
                    break
            self.expect_p(")", t)
            return PatternTuple(pats, self.span(t))
        self.fail(t, f"expected a pattern (_, %x, a constructor or a tuple) but got {t.describe()}")

    def parse_ref(self):
        kw = self.next()
        opener = self.expect_p("(")
        a = self.parse_expr()
        if kw.value == "ref_write":
            self.expect_p(",")
            b = self.parse_expr()
            self.expect_p(")", opener)
            return RefWrite(a, b, self.span(kw))
        self.expect_p(")", opener)
        return (RefCreate if kw.value == "ref" else RefRead)(a, self.span(kw))

    def parse_meta(self):
        kw = self.next()
        self.expect_p("[")
        key = self.expect_kind(IDENT, "a metadata kind such as relay.Constant")
        self.expect_p("]")
        self.expect_p("[")
        idx = self.expect_kind(NUM, "a metadata index")
        self.expect_p("]")
        if key.value != KEY:
            self.fail(key, f"unsupported metadata kind {key.value!r}; expected {KEY!r}")
        table = self.metadata(kw)
        if table is None:
            return Var("<meta>", span=self.span(kw))
        if not isinstance(idx.value, int) or not 0 <= idx.value < len(table):
            self.error(idx, f"meta[{KEY}][{idx.text}] is out of range: the metadata section has "
                            f"{len(table)} constants")
            return Var("<meta>", span=self.span(kw))
        c = self._meta_consts.get(idx.value)
        if c is None:
            v = table[idx.value]
            c = v if isinstance(v, Constant) else Constant(np.asarray(v), self.span(kw))
            self._meta_consts[idx.value] = c
        return c

    def metadata(self, at):
        if self._meta is None:
            self._meta = []
            if self.meta_text is not None:
                doc = self._meta_doc()
                self._meta = doc.get(KEY, []) if doc is not None else False
            elif self.init_meta is not None:
                self._meta = list(self.init_meta.get(KEY, []))
            else:
                self.error(at, "the text refers to meta[relay.Constant] but has no #[metadata] "
                               "section (print with show_meta_data=True)")
                self._meta = False
        return self._meta if self._meta is not False else None


def _run(parser: Parser, method: str):
    try:
        with paused_gc():
            return getattr(parser, method)()
    except _Abort:  # an error outside any recovery point: report what was found
        parser.finish()
        raise ParseError("parse failed", diagnostics=[]) from None
    except RecursionError:
        t = parser.peek()
        parser.diags.append((t.line, t.col, "expression nested too deeply to parse (bind inner "
                                            "expressions to %n = ...; instead)"))
        parser.finish()


def parse(source: str, source_name="from_string", init_module=None, init_meta_table=None):
    """Parse a module in Relay's text format (``tvm.relay.parse`` / ``tvm.parser.parse``).

    Args:
        source: the text, normally starting with ``#[version = "0.0.5"]``.
        source_name: the name spans and error messages use.
        init_module: an :class:`IRModule` whose functions and types the text may refer to; the
            result is a copy of it with the text's definitions added.
        init_meta_table: ``{"relay.Constant": [Constant or array, ...]}`` for texts printed with
            ``show_meta_data=False``.

    Returns:
        the :class:`IRModule`, type-checked: like 0.19's ``ParseModule``, which ended with
        ``InferType``, every function has its ``checked_type``.

    Raises:
        ParseError: with every error found, each as ``source:line:col: error: message``;
            ``.diagnostics`` lists ``(line, col, message)``.
        TypeInferenceError: the text parses but is ill-typed; the message ends with the
            ``source:line:col`` of the offending expression (the parser's spans).
    """
    return _parse_module(source, source_name, init_module, init_meta_table)


def _parse_module(source, source_name="from_string", init_module=None, init_meta_table=None,
                  annotate=True):
    """:func:`parse`; ``annotate=False`` sets ``checked_type`` but leaves missing annotations
    and return types missing (``load_json``: the module exactly as saved)."""
    from ..typing.infer import infer_module  # what the InferType pass runs

    mod = _run(Parser(source, source_name, init_module, init_meta_table), "parse_module")
    return infer_module(mod, annotate=annotate)


def parse_expr(source: str, source_name="from_string", init_module=None, init_meta_table=None):
    """Parse one expression (optionally preceded by ``free_var %x: T;`` declarations).

    Unlike :func:`parse`, the expression is not type-checked (0.19's ``ParseExpr`` did not run
    ``InferType`` either): run ``InferType`` on ``IRModule.from_expr(...)`` for its types.

    Raises:
        ParseError: as :func:`parse`.
    """
    return _run(Parser(source, source_name, init_module, init_meta_table), "parse_expression_text")


def fromtext(source: str, source_name="from_string"):
    """``relay.fromtext``: parse and type-check a module (the pre-0.7 name of :func:`parse`)."""
    return parse(source, source_name)


__all__ = ["parse", "parse_expr", "fromtext", "SourceName", "Parser"]

"""The type syntax of Relay's text format: types (``Tensor[(1, 3), float32]``, tuples, ``fn``
types, ``ref``, type calls of ADTs), type parameters with kinds, dtypes and shapes with symbolic
dimensions (``n``, ``2 * n + 1``, ``floordiv(n, 2)``, ``?`` for ``Any``).

:class:`TypeSyntax` is a part of :class:`relay_tvm.text.parser.Parser` (which it is mixed into):
it reads tokens and reports errors through the parser's ``next``/``peek``/``fail``/``error``.
"""

from __future__ import annotations

from ..errors import RelayError, did_you_mean
from ..ir.base import check_dtype
from ..ir.types import (
    AnyDim,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeKind,
    TypeVar,
)
from .lexer import IDENT, NUM

_DIM_MAX = 2**63 - 1  # TVM shapes are int64
# A dtype name without a bit width is 32 bits wide, as TVM's String2DLDataType reads it (0.19's
# parser accepts ``-> int`` for a scalar int32).
_BARE_DTYPE = {"int": "int32", "uint": "uint32", "float": "float32"}


def _dim_call(name):
    def call(a, b):
        if isinstance(a, int) and isinstance(b, int):
            return {"floordiv": a // b if b else 0, "floormod": a % b if b else 0,
                    "max": max(a, b), "min": min(a, b)}[name]
        from tvm import tirx

        a, b = (tirx.IntImm("int64", v) if isinstance(v, int) else v for v in (a, b))
        return getattr(tirx, name)(a, b)

    return call


_DIM_FUNCS = {n: _dim_call(n) for n in ("floordiv", "floormod", "max", "min")}


class TypeSyntax:
    """Parsing of types, type parameters, dtypes and shapes (mixed into the parser)."""

    # ---- types ----------------------------------------------------------------------------------
    def parse_type_params(self) -> list:
        opener = self.expect_p("[")
        out = []
        while not self.is_p(self.peek(), "]"):
            t = self.expect_kind(IDENT, "a type parameter name")
            kind = TypeKind.Type
            if self.accept_p(":"):
                k = self.expect_kind(IDENT, "a kind such as Type or ShapeVar")
                if k.value not in TypeKind.__members__:
                    self.fail(k, f"unknown kind {k.value!r}; expected one of "
                                 f"{', '.join(TypeKind.__members__)}")
                kind = TypeKind[k.value]
            out.append(TypeVar(t.value, kind, self.span(t)))
            if not self.accept_p(","):
                break
        self.expect_p("]", opener)
        return out

    def paren_tuple(self, t, parse_item, make):
        """After an opening ``(`` token ``t``: ``()`` gives ``make([])``, ``(a)`` gives ``a``
        itself, ``(a, b, ...)`` (a trailing comma allowed) gives ``make([a, b, ...])``; used for
        tuple types and tuple expressions alike."""
        if self.accept_p(")"):
            return make([], self.span(t))
        first = parse_item()
        if self.accept_p(")"):
            return first
        fields = [first]
        while self.accept_p(","):
            if self.is_p(self.peek(), ")"):
                break
            fields.append(parse_item())
        self.expect_p(")", t)
        return make(fields, self.span(t))

    def parse_type(self):
        t = self.next()
        if self.is_p(t, "("):
            return self.paren_tuple(t, self.parse_type, TupleType)
        if t.kind != IDENT:
            self.fail(t, f"expected a type but got {t.describe()}")
        v = t.value
        if v == "Tensor":
            opener = self.expect_p("[")
            shape = self.parse_shape()
            self.expect_p(",")
            dtype = self.parse_dtype()
            self.expect_p("]", opener)
            return TensorType(shape, dtype)
        if v == "fn":
            tps = self.parse_type_params() if self.is_p(self.peek(), "[") else []
            self.tscopes.append({tv.name_hint: tv for tv in tps})
            try:
                opener = self.expect_p("(")
                args = []
                while not self.is_p(self.peek(), ")"):
                    args.append(self.parse_type())
                    if not self.accept_p(","):
                        break
                self.expect_p(")", opener)
                self.expect_p("->")
                ret = self.parse_type()
            finally:
                self.tscopes.pop()
            return FuncType(args, ret, tps)
        if v == "ref":
            opener = self.expect_p("(")
            inner = self.parse_type()
            self.expect_p(")", opener)
            return RefType(inner)
        if v == "_":
            return IncompleteType()
        named = self.lookup_type(v)
        if named is not None:
            if self.is_p(self.peek(), "["):
                opener = self.next()
                args = []
                while not self.is_p(self.peek(), "]"):
                    args.append(self.parse_type())
                    if not self.accept_p(","):
                        break
                self.expect_p("]", opener)
                return TypeCall(named, args)
            if isinstance(named, GlobalTypeVar):
                arity = getattr(self, "type_arity", {}).get(v, 0)
                if arity:
                    self.fail(t, f"type {v} takes {arity} type argument(s) ({v}[...]); got "
                                 f"none")
                # a bare ADT name is its application to no arguments (tvm.relay 0.19's
                # ParseNonPrimitiveType): `L` and `L[]` are the same type, the one its
                # constructors build
                return TypeCall(named, [])
            return named
        try:
            return TensorType((), check_dtype(_BARE_DTYPE.get(v, v)))
        except RelayError:
            hint = did_you_mean(v, ["float32", "int32", "int64", "bool", "Tensor"]
                                + list(self.gtypes), clause=True, show=str)
            self.fail(t, f"unknown type {v!r}{hint}")

    def parse_dtype(self) -> str:
        t = self.next()
        if t.kind == IDENT:
            try:
                return check_dtype(_BARE_DTYPE.get(t.value, t.value))
            except RelayError:
                pass
        self.fail(t, f"bad dtype {t.text or t.describe()}: expected e.g. float32, int64, bool")

    def parse_shape(self) -> tuple:
        opener = self.peek()
        if not self.is_p(opener, "("):
            self.fail(opener, f"bad shape: expected '(' starting a shape such as (1, 3) but got "
                              f"{opener.describe()}")
        self.next()
        dims = []
        while not self.is_p(self.peek(), ")"):
            t = self.peek()
            if self.is_p(t, "?"):
                self.next()
                dims.append(AnyDim())
            else:
                d = self.dim_sum()
                if isinstance(d, int) and d < 0:  # reported; parsing goes on to find more errors
                    self.error(t, f"bad shape: dimension {d} is negative")
                    d = 0
                elif isinstance(d, int) and d > _DIM_MAX:  # TVM shapes are int64
                    self.error(t, f"bad shape: dimension {d} exceeds the int64 range of TVM "
                                  f"shapes (at most {_DIM_MAX})")
                    d = 0
                dims.append(d)
            if not self.accept_p(","):
                break
        self.expect_p(")", opener)
        return tuple(dims)

    # symbolic dimensions: n, n * 2 + 1, floordiv(n, 2), max(n, m) ...
    def dim_sum(self):
        d = self.dim_product()
        while True:
            t = self.peek()
            if self.is_p(t, "+") or self.is_p(t, "-"):
                self.next()
                rhs = self.dim_product()
                d = d + rhs if t.value == "+" else d - rhs
            elif t.kind == NUM and isinstance(t.value, int) and t.text.startswith("-") and not t.explicit:
                self.next()  # `n -1` lexes as a negative literal
                d = d + t.value
            else:
                return d

    def dim_product(self):
        d = self.dim_atom()
        while self.accept_p("*"):
            d = d * self.dim_atom()
        return d

    def dim_atom(self):
        t = self.next()
        # an index dtype suffix is taken: 0.19's printer wrote int64 dimensions as ``2i64``
        if t.kind == NUM and isinstance(t.value, int) and (
                not t.explicit or t.dtype in ("int32", "int64")):
            return t.value
        if self.is_p(t, "("):
            d = self.dim_sum()
            self.expect_p(")", t)
            return d
        if t.kind == IDENT and t.value in _DIM_FUNCS and self.is_p(self.peek(), "("):
            opener = self.next()
            a = self.dim_sum()
            self.expect_p(",")
            b = self.dim_sum()
            self.expect_p(")", opener)
            return _DIM_FUNCS[t.value](a, b)
        if t.kind == IDENT and t.value.isidentifier():
            return self.shape_var(t.value)
        self.fail(t, f"bad shape: expected a non-negative integer, '?' or a shape variable but got "
                     f"{t.describe()}")

    def shape_var(self, name: str):
        v = self.shape_vars.get(name)
        if v is None:
            from tvm import tirx

            v = self.shape_vars[name] = tirx.Var(name, "int64")
        return v

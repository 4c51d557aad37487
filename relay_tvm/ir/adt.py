"""Algebraic data types: type definitions, constructors, ``match`` and patterns.

A :class:`TypeData` defines ``type List[A] { Cons(A, List[A]), Nil }``; each :class:`Constructor`
is an expression that builds a value; :class:`Match` takes a value apart with :class:`Clause` s
whose left-hand sides are patterns (wildcard ``_``, variable, constructor, tuple).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..errors import RelayError
from .base import Node, RelayExpr, Span
from .expr import Expr, Var
from .types import GlobalTypeVar, Type, TypeCall, TypeVar

_tags = itertools.count(1)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Constructor(Expr):
    """A constructor of an algebraic data type.

    Args:
        name_hint: the constructor's name, e.g. ``"Cons"``.
        inputs: the field types (may mention the type definition's type variables).
        belong_to: the :class:`GlobalTypeVar` of the type it constructs.
    """

    name_hint: str
    inputs: tuple
    belong_to: GlobalTypeVar
    span: Span | None = None
    tag: int = field(default_factory=lambda: next(_tags))

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeData(Node):
    """A global algebraic data type definition.

    Args:
        header: the type's name.
        type_vars: its type parameters.
        constructors: its constructors, in order.
    """

    header: GlobalTypeVar
    type_vars: tuple
    constructors: tuple
    span: Span | None = None

    def __post_init__(self):
        object.__setattr__(self, "type_vars", tuple(self.type_vars))
        object.__setattr__(self, "constructors", tuple(self.constructors))
        for c in self.constructors:
            if c.belong_to is not self.header:
                raise RelayError(
                    f"constructor {c.name_hint} belongs to {c.belong_to.name_hint}, "
                    f"not to {self.header.name_hint}"
                )

    def as_type(self) -> Type:
        return TypeCall(self.header, self.type_vars)


class Pattern(Node):
    """Base of match patterns."""

    __slots__ = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternWildcard(Pattern):
    """``_``: matches anything, binds nothing."""

    span: Span | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternVar(Pattern):
    """A variable pattern: matches anything and binds it to ``var``."""

    var: Var
    span: Span | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternConstructor(Pattern):
    """``Cons(p0, p1)``: matches values built by ``constructor`` whose fields match."""

    constructor: Constructor
    patterns: tuple = ()
    span: Span | None = None

    def __post_init__(self):
        object.__setattr__(self, "patterns", tuple(self.patterns or ()))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternTuple(Pattern):
    """``(p0, p1)``: matches a tuple whose fields match."""

    patterns: tuple = ()
    span: Span | None = None

    def __post_init__(self):
        object.__setattr__(self, "patterns", tuple(self.patterns or ()))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Clause(Node):
    """One arm of a match: ``lhs => rhs``."""

    lhs: Pattern
    rhs: RelayExpr
    span: Span | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Match(Expr):
    """``match (data) { clauses }``. With ``complete=True`` (``match``) type inference checks the
    clauses cover every value; ``complete=False`` prints as ``match?``."""

    data: RelayExpr
    clauses: tuple
    complete: bool = True
    span: Span | None = None

    def __post_init__(self):
        object.__setattr__(self, "clauses", tuple(self.clauses))


def pattern_vars(pattern: Pattern) -> list:
    """The variables a pattern binds, left to right."""
    out, stack = [], [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return out


__all__ = [
    "Constructor",
    "TypeData",
    "Pattern",
    "PatternWildcard",
    "PatternVar",
    "PatternConstructor",
    "PatternTuple",
    "Clause",
    "Match",
    "pattern_vars",
    "TypeVar",
]

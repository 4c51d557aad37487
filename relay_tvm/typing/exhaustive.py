"""Exhaustiveness of ``match`` (the usefulness of a wildcard after all clauses, as in
Maranget's "Warnings for pattern matching"): a complete ``match`` that some value escapes is a
type error naming the missing constructors."""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.adt import (
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from ..ir.types import (
    type_str,
)
from .solver import short


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


def check_exhaustive(m: Match, inf) -> None:
    """Raise a TypeInferenceError when some value of ``m``'s scrutinee matches no clause
    (``inf``: the TypeInferencer that typed ``m``)."""
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

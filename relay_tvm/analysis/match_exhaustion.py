"""``unmatched_cases``: the values a ``match`` does not catch, as patterns (tvm.relay 0.19's
``relay.analysis.unmatched_cases``, match_exhaustion.cc).

The search refines candidate patterns, starting from one wildcard (every value). A candidate
that a clause matches is covered; one that every clause rejects is a missing case; one that a
clause can neither accept nor reject (a wildcard where the clause names a constructor or a
tuple) is split, at every such place, into the constructors of its type (or a tuple of
wildcards), and the pieces are searched again. Candidates are kept on a worklist, so the only
recursion is over the nesting of one pattern.
"""

from __future__ import annotations

import itertools

from ..errors import RelayError
from ..ir.adt import (
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)

_MATCH, _CLASH, _UNSPECIFIED = 0, 1, 2


def _check(pat: Pattern, cand: Pattern) -> int:
    """Does clause pattern ``pat`` accept every value of ``cand`` (_MATCH), none (_CLASH), or
    is ``cand`` too coarse to tell (_UNSPECIFIED)?"""
    if isinstance(pat, (PatternWildcard, PatternVar)):
        return _MATCH
    if isinstance(pat, PatternConstructor):
        if not isinstance(cand, PatternConstructor):
            return _UNSPECIFIED
        if cand.constructor is not pat.constructor:
            return _CLASH
    elif isinstance(pat, PatternTuple):
        if not isinstance(cand, PatternTuple):
            return _UNSPECIFIED
        if len(cand.patterns) != len(pat.patterns):
            raise RelayError(f"unmatched_cases: a tuple pattern of {len(pat.patterns)} fields "
                             f"against a tuple of {len(cand.patterns)}")
    else:
        raise RelayError(f"unmatched_cases: unknown pattern kind {type(pat).__name__}")
    result = _MATCH
    for p, c in zip(pat.patterns, cand.patterns):
        r = _check(p, c)
        if r == _CLASH:
            return _CLASH
        if r == _UNSPECIFIED:
            result = _UNSPECIFIED
    return result


def _constructors(ctor, mod):
    gtv = ctor.belong_to
    defs = mod.type_definitions if mod is not None else {}
    data = defs.get(gtv)
    if data is None:
        raise RelayError(f"unmatched_cases: the type {gtv.name_hint} of constructor "
                         f"{ctor.name_hint} is not defined in the module given (pass mod=)")
    return data.constructors


def _expand(pat: Pattern, cand: Pattern, mod) -> list:
    """Every refinement of ``cand`` one level deeper wherever ``pat`` is more specific."""
    if isinstance(pat, PatternConstructor):
        if isinstance(cand, PatternWildcard):
            return [PatternConstructor(c, [PatternWildcard() for _ in c.inputs])
                    for c in _constructors(pat.constructor, mod)]
        fields = [_expand(p, c, mod) for p, c in zip(pat.patterns, cand.patterns)]
        return [PatternConstructor(cand.constructor, list(f)) for f in itertools.product(*fields)]
    if isinstance(pat, PatternTuple):
        if isinstance(cand, PatternWildcard):
            return [PatternTuple([PatternWildcard() for _ in pat.patterns])]
        fields = [_expand(p, c, mod) for p, c in zip(pat.patterns, cand.patterns)]
        return [PatternTuple(list(f)) for f in itertools.product(*fields)]
    return [cand]


def unmatched_cases(match: Match, mod=None) -> list:
    """The cases of ``match`` that no clause catches.

    Args:
        match: a ``Match`` expression (types need not be inferred).
        mod: the ``IRModule`` defining the ADTs its constructors belong to (needed as soon as a
            clause names a constructor whose siblings must be enumerated).

    Returns:
        A list of patterns (``PatternWildcard`` for "any value", ``PatternConstructor`` /
        ``PatternTuple`` with wildcards inside) covering exactly the values that match no
        clause; empty when the match is exhaustive.

    Raises:
        RelayError: ``match`` is not a Match, or a constructor's type is not in ``mod``.
    """
    if not isinstance(match, Match):
        raise RelayError(f"unmatched_cases expects a relay.Match, got {type(match).__name__}")
    pending = [PatternWildcard()]
    missing = []
    while pending:
        cand = pending.pop()
        for clause in match.clauses:
            r = _check(clause.lhs, cand)
            if r == _CLASH:
                continue
            if r == _UNSPECIFIED:
                pending.extend(_expand(clause.lhs, cand, mod))
            break
        else:
            missing.append(cand)
    return missing

"""relay.analysis.unmatched_cases: the values no clause of a match catches, checked against
the reference interpreter running the match on every small value of the type."""

from __future__ import annotations

import itertools

import pytest

import relay_tvm as relay
from relay_tvm.analysis import unmatched_cases
from relay_tvm.errors import RelayError

PW = relay.PatternWildcard
PC = relay.PatternConstructor


def _color_module():
    mod = relay.IRModule()
    color = relay.GlobalTypeVar("Color")
    ctors = [relay.Constructor(n, [], color) for n in ("Red", "Green", "Blue")]
    mod[color] = relay.TypeData(color, [], ctors)
    return mod, ctors


def _lists(cons, nil, elems, max_len):
    """Every list of ``elems`` (expressions) up to ``max_len`` long."""
    for n in range(max_len + 1):
        for items in itertools.product(elems, repeat=n):
            v = nil()
            for e in reversed(items):
                v = cons(e, v)
            yield v


def _caught(mod, clauses, value, ty) -> bool:
    """Does some clause catch ``value`` of type ``ty``? (interpreter: a final wildcard clause
    answers 0)."""
    arms = [relay.Clause(c.lhs, relay.const(1)) for c in clauses] + \
        [relay.Clause(PW(), relay.const(0))]
    v = relay.Var("v", ty)
    prog = relay.Let(v, value, relay.Match(v, arms, False))
    out = relay.create_executor("debug", mod=mod).evaluate(prog)
    return int(out.numpy()) == 1


def test_missing_constructor_of_an_enumeration():
    mod, (red, green, blue) = _color_module()
    v = relay.Var("v")
    m = relay.Match(v, [relay.Clause(PC(red), v), relay.Clause(PC(green), v)])
    missing = unmatched_cases(m, mod)
    assert len(missing) == 1
    assert isinstance(missing[0], PC) and missing[0].constructor is blue
    full = relay.Match(v, [relay.Clause(PC(c), v) for c in (blue, red, green)])
    assert unmatched_cases(full, mod) == []


@pytest.mark.parametrize("case", ["first_two_fixed", "length_not_two", "only_long"])
def test_unmatched_patterns_are_exactly_the_uncaught_values(case):
    mod, (red, green, blue) = _color_module()
    p = relay.Prelude(mod)
    list_t, cons, nil = p.mod.get_type("List")
    ty = list_t(relay.TypeCall(mod.get_global_type_var("Color"), []))
    x = relay.Var("x")
    clauses = {
        # [Red, ...] and [Green, Green, ...]: misses [], [Blue, ...], [Green], [Green, Red/Blue, ...]
        "first_two_fixed": [PC(cons, [PC(red), PW()]),
                            PC(cons, [PC(green), PC(cons, [PC(green), PW()])])],
        # [], [_], [_, _, _, ...]: misses exactly the lists of length 2
        "length_not_two": [PC(nil), PC(cons, [PW(), PC(nil)]),
                           PC(cons, [PW(), PC(cons, [PW(), PC(cons, [PW(), PW()])])])],
        "only_long": [PC(cons, [PW(), PC(cons, [PW(), PW()])])],
    }[case]
    clauses = [relay.Clause(c, x) for c in clauses]
    missing = unmatched_cases(relay.Match(x, clauses), mod)
    assert missing
    elems = [red(), green(), blue()]
    n_uncaught = 0
    for value in _lists(cons, nil, elems, 3):
        uncaught = not _caught(p.mod, clauses, value, ty)
        by_missing = any(_caught(p.mod, [relay.Clause(m, x)], value, ty) for m in missing)
        assert uncaught == by_missing, relay.analysis.structural_hash(value)
        n_uncaught += uncaught
    assert n_uncaught > 0
    if case == "length_not_two":
        assert len(missing) == 1  # cons(_, cons(_, nil)) and nothing else


def test_tuple_and_wildcard_matches_are_exhaustive():
    a, b = relay.Var("a"), relay.Var("b")
    tup = relay.Tuple([relay.const(1), relay.const(2)])
    m = relay.Match(tup, [relay.Clause(relay.PatternTuple([relay.PatternVar(a),
                                                           relay.PatternVar(b)]), a)])
    assert unmatched_cases(m) == []
    empty = unmatched_cases(relay.Match(tup, []))
    assert len(empty) == 1 and isinstance(empty[0], PW)


def test_constructor_needs_its_module():
    mod, (red, _, _) = _color_module()
    v = relay.Var("v")
    with pytest.raises(RelayError, match="Color.*not defined"):
        unmatched_cases(relay.Match(v, [relay.Clause(PC(red), v)]))
    with pytest.raises(RelayError, match="expects a relay.Match"):
        unmatched_cases(v)


def test_text_format_bare_int_is_int32():
    # 0.19's parser reads a dtype without a width as 32 bits (TVM's String2DLDataType)
    mod = relay.fromtext('#[version = "0.0.5"]\ndef @f(%x: float) -> int { cast(%x, dtype="int32") }')
    ft = relay.transform.InferType()(mod)["f"].checked_type
    assert ft.ret_type == relay.TensorType((), "int32")
    assert ft.arg_types[0] == relay.TensorType((), "float32")

"""Deep programs print and parse without RecursionError (iterative printer and parser): 20,000
nodes under a recursion limit of 2,000, so nothing may recurse per node or per binding (100,000
took 46 s a test in CI; ``benchmarks/bench_text.py`` times the 100,000-node programs)."""

import sys

import pytest

import relay_tvm as relay
from relay_tvm.analysis import structural_equal

N = 20_000


@pytest.fixture
def low_recursion_limit():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(2_000)  # nothing may recurse per node or per binding
    yield
    sys.setrecursionlimit(old)


def _check(mod):
    mod = relay.transform.InferType()(mod)  # parse type-checks: compare with the typed module
    text = relay.astext(mod)
    back = relay.parse(text)
    assert structural_equal(mod, back)
    return text, back


def test_deep_call_chain(low_recursion_limit):
    x = relay.var("x", shape=(2,))
    y = x
    for i in range(N):
        y = relay.add(y, relay.const(1.0)) if i % 2 else relay.multiply(y, relay.const(2.0))
    text, back = _check(relay.IRModule.from_expr(relay.Function([x], y)))
    lines = text.splitlines()
    assert lines[2] == "  %0 = multiply(%x, 2f);"
    assert lines[-2] == f"  add(%{N - 2}, 1f)"  # the tail prints inline, everything else is bound
    assert max(len(line) for line in lines) < 100  # no nested call text


def test_deep_nested_lets(low_recursion_limit):
    x = relay.var("x", shape=(2,))
    vs = [relay.var(f"v{i}") for i in range(N)]
    body = vs[-1]
    for i in reversed(range(N)):
        body = relay.Let(vs[i], relay.exp(vs[i - 1] if i else x), body)
    text, back = _check(relay.IRModule.from_expr(relay.Function([x], body)))
    assert f"  let %v{N - 1}: Tensor[(2), float32] = exp(%v{N - 2});\n  %v{N - 1}\n}}" in text
    assert relay.astext(back) == text

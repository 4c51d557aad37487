"""ExprVisitor / ExprMutator behave the same whichever methods a subclass overrides: every
sub-expression is visited once, children before parents, without recursion (a 100,000-call
chain under an overridden ``visit_call`` works), and the traversal core gives the children."""

import numpy as np

import relay_tvm as relay
from relay_tvm.ir.functor import children, dataflow_children, value_children

N = 100_000


def _chain(n):
    x = relay.var("x", shape=(1,))
    e = x
    for _ in range(n):
        e = relay.negative(e)
    return x, e


def test_visitor_overriding_visit_call_sees_every_call_of_a_deep_chain():
    x, e = _chain(N)
    seen = []

    class CountCalls(relay.ExprVisitor):
        def visit_call(self, call):  # does not call super(): the walk still reaches every call
            seen.append(call)

    CountCalls().visit(e)
    assert len(seen) == N
    assert seen[-1] is e  # children before parents: the root comes last


def test_mutator_overriding_visit_call_rewrites_a_deep_chain():
    x, e = _chain(N)

    class NegToAbs(relay.ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            return relay.abs(new.args[0]) if new.op.name == "negative" else new

    out = NegToAbs().visit(e)
    n, node = 0, out
    while isinstance(node, relay.Call):
        assert node.op.name == "abs"
        node, n = node.args[0], n + 1
    assert n == N and node is x


def test_override_of_one_kind_does_not_change_how_others_are_walked():
    x = relay.var("x", shape=(2,))
    v = relay.var("v")
    body = relay.Let(v, relay.exp(x), relay.Tuple([v, relay.log(v)]))
    order_plain, order_overriding = [], []

    class Plain(relay.ExprVisitor):
        def visit_tuple(self, t):
            order_plain.append(t)
            super().visit_tuple(t)

        def visit_var(self, e):
            order_plain.append(e)

    class Overriding(Plain):
        def visit_call(self, c):  # no super(): its arguments are visited all the same
            order_overriding.append(c)

        def visit_var(self, e):
            order_overriding.append(e)

        def visit_tuple(self, t):
            order_overriding.append(t)

    Plain().visit(body)
    Overriding().visit(body)
    vars_and_tuples = [n for n in order_overriding if not isinstance(n, relay.Call)]
    assert vars_and_tuples == order_plain


def test_children_views():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    call = relay.add(x, y)
    v = relay.var("v")
    let = relay.Let(v, call, v)
    f = relay.Function([x, y], let)
    cond = relay.If(relay.const(True), x, y)
    assert children(call) == (call.op, x, y)
    assert children(call, callee=False) == (x, y)
    assert children(let) == (v, call, v) and value_children(let) == (call, v)
    assert children(f) == (x, y, let) and value_children(f) == (let,)
    assert children(cond, branches=False) == (cond.cond,)
    assert dataflow_children(f) == () and dataflow_children(call) == (x, y)


def test_mutated_program_still_computes_the_same():
    x, e = _chain(3)

    class Same(relay.ExprMutator):
        def visit_call(self, call):
            return super().visit_call(call)

    out = Same().visit(e)
    assert out is e
    f = relay.Function([x], out)
    r = relay.create_executor("debug").evaluate(f)(np.array([2.0], "float32"))
    np.testing.assert_allclose(r.numpy(), [-2.0])

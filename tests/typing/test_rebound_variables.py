"""A variable bound in two places (one ``relay.var`` object as the parameter of two functions,
the variable of two lets, a pattern variable in two clauses): tvm.relay 0.19's modules took
such programs (its IRModule checked a de-duplicated copy), and scripts build them. Inference on
a module gives each later binding a fresh variable (found by a fresh-user trial: every
executor refused them with "variable %a is bound twice")."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm import analysis
from relay_tvm.errors import WellFormedError
from relay_tvm.prelude import Prelude


def _run(executor, mod, *args):
    return relay.create_executor(executor, mod=mod, target="llvm").evaluate()(*args)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_one_pair_of_parameters_for_two_functions(executor):
    mod = relay.IRModule()
    p = Prelude(mod)
    a, b = relay.var("a", "int32"), relay.var("b", "int32")
    add, sub = relay.Function([a, b], a + b), relay.Function([a, b], a - b)
    lst = p.cons(relay.const(1), p.cons(relay.const(2), p.cons(relay.const(3), p.nil())))
    mod["main"] = relay.Function([], p.foldl(add, relay.const(0), lst)
                                 + p.foldl(sub, relay.const(10), lst))
    assert int(_run(executor, mod).numpy()) == (1 + 2 + 3) + (10 - 1 - 2 - 3)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_one_let_variable_in_both_branches(executor):
    x, c, t = relay.var("x", shape=(2,)), relay.var("c", "bool"), relay.var("t")
    mod = relay.IRModule.from_expr(relay.Function(
        [c, x], relay.If(c, relay.Let(t, x + x, t), relay.Let(t, x * x, t))))
    xv = np.array([3.0, -2.0], "float32")
    np.testing.assert_array_equal(_run(executor, mod, np.array(True), xv).numpy(), xv + xv)
    np.testing.assert_array_equal(_run(executor, mod, np.array(False), xv).numpy(), xv * xv)
    typed = relay.transform.InferType()(mod)["main"]
    assert analysis.well_formed(typed)  # the second let got a variable of its own
    assert not analysis.well_formed(mod["main"])  # the user's function is left as it was


def test_a_parameter_shadowed_by_an_inner_function():
    a = relay.var("a", shape=(), dtype="float32")
    inner = relay.Function([a], a + relay.const(1.0))  # its own a, not the outer one
    mod = relay.IRModule.from_expr(relay.Function([a], relay.Call(inner, [a * relay.const(2.0)])))
    for executor in ("debug", "vm"):
        assert float(_run(executor, mod, np.array(3.0, "float32")).numpy()) == 3.0 * 2 + 1


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_one_pattern_variable_in_two_clauses(executor):
    mod = relay.IRModule()
    p = Prelude(mod)
    v, rest = relay.var("v", "int32"), relay.var("rest")
    lst = relay.var("l", p.mod.get_global_type_var("List")(relay.scalar_type("int32")))
    body = relay.Match(lst, [
        relay.Clause(relay.PatternConstructor(p.cons, [relay.PatternVar(v),
                                                       relay.PatternConstructor(p.nil)]), v),
        relay.Clause(relay.PatternConstructor(p.cons, [relay.PatternVar(v),
                                                       relay.PatternVar(rest)]),
                     v * relay.const(10)),
        relay.Clause(relay.PatternConstructor(p.nil), relay.const(0)),
    ])
    mod["main"] = relay.Function([], relay.Let(lst, lst_value(p, [5, 6]), body))
    assert int(_run(executor, mod).numpy()) == 50
    mod["main"] = relay.Function([], relay.Let(lst, lst_value(p, [5]), body))
    assert int(_run(executor, mod).numpy()) == 5


def lst_value(p, values):
    out = p.nil()
    for x in reversed(values):
        out = p.cons(relay.const(x), out)
    return out


def test_graph_build_of_a_let_variable_bound_twice():
    x, t = relay.var("x", shape=(3,)), relay.var("t")
    mod = relay.IRModule.from_expr(relay.Function(
        [x], relay.Tuple([relay.Let(t, relay.exp(x), t + x), relay.Let(t, x * x, t - x)])))
    xv = np.array([0.5, -1.0, 2.0], "float32")
    out = _run("graph", mod, xv)
    np.testing.assert_allclose(out[0].numpy(), np.exp(xv) + xv, rtol=1e-6)
    np.testing.assert_allclose(out[1].numpy(), xv * xv - xv, rtol=1e-6)


def test_other_ill_formed_programs_are_still_refused():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple([relay.Let(y, x, y), y])))
    with pytest.raises(WellFormedError, match="used outside the scope"):
        relay.transform.InferType()(mod)
    # a bare expression is typed in place (no copy to rename): the message says what to do
    t = relay.var("t")
    expr = relay.Tuple([relay.Let(t, x, t), relay.Let(t, x, t)])
    with pytest.raises(WellFormedError, match=r"%t is bound twice \(let\); give each binding a "
                                              r"variable of its own"):
        relay.transform.InferTypeLocal(expr)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_a_let_shadowing_itself_reads_the_outer_value(executor):
    # let %x = 1; let %x = %x + 1; %x * 3: the second let's value reads the first %x (0.19's
    # interpreter); renaming the value too had made it read itself ("has no value")
    x = relay.var("x", shape=(), dtype="float32")
    one = relay.const(1.0)
    mod = relay.IRModule.from_expr(relay.Function([], relay.Let(
        x, one, relay.Let(x, x + one, x * relay.const(3.0)))))
    assert float(_run(executor, mod).numpy()) == (1.0 + 1.0) * 3.0


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_one_recursive_let_variable_in_both_branches(executor):
    # let %f = fn(%n) { if n == 0 then 0 else %f(n - 1) + step } in each branch: the function
    # refers to itself, so the renamed let renames its value too
    n = relay.var("n", shape=(), dtype="int32")
    f = relay.var("f", relay.FuncType([relay.scalar_type("int32")], relay.scalar_type("int32")))
    c = relay.var("c", "bool")

    def counter(step):
        body = relay.If(relay.equal(n, relay.const(0)), relay.const(0),
                        f(n - relay.const(1)) + relay.const(step))
        return relay.Let(f, relay.Function([n], body), f(relay.const(4)))

    mod = relay.IRModule.from_expr(relay.Function([c], relay.If(c, counter(1), counter(10))))
    assert int(_run(executor, mod, np.array(True)).numpy()) == 4
    assert int(_run(executor, mod, np.array(False)).numpy()) == 40

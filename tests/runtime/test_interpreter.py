"""The reference interpreter: closures, recursion, references, ADTs, match, if, tuples."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InterpreterError, RelayError


def run(expr, *args, mod=None):
    ex = relay.create_executor("debug", mod=mod)
    if args or isinstance(expr, relay.Function):
        return ex.evaluate(expr)(*args)
    return ex.evaluate(expr)


def test_dataflow_against_numpy():
    x = relay.var("x", shape=(3, 4))
    w = relay.var("w", shape=(5, 4))
    y = relay.exp(relay.nn.dense(x, w))
    f = relay.Function([x, w], relay.sum(y, axis=1))
    xv = np.random.RandomState(0).randn(3, 4).astype("float32")
    wv = np.random.RandomState(1).randn(5, 4).astype("float32")
    np.testing.assert_allclose(run(f, xv, wv).numpy(), np.exp(xv @ wv.T).sum(1), rtol=1e-5)


def test_closure_captures_environment():
    x = relay.var("x", "float32")
    y = relay.var("y", "float32")
    adder = relay.Function([x], relay.Function([y], relay.add(x, y)))
    add3 = relay.Call(adder, [relay.const(3.0)])
    out = run(relay.Call(add3, [relay.const(4.0)]))
    assert float(out.numpy()) == 7.0


def test_global_recursion_factorial():
    mod = relay.IRModule()
    fact = relay.GlobalVar("fact")
    n = relay.var("n", "int64")
    one = relay.const(1, "int64")
    mod[fact] = relay.Function(
        [n],
        relay.If(relay.less_equal(n, one), one, relay.multiply(n, relay.Call(fact, [relay.subtract(n, one)]))),
        relay.scalar_type("int64"),
    )
    out = relay.create_executor(mod=mod).evaluate(fact)(np.array(20, "int64"))
    assert int(out.numpy()) == 2432902008176640000


def test_deep_recursion_does_not_use_python_stack():
    mod = relay.IRModule()
    count = relay.GlobalVar("count")
    n = relay.var("n", "int32")
    mod[count] = relay.Function(
        [n],
        relay.If(relay.equal(n, relay.const(0)), relay.const(0), relay.add(relay.const(1), relay.Call(count, [relay.subtract(n, relay.const(1))]))),
        relay.scalar_type("int32"),
    )
    out = relay.create_executor(mod=mod).evaluate(count)(np.array(50000, "int32"))
    assert int(out.numpy()) == 50000


def test_references_are_mutable_cells():
    r = relay.var("r")
    i = relay.var("i", "int32")
    loop = relay.var("loop")
    # let r = ref(0); let loop = fn(i) { if i < 5 { r := !r + i; loop(i+1) } else { () } }; loop(0); !r
    body_true = relay.Let(
        relay.var("_"),
        relay.RefWrite(r, relay.add(relay.RefRead(r), i)),
        relay.Call(loop, [relay.add(i, relay.const(1))]),
    )
    fn = relay.Function([i], relay.If(relay.less(i, relay.const(5)), body_true, relay.Tuple([])), relay.TupleType([]))
    prog = relay.Let(r, relay.RefCreate(relay.const(0)), relay.Let(loop, fn, relay.Let(relay.var("_"), relay.Call(loop, [relay.const(0)]), relay.RefRead(r))))
    assert int(run(prog).numpy()) == 0 + 1 + 2 + 3 + 4


def test_adt_list_map_and_match():
    mod = relay.IRModule()
    a = relay.TypeVar("a")
    lst = relay.GlobalTypeVar("List")
    cons = relay.Constructor("Cons", [a, relay.TypeCall(lst, [a])], lst)
    nil = relay.Constructor("Nil", [], lst)
    mod[lst] = relay.TypeData(lst, [a], [cons, nil])
    # map over a list with a closure, polymorphically
    b = relay.TypeVar("b")
    mp = relay.GlobalVar("map")
    f = relay.var("f", relay.FuncType([a], b))
    xs = relay.var("xs", relay.TypeCall(lst, [a]))
    h, t = relay.var("h"), relay.var("t")
    mod[mp] = relay.Function(
        [f, xs],
        relay.Match(xs, [
            relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternVar(t)]),
                         cons(relay.Call(f, [h]), relay.Call(mp, [f, t]))),
            relay.Clause(relay.PatternConstructor(nil), nil()),
        ]),
        relay.TypeCall(lst, [b]),
        [a, b],
    )
    x = relay.var("x", "float32")
    double = relay.Function([x], relay.multiply(x, relay.const(2.0)))
    l3 = cons(relay.const(1.0), cons(relay.const(2.0), cons(relay.const(3.0), nil())))
    mod["main"] = relay.Function([], relay.Call(mp, [double, l3]))
    out = relay.create_executor(mod=mod).evaluate()()
    vals = []
    while out.constructor.name_hint == "Cons":
        vals.append(float(out.fields[0]))
        out = out.fields[1]
    assert vals == [2.0, 4.0, 6.0]


def test_tuple_patterns_and_wildcards():
    p = relay.var("p")
    a, b = relay.var("a"), relay.var("b")
    body = relay.Match(p, [relay.Clause(relay.PatternTuple([relay.PatternVar(a), relay.PatternWildcard(), relay.PatternVar(b)]), relay.subtract(a, b))])
    prog = relay.Let(p, relay.Tuple([relay.const(10.0), relay.const(0.0), relay.const(4.0)]), body)
    assert float(run(prog).numpy()) == 6.0


def test_incomplete_match_fails_at_run_time():
    mod = relay.IRModule()
    opt = relay.GlobalTypeVar("Option")
    a = relay.TypeVar("a")
    some = relay.Constructor("Some", [a], opt)
    none = relay.Constructor("None", [], opt)
    mod[opt] = relay.TypeData(opt, [a], [some, none])
    v = relay.var("v")
    mod["main"] = relay.Function([], relay.Match(none(), [relay.Clause(relay.PatternConstructor(some, [relay.PatternVar(v)]), v)], complete=False), relay.scalar_type("float32"))
    with pytest.raises(InterpreterError, match="no match clause applies"):
        relay.create_executor(mod=mod).evaluate()()


def test_if_and_tuples():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", "bool")
    f = relay.Function([c, x], relay.TupleGetItem(relay.If(c, relay.Tuple([x, relay.exp(x)]), relay.Tuple([x, x])), 1))
    xv = np.array([0.0, 1.0], "float32")
    np.testing.assert_allclose(run(f, True, xv).numpy(), np.exp(xv), rtol=1e-6)
    np.testing.assert_allclose(run(f, False, xv).numpy(), xv)


def test_arguments_are_checked_not_cast():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.exp(x))
    with pytest.raises(RelayError, match=r"argument 0 \(%x\): got dtype float64, expected float32"):
        run(f, np.zeros(2))
    with pytest.raises(RelayError, match=r"argument 0 \(%x\): got shape \(3,\), expected Tensor\[\(2,\), float32\]"):
        run(f, np.zeros(3, "float32"))
    with pytest.raises(RelayError, match=r"takes 1 argument"):
        run(f)


def test_params_bound_by_name():
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.multiply(x, w)))
    ex = relay.create_executor("debug", mod=mod, params={"w": np.array([2.0, 3.0], "float32")})
    out = ex.evaluate()(np.array([1.0, 1.0], "float32"))
    np.testing.assert_allclose(out.numpy(), [2.0, 3.0])


def test_shared_subexpression_evaluated_once_with_refs():
    # graph-form sharing means one evaluation: the ref is created once
    r = relay.RefCreate(relay.const(1.0))
    prog = relay.Let(relay.var("_"), relay.RefWrite(r, relay.const(5.0)), relay.RefRead(r))
    assert float(run(prog).numpy()) == 5.0


def test_bound_params_are_checked_not_broadcast():
    a = relay.var("a", shape=(2, 3))
    b = relay.var("b", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([a, b], relay.add(a, b)))
    with pytest.raises(relay.InputError, match=r"param 'b': got dtype float64, expected float32"):
        relay.create_executor("debug", mod=mod, params={"b": np.zeros((2, 3))}).evaluate()
    with pytest.raises(relay.InputError, match=r"param 'b': got shape \(3,\), expected Tensor\[\(2, 3\), float32\]"):
        relay.build(mod, target="llvm", params={"b": np.zeros(3, "float32")})
    # a Python scalar for a scalar parameter takes the declared dtype
    s = relay.var("s", "float32")
    mod2 = relay.IRModule.from_expr(relay.Function([a, s], relay.multiply(a, s)))
    out = relay.create_executor("debug", mod=mod2, params={"s": 2.0}).evaluate()(np.ones((2, 3), "float32"))
    np.testing.assert_allclose(out.numpy(), 2 * np.ones((2, 3)))


def test_create_executor_aot_warns_and_runs_on_the_graph_executor():
    """tvm.relay 0.19's create_executor("aot") ran without a word on the graph executor here
    (new-user finding); it now says so, and still computes the right value."""
    import warnings

    import numpy as np
    import pytest

    import relay_tvm as relay

    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(2.0))))
    with pytest.warns(UserWarning, match="no AOT executor.*graph executor"):
        ex = relay.create_executor("aot", mod=mod)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ex.evaluate()(np.array([1.0, -2.0, 0.5], "float32")).numpy()
    np.testing.assert_array_equal(out, [2.0, -4.0, 1.0])


def test_dynamic_batches_that_do_not_broadcast_are_an_input_error():
    """A new-user trial: x + y with x: (?, 4), y: (?, 4) called with batches 3 and 5 raised an
    InterpreterError wrapping NumPy's ValueError; it names the operator and the two shapes, as
    the VM does for the same program."""
    from relay_tvm.errors import InputError

    x = relay.var("x", shape=(relay.Any(), 4))
    y = relay.var("y", shape=(relay.Any(), 4))
    mod = relay.IRModule.from_expr(relay.Function([x, y], x + y))
    f = relay.create_executor("debug", mod=mod).evaluate()
    with pytest.raises(InputError, match=r"^add: the shapes of its operands \(3, 4\), \(5, 4\) "
                                         r"do not broadcast at run time \(each dimension must "
                                         r"be equal, or 1 on one side"):
        f(np.ones((3, 4), "float32"), np.ones((5, 4), "float32"))
    out = f(np.ones((3, 4), "float32"), np.ones((1, 4), "float32")).numpy()
    np.testing.assert_array_equal(out, np.full((3, 4), 2, "float32"))

"""The Prelude, written in the text format: its functions evaluated by the interpreter on lists,
options, trees and nats, against plain Python."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import structural_equal
from relay_tvm.errors import InterpreterError
from relay_tvm.runtime.interpreter import ConstructorValue


@pytest.fixture(scope="module")
def p():
    return relay.Prelude()


def rlist(p, values, dtype="int32"):
    out = p.nil()
    for v in reversed(values):
        out = p.cons(relay.const(v, dtype), out)
    return out


def pylist(v):
    """A List value from the interpreter as a Python list of scalars / tuples."""
    out = []
    while v.constructor.name_hint == "Cons":
        head, v = v.fields
        out.append(_py(head))
    assert v.constructor.name_hint == "Nil"
    return out


def _py(x):
    if isinstance(x, tuple):
        return tuple(_py(f) for f in x)
    if isinstance(x, ConstructorValue):
        return x
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x).item()


def run(p, expr):
    return relay.create_executor("debug", mod=p.mod).evaluate(expr)


def fn1(body_of, dtype="int32", ret=None):
    x = relay.var("x", dtype)
    return relay.Function([x], body_of(x), ret)


def fn2(body_of, dtype="int32"):
    a, b = relay.var("a", dtype), relay.var("b", dtype)
    return relay.Function([a, b], body_of(a, b))


XS = [3, 1, 4, 1, 5]


def test_prelude_module_type_checks_and_roundtrips(p):
    typed = relay.transform.InferType()(p.mod)
    text = relay.astext(typed)
    back = relay.parse(text)  # type-checked as it is parsed
    assert structural_equal(typed, back)
    assert relay.astext(back) == text
    assert relay.astext(typed["map"].checked_type) == "fn [A, B](fn (A) -> B, List[A]) -> List[B]"


def test_accessors(p):
    assert p.get_type("List") is p.list
    assert p.get_global_var("map") is p.map
    assert p.get_ctor("Option", "Some") is p.some
    assert p.mod.get_type("Tree")[1] is p.rose


@pytest.mark.parametrize(
    "name, build, expected",
    [
        ("hd", lambda p: p.hd(rlist(p, XS)), XS[0]),
        ("nth", lambda p: p.nth(rlist(p, XS), relay.const(2)), XS[2]),
        ("length", lambda p: p.length(rlist(p, XS)), len(XS)),
        ("sum", lambda p: p.sum(rlist(p, XS)), sum(XS)),
        ("foldl_sub", lambda p: p.foldl(fn2(relay.subtract), relay.const(100), rlist(p, XS)), 100 - sum(XS)),
        ("foldr_sub", lambda p: p.foldr(fn2(relay.subtract), relay.const(0), rlist(p, XS)),
         3 - (1 - (4 - (1 - (5 - 0))))),
        ("foldr1_sub", lambda p: p.foldr1(fn2(relay.subtract), rlist(p, XS)), 3 - (1 - (4 - (1 - 5)))),
        ("iterate", lambda p: relay.Call(p.iterate(fn1(lambda x: relay.multiply(x, relay.const(2))),
                                                   relay.const(5)), [relay.const(3)]), 3 * 2**5),
        ("compose", lambda p: relay.Call(p.compose(fn1(lambda x: relay.add(x, relay.const(1))),
                                                   fn1(lambda x: relay.multiply(x, relay.const(10)))),
                                         [relay.const(4)]), 41),
        ("id", lambda p: p.id(relay.const(7)), 7),
    ],
)
def test_scalar_results(p, name, build, expected):
    assert _py(run(p, build(p))) == expected


@pytest.mark.parametrize(
    "name, build, expected",
    [
        ("tl", lambda p: p.tl(rlist(p, XS)), XS[1:]),
        ("map", lambda p: p.map(fn1(lambda x: relay.multiply(x, x)), rlist(p, XS)), [v * v for v in XS]),
        ("filter", lambda p: p.filter(fn1(lambda x: relay.greater(x, relay.const(2))), rlist(p, XS)),
         [v for v in XS if v > 2]),
        ("concat", lambda p: p.concat(rlist(p, XS), rlist(p, [9, 8])), XS + [9, 8]),
        ("rev", lambda p: p.rev(rlist(p, XS)), XS[::-1]),
        ("update", lambda p: p.update(rlist(p, XS), relay.const(3), relay.const(0)), [3, 1, 4, 0, 5]),
        ("zip", lambda p: p.zip(rlist(p, XS), rlist(p, [7, 8, 9])), list(zip(XS, [7, 8, 9]))),
        ("empty_map", lambda p: p.map(fn1(lambda x: x), p.nil()), []),
    ],
)
def test_list_results(p, name, build, expected):
    assert pylist(run(p, build(p))) == expected


def _countdown(p):
    # seed n -> Some((n - 1, n)) while n > 0, else None: unfoldr gives [n, n-1, ..., 1]
    n = relay.var("n", "int32")
    step = relay.Function(
        [n],
        relay.If(
            relay.greater(n, relay.const(0)),
            p.some(relay.Tuple([relay.subtract(n, relay.const(1)), n])),
            p.none(),
        ),
    )
    return step


def test_unfoldr_unfoldl(p):
    assert pylist(run(p, p.unfoldr(_countdown(p), relay.const(4)))) == [4, 3, 2, 1]
    assert pylist(run(p, p.unfoldl(_countdown(p), relay.const(4)))) == [1, 2, 3, 4]


def test_map_accuml_and_accumr(p):
    # running sums: f(acc, x) = (acc + x, acc + x)
    acc, x = relay.var("acc", "int32"), relay.var("x", "int32")
    s = relay.add(acc, x)
    f = relay.Function([acc, x], relay.Tuple([s, s]))
    total, sums = run(p, p.map_accuml(f, relay.const(0), rlist(p, XS)))
    # 0.19's map_accuml (a foldl consing each result) gives them last first: its test_adt
    # checks [3, 2, 1] for x -> x over [1, 2, 3]
    assert _py(total) == sum(XS) and pylist(sums) == list(np.cumsum(XS))[::-1]
    total, sums = run(p, p.map_accumr(f, relay.const(0), rlist(p, XS)))
    assert _py(total) == sum(XS) and pylist(sums) == list(np.cumsum(XS[::-1])[::-1])


def test_trees(p):
    leaf = lambda v: p.rose(relay.const(v), p.nil())  # noqa: E731
    tree = p.rose(relay.const(1), p.cons(leaf(2), p.cons(p.rose(relay.const(3), p.cons(leaf(4), p.nil())), p.nil())))
    assert _py(run(p, p.size(tree))) == 4
    doubled = run(p, p.tmap(fn1(lambda x: relay.multiply(x, relay.const(2))), tree))
    root, children = doubled.fields
    assert _py(root) == 2
    assert [_py(c.fields[0]) for c in pylist_nodes(children)] == [4, 6]


def pylist_nodes(v):
    out = []
    while v.constructor.name_hint == "Cons":
        head, v = v.fields
        out.append(head)
    return out


def test_nat(p):
    three = p.s(p.s(p.s(p.z())))
    assert _py(run(p, p.nat_to_int(p.nat_double(three)))) == 6
    inc = fn1(lambda x: relay.add(x, relay.const(1)))
    assert _py(run(p, relay.Call(p.nat_iterate(inc, three), [relay.const(10)]))) == 13


def test_partial_functions_fail_on_empty_list(p):
    e = relay.var("e", relay.TypeCall(p.list, [relay.scalar_type("int32")]))
    with pytest.raises(InterpreterError):
        run(p, relay.Let(e, p.nil(), p.hd(e)))


def test_prelude_loads_into_existing_module_once():
    mod = relay.IRModule()
    x = relay.var("x", "float32")
    mod["main"] = relay.Function([x], x)
    p1 = relay.Prelude(mod)
    n_types, n_funcs = len(mod.get_global_type_vars()), len(mod.get_global_vars())
    p2 = relay.Prelude(mod)
    assert p1.mod is mod and "main" in mod and p2.map is p1.map
    # List, Option, Tree, nat and one dynamic tensor type per tensor-array dtype, once
    assert n_types == 4 + 9
    assert (len(mod.get_global_type_vars()), len(mod.get_global_vars())) == (n_types, n_funcs)


@pytest.mark.parametrize("op, a, b, expected", [
    ("Multiply", "One", "Raw(3f)", 3.0),     # one times x is x
    ("Multiply", "Raw(3f)", "Zero", 0.0),    # times zero is zero
    ("Multiply", "Raw(3f)", "Raw(4f)", 12.0),
    ("Add", "Zero", "Raw(3f)", 3.0),         # zero plus x is x
    ("Add", "One", "Raw(3f)", 4.0),
    ("Add", "Raw(2f)", "Raw(4f)", 6.0),
])
def test_gradient_rly_grad_cells(op, a, b, expected):
    mod = relay.IRModule()
    mod.import_from_std("gradient.rly")
    mod.import_from_std("gradient.rly")  # a second import adds nothing
    cells = {"One": "One(fn () { 1f })", "Zero": "Zero(fn () { 0f })"}
    fn = "multiply" if op == "Multiply" else "add"
    main = relay.parse_expr(
        f"fn () {{ @FromGradCell(@{op}GradCell(fn (%x: float32, %y: float32) {{ {fn}(%x, %y) }}, "
        f"{cells.get(a, a)}, {cells.get(b, b)})) }}", init_module=mod)
    mod["main"] = main
    out = relay.create_executor("debug", mod=mod).evaluate()()
    assert out.numpy().item() == expected


def test_prelude_shares_no_node(p):
    # 0.19 built its tensor-array functions without shared sub-expressions (its
    # test_analysis_feature expects no fGraph in the Prelude); ours shared lengths[j] and the
    # mapped list of tensor_array_stack
    from relay_tvm.analysis import Feature, detect_feature

    feats = detect_feature(p.mod)
    assert Feature.fGraph not in feats
    assert {Feature.fLet, Feature.fMatch, Feature.fConstructor, Feature.fIf} <= feats

"""LambdaLift, EtaExpand, Inline / InlineGlobals, RemoveUnusedFunctions."""

import numpy as np

import relay_tvm as relay
from relay_tvm import transform


def _eval(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def _local_functions(mod):
    found = []
    for f in mod.functions.values():
        def visit(n, top=f):
            if (isinstance(n, relay.Function) and n is not top and not n.is_primitive
                    and not n.get_attr("Closure")):
                found.append(n)
        relay.analysis.post_order_visit(f.body, visit)
    return found


def test_lambda_lift_closure_and_plain_function():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    z = relay.var("z", shape=(2,))
    closure = relay.Function([y], relay.add(x, y))  # captures x
    plain = relay.Function([z], relay.exp(z))
    f, g = relay.var("f"), relay.var("g")
    body = relay.Let(f, closure, relay.Let(g, plain, relay.Call(f, [relay.Call(g, [x])])))
    mod = transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))
    lifted = transform.InferType()(transform.LambdaLift()(mod))
    assert len(lifted.functions) == 3
    # the closure's lifted global takes the captured x and returns a Closure=1 function
    inner = [fn for gv, fn in lifted.functions.items() if gv.name_hint != "main"
             and isinstance(fn.body, relay.Function)]
    assert len(inner) == 1 and inner[0].body.get_attr("Closure") == 1
    assert len(inner[0].params) == 1
    a = np.array([0.5, 1.0], "float32")
    np.testing.assert_allclose(_eval(lifted, a).numpy(), _eval(mod, a).numpy(), rtol=1e-6)


def test_lambda_lift_recursive_local_function():
    # let rec count = fn(n, acc) { if n == 0 then acc else count(n - 1, acc + x) }
    i32 = "int32"
    x = relay.var("x", shape=(), dtype=i32)
    n = relay.var("n", shape=(), dtype=i32)
    acc = relay.var("acc", shape=(), dtype=i32)
    count = relay.var("count", relay.FuncType([relay.TensorType((), i32)] * 2, relay.TensorType((), i32)))
    body = relay.If(relay.equal(n, relay.const(0, i32)), acc,
                    relay.Call(count, [relay.subtract(n, relay.const(1, i32)), relay.add(acc, x)]))
    fn = relay.Function([n, acc], body)
    main = relay.Function([x], relay.Let(count, fn, relay.Call(count, [relay.const(5, i32), relay.const(0, i32)])))
    mod = transform.InferType()(relay.IRModule.from_expr(main))
    lifted = transform.InferType()(transform.LambdaLift()(mod))
    assert not _local_functions(lifted)
    assert int(_eval(lifted, np.array(3, i32)).numpy()) == 15
    assert int(_eval(mod, np.array(3, i32)).numpy()) == 15


def test_eta_expand_global_var():
    mod = relay.IRModule()
    a = relay.var("a", shape=(2,))
    mod["double"] = relay.Function([a], relay.add(a, a))
    x = relay.var("x", shape=(2,))
    f = relay.var("f")
    dbl = mod.get_global_var("double")
    mod["main"] = relay.Function([x], relay.Let(f, dbl, relay.Call(f, [x])))
    out = transform.EtaExpand(expand_global_var=True)(transform.InferType()(mod))
    out = transform.InferType()(out)
    assert isinstance(out["main"].body.value, relay.Function)
    v = np.array([1.0, 2.0], "float32")
    np.testing.assert_allclose(_eval(out, v).numpy(), [2.0, 4.0])


def test_inline_and_remove_unused():
    mod = relay.IRModule()
    a = relay.var("a", shape=(2,))
    t = relay.var("t")
    mod["helper"] = relay.Function([a], relay.Let(t, relay.exp(a), relay.add(t, a))).with_attr("Inline", 1)
    b = relay.var("b", shape=(2,))
    mod["unused"] = relay.Function([b], relay.negative(b))
    x = relay.var("x", shape=(2,))
    h = mod.get_global_var("helper")
    mod["main"] = relay.Function([x], relay.add(relay.Call(h, [x]), relay.Call(h, [x])))
    mod = transform.InferType()(mod)
    out = transform.InferType()(transform.Inline()(mod))
    gvs = []
    relay.analysis.post_order_visit(out["main"], lambda n: gvs.append(n) if isinstance(n, relay.GlobalVar) else None)
    assert not gvs
    v = np.array([0.1, 0.2], "float32")
    np.testing.assert_allclose(_eval(out, v).numpy(), _eval(mod, v).numpy(), rtol=1e-6)
    pruned = transform.RemoveUnusedFunctions()(out)
    assert "unused" not in pruned
    glob = transform.InlineGlobals()(mod)
    assert [g.name_hint for g in glob.get_global_vars()] == ["main"]
    np.testing.assert_allclose(_eval(transform.InferType()(glob), v).numpy(), _eval(mod, v).numpy(), rtol=1e-6)


def test_eta_expand_keeps_signatures():
    # a polymorphic constructor used as a value becomes a polymorphic function returning the
    # data type; a global's wrapper keeps its return type
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    list_t, cons, nil = p.mod.get_type("List")
    c = relay.var("c")
    x = relay.var("x", shape=(), dtype="int32")
    mod["main"] = relay.Function([x], relay.Let(c, cons, c(x, nil())))
    out = transform.InferType()(transform.EtaExpand(expand_constructor=True)(
        transform.InferType()(mod)))
    wrapper = out["main"].body.value
    assert isinstance(wrapper, relay.Function) and len(wrapper.type_params) == 1
    a = wrapper.type_params[0]
    assert wrapper.ret_type == list_t(a)
    assert [q.type_annotation for q in wrapper.params] == [a, list_t(a)]
    got = _eval(out, np.array(7, "int32"))
    assert int(got.fields[0].numpy()) == 7 and got.fields[1].constructor.name_hint == "Nil"


_POLY = """#[version = "0.0.5"]
def @g[A](%x: A, %z: A) -> (A, A) {
  let %h = fn (%y) { (%x, %y) };
  let %u = fn (%w) { %w };
  %h(%u(%z))
}
def @f[A](%x: A) -> A {
  let %k = fn (%y: A) -> A { %y };
  %k(%x)
}
def @rep[A](%x: A, %n: int32) -> A {
  let %loop = fn (%i: int32) -> A { if (equal(%i, 0)) { %x } else { %loop(subtract(%i, 1)) } };
  %loop(%n)
}
def @main(%a: Tensor[(2), float32], %b: int32) {
  (@g(@f(%a), %a), @g(%b, @f(%b)), @rep(%a, %b))
}
"""


def test_lambda_lift_polymorphic_closures_bind_their_type_variables():
    # closures in polymorphic functions mention the enclosing type variable A: each lifted
    # global binds its own (0.19: the free type variables become its type parameters), so the
    # text parses again and every use instantiates it
    mod = relay.parse(_POLY)
    lifted = transform.InferType()(transform.LambdaLift()(mod))
    assert not _local_functions(lifted)
    names = [gv.name_hint for gv in lifted.get_global_vars() if gv.name_hint.startswith("lift")]
    assert len(names) == 4
    for gv, f in lifted.functions.items():
        assert not relay.analysis.free_type_vars(f), gv
        if gv.name_hint in names:
            assert len(f.type_params) == 1, lifted[gv]
    closure = [lifted[n] for n in names if isinstance(lifted[n].body, relay.Function)]
    assert len(closure) == 2  # @g's %h and @rep's %loop capture %x
    again = relay.parse(lifted.astext())
    assert relay.analysis.structural_equal(again, lifted)
    a, b = np.array([0.5, -1.0], "float32"), np.array(3, "int32")
    for m in (mod, lifted, again):
        (ga, gb, rep) = _eval(m, a, b)
        for t in ga:
            np.testing.assert_array_equal(t.numpy(), a)
        assert [int(t.numpy()) for t in gb] == [3, 3]
        np.testing.assert_array_equal(rep.numpy(), a)


def test_lambda_lift_prelude_foldl_then_partial_evaluate():
    # Prelude functions (foldl's callers rev, map, ...) hold polymorphic closures: lifted
    # without their type variables, PartialEvaluate's inference failed (List[A] vs List[B])
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    a, b = relay.var("a", shape=()), relay.var("b", shape=())
    values = [1.0, 2.5, -4.0, 8.25]
    lst = p.nil()
    for v in reversed(values):
        lst = p.cons(relay.const(v), lst)
    mod["main"] = relay.Function([], p.foldl(relay.Function([a, b], a + b), relay.const(0.0),
                                              lst))
    mod = transform.InferType()(mod)
    lifted = transform.InferType()(transform.LambdaLift()(mod))
    for gv, f in lifted.functions.items():
        assert not relay.analysis.free_type_vars(f), gv
    assert any(gv.name_hint.startswith("lifted_") and f.type_params
               for gv, f in lifted.functions.items())
    pe = transform.Sequential([transform.LambdaLift(), transform.PartialEvaluate(),
                               transform.InferType()])(mod)
    want = float(sum(values))
    for m in (mod, lifted, pe):
        for kind in ("debug", "vm"):
            got = relay.create_executor(kind, mod=m).evaluate()()
            assert float(got.numpy()) == want, (kind, m)


def test_lifted_closure_keeps_the_captured_variables_spans():
    """The parameters a lifted closure gets for its captured variables carry their spans (they
    were made without one, so errors inside the lifted function lost the model's location)."""
    span = relay.Span("model.json", 7, 2)
    x = relay.Var("x", relay.TensorType((2,), "float32"), span)
    y = relay.var("y", shape=(2,))
    f = relay.var("f")
    body = relay.Let(f, relay.Function([y], relay.add(x, y)), relay.Call(f, [x]))
    mod = transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))
    lifted = transform.LambdaLift()(mod)
    (outer,) = [fn for gv, fn in lifted.functions.items() if gv.name_hint != "main"]
    assert [p.name_hint for p in outer.params] == ["x"]
    assert outer.params[0].span == span
    a = np.array([0.5, 1.0], "float32")
    np.testing.assert_allclose(_eval(lifted, a).numpy(), a + a)

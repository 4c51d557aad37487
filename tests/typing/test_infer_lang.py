"""Type inference on the language: functions, polymorphism, recursion, ADTs, refs, errors."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError, WellFormedError


def f32(*shape):
    return relay.TensorType(shape, "float32")


def list_module():
    mod = relay.IRModule()
    a = relay.TypeVar("a")
    lst = relay.GlobalTypeVar("List")
    cons = relay.Constructor("Cons", [a, relay.TypeCall(lst, [a])], lst)
    nil = relay.Constructor("Nil", [], lst)
    mod[lst] = relay.TypeData(lst, [a], [cons, nil])
    return mod, lst, cons, nil


def test_checked_type_before_inference_is_an_error():
    x = relay.var("x", shape=(2,))
    with pytest.raises(relay.UntypedError, match="run relay_tvm.transform.InferType"):
        _ = x.checked_type


def test_every_subexpression_gets_a_type():
    x = relay.var("x", shape=(2, 3))
    y = relay.exp(x)
    z = relay.Tuple([y, relay.sum(y, axis=1)])
    f = relay.Function([x], relay.TupleGetItem(z, 1))
    relay.transform.InferType()(relay.IRModule.from_expr(f))
    assert y.checked_type == f32(2, 3)
    assert z.checked_type == relay.TupleType([f32(2, 3), f32(2)])
    assert f.checked_type == relay.FuncType([f32(2, 3)], f32(2))


def test_unannotated_params_inferred_from_use():
    x = relay.var("x", shape=(3,))
    g = relay.var("g")
    y = relay.var("y")
    # fn (%g) { %g(%x) } applied to fn (%y) { %y + %x }: %g and %y inferred
    inner = relay.Function([y], relay.add(y, x))
    body = relay.Call(relay.Function([g], relay.Call(g, [x])), [inner])
    t = relay.transform.InferTypeLocal(body)
    assert t == f32(3)
    assert y.checked_type == f32(3)
    assert g.checked_type == relay.FuncType([f32(3)], f32(3))


def test_polymorphic_identity_instantiated_per_call():
    a = relay.TypeVar("a")
    x = relay.var("x", a)
    ident = relay.GlobalVar("id")
    mod = relay.IRModule()
    mod[ident] = relay.Function([x], x, a, [a])
    t = relay.var("t", shape=(2,))
    mod["main"] = relay.Function(
        [t], relay.Tuple([relay.Call(ident, [t]), relay.Call(ident, [relay.const(1, "int64")])])
    )
    mod = relay.transform.InferType()(mod)
    assert mod["main"].checked_type.ret_type == relay.TupleType(
        [f32(2), relay.TensorType((), "int64")]
    )
    assert mod["id"].checked_type.type_params == (a,)


def test_mutual_recursion_through_globals():
    mod = relay.IRModule()
    even, odd = relay.GlobalVar("even"), relay.GlobalVar("odd")
    n1, n2 = relay.var("n", "int32"), relay.var("n", "int32")
    one, zero = relay.const(1), relay.const(0)
    mod[even] = relay.Function(
        [n1], relay.If(relay.equal(n1, zero), relay.const(True), relay.Call(odd, [relay.subtract(n1, one)]))
    )
    mod[odd] = relay.Function(
        [n2], relay.If(relay.equal(n2, zero), relay.const(False), relay.Call(even, [relay.subtract(n2, one)]))
    )
    mod = relay.transform.InferType()(mod)
    assert mod["even"].checked_type == relay.FuncType([relay.scalar_type("int32")], relay.scalar_type("bool"))
    ev = relay.create_executor(mod=mod).evaluate(mod.get_global_var("even"))
    assert bool(ev(7).numpy()) is False
    assert bool(ev(10).numpy()) is True


def test_adt_constructor_and_match_types():
    mod, lst, cons, nil = list_module()
    h, t = relay.var("h"), relay.var("t")
    xs = relay.var("xs")
    body = relay.Match(
        xs,
        [
            relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternVar(t)]), h),
            relay.Clause(relay.PatternConstructor(nil), relay.const(0.0)),
        ],
    )
    mod["head_or_zero"] = relay.Function([xs], body)
    mod = relay.transform.InferType()(mod)
    elem = relay.scalar_type("float32")
    assert mod["head_or_zero"].checked_type == relay.FuncType([relay.TypeCall(lst, [elem])], elem)
    assert t.checked_type == relay.TypeCall(lst, [elem])


def test_references():
    r = relay.var("r")
    body = relay.Let(
        r,
        relay.RefCreate(relay.const(1.0)),
        relay.Tuple([relay.RefWrite(r, relay.const(2.0)), relay.RefRead(r)]),
    )
    t = relay.transform.InferTypeLocal(body)
    assert r.checked_type == relay.RefType(relay.scalar_type("float32"))
    assert t == relay.TupleType([relay.TupleType([]), relay.scalar_type("float32")])


def test_let_bound_recursive_closure():
    # let %loop = fn (%i: int32) -> int32 { if (%i < 10) { %loop(%i + 1) } else { %i } }; %loop(0)
    loop = relay.var("loop")
    i = relay.var("i", "int32")
    fn = relay.Function(
        [i],
        relay.If(relay.less(i, relay.const(10)), relay.Call(loop, [relay.add(i, relay.const(1))]), i),
        relay.scalar_type("int32"),
    )
    prog = relay.Let(loop, fn, relay.Call(loop, [relay.const(0)]))
    assert relay.transform.InferTypeLocal(prog) == relay.scalar_type("int32")
    assert int(relay.create_executor().evaluate(prog).numpy()) == 10


# ---- error messages -------------------------------------------------------------------------


def test_error_unbound_variable():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = relay.IRModule()
    mod["main"] = relay.Function([x], relay.add(x, y))
    with pytest.raises(WellFormedError, match=r"variable %y is used but not bound in @main"):
        relay.transform.InferType()(mod)


def test_error_arity_mismatch():
    x = relay.var("x", shape=(2,))
    f = relay.GlobalVar("f")
    mod = relay.IRModule()
    mod[f] = relay.Function([x], x)
    mod["main"] = relay.Function([], relay.Call(f, [relay.const([1.0, 2.0]), relay.const([1.0, 2.0])]))
    with pytest.raises(TypeInferenceError, match=r"@f expects 1 argument\(s\), got 2"):
        relay.transform.InferType()(mod)


def test_error_non_boolean_condition():
    x = relay.var("x", shape=(3,))
    e = relay.If(relay.less(x, relay.const(1.0)), x, x)
    with pytest.raises(
        TypeInferenceError,
        match=r"if condition must be a boolean scalar \(bool\), got Tensor\[\(3,\), bool\]",
    ):
        relay.transform.InferTypeLocal(e)


def test_error_argument_type_names_expected_and_actual_and_span():
    x = relay.var("x", shape=(2, 3))
    f = relay.Function([x], x)
    call = relay.Call(f, [relay.const([[1.0, 2.0]])], span=relay.Span("model.txt", 7, 3))
    with pytest.raises(TypeInferenceError) as info:
        relay.transform.InferTypeLocal(call)
    msg = str(info.value)
    assert "expected Tensor[(2, 3), float32], got Tensor[(1, 2), float32]" in msg
    assert "at model.txt:7:3" in msg
    assert "argument 0 of the call" in msg


def test_error_shape_mismatch_in_relation_has_span():
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(5,))
    from relay_tvm.ir import Call

    c = Call(relay.op.get("add"), [a, b], None, span=relay.Span("net.json node 4", 0, 0))
    with pytest.raises(TypeInferenceError, match=r"(?s)do not broadcast.*at net.json node 4"):
        relay.transform.InferTypeLocal(c)


def test_error_branch_types_differ():
    c = relay.var("c", "bool")
    e = relay.If(c, relay.const(1.0), relay.const(1))
    with pytest.raises(TypeInferenceError, match=r"two branches of if must have one type"):
        relay.transform.InferTypeLocal(e)


def test_error_non_exhaustive_match():
    mod, lst, cons, nil = list_module()
    xs = relay.var("xs", relay.TypeCall(lst, [relay.scalar_type("float32")]))
    h = relay.var("h")
    body = relay.Match(xs, [relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternWildcard()]), h)])
    mod["main"] = relay.Function([xs], body)
    with pytest.raises(TypeInferenceError, match=r"match is not exhaustive.*no clause for Nil"):
        relay.transform.InferType()(mod)


def test_incomplete_match_is_accepted():
    mod, lst, cons, nil = list_module()
    xs = relay.var("xs", relay.TypeCall(lst, [relay.scalar_type("float32")]))
    h = relay.var("h")
    body = relay.Match(xs, [relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternWildcard()]), h)], complete=False)
    mod["main"] = relay.Function([xs], body)
    relay.transform.InferType()(mod)


def test_nested_patterns_exhaustive():
    mod, lst, cons, nil = list_module()
    xs = relay.var("xs", relay.TypeCall(lst, [relay.scalar_type("float32")]))
    a, b = relay.var("a"), relay.var("b")
    P = relay.PatternConstructor
    clauses = [
        relay.Clause(P(cons, [relay.PatternVar(a), P(cons, [relay.PatternVar(b), relay.PatternWildcard()])]), relay.add(a, b)),
        relay.Clause(P(cons, [relay.PatternWildcard(), P(nil)]), relay.const(1.0)),
        relay.Clause(P(nil), relay.const(0.0)),
    ]
    mod["main"] = relay.Function([xs], relay.Match(xs, clauses))
    relay.transform.InferType()(mod)
    # dropping the middle clause leaves Cons(_, Nil) unmatched
    mod2, lst2, cons2, nil2 = list_module()
    xs2 = relay.var("xs", relay.TypeCall(lst2, [relay.scalar_type("float32")]))
    a2, b2 = relay.var("a"), relay.var("b")
    mod2["main"] = relay.Function([xs2], relay.Match(xs2, [
        relay.Clause(P(cons2, [relay.PatternVar(a2), P(cons2, [relay.PatternVar(b2), relay.PatternWildcard()])]), relay.add(a2, b2)),
        relay.Clause(P(nil2), relay.const(0.0)),
    ]))
    with pytest.raises(TypeInferenceError, match="not exhaustive"):
        relay.transform.InferType()(mod2)


def test_error_calling_a_tensor():
    x = relay.var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match=r"cannot call a value of type Tensor\[\(2,\), float32\]"):
        relay.transform.InferTypeLocal(relay.Call(x, [x]))


def test_error_tuple_index_out_of_range():
    t = relay.Tuple([relay.const(1.0)])
    with pytest.raises(TypeInferenceError, match="tuple index 3 is out of range for a tuple of 1 fields"):
        relay.transform.InferTypeLocal(relay.TupleGetItem(t, 3))


def test_error_uninferable_type():
    x = relay.var("x")
    with pytest.raises(TypeInferenceError, match=r"could not infer the type of %x"):
        relay.transform.InferTypeLocal(relay.Function([x], x))


def test_error_relation_lacks_information():
    d, w = relay.var("d", shape=(2, 4)), relay.var("w")
    with pytest.raises(TypeInferenceError, match=r"cannot infer the type of nn.dense's arguments %w"):
        relay.transform.InferTypeLocal(relay.Function([d, w], relay.nn.dense(d, w)))


def test_ret_type_annotation_checked():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], x, ret_type=f32(3))
    with pytest.raises(TypeInferenceError, match="return annotation"):
        relay.transform.InferTypeLocal(f)


def test_infer_type_fills_in_missing_return_types_and_param_annotations():
    # 0.19's Resolver set a missing Function.ret_type and Var.type_annotation to the inferred
    # types, in @main and in the functions inside it; the module passed in is left as it was
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y")
    inner = relay.Function([y], relay.sum(y, axis=1))
    f = relay.Function([x], relay.Tuple([relay.exp(x), relay.Call(inner, [x])]))
    mod = relay.IRModule.from_expr(f)
    typed = relay.transform.InferType()(mod)
    main = typed["main"]
    assert main.ret_type == relay.TupleType([f32(2, 3), f32(2)])
    new_inner = main.body.fields[1].op
    assert new_inner.ret_type == f32(2)
    assert new_inner.params[0].type_annotation == f32(2, 3)
    assert mod["main"].ret_type is None and inner.ret_type is None and y.type_annotation is None
    assert "-> (Tensor[(2, 3), float32], Tensor[(2), float32]) {" in relay.astext(typed)
    # a second inference changes nothing
    again = relay.transform.InferType()(typed)
    assert again["main"] is main


def test_infer_type_keeps_a_given_return_type_and_fills_polymorphic_ones():
    x = relay.var("x", shape=(4,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x), ret_type=f32(4)))
    ann = mod["main"].ret_type
    assert relay.transform.InferType()(mod)["main"].ret_type is ann
    a = relay.TypeVar("a")
    v = relay.var("v", a)
    mod = relay.IRModule()
    mod["id"] = relay.Function([v], v, None, [a])
    t = relay.var("t", shape=(2,))
    mod["main"] = relay.Function([t], relay.Call(mod.get_global_var("id"), [t]))
    typed = relay.transform.InferType()(mod)
    assert typed["id"].ret_type == a
    assert typed["main"].ret_type == f32(2)


def test_infer_type_fills_in_the_return_type_of_a_function_typed_locally_before():
    # InferTypeLocal types (and seals) a function without annotating it; putting it into a
    # module and running InferType must still give it its return type
    x = relay.var("x", shape=(3,))
    f = relay.Function([x], relay.negative(x))
    relay.transform.InferTypeLocal(f)
    typed = relay.transform.InferType()(relay.IRModule.from_expr(f))
    assert typed["main"].ret_type == f32(3)

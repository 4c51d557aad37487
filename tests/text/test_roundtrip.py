"""Round trips of the text format: parse(astext(x)) is structurally equal to x and prints the
same text again, for every expression kind, type kind, ADTs, attributes and constants."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import structural_equal
from relay_tvm.errors import ParseError


def roundtrip_mod(mod, **kw):
    # parse type-checks, as 0.19's ParseModule did, and InferType annotates let-bound variables:
    # the round trip is exact for a type-checked module
    mod = relay.transform.InferType()(mod)
    text = relay.astext(mod, **kw)
    assert text.startswith('#[version = "0.0.5"]')
    back = relay.parse(text)
    assert structural_equal(mod, back), text
    assert relay.astext(back, **kw) == text
    return text, back


def roundtrip_expr(expr):
    text = relay.astext(expr)
    back = relay.parse_expr(text)
    assert structural_equal(expr, back, map_free_vars=True), text
    assert relay.astext(back) == text
    return text, back


def tensor(shape=(2, 3), dtype="float32"):
    return relay.TensorType(shape, dtype)


X = relay.var("x", shape=(2, 3))
Y = relay.var("y", shape=(2, 3))
C = relay.var("c", "bool")


def _let():
    v = relay.var("v")
    return relay.Let(v, relay.add(X, Y), relay.multiply(v, v))


def _nested_let_value():
    a, b = relay.var("a"), relay.var("b")
    inner = relay.Let(b, relay.exp(X), relay.add(b, b))
    return relay.Let(a, inner, relay.subtract(a, Y))


def _shared():
    s = relay.add(X, Y)
    return relay.Tuple([relay.multiply(s, s), s])


def _if():
    s = relay.add(X, Y)  # used in both branches: bound once outside the if
    return relay.If(C, relay.multiply(s, X), relay.subtract(s, Y))


def _closure():
    p = relay.var("p", shape=(2, 3))
    f = relay.Function([p], relay.add(p, X))
    return relay.Call(f, [Y])


def _recursive_let():
    f = relay.var("f")
    n = relay.var("n", "int32")
    body = relay.If(
        relay.equal(n, relay.const(0)), relay.const(1), relay.Call(f, [relay.subtract(n, relay.const(1))])
    )
    fn = relay.Function([n], body, relay.scalar_type("int32"))
    return relay.Let(f, fn, relay.Call(f, [relay.const(5)]))


def _refs():
    r = relay.var("r")
    return relay.Let(
        r, relay.RefCreate(X), relay.Tuple([relay.RefWrite(r, relay.exp(relay.RefRead(r))), relay.RefRead(r)])
    )


def _tuples():
    t = relay.Tuple([X, relay.Tuple([Y]), relay.Tuple([])])
    return relay.Tuple([relay.TupleGetItem(t, 0), relay.TupleGetItem(relay.TupleGetItem(t, 1), 0), t])


def _let_as_argument():
    v = relay.var("v")
    block = relay.Let(v, relay.exp(X), relay.add(v, v))  # a let that is not in tail position
    return relay.multiply(block, relay.If(C, block, X))


EXPRS = {
    "let_as_argument": _let_as_argument,
    "var": lambda: X,
    "call": lambda: relay.add(X, Y),
    "attrs": lambda: relay.sum(X, axis=[1], keepdims=True),
    "let": _let,
    "let_value_is_let": _nested_let_value,
    "shared_dag": _shared,
    "if": _if,
    "closure": _closure,
    "recursive_let": _recursive_let,
    "refs": _refs,
    "tuples": _tuples,
    "function": lambda: relay.Function([X], relay.exp(X), tensor()),
    "scalars": lambda: relay.Tuple([relay.const(1.5), relay.const(2, "int64"), relay.const(True)]),
    "tensor_const": lambda: relay.add(X, relay.const(np.arange(6, dtype="float32").reshape(2, 3))),
}


@pytest.mark.parametrize("name", sorted(EXPRS))
def test_expression_kinds_roundtrip(name):
    expr = EXPRS[name]()
    roundtrip_expr(expr)
    mod = relay.IRModule.from_expr(expr)
    roundtrip_mod(mod)


@pytest.mark.parametrize("name", ["let", "if", "closure", "recursive_let", "refs", "tuples", "shared_dag"])
def test_parsed_program_evaluates_like_original(name):
    expr = EXPRS[name]()
    mod = relay.IRModule.from_expr(expr)
    _, back = roundtrip_mod(mod)
    rng = np.random.default_rng(0)
    args = []
    for p in mod["main"].params:
        t = p.type_annotation
        args.append(rng.standard_normal(t.shape).astype(t.dtype) if t.dtype != "bool" else np.array(True))
    want = relay.create_executor("debug", mod=mod).evaluate()(*args)
    got = relay.create_executor("debug", mod=back).evaluate()(*args)
    flat_w, flat_g = _flatten(want), _flatten(got)
    assert len(flat_w) == len(flat_g)
    for w, g in zip(flat_w, flat_g):
        np.testing.assert_array_equal(np.asarray(w), np.asarray(g))


def _flatten(v):
    if isinstance(v, (tuple, list)):
        return [x for f in v for x in _flatten(f)]
    if hasattr(v, "numpy"):
        return [v.numpy()]
    return [v]


TYPES = {
    "scalar": relay.scalar_type("int8"),
    "tensor": tensor((1, 3, 224, 224)),
    "tensor_1d": tensor((5,), "float16"),
    "tensor_any": relay.TensorType((relay.Any(), 3), "float32"),
    "tuple": relay.TupleType([tensor(), relay.scalar_type("bool")]),
    "tuple_1": relay.TupleType([tensor()]),
    "tuple_0": relay.TupleType([]),
    "func": relay.FuncType([tensor(), tensor()], relay.TupleType([tensor(), tensor()])),
    "ref": relay.RefType(tensor((4,), "int64")),
    "uint": relay.scalar_type("uint8"),
}


@pytest.mark.parametrize("name", sorted(TYPES))
def test_type_kinds_roundtrip(name):
    t = TYPES[name]
    x = relay.var("x", t)
    mod = relay.IRModule.from_expr(relay.Function([x], x, t))
    roundtrip_mod(mod)


@pytest.mark.parametrize(
    "t, text",
    [
        (tensor((1, 3)), "Tensor[(1, 3), float32]"),
        (tensor((5,), "int64"), "Tensor[(5), int64]"),
        (relay.scalar_type("bool"), "bool"),
        (relay.TensorType((relay.Any(), 2), "float16"), "Tensor[(?, 2), float16]"),
        (relay.TupleType([tensor((1,)), relay.scalar_type("int32")]), "(Tensor[(1), float32], int32)"),
        (relay.RefType(relay.scalar_type("int32")), "ref(int32)"),
        (relay.FuncType([relay.scalar_type("int32")], relay.scalar_type("bool")), "fn (int32) -> bool"),
    ],
)
def test_type_text(t, text):
    assert relay.astext(t) == text
    assert str(t) == text


def test_polymorphic_function_and_type_params():
    a = relay.TypeVar("A")
    x = relay.var("x", a)
    mod = relay.IRModule()
    mod["id"] = relay.Function([x], x, a, [a])
    b = relay.TypeVar("A")
    f = relay.var("f", relay.FuncType([b], b, [b]))
    mod["main"] = relay.Function([f], f)
    text, _ = roundtrip_mod(mod)
    assert "def @id[A](%x: A) -> A {" in text
    assert "fn [A](A) -> A" in text


def _list_module():
    mod = relay.IRModule()
    lst = relay.GlobalTypeVar("List")
    a = relay.TypeVar("A")
    nil = relay.Constructor("Nil", [], lst)
    cons = relay.Constructor("Cons", [a, relay.TypeCall(lst, [a])], lst)
    mod[lst] = relay.TypeData(lst, [a], [cons, nil])
    nat = relay.GlobalTypeVar("nat")
    z = relay.Constructor("z", [], nat)
    s = relay.Constructor("s", [relay.TypeCall(nat, [])], nat)
    mod[nat] = relay.TypeData(nat, [], [z, s])
    length = relay.GlobalVar("length")
    b = relay.TypeVar("B")
    xs = relay.var("xs", relay.TypeCall(lst, [b]))
    tl = relay.var("tl")
    body = relay.Match(
        xs,
        [
            relay.Clause(
                relay.PatternConstructor(cons, [relay.PatternWildcard(), relay.PatternVar(tl)]),
                relay.add(relay.const(1), length(tl)),
            ),
            relay.Clause(relay.PatternConstructor(nil), relay.const(0)),
        ],
    )
    mod[length] = relay.Function([xs], body, relay.scalar_type("int32"), [b])
    h = relay.var("h")
    v = relay.var("v", shape=(2,))
    pair = relay.Match(
        relay.Tuple([v, v]),
        [relay.Clause(relay.PatternTuple([relay.PatternVar(h), relay.PatternWildcard()]), h)],
        complete=False,
    )
    three = cons(relay.const(1), cons(relay.const(2), cons(relay.const(3), nil())))
    mod["main"] = relay.Function([v], relay.Tuple([length(three), pair, s(z())]))
    return mod


def test_adt_match_roundtrip_and_evaluates():
    mod = _list_module()
    text, back = roundtrip_mod(mod)
    assert "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}" in text
    assert "s(nat[])" in text  # a TypeCall without arguments keeps its brackets
    assert "match? (" in text and "Cons(_, %tl: List[B]) => {" in text
    v = np.array([1.0, 2.0], "float32")
    out = relay.create_executor("debug", mod=back).evaluate()(v)
    assert int(np.asarray(_flatten(out[0])[0])) == 3
    np.testing.assert_array_equal(np.asarray(_flatten(out[1])[0]), v)


def test_type_inference_on_parsed_module_matches():
    mod = _list_module()
    _, back = roundtrip_mod(mod)
    a = relay.transform.InferType()(mod)
    b = relay.transform.InferType()(back)
    assert relay.astext(a["main"].checked_type) == relay.astext(b["main"].checked_type)


# ---- constants --------------------------------------------------------------------------------

SCALARS = [
    (relay.const(1.0), "1f"),
    (relay.const(1.5), "1.5f"),
    (relay.const(-0.25), "-0.25f"),
    (relay.const(2, "int64"), "2i64"),
    (relay.const(3, "int8"), "3i8"),
    (relay.const(7, "uint8"), "7u8"),
    (relay.const(-4), "-4"),
    (relay.const(1.5, "float16"), "1.5f16"),
    (relay.const(0.1, "float64"), "0.1f64"),
    (relay.const(True), "True"),
    (relay.const(False), "False"),
    (relay.const(1e-5), "1e-05f"),
]


@pytest.mark.parametrize("c, text", SCALARS, ids=[t for _, t in SCALARS])
def test_scalar_constants_print_inline_and_roundtrip(c, text):
    assert relay.astext(c).splitlines()[-1] == text
    back = relay.parse_expr(text)
    assert back.data.dtype == c.data.dtype
    assert back.data.shape == ()
    np.testing.assert_array_equal(back.data, c.data)


@pytest.mark.parametrize(
    "arr",
    [
        np.array([np.nan, -0.0, np.inf, 1e-45, -3.4e38], "float32"),
        np.arange(24, dtype="int8").reshape(2, 3, 4) - 12,
        np.array([[True, False]]),
        np.array([1.0009765625, 65504.0], "float16"),
        np.array([2**62, -(2**63)], "int64"),
        np.array([0.1, np.pi], "float64"),
        np.array(np.nan, "float32"),  # a non-finite scalar goes to the metadata section
        np.zeros((0, 3), "float32"),
    ],
    ids=["f32_special", "i8_3d", "bool", "f16", "i64", "f64", "nan_scalar", "empty"],
)
def test_metadata_carries_exact_values(arr):
    c = relay.Constant(arr)
    text, back = roundtrip_mod(relay.IRModule.from_expr(relay.Function([], c)))
    assert "meta[relay.Constant][0]" in text and "#[metadata]" in text
    got = back["main"].body.data
    assert got.dtype == arr.dtype and got.shape == arr.shape
    assert got.tobytes() == np.array(arr, order="C").tobytes()


def test_same_constant_object_shares_one_metadata_entry():
    c = relay.const(np.ones((2, 3), "float32"))
    d = relay.const(np.ones((2, 3), "float32"))
    text, _ = roundtrip_mod(relay.IRModule.from_expr(relay.Function([X], relay.add(relay.add(X, c), relay.add(c, d)))))
    assert text.count("meta[relay.Constant][0]") == 2 and "meta[relay.Constant][1]" in text
    assert "meta[relay.Constant][2]" not in text


def test_metadata_omitted_and_init_meta_table():
    c = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([X], relay.add(X, c)))
    text = relay.astext(mod, show_meta_data=False)
    assert "#[metadata]" not in text and "meta data omitted" in text
    assert str(mod) == text
    with pytest.raises(ParseError, match=r"3:\d+: error: .*no #\[metadata\] section"):
        relay.parse(text)
    back = relay.parse(text, init_meta_table={"relay.Constant": [c]})
    # parse type-checks, which fills in @main's return type
    assert back["main"].ret_type == relay.TensorType((2, 3))
    assert structural_equal(relay.transform.InferType()(mod), back)


# ---- attributes -------------------------------------------------------------------------------

CONV = relay.var("w", shape=(4, 3, 3, 3))
ATTR_CASES = [
    # conv2d stores padding as 4 values, as Relay did, so it prints even when given as default
    ("conv_defaults", lambda x: relay.nn.conv2d(x, CONV), "nn.conv2d(%x, %w, padding=[0, 0, 0, 0])"),
    (
        "conv_padding",
        lambda x: relay.nn.conv2d(x, CONV, padding=(1, 1), channels=4, kernel_size=(3, 3)),
        "nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])",
    ),
    (
        "conv_layout_strings",
        lambda x: relay.nn.conv2d(x, CONV, strides=(2, 2), data_layout="NCHW", out_dtype="float32"),
        'nn.conv2d(%x, %w, strides=[2, 2], padding=[0, 0, 0, 0], out_dtype="float32")',
    ),
    ("sum_axis", lambda x: relay.sum(x, axis=[0, 2], keepdims=True), "sum(%x, axis=[0, 2], keepdims=True)"),
    ("sum_none", lambda x: relay.sum(x), "sum(%x)"),
    ("reshape", lambda x: relay.reshape(x, newshape=[1, -1]), "reshape(%x, newshape=[1, -1])"),
    ("cast", lambda x: relay.cast(x, "int8"), 'cast(%x, dtype="int8")'),
    # 0.19 declared TransposeAttrs.axes without a default, so its text always shows it
    ("transpose_none", lambda x: relay.transpose(x), "transpose(%x, axes=None)"),
    ("transpose_axes", lambda x: relay.transpose(x, (0, 2, 1, 3)), "transpose(%x, axes=[0, 2, 1, 3])"),
    ("dense_units", lambda x: relay.nn.dense(relay.reshape(x, [1, -1]), relay.var("w2", shape=(5, 48)), units=5),
     "nn.dense(%0, %w2, units=5)"),
]


@pytest.mark.parametrize("name, build, text", ATTR_CASES, ids=[c[0] for c in ATTR_CASES])
def test_operator_attributes_print_and_roundtrip(name, build, text):
    x = relay.var("x", shape=(1, 3, 4, 4))
    e = build(x)
    printed = relay.astext(e)
    assert printed.splitlines()[-1] == text
    _, back = roundtrip_expr(e)
    assert back.attrs == e.attrs


def test_transpose_printed_with_axes_none_parses_back_to_the_reversed_axes():
    x = relay.var("x", shape=(2, 3, 4))
    back = relay.parse_expr(relay.astext(relay.Function([x], relay.transpose(x))))
    a = np.arange(24, dtype="float32").reshape(2, 3, 4)
    got = relay.create_executor("debug", mod=relay.IRModule.from_expr(back)).evaluate()(a)
    np.testing.assert_array_equal(got.numpy(), np.transpose(a))


def test_attribute_left_out_gets_default():
    e = relay.parse_expr("free_var %x: Tensor[(1, 3, 4, 4), float32];\nfree_var %w: Tensor[(4, 3, 3, 3), float32];\n"
                         "nn.conv2d(%x, %w, padding=[1, 1])")
    assert e.attrs.strides == (1, 1) and e.attrs.groups == 1 and e.attrs.data_layout == "NCHW"
    assert e.attrs.padding == (1, 1)  # as written: the parser does not rewrite attributes


def _fake_args(op):
    n = op.num_inputs if op.num_inputs >= 0 else 1
    return [relay.var(f"a{i}") for i in range(n)]


@pytest.mark.parametrize("name", relay.op.list_op_names())
def test_every_registered_operator_attrs_roundtrip(name):
    """Each operator's schema defaults (and its required fields given plausible values) print
    and parse back to equal Attrs."""
    op = relay.op.get(name)
    values = {}
    samples = {"int": 1, "float": 0.5, "bool": True, "str": "NCHW", "ints": (1, 2), "floats": (0.5,),
               "dtype": "float32", "any": 1, "int?": 2, "float?": 1.5, "str?": "x", "ints?": (0,),
               "floats?": (1.0,)}
    for fname, f in op.attrs_schema.fields.items():
        if f.required:
            values[fname] = samples[f.kind]
    try:
        attrs = op.make_attrs(**values)
    except Exception as e:  # a schema whose required fields need specific values
        pytest.fail(f"{name}: cannot build attrs from samples {values}: {e}")
    call = relay.Call(op, _fake_args(op), attrs)
    text = relay.astext(call)
    back = relay.parse_expr(text)
    assert structural_equal(call, back, map_free_vars=True), text
    assert back.attrs == attrs


def test_function_attributes():
    p = relay.var("p", shape=(2,))
    f = relay.Function([p], relay.exp(p)).with_attr("Primitive", 1).with_attr("Composite", "exp_c")
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Call(f, [x])))
    text, back = roundtrip_mod(mod)
    assert ('fn (%p: Tensor[(2), float32], Primitive=1, Composite="exp_c") '
            '-> Tensor[(2), float32] {') in text
    inner = back["main"].body.op
    assert inner.attrs["Primitive"] == 1 and inner.attrs["Composite"] == "exp_c"


# ---- text details -----------------------------------------------------------------------------


def test_printed_layout_matches_relay():
    x = relay.var("x", shape=(1, 3))
    w = relay.var("w", shape=(4, 3))
    d = relay.nn.dense(x, w, units=4)
    a = relay.add(d, relay.const(1.0))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.multiply(a, a), relay.TensorType((1, 4))))
    assert relay.astext(mod) == (
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32]) -> Tensor[(1, 4), float32] {\n"
        "  %0 = nn.dense(%x, %w, units=4);\n"
        "  %1 = add(%0, 1f);\n"
        "  multiply(%1, %1)\n"
        "}"
    )


def test_type_comments_optional_and_ignored_by_parser():
    x = relay.var("x", shape=(1, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.add(x, x))))
    mod = relay.transform.InferType()(mod)
    text = relay.astext(mod, show_types=True)
    assert "%0 = add(%x, %x) /* ty=Tensor[(1, 3), float32] */;" in text
    assert "/* ty=" not in relay.astext(mod)
    back = relay.parse(text)
    assert structural_equal(mod, back)


def test_duplicate_and_odd_names_are_made_unique():
    a, b, c = relay.var("x", shape=(1,)), relay.var("x", shape=(1,)), relay.var("0", shape=(1,))
    d = relay.var("conv0:weight", shape=(1,))
    mod = relay.IRModule.from_expr(relay.Function([a, b, c, d], relay.add(relay.add(a, b), relay.add(c, d))))
    text, _ = roundtrip_mod(mod)
    assert "%x: Tensor[(1), float32], %x1: Tensor[(1), float32], %v0:" in text
    assert "%conv0_weight" in text


def test_handwritten_relay_text_parses_and_runs():
    text = """#[version = "0.0.5"]
// a small network in the form tvm.relay 0.19 printed it
def @main(%data: Tensor[(1, 2), float32], %w: Tensor[(3, 2), float32]) -> Tensor[(1, 3), float32] {
  %0 = nn.dense(%data, %w, units=3) /* ty=Tensor[(1, 3), float32] */;
  %1 = add(%0, 0.5f /* ty=float32 */) /* ty=Tensor[(1, 3), float32] */;
  let %y: Tensor[(1, 3), float32] = multiply(%1, 2f);
  %2 = (%y, %1);
  subtract(%2.0, %2.1)
}
"""
    mod = relay.parse(text)
    data = np.array([[1.0, -2.0]], "float32")
    w = np.arange(6, dtype="float32").reshape(3, 2)
    out = relay.create_executor("debug", mod=mod).evaluate()(data, w)
    h = data @ w.T + 0.5
    np.testing.assert_allclose(_flatten(out)[0], 2 * h - h, rtol=1e-6)


def test_spans_point_at_the_source():
    text = '#[version = "0.0.5"]\ndef @main(%x: float32) {\n  %0 = add(%x, %x);\n  exp(%0)\n}'
    mod = relay.parse(text, source_name="net.relay")
    body = mod["main"].body
    assert body.span.source_name == "net.relay"
    assert (body.span.line, body.span.column) == (4, 3)
    assert (body.args[0].span.line, body.args[0].span.column) == (3, 8)
    assert (mod["main"].params[0].span.line, mod["main"].params[0].span.column) == (2, 11)


def test_parse_into_init_module_and_global_calls():
    mod = relay.parse('#[version = "0.0.5"]\ndef @double(%x: float32) { add(%x, %x) }')
    mod2 = relay.parse(
        '#[version = "0.0.5"]\ndef @main(%x: float32) { %0 = @double(%x); @helper(%0) }\n'
        "def @helper(%y: float32) -> float32 { @double(%y) }",
        init_module=mod,
    )
    assert set(g.name_hint for g in mod2.get_global_vars()) == {"double", "main", "helper"}
    out = relay.create_executor("debug", mod=mod2).evaluate()(np.array(1.5, "float32"))
    assert float(_flatten(out)[0]) == 6.0
    roundtrip_mod(mod2)


def test_str_of_nodes_and_modules():
    mod = _list_module()
    assert str(mod) == relay.astext(mod, show_meta_data=False)
    assert relay.astext(mod).replace("\n", "\r\n").count("\r\n") > 10
    typed = relay.transform.InferType()(mod)  # parse type-checks
    assert structural_equal(relay.parse(relay.astext(typed).replace("\n", "\r\n")), typed)
    assert str(relay.op.get("nn.conv2d")) != ""
    assert relay.astext(relay.op.get("nn.conv2d")) == "nn.conv2d"
    # partial programs: incomplete types and unannotated vars print without crashing
    v = relay.var("v", relay.IncompleteType())
    assert "%v: _" in relay.astext(relay.Function([v], v))
    assert relay.fromtext is not None and relay.SourceName("a.relay").name == "a.relay"


def test_string_attributes_with_escapes_and_unicode():
    p = relay.var("p", shape=(2,))
    name = 'quote" backslash\\ tab\t newline\n é 😀'
    f = relay.Function([p], p).with_attr("Composite", name)
    x = relay.var("x", shape=(2,))
    text, back = roundtrip_mod(relay.IRModule.from_expr(relay.Function([x], relay.Call(f, [x]))))
    assert back["main"].body.op.attrs["Composite"] == name


def test_global_names_that_are_not_identifiers_are_quoted():
    mod = relay.IRModule()
    x = relay.var("x", "float32")
    mod["my-func.v2"] = relay.Function([x], relay.exp(x))
    y = relay.var("y", "float32")
    mod["main"] = relay.Function([y], relay.Call(mod.get_global_var("my-func.v2"), [y]))
    text, back = roundtrip_mod(mod)
    assert 'def @"my-func.v2"(%x: float32) -> float32 {' in text
    assert back.get_global_var("my-func.v2").name_hint == "my-func.v2"


def test_symbolic_dimensions_parse_to_one_shape_variable():
    text = (
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(n, 3), float32], %y: Tensor[(n, 3), float32]) {\n  add(%x, %y)\n}"
    )
    mod = relay.parse(text)
    px, py = mod["main"].params
    assert px.type_annotation.shape[0] is py.type_annotation.shape[0]
    # parse type-checks (as 0.19's), which fills in the return type, in the same variable n
    assert mod["main"].ret_type.shape[0] is px.type_annotation.shape[0]
    assert relay.astext(mod) == text.replace(") {", ") -> Tensor[(n, 3), float32] {")
    typed = relay.transform.InferType()(mod)
    assert relay.astext(typed["main"].checked_type) == (
        "fn (Tensor[(n, 3), float32], Tensor[(n, 3), float32]) -> Tensor[(n, 3), float32]"
    )


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), 3.5, -1e-30])
def test_float_attribute_values_including_infinities(value):
    x = relay.var("x", shape=(2,))
    e = relay.Call(relay.op.get("clip"), [x], relay.op.get("clip").make_attrs(a_min=-1.0, a_max=value))
    text, back = roundtrip_expr(e)
    assert back.attrs.a_max == value


def test_infinite_scalar_literals_parse():
    e = relay.parse_expr("(inff, -inff, nanf16, 1e38f)")
    assert np.isposinf(e.fields[0].data) and np.isneginf(e.fields[1].data)
    assert e.fields[2].data.dtype == np.float16 and np.isnan(e.fields[2].data)
    with pytest.raises(ParseError, match=r"1:2: error: bad number 1e39f: out of range for float32"):
        relay.parse_expr("(1e39f, 1)")
    # past float64's range too (it read as infinity and was taken; fresh-user trial)
    for text, dtype in (("1e999f", "float32"), ("-1e999f64", "float64"), ("1e400f16", "float16")):
        with pytest.raises(ParseError, match=rf"bad number {text}: out of range for {dtype}"):
            relay.parse_expr(text)


def test_symbolic_dimension_expressions():
    from tvm import tirx

    text = (
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(n * 2 + 1, floordiv(n, 2), (n - 1) * m, n - (m - 1), max(n, m), ?, 3), "
        "float32]) {\n  %x\n}"
    )
    mod = relay.parse(text)
    shape = mod["main"].params[0].type_annotation.shape
    n = shape[1].a
    assert isinstance(n, tirx.Var) and n.name == "n"
    assert type(shape[0]).__name__ == "Add" and type(shape[2]).__name__ == "Mul"
    assert isinstance(shape[5], relay.ir.AnyDim) and shape[6] == 3
    ret = "Tensor[(n * 2 + 1, floordiv(n, 2), (n - 1) * m, n - (m - 1), max(n, m), ?, 3), float32]"
    assert relay.astext(mod) == text.replace(") {", f") -> {ret} {{")


def _small_net():
    data = relay.var("data", shape=(1, 3, 8, 8))
    w1 = relay.var("w1", shape=(4, 3, 3, 3))
    w2 = relay.var("w2", shape=(10, 256))
    y = relay.nn.relu(relay.nn.conv2d(data, w1, padding=(1, 1), channels=4, kernel_size=(3, 3)))
    y = relay.add(y, relay.const(np.full((4, 1, 1), 0.5, "float32")))
    y = relay.nn.dense(relay.reshape(y, (1, -1)), w2)
    return relay.IRModule.from_expr(relay.Function([data, w1, w2], relay.Tuple([y, relay.sum(y)])))


PASSES = {
    "anf": lambda T: T.ToANormalForm(),
    "anf_then_gnf": lambda T: T.Sequential([T.ToANormalForm(), T.ToGraphNormalForm()]),
    "basic_block": lambda T: T.ToBasicBlockNormalForm(),
    "fused": lambda T: T.Sequential([T.InferType(), T.FuseOps(fuse_opt_level=2)]),
    "fused_anf": lambda T: T.Sequential([T.InferType(), T.FuseOps(fuse_opt_level=2), T.ToANormalForm()]),
    "lambda_lift": lambda T: T.Sequential([T.InferType(), T.FuseOps(fuse_opt_level=2), T.LambdaLift()]),
}


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_outputs_roundtrip(name):
    mod = PASSES[name](relay.transform)(_small_net())
    _, back = roundtrip_mod(mod)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(p.type_annotation.shape).astype("float32") for p in mod["main"].params]
    want = relay.create_executor("debug", mod=mod).evaluate()(*args)
    got = relay.create_executor("debug", mod=back).evaluate()(*args)
    for w, g in zip(_flatten(want), _flatten(got)):
        np.testing.assert_array_equal(np.asarray(w), np.asarray(g))


# Two tensors in TVM's serialization, base64 as TVM writes them in a node JSON's b64ndarrays
# (float32 (2, 3) of 0.1 .. 5.1, and bool (1, 1, 2, 1) of False, True)
_TVM_F32 = ("P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAgAAAAIgAQACAAAAAAAAAAMAAAAAAAAAGAAAAAAAAADNzMw9zcyMP2"
            "ZmBkBmZkZAMzODQDMzo0A=")
_TVM_BOOL = ("P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAEBAQABAAAAAAAAAAEAAAAAAAAAAgAAAAAAAAABAAAAAAAAAAI"
             "AAAAAAAAAAAE=")


def _tvm019_metadata(blobs):
    consts = [{"type_key": "relay.Constant",
               "attrs": {"_checked_type_": "0", "data": str(i), "span": "0",
                         "virtual_device_": "0"}} for i in range(len(blobs))]
    return {"root": 1, "nodes": [{"type_key": ""},
                                 {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
                                 {"type_key": "Array", "data": [3 + i for i in range(len(blobs))]},
                                 *consts],
            "b64ndarrays": list(blobs), "attrs": {"tvm_version": "0.19.0"}}


def test_tvm019_metadata_section_is_read():
    """TVM 0.19's astext(show_meta_data=True) writes its node JSON after #[metadata]; its keys
    were ignored ("the metadata section has 0 constants"; fresh-user trial)."""
    import json

    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(2, 3), float32], %m: Tensor[(1, 1, 2, 1), bool]) {\n"
            "  (add(%x, meta[relay.Constant][0]), logical_and(%m, meta[relay.Constant][1]))\n"
            "}\n#[metadata]\n" + json.dumps(_tvm019_metadata([_TVM_F32, _TVM_BOOL]), indent=2))
    mod = relay.parse(text)
    f32, flags = (a.args[1].data for a in mod["main"].body.fields)
    np.testing.assert_array_equal(
        f32, np.array([[0.1, 1.1, 2.1], [3.1, 4.1, 5.1]], "float32"))
    np.testing.assert_array_equal(flags, np.array([False, True]).reshape(1, 1, 2, 1))
    damaged = _tvm019_metadata([_TVM_F32[:-8] + "AAAAAA=="])
    with pytest.raises(ParseError, match=r"relay.Constant\[0\]: 23 bytes of data, "
                                         r"expected 24"):
        relay.parse('#[version = "0.0.5"]\ndef @main() { meta[relay.Constant][0] }\n'
                    "#[metadata]\n" + json.dumps(damaged))

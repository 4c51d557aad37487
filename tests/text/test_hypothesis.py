"""Property: for random well-typed programs, parse(astext(mod)) is structurally equal to mod,
prints the same text again, and evaluates to the same values."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import relay_tvm as relay
from relay_tvm.analysis import structural_equal

SHAPE = (2, 3)
BINARY = [relay.add, relay.subtract, relay.multiply, relay.maximum, relay.minimum]
UNARY = [relay.negative, relay.tanh, relay.sigmoid, relay.abs]


@st.composite
def programs(draw):
    x = relay.var("x", shape=SHAPE)
    y = relay.var("y", shape=SHAPE)
    c = relay.var("c", "bool")
    pool = [x, y]
    lets = []
    pick = lambda: pool[draw(st.integers(0, len(pool) - 1))]  # noqa: E731
    for _ in range(draw(st.integers(1, 20))):
        kind = draw(st.integers(0, 11))
        if kind == 0:
            e = draw(st.sampled_from(BINARY))(pick(), pick())
        elif kind == 1:
            e = draw(st.sampled_from(UNARY))(pick())
        elif kind == 2:
            v = relay.var(draw(st.sampled_from(["v", "x", "tmp", "0"])))  # clashing names on purpose
            lets.append((v, pick()))
            e = v
        elif kind == 3:
            t = relay.Tuple([pick(), pick()])
            e = relay.TupleGetItem(t, draw(st.integers(0, 1)))
        elif kind == 4:
            e = relay.If(c, pick(), pick())
        elif kind == 5:
            p = relay.var("p", shape=SHAPE)
            f = relay.Function([p], draw(st.sampled_from(BINARY))(p, pick()))
            e = relay.Call(f, [pick()])
        elif kind == 6:
            value = draw(st.floats(-4, 4, allow_nan=False, width=32))
            e = relay.add(pick(), relay.const(value, "float32"))
        elif kind == 7:
            arr = np.array(draw(st.lists(st.floats(-4, 4, width=32), min_size=6, max_size=6)), "float32")
            e = relay.multiply(pick(), relay.const(arr.reshape(SHAPE)))
        elif kind == 8:
            e = relay.add(pick(), relay.sum(pick(), axis=[1], keepdims=True))
        elif kind == 9:
            e = relay.RefRead(relay.RefCreate(pick()))
        elif kind == 10:  # branches that are blocks with their own lets, sharing outer nodes
            a1, a2, b = relay.var("a"), relay.var("a"), relay.var("b")
            shared = pick()
            e = relay.If(
                c,
                relay.Let(a1, relay.exp(shared), relay.add(a1, pick())),
                relay.Let(b, shared, relay.Let(a2, relay.negative(b), relay.multiply(a2, b))),
            )
        else:  # a closure whose body is a let chain, called twice (the function is shared)
            p, t = relay.var("p", shape=SHAPE), relay.var("t")
            f = relay.Function([p], relay.Let(t, relay.add(p, pick()), relay.subtract(t, p)))
            e = relay.add(relay.Call(f, [pick()]), relay.Call(f, [pick()]))
        pool.append(e)
    body = relay.Tuple([pool[-1], pick()]) if draw(st.booleans()) else pool[-1]
    for v, val in reversed(lets):
        body = relay.Let(v, val, body)
    return relay.IRModule.from_expr(relay.Function([x, y, c], body))


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [a for f in v for a in _flat(f)]
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v)]


@settings(max_examples=60, deadline=None)
@given(programs(), st.booleans())
def test_random_programs_roundtrip(mod, cond):
    mod = relay.transform.InferType()(mod)  # the generator only builds well-typed programs
    text = relay.astext(mod)
    back = relay.parse(text)
    assert structural_equal(mod, back), text
    assert relay.astext(back) == text
    assert relay.astext(relay.transform.InferType()(back), show_types=True) == relay.astext(
        mod, show_types=True
    )
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(SHAPE).astype("float32") for _ in range(2)] + [np.array(cond)]
    want = relay.create_executor("debug", mod=mod).evaluate()(*args)
    got = relay.create_executor("debug", mod=back).evaluate()(*args)
    for w, g in zip(_flat(want), _flat(got), strict=True):
        np.testing.assert_array_equal(w, g)


PIECES = [
    "def", "@main", "@f", "(", ")", "{", "}", "[", "]", ",", ";", ":", "=", "=>", "->", ".", "?",
    "%x", "%0", "%1", "let", "fn", "if", "else", "match", "match?", "type", "List", "Cons", "Nil",
    "A", "_", "Tensor", "float32", "int8", "1", "-2", "1.5f", "3i64", "True", "None", "add", "nn.conv2d",
    "sum", "axis", "meta", "relay.Constant", "ref", "ref_read", "ref_write", '"s"', '"\\q"', "free_var",
    "\n", " ", "/*", "*/", "//", "#[metadata]", "$", "0.0.5", "+", "*", "-",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.booleans())
def test_malformed_text_gives_parse_errors_only(pieces, as_expr):
    """Whatever the input, the parser returns a program or raises ParseError (no KeyError,
    IndexError, AttributeError ...)."""
    text = '#[version = "0.0.5"]\n' + " ".join(pieces)
    try:
        (relay.parse_expr if as_expr else relay.parse)(text)
    except relay.ParseError as e:
        assert e.diagnostics
        for line, col, msg in e.diagnostics:
            assert line >= 1 and col >= 1 and msg

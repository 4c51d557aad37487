"""Syntax that tvm.relay 0.19's parser accepted besides what its printer wrote: infix
operators, unary minus, sequencing ``e1; e2``, bare nullary constructors, nested comments,
wide integer literals, attributes of non-operator calls."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import structural_equal
from relay_tvm.errors import ParseError


def expr(text):
    e = relay.parse_expr(text)
    back = relay.parse_expr(relay.astext(e))  # whatever was read prints and reads back
    assert structural_equal(e, back, map_free_vars=True)
    return e


def ev(text):
    return np.asarray(relay.create_executor("debug").evaluate(relay.parse_expr(text)).numpy())


@pytest.mark.parametrize(
    "text, value",
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),  # left associative
        ("20 / 2 / 5", 2),
        ("--10", 10),
        ("---10", -10),
        ("-(2 + 3)", -5),
        ("7 -1", 6),  # the lexer reads `-1` as a literal; after an operand it is a subtraction
    ],
)
def test_infix_arithmetic_evaluates(text, value):
    assert ev(text) == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("1 * 1 + 1 < 1 == False", True),  # (((1 * 1) + 1) < 1) == False
        ("2 >= 2", True),
        ("1 != 1", False),
        ("3 <= 2", False),
        ("1 > 0", True),
    ],
)
def test_comparison_precedence(text, value):
    assert bool(ev(text)) is value


def test_infix_builds_operator_calls():
    e = expr("free_var %x: float32;\n%x * 2f + 1f")
    assert e.op.name == "add" and e.args[0].op.name == "multiply"
    assert float(e.args[1].data) == 1.0


def test_sequencing_is_a_let_of_a_fresh_variable():
    e = expr("free_var %x: float32;\n%0 = ref(%x);\nref_write(%0, 1f);\nref_read(%0)")
    assert isinstance(e, relay.Let) and e.var.name_hint == "_"
    assert isinstance(e.value, relay.RefWrite) and isinstance(e.body, relay.RefRead)
    with pytest.raises(ParseError, match=r"2:7: error: expected an expression after ';'"):
        relay.parse_expr("let %a = 1;\n%a + 1;\n")


def test_bare_nullary_constructor_is_a_call():
    mod = relay.parse(
        '#[version = "0.0.5"]\ntype List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n'
        "def @single(%x: int32) -> List[int32] {\n  Cons(%x, Nil)\n}"
    )
    body = mod["single"].body
    nil = body.args[1]
    assert isinstance(nil, relay.Call) and nil.op.name_hint == "Nil" and nil.args == ()
    text = relay.astext(mod)
    assert "Cons(%x, %0)" in text and "%0 = Nil;" in text
    assert structural_equal(relay.parse(text), mod)


def test_nested_block_comments_and_wide_literals():
    e = expr("/* outer /* inner */ still a comment */ (2147483647, 2147483648, -2147483649)")
    assert [f.data.dtype.name for f in e.fields] == ["int32", "int64", "int64"]
    assert int(e.fields[1].data) == 2**31
    with pytest.raises(ParseError, match=r"1:1: error: bad number 2147483648i32: out of range"):
        relay.parse_expr("2147483648i32")


def test_attributes_of_a_non_operator_call_keep_their_type_key():
    text = (
        '#[version = "0.0.5"]\n'
        "def @main(%p0: Tensor[(2, 4), float32]) -> Tensor[(2, 4), float32] {\n"
        "  %0 = fn (%x: Tensor[(2, 4), float32]) -> Tensor[(2, 4), float32] {\n"
        "    nn.relu(%x)\n  };\n"
        '  %0(%p0, name="func_call_attrs", attrs_type_key="attrs.TestAttrs")\n'
        "}"
    )
    mod = relay.parse(text)
    call = mod["main"].body
    assert call.attrs.type_key == "attrs.TestAttrs" and call.attrs["name"] == "func_call_attrs"
    assert relay.astext(mod) == text
    assert structural_equal(relay.parse(text), mod)


def test_dotted_function_attribute_names():
    x = relay.var("x", shape=(2, 3))
    f = relay.Function([x], relay.reshape(x, (-1,))).with_attr("Primitive", 1).with_attr(
        "relay.reshape_only", 1
    )
    text = relay.astext(f)
    assert "relay.reshape_only=1" in text
    assert structural_equal(relay.parse_expr(text), f)


def test_match_clause_value_after_bindings():
    # TVM 0.19's parser read bindings before a clause's value without braces, up to its ','
    mod = relay.parse("""#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @f(%xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%x, %rest) => %0 = %x * 2;
      let %y = %0 + 1;
      %y,
    Nil => 0,
  }
}
""")
    clause = mod["f"].body.clauses[0]
    assert isinstance(clause.rhs, relay.Let) and clause.rhs.var.name_hint == "y"
    assert len(mod["f"].body.clauses) == 2
    assert structural_equal(relay.parse(relay.astext(mod)), mod)

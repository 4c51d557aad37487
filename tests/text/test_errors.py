"""Parse errors: a ParseError naming source, line and column, the offending token and what was
expected; every error of a file is reported."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import ParseError, RelayError

H = '#[version = "0.0.5"]\n'

# (name, text, regex the message must match: "line:col: error: ...")
CASES = [
    # an expression's text given to fromtext (a fresh-user trial: the message did not say
    # that parse_expr reads it)
    ("expression_text", H + "free_var %x: Tensor[(2), float32];\nadd(%x, %x)\n",
     r"2:1: error: expected 'def' or 'type' but got 'free_var' \(the text of an expression, "
     r"not of a module: parse it with relay.parse_expr"),
    ("unbalanced_brace", H + "def @main(%x: float32) {\n  add(%x, %x)\n",
     r"from_string:4:1: error: expected '\}' to close '\{' at 2:24 but got end of input"),
    ("extra_close_brace", H + "def @main(%x: float32) {\n  add(%x, %x)\n}\n}\n",
     r"5:1: error: unexpected '\}' after a definition; expected 'def', 'type'"),
    ("unbalanced_paren", H + "def @main(%x: float32) {\n  add(%x, exp(%x)\n}",
     r"4:1: error: expected '\)' to close '\(' at 3:6 but got '\}'"),
    ("missing_semicolon", H + "def @main(%x: float32) {\n  %0 = add(%x, %x)\n  %1 = exp(%0);\n  %1\n}",
     r"4:3: error: expected ';' but got '%1'"),
    ("bad_shape_float_dim", H + "def @main(%x: Tensor[(1, 2.5), float32]) {\n  %x\n}",
     r"2:26: error: bad shape: expected a non-negative integer, '\?' or a shape variable but got '2.5'"),
    ("bad_shape_no_parens", H + "def @main(%x: Tensor[1, float32]) {\n  %x\n}",
     r"2:22: error: bad shape: expected '\(' starting a shape"),
    ("negative_dim", H + "def @main(%x: Tensor[(1, -2), float32]) {\n  %x\n}",
     r"2:26: error: bad shape: dimension -2 is negative"),
    ("bad_dtype", H + "def @main(%x: Tensor[(1), floot32]) {\n  %x\n}",
     r"2:27: error: bad dtype floot32"),
    ("unknown_op", H + "def @main(%x: float32) {\n  addd(%x, %x)\n}",
     r"3:3: error: unknown operator or constructor 'addd'; did you mean add\?"),
    ("unknown_op_close", H + "def @main(%x: float32) {\n  nn.relux(%x)\n}",
     r"3:3: error: unknown operator or constructor 'nn.relux'; did you mean nn.relu\?"),
    # no far-fetched suggestion (fresh-user trial: "did you mean qnn.concatenate?")
    ("unknown_op_far", H + "def @main(%x: float32) {\n  nn.frobnicate(%x)\n}",
     r"3:3: error: unknown operator or constructor 'nn.frobnicate'(?!;)"),
    ("unknown_attribute", H + "def @main(%x: Tensor[(1, 2), float32]) {\n  sum(%x, axis=[1], keep_dims=True)\n}",
     r"3:21: error: unknown attribute 'keep_dims' of operator sum; expected one of axis, keepdims, exclude"),
    ("attribute_of_wrong_kind", H + 'def @main(%x: Tensor[(1, 2), float32]) {\n  sum(%x, axis="one")\n}',
     r"3:11: error: sum: attribute axis: expected a tuple of ints, got 'one'"),
    ("attribute_on_op_without_attrs", H + "def @main(%x: float32) {\n  exp(%x, axis=1)\n}",
     r"3:11: error: unknown attribute 'axis': operator exp takes no attributes"),
    ("bad_escape", H + 'def @main(%x: Tensor[(1, 2), float32]) {\n  cast(%x, dtype="int\\q8")\n}',
     r"3:22: error: bad escape sequence '\\q' in string"),
    ("unterminated_string", H + 'def @main(%x: Tensor[(1, 2), float32]) {\n  cast(%x, dtype="int8)\n}',
     r"3:18: error: unterminated string literal"),
    ("bad_number_two_points", H + "def @main(%x: float32) {\n  add(%x, 1.5.2f)\n}",
     r"3:11: error: bad number '1.5.2f': more than one decimal point"),
    ("bad_number_suffix", H + "def @main(%x: float32) {\n  add(%x, 2i33)\n}",
     r"3:11: error: bad number '2i33': unknown suffix 'i33'"),
    ("int_suffix_on_float", H + "def @main(%x: float32) {\n  add(%x, 2.5i64)\n}",
     r"3:11: error: bad number '2.5i64': an integer suffix 'i64' on the non-integer 2.5"),
    ("number_out_of_range", H + "def @main(%x: int8) {\n  add(%x, 300i8)\n}",
     r"3:11: error: bad number 300i8: out of range for int8 \[-128, 127\]"),
    ("undefined_variable", H + "def @main(%x: float32) {\n  add(%x, %xx)\n}",
     r"3:11: error: undefined variable %xx; did you mean %x\?"),
    ("undefined_global", H + "def @main(%x: float32) {\n  @f(%x)\n}",
     r"3:3: error: undefined global function @f"),
    ("unknown_type", H + "def @main(%x: Lisst[float32]) {\n  %x\n}",
     r"2:15: error: unknown type 'Lisst'"),
    ("unexpected_character", H + "def @main(%x: float32) {\n  add(%x, $x)\n}",
     r"3:11: error: unexpected character '\$'"),
    ("bad_version", '#[version = "0.0.4"]\ndef @main() { 1 }',
     r"1:1: error: unsupported text format version '0.0.4'; expected '0.0.5'"),
    ("if_without_else", H + "def @main(%c: bool) {\n  if (%c) { 1 }\n}",
     r"4:1: error: expected 'else' but got '\}'"),
    ("operator_arity", H + "def @main(%x: float32) {\n  exp(%x, %x)\n}",
     r"3:3: error: operator exp takes 1 argument, got 2"),
    ("unknown_constructor_pattern", H + "def @main(%x: float32) {\n  match (%x) {\n    Foo => 1,\n  }\n}",
     r"4:5: error: unknown constructor 'Foo' in pattern"),
    ("metadata_missing", H + "def @main() {\n  meta[relay.Constant][0]\n}",
     r"3:3: error: the text refers to meta\[relay.Constant\] but has no #\[metadata\] section"),
    ("metadata_index", H + 'def @main() {\n  meta[relay.Constant][3]\n}\n#[metadata]\n{"relay.Constant": []}',
     r"3:24: error: meta\[relay.Constant\]\[3\] is out of range"),
    ("metadata_bad_json", H + 'def @main() {\n  meta[relay.Constant][0]\n}\n#[metadata]\n{"relay.Constant": [}',
     r"5:1: error: metadata section is not valid JSON"),
    ("let_without_var", H + "def @main(%x: float32) {\n  let x = %x;\n  x\n}",
     r"3:7: error: expected a variable such as %x after 'let' but got 'x'"),
    ("trailing_tokens", H + "def @main(%x: float32) {\n  %x %x\n}",
     r"3:6: error: expected '\}' to close '\{' at 2:24 but got '%x'"),
    ("duplicate_def", H + "def @f() { 1 }\ndef @f() { 2 }",
     r"3:5: error: function @f is defined twice"),
    ("unterminated_comment", H + "def @f() { 1 }\n/* oops",
     r"3:1: error: unterminated comment"),
]


@pytest.mark.parametrize("name, text, pattern", CASES, ids=[c[0] for c in CASES])
def test_parse_error_position_and_message(name, text, pattern):
    with pytest.raises(ParseError, match=pattern) as info:
        relay.parse(text)
    err = info.value
    assert isinstance(err, RelayError)
    assert err.diagnostics, "diagnostics list is filled"
    line, col, msg = err.diagnostics[0]
    assert f"{line}:{col}: error: {msg}" in str(err)


def test_message_shows_source_line_and_caret():
    with pytest.raises(ParseError) as info:
        relay.parse(H + "def @main(%x: float32) {\n  addd(%x, %x)\n}", source_name="model.relay")
    text = str(info.value)
    assert "model.relay:3:3: error: unknown operator" in text
    assert "\n      addd(%x, %x)\n      ^" in text


def test_several_errors_are_all_reported():
    text = (
        H
        + "def @main(%x: float32) {\n"
        + "  %0 = addd(%x, %x);\n"  # line 3: unknown operator
        + "  %1 = exp(%z);\n"  # line 4: undefined variable
        + "  %2 = add(%1 %0);\n"  # line 5: missing comma
        + "  %2\n"
        + "}\n"
        + "def @g(%y: Tensor[(1, -2), float32]) {\n"  # line 8: bad shape
        + "  sum(%y, keep=1)\n"  # line 9: unknown attribute
        + "}\n"
    )
    with pytest.raises(ParseError) as info:
        relay.parse(text)
    where = [(line, col) for line, col, _ in info.value.diagnostics]
    assert where == [(3, 8), (4, 12), (5, 15), (8, 23), (9, 11)]
    assert str(info.value).startswith("5 errors in from_string:")


def test_failed_binding_does_not_cascade_into_undefined_errors():
    text = H + "def @main(%x: float32) {\n  %0 = add(%x, ;\n  %1 = exp(%0);\n  exp(%1)\n}"
    with pytest.raises(ParseError) as info:
        relay.parse(text)
    assert len(info.value.diagnostics) == 1
    assert info.value.diagnostics[0][:2] == (3, 16)


def test_parse_expr_errors_and_free_vars():
    with pytest.raises(ParseError, match=r"2:5: error: undefined variable %y"):
        relay.parse_expr("free_var %x: float32;\nadd(%y, %x)")
    with pytest.raises(ParseError, match=r"1:11: error: expected the end of input but got '2'"):
        relay.parse_expr("add(1, 1) 2")


def test_non_string_input_is_a_clear_error():
    with pytest.raises(RelayError, match="takes the program text as str"):
        relay.parse(b"def @main() { 1 }")


def test_caret_under_a_column_after_tabs():
    """A line indented with a tab: the caret line keeps the tab, so it sits under the column
    however the terminal expands tabs (spaces alone put it off; fresh-user trial)."""
    src = H + "def @main(%x: Tensor[(2), float32]) {\n\tadd(%x, %y)\n}\n"
    with pytest.raises(ParseError) as err:
        relay.parse(src)
    text = str(err.value)
    assert ":3:10: error: undefined variable %y" in text
    assert "\n    \tadd(%x, %y)\n    \t        ^" in text

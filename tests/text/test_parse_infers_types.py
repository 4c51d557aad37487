"""0.19's ParseModule ended with InferType: tvm.parser.parse / relay.fromtext return a typed
module, and an ill-typed program fails at parse time with the position of the bad expression.
(ParseExpr did not infer types, nor does parse_expr.)"""

import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

V = '#[version = "0.0.5"]\n'


@pytest.fixture
def tvm_parser():
    import tvm.parser

    import relay_tvm.compat  # noqa: F401  (installs the tvm.parser / tvm.relay names)

    return tvm.parser


def test_checked_type_is_available_right_after_parse(tvm_parser):
    src = V + "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }"
    want = relay.FuncType([relay.TensorType((2, 3))], relay.TensorType((2, 3)))
    for parse in (relay.parse, relay.fromtext, tvm_parser.parse, tvm_parser.fromtext):
        assert parse(src)["main"].checked_type == want


def test_parse_expr_does_not_infer_types():
    e = relay.parse_expr("free_var %x: Tensor[(2), float32];\nadd(%x, %x)")
    with pytest.raises(Exception, match="checked_type"):
        e.checked_type  # noqa: B018


@pytest.mark.parametrize("body, message, position", [
    ("def @main(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) { add(%x, %y) }",
     r"shapes \(2,\) and \(3,\) do not broadcast", "from_string:2:65"),
    ("def @main(%c: Tensor[(), float32], %x: float32) { if (%c) { %x } else { %x } }",
     "bool", "from_string:2:"),
    ("def @f(%n: int32) -> float32 { if (equal(%n, 0)) { 1 } else { @f(subtract(%n, 1)) } }",
     "float32", "from_string:2:"),
], ids=["add_2_3", "if_on_float", "recursive_return_type"])
def test_ill_typed_text_fails_at_parse_time_with_its_position(tvm_parser, body, message, position):
    for parse in (relay.fromtext, tvm_parser.parse):
        with pytest.raises(TypeInferenceError, match=message) as info:
            parse(V + body)
        assert position in str(info.value)

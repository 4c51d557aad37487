"""Where a type error is: the global function it is in, the operator's arguments one level
deep, string attributes quoted as the text format writes them, and the operator of a type a
relation could not build (all from a fresh-user trial of hand-built IR, which has no spans)."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def test_an_error_in_another_global_names_it_and_the_arguments():
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,))
    mod = relay.IRModule()
    helper = relay.GlobalVar("helper")
    mod[helper] = relay.Function([a, b], relay.nn.relu(relay.add(relay.exp(a), relay.sqrt(b))))
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(4,))
    mod["main"] = relay.Function([x, y], helper(x, y))
    with pytest.raises(TypeInferenceError) as err:
        relay.transform.InferType()(mod)
    msg = str(err.value)
    assert "shapes (2, 3) and (4,) do not broadcast" in msg
    assert "in expression: add(exp(%a), sqrt(%b))" in msg  # was add(<Call>, <Call>)
    assert msg.rstrip().endswith("in @helper")


def test_string_attributes_are_quoted():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    mod = relay.IRModule.from_expr(relay.nn.conv2d(x, w, data_layout="NCHX"))
    with pytest.raises(TypeInferenceError, match=r"data_layout 'NCHX' is not supported(.|\n)*"
                                                 r"in expression: nn\.conv2d\(%x, %w, .*"
                                                 r"data_layout='NCHX', kernel_layout='OIHW'\)"):
        relay.transform.InferType()(mod)


def test_a_negative_dimension_names_the_operator():
    # was a bare RelayError "TensorType shape: dimension -3 is negative"
    mod = relay.IRModule.from_expr(relay.full(relay.const(1.0), (2, -3)))
    with pytest.raises(TypeInferenceError, match=r"^full: .*dimension -3 is negative(.|\n)*"
                                                 r"in expression: full\(1\.0"):
        relay.transform.InferType()(mod)

"""InferType after an operator's type relation is replaced (``TempOpAttr``, or
``register_op_attr(op, "FTypeRelation", f, level=11)``): TVM 0.19 typed every function again,
so the new relation decides the types. relay_tvm kept the types of nodes it had sealed in an
earlier inference (fresh-user trial)."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.op import op as _op
from relay_tvm.op.op_attrs import TempOpAttr, register_op_attr


def _typed_sum_of(op_name):
    # sum(op(x)): the result is a scalar whatever op's relation says, so main's return type
    # (annotated by the first InferType) does not clash with a new relation
    x = relay.var("x", shape=(2, 3))
    f = relay.Function([x], relay.sum(relay.Call(_op.get(op_name), [x])))
    return relay.transform.InferType()(relay.IRModule.from_expr(f))


def _inner_type(mod):
    return mod["main"].body.args[0].checked_type


def test_infer_type_again_uses_a_temporarily_replaced_relation():
    mod = _typed_sum_of("nn.relu")
    assert _inner_type(mod) == relay.TensorType((2, 3), "float32")
    calls = []

    def rel(types, attrs):
        calls.append(types[0])
        return relay.TensorType((7,), "float32")

    with TempOpAttr("nn.relu", "FTypeRelation", rel):
        again = relay.transform.InferType()(mod)
        assert calls == [relay.TensorType((2, 3), "float32")]
        assert _inner_type(again) == relay.TensorType((7,), "float32")
        assert again["main"].body.checked_type == relay.TensorType((), "float32")
    # the built-in relation is back, and decides again
    back = relay.transform.InferType()(again)
    assert _inner_type(back) == relay.TensorType((2, 3), "float32")


def test_a_replaced_relation_that_fails_is_reported_on_typed_modules():
    mod = _typed_sum_of("nn.relu")

    def refuse(types, attrs):
        raise TypeInferenceError("nn.relu: refused by the test's relation")

    with TempOpAttr("nn.relu", "FTypeRelation", refuse):
        with pytest.raises(TypeInferenceError, match="refused by the test's relation"):
            relay.transform.InferType()(mod)


def test_register_op_attr_at_a_higher_level_retypes():
    name = "test_infer_after_override.twice"
    if not _op.is_registered(name):
        _op.register(name)
        o = _op.get(name)
        o.set_num_inputs(1)
        o.add_type_rel("Identity")
    mod = _typed_sum_of(name)
    assert _inner_type(mod) == relay.TensorType((2, 3), "float32")
    register_op_attr(name, "FTypeRelation",
                     lambda types, attrs: relay.TensorType((2, 3, 2), "float32"), level=11)
    assert _inner_type(relay.transform.InferType()(mod)) == relay.TensorType((2, 3, 2),
                                                                             "float32")

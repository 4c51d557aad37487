"""A call built by hand with another operator's attrs object: type inference said "type
relation of nn.softmax failed ...: AttributeError: relay.attrs.Conv2DAttrs has no attribute
'axis'" (fresh-user trial); it names the operator, the attrs class given and the one expected."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def _infer(body, *params):
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(list(params),
                                                                               body)))


X = relay.var("x", shape=(1, 3, 4, 4))
W = relay.var("w", shape=(2, 3, 3, 3))


@pytest.mark.parametrize("op, args, attrs, given, expected", [
    ("nn.softmax", [X], relay.nn.conv2d(X, W).attrs, "attributes relay.attrs.Conv2DAttrs",
     "relay.attrs.SoftmaxAttrs"),
    ("nn.conv2d", [X, W], relay.nn.softmax(X).attrs, "attributes relay.attrs.SoftmaxAttrs",
     "relay.attrs.Conv2DAttrs"),
    ("nn.conv2d", [X, W], None, "no attributes", "relay.attrs.Conv2DAttrs"),
])
def test_attrs_of_another_class_name_both_classes(op, args, attrs, given, expected):
    call = relay.Call(relay.op.get(op), args, attrs)
    with pytest.raises(TypeInferenceError,
                       match=rf"^{op} expects attributes {expected}, got {given}; build the "
                             rf"call with the operator's function, or with "
                             rf"relay\.op\.get\('{op}'\)\.make_attrs\(\.\.\.\)\n  in "
                             rf"expression: {op}\("):
        _infer(call, *args)


def test_the_right_attrs_class_built_by_hand_type_checks():
    attrs = relay.op.get("nn.softmax").make_attrs(axis=1)
    mod = _infer(relay.Call(relay.op.get("nn.softmax"), [X], attrs), X)
    assert mod["main"].body.checked_type == relay.TensorType((1, 3, 4, 4), "float32")

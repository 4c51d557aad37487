"""Type inference on operator relations: shape tables (expected shapes worked out by hand)."""

import re

import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError


def infer(expr):
    return relay.transform.InferTypeLocal(expr)


def tt(shape, dtype="float32"):
    return relay.TensorType(shape, dtype)


@pytest.mark.parametrize(
    "a, b, out",
    [
        ((2, 3), (2, 3), (2, 3)),
        ((2, 3), (3,), (2, 3)),
        ((2, 1), (1, 3), (2, 3)),
        ((5, 1, 4), (3, 1), (5, 3, 4)),
        ((), (4, 2), (4, 2)),
        ((1,), (7,), (7,)),
        ((8, 1, 6, 1), (7, 1, 5), (8, 7, 6, 5)),
    ],
)
@pytest.mark.parametrize("op", [relay.add, relay.multiply, relay.maximum])
def test_broadcast_shapes(op, a, b, out):
    x, y = relay.var("x", shape=a), relay.var("y", shape=b)
    assert infer(op(x, y)) == tt(out)


@pytest.mark.parametrize("op", [relay.less, relay.equal, relay.greater_equal])
def test_comparison_gives_bool(op):
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(3,))
    assert infer(op(x, y)) == tt((2, 3), "bool")


def test_broadcast_any_dimension():
    x = relay.var("x", shape=(relay.Any(), 3))
    y = relay.var("y", shape=(4, 1))
    assert infer(relay.add(x, y)) == tt((relay.Any(), 3))


def test_broadcast_symbolic_dimension():
    import tvm.tirx as tirx

    n = tirx.Var("n", "int64")
    x = relay.var("x", shape=(n, 3))
    y = relay.var("y", shape=(1, 3))
    t = infer(relay.add(x, y))
    assert t == tt((n, 3))
    assert t != tt((tirx.Var("m", "int64"), 3))


@pytest.mark.parametrize(
    "data, weight, units, out",
    [
        ((4, 16), (8, 16), None, (4, 8)),
        ((2, 5, 16), (8, 16), 8, (2, 5, 8)),
        ((16,), (3, 16), None, (3,)),
    ],
)
def test_dense(data, weight, units, out):
    d, w = relay.var("d", shape=data), relay.var("w", shape=weight)
    assert infer(relay.nn.dense(d, w, units=units)) == tt(out)


def test_dense_infers_weight_from_units():
    d, w = relay.var("d", shape=(4, 16)), relay.var("w")
    f = relay.Function([d, w], relay.nn.dense(d, w, units=10))
    t = infer(f)
    assert t.arg_types[1] == tt((10, 16))
    assert t.ret_type == tt((4, 10))


# (data NCHW, weight OIHW, strides, padding, dilation, groups, expected output)
CONV_CASES = [
    ((1, 3, 32, 32), (16, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1, (1, 16, 30, 30)),
    ((1, 3, 32, 32), (16, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, (1, 16, 32, 32)),
    ((2, 3, 32, 32), (8, 3, 3, 3), (2, 2), (1, 1), (1, 1), 1, (2, 8, 16, 16)),
    ((1, 3, 224, 224), (64, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1, (1, 64, 112, 112)),
    ((1, 4, 10, 10), (4, 4, 3, 3), (1, 1), (0, 0), (2, 2), 1, (1, 4, 6, 6)),
    ((1, 8, 10, 10), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), 8, (1, 8, 10, 10)),
    ((1, 8, 10, 10), (4, 2, 3, 3), (1, 1), (0, 0), (1, 1), 4, (1, 4, 8, 8)),
    ((1, 3, 9, 9), (2, 3, 3, 3), (2, 2), (0, 1, 0, 1), (1, 1), 1, (1, 2, 4, 5)),
    ((1, 3, 8, 7), (2, 3, 2, 3), (3, 2), (1, 0, 2, 0), (1, 1), 1, (1, 2, 4, 3)),
]


@pytest.mark.parametrize("data, weight, strides, padding, dilation, groups, out", CONV_CASES)
def test_conv2d_nchw(data, weight, strides, padding, dilation, groups, out):
    d, w = relay.var("d", shape=data), relay.var("w", shape=weight)
    c = relay.nn.conv2d(d, w, strides=strides, padding=padding, dilation=dilation, groups=groups)
    assert infer(c) == tt(out)


def test_conv2d_nhwc():
    d, w = relay.var("d", shape=(1, 32, 32, 3)), relay.var("w", shape=(3, 3, 3, 16))
    c = relay.nn.conv2d(d, w, padding=1, data_layout="NHWC", kernel_layout="HWIO")
    assert infer(c) == tt((1, 32, 32, 16))


def test_conv2d_infers_weight():
    d, w = relay.var("d", shape=(1, 6, 8, 8)), relay.var("w")
    f = relay.Function([d, w], relay.nn.conv2d(d, w, channels=4, kernel_size=(3, 3), groups=2))
    t = infer(f)
    assert t.arg_types[1] == tt((4, 3, 3, 3))
    assert t.ret_type == tt((1, 4, 6, 6))


# (input shape, newshape, expected) — Relay's reshape codes
RESHAPE_CASES = [
    ((2, 3, 4), (6, 4), (6, 4)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (0, -1), (2, 12)),
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((6, 4), (-4, 2, 3, 0), (2, 3, 4)),
    ((6, 4), (-4, -1, 3, -2), (2, 3, 4)),
    ((6, 4), (-4, 2, -1, -2), (2, 3, 4)),
    ((2, 3, 4), (-1, 0, 0), (2, 3, 4)),
]


@pytest.mark.parametrize("ishape, newshape, out", RESHAPE_CASES)
def test_reshape_codes(ishape, newshape, out):
    x = relay.var("x", shape=ishape)
    assert infer(relay.reshape(x, newshape)) == tt(out)


@pytest.mark.parametrize(
    "shapes, axis, out",
    [
        ([(2, 3), (4, 3)], 0, (6, 3)),
        ([(2, 3), (2, 5), (2, 1)], 1, (2, 9)),
        ([(2, 3), (2, 5)], -1, (2, 8)),
        ([(1, 2, 3)], 2, (1, 2, 3)),
    ],
)
def test_concatenate(shapes, axis, out):
    xs = [relay.var(f"x{i}", shape=s) for i, s in enumerate(shapes)]
    assert infer(relay.concatenate(xs, axis)) == tt(out)


@pytest.mark.parametrize(
    "axis, keepdims, exclude, out",
    [
        (None, False, False, ()),
        ((1,), False, False, (2, 4)),
        ((1,), True, False, (2, 1, 4)),
        ((-1, 0), False, False, (3,)),
        ((1,), False, True, (3,)),
    ],
)
def test_sum(axis, keepdims, exclude, out):
    x = relay.var("x", shape=(2, 3, 4))
    assert infer(relay.sum(x, axis, keepdims, exclude)) == tt(out)


def test_cast_and_unary():
    x = relay.var("x", shape=(2, 3), dtype="int32")
    assert infer(relay.cast(x, "float16")) == tt((2, 3), "float16")
    assert infer(relay.negative(x)) == tt((2, 3), "int32")


# ---- errors from relations: the operator, the argument, both shapes -------------------------


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: relay.add(relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,))),
         r"add lhs and rhs: shapes \(2, 3\) and \(4,\) do not broadcast"),
        (lambda: relay.add(relay.var("a", shape=(2,)), relay.var("b", shape=(2,), dtype="int32")),
         r"add: lhs has dtype float32 but rhs has dtype int32"),
        (lambda: relay.nn.dense(relay.var("d", shape=(4, 16)), relay.var("w", shape=(8, 15))),
         r"nn.dense: data shape \(4, 16\) and weight shape \(8, 15\)"),
        (lambda: relay.nn.conv2d(relay.var("d", shape=(1, 64, 8, 8)), relay.var("w", shape=(8, 32, 3, 3))),
         r"nn.conv2d: weight input channels 32 must equal data channels / groups = 64/1 = 64"),
        (lambda: relay.nn.conv2d(relay.var("d", shape=(1, 3, 2, 2)), relay.var("w", shape=(8, 3, 3, 3))),
         r"nn.conv2d: output height would be 0"),
        (lambda: relay.reshape(relay.var("x", shape=(2, 3)), (4, 2)),
         r"reshape: cannot reshape \(2, 3\) \(6 elements\) into \(4, 2\)"),
        (lambda: relay.concatenate([relay.var("x", shape=(2, 3)), relay.var("y", shape=(3, 3))], 1),
         r"concatenate: field 1 shape \(3, 3\) and field 0 shape \(2, 3\) differ on axis 0"),
        (lambda: relay.sum(relay.var("x", shape=(2, 3)), axis=2),
         r"sum: axis 2 is out of range for rank 2"),
        (lambda: relay.exp(relay.var("x", shape=(2,), dtype="int32")),
         r"exp: data has dtype int32, expected a float dtype"),
    ],
)
def test_relation_errors(make, pattern):
    with pytest.raises(TypeInferenceError, match=pattern) as info:
        infer(make())
    assert "in expression:" in str(info.value)


def test_wrong_arity_for_operator():
    from relay_tvm.ir import Call

    x = relay.var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match=r"add expects 2 argument\(s\) \(lhs, rhs\), got 1"):
        infer(Call(relay.op.get("add"), [x]))


def test_unknown_attribute_is_rejected_at_construction():
    with pytest.raises(relay.AttributeSchemaError, match="nn.conv2d: unknown attribute"):
        relay.op.get("nn.conv2d")(relay.var("d"), relay.var("w"), stride=(1, 1))


@pytest.mark.parametrize("make, match", [
    (lambda x, w: relay.nn.conv2d(x, w, kernel_size="3x3"),
     "nn.conv2d: attribute kernel_size: expected an int or a tuple of ints, got '3x3'"),
    (lambda x, w: relay.nn.conv2d(x, w, padding=None),
     "nn.conv2d: attribute padding: expected an int or a tuple of ints, got None"),
    (lambda x, w: relay.nn.max_pool2d(x, pool_size=None),
     "nn.max_pool2d: attribute pool_size: expected an int or a tuple of ints, got None"),
    (lambda x, w: relay.nn.avg_pool2d(x, pool_size=(2, 2), strides="2"),
     "nn.avg_pool2d: attribute strides: expected an int or a tuple of ints, got '2'"),
    (lambda x, w: relay.reshape(x, newshape="1,3"),
     "reshape: attribute newshape: expected an int or a tuple of ints, got '1,3'"),
])
def test_string_or_none_for_an_int_tuple_attribute(make, match):
    # a string used to be read character by character ("expected an int, got '3'") and None
    # gave a bare TypeError from tuple()
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    with pytest.raises(relay.AttributeSchemaError, match=re.escape(match)):
        make(x, w)


def test_scalar_dtype_mismatch_message():
    # a 0-d operand used to leak an IndexError from the message formatting
    a = relay.var("a", shape=(2, 3))
    with pytest.raises(
        TypeInferenceError,
        match=r"add: lhs has dtype float32 but rhs has dtype float64 \(lhs shape \(2, 3\), rhs shape \(\)\)",
    ):
        infer(relay.add(a, relay.const(3.0, "float64")))

"""Gradient rules of the tensor, transform and reduce operators against central differences."""

import numpy as np
import pytest
from grad_check import check_grad

import relay_tvm as relay

RNG = np.random.default_rng(5)


def _u(shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype("float64")


UNARY = [
    ("negative", (-1, 1)),
    ("exp", (-1, 1)),
    ("log", (0.5, 2)),
    ("log2", (0.5, 2)),
    ("log10", (0.5, 2)),
    ("sqrt", (0.5, 2)),
    ("rsqrt", (0.5, 2)),
    ("sigmoid", (-2, 2)),
    ("tanh", (-2, 2)),
    ("erf", (-1, 1)),
    ("abs", (0.2, 1)),
    ("sin", (-2, 2)),
    ("cos", (-2, 2)),
    ("tan", (-1, 1)),
    ("sinh", (-1, 1)),
    ("cosh", (-1, 1)),
    ("asin", (-0.8, 0.8)),
    ("acos", (-0.8, 0.8)),
    ("atan", (-2, 2)),
    ("asinh", (-2, 2)),
    ("acosh", (1.2, 3)),
    ("atanh", (-0.8, 0.8)),
    ("copy", (-1, 1)),
    ("floor", (0.1, 0.9)),
    ("sign", (0.1, 0.9)),
]


@pytest.mark.parametrize("name,rng", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, rng):
    check_grad(getattr(relay, name), [_u((2, 3), *rng)])


@pytest.mark.parametrize(
    "name", ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum"]
)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1))])
def test_binary_broadcast(name, shapes):
    a, b = _u(shapes[0], 0.5, 2), _u(shapes[1], 0.5, 2)
    check_grad(getattr(relay, name), [a, b])


def test_clip_and_where():
    check_grad(lambda x: relay.clip(x, -0.5, 0.5), [np.array([-0.9, -0.2, 0.3, 0.8])])
    c = np.array([[True, False, True]])
    check_grad(lambda c, x, y: relay.where(c, x, y), [c, _u((2, 3)), _u((3,))])


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda x: relay.reshape(x, (3, -1)), (2, 3, 2)),
        (lambda x: relay.transpose(x, (2, 0, 1)), (2, 3, 4)),
        (lambda x: relay.squeeze(x, (1,)), (2, 1, 3)),
        (lambda x: relay.expand_dims(x, 1, 2), (2, 3)),
        (lambda x: relay.reverse(x, 1), (2, 3)),
        (lambda x: relay.cast(x, "float64"), (2, 3)),
        (lambda x: relay.broadcast_to(x, (2, 3, 4)), (3, 1)),
        (lambda x: relay.collapse_sum_to(x, (3, 1)), (2, 3, 4)),
        (lambda x: relay.layout_transform(x, "NCHW", "NCHW2c"), (1, 4, 2, 2)),
        (lambda x: relay.strided_slice(x, (3, 0), (0, 4), (-2, 3)), (4, 5)),
        (lambda x: relay.strided_slice(x, (1,), (3,), axes=(1,)), (2, 4)),
        (lambda x: relay.sum(x, 1), (2, 3, 4)),
        (lambda x: relay.sum(x, (0, 2), keepdims=True), (2, 3, 4)),
        (lambda x: relay.sum(x), (2, 3)),
        (lambda x: relay.mean(x, (1,), exclude=True), (2, 3, 4)),
        (lambda x: relay.max(x, 1), (2, 5)),
        (lambda x: relay.min(x, None), (3, 4)),
    ],
)
def test_shape_and_reduce(make, shape):
    check_grad(make, [_u(shape)])


def test_max_shares_gradient_among_ties():
    # d max / d x_i is 1/k for each of k tied maxima (a subgradient); central differences
    # cannot see it, so compare with the value directly
    from grad_check import Function, IRModule

    x = relay.var("x", shape=(4,), dtype="float64")
    mod = relay.transform.InferType()(IRModule.from_expr(Function([x], relay.max(x))))
    call = mod["main"].body
    g = relay.var("g", shape=(), dtype="float64")
    (gx,) = call.op.gradient(call, g)
    f = Function([*mod["main"].params, g], gx)
    got = relay.create_executor("debug", mod=IRModule.from_expr(f)).evaluate()(
        np.array([1.0, 3.0, 3.0, 0.0]), np.array(2.0)
    )
    np.testing.assert_allclose(got.numpy(), [0.0, 1.0, 1.0, 0.0])


def test_tuple_argument_ops():
    check_grad(lambda a, b: relay.concatenate([a, b], 1), [_u((2, 3)), _u((2, 2))])
    check_grad(lambda a, b, c: relay.stack([a, b, c], -1), [_u((2, 3)), _u((2, 3)), _u((2, 3))])


@pytest.mark.parametrize(
    "axis,mode,indices",
    [
        (None, "clip", [[0, 5], [5, 9]]),
        (0, "clip", [2, 0, 2, -1]),
        (1, "wrap", [[3, -1], [0, 0]]),
        (2, "fast", [1, 0]),
    ],
)
def test_take(axis, mode, indices):
    idx = np.array(indices, "int32")
    check_grad(lambda x, i: relay.take(x, i, axis, mode=mode), [_u((3, 2, 2)), idx], wrt=[0])


def test_gather_nd_and_one_hot():
    idx = np.array([[0, 1, 0], [1, 0, 1]], "int32")
    check_grad(lambda x, i: relay.gather_nd(x, i), [_u((2, 2, 3)), idx], wrt=[0])
    check_grad(
        lambda i, on, off: relay.one_hot(i, on, off, 3, -1, "float64"),
        [np.array([0, 2, 5], "int32"), np.array(1.5), np.array(-0.5)],
        wrt=[1, 2],
    )


@pytest.mark.parametrize("unbiased", [False, True])
def test_variance(unbiased):
    x = _u((2, 3))
    m = x.mean(axis=1, keepdims=True)
    check_grad(
        lambda x, m: relay.op.get("variance")(x, m, axis=(1,), unbiased=unbiased), [x, m], wrt=[0]
    )


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda x: relay.tile(x, (2, 1, 3)), (2, 3)),
        (lambda x: relay.repeat(x, 3, 1), (2, 2, 2)),
        (lambda x: relay.cumsum(x, 1), (2, 4)),
        (lambda x: relay.cumsum(x, 0, exclusive=True), (3, 2)),
        (lambda x: relay.cumsum(x), (2, 3)),
        (lambda x: relay.prod(x, 1), (2, 3)),
    ],
)
def test_more_shape_grads(make, shape):
    check_grad(make, [_u(shape, 0.5, 1.5)])


def test_slice_like():
    check_grad(lambda x, y: relay.slice_like(x, y), [_u((3, 4)), _u((2, 2))], wrt=[0])


def test_gather_sequence_ops():
    idx = np.array([[0, 2, 2], [1, 1, 0]], "int32")
    check_grad(lambda x, i: relay.gather(x, 1, i), [_u((2, 3)), idx], wrt=[0])
    vl = np.array([1, 3], "int32")
    check_grad(lambda x, v: relay.sequence_mask(x, v, -1.0, 1), [_u((2, 3, 2)), vl], wrt=[0])
    sl = np.array([2, 3], "int32")
    check_grad(lambda x, s: relay.reverse_sequence(x, s, 1, 0), [_u((2, 3)), sl], wrt=[0])

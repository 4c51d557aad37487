"""Gradient rules of the tensor, transform and reduce operators against central differences."""

import numpy as np
import pytest
from grad_check import check_grad

import relay_tvm as relay

RNG = np.random.default_rng(5)


def _u(shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype("float64")


UNARY = [
    ("negative", (-1, 1)), ("exp", (-1, 1)), ("log", (0.5, 2)), ("log2", (0.5, 2)),
    ("log10", (0.5, 2)), ("sqrt", (0.5, 2)), ("rsqrt", (0.5, 2)), ("sigmoid", (-2, 2)),
    ("tanh", (-2, 2)), ("erf", (-1, 1)), ("abs", (0.2, 1)), ("sin", (-2, 2)), ("cos", (-2, 2)),
    ("tan", (-1, 1)), ("sinh", (-1, 1)), ("cosh", (-1, 1)), ("asin", (-0.8, 0.8)),
    ("acos", (-0.8, 0.8)), ("atan", (-2, 2)), ("asinh", (-2, 2)), ("acosh", (1.2, 3)),
    ("atanh", (-0.8, 0.8)), ("copy", (-1, 1)), ("floor", (0.1, 0.9)), ("sign", (0.1, 0.9)),
]


@pytest.mark.parametrize("name,rng", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, rng):
    check_grad(getattr(relay, name), [_u((2, 3), *rng)])


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power", "maximum",
                                  "minimum"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1))])
def test_binary_broadcast(name, shapes):
    a, b = _u(shapes[0], 0.5, 2), _u(shapes[1], 0.5, 2)
    check_grad(getattr(relay, name), [a, b])


def test_clip_and_where():
    check_grad(lambda x: relay.clip(x, -0.5, 0.5), [np.array([-0.9, -0.2, 0.3, 0.8])])
    c = np.array([[True, False, True]])
    check_grad(lambda c, x, y: relay.where(c, x, y), [c, _u((2, 3)), _u((3,))])

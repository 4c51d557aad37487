"""nn.cross_entropy, nn.cross_entropy_with_logits, nn.nll_loss and nn.fast_softmax against
NumPy, through the interpreter and the compiled graph executor; errors."""

import numpy as np
import pytest
from nn_util import check_op, infer, rand

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import TensorType


def _probs(shape, seed=0):
    e = np.exp(rand(shape, seed=seed) * 2)
    return (e / e.sum(axis=1, keepdims=True)).astype("float32")


def test_cross_entropy():
    p, t = _probs((3, 4)), _probs((3, 4), seed=1)
    want = -(np.log(p.astype("float64")) * t).sum() / 3
    check_op(lambda a, b: relay.nn.cross_entropy(a, b), {"p": p, "t": t},
             np.array(want, "float32"))


def test_cross_entropy_with_logits():
    p, t = np.log(_probs((2, 5))), _probs((2, 5), seed=1)
    want = -(p.astype("float64") * t).sum() / 2
    check_op(lambda a, b: relay.nn.cross_entropy_with_logits(a, b), {"p": p, "t": t},
             np.array(want, "float32"))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2, 2)])
def test_nll_loss(reduction, shape):
    rng = np.random.default_rng(0)
    n, c = shape[:2]
    p = np.log(_probs(shape))
    tshape = (n,) + shape[2:]
    t = rng.integers(0, c, tshape).astype("int32")
    t.flat[0] = -100  # ignored
    w = rand((c,), low=0.5, high=2.0, seed=3)
    loss = np.zeros(tshape)
    wsum = 0.0
    for idx in np.ndindex(*tshape):
        cls = t[idx]
        if cls == -100:
            continue
        loss[idx] = -p[(idx[0], cls) + idx[1:]] * w[cls]
        wsum += w[cls]
    want = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / wsum}[reduction]
    check_op(lambda a, b, c_: relay.nn.nll_loss(a, b, c_, reduction), {"p": p, "t": t, "w": w},
             np.asarray(want, "float32"))


@pytest.mark.parametrize("axis", [-1, 1])
def test_fast_softmax(axis):
    x = rand((2, 5, 3)) * 4
    e = np.exp(x.astype("float64") - x.max(axis=axis, keepdims=True))
    want = (e / e.sum(axis=axis, keepdims=True)).astype("float32")
    check_op(lambda a: relay.nn.fast_softmax(a, axis), {"x": x}, want, rtol=1e-4, atol=1e-5)


def test_types():
    assert infer(lambda a, b: relay.nn.cross_entropy(a, b),
                 {"p": ((3, 4), "float32"), "t": ((3, 4), "float32")}) == TensorType((), "float32")
    t = infer(lambda a, b, c: relay.nn.nll_loss(a, b, c, "none"),
              {"p": ((2, 3, 5), "float32"), "t": ((2, 5), "int64"), "w": ((3,), "float32")})
    assert t == TensorType((2, 5), "float32")


ERRORS = [
    (lambda a, b: relay.nn.cross_entropy(a, b), {"p": ((3, 4), "float32"), "t": ((3, 5), "float32")},
     r"nn.cross_entropy: predictions shape \(3, 4\) and targets shape \(3, 5\) differ"),
    (lambda a, b, c: relay.nn.nll_loss(a, b, c),
     {"p": ((2, 3), "float32"), "t": ((2,), "float32"), "w": ((3,), "float32")},
     r"nn.nll_loss: targets must have an integer dtype"),
    (lambda a, b, c: relay.nn.nll_loss(a, b, c),
     {"p": ((2, 3), "float32"), "t": ((2,), "int32"), "w": ((4,), "float32")},
     r"nn.nll_loss: weights must be \(C,\); predictions shape \(2, 3\)"),
]


@pytest.mark.parametrize("make,inputs,match", ERRORS)
def test_errors(make, inputs, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make, inputs)

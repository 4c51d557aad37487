"""Reductions over an axis of size 0 (new-user trial: compiled code returned uninitialised
memory, because a reduction block's init ran inside the empty reduction loop).

Expected values are NumPy's: sum 0, prod 1, all True, any False, a conv2d with 0 input channels
gives its bias; max/min/argmax/argmin/mean/variance of an empty axis have no value (NumPy raises
or gives nan) and are type errors naming the operator and axis."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

RUNS = [("debug", 3), ("graph", 0), ("graph", 3), ("vm", 0), ("vm", 3)]


def _run(executor, opt_level, params, body, *args):
    mod = tvm.IRModule.from_expr(relay.Function(params, body))
    with relay.transform.PassContext(opt_level=opt_level):
        return relay.create_executor(executor, mod=mod, target="llvm").evaluate()(*args)


@pytest.mark.parametrize("executor,opt_level", RUNS)
def test_identity_of_empty_reductions(executor, opt_level):
    x = relay.var("x", shape=(3, 0))
    b = relay.var("b", shape=(3, 0), dtype="bool")
    body = relay.Tuple([relay.sum(x, axis=1), relay.prod(x, axis=1),
                        relay.sum(x, axis=1, keepdims=True), relay.all(b, axis=1),
                        relay.any(b, axis=1), relay.sum(x, axis=0)])
    xv, bv = np.zeros((3, 0), "float32"), np.zeros((3, 0), "bool")
    res = [r.numpy() for r in _run(executor, opt_level, [x, b], body, xv, bv)]
    want = [np.sum(xv, 1), np.prod(xv, 1), np.sum(xv, 1, keepdims=True), np.all(bv, 1),
            np.any(bv, 1), np.sum(xv, 0)]
    for r, w in zip(res, want):
        np.testing.assert_array_equal(r, w)
        assert r.shape == w.shape


@pytest.mark.parametrize("executor,opt_level", RUNS)
def test_conv2d_with_no_input_channels_is_its_bias(executor, opt_level):
    d = relay.var("d", shape=(1, 0, 4, 4))
    w = relay.var("w", shape=(2, 0, 3, 3))
    bias = relay.var("bias", shape=(2,))
    body = relay.nn.bias_add(relay.nn.conv2d(d, w, kernel_size=(3, 3), channels=2), bias)
    bv = np.array([1.5, -2.0], "float32")
    res = _run(executor, opt_level, [d, w, bias], body, np.zeros((1, 0, 4, 4), "float32"),
               np.zeros((2, 0, 3, 3), "float32"), bv).numpy()
    np.testing.assert_array_equal(res, np.broadcast_to(bv[None, :, None, None], (1, 2, 2, 2)))


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "mean", "variance"])
def test_no_identity_is_a_type_error(name):
    x = relay.var("x", shape=(3, 0))
    if name == "variance":
        body = relay.variance(x, axis=1)
    else:
        body = getattr(relay, name)(x, axis=1)
    match = "(mean|variance)" if name == "variance" else name  # variance reduces a mean first
    with pytest.raises(TypeInferenceError, match=f"{match}.*axis 1 of size 0"):
        relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], body)))
    with pytest.raises(TypeInferenceError, match=f"{match}.*size 0"):  # not NumPy's ValueError
        _run("debug", 3, [x], body, np.zeros((3, 0), "float32"))
    # a non-empty axis of a tensor with an empty other axis is fine
    if name != "variance":
        y = relay.var("y", shape=(0, 3))
        res = _run("graph", 3, [y], getattr(relay, name)(y, axis=1),
                   np.zeros((0, 3), "float32")).numpy()
        assert res.shape == (0,)

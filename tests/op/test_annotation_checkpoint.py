"""annotation.checkpoint of a tensor or a tuple of tensors: the identity through every
executor (values against NumPy), and its gradient is the identity's."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

RNG = np.random.default_rng(5)


def _inputs():
    return [RNG.uniform(-1, 1, (2, 3)).astype("float32") for _ in range(3)]


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_checkpoint_of_a_tuple_is_the_identity(kind):
    xs = [relay.var(f"x{i}", shape=(2, 3)) for i in range(3)]
    t = relay.annotation.checkpoint(relay.Tuple([xs[0] + xs[1], xs[2] * xs[0]]))
    f = relay.Function(xs, relay.Tuple([relay.TupleGetItem(t, 0) * relay.const(2.0),
                                        relay.TupleGetItem(t, 1)]))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(f))
    assert mod["main"].body.fields[1].checked_type == relay.TensorType((2, 3))
    a = _inputs()
    got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(*a)
    np.testing.assert_allclose(got[0].numpy(), (a[0] + a[1]) * 2, rtol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), a[2] * a[0], rtol=1e-6)


def test_gradient_through_a_checkpointed_tuple():
    xs = [relay.var(f"x{i}", shape=(2, 3)) for i in range(3)]
    t = relay.annotation.checkpoint(relay.Tuple([xs[0] + xs[1], xs[2] * xs[0]]))
    f = relay.Function(xs, relay.TupleGetItem(t, 0) * relay.const(2.0) + relay.TupleGetItem(t, 1))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(f))
    g = relay.transform.gradient(mod["main"])
    gm = relay.transform.InferType()(tvm.IRModule.from_expr(g))
    a = _inputs()
    fwd, grads = relay.create_executor("debug", mod=gm).evaluate()(*a)
    np.testing.assert_allclose(fwd.numpy(), (a[0] + a[1]) * 2 + a[2] * a[0], rtol=1e-6)
    # d/dx0 = 2 + x2, d/dx1 = 2, d/dx2 = x0
    for got, want in zip(grads, [2 + a[2], np.full((2, 3), 2, "float32"), a[0]]):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_checkpoint_of_a_non_tensor_is_refused():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.annotation.checkpoint(relay.Tuple([x, relay.Tuple([x])])))
    with pytest.raises(TypeInferenceError, match="annotation.checkpoint"):
        relay.transform.InferType()(tvm.IRModule.from_expr(f))

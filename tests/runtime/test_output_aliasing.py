"""A graph output that is an input (or a parameter, or a reshape of one) is a tensor of its own:
the README promises that an output taken after a run keeps its values, and a later
``set_input`` wrote into the input's tensor, which the output was (fresh-user trial)."""

import numpy as np
import tvm

import relay_tvm as relay
from relay_tvm.runtime import GraphModule


def _module(func):
    lib = relay.build(relay.IRModule.from_expr(func), target="llvm")
    return GraphModule(lib["default"](tvm.cpu(0)))


def test_an_input_returned_as_an_output_keeps_its_values():
    x, w = relay.var("x", shape=(2,)), relay.var("w", shape=(2,))
    m = _module(relay.Function([x, w], relay.Tuple([x, relay.exp(x), w])))
    m.set_input("x", np.array([1.0, 2.0], "float32"))
    m.set_input("w", np.array([5.0, 6.0], "float32"))
    m.run()
    first = [m.get_output(k) for k in range(3)]
    m.set_input("x", np.array([9.0, 9.0], "float32"))
    m.set_input("w", np.array([0.0, 0.0], "float32"))
    np.testing.assert_array_equal(first[0].numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(first[2].numpy(), [5.0, 6.0])
    m.run()
    np.testing.assert_array_equal(first[0].numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(m.get_output(0).numpy(), [9.0, 9.0])
    np.testing.assert_allclose(m.get_output(1).numpy(), np.exp([9.0, 9.0]), rtol=1e-6)
    np.testing.assert_array_equal(m.get_output(2).numpy(), [0.0, 0.0])


def test_a_reshape_of_an_input_keeps_its_values():
    y = relay.var("y", shape=(2, 2))
    m = _module(relay.Function([y], relay.Tuple([relay.reshape(y, (4,)), y + y])))
    m.set_input("y", np.arange(4, dtype="float32").reshape(2, 2))
    m.run()
    flat = m.get_output(0)
    m.set_input("y", np.zeros((2, 2), "float32"))
    np.testing.assert_array_equal(flat.numpy(), [0.0, 1.0, 2.0, 3.0])

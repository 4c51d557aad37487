"""Arguments of ``create_executor(...).evaluate()`` functions: nested lists of numbers are
tensors of the parameter's dtype (tvm.relay 0.19 accepted them), values that dtype cannot
hold, other objects and a wrong number of arguments are InputErrors naming the argument."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InputError

KINDS = ["debug", "graph", "vm"]


def _ev(kind, dtype="float32"):
    x = relay.var("x", shape=(2, 3), dtype=dtype)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    return relay.create_executor(kind, mod=mod, target="llvm").evaluate()


@pytest.mark.parametrize("kind", KINDS)
def test_list_of_numbers_is_a_tensor_of_the_parameter_dtype(kind):
    out = _ev(kind)([[1.5, 2, 3], [4, 5, 6]]).numpy()
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([[3, 4, 6], [8, 10, 12]], "float32"))
    iout = _ev(kind, "int32")([[1, 2, 3], [4, 5, -6]]).numpy()
    assert iout.dtype == np.int32
    np.testing.assert_array_equal(iout, [[2, 4, 6], [8, 10, -12]])


@pytest.mark.parametrize("kind", KINDS)
def test_bad_arguments_are_input_errors(kind):
    f = _ev(kind)
    with pytest.raises(InputError, match=r"takes 1 argument\(s\).*got 2"):
        f(np.ones((2, 3), "float32"), np.ones(2, "float32"))
    with pytest.raises(InputError, match=r"%x.*expected a NumPy array or a tvm tensor"):
        f([["a", "b", "c"], ["d", "e", "f"]])
    with pytest.raises(InputError, match=r"%x.*expected a NumPy array or a tvm tensor"):
        f({"x": 1})
    with pytest.raises(InputError, match=r"%x.*do not fit dtype int32 exactly"):
        _ev(kind, "int32")([[1.5, 2, 3], [4, 5, 6]])
    with pytest.raises(InputError, match=r"%x.*do not fit dtype int32 exactly"):
        _ev(kind, "int32")([[2**40, 2, 3], [4, 5, 6]])
    with pytest.raises(InputError, match=r"shape"):
        f([[1.0, 2.0], [3.0, 4.0]])

"""The VM's run-time shape errors say what is wrong with the values given (from a new-user
trial: each of these said "dimension N would be negative" where nothing was negative)."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InputError


def _vm(f):
    return relay.create_executor("vm", mod=relay.IRModule.from_expr(f), target="llvm").evaluate()


def test_dyn_reshape_element_count():
    x = relay.var("x", shape=(6,))
    s = relay.var("s", shape=(2,), dtype="int64")
    run = _vm(relay.Function([x, s], relay.reshape(x, s)))
    xv = np.arange(6, dtype="float32")
    np.testing.assert_array_equal(run(xv, np.array([2, 3], "int64")).numpy(), xv.reshape(2, 3))
    with pytest.raises(InputError, match=r"dyn\.reshape .*does not keep the input's element "
                                         r"count") as e:
        run(xv, np.array([2, 2], "int64"))
    assert "negative" not in str(e.value).split("(or holds")[0]


@pytest.mark.parametrize("step", [0.0, np.nan])
def test_arange_zero_step(step):
    a = relay.var("a", shape=(), dtype="float32")
    run = _vm(relay.Function([a], relay.arange(relay.const(0.0), relay.const(5.0), a)))
    np.testing.assert_array_equal(run(np.float32(2)).numpy(), np.arange(0, 5, 2, "float32"))
    with pytest.raises(InputError, match=r"arange .*step is 0, or start, stop or step is not "
                                         r"finite"):
        run(np.float32(step))


def test_dyn_pad_negative_width():
    x = relay.var("x", shape=(1, 3))
    p = relay.var("p", shape=(2, 2), dtype="int64")
    run = _vm(relay.Function([x, p], relay.nn.pad(x, p)))
    with pytest.raises(InputError, match=r"dyn\.nn\.pad .*pad width .* is negative; expected "
                                         r"widths >= 0"):
        run(np.ones((1, 3), "float32"), np.array([[0, 0], [-1, 0]], "int64"))


def test_dyn_resize_to_zero():
    x = relay.var("x", shape=(1, 1, 4, 4))
    sz = relay.var("sz", shape=(2,), dtype="int64")
    run = _vm(relay.Function([x, sz], relay.image.resize2d(x, sz)))
    with pytest.raises(InputError, match=r"dyn\.image\.resize2d .*size\) must hold whole "
                                         r"numbers >= 1; got a 0"):
        run(np.ones((1, 1, 4, 4), "float32"), np.array([0, 2], "int64"))

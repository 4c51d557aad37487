"""Operator arguments whose values are known only at run time (slice strides, indices, target
shapes given as tensors): compiled code checks them and raises ``InputError`` naming the
operator, as the interpreter refuses them, instead of a SIGFPE, a read out of bounds or garbage
(all found by a new user)."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import InputError


def _run(executor, params, body, *args):
    mod = tvm.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor(executor, mod=mod, target="llvm").evaluate()(*args)


def _f32(*shape):
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_dyn_strided_slice_zero_stride(executor):
    x = relay.var("x", shape=(4, 6))
    s = relay.var("s", shape=(2,), dtype="int64")
    begin = relay.const(np.array([0, 5], "int64"))
    end = relay.const(np.array([4, -7], "int64"))
    body = relay.strided_slice(x, begin, end, s)
    xv = _f32(4, 6)
    good = _run(executor, [x, s], body, xv, np.array([2, -2], "int64"))
    np.testing.assert_array_equal(good.numpy(), xv[0:4:2, 5::-2])
    for bad in ([0, 1], [1, 0]):
        with pytest.raises(InputError, match="strided_slice.*stride"):
            _run(executor, [x, s], body, xv, np.array(bad, "int64"))

"""Integer division by zero and INT_MIN / -1 in compiled code (new-user trial: SIGFPE).

Relay's semantics are NumPy's, which the interpreter follows: a zero divisor gives 0 for the
quotient and the remainder, and INT_MIN / -1 wraps to INT_MIN with remainder 0. The expected
values here come from Python integers, not from NumPy or our kernels.
"""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.ir.types import Any

OPS = ["divide", "trunc_divide", "floor_divide", "mod", "trunc_mod", "floor_mod"]


def _expected(name, a, b, dtype):
    info = np.iinfo(dtype)
    a, b = np.broadcast_arrays(a, b)
    out = []
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        if y == 0:
            r = 0
        elif name in ("divide", "trunc_divide"):
            r = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        elif name == "floor_divide":
            r = x // y
        elif name in ("mod", "trunc_mod"):
            r = x - y * (abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1))
        else:
            r = x % y
        r = (r - info.min) % (1 << info.bits) + info.min  # wrap: INT_MIN / -1 = INT_MIN
        out.append(r)
    return np.array(out, dtype).reshape(a.shape)


def _operands(dtype):
    info = np.iinfo(dtype)
    a = np.array([[7, -7, info.min, info.max, 0, 5, -5, 3],
                  [info.min, 9, -9, 1, info.min, -1, 100 % (info.max + 1), 2]])
    b = np.array([0, 2, -1, 0, 3, -2, -1, 0])  # broadcast along the rows
    if info.min == 0:
        a, b = np.abs(a) % (info.max + 1), np.abs(b)
    return a.astype(dtype), b.astype(dtype)


def _program(dtype, rows=2):
    x = relay.var("x", shape=(rows, 8), dtype=dtype)
    y = relay.var("y", shape=(8,), dtype=dtype)
    one = relay.const(1, dtype)
    # each result fused with a following elementwise op
    outs = [relay.subtract(getattr(relay, n)(x, y), one) for n in OPS]
    return relay.IRModule.from_expr(relay.Function([x, y], relay.Tuple(outs)))


def _check(res, a, b, dtype):
    for name, r in zip(OPS, res):
        want = (_expected(name, a, b, dtype).astype("int64") - 1).astype(dtype)
        np.testing.assert_array_equal(r.numpy(), want, err_msg=name)


@pytest.mark.parametrize("dtype", ["int32", "int8", "int64", "uint8"])
@pytest.mark.parametrize("executor,opt_level",
                         [("debug", 3), ("graph", 0), ("graph", 3), ("vm", 0), ("vm", 3)])
def test_zero_divisor_and_int_min_by_minus_one(dtype, executor, opt_level):
    a, b = _operands(dtype)
    with relay.transform.PassContext(opt_level=opt_level):
        ex = relay.create_executor(executor, mod=_program(dtype), target="llvm")
        res = ex.evaluate()(a, b)
    _check(res, a, b, dtype)


def test_dynamic_rows_in_the_vm():
    a, b = _operands("int32")
    x = relay.var("x", shape=(Any(), 8), dtype="int32")
    y = relay.var("y", shape=(8,), dtype="int32")
    outs = [getattr(relay, n)(x, y) for n in OPS]
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.Tuple(outs)))
    res = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(a, b)
    for name, r in zip(OPS, res):
        np.testing.assert_array_equal(r.numpy(), _expected(name, a, b, "int32"), err_msg=name)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_constant_zero_divisor(opt_level):
    a, _ = _operands("int32")
    x = relay.var("x", shape=(2, 8), dtype="int32")
    zero = relay.const(np.zeros(8, "int32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple(
        [relay.divide(x, zero), relay.floor_mod(x, zero)])))
    with relay.transform.PassContext(opt_level=opt_level):
        res = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(a)
    for r in res:
        np.testing.assert_array_equal(r.numpy(), np.zeros((2, 8), "int32"))


def test_float_division_by_zero_is_unchanged():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.divide(x, y)))
    a = np.array([1.0, -1.0, 0.0], "float32")
    b = np.zeros(3, "float32")
    res = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(a, b).numpy()
    np.testing.assert_array_equal(res, np.array([np.inf, -np.inf, np.nan], "float32"))

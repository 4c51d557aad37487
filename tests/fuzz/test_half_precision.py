"""float16 kernels found by the fuzz sweep of seed 7294031 (issue 17): accumulating reductions
run in float32 and round once, as numpy's half loops do; floor_mod builds vectorized with a
broadcast divisor. Expected values are computed by hand or in float32 NumPy."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.testing.differential import compare, run_all

PATHS = ("graph0", "graph1", "graph3", "vm")


def _check(body_fn, inputs, expected):
    xs = [relay.var(f"p{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(inputs)]
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(xs, body_fn(*xs))))
    res = run_all(mod, inputs, PATHS)
    want = [np.asarray(expected)]
    for path, got in res.items():
        if isinstance(got, Exception):
            raise AssertionError(f"{path} raised {type(got).__name__}: {got}")
        compare(want, got, path)
        assert got[0].dtype == want[0].dtype, path


def test_prod_does_not_overflow_before_a_zero():
    # a float16 running product reaches -inf after 8 factors, then -inf * 0 = NaN; in float32
    # the product is exactly 0 (program 2090)
    row = np.array([5, 5, 5, 2, 5, 6, 5, -1, 3.5, 4, 0, -1, 2.5, 3, 1.5, 1.5], "float16")
    _check(lambda x: relay.prod(x, axis=1), [row.reshape(1, 16)], np.array([-0.0], "float16"))


def test_sum_mean_round_once():
    # 2048 + 1 + 1: in float16 steps each +1 rounds away (ulp 2 at 2048); numpy gives 2050
    x = np.array([[2048, 1, 1]], "float16")
    _check(lambda x: relay.sum(x, axis=1), [x], np.array([2050], "float16"))
    # 60000 + 60000 overflows float16; the mean does not
    y = np.array([[60000, 60000]], "float16")
    _check(lambda x: relay.mean(x, axis=1), [y], np.array([60000], "float16"))


def test_variance_in_float32():
    # squares 40000 each: their float16 sum overflows, the variance 40000 does not
    x = np.array([[200, -200]], "float16")
    _check(lambda x: relay.variance(x, axis=1), [x], np.array([40000], "float16"))
    _check(lambda x: relay.variance(x, axis=1, with_mean=relay.mean(x, axis=1, keepdims=True)),
           [x], np.array([40000], "float16"))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_floor_mod_of_a_cast_compare_by_a_broadcast_divisor(dtype):
    # vectorized with a lane-invariant divisor, a Let of the cast bool vector failed to build
    # (program 1995); numpy: mod(1, -1) = -0
    x = np.array([[[[1, np.nan, 2, 3]]] * 3], dtype)
    c = np.full((3, 1, 1), -1, dtype)
    _check(lambda x: relay.floor_mod(relay.cast(relay.equal(x, x), dtype), relay.const(c)),
           [x], np.mod((x == x).astype(dtype), c))

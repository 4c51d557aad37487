"""qnn.multiply_high and the int32 Q31 rescaling of relay.quantize's realize step, against
NumPy's int64 arithmetic (the rounding the int64 form computes)."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.qnn.op._multiply_high import int32_fixed_point_multiply
from relay_tvm.quantize._realize import _fixed_point_consts, rescale

EDGES = np.array([-2**31, -2**31 + 1, -2**30, -65536, -3, -2, -1, 0, 1, 2, 3, 65535, 2**30,
                  2**31 - 2, 2**31 - 1], "int32")


def _run(expr, args, kinds=("debug", "graph")):
    free = relay.analysis.free_vars(expr)
    mod = relay.IRModule.from_expr(relay.Function(free, expr))
    return [relay.create_executor(k, mod=mod, target="llvm").evaluate()(*args).numpy()
            for k in kinds]


def _q31_int64(x, factor):
    """The int64 "UPWARD" Q31 rescaling, in NumPy."""
    mult, total = _fixed_point_consts(factor)
    p = x.astype("int64") * mult + np.left_shift(np.int64(1), total - 1)
    return p >> total


def test_multiply_high_matches_int64_product_with_broadcast():
    rng = np.random.default_rng(0)
    a = np.concatenate([EDGES, rng.integers(-2**31, 2**31, 49, dtype="int64").astype("int32")])
    a = a.reshape(8, 8)
    b = EDGES[::2].reshape(8, 1)
    x, y = relay.var("x", shape=(8, 8), dtype="int32"), relay.var("y", shape=(8, 1), dtype="int32")
    want = (a.astype("int64") * b.astype("int64")) >> 32
    for got in _run(relay.qnn.op.multiply_high(x, y), [a, b]):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


def test_multiply_high_refuses_other_dtypes():
    x = relay.var("x", shape=(3,), dtype="int64")
    y = relay.var("y", shape=(3,), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.qnn.op.multiply_high(x, y)))
    with pytest.raises(TypeInferenceError, match="lhs has dtype int64, expected int32"):
        relay.transform.InferType()(mod)


@pytest.mark.parametrize("total", [33, 34, 40, 47, 55, 62])
def test_int32_rescaling_equals_int64_at_every_shift(total):
    rng = np.random.default_rng(total)
    xs = np.concatenate([EDGES, rng.integers(-2**31, 2**31, 200, dtype="int64").astype("int32")])
    # multipliers at both ends of the Q31 range and between, 2**-total apart in scale
    mults = np.array([2**30, 2**30 + 1, 1518500250, 2**31 - 1, 1234567890], "int64")
    factors = mults.astype("float64") * 2.0 ** -total
    mult, tot = _fixed_point_consts(factors)
    assert (tot == total).all() and (mult == mults).all()
    x = relay.var("x", shape=(5, xs.size), dtype="int32")
    data = np.broadcast_to(xs, (5, xs.size)).copy()
    expr = int32_fixed_point_multiply(x, mult.reshape(5, 1), tot.reshape(5, 1))
    want = _q31_int64(data, factors.reshape(5, 1))
    for got in _run(expr, [data]):
        np.testing.assert_array_equal(got.astype("int64"), want)


def test_int32_rescaling_declines_where_it_would_not_be_exact():
    # total 32 (factor in [0.25, 0.5)) of unbounded data needs the low word; other roundings
    # take the int64 form
    assert int32_fixed_point_multiply(relay.var("x", dtype="int32"), 2**30, 32) is None
    assert int32_fixed_point_multiply(relay.var("x", dtype="int32"), 2**30, 2, 1) is None
    assert int32_fixed_point_multiply(relay.var("x", dtype="int32"), -5, 40) is None
    x = relay.var("x", shape=(4,), dtype="int32")
    assert "int64" in relay.astext(rescale(x, "int32", 0.3, "UPWARD"))
    assert "int64" in relay.astext(rescale(x, "int32", 0.01, "TONEAREST"))
    assert "int64" not in relay.astext(rescale(x, "int32", 0.01, "UPWARD"))


def test_rescale_per_channel_with_tiny_and_zero_factors():
    rng = np.random.default_rng(3)
    factors = np.array([0.0, 1e-12, 3e-10, 1e-4, 0.0123, 0.2499]).reshape(6, 1)
    xs = rng.integers(-2**31, 2**31, (6, 64), dtype="int64").astype("int32")
    xs[:, :len(EDGES)] = EDGES
    x = relay.var("x", shape=xs.shape, dtype="int32")
    expr = rescale(x, "int32", factors, "UPWARD")
    assert "int64" not in relay.astext(expr)
    want = _q31_int64(xs, factors)
    for got in _run(expr, [xs]):
        np.testing.assert_array_equal(got.astype("int64"), want)


def test_rescale_of_int8_data_casts_to_int32():
    xs = np.arange(-128, 128, dtype="int8").reshape(4, 64)
    x = relay.var("x", shape=xs.shape, dtype="int8")
    expr = rescale(x, "int8", 0.1, "UPWARD")
    want = _q31_int64(xs, 0.1)
    for got in _run(expr, [xs]):
        np.testing.assert_array_equal(got.astype("int64"), want)


@pytest.mark.parametrize("total", [3, 20, 30, 31, 32])
def test_int32_rescaling_of_bounded_data_below_shift_33(total):
    # |data| <= bound lets the data shift left by 33 - total first; 2**31 / 2**s is the limit
    s = 33 - total
    bound = (2 ** 31 - 1) >> s
    rng = np.random.default_rng(total)
    xs = np.concatenate([[-bound, -bound + 1, -1, 0, 1, bound - 1, bound],
                         rng.integers(-bound, bound + 1, 100)]).astype("int32")
    mults = np.array([2**30, 2**31 - 1, 1518500250], "int64")
    factors = (mults.astype("float64") * 2.0 ** -total).reshape(3, 1)
    x = relay.var("x", shape=(3, xs.size), dtype="int32")
    data = np.broadcast_to(xs, (3, xs.size)).copy()
    mult, tot = _fixed_point_consts(factors)
    assert int32_fixed_point_multiply(x, mult, tot, bound + 1) is None  # would overflow
    expr = int32_fixed_point_multiply(x, mult, tot, bound)
    assert expr is not None
    want = _q31_int64(data, factors)
    for got in _run(expr, [data]):
        np.testing.assert_array_equal(got.astype("int64"), want)


def test_int32_rescaling_mixed_shifts_zero_where_the_shift_passes_62():
    # one channel at 2**-30 scale raises every shift by 3: the 2**-60 channel then rounds to 0
    factors = np.array([1.5 * 2.0 ** -30, 1.9 * 2.0 ** -60, 0.75]).reshape(3, 1)
    mult, tot = _fixed_point_consts(factors)
    bound = 2 ** 20
    xs = np.array([-bound, -12345, -1, 0, 1, 777, bound], "int32")
    data = np.broadcast_to(xs, (3, xs.size)).copy()
    x = relay.var("x", shape=data.shape, dtype="int32")
    expr = int32_fixed_point_multiply(x, mult, tot, bound)
    assert expr is not None
    for got in _run(expr, [data]):
        np.testing.assert_array_equal(got.astype("int64"), _q31_int64(data, factors))


def test_value_bound_follows_the_expression():
    from relay_tvm.qnn._bound import value_bound

    x = relay.var("x", shape=(4,), dtype="float32")
    q = relay.cast(relay.clip(relay.round(x), -127.0, 127.0), "int8")
    assert value_bound(q) == 127
    wide = relay.cast(q, "int32")
    assert value_bound(wide) == 127
    u = relay.cast(relay.var("u", shape=(4,), dtype="uint8"), "int32")
    assert value_bound(relay.add(wide, u)) == 127 + 255
    assert value_bound(relay.nn.relu(relay.subtract(wide, u))) == 127 + 255
    assert value_bound(relay.right_shift(u, relay.const(np.array([1, 3], "int32")))) == 128
    assert value_bound(relay.left_shift(u, relay.const(2, "int32"))) == 255 * 4
    assert value_bound(relay.multiply(u, relay.const(np.array([-3, 2], "int32")))) == 765
    assert value_bound(relay.var("y", shape=(4,), dtype="int32")) == 2 ** 31  # its type's
    assert value_bound(relay.add(u, relay.var("y", shape=(4,), dtype="int64"))) is None
    # a negative shift amount has no bound; int32 casts of unknown values are int32's range
    assert value_bound(relay.right_shift(u, relay.const(-1, "int32"))) is None
    assert value_bound(relay.cast(relay.var("z", shape=(4,), dtype="int64"), "int32")) == 2 ** 31


def test_rescale_uses_the_bound_of_8_bit_data():
    xs = np.arange(-128, 128, dtype="int8").reshape(4, 64)
    x = relay.var("x", shape=xs.shape, dtype="int8")
    expr = rescale(relay.add(relay.cast(x, "int32"), relay.const(100, "int32")), "int32", 1.7,
                   "UPWARD")
    assert "int64" not in relay.astext(expr)
    want = _q31_int64(xs.astype("int64") + 100, 1.7)
    for got in _run(expr, [xs]):
        np.testing.assert_array_equal(got.astype("int64"), want)


@pytest.mark.parametrize("in_dtype,zp", [("int8", 3), ("uint8", 128), ("int32", 0),
                                         ("int16", -700)])
def test_qnn_requantize_int32_path_matches_numpy(in_dtype, zp):
    from relay_tvm.qnn.op import _arith

    rng = np.random.default_rng(7)
    info = np.iinfo(in_dtype)
    lo, hi = max(info.min, -2**24), min(info.max, 2**24)
    xs = rng.integers(lo, hi + 1, (2, 6, 5), dtype="int64")
    xs[0, :, 0], xs[0, :, 1] = lo, hi
    xs = xs.astype(in_dtype)
    # per-channel scales over axis 1: tiny, below 1, above 1 (0.19's left shift), exact 1
    iscale = np.array([1e-7, 3e-3, 0.3, 0.9, 1.0, 6.5], "float32")
    oscale = np.float32(0.05)
    x = relay.var("x", shape=xs.shape, dtype=in_dtype)
    e = relay.qnn.op.requantize(x, relay.const(iscale), relay.const(np.int32(zp)),
                                relay.const(oscale), relay.const(np.int32(-5)), axis=1,
                                rounding="UPWARD", out_dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x], e))
    canon = relay.qnn.transform.CanonicalizeOps()(relay.transform.InferType()(mod))
    text = relay.astext(canon["main"])
    if in_dtype != "int32":  # bounded data: every factor runs in int32
        assert "int64" not in text and "multiply_high" in text
    want = _arith.requantize(xs, iscale, np.int32(zp), oscale, np.int32(-5), 1, "UPWARD",
                             "int64", "int32")
    got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(xs).numpy()
    np.testing.assert_array_equal(got, want)

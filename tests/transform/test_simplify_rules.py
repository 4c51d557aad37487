"""SimplifyExpr's rules from Relay's simplify_expr.cc: concretizing *_like operators, casts,
x + x, c / sqrt(x), identities given as zeros / ones / full; each checked structurally and on
values against the unsimplified program."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.testing import run_infer_type, run_opt_pass


def _simplify(e):
    return run_opt_pass(e, relay.transform.SimplifyExpr())


def _same_values(before, after, *arrays):
    fb = relay.Function(relay.analysis.free_vars(before), before)
    fa = relay.Function(relay.analysis.free_vars(after), after)
    ex = relay.create_executor("debug")
    np.testing.assert_allclose(ex.evaluate(fa)(*arrays).numpy(), ex.evaluate(fb)(*arrays).numpy())


def test_like_operators_become_static():
    x = relay.var("x", shape=(2, 3))
    like = relay.var("like", shape=(3, 2), dtype="int32")
    cases = [
        (relay.zeros_like(like), relay.zeros((3, 2), "int32")),
        (relay.ones_like(like), relay.ones((3, 2), "int32")),
        (relay.reshape_like(x, like), relay.reshape(x, (3, 2))),
        (relay.broadcast_to_like(relay.var("r", shape=(2,), dtype="int32"), like),
         relay.broadcast_to(relay.var("r", shape=(2,), dtype="int32"), (3, 2))),
    ]
    for before, expected in cases:
        relay.analysis.assert_graph_equal(_simplify(before), run_infer_type(expected),
                                          map_free_vars=True)


def test_consecutive_casts_fold_only_when_lossless():
    x = relay.var("x", shape=(4,), dtype="int8")
    folded = _simplify(relay.cast(relay.cast(x, "int16"), "float32"))
    relay.analysis.assert_graph_equal(folded, run_infer_type(relay.cast(x, "float32")))
    xv = np.array([-128, -1, 0, 127], "int8")
    _same_values(relay.cast(relay.cast(x, "int16"), "float32"), folded, xv)
    # float -> int loses the fraction: kept
    y = relay.var("y", shape=(4,))
    narrow = relay.cast(relay.cast(y, "int32"), "float32")
    out = _simplify(narrow)
    assert out.args[0].op.name == "cast"
    _same_values(narrow, out, np.array([1.5, -2.7, 3.0, 0.2], "float32"))
    # a cast to the operand's own dtype disappears; cast_like becomes cast
    assert isinstance(_simplify(relay.cast(y, "float32")), relay.Var)
    z = relay.var("z", shape=(2,), dtype="float16")
    relay.analysis.assert_graph_equal(_simplify(relay.cast_like(y, z)),
                                      run_infer_type(relay.cast(y, "float16")), map_free_vars=True)


@pytest.mark.parametrize("c", [1.0, 3.0])
def test_division_by_sqrt_becomes_rsqrt(c):
    x = relay.var("x", shape=(3,))
    before = relay.divide(relay.const(c), relay.sqrt(x))
    after = _simplify(before)
    names = {n.op.name for n in relay.ir.functor.post_order(after) if isinstance(n, relay.Call)}
    assert "rsqrt" in names and "sqrt" not in names and "divide" not in names
    _same_values(before, after, np.array([1.0, 4.0, 0.25], "float32"))


def test_add_self_and_identities():
    x = relay.var("x", shape=(5,))
    twice = _simplify(relay.add(x, x))
    assert twice.op.name == "multiply"
    _same_values(relay.add(x, x), twice, np.arange(5, dtype="float32"))
    for e in (relay.subtract(x, relay.zeros((5,), "float32")),
              relay.multiply(relay.ones_like(x), x),
              relay.add(relay.full(relay.const(-0.0), (5,), "float32"), x)):
        assert isinstance(_simplify(e), relay.Var)
    # x + (+0.0) is +0.0 for x = -0.0: kept (as are the integer identities it would be)
    for e in (relay.add(x, relay.zeros((5,), "float32")),
              relay.add(relay.full(relay.const(0.0), (5,), "float32"), x),
              relay.subtract(x, relay.full(relay.const(-0.0), (5,), "float32"))):
        kept = _simplify(e)
        assert isinstance(kept, relay.Call)
        xv = np.array([-0.0, 0.0, -1.0, np.inf, np.nan], "float32")
        fb = relay.Function([x], e)
        got = relay.create_executor("debug").evaluate(relay.Function([x], kept))(xv).numpy()
        want = relay.create_executor("debug").evaluate(fb)(xv).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(np.signbit(got), [False, False, True, False, False])
    i = relay.var("i", shape=(5,), dtype="int32")
    assert isinstance(_simplify(relay.add(i, relay.zeros((5,), "int32"))), relay.Var)
    # an identity that would broadcast is kept
    kept = _simplify(relay.add(x, relay.zeros((2, 5), "float32")))
    assert isinstance(kept, relay.Call)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_div_to_mul_uses_the_reciprocal(dtype):
    x = relay.var("x", shape=(3,), dtype=dtype)
    c = np.array([2.0, -4.0, 0.5], dtype)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.divide(x, relay.const(c, dtype))))
    out = relay.transform.DivToMul()(mod)
    body = out["main"].body
    assert body.op.name == "multiply"
    np.testing.assert_array_equal(np.asarray(body.args[1].data.numpy()), (1 / c).astype(dtype))
    xv = np.array([1.0, 3.0, -2.0], dtype)
    got = relay.create_executor("debug", mod=out).evaluate()(xv).numpy()
    np.testing.assert_allclose(got, xv / c, rtol=1e-3)
    # integer division is not rewritten (it truncates)
    i = relay.var("i", shape=(2,), dtype="int32")
    imod = relay.IRModule.from_expr(relay.Function([i], relay.divide(i, relay.const(
        np.array([2, 3], "int32")))))
    assert relay.transform.DivToMul()(imod)["main"].body.op.name == "divide"


@pytest.mark.parametrize("name", ["argmax", "argmin", "argsort"])
def test_arg_functions_skip_a_positive_dequantize(name):
    x = relay.var("x", shape=(3, 5), dtype="int8")
    fn = getattr(relay, name)
    xs = np.array([[3, -7, 12, 12, 0], [-128, 127, 5, -5, 1], [4, 4, 4, -1, 9]], "int8")
    pos = fn(relay.qnn.dequantize(x, relay.const(0.25), relay.const(3)), axis=1)
    got = _simplify(pos)
    assert got.op.name == name and isinstance(got.args[0], relay.Var)  # dequantize gone
    _same_values(pos, got, xs)
    # a negative scale reverses the order: the rule must not apply
    neg = fn(relay.qnn.dequantize(x, relay.const(-0.25), relay.const(3)), axis=1)
    kept = _simplify(neg)
    assert kept.args[0].op.name == "qnn.dequantize"
    _same_values(neg, kept, xs)


def _casts(e):
    out = []
    relay.analysis.post_order_visit(
        e, lambda n: out.append(n.attrs.dtype)
        if isinstance(n, relay.Call) and n.op.name == "cast" else None)
    return out


@pytest.mark.parametrize("src,lo,hi,chain,want", [
    ("int32", 0.0, 255.0, ["uint8", "int32"], []),  # uint8 holds [0, 255]: exact round trip
    ("int32", -3.0, 90.0, ["int8", "int16", "int64"], ["int64"]),
    ("float32", 0.0, 255.0, ["uint8", "int16", "int32"], ["int32"]),  # one truncation
    ("float32", 0.0, 255.0, ["int8", "int16", "int32"], ["int8", "int32"]),  # int8 wraps: kept
    ("float32", 0.0, 100.0, ["int8", "float32"], ["int8", "float32"]),  # truncation kept
])
def test_casts_after_clip(src, lo, hi, chain, want):
    x = relay.var("x", shape=(9,), dtype=src)
    e = relay.clip(x, lo, hi)
    for d in chain:
        e = relay.cast(e, d)
    got = _simplify(e)
    assert _casts(got) == want
    xs = np.array([-7.5, -1, 0, 0.6, 3.99, 90, 127.5, 200.25, 300], "float32").astype(src)
    if src == "float32" and "int8" in chain and hi > 127:
        xs = np.clip(xs, lo, 127)  # a float beyond int8 is undefined in a cast: keep to defined
    _same_values(e, got, xs)


def test_clip_of_a_narrower_integer_is_gone():
    x = relay.var("x", shape=(4,), dtype="uint8")
    assert isinstance(_simplify(relay.clip(x, 0.0, 255.0)), relay.Var)
    y = relay.cast(relay.var("y", shape=(4,), dtype="int32"), "int8")
    assert _simplify(relay.clip(y, -128.0, 127.0)).op.name == "cast"
    kept = _simplify(relay.clip(y, -100.0, 127.0))
    assert kept.op.name == "clip"
    _same_values(relay.clip(y, -100.0, 127.0), kept, np.array([-120, -5, 0, 77], "int32"))


@pytest.mark.parametrize("make,value", [
    (lambda s, d: relay.zeros(s, d), 0.0),
    (lambda s, d: relay.ones(s, d), 1.0),
    (lambda s, d: relay.full(relay.const(2.5, d), s, d), 2.5),
])
def test_filled_operand_of_broadcast_becomes_a_scalar(make, value):
    x = relay.var("x", shape=(2, 3))
    for e in (relay.subtract(make((2, 3), "float32"), x), relay.power(x, make((3,), "float32")),
              relay.maximum(make((1, 3), "float32"), x)):
        got = _simplify(e)
        filled = [a for a in got.args if isinstance(a, relay.Constant)]
        assert len(filled) == 1 and filled[0].data.shape == () and filled[0].data == value
        _same_values(e, got, np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -4.0]], "float32"))
    # the filled tensor sets the result's shape: it stays
    wider = relay.subtract(make((4, 2, 3), "float32"), x)
    assert _simplify(wider).args[0].op.name in ("zeros", "ones", "full")


def test_rules_keep_64_bit_dtypes():
    # relay.const makes float64 / int64 values 32-bit unless told: the rules must say
    x = relay.var("x", shape=(2,), dtype="float64")
    i = relay.var("i", shape=(2,), dtype="int64")
    for e, xs in ((relay.subtract(relay.ones_like(x), x), np.array([0.25, 3.0])),
                  (relay.add(x, x), np.array([0.25, 3.0])),
                  (relay.multiply(relay.full(relay.const(3, "int64"), (2,), "int64"), i),
                   np.array([5, -2], "int64"))):
        got = _simplify(e)
        consts = [a for a in got.args if isinstance(a, relay.Constant)]
        assert consts and consts[0].data.dtype == xs.dtype
        _same_values(e, got, xs)

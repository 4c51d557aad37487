"""CanonicalizeCast: a widening cast read by several elementwise operators gets one copy per
reader; a narrowing one stays shared; the values do not change (interpreter)."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay


def _casts(func):
    found = []
    relay.analysis.post_order_visit(
        func, lambda n: found.append(n) if isinstance(n, relay.Call) and n.op.name == "cast"
        else None)
    return found


def _run(func):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(func))
    with relay.transform.PassContext(opt_level=3):
        out = relay.transform.InferType()(relay.transform.CanonicalizeCast()(mod))
    return mod, out


def test_widening_cast_is_copied_per_reader():
    x = relay.var("x", shape=(4,), dtype="int8")
    b = relay.var("b", shape=(4,), dtype="int32")
    w = relay.cast(x, "int32")
    f = relay.Function([x, b], relay.Tuple([w + b, w * b, relay.maximum(w, b)]))
    mod, out = _run(f)
    assert len(_casts(mod["main"])) == 1 and len(_casts(out["main"])) == 3
    xs, bs = np.array([-128, -1, 5, 127], "int8"), np.array([3, -4, 100, -7], "int32")
    ev = relay.create_executor("debug")
    for got, want in zip(ev.evaluate(out["main"])(xs, bs), ev.evaluate(mod["main"])(xs, bs)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_narrowing_cast_and_opaque_readers_keep_one_cast():
    x = relay.var("x", shape=(4,), dtype="int32")
    n = relay.cast(x, "int8")
    f = relay.Function([x], relay.Tuple([n + n, relay.negative(n)]))
    _, out = _run(f)
    assert len(_casts(out["main"])) == 1
    y = relay.var("y", shape=(2, 2), dtype="float16")
    w = relay.cast(y, "float32")
    g = relay.Function([y], relay.Tuple([relay.nn.softmax(w), relay.sum(w)]))  # not elementwise
    _, out = _run(g)
    assert len(_casts(out["main"])) == 1

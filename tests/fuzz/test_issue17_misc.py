"""Regressions of issue 17 outside special float values: float16 batch_norm kept whole,
the text format's float extremes and oversized dimensions."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import ParseError
from relay_tvm.testing.differential import compare, run_path


def test_float16_batch_norm_without_simplify_inference_keeps_float16():
    rng = np.random.default_rng(0)
    h = rng.normal(size=(2, 3, 4)).astype("float16")
    g, b = rng.uniform(0.5, 2, 3).astype("float16"), rng.normal(size=3).astype("float16")
    m, v = rng.normal(size=3).astype("float16"), rng.uniform(0.5, 2, 3).astype("float16")
    xs = [relay.var(n, shape=a.shape, dtype="float16") for n, a in zip("xgbmv", [h, g, b, m, v])]
    mod = relay.IRModule.from_expr(relay.Function(xs, relay.nn.batch_norm(*xs)[0]))
    want = ((h.astype("float64") - m.reshape(3, 1)) / np.sqrt(v.reshape(3, 1) + 1e-5)
            * g.reshape(3, 1) + b.reshape(3, 1)).astype("float16")
    compare([want], run_path(mod, [h, g, b, m, v], "debug"), "interpreter")
    for level in (0, 3):
        with relay.transform.PassContext(opt_level=level, disabled_pass=["SimplifyInference"]):
            got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(h, g, b, m, v)
        compare([want], [got.numpy()], f"graph opt {level}")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_printer_output_of_the_largest_float_parses_back(dtype):
    big = np.finfo(dtype).max
    x = relay.var("x", shape=(2,), dtype=dtype)
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(-big, dtype))))
    mod = relay.transform.InferType()(mod)
    back = relay.fromtext(mod.astext())
    assert relay.analysis.structural_equal(back, mod)


def test_float_literal_beyond_the_range_is_still_rejected():
    src = '#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) { add(%x, 3.5e+38f) }'
    with pytest.raises(ParseError, match="out of range for float32"):
        relay.fromtext(src)


def test_dimension_beyond_int64_is_a_parse_error():
    src = ('#[version = "0.0.5"]\n'
           'def @main(%x: Tensor[(99999999999999999999999, 2), float32]) { %x }')
    with pytest.raises(ParseError, match="99999999999999999999999 exceeds the int64 range"):
        relay.fromtext(src)


def _countdown_module(tail=True):
    """@f(i, a, b) = if i == 0 then (a, b) else @f(i - 1, b, a + b) (a Fibonacci pair; the
    arguments swap, so each reads a parameter another overwrites); non-tail: 1 + @f(...)."""
    mod = relay.IRModule()
    f = relay.GlobalVar("f")
    i = relay.var("i", shape=(), dtype="int32")
    a, b = relay.var("a", shape=(), dtype="float64"), relay.var("b", shape=(), dtype="float64")
    rec = relay.Call(f, [relay.subtract(i, relay.const(1, "int32")), b, relay.add(a, b)])
    if not tail:
        rec = relay.add(rec, relay.const(1.0, "float64"))
    mod[f] = relay.Function([i, a, b], relay.If(relay.equal(i, relay.const(0, "int32")), a, rec))
    n = relay.var("n", shape=(), dtype="int32")
    mod["main"] = relay.Function([n], relay.Call(f, [n, relay.const(0.0, "float64"),
                                                     relay.const(1.0, "float64")]))
    return relay.transform.InferType()(mod)


def test_vm_deep_tail_recursion_runs_as_a_loop():
    mod = _countdown_module()
    vm = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    fib = [0.0, 1.0]
    for _ in range(30):
        fib.append(fib[-1] + fib[-2])
    assert float(vm(np.int32(30)).numpy()) == fib[30]
    assert float(relay.create_executor("debug", mod=mod).evaluate()(np.int32(30)).numpy()) \
        == fib[30]
    # 100,000 levels (3,000 crashed the process before): the float64 sum overflows to inf
    assert float(vm(np.int32(100000)).numpy()) == np.inf


def test_vm_non_tail_recursion_still_recurses():
    mod = _countdown_module(tail=False)
    vm = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    ref = relay.create_executor("debug", mod=mod).evaluate()
    assert float(vm(np.int32(50)).numpy()) == float(ref(np.int32(50)).numpy())

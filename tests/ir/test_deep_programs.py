"""100,000-node programs: type inference, structural comparison and evaluation without
RecursionError (the issue's requirement; iterative traversals everywhere)."""

import numpy as np

import relay_tvm as relay
from relay_tvm import analysis

N = 100_000


def chain(x, n):
    y = x
    for i in range(n):
        y = relay.add(y, relay.const(1.0)) if i % 2 else relay.multiply(y, relay.const(1.0))
    return y


def nested_lets(x, n):
    binds, v = [], x
    for i in range(n):
        nv = relay.var(f"v{i}")
        binds.append((nv, relay.add(v, relay.const(1.0))))
        v = nv
    body = v
    for nv, val in reversed(binds):
        body = relay.Let(nv, val, body)
    return body


def test_chain_of_100k_operators():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], chain(x, N))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(f))
    assert mod["main"].checked_type.ret_type == relay.TensorType((2,))
    x2 = relay.var("x", shape=(2,))
    g = relay.Function([x2], chain(x2, N))
    assert analysis.structural_equal(f, g)
    assert analysis.structural_hash(f) == analysis.structural_hash(g)
    out = relay.create_executor(mod=mod).evaluate()(np.zeros(2, "float32"))
    np.testing.assert_allclose(out.numpy(), [N / 2, N / 2])


def test_100k_nested_lets():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], nested_lets(x, N))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(f))
    assert mod["main"].checked_type.ret_type == relay.TensorType((2,))
    x2 = relay.var("x", shape=(2,))
    assert analysis.structural_equal(f, relay.Function([x2], nested_lets(x2, N)))
    assert analysis.well_formed(f)
    out = relay.create_executor(mod=mod).evaluate()(np.ones(2, "float32"))
    np.testing.assert_allclose(out.numpy(), [N + 1, N + 1])

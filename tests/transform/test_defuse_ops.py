"""DefuseOps undoes FuseOps: the program comes back (alpha-equivalent) and computes the same."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.analysis import structural_equal


def _net():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(8, 4, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)) + relay.const(0.5))
    z = relay.concatenate([relay.exp(y), relay.nn.max_pool2d(y, (1, 1))], axis=1)
    return relay.Function([x, w], relay.sum(z, axis=1))


def _kinds(e):
    out = set()
    relay.analysis.post_order_visit(e, lambda n: out.add(type(n).__name__))
    return out


def test_defuse_inverts_fuse():
    mod = relay.transform.InferType()(relay.IRModule.from_expr(_net()))
    with relay.transform.PassContext(opt_level=3):
        fused = relay.transform.FuseOps(fuse_opt_level=2)(mod)
        defused = relay.transform.InferType()(relay.transform.DefuseOps()(fused))
    assert "Function" in _kinds(fused["main"].body)  # fused into primitive functions
    assert "Function" not in _kinds(defused["main"].body)
    assert structural_equal(defused["main"], mod["main"])
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((1, 4, 6, 6)).astype("float32")
    wv = rng.standard_normal((8, 4, 3, 3)).astype("float32")
    run = relay.create_executor("debug", mod=defused).evaluate()
    want = relay.create_executor("debug", mod=mod).evaluate()(xv, wv).numpy()
    np.testing.assert_allclose(run(xv, wv).numpy(), want, rtol=1e-5, atol=1e-5)

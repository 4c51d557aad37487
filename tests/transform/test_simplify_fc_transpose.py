"""SimplifyFCTranspose / data_dep_optimization.simplify_fc_transpose.convert: dense of a
transposed weight parameter uses a pre-transposed parameter; same numbers (interpreter vs
NumPy), the transpose gone."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import search_fc_transpose
from relay_tvm.data_dep_optimization import simplify_fc_transpose
from relay_tvm.errors import RelayError

RNG = np.random.default_rng(3)


def _ops(expr):
    out = []
    relay.analysis.post_order_visit(
        expr, lambda e: out.append(e.op.name) if isinstance(e, relay.Call) else None)
    return out


def _run(func, **inputs):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(func))
    args = [inputs[p.name_hint] for p in mod["main"].params]
    out = relay.create_executor("debug", mod=mod).evaluate()(*args)
    return [o.numpy() for o in out] if isinstance(out, (tuple, list)) else out.numpy()


def _mlp(extra_use=False):
    x = relay.var("x", shape=(2, 6))
    w1 = relay.var("w1", shape=(6, 5))
    w2 = relay.var("w2", shape=(5, 3))
    h = relay.nn.relu(relay.nn.dense(x, relay.transpose(w1, axes=[1, 0])))
    y = relay.nn.dense(h, relay.transpose(w2, axes=[1, 0]))
    if extra_use:
        y = relay.Tuple([y, relay.sum(w2)])
    return relay.Function([x, w1, w2], y)


def test_convert_pretransposes_weights_and_keeps_the_numbers():
    xv = RNG.standard_normal((2, 6)).astype("float32")
    params = {"w1": RNG.standard_normal((6, 5)).astype("float32"),
              "w2": RNG.standard_normal((5, 3)).astype("float32")}
    func = _mlp()
    assert search_fc_transpose(func) == ["w1", "w2"]
    want = np.maximum(xv @ params["w1"], 0) @ params["w2"]
    new_func, new_params = simplify_fc_transpose.convert(func, dict(params))
    assert sorted(new_params) == ["w1.T", "w2.T"]
    np.testing.assert_array_equal(new_params["w1.T"], params["w1"].T)
    assert "transpose" not in _ops(new_func)
    assert [p.name_hint for p in new_func.params] == ["x", "w1.T", "w2.T"]
    got = _run(new_func, x=xv, **new_params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_weight_with_other_uses_stays_a_parameter():
    xv = RNG.standard_normal((2, 6)).astype("float32")
    params = {"w1": RNG.standard_normal((6, 5)).astype("float32"),
              "w2": RNG.standard_normal((5, 3)).astype("float32")}
    with pytest.raises(RelayError, match="no value for weight 'w2'"):
        simplify_fc_transpose.convert(_mlp(), {"w1": params["w1"]})
    new_func = relay.transform.SimplifyFCTranspose(["w2"])(
        relay.transform.InferType()(relay.IRModule.from_expr(_mlp(extra_use=True))))["main"]
    assert [p.name_hint for p in new_func.params] == ["x", "w1", "w2.T", "w2"]
    out = _run(new_func, x=xv, w1=params["w1"], w2=params["w2"], **{"w2.T": params["w2"].T})
    np.testing.assert_allclose(out[1], params["w2"].sum(), rtol=1e-5)
    np.testing.assert_allclose(out[0], np.maximum(xv @ params["w1"], 0) @ params["w2"],
                               rtol=1e-5, atol=1e-5)

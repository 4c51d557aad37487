"""ChangeBatch: the chosen parameter's batch axis changes and the whole program is typed again;
the result computes per-example what the original did (interpreter)."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError


def _mlp():
    x = relay.var("x", shape=(2, 5))
    w = relay.var("w", shape=(3, 5))
    return relay.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w))))


def test_change_batch_retypes_and_computes_the_same():
    mod = relay.transform.InferType()(_mlp())
    x = mod["main"].params[0]
    out = relay.transform.ChangeBatch({x: 0}, batch_size=7)(mod)
    assert out["main"].checked_type.ret_type == relay.TensorType((7, 3), "float32")
    assert out["main"].params[0].type_annotation.shape == (7, 5)
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal((7, 5)).astype("float32"), rng.standard_normal((3, 5)).astype(
        "float32")
    got = relay.create_executor("debug", mod=out).evaluate()(xs, ws).numpy()
    np.testing.assert_allclose(got, np.maximum(xs @ ws.T, 0), rtol=1e-5, atol=1e-6)


def test_change_batch_axis_must_exist():
    mod = relay.transform.InferType()(_mlp())
    with pytest.raises(RelayError, match="no axis 2"):
        relay.transform.ChangeBatch({mod["main"].params[0]: 2}, batch_size=4)(mod)

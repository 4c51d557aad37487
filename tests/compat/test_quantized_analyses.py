"""relay.analysis.list_fake_quantized_op_freqs and get_calibration_data (tvm.relay 0.19)."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InputError

qnn = relay.qnn.op


def _dq(x, s, z=0):
    return qnn.dequantize(x, relay.const(np.float32(s)), relay.const(np.int32(z)))


def _q(x, s, z=0):
    return qnn.quantize(x, relay.const(np.float32(s)), relay.const(np.int32(z)))


def test_fake_quantized_op_freqs_counts_only_convertible_regions():
    a = relay.var("a", shape=(4, 8), dtype="int8")
    w = relay.var("w", shape=(6, 8), dtype="int8")
    r1 = _q(relay.nn.dense(_dq(a, 0.5), _dq(w, 0.25)), 1.0)              # dense
    r2 = _q(relay.nn.relu(relay.reshape(_dq(r1, 1.0), (2, 12))), 1.0)   # reshape, relu
    r3 = _q(relay.sin(relay.transpose(_dq(r2, 1.0))), 1.0)             # sin: not convertible
    out = relay.sigmoid(_dq(r3, 1.0))                                   # outside any region
    mod = relay.IRModule.from_expr(relay.Function([a, w], out))
    got = relay.analysis.list_fake_quantized_op_freqs(mod)
    assert got == {"nn.dense": 1, "reshape": 1, "nn.relu": 1}


def test_calibration_data_records_each_subgraph_call():
    rng = np.random.default_rng(0)
    mod = relay.IRModule()
    p, q = relay.var("p", shape=(3,)), relay.var("q", shape=(3,))
    g0 = relay.GlobalVar("g0")
    mod[g0] = relay.Function([p, q], relay.Tuple([p * q, p - q])).with_attr("Compiler", "ext")
    u, v = relay.var("u", shape=(3,)), relay.var("v", shape=(3,))
    g1 = relay.GlobalVar("g1")
    mod[g1] = relay.Function([u, v], relay.exp(u) + v)
    x, y, z = (relay.var(n, shape=(3,)) for n in "xyz")
    t = relay.Call(g0, [x, y])
    mod["main"] = relay.Function([x, y, z], relay.Call(g1, [relay.TupleGetItem(t, 1), z]))
    xv, yv, zv = (rng.standard_normal(3).astype("float32") for _ in range(3))
    data = relay.analysis.get_calibration_data(mod, {"x": xv, "y": yv, "z": zv})
    assert set(gv.name_hint for gv in data) == {"g0", "g1"}
    by = {gv.name_hint: d for gv, d in data.items()}
    np.testing.assert_array_equal(by["g0"]["inputs"][1].numpy(), yv)
    np.testing.assert_allclose(by["g0"]["outputs"][0].numpy(), xv * yv, rtol=1e-6)
    np.testing.assert_allclose(by["g0"]["outputs"][1].numpy(), xv - yv, rtol=1e-6)
    np.testing.assert_allclose(by["g1"]["inputs"][0].numpy(), xv - yv, rtol=1e-6)
    np.testing.assert_allclose(by["g1"]["outputs"][0].numpy(), np.exp(xv - yv) + zv,
                               rtol=1e-5)
    with pytest.raises(InputError, match="'z'"):
        relay.analysis.get_calibration_data(mod, {"x": xv, "y": yv})

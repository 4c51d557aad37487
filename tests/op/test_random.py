"""relay.random: Threefry-2x64-20 keys and draws, on the reference interpreter and the VM."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.op.random import _rounds


def _run(outputs, kind):
    mod = relay.IRModule.from_expr(relay.Function([], relay.Tuple(list(outputs))))
    ex = relay.create_executor(kind, mod=mod, target="llvm") if kind == "vm" else \
        relay.create_executor("debug", mod=mod)
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in ex.evaluate()()]


def test_threefry_block_matches_the_random123_known_answer():
    # Random123's kat_vectors: threefry2x64_20, counter (0, 0), key (0, 0)
    z = np.uint64(0)
    with np.errstate(over="ignore"):
        x0, x1 = _rounds(z, z, z, z, np.uint64)
    assert (int(x0), int(x1)) == (0xC2B6E3A8C2C69865, 0x6F81ED42F350084D)


def test_key_layout_and_generate_bits_follow_the_block_function():
    key = relay.random.threefry_key(5)
    assert key.data.numpy().tolist() == [5, 0, 0, 0, 0, 0, 0, 0, 1 << 63, 0]
    new_key, bits = relay.TupleWrapper(relay.random.threefry_generate(key, (2, 3)), 2)
    nk, b = _run([new_key, bits], "debug")
    assert nk[9] == 6 and nk[:9].tolist() == key.data.numpy()[:9].tolist()
    with np.errstate(over="ignore"):
        want = _rounds(np.uint64(5), np.uint64(0), np.zeros(6, "uint64"),
                       np.arange(6, dtype="uint64"), np.uint64)[0]
    np.testing.assert_array_equal(b, want.reshape(2, 3))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_draws_are_repeatable_and_keys_give_new_streams(kind):
    key = relay.random.threefry_key(7)
    k1, a = relay.TupleWrapper(relay.random.threefry_generate(key, (5,)), 2)
    _, b = relay.TupleWrapper(relay.random.threefry_generate(k1, (5,)), 2)
    left, right = relay.TupleWrapper(relay.random.threefry_split(key), 2)
    _, c = relay.TupleWrapper(relay.random.threefry_generate(left, (5,)), 2)
    _, d = relay.TupleWrapper(relay.random.threefry_generate(right, (5,)), 2)
    _, a2 = relay.TupleWrapper(relay.random.threefry_generate(relay.random.threefry_key(7),
                                                              (5,)), 2)
    a_, b_, c_, d_, a2_ = _run([a, b, c, d, a2], kind)
    np.testing.assert_array_equal(a_, a2_)
    draws = [a_, b_, c_, d_]
    for i in range(4):
        for j in range(i + 1, 4):
            assert not np.intersect1d(draws[i], draws[j]).size


def test_vm_kernels_agree_with_the_reference():
    key = relay.random.threefry_key(2**70 + 3)
    left, right = relay.TupleWrapper(relay.random.threefry_split(key), 2)
    k2, u = relay.TupleWrapper(relay.random.uniform(left, (4, 5), "float64", -2.0, 3.0), 2)
    _, n = relay.TupleWrapper(relay.random.normal(right, (6,), "float32", 1.0, 0.5), 2)
    _, bits = relay.TupleWrapper(relay.random.threefry_generate(k2, (3,)), 2)
    outs = [left, right, k2, u, n, bits]
    ref, got = _run(outs, "debug"), _run(outs, "vm")
    for r, g in zip(ref, got):
        assert r.dtype == g.dtype and r.shape == g.shape
        if r.dtype == np.uint64:
            np.testing.assert_array_equal(g, r)
        else:
            np.testing.assert_allclose(g, r, rtol=1e-6)


def test_uniform_and_normal_statistics():
    key = relay.random.threefry_key(11)
    k, u = relay.TupleWrapper(relay.random.uniform(key, (20000,), low=2.0, high=4.0), 2)
    _, n = relay.TupleWrapper(relay.random.normal(k, (20000,), "float64", 3.0, 2.0), 2)
    u_, n_ = _run([u, n], "vm")
    assert u_.dtype == np.float32 and u_.min() >= 2.0 and u_.max() < 4.0
    assert abs(u_.mean() - 3.0) < 0.03 and abs(u_.var() - 4 / 12) < 0.02
    assert n_.dtype == np.float64
    assert abs(n_.mean() - 3.0) < 0.06 and abs(n_.std() - 2.0) < 0.06


def test_types_and_bad_keys():
    key = relay.random.threefry_key(1)
    f = relay.Function([], relay.random.uniform(key, (3, 2), "float64"))
    t = relay.transform.InferType()(relay.IRModule.from_expr(f))["main"].checked_type.ret_type
    assert t == relay.TupleType([relay.TensorType((10,), "uint64"),
                                 relay.TensorType((3, 2), "float64")])
    bad = relay.const(np.arange(9, dtype="uint64"))
    for call in (relay.random.threefry_generate(bad, (2,)), relay.random.threefry_split(bad)):
        with pytest.raises(TypeInferenceError, match=r"key must be a uint64 tensor of shape "
                                                     r"\(10,\).*got uint64 \(9,\)"):
            relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([], call)))
    with pytest.raises(TypeInferenceError, match="out_dtype must be float32 or float64"):
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function([], relay.random.normal(key, (2,), "int32", mean=relay.const(0),
                                                   scale=relay.const(1)))))
    with pytest.raises(ValueError, match="seed must be in"):
        relay.random.threefry_key(-1)

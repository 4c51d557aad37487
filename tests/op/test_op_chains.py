"""Chains of operators, which FuseOps groups into one kernel on the compiled path, against NumPy."""

import numpy as np
from op_check import check_op

import relay_tvm as relay

RNG = np.random.default_rng(6)


def test_injective_into_reduction():
    a = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")
    b = RNG.uniform(-1, 1, (4,)).astype("float32")
    x, y = relay.var("x", shape=a.shape), relay.var("y", shape=b.shape)
    t = relay.transpose(relay.reshape(relay.add(x, y), (6, 4)), (1, 0))
    out = relay.sum(relay.exp(relay.strided_slice(t, (3, 0), (0, 6), (-1, 2))), 1, keepdims=True)
    ta = (a + b).reshape(6, 4).T
    check_op(out, [a, b], np.exp(ta[3:0:-1, 0:6:2]).sum(1, keepdims=True), rtol=1e-5)


def test_elementwise_after_reduction_and_broadcast():
    a = RNG.uniform(-1, 1, (3, 5)).astype("float32")
    x = relay.var("x", shape=a.shape)
    m = relay.max(x, 1, keepdims=True)
    e = relay.exp(relay.subtract(x, m))
    out = relay.divide(e, relay.sum(e, 1, keepdims=True))
    ea = np.exp(a - a.max(1, keepdims=True))
    check_op(out, [a], ea / ea.sum(1, keepdims=True), rtol=1e-5)


def test_layout_round_trip_with_arithmetic():
    a = RNG.uniform(-1, 1, (1, 8, 3, 3)).astype("float32")
    x = relay.var("x", shape=a.shape)
    blocked = relay.layout_transform(x, "NCHW", "NCHW4c")
    y = relay.multiply(blocked, relay.const(2.0))
    out = relay.layout_transform(relay.clip(y, -1.0, 1.0), "NCHW4c", "NHWC")
    check_op(out, [a], np.clip(2 * a, -1, 1).transpose(0, 2, 3, 1))


def test_gather_concat_cast_chain():
    a = RNG.integers(-9, 9, (4, 3)).astype("int32")
    i = np.array([3, 1], "int32")
    x, iv = relay.var("x", shape=a.shape, dtype="int32"), relay.var("i", shape=(2,), dtype="int32")
    picked = relay.take(x, iv, axis=0)
    both = relay.concatenate([picked, relay.reverse(picked, 0)], 1)
    out = relay.cast(relay.floor_mod(both, relay.const(4, "int32")), "float32")
    p = a[[3, 1]]
    check_op(out, [a, i], np.mod(np.concatenate([p, p[::-1]], 1), 4).astype("float32"))


def test_split_branches_rejoined():
    a = RNG.uniform(-1, 1, (2, 6)).astype("float32")
    x = relay.var("x", shape=a.shape)
    s = relay.split(x, 3, axis=1)
    out = relay.stack([relay.sigmoid(s[0]), relay.tanh(s[1]), relay.abs(s[2])], 0)
    p = np.split(a, 3, 1)
    check_op(out, [a], np.stack([1 / (1 + np.exp(-p[0])), np.tanh(p[1]), np.abs(p[2])]), rtol=1e-5)


def test_let_binding_compute_inlined_into_two_consumers():
    # floor_mod's IEEE-754 compute binds a Let; inlined into greater and where, its variable
    # was defined twice and TVM refused the kernel as ill-formed TIR (differential fuzzer)
    a = RNG.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0], size=(2, 3, 4, 4)).astype("float32")
    b = RNG.choice([-2.0, -1.5, 0.5, 1.0, 2.5], size=(2, 3, 4, 4)).astype("float32")
    x, y = relay.var("x", shape=a.shape), relay.var("y", shape=b.shape)
    m = relay.floor_mod(x, y)
    out = relay.where(relay.greater(m, x), relay.maximum(x, m), m)
    ma = np.mod(a, b)
    check_op(out, [a, b], np.where(ma > a, np.maximum(a, ma), ma), rtol=1e-6)

"""relay.transform.recast: chosen operators run at another dtype, the program's interface and
the other operators unchanged; numbers from the interpreter against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.transform import recast


def _ops(expr):
    out = []
    relay.analysis.post_order_visit(
        expr, lambda e: out.append((e.op.name, e.attrs)) if isinstance(e, relay.Call) else None)
    return out


def _run(func, *args):
    return relay.create_executor("debug", mod=relay.IRModule.from_expr(func)).evaluate()(*args)


def _conv_ref(x, w):
    """NCHW / OIHW, stride 1, no padding, accumulated in float64."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + h - kh + 1, j:j + wd - kw + 1].astype(np.float64)
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out


def _two_convs():
    x = relay.var("x", shape=(1, 2, 6, 6))
    w1 = relay.var("w1", shape=(3, 2, 3, 3))
    w2 = relay.var("w2", shape=(2, 3, 3, 3))
    c1 = relay.nn.conv2d(x, w1, out_dtype="float32")
    c2 = relay.nn.conv2d(relay.nn.relu(c1), w2, out_dtype="float32")
    return relay.Function([x, w1, w2], c2)


def test_int8_recast_is_exact_on_small_integers():
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, (1, 2, 6, 6)).astype("float32")
    w1 = rng.integers(-1, 2, (3, 2, 3, 3)).astype("float32")
    w2 = rng.integers(-1, 2, (2, 3, 3, 3)).astype("float32")
    post = recast(_two_convs(), "int8", "int32")
    convs = [a for n, a in _ops(post) if n == "nn.conv2d"]
    assert [a.out_dtype for a in convs] == ["int32", "int32"]
    casts = [a.dtype for n, a in _ops(post) if n == "cast"]
    assert sorted(casts) == ["float32"] * 2 + ["int8"] * 4
    # every intermediate value fits int8 (|relu(conv1)| <= 2*1*18 = 36), so the int8 program
    # computes exactly what the float one does
    want = _conv_ref(np.maximum(_conv_ref(x, w1), 0), w2)
    assert np.abs(want).max() > 0
    got = _run(post, x, w1, w2).numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want.astype("float32"))


def test_float16_recast_rounds_inputs_and_keeps_interface():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    w1 = rng.standard_normal((3, 2, 3, 3)).astype("float32")
    w2 = rng.standard_normal((2, 3, 3, 3)).astype("float32")
    func = _two_convs()
    post = recast(func, "float16", "float32", skip_layers=[-1])  # the last conv stays float32
    convs = [a for n, a in _ops(post) if n == "nn.conv2d"]
    assert [a.out_dtype for a in convs] == ["float32", "float32"]
    assert [a.dtype for n, a in _ops(post) if n == "cast"] == ["float16", "float16", "float32"]
    h = np.maximum(_conv_ref(x.astype("float16"), w1.astype("float16")), 0).astype("float32")
    want = _conv_ref(h, w2)
    got = _run(post, x, w1, w2).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # and it differs from the unrecast program by the float16 rounding of the first layer
    exact = _run(func, x, w1, w2).numpy()
    assert not np.array_equal(got, exact)
    np.testing.assert_allclose(got, exact, rtol=0, atol=0.05)


def test_ops_without_out_dtype_cast_back_to_their_inferred_dtype():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    func = relay.Function([x, y], relay.nn.relu(relay.concatenate([x, y], axis=1)))
    post = recast(relay.IRModule.from_expr(func), "float16", "float16",
                  ops=["concatenate", "nn.relu"])
    assert isinstance(post, relay.IRModule)
    casts = [a.dtype for n, a in _ops(post["main"]) if n == "cast"]
    assert sorted(casts) == ["float16"] * 3 + ["float32"] * 2
    a = np.array([[1.0001, -2, 3], [4, 5, -6]], "float32")
    got = _run(post["main"], a, -a).numpy()
    assert got.dtype == np.float32
    want = np.maximum(np.concatenate([a, -a], 1).astype("float16"), 0).astype("float32")
    np.testing.assert_array_equal(got, want)


def test_unknown_operator_is_named():
    with pytest.raises(RelayError, match="nn.conv9d"):
        recast(_two_convs(), "int8", "int32", ops=["nn.conv9d"])

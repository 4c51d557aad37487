"""qnn.conv2d_transpose against a NumPy transposed convolution of the zero-point-shifted
operands (interpreter and built), and FakeQuantizationToInteger producing it (and
qnn.batch_matmul, and a dense whose int32 bias already has the accumulator's scale)."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.transform._rewrite import called_ops


def _np_conv_t(x, w, stride):
    """NCHW data, IOHW weight, no padding: out[n, o, i*s+u, j*s+v] += x[n, c, i, j] w[c, o, u, v]."""
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    out = np.zeros((n, o, (h - 1) * stride + kh, (wd - 1) * stride + kw), "int64")
    for i in range(h):
        for j in range(wd):
            out[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,couv->nouv", x[:, :, i, j], w)
    return out


def test_qnn_conv2d_transpose_matches_numpy():
    rng = np.random.default_rng(11)
    xv = rng.integers(0, 256, (2, 3, 4, 5)).astype("uint8")
    wv = rng.integers(-128, 128, (3, 2, 3, 2)).astype("int8")
    x = relay.var("x", shape=xv.shape, dtype="uint8")
    w = relay.var("w", shape=wv.shape, dtype="int8")
    y = relay.qnn.conv2d_transpose(x, w, relay.const(np.int32(7)), relay.const(np.int32(-3)),
                                   relay.const(np.float32(0.5)), relay.const(np.float32(0.25)),
                                   strides=(2, 2), kernel_size=(3, 2), channels=2)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], y)))
    want = _np_conv_t(xv.astype("int64") - 7, wv.astype("int64") + 3, 2)
    assert mod["main"].body.checked_type.shape == want.shape
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(xv, wv).numpy()
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


def _fq2i_equal(out, params, args):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, out)))
    after = relay.transform.InferType()(relay.transform.FakeQuantizationToInteger()(mod))
    ops = called_ops(after["main"])
    assert "qnn.dequantize" not in ops
    run = lambda m: relay.create_executor("vm", mod=m, target="llvm").evaluate()(*args).numpy()  # noqa: E731
    np.testing.assert_array_equal(run(after), run(mod))
    return ops


def test_fq2i_conv2d_transpose_batch_matmul_dense_bias():
    rng = np.random.default_rng(12)
    zero = relay.const(np.int32(0))
    s = lambda v: relay.const(np.float32(v))  # noqa: E731
    x = relay.var("x", shape=(1, 2, 5, 5), dtype="int8")
    w = relay.var("w", shape=(2, 3, 3, 3), dtype="int8")
    y = relay.nn.conv2d_transpose(relay.qnn.dequantize(x, s(0.5), zero),
                                  relay.qnn.dequantize(w, s(0.25), zero), kernel_size=(3, 3))
    ops = _fq2i_equal(relay.qnn.quantize(y, s(4.0), zero), [x, w],
                      [rng.integers(-128, 128, (1, 2, 5, 5)).astype("int8"),
                       rng.integers(-128, 128, (2, 3, 3, 3)).astype("int8")])
    assert "qnn.conv2d_transpose" in ops

    a = relay.var("a", shape=(2, 4, 6), dtype="int8")
    b = relay.var("b", shape=(2, 5, 6), dtype="int8")
    y = relay.nn.batch_matmul(relay.qnn.dequantize(a, s(0.5), zero),
                              relay.qnn.dequantize(b, s(0.5), zero))
    ops = _fq2i_equal(relay.qnn.quantize(y, s(8.0), zero), [a, b],
                      [rng.integers(-128, 128, (2, 4, 6)).astype("int8"),
                       rng.integers(-128, 128, (2, 5, 6)).astype("int8")])
    assert "qnn.batch_matmul" in ops

    d = relay.var("d", shape=(3, 6), dtype="int8")
    wt = relay.var("wt", shape=(4, 6), dtype="int8")
    bias = relay.var("bias", shape=(4,), dtype="int32")
    wscale = np.array([0.5, 0.25, 1.0, 0.125], "float32")
    y = relay.nn.dense(relay.qnn.dequantize(d, s(2.0), zero),
                       relay.qnn.dequantize(wt, relay.const(wscale), zero, axis=0))
    y = y + relay.qnn.dequantize(bias, relay.const(np.float32(2.0) * wscale), zero)
    ops = _fq2i_equal(relay.qnn.quantize(y, s(16.0), zero), [d, wt, bias],
                      [rng.integers(-128, 128, (3, 6)).astype("int8"),
                       rng.integers(-128, 128, (4, 6)).astype("int8"),
                       rng.integers(-500, 500, (4,)).astype("int32")])
    assert "qnn.dense" in ops and "qnn.requantize" in ops

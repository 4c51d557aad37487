"""FlattenAtrousConv: space_to_batch_nd -> conv2d -> batch_to_space_nd becomes one dilated
convolution when the two compute the same thing (checked with NumPy-backed interpreter runs);
other chains stay; relay.build's pipeline runs it."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay


def _chain(x, w, block, paddings, crops, groups=1, channels=None):
    s2b = relay.nn.space_to_batch_nd(x, block_shape=block, paddings=paddings)
    conv = relay.nn.conv2d(s2b, w, kernel_size=(3, 3), data_layout="NHWC",
                           kernel_layout="HWIO", groups=groups, channels=channels)
    return relay.nn.batch_to_space_nd(conv, block_shape=block, crops=crops)


def _flatten(func):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(func))
    return mod, relay.transform.InferType()(relay.transform.FlattenAtrousConv()(mod))


def _same_values(mod_a, mod_b, *args):
    ev = relay.create_executor("debug")
    a = ev.evaluate(mod_a["main"])(*args).numpy()
    b = ev.evaluate(mod_b["main"])(*args).numpy()
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("block, paddings, crops, pad", [
    ((2, 2), ((2, 3), (2, 4)), ((0, 1), (0, 2)), (2, 2, 2, 2)),
    ((3, 2), ((3, 5), (2, 4)), ((0, 2), (0, 2)), (3, 2, 3, 2)),
])
def test_chain_becomes_a_dilated_conv(block, paddings, crops, pad):
    x = relay.var("x", shape=(1, 7, 6, 3))
    w = relay.var("w", shape=(3, 3, 3, 5))
    mod, out = _flatten(relay.Function([x, w], _chain(x, w, block, paddings, crops)))
    want = relay.Function([x, w], relay.nn.conv2d(
        x, w, padding=pad, dilation=block, kernel_size=(3, 3), data_layout="NHWC",
        kernel_layout="HWIO"))
    want = relay.transform.InferType()(relay.IRModule.from_expr(want))
    assert relay.analysis.structural_equal(out["main"], want["main"])
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((1, 7, 6, 3)).astype("float32")
    ws = rng.standard_normal((3, 3, 3, 5)).astype("float32")
    _same_values(mod, out, xs, ws)
    # and the dilated convolution is NumPy's: out[i, j] = sum x[i - p + 2a, j - p + 2b] w[a, b]
    xp = np.pad(xs, ((0, 0), (pad[0], pad[2]), (pad[1], pad[3]), (0, 0)))
    ref = np.zeros((1, 7, 6, 5), "float32")
    for a in range(3):
        for b in range(3):
            win = xp[:, a * block[0]:a * block[0] + 7, b * block[1]:b * block[1] + 6, :]
            ref += np.einsum("nhwc,co->nhwo", win, ws[a, b])
    got = relay.create_executor("debug").evaluate(out["main"])(xs, ws).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_chains_that_would_change_the_values_are_left_alone():
    x = relay.var("x", shape=(1, 6, 6, 2))
    w = relay.var("w", shape=(3, 3, 2, 2))
    # the first output would read one row and column further than the SAME dilated conv does
    shifted = relay.Function([x, w], _chain(x, w, (2, 2), ((3, 3), (3, 3)), ((0, 2), (0, 2))))
    mod, out = _flatten(shifted)
    assert relay.analysis.structural_equal(out["main"], mod["main"])
    # a strided conv in the middle is not an atrous convolution either
    s2b = relay.nn.space_to_batch_nd(x, block_shape=(2, 2), paddings=((2, 2), (2, 2)))
    conv = relay.nn.conv2d(s2b, w, strides=(2, 2), kernel_size=(3, 3), data_layout="NHWC",
                           kernel_layout="HWIO")
    f = relay.Function([x, w], relay.nn.batch_to_space_nd(conv, block_shape=(2, 2),
                                                         crops=((0, 0), (0, 0))))
    mod, out = _flatten(f)
    assert relay.analysis.structural_equal(out["main"], mod["main"])


def test_build_pipeline_flattens_the_chain():
    x = relay.var("x", shape=(1, 5, 5, 4))
    w = relay.const(np.random.default_rng(1).standard_normal((3, 3, 1, 4)).astype("float32"))
    f = relay.Function([x], _chain(x, w, (2, 2), ((2, 3), (2, 3)), ((0, 1), (0, 1)),
                                   groups=4, channels=4))
    lib = relay.build(relay.IRModule.from_expr(f), target="llvm")
    graph = lib.get_graph_json()
    assert "space_to_batch_nd" not in graph and "batch_to_space_nd" not in graph
    xs = np.random.default_rng(2).standard_normal((1, 5, 5, 4)).astype("float32")
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", xs)
    m.run()
    ref = relay.create_executor("debug").evaluate(f)(xs).numpy()
    np.testing.assert_allclose(m.get_output(0).numpy(), ref, rtol=1e-4, atol=1e-4)

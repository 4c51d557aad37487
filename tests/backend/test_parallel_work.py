"""How CPU schedules split work between threads. The generic schedule runs a loop nest in
parallel only when it has enough work: tiny kernels (the per-channel chains of a BatchNorm
gradient) stay on the calling thread, large ones get a parallel loop of useful extent. The
NCHW convolution template puts the batch inside the output-channel blocks when the weights are
large and the images small, so each thread reads its share of the weights. Values are checked
against NumPy."""

import re

import numpy as np
import pytest
import tvm
from backend_util import rand

import relay_tvm as relay
from relay_tvm.backend.schedule import generic


def _lib(func):
    return relay.build(relay.IRModule.from_expr(func), target="llvm")


def _parallel_extents(lib):
    """kernel name -> extents of its ``T.parallel`` loops"""
    return {k: [int(e) for e in re.findall(r"T\.parallel\((\d+)\)", v.prim_func.script())]
            for k, v in lib.kernels.items()}


def _run(lib, **inputs):
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    for k, v in inputs.items():
        gm.set_input(k, v)
    gm.run()
    return gm.get_output(0).numpy()


@pytest.mark.parametrize("shape", [(64,), (8, 64, 1, 1), (4, 16, 8, 8)])
def test_tiny_elementwise_kernel_is_serial(shape):
    assert int(np.prod(shape)) < generic.MIN_PARALLEL_WORK
    x, y = relay.var("x", shape=shape), relay.var("y", shape=shape)
    lib = _lib(relay.Function([x, y], relay.sqrt(relay.abs(x) + y * y)))
    assert all(ext == [] for ext in _parallel_extents(lib).values()), _parallel_extents(lib)
    a, b = rand(shape), rand(shape, seed=1)
    np.testing.assert_allclose(_run(lib, x=a, y=b), np.sqrt(np.abs(a) + b * b), rtol=1e-6)


def test_large_elementwise_kernel_is_parallel():
    shape = (8, 64, 16, 16)
    assert int(np.prod(shape)) >= generic.MIN_PARALLEL_WORK
    x = relay.var("x", shape=shape)
    lib = _lib(relay.Function([x], relay.nn.relu(x) * x))
    (ext,) = _parallel_extents(lib).values()
    assert len(ext) == 1 and ext[0] >= 64, ext
    a = rand(shape)
    np.testing.assert_allclose(_run(lib, x=a), np.maximum(a, 0) * a, rtol=1e-6)


def test_tiny_reduction_is_serial_and_large_one_parallel():
    # collapse_sum_to over the batch and spatial axes (a BatchNorm parameter gradient)
    for shape, parallel in (((2, 16, 4, 4), False), ((8, 64, 16, 16), True)):
        x = relay.var("x", shape=shape)
        f = relay.Function([x], relay.sum(x * x, axis=(0, 2, 3), keepdims=True))
        lib = _lib(f)
        exts = [e for v in _parallel_extents(lib).values() for e in v]
        assert bool(exts) == parallel, (shape, exts)
        a = rand(shape)
        np.testing.assert_allclose(_run(lib, x=a), (a.astype("float64") ** 2).sum(
            axis=(0, 2, 3), keepdims=True), rtol=1e-5)


def _conv_ref(x, w, pad):
    n, c, h, ww = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    out = np.zeros((n, o, oh, ow))
    for p in range(kh):
        for q in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, p:p + oh, q:q + ow], w[:, :, p, q])
    return out


@pytest.mark.parametrize("n, c, o, hw, channels_outer", [
    (4, 128, 128, 2, True),    # 576 KiB of weights, 2 KiB per padded image
    (3, 64, 96, 1, True),      # 216 KiB of weights, under half an L2: batch outer
    (4, 16, 32, 12, False),    # small weights: batch outer
    (1, 128, 128, 2, False),   # batch 1: nothing to reorder
])
def test_conv2d_parallel_loop_order(n, c, o, hw, channels_outer):
    from relay_tvm.backend.schedule.cpu_model import cpu_features
    from relay_tvm.backend.target import make_target

    wbytes = o * c * 9 * 4
    expect = channels_outer and wbytes > cpu_features(make_target("llvm")).l2_bytes // 2
    x, w = relay.var("x", shape=(n, c, hw, hw)), relay.var("w", shape=(o, c, 3, 3))
    lib = _lib(relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))))
    (conv,) = [v for v in lib.kernels.values() if v.anchor == "nn.conv2d"]
    assert conv.schedule_rule == "conv2d"
    (name,) = [nm for nm, _ in re.findall(r"for (\w+) in T\.parallel\((\d+)\)",
                                          conv.prim_func.script()) if nm.startswith(("nn", "ff"))]
    if n > 1:
        assert name.startswith("ff" if expect else "nn"), name
    a, b = rand((n, c, hw, hw)), rand((o, c, 3, 3), seed=4)
    np.testing.assert_allclose(_run(lib, x=a, w=b), np.maximum(_conv_ref(a, b, 1), 0),
                               rtol=1e-4, atol=1e-4)

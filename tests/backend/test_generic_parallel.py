"""The generic CPU schedule runs a loop nest in parallel only when it has enough work: tiny
kernels (the per-channel chains of a BatchNorm gradient) stay on the calling thread, large
ones get a parallel loop of useful extent. Values are checked against NumPy."""

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

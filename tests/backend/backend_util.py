"""Helpers for backend tests: run a function with the debug and graph executors."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay


def as_numpy(res):
    if isinstance(res, (list, tuple)):
        return tuple(as_numpy(r) for r in res)
    return res.numpy()


def run_both(func, args, opt_level=2, params=None):
    """``(debug result, graph result)`` as NumPy (tuples nested as the result type)."""
    mod = relay.IRModule.from_expr(func)
    ref = relay.create_executor("debug", mod, params=params).evaluate()(*args)
    with relay.transform.PassContext(opt_level=opt_level):
        got = relay.create_executor("graph", mod, target="llvm", params=params).evaluate()(*args)
    return as_numpy(ref), as_numpy(got)


def assert_same(ref, got, rtol=1e-5, atol=1e-5):
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for r, g in zip(ref, got):
            assert_same(r, g, rtol, atol)
        return
    assert ref.shape == got.shape, (ref.shape, got.shape)
    assert ref.dtype == got.dtype, (ref.dtype, got.dtype)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


def rand(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-5, 6, shape).astype(dtype)

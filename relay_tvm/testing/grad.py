"""Numerical gradient checking of whole functions (tvm.relay.testing.check_grad)."""

from __future__ import annotations

import numpy as np


def _leaves(value) -> list:
    """Every tensor in a (nested) tuple result, as float64 NumPy arrays."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(reversed(v))
        else:
            out.append(np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype="float64"))
    return out


def _randn(t, scale, mean, rng):
    shape = tuple(int(d) for d in t.shape)
    return (mean + scale * rng.standard_normal(shape)).astype(t.dtype)


def check_grad(func, inputs=None, test_inputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, scale=None,
               mean=0, mode="higher_order", target_devices=None, executor_kind="debug",
               seed=0):
    """Check ``transform.gradient(func, mode=mode)`` against central finite differences.

    The objective is the sum of every element of ``func``'s result (of every tensor, for a tuple
    result), which is what ``gradient`` differentiates. For each tested input ``x`` and each
    element ``i``: ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)`` must equal ``dx[i]`` within
    ``atol + rtol * |numerical|`` (``np.testing.assert_allclose``).

    Args:
        func: a :class:`relay_tvm.Function` whose parameters are tensors.
        inputs: NumPy arrays, one per parameter; default: normal samples of ``scale`` (default
            ``10 * eps``) around ``mean`` in each parameter's dtype (seeded by ``seed``).
        test_inputs: the inputs (identical objects from ``inputs``) whose gradients are
            checked; default all floating-point inputs.
        eps, atol, rtol: step and tolerances. Use float64 inputs for tight tolerances.
        mode: the ``gradient`` mode, ``"higher_order"`` or ``"first_order"``.
        target_devices: ``[(target, device)]`` for compiled executors; default LLVM on CPU.
        executor_kind: ``"debug"`` (reference interpreter), ``"graph"`` (first-order programs)
            or ``"vm"``.

    Raises:
        AssertionError: a gradient differs from the finite differences (naming the input).
    """
    import tvm

    from ..runtime.executor import create_executor
    from ..transform.gradient import gradient
    from . import run_infer_type

    fwd_func = run_infer_type(func)
    bwd_func = run_infer_type(gradient(fwd_func, mode=mode))
    rng = np.random.default_rng(seed)
    if scale is None:
        scale = 10 * eps
    if inputs is None:
        inputs = [_randn(p.checked_type, scale, mean, rng) for p in fwd_func.params]
    inputs = [np.asarray(x) for x in inputs]
    if test_inputs is None:
        tested = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
    else:
        tested = [next(i for i, x in enumerate(inputs) if x is t) for t in test_inputs]
    assert tested, "check_grad: no input to test"
    if executor_kind == "debug":
        target_devices = [("llvm", None)]
    elif target_devices is None:
        target_devices = [("llvm", tvm.cpu(0))]
    for target, dev in target_devices:
        bwd = create_executor(executor_kind, device=dev, target=target).evaluate(bwd_func)
        fwd = create_executor(executor_kind, device=dev, target=target).evaluate(fwd_func)
        forward, grads = bwd(*inputs)
        expect_fwd = _leaves(fwd(*inputs))
        for a, b in zip(_leaves(forward), expect_fwd):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6,
                                       err_msg="gradient's forward result differs from func")
        grads = list(grads)
        for i in tested:
            x = inputs[i].copy()
            num = np.zeros(x.shape, dtype="float64")
            args = list(inputs)
            args[i] = x
            for pos in np.ndindex(*x.shape):
                orig = x[pos]
                x[pos] = orig + eps
                plus = sum(float(np.sum(v)) for v in _leaves(fwd(*args)))
                x[pos] = orig - eps
                minus = sum(float(np.sum(v)) for v in _leaves(fwd(*args)))
                x[pos] = orig
                num[pos] = (plus - minus) / (2 * eps)
            got = _leaves(grads[i])[0]
            np.testing.assert_allclose(got, num, atol=atol, rtol=rtol,
                                       err_msg=f"gradient of input {i} "
                                               f"(%{fwd_func.params[i].name_hint})")


__all__ = ["check_grad"]

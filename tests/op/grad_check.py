"""Numerical check of operator gradient rules (FPrimalGradient), through the interpreter."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.ir.expr import Call, Function, Tuple, TupleGetItem
from relay_tvm.ir.module import IRModule


def check_grad(make, inputs, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Compare ``op.gradient`` of the call ``make(*vars)`` with central differences.

    The scalar objective is ``sum(op(inputs) * w)`` for a random ``w``; the rule's gradients (run
    by the reference interpreter in float64) must match the finite differences of the operator's
    NumPy kernel for the arguments in ``wrt`` (default: every float argument).
    """
    rng = np.random.default_rng(0)
    params = [relay.var(f"x{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(inputs)]
    mod = relay.transform.InferType()(IRModule.from_expr(Function(params, make(*params))))
    func = mod["main"]
    call = func.body
    assert isinstance(call, Call), "make() must return one operator call"
    out_t = call.checked_type
    w = rng.uniform(-1, 1, out_t.concrete_shape).astype(out_t.dtype)
    g = relay.var("g", shape=w.shape, dtype=out_t.dtype)
    grads = call.op.gradient(call, g)
    tuple_arg = len(call.args) == 1 and isinstance(call.args[0], Tuple)
    if tuple_arg:  # one tuple argument (concatenate, stack): its gradient is a tuple
        grads = [TupleGetItem(grads[0], i) for i in range(len(inputs))]
    assert len(grads) == len(inputs)
    wrt = [i for i, a in enumerate(inputs) if a.dtype.kind == "f"] if wrt is None else wrt
    gfunc = Function([*func.params, g], Tuple([grads[i] for i in wrt]))
    got = relay.create_executor("debug", mod=IRModule.from_expr(gfunc)).evaluate()(*inputs, w)

    def objective(args):
        args = [tuple(args)] if tuple_arg else list(args)
        return float(np.sum(call.op.ref_impl(args, call.attrs, out_t) * w))

    for k, i in enumerate(wrt):
        x = inputs[i]
        num = np.zeros_like(x)
        for pos in np.ndindex(*x.shape):
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[i][pos] += eps
            minus[i][pos] -= eps
            num[pos] = (objective(plus) - objective(minus)) / (2 * eps)
        np.testing.assert_allclose(
            got[k].numpy() if hasattr(got[k], "numpy") else np.asarray(got[k]),
            num,
            rtol=rtol,
            atol=atol,
            err_msg=f"gradient of argument {i}",
        )

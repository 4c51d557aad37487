"""nn.batch_matmul with Any dimensions on the VM: batches, rows, columns and the reduction
known only at run time, a batch of 1 broadcast, transposes; checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay


def _run(xt, yt, xs, ys, ta, tb):
    x = relay.var("x", relay.TensorType(xt, "float32"))
    y = relay.var("y", relay.TensorType(yt, "float32"))
    f = relay.Function([x, y], relay.nn.batch_matmul(x, y, transpose_a=ta, transpose_b=tb))
    mod = relay.IRModule.from_expr(f)
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(xs, ys).numpy()


def _np(a, b, ta, tb):
    a = a.swapaxes(1, 2) if ta else a
    b = b.swapaxes(1, 2) if tb else b
    return a @ b


A = relay.Any


@pytest.mark.parametrize("ta, tb", [(False, True), (True, False), (False, False)])
@pytest.mark.parametrize("xt, yt, bx, by", [
    ((A(), 4, 6), (A(), 5, 6), 3, 3),        # batch only at run time
    ((A(), A(), A()), (3, 5, 6), 3, 3),     # everything of x
    ((A(), 4, 6), (A(), 5, 6), 1, 3),        # x's batch of 1 broadcasts
    ((2, 4, 6), (A(), A(), A()), 2, 1),     # y's batch of 1 broadcasts
])
def test_dynamic_batch_matmul_matches_numpy(xt, yt, bx, by, ta, tb):
    rng = np.random.default_rng(0)

    def shape(t, batch, rows, cols, trans):
        r, c = (cols, rows) if trans else (rows, cols)
        return (batch, r, c)

    xs = rng.standard_normal(shape(xt, bx, 4, 6, ta)).astype("float32")
    ys = rng.standard_normal(shape(yt, by, 6, 5, False) if not tb else (by, 5, 6)).astype(
        "float32")
    if not tb:
        ys = rng.standard_normal((by, 6, 5)).astype("float32")
    xt = tuple(xt[i] if not isinstance(xt[i], int) else xs.shape[i] for i in range(3))
    yt = tuple(yt[i] if not isinstance(yt[i], int) else ys.shape[i] for i in range(3))
    got = _run(xt, yt, xs, ys, ta, tb)
    np.testing.assert_allclose(got, _np(xs, ys, ta, tb), rtol=1e-5, atol=1e-5)

"""Test helpers for the nn.* and image.* operators.

``check_op`` runs one operator call through the reference interpreter and through a compiled path
and compares both with an independent NumPy result. The compiled path is
``relay.create_executor("graph", target="llvm")`` when the backend provides it, and otherwise the
operator's TE compute built directly (placeholders from the parameter types, ``op.compute``,
``te.create_prim_func``, ``tvm.compile``), so the TE computes are tested either way.
"""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.errors import RelayError
from relay_tvm.ir.expr import Call, Constant, Tuple, TupleGetItem
from relay_tvm.ir.types import TupleType

_TARGET = None


def llvm_target():
    global _TARGET
    if _TARGET is None:
        import tvm

        _TARGET = {
            "kind": "llvm",
            "mcpu": tvm.target.codegen.llvm_get_system_cpu(),
            "mtriple": tvm.target.codegen.llvm_get_system_triple(),
        }
    return _TARGET


def make_mod(make, inputs):
    """``make(*vars)`` over one variable per entry of ``inputs`` (name -> array or
    (shape, dtype)); returns the IRModule and the argument arrays."""
    vs, arrays = [], []
    for name, a in inputs.items():
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], str):
            vs.append(relay.var(name, shape=a[0], dtype=a[1]))
            arrays.append(None)
        else:
            a = np.asarray(a)
            vs.append(relay.var(name, shape=a.shape, dtype=str(a.dtype)))
            arrays.append(a)
    body = make(*vs)
    return relay.IRModule.from_expr(relay.Function(vs, body)), arrays


def infer(make, inputs):
    """The checked type of ``make(*vars)``."""
    mod, _ = make_mod(make, inputs)
    mod = relay.transform.InferType()(mod)
    return mod["main"].body.checked_type


def _to_numpy(v):
    if isinstance(v, (tuple, list)):
        return tuple(_to_numpy(x) for x in v)
    if hasattr(v, "numpy"):
        return v.numpy()
    return np.asarray(v)


def run_debug(mod, arrays):
    return _to_numpy(relay.create_executor("debug", mod=mod).evaluate()(*arrays))


def _graph_executor_available() -> bool:
    try:
        import relay_tvm.runtime.compiled as ex  # noqa: F401

        return hasattr(ex, "make_compiled_executor")
    except ImportError:
        return False


def run_te(mod, arrays):
    """Build the single operator call of ``mod["main"]`` from its TE compute and run it.

    The body must be a call of an operator on the parameters (or a tuple of them), or a
    ``TupleGetItem`` of such a call.
    """
    import tvm
    from tvm import te

    mod = relay.transform.InferType()(mod)
    func = mod["main"]
    body = func.body
    index = None
    if isinstance(body, TupleGetItem):
        index = body.index
        body = body.tuple_value
    assert isinstance(body, Call), f"run_te needs a single operator call, got {type(body)}"
    holders = {}
    for i, p in enumerate(func.params):
        t = p.checked_type
        holders[p] = te.placeholder([int(d) for d in t.shape], t.dtype, name=f"p{i}")
    placeholders = [holders[p] for p in func.params]
    arrays = list(arrays)
    flat = []
    for a in body.args:
        if isinstance(a, Tuple):
            flat.extend(holders[f] for f in a.fields)
        elif isinstance(a, Constant):  # a constant argument becomes one more input
            data = np.asarray(a.data)
            ph = te.placeholder(list(data.shape), str(data.dtype), name=f"c{len(arrays)}")
            placeholders.append(ph)
            arrays.append(data)
            flat.append(ph)
        else:
            flat.append(holders[a])
    out = body.op.compute(body.attrs, flat, body.checked_type)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    prim = te.create_prim_func(placeholders + outs)
    ex = tvm.compile(prim, target=llvm_target())
    dev = tvm.cpu(0)
    out_types = body.checked_type.fields if isinstance(body.checked_type, TupleType) else [body.checked_type]
    bufs = [tvm.runtime.tensor(np.array(a, order="C"), dev) for a in arrays]
    obufs = [
        tvm.runtime.tensor(np.zeros([int(d) for d in t.shape], dtype=t.dtype), dev)
        for t in out_types
    ]
    ex(*bufs, *obufs)
    res = [b.numpy() for b in obufs]
    if index is not None:
        return res[index]
    return tuple(res) if isinstance(body.checked_type, TupleType) else res[0]


def run_compiled(mod, arrays):
    if _graph_executor_available():
        try:
            ex = relay.create_executor("graph", mod=mod, target="llvm")
        except RelayError as e:
            if "not available" not in str(e):
                raise
        else:
            return _to_numpy(ex.evaluate()(*arrays))
    return run_te(mod, arrays)


def _assert_close(got, want, rtol, atol, what):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{what}: {got!r}"
        for g, w in zip(got, want):
            _assert_close(g, w, rtol, atol, what)
        return
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=rtol, atol=atol,
                               err_msg=what)


def check_op(make, inputs, want, rtol=1e-5, atol=1e-5, compiled=True):
    """Run ``make(*vars)`` on ``inputs`` (name -> array) through the interpreter and (when
    ``compiled``) the compiled path; compare each with ``want`` (an array or a tuple)."""
    mod, arrays = make_mod(make, inputs)
    _assert_close(run_debug(mod, arrays), want, rtol, atol, "interpreter")
    if compiled:
        mod, arrays = make_mod(make, inputs)
        _assert_close(run_compiled(mod, arrays), want, rtol, atol, "compiled")


def rand(shape, dtype="float32", seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed + sum(shape) * 7 + len(shape))
    if dtype.startswith("int"):
        return rng.integers(-5, 6, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def keys_cubic(s, a):
    """Keys' cubic convolution kernel of parameter ``a`` at offset ``s`` (the weight of a tap
    ``s`` pixels from the sample point; ``a`` is -0.5 in tvm.relay 0.19's resize / upsampling,
    -0.75 in OpenCV's)."""
    s = abs(s)
    if s <= 1:
        return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
    if s < 2:
        return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a
    return 0.0

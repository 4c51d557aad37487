"""Shared checks for operator tests: run one Relay function through the reference interpreter
and the compiled path and compare both with an expected NumPy result.

``check_op(expr_or_func, inputs, expected, rtol, atol)`` is the one entry point. The compiled
path is ``relay.create_executor("graph", target="llvm")`` when the backend provides it; until
then it lowers the function's operators straight through their TE computes (``op.compute``),
builds one PrimFunc with ``te.create_prim_func`` and runs it with ``tvm.compile``.
"""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm.analysis.free import free_vars
from relay_tvm.errors import RelayError
from relay_tvm.ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var
from relay_tvm.ir.module import IRModule
from relay_tvm.op.registry import Op

_TARGET = None


def _target():
    global _TARGET
    if _TARGET is None:
        import tvm

        _TARGET = {
            "kind": "llvm",
            "mcpu": tvm.target.codegen.llvm_get_system_cpu(),
            "mtriple": tvm.target.codegen.llvm_get_system_triple(),
        }
    return _TARGET


def as_function(expr_or_func) -> Function:
    """A function: the given one, or the expression closed over its free variables (in order of
    first occurrence)."""
    if isinstance(expr_or_func, relay.TupleWrapper):
        expr_or_func = expr_or_func.astuple()
    if isinstance(expr_or_func, Function):
        return expr_or_func
    return Function(free_vars(expr_or_func), expr_or_func)


def infer(expr_or_func):
    """The inferred type of an expression (closed over its free variables) or a function's
    result type."""
    mod = relay.transform.InferType()(IRModule.from_expr(as_function(expr_or_func)))
    return mod["main"].checked_type.ret_type


def run_interpreter(func, inputs):
    mod = IRModule.from_expr(func)
    return relay.create_executor("debug", mod=mod).evaluate()(*inputs)


def _graph_executor_available() -> bool:
    try:
        import relay_tvm.runtime.compiled  # noqa: F401
    except ImportError:
        return False
    return True


def run_compiled(func, inputs):
    """Run ``func`` compiled for LLVM: through the graph executor if there is one, else by
    lowering its operators' TE computes into one PrimFunc."""
    if _graph_executor_available():
        mod = IRModule.from_expr(func)
        res = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(*inputs)
        return _to_numpy(res)
    return run_te(func, inputs)


def _to_numpy(res):
    if isinstance(res, (list, tuple)):
        return tuple(_to_numpy(r) for r in res)
    if hasattr(res, "numpy"):
        return res.numpy()
    return np.asarray(res)


def run_te(func, inputs):
    """Lower ``func`` (a dataflow function of operator calls, tuples and constants) to one
    PrimFunc through each operator's ``compute`` and run it."""
    import tvm
    from tvm import te

    mod = relay.transform.InferType()(IRModule.from_expr(func))
    func = mod["main"]
    env = {}
    args = []
    values = []
    for p, x in zip(func.params, inputs):
        t = p.checked_type
        ph = te.placeholder([int(d) for d in t.concrete_shape], t.dtype, name=p.name_hint)
        env[p] = ph
        args.append(ph)
        values.append(np.asarray(x, dtype=t.dtype))

    # post-order over the (small) body
    stack = [(func.body, False)]
    while stack:
        e, done = stack.pop()
        if e in env:
            continue
        if isinstance(e, Var):
            raise RelayError(f"free variable {e.name_hint}")
        if isinstance(e, Constant):
            arr = e.data.numpy() if hasattr(e.data, "numpy") else np.asarray(e.data)
            ph = te.placeholder(list(arr.shape), str(arr.dtype), name=f"const{len(args)}")
            env[e] = ph
            args.append(ph)
            values.append(arr)
            continue
        children = (
            list(e.args)
            if isinstance(e, Call)
            else list(e.fields)
            if isinstance(e, Tuple)
            else [e.tuple_value]
            if isinstance(e, TupleGetItem)
            else None
        )
        if children is None:
            raise RelayError(f"run_te cannot lower {type(e).__name__}")
        if not done:
            stack.append((e, True))
            stack.extend((c, False) for c in children)
            continue
        if isinstance(e, Tuple):
            env[e] = [env[c] for c in e.fields]
        elif isinstance(e, TupleGetItem):
            env[e] = env[e.tuple_value][e.index]
        else:
            assert isinstance(e.op, Op), "run_te lowers operator calls only"
            flat = []
            for a in e.args:
                v = env[a]
                flat.extend(v if isinstance(v, list) else [v])
            out = e.op.compute(e.attrs, flat, e.checked_type)
            env[e] = list(out) if isinstance(out, (list, tuple)) else out
    result = env[func.body]
    outs = result if isinstance(result, list) else [result]
    prim = te.create_prim_func(args + outs)
    ex = tvm.compile(prim, target=_target())
    dev = tvm.cpu(0)
    targs = [tvm.runtime.tensor(v, dev) for v in values]
    touts = [
        tvm.runtime.tensor(np.zeros([int(d) for d in o.shape], dtype=o.dtype), dev) for o in outs
    ]
    ex(*targs, *touts)
    got = [o.numpy() for o in touts]
    return tuple(got) if isinstance(result, list) else got[0]


def assert_close(got, expected, rtol, atol, where):
    if isinstance(expected, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(expected), (
            f"{where}: expected a tuple of {len(expected)}, got {type(got).__name__}"
        )
        for i, (g, x) in enumerate(zip(got, expected)):
            assert_close(g, x, rtol, atol, f"{where} field {i}")
        return
    got = _to_numpy(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, expected {expected.dtype}"
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        np.testing.assert_allclose(
            got.astype("float64"),
            expected.astype("float64"),
            rtol=rtol,
            atol=atol,
            err_msg=where,
            equal_nan=True,
        )


def check_op(expr_or_func, inputs, expected, rtol=1e-5, atol=1e-6, compiled=True):
    """Check an operator program against ``expected`` through BOTH the interpreter and the
    compiled path.

    Args:
        expr_or_func: a ``Function``, or an expression whose free variables (in order of first
            occurrence) take ``inputs``.
        inputs: NumPy arrays, one per parameter.
        expected: the NumPy result (a tuple of arrays for a tuple result); the dtype must match.
        compiled: False to skip the compiled path (dynamic shapes the backend cannot build).
    """
    func = as_function(expr_or_func)
    assert_close(run_interpreter(func, inputs), expected, rtol, atol, "interpreter")
    if compiled:
        assert_close(run_compiled(func, inputs), expected, rtol, atol, "compiled")

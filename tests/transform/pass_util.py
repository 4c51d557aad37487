"""Helpers for pass tests: run a pass, compare structures, compare the interpreter's numbers."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.analysis import structural_equal


def run_opt_pass(expr, opt_pass, opt_level=3, config=None):
    """Run ``opt_pass`` (a pass or list of passes) on ``expr`` (a Function or module) under a
    PassContext and return the transformed ``main`` (or module when a module was given)."""
    mod = expr if isinstance(expr, relay.IRModule) else relay.IRModule.from_expr(expr)
    passes = opt_pass if isinstance(opt_pass, (list, tuple)) else [opt_pass]
    with transform.PassContext(opt_level=opt_level, config=config):
        mod = transform.InferType()(mod)
        for p in passes:
            mod = p(mod)
        mod = transform.InferType()(mod)
    if isinstance(expr, relay.IRModule):
        return mod
    return mod["main"]


def op_names(func) -> list:
    """The operator names of ``func``'s calls, in post order."""
    names = []
    relay.analysis.post_order_visit(
        func, lambda n: names.append(n.op.name)
        if isinstance(n, relay.Call) and isinstance(n.op, relay.op.Op) else None)
    return names


def infer(expr):
    mod = relay.IRModule.from_expr(expr)
    return transform.InferType()(mod)["main"]


def assert_equal_structure(actual, expected):
    """Alpha-equivalence of two (typed) programs with a readable failure."""
    if not isinstance(actual, relay.IRModule):
        expected = infer(expected)
    ok = structural_equal(actual, expected, map_free_vars=True)
    if not ok:
        try:
            msg = f"\nactual:\n{actual.astext()}\nexpected:\n{expected.astext()}"
        except Exception:  # the text printer may be missing: still fail
            msg = ""
        raise AssertionError("programs differ" + msg)


def random_inputs(func, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        t = p.checked_type
        shape = tuple(int(d) for d in t.shape)
        if t.dtype.startswith("float"):
            out.append(rng.uniform(-1, 1, size=shape).astype(t.dtype))
        elif t.dtype == "bool":
            out.append(rng.integers(0, 2, size=shape).astype(bool))
        else:
            out.append(rng.integers(-5, 6, size=shape).astype(t.dtype))
    return out


def evaluate(mod, args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def _flat(v):
    if isinstance(v, (tuple, list)):
        out = []
        for x in v:
            out.extend(_flat(x))
        return out
    return [np.asarray(v.numpy() if hasattr(v, "numpy") else v)]


def assert_same_result(mod_before, mod_after, seed=0, rtol=1e-5, atol=1e-5):
    """The interpreter's result on random inputs is the same before and after a pass."""
    if not isinstance(mod_before, relay.IRModule):
        mod_before = relay.IRModule.from_expr(mod_before)
    if not isinstance(mod_after, relay.IRModule):
        mod_after = relay.IRModule.from_expr(mod_after)
    mod_before = transform.InferType()(mod_before)
    args = random_inputs(mod_before["main"], seed)
    a = _flat(evaluate(mod_before, args))
    b = _flat(evaluate(mod_after, args))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol)


def prim(params, body, name):
    """A primitive function as FuseOps makes it (``name``: its expected kernel name)."""
    from relay_tvm.transform.fuse_ops import fused_function_name

    assert fused_function_name(body) == name
    return relay.Function(params, body, attrs={"Primitive": 1})

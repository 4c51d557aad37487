"""Differential running: one Relay module through the reference interpreter and the compiled
paths (graph executor at chosen opt levels, the VM), results compared with NumPy / IEEE-754 rules.

``run_all(mod, inputs)`` returns each path's result (or the exception it raised);
``compare(ref, got, dtype_tol)`` raises ``AssertionError`` naming the first difference. Values
are compared where both are finite with a dtype-aware tolerance; NaN must meet NaN and an
infinity the same infinity; integer and bool results must be exact; shapes and dtypes equal.
"""

from __future__ import annotations

import numpy as np

TOLERANCE = {"float16": (2e-2, 2e-2), "float32": (1e-4, 1e-4), "float64": (1e-9, 1e-9)}


def flatten(value) -> list:
    """The NumPy arrays of a (nested) result in order."""
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    if hasattr(value, "numpy"):
        return [np.asarray(value.numpy())]
    return [np.asarray(value)]


def run_path(mod, inputs, path: str, target="llvm"):
    """Evaluate ``mod["main"]`` on ``inputs`` along ``path``: ``"debug"`` (the interpreter),
    ``"graph0"`` .. ``"graph3"`` (graph executor at that opt level) or ``"vm"`` (VM at opt 3)."""
    import relay_tvm as relay

    if path == "debug":
        return flatten(relay.create_executor("debug", mod=mod).evaluate()(*inputs))
    if path.startswith("graph"):
        with relay.transform.PassContext(opt_level=int(path[5:])):
            ex = relay.create_executor("graph", mod=mod, target=target)
            return flatten(ex.evaluate()(*inputs))
    if path == "vm":
        with relay.transform.PassContext(opt_level=3):
            ex = relay.create_executor("vm", mod=mod, target=target)
            return flatten(ex.evaluate()(*inputs))
    raise ValueError(f"unknown path {path!r}")


def compare(ref: list, got: list, where: str = "") -> None:
    """Assert two flattened results agree: same count, shapes and dtypes; exact for integers and
    bools; NaN where NaN, the same infinities, finite values within the dtype's tolerance."""
    assert len(ref) == len(got), f"{where}: {len(got)} outputs, expected {len(ref)}"
    for i, (r, g) in enumerate(zip(ref, got)):
        at = f"{where} output {i}"
        assert r.shape == g.shape, f"{at}: shape {g.shape}, expected {r.shape}"
        assert r.dtype == g.dtype, f"{at}: dtype {g.dtype}, expected {r.dtype}"
        if r.dtype.kind != "f":
            np.testing.assert_array_equal(g, r, err_msg=at)
            continue
        rn, gn = np.isnan(r), np.isnan(g)
        diff = rn != gn
        assert not diff.any(), (
            f"{at}: NaN differs at {np.argwhere(diff)[:5].tolist()}: got {g[diff][:5]}, "
            f"expected {r[diff][:5]}"
        )
        ri, gi = np.isinf(r), np.isinf(g)
        bad = (ri | gi) & ~(r == g)
        assert not bad.any(), f"{at}: infinities differ: got {g[bad][:5]}, expected {r[bad][:5]}"
        fin = np.isfinite(r) & np.isfinite(g)
        rtol, atol = TOLERANCE.get(str(r.dtype), (1e-4, 1e-4))
        np.testing.assert_allclose(g[fin].astype("float64"), r[fin].astype("float64"),
                                   rtol=rtol, atol=atol, err_msg=at)


def run_all(mod, inputs, paths=("graph0", "graph3", "vm"), target="llvm") -> dict:
    """``{path: result or exception}`` with ``"debug"`` first (its exception propagates)."""
    out = {"debug": run_path(mod, inputs, "debug", target)}
    for p in paths:
        try:
            out[p] = run_path(mod, inputs, p, target)
        except Exception as e:  # noqa: BLE001 - a compiled path's failure is a finding
            out[p] = e
    return out


def check(mod, inputs, paths=("graph0", "graph3", "vm"), target="llvm") -> None:
    """Run ``mod`` on every path and assert each agrees with the interpreter; a compiled path's
    exception is re-raised with the path named (as an ``AssertionError`` from it)."""
    res = run_all(mod, inputs, paths, target)
    ref = res.pop("debug")
    for p, got in res.items():
        if isinstance(got, Exception):
            raise AssertionError(f"{p} raised {type(got).__name__}: {got}") from got
        compare(ref, got, p)

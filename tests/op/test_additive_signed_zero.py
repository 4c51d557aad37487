"""Signed zeros of additive identities in every executor (IEEE 754: ``-0.0 + 0.0`` is ``+0.0``).

Two places used to fold ``x + 0.0`` to ``x``: Relay's SimplifyExpr (opt level 0, so every build)
and TVM's TIR simplifier once the constant is inlined into a fused kernel (opt level 3). The
results are compared bit for bit (``np.signbit``) with NumPy's.
"""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay

_X = [-0.0, 0.0, -1.5, 2.0, np.inf, -np.inf]

# (name, relay expression of x, numpy of x)
_CASES = [
    ("x + 0.0", lambda x, c: relay.add(x, c(0.0)), lambda x: x + np.float32(0.0)),
    ("0.0 + x", lambda x, c: relay.add(c(0.0), x), lambda x: np.float32(0.0) + x),
    ("x - (-0.0)", lambda x, c: relay.subtract(x, c(-0.0)), lambda x: x - np.float32(-0.0)),
    ("x + (-0.0)", lambda x, c: relay.add(x, c(-0.0)), lambda x: x + np.float32(-0.0)),
    ("x - 0.0", lambda x, c: relay.subtract(x, c(0.0)), lambda x: x - np.float32(0.0)),
    ("0.0 - x", lambda x, c: relay.subtract(c(0.0), x), lambda x: np.float32(0.0) - x),
    ("-0.0 - x", lambda x, c: relay.subtract(c(-0.0), x), lambda x: np.float32(-0.0) - x),
    ("x * 1.0", lambda x, c: relay.multiply(x, c(1.0)), lambda x: x * np.float32(1.0)),
    ("x + zeros", lambda x, c: relay.add(x, relay.zeros((len(_X),), x.type_annotation.dtype)),
     lambda x: x + np.zeros_like(x)),
    ("exp(x) * 0 + x", lambda x, c: relay.add(relay.multiply(relay.exp(x), c(0.0)), x),
     lambda x: np.exp(x) * np.float32(0.0) + x),
]


def _run(func, xv, kind, opt_level):
    mod = relay.IRModule.from_expr(func)
    with relay.transform.PassContext(opt_level=opt_level):
        return relay.create_executor(kind, mod=mod, target="llvm").evaluate()(xv).numpy()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name,make,ref", _CASES, ids=[c[0] for c in _CASES])
def test_signed_zero_bits(name, make, ref, dtype):
    x = relay.var("x", shape=(len(_X),), dtype=dtype)
    func = relay.Function([x], make(x, lambda v: relay.const(v, dtype)))
    xv = np.array(_X, dtype)
    with np.errstate(invalid="ignore"):
        want = ref(xv.astype("float32")).astype(dtype)
    got = {"debug": _run(func, xv, "debug", 0)}
    for kind in ("graph", "vm"):
        for level in (0, 3):
            got[f"{kind} O{level}"] = _run(func, xv, kind, level)
    for where, g in got.items():
        np.testing.assert_array_equal(g, want, err_msg=f"{name} ({dtype}) in {where}")
        np.testing.assert_array_equal(np.signbit(g), np.signbit(want),
                                      err_msg=f"sign of {name} ({dtype}) in {where}")

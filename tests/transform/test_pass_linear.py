"""The optimizing pipeline does work linear in program size (issue 10, "Compile time").

No timings (they are noise on a shared machine): the work is counted deterministically, as the
number of Python function calls made (``sys.setprofile``) and the number of expressions type
inference looks at. A pass that re-walks the program per rewrite, re-runs inference over the
whole module per pass, or scans a list per node shows up as calls growing faster than the
program.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.ir.functor import post_order
from relay_tvm.typing import infer as infer_mod


def _chain(n, dtype="float32"):
    x = relay.var("x", shape=(4,), dtype=dtype)
    y = x
    for i in range(n):
        y = relay.add(y, relay.const(1.0, dtype)) if i % 2 else relay.nn.relu(y)
    return relay.IRModule.from_expr(relay.Function([x], y))


def _reset_caches():
    # the per-process caches make the first run cheaper or dearer than the next: start clean
    from relay_tvm.transform import _rewrite, fold_constant

    infer_mod._REL_CACHE.clear()
    _rewrite._CALLED_OPS.clear()
    fold_constant._FIXPOINTS.clear()


def _optimize(mod):
    with transform.PassContext(opt_level=3):
        return relay.optimize(mod)[0]


def _calls_of(fn, *args) -> int:
    """How many Python-level and builtin calls ``fn(*args)`` makes (deterministic)."""
    count = [0]

    def prof(frame, event, arg):
        if event == "call" or event == "c_call":
            count[0] += 1

    _reset_caches()
    old = sys.getprofile()
    sys.setprofile(prof)
    try:
        fn(*args)
    finally:
        sys.setprofile(old)
    return count[0]


def test_pipeline_work_is_linear_in_chain_length():
    _optimize(_chain(300))  # warm up: lazy imports and registries happen once
    n = 2000  # well above FuseOps' max_depth (256), so fused groups are full size
    c1, c2, c4 = (_calls_of(_optimize, _chain(k)) for k in (n, 2 * n, 4 * n))
    d1, d2 = c2 - c1, c4 - c2  # the work added by n and by 2n more operators
    # linear: d2 == 2 * d1 up to the constant per fused group; quadratic gives d2 == 4 * d1 + ..
    assert 1.8 <= d2 / d1 <= 2.2, (c1, c2, c4)
    # and a small constant: the whole of relay.optimize (9 passes, fusion, inference, the
    # executor partition) makes at most this many calls per operator of the chain (about 360
    # now; about 2,400 when every pass re-ran inference over the whole module)
    per_op = d2 / (2 * n)
    assert per_op < 500, per_op


def test_inference_looks_at_each_expression_a_bounded_number_of_times(monkeypatch):
    # Relay's passes re-run InferType over the whole module before each pass; here a typed,
    # unchanged function is not typed again, so the pipeline types each expression about twice
    # (once before the passes, once for the fused program), not once per pass
    seen = [0]
    orig = infer_mod.TypeInferencer.type_of

    def counting(self, e):
        seen[0] += 1
        return orig(self, e)

    monkeypatch.setattr(infer_mod.TypeInferencer, "type_of", counting)
    n = 5000
    mod = _chain(n)
    nodes = len(post_order(mod["main"]))  # n calls, n / 2 constants, x, main
    opt = _optimize(mod)
    assert seen[0] <= 3 * nodes, (seen[0], nodes)
    # the answer is still the chain's: relu(x) + 1, n / 2 times, from zeros
    ex = relay.create_executor("debug", mod=opt)
    out = ex.evaluate()(np.zeros(4, "float32"))
    np.testing.assert_array_equal(out.numpy(), np.full(4, n / 2, "float32"))


def test_reused_types_equal_a_full_inference():
    # the sealed (reused) types are what a fresh inference of the same program gives
    opt = _optimize(_chain(2000))
    nodes = [e for e in post_order(opt["main"]) if not isinstance(e, relay.op.Op)]
    before = [n.checked_type for n in nodes]
    assert all(n._type_sealed for n in nodes if type(n) is not relay.Var)
    _reset_caches()
    fresh = infer_mod.infer_module(opt, reuse=False)  # types every node again, from scratch
    assert fresh["main"] is opt["main"]
    assert [n.checked_type for n in nodes] == before


@pytest.mark.parametrize("n", [1000, 2000])
def test_relation_cache_runs_each_distinct_relation_once(n, monkeypatch):
    # a chain of one operator on one shape asks its type relation the same question n times
    _reset_caches()
    runs = {}
    for name in ("add", "nn.relu"):
        op = relay.op.get(name)
        rel = op.type_rel

        def counted(args, attrs, _rel=rel, _name=name):
            runs[_name] = runs.get(_name, 0) + 1
            return _rel(args, attrs)

        monkeypatch.setattr(op, "type_rel", counted)
    transform.InferType()(_chain(n))
    assert runs == {"add": 1, "nn.relu": 1}

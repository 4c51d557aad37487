"""Properties every pass keeps: idempotence where Relay's pass is idempotent, spans, and a
well-typed result (checked by relay.debug.check_each_pass)."""

import numpy as np
import pytest
from pass_util import run_opt_pass

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.analysis import structural_equal

RNG = np.random.default_rng(0)
SPAN = relay.Span("model.json", 7, 3)


def program():
    """conv + bias_add + batch_norm + relu + x*1 + transpose pair + a repeated subexpression,
    with a span on the exp call."""
    x = relay.var("x", shape=(1, 4, 5, 5))
    w = relay.const(RNG.normal(size=(4, 4, 3, 3)).astype("float32"))
    y = relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), relay.const(np.ones(4, "float32")))
    consts = [relay.const(RNG.uniform(0.5, 1.5, size=4).astype("float32")) for _ in range(4)]
    y = relay.nn.relu(relay.nn.batch_norm(y, *consts)[0])
    y = relay.multiply(y, relay.const(1.0))
    y = relay.transpose(relay.transpose(y, (0, 2, 3, 1)), (0, 3, 1, 2))
    e = relay.Call(relay.op.get("exp"), [x], None, (), SPAN)
    z = relay.add(relay.add(y, e), relay.add(y, e))
    return relay.Function([x], z)


IDEMPOTENT = [
    transform.SimplifyInference, transform.FoldConstant, transform.EliminateCommonSubexpr,
    transform.FoldScaleAxis, transform.SimplifyExpr, transform.CanonicalizeOps,
    transform.AlterOpLayout, transform.FuseOps, transform.ToANormalForm,
    transform.ToGraphNormalForm, transform.DeadCodeElimination, transform.FastMath,
    lambda: transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}),
]


@pytest.mark.parametrize("make", IDEMPOTENT)
def test_idempotent_and_well_typed(make):
    cfg = {"relay.debug.check_each_pass": True}
    once = run_opt_pass(program(), make(), opt_level=4, config=cfg)
    twice = run_opt_pass(once, make(), opt_level=4, config=cfg)
    assert structural_equal(once, twice)


@pytest.mark.parametrize("make", IDEMPOTENT)
def test_span_of_exp_is_kept(make):
    after = run_opt_pass(program(), make(), opt_level=4)
    spans = []

    def visit(n):
        if isinstance(n, relay.Call) and getattr(n.op, "name", "") in ("exp", "fast_exp"):
            spans.append(n.span)

    relay.analysis.post_order_visit(after, visit)
    # inside FuseOps' primitive functions too
    for fn in _prims(after):
        relay.analysis.post_order_visit(fn.body, visit)
    assert spans and all(s == SPAN for s in spans)


def _prims(f):
    out = []
    relay.analysis.post_order_visit(
        f, lambda n: out.append(n) if isinstance(n, relay.Function) and n.is_primitive else None)
    return out

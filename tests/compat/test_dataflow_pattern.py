"""The dataflow pattern language: matching, rewriting (checked numerically against the
interpreter) and partitioning."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.dataflow_pattern import (
    DFPatternCallback,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    is_constant,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    partition,
    rewrite,
    wildcard,
)
from relay_tvm.errors import RelayError


def _run(expr, inputs):
    fvs = relay.analysis.free_vars(expr)
    f = relay.Function(fvs, expr)
    mod = relay.IRModule.from_expr(f)
    return relay.create_executor("debug", mod=mod).evaluate()(
        *[inputs[v.name_hint] for v in fvs]).numpy()


def test_match_ops_vars_constants_and_alternatives():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    add = x + y
    assert is_op("add")(wildcard(), wildcard()).match(add)
    assert not is_op("subtract")(wildcard(), wildcard()).match(add)
    assert is_op("add")(is_var("x"), is_var()).match(add)
    assert not is_op("add")(is_var("z"), wildcard()).match(add)
    assert (is_op("subtract") | is_op("add"))(wildcard(), wildcard()).match(add)
    assert is_op("add")(wildcard(), is_constant()).match(x + relay.const(1.0))
    assert not is_op("add")(wildcard(), is_constant()).match(add)
    assert is_op("add")(None).match(add)  # any arguments


def test_same_pattern_twice_needs_same_expression():
    x, y = relay.var("x"), relay.var("y")
    w = wildcard()
    p = is_op("add")(w, w)
    assert p.match(x + x)
    assert not p.match(x + y)


def test_commutative_add_and_multiply_match_swapped():
    x = relay.var("x", shape=(2,))
    c = relay.const(np.ones(2, "float32"))
    assert is_op("add")(is_constant(), wildcard()).match(x + c)
    assert is_op("multiply")(is_constant(), wildcard()).match(x * c)
    assert not is_op("subtract")(is_constant(), wildcard()).match(x - c)


def test_attr_type_shape_dtype_tuple_patterns():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(x, w, padding=(1, 1), kernel_size=(3, 3))
    assert is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"padding": [1, 1, 1, 1]}) \
        .match(conv)
    assert not has_attr({"padding": [0, 0, 0, 0]}, is_op("nn.conv2d")(wildcard(), wildcard())) \
        .match(conv)
    assert has_shape((1, 4, 8, 8)).match(conv)
    assert not has_shape((1, 4, 6, 6)).match(conv)
    assert has_dtype("float32").match(conv) and not has_dtype("int8").match(conv)
    assert wildcard().has_attr({"TOpPattern": relay.op.OpPattern.ELEMWISE})(wildcard()) \
        .match(relay.nn.relu(x))
    t = relay.Tuple([x, w])
    assert is_tuple([is_var("x"), wildcard()]).match(t)
    assert is_tuple(None).match(t)
    assert is_tuple_get_item(is_tuple(None), 1).match(relay.TupleGetItem(t, 1))
    assert not is_tuple_get_item(is_tuple(None), 0).match(relay.TupleGetItem(t, 1))


def test_dominator_pattern_diamond():
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(2, 2, 1, 1))
    conv = relay.nn.conv2d(x, w)
    out = relay.nn.relu(relay.nn.relu(conv)) + relay.nn.leaky_relu(conv, alpha=0.1)
    elemwise = wildcard().has_attr({"TOpPattern": relay.op.OpPattern.ELEMWISE})(wildcard())
    diamond = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), elemwise,
                        is_op("add")(wildcard(), wildcard()))
    assert diamond.match(out)
    # a non-elementwise operator on one path breaks it
    out2 = relay.nn.relu(conv) + relay.nn.max_pool2d(conv)
    assert not diamond.match(out2)


class _FoldAddZero(DFPatternCallback):
    """x + 0 -> x"""

    def __init__(self):
        super().__init__()
        self.x = wildcard()
        self.zero = is_constant()
        self.pattern = is_op("add")(self.x, self.zero)

    def callback(self, pre, post, node_map):
        c = node_map[self.zero][0]
        if np.all(c.data.numpy() == 0):
            return node_map[self.x][0]
        return post


def test_rewrite_with_callback_keeps_numbers():
    x = relay.var("x", shape=(3,))
    zero = relay.const(np.zeros(3, "float32"))
    expr = relay.exp((x + zero) * relay.const(2.0)) + zero
    out = rewrite(_FoldAddZero(), expr)
    names = []
    relay.analysis.post_order_visit(
        out, lambda e: names.append(e.op.name) if isinstance(e, relay.Call) else None)
    assert names.count("add") == 0
    a = np.array([0.1, -0.4, 1.5], "float32")
    np.testing.assert_allclose(_run(out, {"x": a}), _run(expr, {"x": a}), rtol=1e-6)
    np.testing.assert_allclose(_run(out, {"x": a}), np.exp(a * 2), rtol=1e-6)


class _Grow(DFPatternCallback):
    """exp(a) -> negative(exp(a)): one more node every round, never settles."""

    def __init__(self):
        super().__init__()
        self.pattern = is_op("exp")(wildcard())

    def callback(self, pre, post, node_map):
        return relay.negative(post)


def test_rewrite_without_fixpoint_is_an_error():
    x, y = relay.var("x"), relay.var("y")
    with pytest.raises(RelayError, match="100 rounds"):
        rewrite(_Grow(), relay.exp(x))
    with pytest.raises(RelayError, match="no pattern"):
        rewrite(DFPatternCallback(), x + y)


class _ReluToSigmoid(DFPatternCallback):
    def __init__(self, result=None):
        super().__init__()
        self.pattern = is_op("nn.relu")(wildcard())
        self.result = result

    def callback(self, pre, post, node_map):
        return relay.sigmoid(post.args[0]) if self.result is None else self.result


def test_rewrite_partition_match_take_an_expression():
    # 0.19 rejected a non-Expr argument; neither a module nor a number passes through unchanged
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    pat = is_op("nn.relu")(wildcard())
    hint = 'got IRModule (it takes an expression, not a module: pass mod["main"]'
    for call, where in [(lambda a: rewrite(_ReluToSigmoid(), a), "rewrite: expr"),
                        (lambda a: partition(pat, a), "partition: expr"),
                        (lambda a: pat.partition(a), "partition: expr"),
                        (lambda a: pat.match(a), "match: expr")]:
        with pytest.raises(RelayError, match=f"^{where}: expected a relay.Expr, got int 5$"):
            call(5)
        with pytest.raises(RelayError) as info:
            call(mod)
        assert str(info.value).startswith(f"{where}: expected a relay.Expr, {hint}")
    with pytest.raises(RelayError, match="^partition: pattern: expected a DFPattern"):
        partition(relay.nn.relu(x), relay.nn.relu(x))
    # rewriting mod["main"] works
    out = rewrite(_ReluToSigmoid(), mod["main"])
    assert isinstance(out, relay.Function) and "sigmoid" in out.astext()


def test_rewrite_checks_the_callback_result():
    x = relay.var("x", shape=(2,))
    msg = ("rewrite: _ReluToSigmoid.callback's result: expected a relay.Expr (or None: keep "
           "the match), got int 3")
    for expr in [relay.nn.relu(x), relay.exp(relay.nn.relu(x))]:  # at the root and nested
        with pytest.raises(RelayError) as info:
            rewrite(_ReluToSigmoid(result=3), expr)
        assert str(info.value) == msg


def test_partition_conv_bias_relu():
    x = relay.var("x", shape=(1, 3, 6, 6))
    w = relay.var("w", shape=(4, 3, 3, 3))
    b = relay.var("b", shape=(4,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b))
    out = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, w, padding=(1, 1)), b))
    # (structure only: the second conv reuses the 3-channel w)
    pat = is_op("nn.relu")(is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()),
                                                 wildcard()))
    part = partition(pat, out, attrs={"Composite": "conv_bias_relu"})
    calls = []
    relay.analysis.post_order_visit(
        part, lambda e: calls.append(e) if isinstance(e, relay.Call) and
        isinstance(e.op, relay.Function) else None)
    assert len(calls) == 2
    for c in calls:
        attrs = dict(c.op.attrs.items())
        assert attrs["PartitionedFromPattern"] == "nn.conv2d_nn.bias_add_nn.relu_"
        assert attrs["Composite"] == "conv_bias_relu"
        assert [p.name_hint for p in c.op.params][0].startswith("FunctionVar_")
        assert len(c.args) == 3
    rng = np.random.default_rng(0)
    vals = {"x": rng.standard_normal((1, 3, 6, 6)).astype("float32"),
            "w": rng.standard_normal((4, 3, 3, 3)).astype("float32"),
            "b": rng.standard_normal(4).astype("float32"),
            "w2": rng.standard_normal((4, 4, 3, 3)).astype("float32")}
    w2 = relay.var("w2", shape=(4, 4, 3, 3))
    out = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, w2, padding=(1, 1)), b))
    part = partition(pat, out)
    np.testing.assert_allclose(_run(part, vals), _run(out, vals), rtol=1e-5, atol=1e-5)


def test_partition_skips_matches_used_outside_and_honours_check():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    inner = x + y
    out = relay.Tuple([relay.exp(inner), inner])  # add is used outside exp(add)
    pat = is_op("exp")(is_op("add")(wildcard(), wildcard()))
    assert partition(pat, out) is out or relay.analysis.structural_equal(partition(pat, out), out)
    e = relay.exp(x + y)
    assert relay.analysis.structural_equal(partition(pat, e, check=lambda pre: False), e)
    assert isinstance(partition(pat, e).op, relay.Function)


def test_merge_composite_marks_functions_and_keeps_numbers():
    x = relay.var("x", shape=(2, 3))
    w = relay.var("w", shape=(4, 3))
    b = relay.var("b", shape=(4,))
    out = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b))
    table = [("dense_bias_relu", is_op("nn.relu")(is_op("nn.bias_add")(
        is_op("nn.dense")(wildcard(), wildcard()), wildcard()))),
        ("dense", is_op("nn.dense")(wildcard(), wildcard()))]
    mod = relay.IRModule.from_expr(relay.Function([x, w, b], out))
    merged = relay.transform.MergeComposite(table)(mod)
    call = merged["main"].body
    attrs = dict(call.op.attrs.items())
    assert attrs["Composite"] == "dense_bias_relu"
    assert attrs["PartitionedFromPattern"] == "nn.dense_nn.bias_add_nn.relu_"
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(s).astype("float32") for s in ((2, 3), (4, 3), (4,))]
    run = relay.create_executor("debug", mod=merged).evaluate()(*args).numpy()
    np.testing.assert_allclose(run, np.maximum(args[0] @ args[1].T + args[2], 0), rtol=1e-5)
    with pytest.raises(RelayError, match="pattern table entry"):
        relay.transform.MergeComposite([("only_name",)])(mod)

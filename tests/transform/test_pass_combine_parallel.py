"""CombineParallelConv2D / CombineParallelDense: structure and semantics."""

import numpy as np
from pass_util import assert_equal_structure, assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform

RNG = np.random.default_rng(0)


def test_combine_three_convs():
    ws = [RNG.normal(size=(o, 4, 3, 3)).astype("float32") for o in (2, 3, 5)]

    def before():
        x = relay.var("x", shape=(1, 4, 6, 6))
        ys = [relay.nn.conv2d(x, relay.const(w), padding=(1, 1)) for w in ws]
        return relay.Function([x], relay.Tuple([relay.nn.relu(y) for y in ys]))

    def expected():
        x = relay.var("x", shape=(1, 4, 6, 6))
        w = relay.concatenate([relay.const(w) for w in ws], axis=0)
        c = relay.nn.conv2d(x, w, padding=(1, 1), channels=10)
        s = relay.split(c, (2, 5), axis=1).astuple()
        return relay.Function([x], relay.Tuple([relay.nn.relu(relay.TupleGetItem(s, i))
                                                for i in range(3)]))

    after = run_opt_pass(before(), transform.CombineParallelConv2D(), opt_level=4)
    assert_equal_structure(after, expected())
    assert_same_result(before(), after, atol=1e-4)


def test_two_branches_are_left_alone_and_attrs_must_match():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.const(RNG.normal(size=(2, 4, 3, 3)).astype("float32"))
    f = relay.Function([x], relay.Tuple([relay.nn.conv2d(x, w), relay.nn.conv2d(x, w)]))
    assert_equal_structure(run_opt_pass(f, transform.CombineParallelConv2D()), f)
    g = relay.Function([x], relay.Tuple([relay.nn.conv2d(x, w, padding=(p, p)) for p in (0, 1, 2)]))
    assert_equal_structure(run_opt_pass(g, transform.CombineParallelConv2D()), g)


def test_combine_dense():
    x = relay.var("x", shape=(2, 8))
    ws = [relay.const(RNG.normal(size=(u, 8)).astype("float32")) for u in (3, 4, 5)]
    f = relay.Function([x], relay.Tuple([relay.nn.dense(x, w) for w in ws]))
    after = run_opt_pass(f, transform.CombineParallelDense(to_batch=False), opt_level=4)
    names = []
    relay.analysis.post_order_visit(after, lambda n: names.append(n.op.name) if isinstance(n, relay.Call) else None)
    assert names.count("nn.dense") == 1 and "split" in names
    assert_same_result(f, after, atol=1e-4)


def _op_names(e):
    names = []
    relay.analysis.post_order_visit(
        e, lambda n: names.append(n.op.name) if isinstance(n, relay.Call) else None)
    return names


def test_combine_dense_to_batch():
    """tvm.relay's default form: one batch_matmul of the stacked input and weights."""
    x = relay.var("x", shape=(2, 8))
    ws = [relay.const(RNG.normal(size=(4, 8)).astype("float32")) for _ in range(3)]
    f = relay.Function([x], relay.Tuple([relay.nn.relu(relay.nn.dense(x, w)) for w in ws]))
    after = run_opt_pass(f, transform.CombineParallelDense(), opt_level=4)
    names = _op_names(after)
    assert "nn.dense" not in names and names.count("nn.batch_matmul") == 1
    assert names.count("squeeze") == 3
    assert_same_result(f, after, atol=1e-4)
    # weights of different shapes cannot be stacked: left alone in this form
    ws2 = [relay.const(RNG.normal(size=(u, 8)).astype("float32")) for u in (3, 4, 5)]
    g = relay.Function([x], relay.Tuple([relay.nn.dense(x, w) for w in ws2]))
    assert_equal_structure(run_opt_pass(g, transform.CombineParallelDense(), opt_level=4), g)

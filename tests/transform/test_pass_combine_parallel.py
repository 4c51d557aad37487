"""CombineParallelConv2D / CombineParallelDense: structure and semantics."""

import numpy as np
import pytest
from pass_util import assert_equal_structure, assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform

RNG = np.random.default_rng(0)


def test_combine_three_convs():
    """0.19's form: the relu after every branch joins the combined conv, then one
    strided_slice (size mode, up to the channel axis) per branch."""
    ws = [RNG.normal(size=(o, 4, 3, 3)).astype("float32") for o in (2, 3, 5)]

    def before():
        x = relay.var("x", shape=(1, 4, 6, 6))
        ys = [relay.nn.conv2d(x, relay.const(w), padding=(1, 1)) for w in ws]
        return relay.Function([x], relay.Tuple([relay.nn.relu(y) for y in ys]))

    def expected():
        x = relay.var("x", shape=(1, 4, 6, 6))
        w = relay.concatenate([relay.const(w) for w in ws], axis=0)
        c = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=10))
        return relay.Function([x], relay.Tuple([
            relay.strided_slice(c, begin=[0, b], end=[-1, n], strides=[1, 1], slice_mode="size")
            for b, n in ((0, 2), (2, 3), (5, 5))]))

    after = run_opt_pass(before(), transform.CombineParallelConv2D(), opt_level=4)
    assert_equal_structure(after, expected())
    assert_same_result(before(), after, atol=1e-4)


def test_conv_branches_fold_per_channel_scale_and_nhwc():
    x = relay.var("x", shape=(1, 5, 5, 4))

    def branch(o, i):
        w = relay.const(RNG.normal(size=(3, 3, 4, o)).astype("float32"))
        y = relay.nn.conv2d(x, w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")
        return relay.add(relay.multiply(y, _consts((o,), i)), _consts((), i))

    f = relay.Function([x], relay.Tuple([branch(o, i) for i, o in enumerate((2, 3, 4))]))
    after = run_opt_pass(f, transform.CombineParallelConv2D(), opt_level=4)
    names = _op_names(after)
    # the per-channel scale joins (concatenated along C); the scalar add stays per branch
    assert names.count("nn.conv2d") == 1 and names.count("multiply") == 1
    assert names.count("add") == 3 and names.count("strided_slice") == 3
    assert_same_result(f, after, atol=1e-4)


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
    assert names.count("nn.dense") == 1 and names.count("strided_slice") == 3
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


def _dense_branches(x, units, tails):
    ws = [relay.var(f"w{i}", shape=(u, 8)) for i, u in enumerate(units)]
    outs = [tail(relay.nn.dense(x, w), i) for i, (w, tail) in enumerate(zip(ws, tails))]
    return relay.Function([x] + ws, relay.Tuple(outs))


def _consts(shape, i):
    return relay.const(RNG.normal(size=shape).astype("float32") + i)


@pytest.mark.parametrize("to_batch", [True, False])
def test_dense_branches_fold_bias_and_scale(to_batch):
    """0.19's form: the bias add and the scale join the combined call, one slice per branch."""
    x = relay.var("x", shape=(2, 8))
    units = (4, 4, 4) if to_batch else (3, 4, 1)
    tails = [lambda y, i, u=u: relay.multiply(relay.add(y, _consts((u,), i)), _consts((1,), i))
             for u in units]
    f = _dense_branches(x, units, tails)
    after = run_opt_pass(f, transform.CombineParallelDense(to_batch=to_batch), opt_level=4)
    names = _op_names(after)
    assert names.count("add") == 1 and names.count("multiply") == 1
    assert names.count("squeeze" if to_batch else "strided_slice") == 3
    assert_same_result(f, after, atol=1e-4)


def test_dense_branches_stop_where_combining_would_change_meaning():
    x = relay.var("x", shape=(2, 8))
    # a scalar per branch joins as (1, 1) (0.19 stacked the scalars into a vector that
    # broadcast over the units); expand_dims (its axis would count from the stacked batch)
    # stays per branch in the batch form
    tails = [lambda y, i: relay.expand_dims(relay.add(y, _consts((), i)), 2)] * 3
    f = _dense_branches(x, (4, 4, 4), tails)
    after = run_opt_pass(f, transform.CombineParallelDense(), opt_level=4)
    names = _op_names(after)
    assert names.count("nn.batch_matmul") == 1 and names.count("add") == 1
    assert names.count("squeeze") == 3 and names.count("expand_dims") == 6
    assert_same_result(f, after, atol=1e-4)
    # the flat form follows expand_dims and slices along the units axis it moved to
    tails = [lambda y, i: relay.add(relay.expand_dims(y, 1), _consts((), i))] * 3
    g = _dense_branches(x, (3, 4, 5), tails)
    after = run_opt_pass(g, transform.CombineParallelDense(to_batch=False), opt_level=4)
    assert _op_names(after).count("add") == 1
    assert_same_result(g, after, atol=1e-4)
    # a branch value with a second user is not followed
    w1, w2 = relay.var("w1", shape=(4, 8)), relay.var("w2", shape=(4, 8))
    y1, y2 = relay.nn.dense(x, w1), relay.nn.dense(x, w2)
    k = relay.Function([x, w1, w2], relay.Tuple([relay.nn.relu(y1), relay.nn.relu(y2), y1]))
    after = run_opt_pass(k, transform.CombineParallelDense(2), opt_level=4)
    names = _op_names(after)
    assert names.count("nn.relu") == 2 and names.count("nn.batch_matmul") == 1
    assert_same_result(k, after, atol=1e-4)


def test_batch_matmul_branches_combine_with_their_bias():
    x = relay.var("x", shape=(2, 3, 8))
    ws = [relay.var(f"w{i}", shape=(2, n, 8)) for i, n in enumerate((4, 5, 6))]
    outs = [relay.nn.relu(relay.add(relay.nn.batch_matmul(x, w), _consts((n,), i)))
            for i, (w, n) in enumerate(zip(ws, (4, 5, 6)))]
    # transpose_b=False is not Relay's form: left alone
    outs.append(relay.nn.batch_matmul(x, relay.var("v", shape=(2, 8, 4)), transpose_b=False))
    f = relay.Function(relay.analysis.free_vars(relay.Tuple(outs)), relay.Tuple(outs))
    after = run_opt_pass(f, transform.CombineParallelBatchMatmul(), opt_level=4)
    names = _op_names(after)
    assert names.count("nn.batch_matmul") == 2 and names.count("add") == 1
    assert names.count("nn.relu") == 1 and names.count("strided_slice") == 3
    assert_same_result(f, after, atol=1e-4)

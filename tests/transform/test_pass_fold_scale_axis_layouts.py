"""FoldScaleAxis beyond NCHW: NHWC and blocked layouts, depthwise, dense, conv3d, chains through
relu / bias adds / two branches, and the cases that must not fold (values before and after)."""

import numpy as np
import pytest
from pass_util import assert_equal_structure, assert_same_result, op_names, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform

RNG = np.random.default_rng(7)


def pos(*shape):
    return relay.const(RNG.uniform(0.5, 2.0, size=shape).astype("float32"))


def folded(f, p):
    after = run_opt_pass(f, p)
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)
    return after


def consumer_weight_scaled(after, op="nn.conv2d"):
    """Every ``op`` in ``after`` reads ``multiply(weight, scale)`` and its data is not a
    multiply (the scale went into the weight)."""
    calls = []
    relay.analysis.post_order_visit(
        after, lambda n: calls.append(n) if isinstance(n, relay.Call)
        and isinstance(n.op, relay.op.Op) and n.op.name == op else None)
    assert calls
    for c in calls:
        assert isinstance(c.args[1], relay.Call) and c.args[1].op.name == "multiply"
        assert not (isinstance(c.args[0], relay.Call) and c.args[0].op.name == "multiply")


def test_forward_nhwc_depthwise_through_relu_and_subtract():
    x = relay.var("x", shape=(1, 5, 5, 3))
    w = relay.var("w", shape=(3, 3, 1, 3))
    b = relay.var("b", shape=(3,))
    y = relay.subtract(relay.nn.relu(relay.multiply(pos(3), x)), b)

    def conv(v):
        return relay.nn.conv2d(v, w, channels=3, kernel_size=(3, 3), padding=(1, 1), groups=3,
                               data_layout="NHWC", kernel_layout="HWIO")

    f = relay.Function([x, w, b], relay.add(conv(y), conv(y)))
    after = folded(f, transform.ForwardFoldScaleAxis())
    consumer_weight_scaled(after)
    assert op_names(after).count("divide") == 1  # b / s


def test_forward_blocked_nchwc_with_bias():
    x = relay.var("x", shape=(1, 2, 4, 4, 2))  # NCHW2c, 4 channels
    w = relay.var("w", shape=(3, 2, 3, 3, 2, 2))  # OIHW2i2o: 6 outputs
    b = relay.var("b", shape=(1, 2, 1, 1, 2))
    y = relay.add(relay.nn.relu(relay.multiply(x, pos(1, 2, 1, 1, 2))), b)
    f = relay.Function([x, w, b], relay.nn.conv2d(
        y, w, channels=6, kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW2c",
        kernel_layout="OIHW2i2o"))
    after = folded(f, transform.ForwardFoldScaleAxis())
    consumer_weight_scaled(after)


def test_forward_negative_scale_folds_without_relu_and_dense_on_3d_data():
    x = relay.var("x", shape=(2, 3, 4))
    w = relay.var("w", shape=(5, 4))
    s = relay.const(-RNG.uniform(0.5, 2.0, size=(4,)).astype("float32"))
    f = relay.Function([x, w], relay.nn.dense(relay.multiply(x, s), w))
    after = folded(f, transform.ForwardFoldScaleAxis())
    consumer_weight_scaled(after, "nn.dense")


def test_forward_refusals_leave_the_program_alone():
    x = relay.var("x", shape=(1, 4, 4, 3))
    w = relay.var("w", shape=(3, 3, 3, 2))

    def conv(v):
        return relay.nn.conv2d(v, w, channels=2, kernel_size=(3, 3), padding=(1, 1),
                               data_layout="NHWC", kernel_layout="HWIO")

    neg = relay.const(-RNG.uniform(0.5, 2.0, size=(3,)).astype("float32"))
    s = relay.var("s", shape=(3,))
    cases = [
        relay.Function([x, w], conv(relay.nn.relu(relay.multiply(x, neg)))),  # negative, relu
        relay.Function([x, w, s], conv(relay.nn.relu(relay.multiply(x, s)))),  # not constant
        relay.Function([x, w], conv(relay.multiply(x, pos(1, 4, 1, 3)))),  # not per channel
    ]
    zero = relay.const(np.array([1.0, 0.0, 2.0], "float32"))
    b = relay.var("b", shape=(3,))
    cases.append(relay.Function([x, w, b], conv(relay.add(relay.multiply(x, zero), b))))  # b/0
    m = relay.multiply(x, pos(3))
    cases.append(relay.Function([x, w], relay.Tuple([conv(m), m])))  # another use
    v = relay.var("v")
    cases.append(relay.Function([x, w], relay.Let(v, m, conv(v))))  # through a let
    for f in cases:
        f = run_opt_pass(f, transform.InferType())
        assert_equal_structure(run_opt_pass(f, transform.ForwardFoldScaleAxis()), f)


def test_backward_blocked_through_bias_and_relu():
    x = relay.var("x", shape=(1, 1, 4, 4, 4))  # NCHW4c, 4 channels
    w = relay.var("w", shape=(2, 4, 3, 3, 1, 4))  # OIHW1i4o: 8 outputs
    b = relay.var("b", shape=(1, 2, 1, 1, 4))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(
        x, w, channels=8, kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW4c",
        kernel_layout="OIHW1i4o"), b))
    f = relay.Function([x, w, b], relay.multiply(y, pos(1, 2, 1, 1, 4)))
    after = folded(f, transform.BackwardFoldScaleAxis())
    consumer_weight_scaled(after)
    assert op_names(after).count("multiply") == 2  # the weight and the bias


def test_backward_two_branches_and_scalar_scale():
    x = relay.var("x", shape=(1, 3, 5, 5))
    w1 = relay.var("w1", shape=(4, 3, 3, 3))
    w2 = relay.var("w2", shape=(4, 3, 1, 1))
    y1 = relay.nn.relu(relay.nn.conv2d(x, w1, channels=4, kernel_size=(3, 3), padding=(1, 1)))
    y2 = relay.nn.leaky_relu(relay.nn.conv2d(x, w2, channels=4, kernel_size=(1, 1)), 0.1)
    f = relay.Function([x, w1, w2], relay.multiply(relay.subtract(y1, y2), pos(4, 1, 1)))
    consumer_weight_scaled(folded(f, transform.BackwardFoldScaleAxis()))
    g = relay.Function([x, w1], relay.multiply(relay.nn.relu(relay.nn.conv2d(
        x, w1, channels=4, kernel_size=(3, 3))), relay.const(1.5)))
    after = folded(g, transform.BackwardFoldScaleAxis())
    consumer_weight_scaled(after)
    assert "repeat" in op_names(after)


def test_backward_refusals():
    x = relay.var("x", shape=(3, 3, 4, 4))  # N == C: an output in CNHW has the same shape
    w = relay.var("w", shape=(3, 3, 3, 3))

    def conv(**kw):
        return relay.nn.conv2d(x, w, channels=3, kernel_size=(3, 3), padding=(1, 1), **kw)

    neg = relay.const(-RNG.uniform(0.5, 2.0, size=(3, 1, 1)).astype("float32"))
    s = relay.var("s", shape=(3, 1, 1))
    c = conv()
    cases = [
        relay.Function([x, w], relay.multiply(relay.nn.relu(conv()), neg)),
        relay.Function([x, w, s], relay.multiply(relay.nn.relu(conv()), s)),
        # channel axes differ between the branches (an output in CNHW)
        relay.Function([x, w], relay.multiply(relay.add(conv(), conv(out_layout="CNHW")),
                                              pos(3, 1, 1))),
        relay.Function([x, w], relay.add(relay.multiply(c, pos(3, 1, 1)), relay.nn.relu(c))),
        # bias_add on another axis
        relay.Function([x, w], relay.multiply(relay.nn.bias_add(conv(), pos(4), axis=3),
                                              pos(3, 1, 1))),
    ]
    for f in cases:
        f = run_opt_pass(f, transform.InferType())
        assert_equal_structure(run_opt_pass(f, transform.BackwardFoldScaleAxis()), f)


def test_conv3d_and_dense_both_directions_then_constants_fold():
    x = relay.var("x", shape=(1, 2, 3, 3, 3))
    w = relay.const(RNG.normal(size=(3, 2, 3, 3, 3)).astype("float32"))
    y = relay.nn.conv3d(relay.nn.relu(relay.multiply(x, pos(2, 1, 1, 1))), w, channels=3,
                        kernel_size=(3, 3, 3), padding=(1, 1, 1))
    y = relay.multiply(relay.nn.bias_add(y, pos(3)), pos(3, 1, 1, 1))
    d = relay.nn.dense(relay.reshape(y, (1, -1)),
                       relay.const(RNG.normal(size=(4, 81)).astype("float32")))
    f = relay.Function([x], relay.multiply(relay.nn.relu(d), pos(4)))
    after = folded(f, transform.FoldScaleAxis())
    assert sorted(op_names(after)) == ["nn.bias_add", "nn.conv3d", "nn.dense", "nn.relu",
                                     "nn.relu", "reshape"]


def test_create_workload_takes_a_019_style_in_place_initializer():
    from relay_tvm.testing import create_workload

    def fill(name, arr):
        arr[...] = 3.0

    x = relay.var("data", shape=(1, 2))
    w = relay.var("fc_weight", shape=(3, 2))
    _, params = create_workload(relay.nn.dense(x, w), fill)
    np.testing.assert_array_equal(params["fc_weight"].numpy(), np.full((3, 2), 3.0, "float32"))
    _, params = create_workload(relay.nn.dense(x, w))  # ours: name, shape, dtype -> array
    got = params["fc_weight"].numpy()
    assert got.shape == (3, 2) and np.any(got != 0)


if __name__ == "__main__":
    pytest.main([__file__])

"""model_stats against values computed by hand for a small network, at the opt levels where the
fusion and the memory plan differ."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.report import model_stats


def _net():
    """conv 3x3 (3 -> 4 channels, pad 1) + bias + relu on 1x3x8x8, flatten, dense 256 -> 10 +
    bias."""
    x = relay.var("data", shape=(1, 3, 8, 8))
    w, b = relay.var("w", shape=(4, 3, 3, 3)), relay.var("b", shape=(4,))
    w2, b2 = relay.var("w2", shape=(10, 256)), relay.var("b2", shape=(10,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b))
    y = relay.nn.bias_add(relay.nn.dense(relay.nn.batch_flatten(y), w2), b2, axis=-1)
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((4, 3, 3, 3)), "b": rng.standard_normal(4),
              "w2": rng.standard_normal((10, 256)), "b2": rng.standard_normal(10)}
    params = {k: v.astype("float32") for k, v in params.items()}
    return relay.IRModule.from_expr(relay.Function([x, w, b, w2, b2], y)), params


def test_counts_macs_and_parameters_by_hand():
    mod, params = _net()
    s = model_stats(mod, params, opt_level=2)
    assert s.op_counts == {"nn.conv2d": 1, "nn.bias_add": 2, "nn.relu": 1,
                           "nn.batch_flatten": 1, "nn.dense": 1}
    # conv: every one of the 4x8x8 outputs sums 3 channels x 3x3 taps; dense: 10 x 256
    assert s.macs == 4 * 8 * 8 * (3 * 3 * 3) + 10 * 256 == 9472
    assert s.num_params == 4 * 3 * 3 * 3 + 4 + 10 * 256 + 10 == 2682
    assert s.param_bytes == 4 * 2682


@pytest.mark.parametrize("opt_level, kernels, intermediates", [
    # fused: conv+bias+relu (1x4x8x8), batch_flatten (1x256), dense+bias (1x10)
    (2, 3, 1024 + 1024 + 40),
    # one kernel per operator: conv, bias, relu, flatten (1024 B each), dense, bias (40 B each)
    (0, 6, 4 * 1024 + 2 * 40),
])
def test_kernels_and_memory_plan_by_hand(opt_level, kernels, intermediates):
    mod, params = _net()
    s = model_stats(mod, params, opt_level=opt_level)
    assert s.num_kernel_calls == kernels and s.num_kernels == kernels
    assert s.intermediate_bytes == intermediates
    # a value's buffer is reused once its last reader ran, never while it is read: two 1024-byte
    # buffers alternate (the 40-byte outputs take a free 1024-byte one)
    assert s.num_storages == 2 and s.planned_bytes == 2048
    text = s.format()
    assert f"{kernels} calls of {kernels} distinct kernels" in text
    assert "MACs                  9,472" in text and "2,048 bytes" in text


def test_repeated_block_compiles_one_kernel():
    x = relay.var("x", shape=(1, 16))
    y = x
    for _ in range(3):
        y = relay.nn.relu(relay.add(y, relay.const(1.0)))
    s = model_stats(relay.Function([x], y), opt_level=0)
    assert s.num_kernel_calls == 6 and s.num_kernels == 2  # add and relu, each compiled once
    assert s.num_params == 3 and s.macs == 0  # three scalar constants


def test_control_flow_has_no_graph_figures():
    x, c = relay.var("x", shape=(2,)), relay.var("c", shape=(), dtype="bool")
    s = model_stats(relay.Function([x, c], relay.If(c, x, relay.negative(x))))
    assert s.op_counts == {"negative": 1}
    assert s.num_kernel_calls is None and s.planned_bytes is None
    assert "graph executor" in s.note
    assert "not available" in s.format()


def test_bad_input():
    with pytest.raises(relay.BuildError, match="expected a relay_tvm.IRModule"):
        model_stats("not a module")

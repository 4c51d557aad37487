"""benchmarks/bench_ops.py: a layer's time is its own kernels', and the timed build computes
the layer."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_ops  # noqa: E402


def test_layer_seconds_leaves_out_the_layout_transforms():
    rows = [(0, "tvmgen_default_fused_layout_transform", 0.25),
            (1, "tvmgen_default_fused_layout_transform_strided_slice", 0.5),
            (2, "tvmgen_default_fused_nn_contrib_conv2d_NCHWc_add_nn_relu", 2.0),
            (3, "tvmgen_default_fused_layout_transform_1", 1.0),
            (4, "tvmgen_default_fused_nn_max_pool2d", 4.0)]
    assert bench_ops.layer_seconds(rows) == 6.0
    assert bench_ops.layer_seconds([]) == 0.0


def test_time_relay_at_opt_level_3_computes_the_strided_1x1_layer():
    """A stride-2 1x1 convolution + bias + ReLU built as the benchmark builds it (opt level 3:
    NCHWc with layout transforms and a strided slice): NumPy's values, and both times."""
    rng = np.random.default_rng(0)
    f, params, inputs, flops, _ = bench_ops.conv_case(16, 32, 10, 1, 2, 0, rng)
    gm, _, out, rules = bench_ops.time_relay(f, params, inputs, 1, 1, opt_level=3)
    t_graph, t_layer = bench_ops.time_round(gm, 1, 1)
    x, w, b = inputs["x"][0], params["w"][:, :, 0, 0], params["b"]
    ref = np.maximum(np.einsum("oc,chw->ohw", w, x[:, ::2, ::2]) + b[:, None, None], 0)
    np.testing.assert_allclose(out[0], ref, rtol=1e-4, atol=1e-5)
    assert flops == 2.0 * 32 * 16 * 5 * 5
    assert rules == ["conv2d_NCHWc"]
    assert t_graph > 0 and t_layer > 0

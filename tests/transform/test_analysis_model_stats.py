"""count_layers, get_total_mac_number, detect_feature, extract_fused_functions, and the
relay_tvm.testing workloads they run on."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm import analysis, testing, transform
from relay_tvm.analysis import Feature
from relay_tvm.transform.fuse_ops import fused_function_name


def test_resnet18_layers_and_macs():
    mod, params = testing.resnet.get_workload(num_layers=18)
    assert analysis.count_layers(mod, ["nn.conv2d", "nn.dense"]) == 18
    # 1.82 GMACs: the published ResNet-18 cost (He et al. 2016, table 1: 1.8e9 FLOPs as MACs)
    assert 1.80e9 < analysis.get_total_mac_number(mod) < 1.84e9
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 1000), "float32")
    assert params["conv0_weight"].shape == (64, 3, 7, 7)
    np.testing.assert_array_equal(params["bn0_moving_var"].numpy(), np.ones(64, "float32"))


def test_macs_of_small_conv_and_dense():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1))  # 1*4*8*8 outputs x 3*3*3
    z = relay.nn.dense(relay.nn.batch_flatten(y), relay.var("d", shape=(5, 256)))
    f = testing.run_infer_type(relay.Function(relay.analysis.free_vars(z), z))
    assert analysis.get_total_mac_number(f) == 4 * 64 * 27 + 5 * 256
    assert analysis.count_layers(f, ["nn.conv2d"]) == 1


def test_parallel_branches_count_once():
    x = relay.var("x", shape=(1, 4, 8, 8))
    a = relay.nn.conv2d(x, relay.var("a", shape=(4, 4, 1, 1)))
    b = relay.nn.conv2d(x, relay.var("b", shape=(4, 4, 1, 1)))
    c = relay.nn.conv2d(relay.add(a, b), relay.var("c", shape=(4, 4, 1, 1)))
    assert analysis.count_layers(c, ["nn.conv2d"]) == 2


def test_detect_feature():
    x = relay.var("x", shape=(2,))
    y = relay.exp(x)
    f = relay.Function([x], relay.add(y, y))
    assert analysis.detect_feature(f) == {Feature.fVar, Feature.fFunction, Feature.fOp,
                                          Feature.fCall, Feature.fGraph}
    v = relay.var("v")
    r = relay.Function([x], relay.Let(v, relay.RefCreate(x), relay.RefRead(v)))
    feats = analysis.detect_feature(r)
    assert {Feature.fLet, Feature.fRefCreate, Feature.fRefRead} <= feats
    assert Feature.fGraph not in feats
    anf = testing.run_opt_pass(f, transform.ToANormalForm())
    assert Feature.fGraph not in analysis.detect_feature(anf)
    assert Feature.fLet in analysis.detect_feature(anf)


def test_extract_fused_functions_mlp():
    mod, _ = testing.mlp.get_workload()
    funcs = analysis.extract_fused_functions(mod)
    names = sorted(fused_function_name(f.body) for f in funcs.values())
    # fc1 and fc2 have different shapes: two distinct kernels of the same name
    assert names == ["fused_nn_batch_flatten", "fused_nn_dense_nn_bias_add",
                     "fused_nn_dense_nn_bias_add_nn_relu", "fused_nn_dense_nn_bias_add_nn_relu",
                     "fused_nn_softmax"]


@pytest.mark.parametrize("name,kwargs,out_shape", [
    ("mlp", {}, (1, 10)),
    ("mobilenet", {"image_shape": (3, 32, 32), "num_classes": 10, "alpha": 0.25}, (1, 10)),
    ("resnet", {"num_layers": 18, "image_shape": (3, 32, 32), "num_classes": 10}, (1, 10)),
    ("vgg", {"image_shape": (3, 32, 32), "num_classes": 10}, (1, 10)),
    ("squeezenet", {"version": "1.1"}, (1, 1000)),
    ("dcgan", {"ngf": 8}, (1, 3, 64, 64)),
    ("lstm", {"iterations": 2, "num_hidden": 4}, (1, 4)),
])
def test_workload_types(name, kwargs, out_shape):
    mod, params = getattr(testing, name).get_workload(**kwargs)
    assert mod["main"].checked_type.ret_type == relay.TensorType(out_shape, "float32")
    names = {p.name_hint for p in mod["main"].params}
    assert names - set(params) == {"data"}


def test_workload_runs_and_softmax_sums_to_one():
    mod, params = testing.mlp.get_workload(batch_size=2)
    data = testing.rand((2, 1, 28, 28), seed=0)
    out = relay.create_executor("debug", mod=mod, params=params).evaluate()(data)
    np.testing.assert_allclose(out.numpy().sum(axis=1), [1.0, 1.0], rtol=1e-5)


def test_detect_feature_counts_sharing_within_each_function_of_a_module():
    from relay_tvm.analysis import Feature, detect_feature

    x = relay.var("x", shape=(2,))
    shared = relay.exp(x)
    mod = relay.IRModule()
    mod["f"] = relay.Function([x], relay.negative(shared))
    mod["g"] = relay.Function([x], relay.abs(shared))
    assert Feature.fGraph not in detect_feature(mod)
    mod["h"] = relay.Function([x], relay.add(shared, shared))
    assert Feature.fGraph in detect_feature(mod)

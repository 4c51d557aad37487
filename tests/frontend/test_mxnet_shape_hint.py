"""An input shape missing its batch axis: the error names the weight the graph disagrees with
and points at the input shape given as the likely cause (from a new-user trial)."""

import numpy as np
import pytest

import relay_tvm as relay

mx = pytest.importorskip("mxnet")


def test_missing_batch_axis_points_at_the_input_shape():
    d = mx.sym.var("data")
    y = mx.sym.Convolution(d, num_filter=16, kernel=(3, 3), name="conv0")
    y = mx.sym.Convolution(y, num_filter=8, kernel=(3, 3), name="conv1")
    args, _, _ = y.infer_shape(data=(1, 3, 16, 16))
    params = {n: mx.nd.array(np.ones(s, "float32"))
              for n, s in zip(y.list_arguments(), args) if n != "data"}
    mod, _ = relay.frontend.from_mxnet(y, shape={"data": (1, 3, 16, 16)}, arg_params=params)
    assert tuple(mod["main"].body.checked_type.shape) == (1, 8, 12, 12)
    with pytest.raises(relay.errors.ConversionError,
                       match=r"(?s)'conv0_weight'.*has shape \(16, 3, 3, 3\).*hint: .*"
                             r"shape=\{'data': \(3, 16, 16\)\}.*missing batch axis.* or the "
                             r"weights are not this graph's"):
        relay.frontend.from_mxnet(y, shape={"data": (3, 16, 16)}, arg_params=params)


def test_float64_weight_is_named_in_the_dtype_error():
    """A weight passed as float64 (NumPy's default) to a float32 graph: MXNet's bind casts it,
    relay_tvm refuses, and the error names the parameter and its dtype (it named only the
    operator's operands; fresh-user trial). The float32 weights import and run as MXNet."""
    d = mx.sym.var("data")
    y = mx.sym.Convolution(d, num_filter=4, kernel=(3, 3), name="conv0")
    y = mx.sym.Activation(mx.sym.Convolution(y, num_filter=2, kernel=(1, 1), name="conv1"),
                          act_type="relu")
    args, _, _ = y.infer_shape(data=(1, 3, 8, 8))
    rng = np.random.default_rng(3)
    params = {n: rng.standard_normal(s).astype("float32")
              for n, s in zip(y.list_arguments(), args) if n != "data"}
    xv = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    mod, bound = relay.frontend.from_mxnet(y, shape={"data": xv.shape}, arg_params=params)
    got = relay.create_executor("debug", mod, params=bound).evaluate()(xv).numpy()
    exe = y.bind(mx.cpu(), {"data": mx.nd.array(xv),
                            **{k: mx.nd.array(v) for k, v in params.items()}})
    np.testing.assert_allclose(got, exe.forward()[0].asnumpy(), rtol=1e-5, atol=1e-5)
    bad = {**params, "conv1_weight": params["conv1_weight"].astype("float64")}
    with pytest.raises(relay.errors.ConversionError,
                       match=r"(?s)float64.*hint: parameter\(s\) of another dtype than the "
                             r"graph's \(float32\): 'conv1_weight' is float64;.*does not cast"):
        relay.frontend.from_mxnet(y, shape={"data": xv.shape}, arg_params=bad)


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenet1.0"])
def test_dynamic_batch_imports_and_runs_on_the_vm(name):
    """``shape={"data": (relay.Any(), 3, H, W)}`` (0.19 passed it on to ``relay.var``): the
    model imports with a dynamic batch and the VM runs batches 1 and 3 equal to MXNet."""

    from relay_tvm.testing.gluon import random_zoo_model

    net, _ = random_zoo_model(name, (1, 3, 32, 32))
    mod, params = relay.frontend.from_mxnet(net, shape={"data": (relay.Any(), 3, 32, 32)})
    assert "?" in str(mod["main"].params[0].type_annotation)
    _vm_matches_mxnet_at_batches_1_and_3(net, mod, params)


def _vm_matches_mxnet_at_batches_1_and_3(net, mod, params):
    """Compile ``mod`` (a dynamic batch) for the VM once and compare batches 1 and 3 of random
    (1, 3, 32, 32)-shaped inputs with the Gluon ``net``'s own outputs."""
    import tvm

    with relay.transform.PassContext(opt_level=3):
        ex = relay.vm.compile(mod, target="llvm", params=params)
    vm = relay.vm.VirtualMachine(ex, tvm.cpu())
    for b in (1, 3):
        xb = np.random.default_rng(b).uniform(-1, 1, (b, 3, 32, 32)).astype("float32")
        ref = net(mx.nd.array(xb)).asnumpy()
        out = vm.run(xb).numpy()
        assert out.shape == ref.shape == (b, ref.shape[1])
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())


def test_dynamic_dimension_a_converter_needs_is_a_clear_error():
    # Reshape of a dynamic batch converts (test_mxnet_dynamic_shapes_and_inputs.py); a Crop
    # offset into a dynamic height does not
    a, b = mx.sym.var("data"), mx.sym.var("like")
    with pytest.raises(relay.errors.ConversionError, match=r"Crop node 'c'.*relay.Any\(\)"):
        relay.frontend.from_mxnet(mx.sym.Crop(a, b, offset=(1, 1), name="c"),
                                  shape={"data": (1, 3, 8, 8),
                                         "like": (1, 3, relay.Any(), relay.Any())})
    y = mx.sym.reshape(mx.sym.var("data"), shape=(-3, -2), name="r")
    with pytest.raises(relay.errors.ConversionError, match=r"relay.Any\(\)"):
        relay.frontend.from_mxnet(y, shape={"data": ("n", 3, 4)})


def _small_seq_net():
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Conv2D(8, 3, padding=1, activation="relu"),
                mx.gluon.nn.Dense(5))
    return net


@pytest.mark.parametrize("make", [
    _small_seq_net,
    lambda: mx.gluon.model_zoo.vision.get_model("mobilenet0.25", pretrained=False),
], ids=["conv_dense", "mobilenet0.25"])
def test_dynamic_batch_on_a_block_never_run(make):
    """The README snippet (from a new-user trial): a freshly initialized block has deferred
    parameters; converting it with ``(relay.Any(), C, H, W)`` initializes them at a stand-in
    batch of 1, keeps the batch dynamic, and the VM matches MXNet at batches 1 and 3."""

    net = make()
    net.initialize()
    net.hybridize()
    mod, params = relay.frontend.from_mxnet(net, shape={"data": (relay.Any(), 3, 32, 32)})
    assert str(mod["main"].params[0].type_annotation) == "Tensor[(?, 3, 32, 32), float32]"
    _vm_matches_mxnet_at_batches_1_and_3(net, mod, params)


def test_deferred_init_that_fails_at_the_stand_in_is_a_clear_error():
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Conv2D(4, 5))  # a 5x5 kernel cannot run on a 1x1 stand-in image
    net.initialize()
    with pytest.raises(relay.errors.ConversionError,
                       match=r"not initialized yet.*\(1, 3, 1, 1\).*dynamic dimensions as 1"):
        relay.frontend.from_mxnet(net, shape={"data": (relay.Any(), 3, relay.Any(),
                                                       relay.Any())})


def test_block_never_initialized_says_to_initialize_or_load():
    """``resnet18_v1()`` without ``initialize()``: MXNet's RuntimeError ("has not been
    initialized ... create Trainer with Block.collect_params()") was passed through."""
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    with pytest.raises(relay.errors.ConversionError,
                       match=r"parameters are not initialized \(resnetv\d+_conv0_weight, .* and "
                             r"\d+ more\): call block.initialize\(\) .*load_parameters"):
        relay.frontend.from_mxnet(net, shape={"data": [1, 3, 224, 224]})


def test_list_shape_of_a_block_with_some_parameters_deferred():
    """A list is a shape; and a block whose first parameter is initialized (in_channels given)
    but a later one deferred is run once, as one whose first is deferred (only the first
    parameter was looked at: MXNet's DeferredInitializationError came through)."""
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=3), mx.gluon.nn.Dense(2))
    net.initialize()
    mod, params = relay.frontend.from_mxnet(net, shape={"data": [1, 3, 8, 8]})
    assert str(mod["main"].params[0].type_annotation) == "Tensor[(1, 3, 8, 8), float32]"
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 8, 8)).astype("float32")
    out = relay.create_executor("debug", mod=mod).evaluate()(x, **params).numpy()
    np.testing.assert_allclose(out, net(mx.nd.array(x)).asnumpy(), rtol=1e-5, atol=1e-6)
    mod2, _ = relay.frontend.from_mxnet(net, shape={"data": np.array([1, 3, 8, 8])})
    assert relay.analysis.structural_equal(mod2["main"], mod["main"])


@pytest.mark.parametrize("shape, match", [
    ([1, 3, 8, 8], r"shape must be a dict \{input name: shape\}.*got list \[1, 3, 8, 8\]"),
    ({"data": 5}, r"shape of input 'data': expected a tuple or list of ints.*got 5"),
    ({"data": "1,3,8,8"}, r"shape of input 'data': expected a tuple or list of ints"),
])
def test_shape_that_is_not_a_dict_of_shapes(shape, match):
    net = mx.gluon.nn.Dense(2)
    net.initialize()  # deferred: the block would be run at the shape
    with pytest.raises(relay.errors.ConversionError, match=match):
        relay.frontend.from_mxnet(net, shape=shape)
    with pytest.raises(relay.errors.ConversionError, match=match):
        relay.frontend.from_mxnet(mx.sym.relu(mx.sym.var("data")), shape=shape)


@pytest.mark.parametrize("dims", [(2, 3.9), (True, 3), ("2", "3"), (2, -3), np.array([2.0, 3.5])])
def test_shape_dimensions_that_are_not_ints_are_refused(dims):
    """A float, bool, string or negative dimension was truncated / cast by int() (3.9 -> 3,
    True -> 1, '2' -> 2; fresh-user trial): refused, naming the input, in both frontends."""
    sym = mx.sym.relu(mx.sym.var("data"))
    with pytest.raises(relay.errors.ConversionError,
                       match=r"shape of input 'data': expected a tuple of non-negative ints"):
        relay.frontend.from_mxnet(sym, shape={"data": dims})
    mod, _ = relay.frontend.from_mxnet(sym, shape={"data": np.array([2, 3])})
    assert str(mod["main"].params[0].type_annotation) == "Tensor[(2, 3), float32]"


@pytest.mark.parametrize("names", [["a"], ["a", "b", "c"]])
def test_gluon_block_traced_with_the_wrong_number_of_inputs(names):
    """shape= naming fewer or more inputs than the block's forward() takes: MXNet's raw
    TypeError ("hybrid_forward() takes 3 positional arguments but 4 were given") before; a
    ConversionError with the names and a hint now (fresh-user trial)."""
    class Add(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, y):
            return x + y

    with pytest.raises(relay.errors.ConversionError,
                       match=r"HybridBlock Add\): tracing it with the inputs .*TypeError.*\n"
                             r"  hint: shape= must name the block's inputs"):
        relay.frontend.from_mxnet(Add(), shape={n: (2, 3) for n in names})
    mod, _ = relay.frontend.from_mxnet(Add(), shape={"a": (2, 3), "b": (2, 3)})
    a, b = np.ones((2, 3), "float32"), np.full((2, 3), 2.0, "float32")
    out = relay.create_executor("debug", mod=mod).evaluate()(a, b).numpy()
    np.testing.assert_array_equal(out, a + b)


def test_params_file_without_names_is_refused(tmp_path):
    """A .params file written by mx.nd.save of a list: AttributeError 'list' object has no
    attribute 'items' before (fresh-user trial)."""
    path = str(tmp_path / "nameless.params")
    mx.nd.save(path, [mx.nd.ones((2, 3)), mx.nd.ones(2)])
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    with pytest.raises(relay.errors.ConversionError, match=r"holds 2 arrays without names"):
        relay.frontend.from_mxnet(sym, shape={"data": (1, 3)}, arg_params=path)

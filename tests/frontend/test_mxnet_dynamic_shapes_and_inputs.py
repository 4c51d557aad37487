"""Regression tests of three MXNet importer bugs, each against MXNet 1.9.1's own outputs:

1. a dynamic batch (``relay.Any()``) through ``Reshape`` (codes 0, -1, -3, -2, -4), ``slice_axis``,
   ``slice``, ``slice_like``, ``reshape_like`` and ``Crop``: they failed with an internal
   TypeError wrapped in a ConversionError; now they convert and the VM runs two batch sizes;
2. inputs used only for their shape (``slice_like``'s ``shape_like``, ``Crop``'s second input,
   ``reshape_like``'s ``rhs``) were dropped from ``main``: now ``main`` takes every MXNet input,
   in ``list_arguments()`` order;
3. ``from_mxnet("m-symbol.json")`` did not load the ``m-0000.params`` next to it (the CLI did).
"""

import numpy as np
import pytest

import relay_tvm as relay

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")

pytestmark = pytest.mark.mxnet


def _mx_forward(sym, inputs: dict) -> np.ndarray:
    """MXNet's output of ``sym`` on ``inputs`` (the executor, bound by name)."""
    ex = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in inputs.items()}, grad_req="null")
    return ex.forward()[0].asnumpy()


def _vm(mod, params=None):
    import tvm

    with relay.transform.PassContext(opt_level=3):
        ex = relay.vm.compile(mod, target="llvm", params=params)
    return relay.vm.VirtualMachine(ex, tvm.cpu())


# ---- 1. dynamic batch ------------------------------------------------------------------------

_D = mx.sym.var("data")

DYNAMIC = {
    "reshape_0_-1": mx.sym.Reshape(_D, shape=(0, -1)),
    "reshape_-1_12": mx.sym.Reshape(_D, shape=(-1, 12)),
    "reshape_-3_-2": mx.sym.Reshape(_D, shape=(-3, -2)),
    "reshape_0_-4": mx.sym.Reshape(_D, shape=(0, -4, 2, -1, 0)),
    "reshape_-4_any": mx.sym.Reshape(_D, shape=(-4, -1, 2, -2)),  # splits the Any batch
    "reshape_reverse": mx.sym.Reshape(_D, shape=(-1, 0), reverse=True),
    "slice_axis_1": mx.sym.slice_axis(_D, axis=1, begin=1, end=3),
    "slice_axis_neg": mx.sym.slice_axis(_D, axis=-1, begin=-2, end=None),
    "slice_axis_batch": mx.sym.slice_axis(_D, axis=0, begin=1, end=None),
    "slice_batch_rev": mx.sym.slice(_D, begin=(None, 1), end=(None, None), step=(-1, 2)),
    "slice_like_batch": mx.sym.slice_like(_D, mx.sym.slice_axis(_D, axis=0, begin=0, end=-1),
                                          axes=(0, 2)),
    "reshape_like_batch": mx.sym.reshape_like(mx.sym.Reshape(_D, shape=(0, -1)), _D),
}


@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic_batch_converts_and_runs_two_batches_on_the_vm(name):
    sym = DYNAMIC[name]
    mod, params = relay.frontend.from_mxnet(sym, shape={"data": (relay.Any(), 4, 3)})
    vm = _vm(mod, params)
    for b in (2, 6):
        x = np.random.default_rng(b).uniform(-1, 1, (b, 4, 3)).astype("float32")
        ref = _mx_forward(sym, {"data": x})
        out = vm.run(x).numpy()
        assert out.shape == ref.shape
        np.testing.assert_array_equal(out, ref)


def test_dynamic_batch_reshape_with_create_executor():
    """The same through ``create_executor("vm")``, with a weight after the reshape."""
    w = mx.sym.var("w")
    sym = mx.sym.FullyConnected(mx.sym.Reshape(_D, shape=(0, -1)), w, no_bias=True,
                                num_hidden=5, name="fc")
    wv = np.random.default_rng(0).uniform(-1, 1, (5, 12)).astype("float32")
    mod, params = relay.frontend.from_mxnet(sym, shape={"data": (relay.Any(), 4, 3)},
                                            arg_params={"w": mx.nd.array(wv)})
    f = relay.create_executor("vm", mod=mod, target="llvm", params=params).evaluate()
    for b in (1, 5):
        x = np.random.default_rng(b).uniform(-1, 1, (b, 4, 3)).astype("float32")
        ref = _mx_forward(sym, {"data": x, "w": wv})
        np.testing.assert_allclose(f(x).numpy(), ref, rtol=1e-5, atol=1e-6)


def test_reshape_minus_4_on_an_any_dim_has_its_shape_function():
    """``-4`` splitting the ``Any`` batch: the kernel computes ``batch // 2``; a batch that 2
    does not divide is an InputError naming reshape (MXNet refuses it too)."""
    sym = DYNAMIC["reshape_-4_any"]
    mod, params = relay.frontend.from_mxnet(sym, shape={"data": (relay.Any(), 4, 3)})
    assert str(mod["main"].body.checked_type) == "Tensor[(?, 2, 4, 3), float32]"
    vm = _vm(mod, params)
    with pytest.raises(relay.errors.InputError, match="reshape"):
        vm.run(np.zeros((5, 4, 3), "float32"))
    with pytest.raises(mx.base.MXNetError):
        _mx_forward(sym, {"data": np.zeros((5, 4, 3), "float32")})


def test_npx_reshape_of_a_dynamic_batch():
    """``npx.reshape`` codes (-2 copy, -5 merge) map to Relay's reshape codes on an Any batch."""

    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.npx.reshape(x, (-2, -5))

    mx.npx.set_np()
    try:
        net = Net()
        net.hybridize()
        mod, params = relay.frontend.from_mxnet(net, shape={"data": (relay.Any(), 4, 3)})
        vm = _vm(mod, params)
        for b in (2, 5):
            x = np.random.default_rng(b).uniform(-1, 1, (b, 4, 3)).astype("float32")
            np.testing.assert_array_equal(vm.run(x).numpy(), net(mx.np.array(x)).asnumpy())
    finally:
        mx.npx.reset_np()


def test_crop_of_an_any_batch_runs_on_the_vm():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    for sym in (mx.sym.Crop(a, b), mx.sym.Crop(a, b, offset=(1, 2))):
        mod, params = relay.frontend.from_mxnet(
            sym, shape={"a": (relay.Any(), 2, 6, 7), "b": (relay.Any(), 2, 3, 4)})
        vm = _vm(mod, params)
        for n in (1, 3):
            xa = np.random.default_rng(n).uniform(-1, 1, (n, 2, 6, 7)).astype("float32")
            xb = np.zeros((n, 2, 3, 4), "float32")
            np.testing.assert_array_equal(vm.run(xa, xb).numpy(),
                                          _mx_forward(sym, {"a": xa, "b": xb}))


def test_crop_with_offset_of_a_dynamic_height_is_a_clear_error():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sym = mx.sym.Crop(a, b, offset=(1, 1), name="cr")
    with pytest.raises(relay.errors.ConversionError,
                       match=r"Crop node 'cr'.*offset=\(1, 1\).*dynamic.*static sizes"):
        relay.frontend.from_mxnet(sym, shape={"a": (1, 2, 6, 6),
                                              "b": (1, 2, relay.Any(), relay.Any())})


# ---- 2. inputs used only for their shape -----------------------------------------------------

_A, _B, _W = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("w")

SHAPE_ONLY = {
    "slice_like": (mx.sym.slice_like(_A, _B, axes=(1,)) + _W,
                   {"a": (2, 5), "b": (2, 3), "w": (2, 3)}),
    "crop_like": (mx.sym.Crop(_A, _B), {"a": (1, 2, 6, 6), "b": (1, 2, 3, 4)}),
    "crop_offset": (mx.sym.Crop(_A, _B, offset=(1, 2)), {"a": (1, 2, 6, 6), "b": (1, 2, 3, 4)}),
    "reshape_like": (_W * mx.sym.reshape_like(_A, _B), {"w": (3, 4), "a": (2, 6), "b": (3, 4)}),
    "shape_input_first": (mx.sym.slice_like(_A, _B) * _W, {"b": (2, 2), "a": (3, 3),
                                                            "w": (2, 2)}),
}


@pytest.mark.parametrize("name", list(SHAPE_ONLY))
@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_every_mxnet_input_is_a_parameter_in_list_arguments_order(name, kind):
    sym, shapes = SHAPE_ONLY[name]
    mod, params = relay.frontend.from_mxnet(sym, shape=shapes)
    assert [p.name_hint for p in mod["main"].params] == sym.list_arguments()
    rng = np.random.default_rng(0)
    inputs = {k: rng.uniform(-1, 1, s).astype("float32") for k, s in shapes.items()}
    f = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    out = f(*[inputs[k] for k in sym.list_arguments()])  # all of MXNet's inputs, positionally
    np.testing.assert_array_equal(out.numpy(), _mx_forward(sym, inputs))


def test_shape_only_parameter_keeps_its_value_and_order_with_weights():
    """A parameter (a value in arg_params) used only for its shape stays a parameter of
    ``main`` with its value returned; data and weights interleave as MXNet lists them."""
    x, like = mx.sym.var("data"), mx.sym.var("like")
    fc = mx.sym.FullyConnected(x, num_hidden=6, name="fc")
    sym = mx.sym.slice_like(fc, like, axes=(1,))
    rng = np.random.default_rng(1)
    vals = {"fc_weight": rng.uniform(-1, 1, (6, 4)).astype("float32"),
            "fc_bias": rng.uniform(-1, 1, (6,)).astype("float32"),
            "like": np.zeros((2, 4), "float32")}
    mod, params = relay.frontend.from_mxnet(sym, shape={"data": (2, 4)},
                                            arg_params={k: mx.nd.array(v) for k, v in
                                                        vals.items()})
    assert [p.name_hint for p in mod["main"].params] == sym.list_arguments()
    assert set(params) == {"fc_weight", "fc_bias", "like"}
    xv = rng.uniform(-1, 1, (2, 4)).astype("float32")
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    import tvm

    m = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("data", xv)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _mx_forward(sym, {"data": xv, **vals}),
                               rtol=1e-5, atol=1e-6)


def test_unused_label_without_shape_is_still_left_out():
    """SoftmaxOutput's label, unused in inference and given no shape, stays out (as in 0.19);
    given a shape, it is a parameter like every MXNet input."""
    sym = mx.sym.SoftmaxOutput(mx.sym.var("data"), name="softmax")
    mod, _ = relay.frontend.from_mxnet(sym, shape={"data": (2, 3)})
    assert [p.name_hint for p in mod["main"].params] == ["data"]
    mod, _ = relay.frontend.from_mxnet(sym, shape={"data": (2, 3), "softmax_label": (2,)})
    assert [p.name_hint for p in mod["main"].params] == sym.list_arguments()


# ---- 3. a symbol path finds its .params ------------------------------------------------------


def _checkpoint(tmp_path, epochs=(0,)):
    """A Module checkpoint ``m-symbol.json`` + ``m-NNNN.params`` whose weight shape cannot be
    inferred from the graph (a broadcast multiply by a variable): without the .params file,
    conversion fails."""
    data, scale = mx.sym.var("data"), mx.sym.var("scale")
    sym = mx.sym.Convolution(mx.sym.broadcast_mul(data, scale), num_filter=2, kernel=(1, 1),
                             name="conv")
    rng = np.random.default_rng(0)
    args = {"scale": rng.uniform(0.5, 1.5, (1, 3, 1, 1)),
            "conv_weight": rng.uniform(-1, 1, (2, 3, 1, 1)),
            "conv_bias": rng.uniform(-1, 1, (2,))}
    args = {k: mx.nd.array(v.astype("float32")) for k, v in args.items()}
    for e in epochs:
        mx.model.save_checkpoint(str(tmp_path / "m"), e, sym, args, {})
    return sym, args


def test_symbol_path_loads_the_params_file_next_to_it(tmp_path):
    sym, args = _checkpoint(tmp_path)
    x = np.random.default_rng(2).uniform(-1, 1, (2, 3, 4, 4)).astype("float32")
    ref = _mx_forward(sym, {"data": x, **{k: v.asnumpy() for k, v in args.items()}})
    for path in (str(tmp_path / "m-symbol.json"), tmp_path / "m-symbol.json"):
        mod, params = relay.frontend.from_mxnet(path, shape={"data": x.shape})
        assert set(params) == set(args)
        f = relay.create_executor("graph", mod=mod, target="llvm", params=params).evaluate()
        np.testing.assert_allclose(f(x).numpy(), ref, rtol=1e-5, atol=1e-5)


def test_symbol_path_with_several_epochs_is_ambiguous(tmp_path):
    _checkpoint(tmp_path, epochs=(1, 3))
    with pytest.raises(relay.errors.ConversionError,
                       match=r"2 parameter files.*m-0001.params, m-0003.params.*ambiguous"):
        relay.frontend.from_mxnet(str(tmp_path / "m-symbol.json"), shape={"data": (2, 3, 4, 4)})
    # naming the file settles it
    mod, params = relay.frontend.from_mxnet(str(tmp_path / "m-symbol.json"),
                                            shape={"data": (2, 3, 4, 4)},
                                            arg_params=str(tmp_path / "m-0003.params"))
    assert set(params) == {"scale", "conv_weight", "conv_bias"}


def test_cli_shares_the_lookup(tmp_path, capsys):
    from relay_tvm.cli import main

    _checkpoint(tmp_path, epochs=(1, 3))
    assert main(["show", str(tmp_path / "m-symbol.json"), "--shape", "data=2,3,4,4"]) != 0
    assert "m-0001.params, m-0003.params" in capsys.readouterr().err


def test_inference_failure_without_params_says_they_are_missing(tmp_path):
    sym, _ = _checkpoint(tmp_path)
    (tmp_path / "m-0000.params").unlink()
    with pytest.raises(relay.errors.ConversionError,
                       match=r"(?s)infer.*the parameters are missing.*no m-NNNN.params file is "
                             r"next to"):
        relay.frontend.from_mxnet(str(tmp_path / "m-symbol.json"), shape={"data": (2, 3, 4, 4)})
    with pytest.raises(relay.errors.ConversionError,
                       match=r"(?s)infer.*the parameters are missing: no arg_params"):
        relay.frontend.from_mxnet(sym, shape={"data": (2, 3, 4, 4)})


def test_symbol_path_without_params_warns_that_weights_are_inputs(tmp_path):
    """A symbol file with no .params beside it whose weight shapes can be inferred converts,
    its weights becoming inputs of main; the CLI refuses that without --weights-as-inputs, so
    the Python API says it (fresh-user finding). The converted function still computes what
    MXNet does with the weights fed as inputs."""
    data = mx.sym.var("data")
    sym = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    sym.save(str(tmp_path / "fc-symbol.json"))
    with pytest.warns(UserWarning, match=r"no arg_params.*weights are inputs of main "
                                         r"\(2: fc_weight, fc_bias\)"):
        mod, params = relay.frontend.from_mxnet(str(tmp_path / "fc-symbol.json"),
                                                shape={"data": (2, 3)})
    assert params == {}
    assert [p.name_hint for p in mod["main"].params] == ["data", "fc_weight", "fc_bias"]
    rng = np.random.default_rng(5)
    feed = {"data": rng.uniform(-1, 1, (2, 3)), "fc_weight": rng.uniform(-1, 1, (2, 3)),
            "fc_bias": rng.uniform(-1, 1, (2,))}
    feed = {k: v.astype("float32") for k, v in feed.items()}
    ref = _mx_forward(sym, feed)
    f = relay.create_executor("graph", mod=mod, target="llvm").evaluate()
    np.testing.assert_allclose(f(feed["data"], feed["fc_weight"], feed["fc_bias"]).numpy(), ref,
                               rtol=1e-5, atol=1e-6)


def test_too_small_input_without_params_names_the_input_not_the_weights():
    """New-user trial: a 2x2 input to a 3x3 convolution, no weights given. The error said the
    output height would be 0 (right), then blamed "a parameter shape", the weights having no
    shape and the missing parameters; the convolution infers its weights' shapes, so those
    hints were wrong. A weight whose shape nothing infers still gets them."""
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv0")
    with pytest.raises(relay.errors.ConversionError) as info:
        relay.frontend.from_mxnet(conv, shape={"data": (1, 3, 2, 2)})
    msg = str(info.value)
    assert "(an input or parameter shape may not fit the graph)" in msg
    assert "output height would be 0" in msg and "(1, 3, 2, 2)" in msg
    assert "have no shape" not in msg and "parameters are missing" not in msg
    added = mx.sym.broadcast_add(data, mx.sym.var("w"), name="add0")
    with pytest.raises(relay.errors.ConversionError) as info:
        relay.frontend.from_mxnet(added, shape={"data": (1, 3)})
    msg = str(info.value)
    assert "(an input or parameter has no shape)" in msg and "cannot infer the type" in msg
    assert "input(s) ['w'] have no shape" in msg and "the parameters are missing" in msg

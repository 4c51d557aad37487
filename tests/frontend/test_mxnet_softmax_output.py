"""Models trained with a loss layer (SoftmaxOutput and its label input) import for inference:
``main`` takes only the variables its outputs depend on (tvm.relay 0.19 built it from the
graph's free variables), so the unused ``softmax_label`` needs no value. Checked against
MXNet's Module-API forward of the same exported checkpoint."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.cli import main

mx = pytest.importorskip("mxnet")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    d = tmp_path_factory.mktemp("sm")
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(mx.sym.flatten(data), num_hidden=5, name="fc1")
    out = mx.sym.SoftmaxOutput(mx.sym.Activation(fc, act_type="tanh"), name="softmax")
    mod = mx.mod.Module(out, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", (3, 2, 4))], label_shapes=[("softmax_label", (3,))],
             for_training=False)
    mod.init_params(mx.init.Uniform(1.0))
    mod.save_checkpoint(str(d / "net"), 3)
    x = np.random.default_rng(0).uniform(-1, 1, (3, 2, 4)).astype("float32")
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    return d, x, mod.get_outputs()[0].asnumpy()


def test_from_mxnet_drops_the_unused_label(checkpoint):
    d, x, ref = checkpoint
    sym, arg, aux = mx.model.load_checkpoint(str(d / "net"), 3)
    assert "softmax_label" in sym.list_arguments()
    mod, params = relay.frontend.from_mxnet(sym, shape={"data": x.shape}, arg_params=arg,
                                            aux_params=aux)
    assert [p.name_hint for p in mod["main"].params] == ["data", "fc1_weight", "fc1_bias"]
    got = relay.create_executor("debug", mod=mod, params=params).evaluate()(x).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_a_used_variable_without_value_is_still_an_error(checkpoint):
    d, x, _ = checkpoint
    sym, arg, aux = mx.model.load_checkpoint(str(d / "net"), 3)
    arg = {k: v for k, v in arg.items() if k != "fc1_bias"}
    with pytest.raises(relay.errors.ConversionError, match="'fc1_bias'.*has no value"):
        relay.frontend.from_mxnet(sym, shape={"data": x.shape}, arg_params=arg, aux_params=aux)


def test_cli_compile_and_run(checkpoint, tmp_path):
    d, x, ref = checkpoint
    so = str(tmp_path / "net.so")
    assert main(["compile", str(d / "net-symbol.json"), "--shape", "data=3,2,4", "-o",
                 so]) == 0
    np.save(tmp_path / "x.npy", x)
    assert main(["run", so, "--input", f"data={tmp_path / 'x.npy'}", "--output-dir",
                 str(tmp_path / "out")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), ref, rtol=1e-5,
                               atol=1e-6)

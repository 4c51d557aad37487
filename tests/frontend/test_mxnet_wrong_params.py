"""Parameters of another model (from a new-user trial: ``relay-tvm compile model-symbol.json
--params other-0000.params``): the error or warning says so instead of blaming one weight or
the input shape."""

import pytest

import relay_tvm as relay
from relay_tvm.errors import ConversionError

mx = pytest.importorskip("mxnet", reason="MXNet builds the Gluon nets and writes .params")
pytestmark = pytest.mark.mxnet


def _export(tmp_path, prefix, layers, classes=10):
    """A small hybridized Gluon net (convs then a classifier) of parameter names ``prefix...``,
    exported as MXNet files named after its shape; returns their paths."""
    net = mx.gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        for _ in range(layers):
            net.add(mx.gluon.nn.Conv2D(4, 3, padding=1, activation="relu"))
        net.add(mx.gluon.nn.GlobalAvgPool2D(), mx.gluon.nn.Dense(classes))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 3, 8, 8)))
    name = f"{prefix}{layers}x{classes}"
    net.export(str(tmp_path / name))
    return str(tmp_path / f"{name}-symbol.json"), str(tmp_path / f"{name}-0000.params")


def test_params_of_another_model_say_so(tmp_path):
    sym, _ = _export(tmp_path, "small_", 1)
    _, other = _export(tmp_path, "mobile_", 1)
    with pytest.raises(ConversionError,
                       match=r"the parameters hold none of the graph's 4 weights \(they have "
                             r"'mobile_conv0_bias', .*\): are they for another model\?"):
        relay.frontend.from_mxnet(sym, shape={"data": (1, 3, 8, 8)}, arg_params=other)


def test_extra_params_warn_naming_a_few_and_the_count(tmp_path):
    sym, _ = _export(tmp_path, "net_", 1)
    _, deeper = _export(tmp_path, "net_", 3)  # the same names, two more convolutions
    with pytest.warns(UserWarning, match=r"4 parameters the graph does not use \("
                                         r"'net_conv1_bias', 'net_conv1_weight', "
                                         r"'net_conv2_bias', \.\.\.\)") as rec:
        mod, params = relay.frontend.from_mxnet(sym, shape={"data": (1, 3, 8, 8)},
                                                arg_params=deeper)
    assert [w.filename for w in rec] == [__file__]
    assert sorted(params) == ["net_conv0_bias", "net_conv0_weight", "net_dense0_bias",
                              "net_dense0_weight"]


def test_weight_against_an_attribute_blames_the_weight_not_the_input_shape(tmp_path):
    sym, _ = _export(tmp_path, "net_", 1, classes=1000)
    _, ten = _export(tmp_path, "net_", 1, classes=10)
    with pytest.raises(ConversionError, match=r"'net_dense0_weight'.*has shape \(10, 4\), but "
                                              r"the layer's attributes \(num_hidden=1000\) "
                                              r"need \(1000, 4\)") as e:
        relay.frontend.from_mxnet(sym, shape={"data": (1, 3, 8, 8)}, arg_params=ten)
    assert "input shape" not in str(e.value)

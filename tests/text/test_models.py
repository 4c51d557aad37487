"""Every network the MXNet importer produces round-trips through the text format: as imported,
with its weights bound as constants (the metadata section), and after the optimization
pipeline (fused primitive functions with attributes)."""

import numpy as np
import pytest

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 builds the model-zoo networks")
import relay_tvm as relay  # noqa: E402
from relay_tvm.analysis import structural_equal  # noqa: E402
from relay_tvm.runtime.executor import bind_params_by_name  # noqa: E402

pytestmark = pytest.mark.mxnet

NETS = {  # name: input size
    "alexnet": 224, "densenet121": 224, "inceptionv3": 299, "mobilenet1.0": 224,
    "mobilenet0.25": 64, "mobilenetv2_1.0": 224, "resnet18_v1": 64, "resnet50_v1": 224,
    "resnet18_v2": 64, "resnet50_v2": 224, "squeezenet1.0": 224, "squeezenet1.1": 224,
    "vgg11": 224, "vgg16_bn": 224,
}
SLOW = {"vgg11", "vgg16_bn", "alexnet"}  # importing initializes ~100M weights


def _import(name):
    size = NETS[name]
    net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    net.initialize()
    net(mx.nd.zeros((1, 3, size, size)))
    net.hybridize()
    return relay.frontend.from_mxnet(net, shape={"data": (1, 3, size, size)})


def _roundtrip(mod):
    text = relay.astext(mod)
    back = relay.parse(text)
    assert structural_equal(mod, back)
    assert relay.astext(back) == text
    return text, back


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.sweep) if n in SLOW else n for n in sorted(NETS)]
)
def test_imported_network_roundtrips(name):
    mod, _ = _import(name)
    _roundtrip(mod)


def test_bound_weights_and_fused_module_roundtrip_and_run():
    mod, params = _import("mobilenet0.25")
    bound = relay.IRModule.from_expr(bind_params_by_name(mod["main"], params))
    text, back = _roundtrip(bound)
    assert text.count("meta[relay.Constant]") >= len(params)
    from relay_tvm.transform.pipeline import default_pipeline

    with relay.transform.PassContext(opt_level=3):
        fused = default_pipeline(3)(bound)
    text, back = _roundtrip(fused)
    assert "Primitive=1" in text
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 64, 64)).astype("float32")
    want = relay.create_executor("debug", mod=fused).evaluate()(x).numpy()
    got = relay.create_executor("debug", mod=back).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, want)

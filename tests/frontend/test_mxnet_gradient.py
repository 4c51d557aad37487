"""The first-order gradient of the Gluon model-zoo ResNet-18 (imported, float32) against MXNet's
autograd on the same weights (run in float64), for the data and every trained parameter."""

import functools

import numpy as np
import pytest

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the model tests")
import relay_tvm as relay  # noqa: E402

pytestmark = pytest.mark.mxnet


def _resnet18(shape):
    # relay_tvm's nn.batch_norm is the inference operator: MXNet must differentiate with the
    # running statistics too (its BatchNorm backward otherwise assumes batch statistics)
    bn = mx.gluon.nn.BatchNorm
    mx.gluon.nn.BatchNorm = functools.partial(bn, use_global_stats=True)
    try:
        net = mx.gluon.model_zoo.vision.get_model("resnet18_v1", pretrained=False)
    finally:
        mx.gluon.nn.BatchNorm = bn
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net(mx.nd.zeros(shape))
    rng = np.random.default_rng(0)
    for name, p in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape)))
        elif name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.2, 0.2, p.shape)))
    return net


def test_resnet18_first_order_gradient_matches_mxnet_autograd():
    shape = (1, 3, 32, 32)
    net = _resnet18(shape)
    x = np.random.default_rng(1).uniform(-1, 1, shape).astype("float32")
    mod, params = relay.frontend.from_mxnet(net, shape={"data": shape})
    grad = relay.transform.gradient(mod["main"], mode="first_order")
    names = [p.name_hint for p in mod["main"].params]
    args = [x if n == "data" else np.asarray(params[n]) for n in names]
    fwd, grads = relay.create_executor().evaluate(grad)(*args)

    net.cast("float64")
    xd = mx.nd.array(x, dtype="float64")
    xd.attach_grad()
    with mx.autograd.record(train_mode=False):
        y = net(xd)
    y.backward()
    np.testing.assert_allclose(fwd.numpy(), y.asnumpy(), rtol=1e-4, atol=1e-5)
    checked = 0
    pd = net.collect_params()
    for n, g in zip(names, grads):
        if n == "data":
            ref = xd.grad.asnumpy()
        elif n in pd.keys() and pd[n].grad_req != "null":
            ref = pd[n].grad().asnumpy()
        else:
            continue  # running statistics: MXNet keeps no gradient for them
        np.testing.assert_allclose(g.numpy(), ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max(),
                                   err_msg=n)
        checked += 1
    assert checked == 1 + sum(1 for p in pd.values() if p.grad_req != "null")

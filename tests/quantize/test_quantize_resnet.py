"""relay.quantize on the Gluon model-zoo ResNet-18 v1 (random weights): int8 top-1 agrees with
fp32.

Random weights make near-uniform logits, and plain noise images all land in one class (a
useless check). The inputs here are noise images with a random colour cast (per-channel offset
~ N(0, 2) plus U(-1, 1) pixels), which spread over several classes; calibration uses 8 more of
them. Agreement is measured on the *decisive* inputs: those whose fp32 top-1 logit leads the
second by at least 3% of the logit range (max - min); the int8 logits differ from fp32's by
1-3% of that range. The agreement on all inputs drawn is printed too. CI runs 64x64 images and
10 decisive inputs; the 200-input check at 224x224 with KL
calibration is the ``sweep`` marker's.
"""

import numpy as np
import pytest

import relay_tvm as relay

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is needed for the Gluon model zoo")
pytestmark = pytest.mark.mxnet

MARGIN = 0.03  # decisive: top-1 leads top-2 by 3% of the logit range


def _resnet18(size):
    mx.random.seed(0)
    net = mx.gluon.model_zoo.vision.get_model("resnet18_v1", pretrained=False)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net(mx.nd.zeros((1, 3, size, size)))
    rng = np.random.default_rng(0)
    for name, p in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, p.shape).astype("float32")))
        elif name.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.array(rng.uniform(-0.2, 0.2, p.shape).astype("float32")))
    net.hybridize()
    return relay.frontend.from_mxnet(net, shape={"data": (1, 3, size, size)})


def _images(seed, size):
    r = np.random.default_rng(seed)
    while True:
        yield (r.normal(0, 2, (1, 3, 1, 1)) + r.uniform(-1, 1, (1, 3, size, size))
               ).astype("float32")


def _agreement(size, n_decisive, mode, n_cal=8, max_candidates=None):
    import tvm

    from relay_tvm.runtime import GraphModule

    mod, params = _resnet18(size)
    gen = _images(1, size)
    cal = [{"data": next(gen)} for _ in range(n_cal)]
    with relay.quantize.qconfig(calibrate_mode=mode, weight_scale="max"):
        qmod = relay.quantize.quantize(mod, params, dataset=cal)
    assert str(qmod).count('out_dtype="int32"') == 19  # every conv2d but the first
    fp = GraphModule(relay.build(mod, target="llvm", params=params)["default"](tvm.cpu(0)))
    q8 = GraphModule(relay.build(qmod, target="llvm")["default"](tvm.cpu(0)))
    decisive = agree_decisive = agree_all = seen = 0
    classes = set()
    for x in _images(2, size):
        fp.set_input("data", x)
        fp.run()
        a = fp.get_output(0).numpy()[0]
        q8.set_input("data", x)
        q8.run()
        b = q8.get_output(0).numpy()[0]
        seen += 1
        same = int(a.argmax() == b.argmax())
        agree_all += same
        s = np.sort(a)
        if s[-1] - s[-2] >= MARGIN * (s[-1] - s[0]):
            decisive += 1
            agree_decisive += same
            classes.add(int(a.argmax()))
        if decisive == n_decisive or (max_candidates and seen >= max_candidates):
            break
    print(f"\nresnet18_v1 {size}x{size} {mode}: int8 top-1 = fp32 top-1 on "
          f"{agree_decisive}/{decisive} decisive inputs ({len(classes)} classes), "
          f"{agree_all}/{seen} of all inputs drawn")
    return agree_decisive, decisive, classes


def test_resnet18_int8_top1_agrees_small():
    agree, n, classes = _agreement(64, 10, "percentile", n_cal=8, max_candidates=600)
    assert n == 10 and len(classes) >= 2
    assert agree >= 9


@pytest.mark.sweep
def test_resnet18_int8_top1_agrees_200_inputs():
    agree, n, classes = _agreement(224, 200, "kl_divergence", n_cal=8, max_candidates=3000)
    assert n == 200 and len(classes) >= 2  # measured: 2 classes among the decisive 200
    assert agree >= 198  # >= 99%

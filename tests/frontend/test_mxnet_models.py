"""End to end: Gluon model-zoo networks with random weights, imported from the Block and from
exported files (in a subprocess where ``import mxnet`` fails), compiled at opt levels 0 and 3;
outputs must equal MXNet's within 1e-4 relative.

CI runs a representative subset; the full sweep (every network x batch 1 and 4 x both import
paths x both opt levels) runs with ``-m sweep``.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from mx_helpers import assert_close, randomize_block, run_mod

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the model tests")
import relay_tvm as relay  # noqa: E402

pytestmark = pytest.mark.mxnet

NETS = {  # name: smallest convenient image size
    "alexnet": 224, "densenet121": 224, "inceptionv3": 299, "mobilenet1.0": 224,
    "mobilenet0.25": 224, "mobilenetv2_1.0": 224, "resnet18_v1": 224, "resnet50_v1": 224,
    "resnet18_v2": 224, "resnet50_v2": 224, "squeezenet1.0": 224, "squeezenet1.1": 224,
    "vgg11": 224, "vgg16_bn": 224,
}
CI_NETS = {"resnet18_v1": 64, "mobilenet0.25": 64, "squeezenet1.1": 224}


def _net(name, batch, size, seed=0):
    net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    net.initialize()
    x = np.random.default_rng(seed).uniform(-1, 1, (batch, 3, size, size)).astype("float32")
    net(mx.nd.array(x))  # materializes deferred-init parameters
    randomize_block(net, seed)
    net.hybridize()
    expected = net(mx.nd.array(x)).asnumpy()
    return net, x, expected


_EXPORT_RUNNER = textwrap.dedent("""
    import json, sys
    sys.modules["mxnet"] = None  # MXNet must not be needed to import exported files
    import numpy as np
    import relay_tvm as relay
    cfg = json.loads(sys.argv[1])
    x = np.load(cfg["input"])
    mod, params = relay.frontend.from_mxnet(cfg["symbol"], shape={"data": x.shape},
                                            arg_params=cfg["params"])
    assert "mxnet" not in [m for m in sys.modules if sys.modules[m] is not None]
    with relay.transform.PassContext(opt_level=cfg["opt_level"]):
        lib = relay.build(mod, target="llvm", params=params)
    from relay_tvm.runtime import GraphModule
    import tvm
    m = GraphModule(lib["default"](tvm.cpu(0)))
    m.set_input("data", x)
    m.run()
    np.save(cfg["output"], m.get_output(0).numpy())
""")


def _check_exported(tmp_path, net, x, expected, opt_level):
    prefix = str(tmp_path / "model")
    net.export(prefix)
    np.save(tmp_path / "x.npy", x)
    cfg = {"symbol": prefix + "-symbol.json", "params": prefix + "-0000.params",
           "input": str(tmp_path / "x.npy"), "output": str(tmp_path / "y.npy"),
           "opt_level": opt_level}
    proc = subprocess.run([sys.executable, "-c", _EXPORT_RUNNER, json.dumps(cfg)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_close(np.load(tmp_path / "y.npy"), expected, rtol=1e-4)


def _check_block(net, x, expected, opt_level):
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    got = run_mod(mod, params, {"data": x}, kind="graph", opt_level=opt_level)[0]
    assert_close(got, expected, rtol=1e-4)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", list(CI_NETS))
def test_model_zoo_block(name, opt_level):
    net, x, expected = _net(name, 1, CI_NETS[name])
    _check_block(net, x, expected, opt_level)


def test_model_zoo_exported_without_mxnet(tmp_path):
    net, x, expected = _net("resnet18_v1", 1, 64)
    _check_exported(tmp_path, net, x, expected, opt_level=3)


def test_unhybridized_block_and_symbol():
    net = mx.gluon.model_zoo.vision.get_model("mobilenet0.25", pretrained=False)
    net.initialize()  # parameters still deferred: from_mxnet materializes them
    x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 32, 32)).astype("float32")
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    randomize_block(net, 1)
    expected = net(mx.nd.array(x)).asnumpy()
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    assert_close(run_mod(mod, params, {"data": x})[0], expected, rtol=1e-4)
    # the same network as an mx.sym.Symbol with arg/aux dicts of NDArrays
    sym = net(mx.sym.var("data"))
    args = {k: v.data() for k, v in net.collect_params().items()}
    aux = {k: args.pop(k) for k in list(args) if "running" in k}
    mod, params = relay.frontend.from_mxnet(sym, shape={"data": x.shape}, arg_params=args,
                                            aux_params=aux)
    assert_close(run_mod(mod, params, {"data": x})[0], expected, rtol=1e-4)


@pytest.mark.sweep
@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("name", list(NETS))
def test_sweep_block(name, batch, opt_level):
    net, x, expected = _net(name, batch, NETS[name])
    _check_block(net, x, expected, opt_level)


@pytest.mark.sweep
@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("name", list(NETS))
def test_sweep_exported(tmp_path, name, batch, opt_level):
    net, x, expected = _net(name, batch, NETS[name])
    _check_exported(tmp_path, net, x, expected, opt_level)

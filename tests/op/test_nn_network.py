"""Small networks built the way tvm.relay.testing builds its workloads: unannotated weights whose
types come from the operators' attributes (conv2d channels/kernel_size, dense units, the
batch_norm / bias_add vectors). Type inference must fill them in; the graph executor must agree
with the interpreter, and the interpreter with a NumPy forward pass."""

import numpy as np
import pytest
from nn_util import run_compiled, run_debug

import relay_tvm as relay
from relay_tvm.ir.types import TensorType


def _conv_bn_relu(x, name, channels, strides=1, groups=1, layout="NCHW"):
    kl = "OIHW" if layout == "NCHW" else ("HWOI" if groups > 1 else "HWIO")
    axis = 1 if layout == "NCHW" else 3
    y = relay.nn.conv2d(x, relay.var(f"{name}_w"), strides=strides, padding=1, groups=groups,
                        channels=channels, kernel_size=3, data_layout=layout, kernel_layout=kl)
    bn = relay.nn.batch_norm(y, *[relay.var(f"{name}_{p}") for p in
                                  ("gamma", "beta", "mean", "var")], axis=axis)
    return relay.nn.relu(bn[0])


def _mobilenet_like(layout):
    shape = (1, 3, 8, 8) if layout == "NCHW" else (1, 8, 8, 3)
    data = relay.var("data", shape=shape)
    y = _conv_bn_relu(data, "c1", 8, strides=2, layout=layout)
    y = _conv_bn_relu(y, "dw", 8, groups=8, layout=layout)  # depthwise
    y = relay.nn.max_pool2d(y, 3, 1, padding=1, layout=layout, ceil_mode=True)
    y = relay.nn.global_avg_pool2d(y, layout=layout)
    y = relay.nn.batch_flatten(y)
    y = relay.nn.dense(y, relay.var("fc_w"), units=5)
    y = relay.nn.bias_add(y, relay.var("fc_b"))
    y = relay.nn.dropout(y)
    y = relay.nn.softmax(y)
    params = relay.analysis.free_vars(y)
    return relay.IRModule.from_expr(relay.Function(params, y))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_mobilenet_like_block(layout):
    mod = relay.transform.InferType()(_mobilenet_like(layout))
    main = mod["main"]
    types = {p.name_hint: p.checked_type for p in main.params}
    w = (8, 3, 3, 3) if layout == "NCHW" else (3, 3, 3, 8)
    dw = (8, 1, 3, 3) if layout == "NCHW" else (3, 3, 8, 1)
    assert types["c1_w"] == TensorType(w, "float32")
    assert types["dw_w"] == TensorType(dw, "float32")
    assert types["c1_gamma"] == TensorType((8,), "float32")
    assert types["fc_w"] == TensorType((5, 8), "float32")
    assert types["fc_b"] == TensorType((5,), "float32")
    assert main.body.checked_type == TensorType((1, 5), "float32")

    rng = np.random.default_rng(0)
    args = []
    for p in main.params:
        shape = [int(d) for d in p.checked_type.shape]
        a = rng.uniform(-1, 1, shape).astype("float32")
        if p.name_hint.endswith("_var"):
            a = np.abs(a) + 0.5
        args.append(a)
    got_debug = run_debug(_mobilenet_like(layout), args)
    # as relay.build(mod, params=...) is used: the weights bound by name, the data an input
    names = [p.name_hint for p in main.params]
    params = {n: a for n, a in zip(names, args) if n != "data"}
    ex = relay.create_executor("graph", mod=_mobilenet_like(layout), target="llvm", params=params)
    got_graph = ex.evaluate()(args[names.index("data")]).numpy()
    np.testing.assert_allclose(got_graph, got_debug, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_debug.sum(axis=1), 1.0, rtol=1e-5)
    if layout == "NCHW":
        np.testing.assert_allclose(got_debug, _numpy_forward(dict(zip(
            [p.name_hint for p in main.params], args))), rtol=1e-4, atol=1e-6)


def _numpy_forward(a):
    """The NCHW network in plain NumPy (sliding windows), for an end-to-end check."""
    from numpy.lib.stride_tricks import sliding_window_view as windows

    def conv(x, w, stride, groups):
        x = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = windows(x, (3, 3), axis=(2, 3))[:, :, ::stride, ::stride]  # N C OH OW 3 3
        o = w.shape[0]
        cg = w.shape[1]
        outs = []
        for oc in range(o):
            g = oc // (o // groups)
            outs.append(np.einsum("nchwij,cij->nhw", win[:, g * cg:(g + 1) * cg], w[oc]))
        return np.stack(outs, axis=1)

    def bn_relu(x, n):
        s = a[f"{n}_gamma"] / np.sqrt(a[f"{n}_var"] + 1e-5)
        y = (x - a[f"{n}_mean"][:, None, None]) * s[:, None, None] + a[f"{n}_beta"][:, None, None]
        return np.maximum(y, 0)

    x = a["data"].astype("float64")
    x = bn_relu(conv(x, a["c1_w"], 2, 1), "c1")
    x = bn_relu(conv(x, a["dw_w"], 1, 8), "dw")
    x = windows(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf),
                (3, 3), axis=(2, 3)).max(axis=(4, 5))
    x = x.mean(axis=(2, 3))
    x = x @ a["fc_w"].T + a["fc_b"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_unannotated_weights_compile_without_params():
    mod = _mobilenet_like("NCHW")
    typed = relay.transform.InferType()(mod)
    args = [np.ones([int(d) for d in p.checked_type.shape], "float32") for p in typed["main"].params]
    out = run_compiled(_mobilenet_like("NCHW"), args)
    np.testing.assert_allclose(out, run_debug(_mobilenet_like("NCHW"), args), rtol=1e-5)

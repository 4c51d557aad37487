"""Reference outputs of MXNet 1.9.1's quantized operators with its MKLDNN backend, written by a
separate process (``python mx_quantized_ref.py OUT_DIR [--sweep]``): the frontend tests'
conftest turns MKLDNN off in the test process, and MXNet reads that setting once.

For each case ``NAME``: ``NAME-symbol.json`` and ``NAME.npz`` (``in:<input>``, ``arg:<param>``,
``out:<i>``). Data fed to int8 convolutions stays within 128 quanta: on CPUs without VNNI
MKLDNN's u8 x s8 kernels (vpmaddubsw) saturate pair sums at int16, which exact integer
arithmetic (and MXNet on VNNI CPUs) does not do.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

CASES = ["quantize_v2_auto", "quantize_v2_int8", "quantize_v1", "dequantize_int8",
         "requantize", "quantized_act_flatten", "quantized_pooling", "quantized_elemwise_add",
         "quantized_concat", "quantized_conv", "quantized_fully_connected", "small_net"]


def _save(out_dir, name, sym, inputs, params, outs, dtypes=None):
    with open(os.path.join(out_dir, f"{name}-symbol.json"), "w") as f:
        f.write(sym.tojson())
    arrays = {f"in:{k}": v for k, v in inputs.items()}
    arrays.update({f"arg:{k}": v for k, v in params.items()})
    arrays.update({f"out:{i}": o for i, o in enumerate(outs)})
    np.savez(os.path.join(out_dir, f"{name}.npz"), **arrays)


def _run(sym, inputs, params):
    import mxnet as mx

    args = {k: mx.nd.array(v, dtype=v.dtype) for k, v in {**inputs, **params}.items()}
    ex = sym.bind(mx.cpu(), args)
    return [o.asnumpy() for o in ex.forward()]


def build_cases(out_dir):
    import mxnet as mx

    S = mx.sym
    rng = np.random.default_rng(0)
    d = S.var("data")
    # exact ties of 127.5 quanta per unit: k + 0.5 quanta
    ties = (np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 200, -200], "float32") / 127.5)
    cases = {}
    x = rng.uniform(-0.2, 1.2, (2, 3, 4, 4)).astype("float32")
    q = S.contrib.quantize_v2(d, out_type="auto", min_calib_range=0.0, max_calib_range=1.0)
    cases["quantize_v2_auto"] = (S.Group([q[0], q[1], q[2]]), {"data": x}, {})
    q = S.contrib.quantize_v2(d, out_type="int8", min_calib_range=-1.0, max_calib_range=1.0)
    cases["quantize_v2_int8"] = (q[0], {"data": np.concatenate([ties, x.ravel()])}, {})
    mn, mxv = S.var("mn"), S.var("mx")
    q8 = S.contrib.quantize(d, mn, mxv, out_type="int8")
    qu = S.contrib.quantize(d, mn, mxv, out_type="uint8")
    cases["quantize_v1"] = (S.Group([q8[0], qu[0]]), {"data": x},
                            {"mn": np.array([-0.8], "float32"), "mx": np.array([1.0], "float32")})
    q = S.contrib.quantize_v2(d, out_type="int8", min_calib_range=-0.7, max_calib_range=0.9)
    dq = S.contrib.dequantize(q[0], q[1], q[2])
    cases["dequantize_int8"] = (dq, {"data": x}, {})
    di = S.var("data", dtype="int32")
    r = S.contrib.requantize(di, mn, mxv, min_calib_range=-0.3, max_calib_range=0.3)
    xi = rng.integers(-2**31 + 1, 2**31 - 1, (64,)).astype("int32") // 8
    cases["requantize"] = (S.Group([r[0], r[1], r[2]]), {"data": xi},
                           {"mn": np.array([-2.0], "float32"), "mx": np.array([2.0], "float32")})
    q = S.contrib.quantize_v2(d, out_type="int8", min_calib_range=-1.0, max_calib_range=1.0)
    a = S.contrib.quantized_act(q[0], q[1], q[2], act_type="relu")
    fl = S.contrib.quantized_flatten(a[0], a[1], a[2])
    cases["quantized_act_flatten"] = (S.contrib.dequantize(fl[0], fl[1], fl[2]), {"data": x}, {})
    q = S.contrib.quantize_v2(d, out_type="uint8", min_calib_range=0.0, max_calib_range=1.0)
    pm = S.contrib.quantized_pooling(q[0], q[1], q[2], kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                     pool_type="max")
    pa = S.contrib.quantized_pooling(q[0], q[1], q[2], kernel=(2, 2), stride=(1, 1),
                                     pool_type="avg")
    pg = S.contrib.quantized_pooling(q[0], q[1], q[2], kernel=(1, 1), global_pool=True,
                                     pool_type="avg")
    cases["quantized_pooling"] = (S.Group([pm[0], pa[0], pg[0]]), {"data": np.abs(x)}, {})
    d2 = S.var("data2")
    qa = S.contrib.quantize_v2(d, out_type="int8", min_calib_range=-1.0, max_calib_range=1.0)
    qb = S.contrib.quantize_v2(d2, out_type="uint8", min_calib_range=0.0, max_calib_range=2.0)
    ad = S.contrib.quantized_elemwise_add(qa[0], qb[0], qa[1], qa[2], qb[1], qb[2],
                                          min_calib_range=-1.0, max_calib_range=3.0)
    x2 = rng.uniform(0, 2, x.shape).astype("float32")
    cases["quantized_elemwise_add"] = (S.Group([ad[0], ad[1], ad[2]]), {"data": x, "data2": x2},
                                       {})
    qa = S.contrib.quantize_v2(d, out_type="uint8", min_calib_range=0.0, max_calib_range=1.0)
    qb = S.contrib.quantize_v2(d2, out_type="uint8", min_calib_range=0.0, max_calib_range=2.0)
    cc = S.contrib.quantized_concat(qa[0], qb[0], qa[1], qa[2], qb[1], qb[2], dim=1,
                                    num_args=2)
    cases["quantized_concat"] = (S.Group([cc[0], cc[1], cc[2]]), {"data": np.abs(x), "data2": x2},
                                 {})
    w = S.var("w", dtype="int8")
    wmn, wmx = S.var("wmn"), S.var("wmx")
    qd = S.contrib.quantize_v2(d, out_type="uint8", min_calib_range=0.0, max_calib_range=2.0)
    cv = S.contrib.quantized_conv(data=qd[0], weight=w, min_data=qd[1], max_data=qd[2],
                                  min_weight=wmn, max_weight=wmx, kernel=(3, 3), pad=(1, 1),
                                  num_filter=5, no_bias=True)
    rq = S.contrib.requantize(cv[0], cv[1], cv[2], min_calib_range=-3.0, max_calib_range=3.0)
    wv = rng.integers(-127, 128, (5, 3, 3, 3)).astype("int8")
    wr = {"w": wv, "wmn": np.array([-0.5], "float32"), "wmx": np.array([0.5], "float32")}
    cases["quantized_conv"] = (S.Group([cv[0], cv[1], cv[2], rq[0]]), {"data": np.abs(x)}, wr)
    fc = S.contrib.quantized_fully_connected(data=qd[0], weight=w, min_data=qd[1], max_data=qd[2],
                                             min_weight=wmn, max_weight=wmx, num_hidden=5,
                                             no_bias=True)
    wf = rng.integers(-127, 128, (5, 48)).astype("int8")
    cases["quantized_fully_connected"] = (
        S.Group([fc[0], fc[1], fc[2]]), {"data": np.abs(x)},
        {"w": wf, "wmn": np.array([-0.5], "float32"), "wmx": np.array([0.5], "float32")})
    for name, (sym, inputs, params) in cases.items():
        _save(out_dir, name, sym, inputs, params, _run(sym, inputs, params))


def quantized_gluon(net, shape, out_dir, name, seed=0):
    """``quantize_net`` (naive calibration on {2x, x'}) of an initialized Gluon block; exports
    it and MXNet's output on x."""
    import mxnet as mx
    from mxnet.contrib.quantization import quantize_net

    rng = np.random.RandomState(seed)
    x = rng.uniform(size=shape).astype("float32")
    calib = np.concatenate([2 * x, rng.uniform(size=shape).astype("float32")])
    net.hybridize()
    fp = net(mx.nd.array(x)).asnumpy()
    ds = mx.gluon.data.ArrayDataset(mx.nd.array(calib), mx.nd.zeros((calib.shape[0],)))
    qnet = quantize_net(net, quantized_dtype="auto", calib_mode="naive",
                        calib_data=mx.gluon.data.DataLoader(ds, batch_size=calib.shape[0]),
                        num_calib_examples=calib.shape[0], ctx=mx.cpu())
    out = qnet(mx.nd.array(x)).asnumpy()
    qnet.export(os.path.join(out_dir, name))
    np.savez(os.path.join(out_dir, f"{name}.npz"), **{"in:data": x, "out:0": out, "fp32": fp})


def small_net():
    import mxnet as mx
    from mxnet.gluon import nn

    class Net(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2D(8, 3, padding=1, use_bias=False)
            self.b1 = nn.BatchNorm()
            self.c2 = nn.Conv2D(8, 3, padding=1)
            self.b2 = nn.BatchNorm()
            self.pool = nn.MaxPool2D(2)
            self.fc = nn.Dense(10)

        def hybrid_forward(self, F, x):
            y = F.relu(self.b1(self.c1(x)))
            z = F.relu(self.b2(self.c2(y)) + y)
            return self.fc(self.pool(z))

    mx.random.seed(1)
    net = Net()
    net.initialize(mx.init.Xavier())
    return net


def fused_float(net, shape, out_dir, name):
    """The MKLDNN subgraph backend's float fusion (``_sg_mkldnn_conv`` with BN/ReLU/sum,
    ``_sg_mkldnn_fully_connected``) of a Gluon block, and MXNet's output."""
    import mxnet as mx

    x = np.random.RandomState(3).uniform(size=shape).astype("float32")
    net.hybridize()
    net(mx.nd.array(x))
    net.export(os.path.join(out_dir, name + "_plain"))
    sym, args, aux = mx.model.load_checkpoint(os.path.join(out_dir, name + "_plain"), 0)
    fused = sym.get_backend_symbol("MKLDNN")
    ex = fused.bind(mx.cpu(), {"data": mx.nd.array(x), **args}, aux_states=aux)
    out = ex.forward()[0].asnumpy()
    with open(os.path.join(out_dir, f"{name}-symbol.json"), "w") as f:
        f.write(fused.tojson())
    mx.nd.save(os.path.join(out_dir, f"{name}-0000.params"),
               {**{"arg:" + k: v for k, v in args.items()},
                **{"aux:" + k: v for k, v in aux.items()}})
    np.savez(os.path.join(out_dir, f"{name}.npz"), **{"in:data": x, "out:0": out})


def main():
    os.environ["MXNET_MKLDNN_ENABLED"] = "1"
    out_dir = sys.argv[1]
    build_cases(out_dir)
    quantized_gluon(small_net(), (1, 3, 8, 8), out_dir, "small_net")
    fused_float(small_net(), (1, 3, 8, 8), out_dir, "small_net_fused_float")
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    size = 224 if "--sweep" in sys.argv else 32
    mx.random.seed(0)
    net = vision.get_model("resnet18_v1", pretrained=False)
    net.initialize(mx.init.Xavier())
    quantized_gluon(net, (1, 3, size, size), out_dir, f"resnet18_v1_{size}")
    print(json.dumps({"ok": True}))


if __name__ == "__main__":
    main()

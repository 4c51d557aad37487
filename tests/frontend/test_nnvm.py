"""The legacy NNVM frontend on NNVM-format graphs written here (ResNet-style block, MLP),
against NumPy; parameters as dicts and as nnvm.compiler.save_param_dict files."""

import json
import struct

import numpy as np
import pytest
from mx_helpers import run_mod

import relay_tvm as relay
from relay_tvm.errors import ConversionError, OpNotImplemented


class G:
    """A tiny writer of NNVM graph JSON (the layout nnvm.graph.Graph.json() produced)."""

    def __init__(self):
        self.nodes = []

    def var(self, name):
        self.nodes.append({"op": "null", "name": name, "inputs": []})
        return len(self.nodes) - 1

    def op(self, op, name, inputs, **attrs):
        self.nodes.append({"op": op, "name": name, "inputs": [[i, 0, 0] for i in inputs],
                           "attrs": {k: str(v) for k, v in attrs.items()}})
        return len(self.nodes) - 1

    def json(self, heads=None):
        return json.dumps({
            "nodes": self.nodes,
            "arg_nodes": [i for i, n in enumerate(self.nodes) if n["op"] == "null"],
            "node_row_ptr": list(range(len(self.nodes) + 1)),
            "heads": [[h, 0, 0] for h in (heads or [len(self.nodes) - 1])],
            "attrs": {}})


def save_tvm_params(params) -> bytes:
    """TVM's legacy NDArray-list format, as nnvm.compiler.save_param_dict wrote it."""
    out = [struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, len(params))]
    for k in params:
        b = k.encode()
        out.append(struct.pack("<Q", len(b)) + b)
    out.append(struct.pack("<Q", len(params)))
    codes = {"f": 2, "i": 0, "u": 1}
    for v in params.values():
        v = np.ascontiguousarray(v)
        out.append(struct.pack("<QQiii", 0xDD5E40F096B4A13F, 0, 1, 0, v.ndim))
        out.append(struct.pack("<BBH", codes[v.dtype.kind], v.dtype.itemsize * 8, 1))
        out.append(struct.pack(f"<{v.ndim}q", *v.shape))
        out.append(struct.pack("<Q", v.nbytes) + v.tobytes())
    return b"".join(out)


def _conv(x, w, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    h, wd = xp.shape[2] - k + 1, xp.shape[3] - k + 1
    out = np.zeros((x.shape[0], w.shape[0], h, wd))
    for i in range(h):
        for j in range(wd):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i + k, j:j + k], w)
    return out


def _bn(x, p, name, eps=1e-5):
    g, b, m, v = (p[f"{name}_{s}"][None, :, None, None] for s in
                  ("gamma", "beta", "moving_mean", "moving_var"))
    return (x - m) / np.sqrt(v + eps) * g + b


def _resnet_block():
    g = G()
    data = g.var("data")
    w0 = g.var("conv0_weight")
    c0 = g.op("conv2d", "conv0", [data, w0], channels=4, kernel_size="(3, 3)",
              padding="(1, 1)", use_bias="False")
    bn0 = g.op("batch_norm", "bn0", [c0] + [g.var(f"bn0_{s}") for s in
                                          ("gamma", "beta", "moving_mean", "moving_var")])
    r0 = g.op("relu", "relu0", [bn0])
    w1 = g.var("conv1_weight")
    c1 = g.op("conv2d", "conv1", [r0, w1], channels=4, kernel_size="(3, 3)",
              padding="(1, 1)", use_bias="False")
    bn1 = g.op("batch_norm", "bn1", [c1] + [g.var(f"bn1_{s}") for s in
                                          ("gamma", "beta", "moving_mean", "moving_var")])
    add = g.op("elemwise_add", "add0", [bn1, r0])
    r1 = g.op("relu", "relu1", [add])
    mp = g.op("max_pool2d", "pool0", [r1], pool_size="(2, 2)", strides="(2, 2)")
    gp = g.op("global_avg_pool2d", "gap", [mp])
    fl = g.op("flatten", "flat", [gp])
    fc = g.op("dense", "fc", [fl, g.var("fc_weight"), g.var("fc_bias")], units=3)
    sc = g.op("broadcast_mul", "scale", [fc, g.var("scale")])
    g.op("softmax", "prob", [sc], axis=1)
    rng = np.random.default_rng(0)
    p = {"conv0_weight": rng.standard_normal((4, 4, 3, 3)) * 0.3,
         "conv1_weight": rng.standard_normal((4, 4, 3, 3)) * 0.3,
         "fc_weight": rng.standard_normal((3, 4)), "fc_bias": rng.standard_normal(3),
         "scale": rng.uniform(0.5, 1.5, (1, 3))}
    for bn in ("bn0", "bn1"):
        p[f"{bn}_gamma"] = rng.uniform(0.5, 1.5, 4)
        p[f"{bn}_beta"] = rng.uniform(-0.2, 0.2, 4)
        p[f"{bn}_moving_mean"] = rng.uniform(-0.2, 0.2, 4)
        p[f"{bn}_moving_var"] = rng.uniform(0.5, 1.5, 4)
    p = {k: v.astype("float32") for k, v in p.items()}

    def ref(x):
        r0 = np.maximum(_bn(_conv(x, p["conv0_weight"], 1), p, "bn0"), 0)
        r1 = np.maximum(_bn(_conv(r0, p["conv1_weight"], 1), p, "bn1") + r0, 0)
        n, ch, h, w = r1.shape
        mp = r1.reshape(n, ch, h // 2, 2, w // 2, 2).max((3, 5))
        fc = (mp.mean((2, 3)) @ p["fc_weight"].T + p["fc_bias"]) * p["scale"]
        e = np.exp(fc - fc.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    return g, p, ref


@pytest.mark.parametrize("as_file", [False, True])
def test_resnet_block(tmp_path, as_file):
    g, p, ref = _resnet_block()
    params = p
    if as_file:
        params = str(tmp_path / "deploy.params")
        (tmp_path / "deploy.params").write_bytes(save_tvm_params(p))
    mod, bound = relay.frontend.from_nnvm(g.json(), params=params, shape={"data": (2, 4, 6, 6)})
    x = np.random.default_rng(1).standard_normal((2, 4, 6, 6)).astype("float32")
    got = run_mod(mod, bound, {"data": x})[0]
    np.testing.assert_allclose(got, ref(x), rtol=1e-4, atol=1e-5)
    # every converted expression carries its NNVM node name
    assert mod["main"].body.span.source_name == "prob"


def test_resnet_block_compiled():
    g, p, ref = _resnet_block()
    mod, bound = relay.frontend.from_nnvm(g.json(), params=p, shape={"data": (1, 4, 6, 6)})
    x = np.random.default_rng(2).standard_normal((1, 4, 6, 6)).astype("float32")
    got = run_mod(mod, bound, {"data": x}, kind="graph", opt_level=3)[0]
    np.testing.assert_allclose(got, ref(x), rtol=1e-4, atol=1e-5)


def test_mlp():
    g = G()
    x = g.var("x")
    h = g.op("dense", "fc1", [x, g.var("w1"), g.var("b1")], units=8)
    h = g.op("leaky_relu", "act1", [h], alpha=0.1)
    h = g.op("dense", "fc2", [h, g.var("w2")], units=5, use_bias="False")
    h = g.op("__mul_scalar__", "mul", [h], scalar=0.5)
    h = g.op("tanh", "act2", [h])
    h = g.op("reshape", "r", [h], shape="(0, -4, 1, -1)")
    h = g.op("sum", "s", [h], axis="(1,)")
    g.op("log_softmax", "out", [h], axis=-1)
    rng = np.random.default_rng(3)
    p = {"w1": rng.standard_normal((8, 6)), "b1": rng.standard_normal(8),
         "w2": rng.standard_normal((5, 8))}
    p = {k: v.astype("float32") for k, v in p.items()}
    xv = rng.standard_normal((3, 6)).astype("float32")
    mod, bound = relay.frontend.from_nnvm(g.json(), params=save_tvm_params(p),
                                          shape={"x": (3, 6)})
    got = run_mod(mod, bound, {"x": xv})[0]
    h = xv @ p["w1"].T + p["b1"]
    h = np.where(h > 0, h, 0.1 * h)
    h = np.tanh(0.5 * (h @ p["w2"].T))
    e = h - h.max(-1, keepdims=True)
    np.testing.assert_allclose(got, e - np.log(np.exp(e).sum(-1, keepdims=True)), rtol=1e-5,
                               atol=1e-6)


def test_nnvm_errors():
    g = G()
    x = g.var("x")
    g.op("yolo_reorg", "y0", [x])
    g.op("yolo_reorg", "y1", [1])
    with pytest.raises(OpNotImplemented, match=r"NNVM frontend: yolo_reorg \(2: nodes 'y0', 'y1'\)"):
        relay.frontend.from_nnvm(g.json(), shape={"x": (1, 2)})
    g, p, _ = _resnet_block()
    with pytest.raises(ConversionError, match="truncated parameter file"):
        relay.frontend.from_nnvm(g.json(), params=save_tvm_params(p)[:-5],
                                 shape={"data": (1, 4, 6, 6)})
    del p["fc_bias"]
    with pytest.raises(ConversionError, match="variable 'fc_bias'"):
        relay.frontend.from_nnvm(g.json(), params=p, shape={"data": (1, 4, 6, 6)})


def test_to_relay_operators():
    """The rest of what nnvm.to_relay mapped: comparisons with out_type, split (sections and
    indices), strided_slice, squeeze, expand_dims, concatenate, transpose, clip, round,
    broadcast_to, full_like, pad, avg_pool2d, upsampling, conv2d_transpose, __rshift_scalar__."""
    g = G()
    x = g.var("x")
    y = g.var("y")
    gt = g.op("greater", "gt", [x, y], out_type="float32")
    le = g.op("less_equal", "le", [x, y])
    sp = g.op("split", "sp", [x], indices_or_sections="2", axis=1)
    sl = g.op("strided_slice", "sl", [x], begin="(0, 1)", end="(2, 4)", strides="(1, 2)")
    sq = g.op("squeeze", "sq", [g.op("expand_dims", "ed", [x], axis=0)], axis="(0,)")
    cc = g.op("concatenate", "cc", [x, y], axis=0)
    tr = g.op("transpose", "tr", [g.op("clip", "cl", [x], a_min=-0.5, a_max=0.5)], axes="(1, 0)")
    rd = g.op("round", "rd", [g.op("__mul_scalar__", "m3", [x], scalar=3.0)])
    bt = g.op("broadcast_to", "bt", [g.op("sum", "sm", [x], axis="(1,)", keepdims="True")],
              shape="(2, 4)")
    fl = g.op("full_like", "fl", [x], fill_value=2.5)
    heads = [gt, le, sp, sl, sq, cc, tr, rd, bt, fl]
    rng = np.random.default_rng(4)
    xv = rng.uniform(-1, 1, (2, 4)).astype("float32")
    yv = rng.uniform(-1, 1, (2, 4)).astype("float32")
    mod, _ = relay.frontend.from_nnvm(g.json(heads), shape={"x": (2, 4), "y": (2, 4)})
    got = run_mod(mod, {}, {"x": xv, "y": yv})
    want = [(xv > yv).astype("float32"), xv <= yv, xv[:, :2], xv[0:2, 1:4:2], xv,
            np.concatenate([xv, yv], 0), np.clip(xv, -0.5, 0.5).T, np.round(3 * xv),
            np.broadcast_to(xv.sum(1, keepdims=True), (2, 4)), np.full((2, 4), 2.5, "float32")]
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype, i
        np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=str(i))


def test_to_relay_image_ops():
    g = G()
    x = g.var("x")
    p = g.op("pad", "pad", [x], pad_width="((0, 0), (0, 0), (1, 0), (0, 1))", pad_value=1.0)
    a = g.op("avg_pool2d", "ap", [p], pool_size="(2, 2)", strides="(2, 2)")
    u = g.op("upsampling", "up", [a], scale=2)
    t = g.op("conv2d_transpose", "ct", [u, g.var("w")], channels=1, kernel_size="(2, 2)",
             strides="(2, 2)", use_bias="False")
    g.op("__rshift_scalar__", "sh", [g.op("cast", "ci", [t], dtype="int32")], scalar=1)
    rng = np.random.default_rng(5)
    xv = rng.uniform(-4, 4, (1, 2, 3, 3)).astype("float32")
    w = rng.uniform(-2, 2, (2, 1, 2, 2)).astype("float32")
    mod, params = relay.frontend.from_nnvm(g.json(), params={"w": w}, shape={"x": xv.shape})
    got = run_mod(mod, params, {"x": xv})[0]
    xp = np.pad(xv, ((0, 0), (0, 0), (1, 0), (0, 1)), constant_values=1.0)
    ap = xp.reshape(1, 2, 2, 2, 2, 2).mean((3, 5))
    up = ap.repeat(2, 2).repeat(2, 3)
    ct = np.einsum("nchw,cokl->nohkwl", up, w).reshape(1, 1, 8, 8)
    np.testing.assert_array_equal(got, ct.astype("float32").astype("int32") >> 1)


def test_wrong_importer_gets_a_hint():
    g = G()
    g.op("dense", "fc1", [g.var("x"), g.var("w1")], units=4, use_bias="False")
    with pytest.raises(OpNotImplemented, match=r"dense \(1: node 'fc1'\).*looks like an NNVM graph"):
        relay.frontend.from_mxnet(g.json(), shape={"x": (2, 3)})


def _run_nnvm(g, shapes, inputs, dtype="float32", kind="debug"):
    mod, params = relay.frontend.from_nnvm(g.json(), shape=shapes, dtype=dtype)
    return run_mod(mod, params, inputs, kind=kind)[0]


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_nnvm_matmul_elemwise_sum_reshape_like_collapse_sum(kind):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)).astype("float32"), rng.normal(size=(4, 5)).astype("float32")
    g = G()
    x, y = g.var("a"), g.var("b")
    g.op("matmul", "mm", [x, y])
    np.testing.assert_allclose(_run_nnvm(g, {"a": a.shape, "b": b.shape}, {"a": a, "b": b},
                                         kind=kind), a @ b, rtol=1e-5)
    g = G()
    x, y = g.var("a"), g.var("b")
    g.op("matmul", "mm", [x, y], transpose_b="True")
    bt = rng.normal(size=(5, 4)).astype("float32")
    np.testing.assert_allclose(_run_nnvm(g, {"a": a.shape, "b": bt.shape}, {"a": a, "b": bt},
                                         kind=kind), a @ bt.T, rtol=1e-5)
    g = G()
    vs = [g.var(n) for n in "pqr"]
    g.op("elemwise_sum", "s", vs, num_args=3)
    p, q, r = (rng.normal(size=(2, 3)).astype("float32") for _ in range(3))
    np.testing.assert_allclose(_run_nnvm(g, {n: (2, 3) for n in "pqr"},
                                         {"p": p, "q": q, "r": r}, kind=kind), p + q + r,
                               rtol=1e-6)
    g = G()
    x, y = g.var("x"), g.var("like")
    g.op("reshape_like", "rl", [x, y])
    xv = np.arange(12, dtype="float32").reshape(3, 4)
    got = _run_nnvm(g, {"x": (3, 4), "like": (2, 6)},
                    {"x": xv, "like": np.zeros((2, 6), "float32")}, kind=kind)
    np.testing.assert_array_equal(got, xv.reshape(2, 6))
    g = G()
    x, y = g.var("x"), g.var("like")
    g.op("collapse_sum", "cs", [x, y])
    xv = rng.normal(size=(2, 3, 4)).astype("float32")
    got = _run_nnvm(g, {"x": xv.shape, "like": (3, 1)},
                    {"x": xv, "like": np.zeros((3, 1), "float32")}, kind=kind)
    np.testing.assert_allclose(got, xv.sum(axis=(0, 2))[:, None], rtol=1e-5)


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_nnvm_shift_operators(kind):
    x = np.array([[1, -8, 5, 1024]], "int32")
    s = np.array([[0, 1, 2, 3]], "int32")
    for op, want in (("__lshift_scalar__", x << 2), ("__rshift_scalar__", x >> 2)):
        g = G()
        g.op(op, "sh", [g.var("x")], scalar=2)
        np.testing.assert_array_equal(_run_nnvm(g, {"x": x.shape}, {"x": x}, "int32", kind),
                                      want)
    for op, want in (("broadcast_left_shift", x << s), ("broadcast_right_shift", x >> s)):
        g = G()
        a, b = g.var("x"), g.var("s")
        g.op(op, "sh", [a, b])
        np.testing.assert_array_equal(
            _run_nnvm(g, {"x": x.shape, "s": s.shape}, {"x": x, "s": s}, "int32", kind), want)
    g = G()
    g.op("__lshift_scalar__", "sh", [g.var("x")], scalar=1)
    with pytest.raises(ConversionError, match="shifts need an integer input"):
        relay.frontend.from_nnvm(g.json(), shape={"x": (2,)})
    g = G()
    g.op("collapse_sum", "cs", [g.var("x"), g.var("y")], axis=1)
    with pytest.raises(ConversionError, match="attribute 'axis' is not supported"):
        relay.frontend.from_nnvm(g.json(), shape={"x": (2, 3), "y": (3,)})
    # an unknown upsampling method became nearest neighbour unsaid (fresh-user trial)
    g = G()
    g.op("upsampling", "up", [g.var("x")], scale=2, method="BICUBIC")
    with pytest.raises(ConversionError, match=r"method='BICUBIC' is not one of \['BILINEAR', "
                                              r"'NEAREST_NEIGHBOR'\]"):
        relay.frontend.from_nnvm(g.json(), shape={"x": (1, 1, 2, 2)})

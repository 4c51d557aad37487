"""MXNet detection operators through from_mxnet against MXNet itself (mx.nd / mx.sym
contrib operators), and a Gluon SSD-style detector with random weights."""

from __future__ import annotations

import numpy as np
import pytest
from mx_helpers import run_mod

import relay_tvm as relay

mx = pytest.importorskip("mxnet", reason="MXNet is the reference of these tests")


def _convert_run(sym, inputs, kind="debug"):
    mod, params = relay.frontend.from_mxnet(sym, shape={k: v.shape for k, v in inputs.items()})
    return run_mod(mod, params, inputs, kind=kind)


def _mx_run(sym, inputs):
    ex = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in inputs.items()})
    return [o.asnumpy() for o in ex.forward()]


def _check(sym, inputs, kinds=("debug",), rtol=1e-5, atol=1e-5):
    want = _mx_run(sym, inputs)[0]
    for kind in kinds:
        got = _convert_run(sym, inputs, kind)[0]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return want


def _boxes(rng, b, n, ids=3, tie_scores=True):
    d = rng.uniform(0, 1, (b, n, 6)).astype("float32")
    d[:, :, 0] = rng.integers(-1, ids, (b, n))
    if tie_scores:
        d[:, :, 1] = np.round(d[:, :, 1], 1)
    d[:, :, 4:] = d[:, :, 2:4] + rng.uniform(0.05, 0.6, (b, n, 2))
    return d


@pytest.mark.parametrize("kw", [
    {"overlap_thresh": 0.5},
    {"overlap_thresh": 0.3, "valid_thresh": 0.35, "topk": 8, "id_index": 0},
    {"overlap_thresh": 0.4, "force_suppress": True, "id_index": 0},
])
def test_box_nms_matches_mxnet(kw):
    rng = np.random.default_rng(0)
    d = _boxes(rng, 2, 30)
    sym = mx.sym.contrib.box_nms(mx.sym.var("d"), **kw)
    _check(sym, {"d": d}, kinds=("debug", "graph") if kw.get("topk") else ("debug",))


def test_box_nms_iou_equal_to_threshold_is_kept_as_in_mxnet():
    # IoU exactly 0.5: MXNet keeps both (suppresses only above the threshold)
    d = np.array([[[0, 0.9, 0, 0, 2, 1], [0, 0.8, 0, 0, 1, 1], [0, 0.8, 0, 0, 1, 1]]], "float32")
    want = _check(mx.sym.contrib.box_nms(mx.sym.var("d"), overlap_thresh=0.5, id_index=0),
                  {"d": d}, kinds=("debug", "graph"))
    np.testing.assert_array_equal(want[0, :2], d[0, :2])  # the tie (row 2) is suppressed by 1
    assert (want[0, 2] == -1).all()


def test_box_decode_matches_mxnet():
    rng = np.random.default_rng(1)
    data = rng.normal(0, 0.5, (2, 7, 4)).astype("float32")
    anchors = np.sort(rng.uniform(0, 1, (1, 7, 4)).astype("float32"), axis=-1)
    # the default format is "center" (anchors as x, y, w, h)
    for kw in ({}, {"format": "corner"},
               {"std0": 0.1, "std1": 0.1, "std2": 0.2, "std3": 0.2, "clip": 0.3}):
        sym = mx.sym.contrib.box_decode(mx.sym.var("d"), mx.sym.var("a"), **kw)
        _check(sym, {"d": data, "a": anchors})
    zero = np.zeros((1, 1, 4), "float32")
    got = _check(mx.sym.contrib.box_decode(mx.sym.var("d"), mx.sym.var("a")),
                 {"d": zero, "a": np.array([[[0, 0, 2, 4]]], "float32")})
    np.testing.assert_allclose(got, [[[-1, -2, 1, 2]]])


def test_multibox_prior_and_detection_match_mxnet():
    rng = np.random.default_rng(2)
    feat = np.zeros((1, 2, 3, 4), "float32")
    prior = mx.sym.contrib.MultiBoxPrior(mx.sym.var("f"), sizes=(0.4, 0.2), ratios=(1, 2, 0.5),
                                         steps=(0.3, 0.25), offsets=(0.5, 0.4), clip=True)
    anchors = _check(prior, {"f": feat}, kinds=("debug", "graph"))
    n = anchors.shape[1]
    cls = rng.uniform(0, 1, (2, 4, n)).astype("float32")
    cls /= cls.sum(1, keepdims=True)
    loc = rng.normal(0, 1, (2, n * 4)).astype("float32")
    for kw in ({"threshold": 0.2}, {"threshold": 0.25, "nms_threshold": 0.3,
                                    "force_suppress": True, "nms_topk": 10}):
        sym = mx.sym.contrib.MultiBoxDetection(mx.sym.var("c"), mx.sym.var("l"),
                                               mx.sym.var("a"), **kw)
        inputs = {"c": cls, "l": loc, "a": anchors}
        want = _mx_run(sym, inputs)[0]
        for kind in ("debug", "graph"):
            got = _convert_run(sym, inputs, kind)[0]
            _same_detections(got, want)


def _same_detections(got, want, atol=1e-4):
    """Rows with a class id >= 0, sorted, equal (MXNet keeps suppressed rows' data with id
    -1; Relay writes -1 over the whole row)."""
    for g, w in zip(got, want):
        g, w = g[g[:, 0] >= 0], w[w[:, 0] >= 0]
        assert len(g) == len(w) and len(w) > 0
        g, w = g[np.lexsort(g.T[::-1])], w[np.lexsort(w.T[::-1])]
        np.testing.assert_allclose(g, w, atol=atol, rtol=0)


def test_roi_ops_match_mxnet():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(2, 3, 10, 12)).astype("float32")
    rois = np.array([[0, 1, 2, 15, 17], [1, -3, 0, 8, 30], [0, 5.5, 3.3, 6, 4]], "float32")
    inputs = {"d": data, "r": rois}
    for sr in (-1, 2):
        _check(mx.sym.contrib.ROIAlign(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(3, 4),
                                       spatial_scale=0.5, sample_ratio=sr), inputs)
    _check(mx.sym.ROIPooling(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(3, 4),
                             spatial_scale=0.5), inputs, kinds=("debug", "graph"))


def test_deformable_convolution_and_correlation_match_mxnet():
    rng = np.random.default_rng(4)
    d = rng.normal(size=(1, 4, 7, 8)).astype("float32")
    w = rng.normal(size=(6, 2, 3, 3)).astype("float32")
    bias = rng.normal(size=(6,)).astype("float32")
    # non-negative offsets without padding: no sample point in (-1, 0), where MXNet's CPU
    # kernel reads outside the image
    off = np.abs(rng.normal(size=(1, 2 * 9 * 2, 3, 3)) * 1.5).astype("float32")
    sym = mx.sym.contrib.DeformableConvolution(
        mx.sym.var("d"), mx.sym.var("o"), mx.sym.var("w"), mx.sym.var("b"), kernel=(3, 3),
        stride=(2, 2), num_filter=6, num_group=2, num_deformable_group=2)
    _check(sym, {"d": d, "o": off, "w": w, "b": bias}, kinds=("debug", "graph"), rtol=1e-4,
           atol=1e-4)
    a, b = (rng.normal(size=(1, 3, 9, 10)).astype("float32") for _ in range(2))
    for mult in (True, False):
        sym = mx.sym.Correlation(mx.sym.var("a"), mx.sym.var("b"), kernel_size=3,
                                 max_displacement=2, stride1=2, stride2=1, pad_size=2,
                                 is_multiply=mult)
        _check(sym, {"a": a, "b": b}, kinds=("debug", "graph") if mult else ("debug",))


def test_unsupported_attributes_are_named():
    from relay_tvm.errors import ConversionError

    sym = mx.sym.contrib.box_nms(mx.sym.var("d"), in_format="center")
    with pytest.raises(ConversionError, match="in_format='center'"):
        relay.frontend.from_mxnet(sym, shape={"d": (1, 4, 6)})
    sym = mx.sym.contrib.ROIAlign(mx.sym.var("d"), mx.sym.var("r"), pooled_size=(2, 2),
                                  spatial_scale=1.0, position_sensitive=True)
    with pytest.raises(ConversionError, match="position_sensitive"):
        relay.frontend.from_mxnet(sym, shape={"d": (1, 4, 6, 6), "r": (1, 5)})


class _SSD(mx.gluon.HybridBlock):
    """Two feature scales, class and box heads, priors, softmax and MultiBoxDetection."""

    def __init__(self, classes=3, **kw):
        super().__init__(**kw)
        self.classes = classes
        self.sizes = [(0.2, 0.3), (0.5, 0.7)]
        self.ratios = [(1, 2, 0.5), (1, 2)]
        nn = mx.gluon.nn
        with self.name_scope():
            self.stage1 = nn.HybridSequential()
            self.stage1.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                            nn.Conv2D(8, 3, strides=2, padding=1), nn.Activation("relu"))
            self.stage2 = nn.HybridSequential()
            self.stage2.add(nn.Conv2D(12, 3, strides=2, padding=1), nn.Activation("relu"))
            self.cls_heads, self.box_heads = nn.HybridSequential(), nn.HybridSequential()
            for s, r in zip(self.sizes, self.ratios):
                k = len(s) + len(r) - 1
                self.cls_heads.add(nn.Conv2D(k * (classes + 1), 3, padding=1))
                self.box_heads.add(nn.Conv2D(k * 4, 3, padding=1))

    def hybrid_forward(self, F, x):
        feats = [self.stage1(x)]
        feats.append(self.stage2(feats[0]))
        cls, box, anchors = [], [], []
        for f, ch, bh, s, r in zip(feats, self.cls_heads, self.box_heads, self.sizes,
                                   self.ratios):
            cls.append(F.flatten(F.transpose(ch(f), axes=(0, 2, 3, 1))))
            box.append(F.flatten(F.transpose(bh(f), axes=(0, 2, 3, 1))))
            anchors.append(F.contrib.MultiBoxPrior(f, sizes=s, ratios=r, clip=False))
        cls = F.reshape(F.concat(*cls, dim=1), shape=(0, -1, self.classes + 1))
        probs = F.softmax(F.transpose(cls, axes=(0, 2, 1)), axis=1)
        loc = F.concat(*box, dim=1)
        anchor = F.concat(*anchors, dim=1)
        return F.contrib.MultiBoxDetection(probs, loc, anchor, threshold=0.05,
                                           nms_threshold=0.45, nms_topk=40)


def test_gluon_ssd_detector_matches_mxnet(tmp_path):
    import tvm
    from mx_helpers import randomize_block

    net = _SSD()
    net.initialize()
    x = np.random.default_rng(5).uniform(-1, 1, (2, 3, 16, 16)).astype("float32")
    net(mx.nd.array(x))
    randomize_block(net, seed=5)
    net.hybridize()
    want = net(mx.nd.array(x)).asnumpy()
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    _same_detections(run_mod(mod, params, {"data": x})[0], want)
    # compiled, exported to one shared library, loaded back (the sort kernel is the runtime's)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    lib.export_library(str(tmp_path / "ssd.so"))
    gm = relay.runtime.GraphModule(
        relay.runtime.load_module(str(tmp_path / "ssd.so"))["default"](tvm.cpu(0)))
    gm.set_input("data", x)
    gm.run()
    _same_detections(gm.get_output(0).numpy(), want)


def test_proposal_and_multiproposal_match_mxnet():
    rng = np.random.default_rng(6)
    cls = rng.uniform(0, 1, (2, 12, 5, 6)).astype("float32")
    bbox = rng.normal(0, 0.3, (2, 24, 5, 6)).astype("float32")
    info = np.array([[80, 90, 1.0], [70, 96, 1.0]], "float32")
    kw = {"scales": (2.0, 4.0), "ratios": (0.5, 1.0, 2.0), "feature_stride": 16,
          "threshold": 0.5, "rpn_pre_nms_top_n": 100, "rpn_post_nms_top_n": 20,
          "rpn_min_size": 4}
    args = [mx.sym.var(n) for n in "cbi"]
    _check(mx.sym.contrib.MultiProposal(*args, **kw), {"c": cls, "b": bbox, "i": info},
           kinds=("debug", "graph"), rtol=1e-5, atol=1e-4)
    _check(mx.sym.contrib.Proposal(*args, **kw), {"c": cls[:1], "b": bbox[:1], "i": info[:1]},
           rtol=1e-5, atol=1e-4)

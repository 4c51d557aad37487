"""relay.vision operators and nn.deformable_conv2d / nn.correlation: the NumPy reference
(interpreter) against hand-worked values, and the compiled graph executor against the
interpreter, NMS edge cases included (ties, thresholds, top_k, force_suppress,
max_output_size, invalid_to_bottom, return_indices)."""

from __future__ import annotations

import numpy as np
import pytest
from op_check import infer, run_compiled, run_interpreter

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.op import vision


def _ref(f, inputs):
    """The interpreter's (NumPy reference kernels') outputs as a list of arrays."""
    a = run_interpreter(f, inputs)
    return [x.numpy() for x in a] if isinstance(a, (list, tuple)) else [a.numpy()]


def _both(f, inputs):
    """(interpreter outputs, compiled outputs) as lists of arrays; asserts they agree."""
    a = _ref(f, inputs)
    b = run_compiled(f, inputs)
    b = list(b) if isinstance(b, (list, tuple)) else [b]
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-5)
    return a


def _nms_fn(shape, **kw):
    d = relay.var("d", shape=shape)
    thr = kw.pop("score_threshold", 0.0)
    id_index = kw.get("id_index", 0)
    r = vision.get_valid_counts(d, thr, id_index=id_index, score_index=kw.get("score_index", 1))
    out = vision.non_max_suppression(r[1], r[0], r[2], **kw)
    out = out.astuple() if hasattr(out, "astuple") else out
    return relay.Function([d], out)


# [id, score, x1, y1, x2, y2]; boxes 0, 1, 3 overlap heavily, 0 and 1 tie on score
BOXES = np.array([[
    [0, 0.8, 0, 0, 10, 10],
    [0, 0.8, 1, 1, 10, 10],
    [1, 0.9, 0, 0, 10, 10],
    [0, 0.7, 0, 0, 9, 10],
    [0, 0.3, 50, 50, 60, 60],
    [-1, 0.95, 0, 0, 10, 10],
]], "float32")


def test_nms_ties_keep_the_first_box():
    out = _both(_nms_fn(BOXES.shape, iou_threshold=0.5, return_indices=False), [BOXES])[0][0]
    # sorted: 2 (0.9), then the first of the two 0.8 ties (0), 1, 3, 4; 1 and 3 suppressed by
    # 0 (same class); the id -1 box is dropped by get_valid_counts
    np.testing.assert_array_equal(out[[0, 1, 4]], BOXES[0, [2, 0, 4]])
    assert (out[[2, 3, 5]] == -1).all()


def test_nms_force_suppress_crosses_classes():
    out = _both(_nms_fn(BOXES.shape, iou_threshold=0.5, force_suppress=True,
                        return_indices=False), [BOXES])[0][0]
    np.testing.assert_array_equal(out[[0, 4]], BOXES[0, [2, 4]])
    assert (out[[1, 2, 3, 5]] == -1).all()


def test_nms_top_k_and_score_threshold():
    out = _both(_nms_fn(BOXES.shape, iou_threshold=0.5, top_k=2, return_indices=False),
                [BOXES])[0][0]
    np.testing.assert_array_equal(out[:2], BOXES[0, [2, 0]])  # only the 2 best are candidates
    assert (out[2:] == -1).all()
    out = _both(_nms_fn(BOXES.shape, iou_threshold=0.5, score_threshold=0.75,
                        return_indices=False), [BOXES])[0][0]
    np.testing.assert_array_equal(out[:2], BOXES[0, [2, 0]])  # 0.7 and 0.3 below 0.75
    assert (out[2:] == -1).all()


def test_nms_iou_threshold_is_inclusive_and_max_output_size():
    # IoU of boxes 0 and 3 is exactly 0.9: suppressed at threshold 0.9, kept above it
    d = BOXES[:, [0, 3]]
    out = _both(_nms_fn(d.shape, iou_threshold=0.9, return_indices=False), [d])[0][0]
    assert (out[1] == -1).all()
    out = _ref(_nms_fn(d.shape, iou_threshold=0.9001, return_indices=False), [d])[0][0]
    np.testing.assert_array_equal(out, d[0])
    out = _both(_nms_fn(BOXES.shape, iou_threshold=0.5, max_output_size=1,
                        return_indices=False), [BOXES])[0][0]
    np.testing.assert_array_equal(out[0], BOXES[0, 2])
    assert (out[1:] == -1).all()


def test_nms_return_indices_and_invalid_to_bottom():
    idx, count = _both(_nms_fn(BOXES.shape, iou_threshold=0.5), [BOXES])
    np.testing.assert_array_equal(idx[0], [2, 0, 4, -1, -1, -1])
    np.testing.assert_array_equal(count, [[3]])
    # without get_valid_counts' compaction the suppressed rows sit in the middle ...
    d = relay.var("d", shape=BOXES.shape)
    vc = relay.const(np.array([5], "int32"))
    ind = relay.const(np.arange(6, dtype="int32")[None])
    plain = relay.Function([d], vision.non_max_suppression(d, vc, ind, iou_threshold=0.5,
                                                           return_indices=False))
    out = _both(plain, [BOXES])[0][0]
    np.testing.assert_array_equal(out[[0, 1, 4]], BOXES[0, [2, 0, 4]])
    assert (out[[2, 3, 5]] == -1).all()
    # ... and invalid_to_bottom moves the kept ones up
    bottom = relay.Function([d], vision.non_max_suppression(
        d, vc, ind, iou_threshold=0.5, return_indices=False, invalid_to_bottom=True))
    out = _both(bottom, [BOXES])[0][0]
    np.testing.assert_array_equal(out[:3], BOXES[0, [2, 0, 4]])
    assert (out[3:] == -1).all()


def test_nms_random_batches_interpreter_equals_compiled():
    rng = np.random.default_rng(3)
    d = rng.uniform(0, 1, (3, 40, 6)).astype("float32")
    d[:, :, 0] = rng.integers(-1, 3, (3, 40))
    d[:, :, 1] = np.round(d[:, :, 1], 1)  # many ties
    d[:, :, 4:] = d[:, :, 2:4] + rng.uniform(0.05, 0.5, (3, 40, 2))
    _both(_nms_fn(d.shape, return_indices=False, invalid_to_bottom=True, iou_threshold=0.3,
                  force_suppress=True, top_k=25), [d])
    _both(_nms_fn(d.shape, score_threshold=0.3, iou_threshold=0.4, max_output_size=5), [d])


def test_get_valid_counts_values():
    count, out, idx = _both(relay.Function(
        [v := relay.var("d", shape=BOXES.shape)],
        vision.get_valid_counts(v, 0.5, id_index=0).astuple()), [BOXES])
    np.testing.assert_array_equal(count, [4])
    np.testing.assert_array_equal(idx[0], [0, 1, 2, 3, -1, -1])
    np.testing.assert_array_equal(out[0, :4], BOXES[0, :4])
    assert (out[0, 4:] == -1).all()


def test_nms_type_errors():
    d = relay.var("d", shape=(1, 5, 6))
    with pytest.raises(TypeInferenceError, match="coord_start=3"):
        infer(vision.non_max_suppression(d, relay.var("v", shape=(1,), dtype="int32"),
                                         relay.var("i", shape=(1, 5), dtype="int32"),
                                         coord_start=3, return_indices=False))
    with pytest.raises(TypeInferenceError, match="valid_count must be"):
        infer(vision.non_max_suppression(d, relay.var("v", shape=(1,)),
                                         relay.var("i", shape=(1, 5), dtype="int32")))


def test_multibox_prior_values():
    x = relay.var("x", shape=(1, 2, 2, 2))
    f = relay.Function([x], vision.multibox_prior(x, sizes=(0.5, 0.25), ratios=(1, 4)))
    out = _both(f, [np.zeros((1, 2, 2, 2), "float32")])[0]
    assert out.shape == (1, 2 * 2 * 3, 4)
    # first cell: center (0.25, 0.25); size 0.5 -> half 0.25; ratio 4 -> w 0.5, h 0.125
    np.testing.assert_allclose(out[0, 0], [0, 0, 0.5, 0.5], atol=1e-7)
    np.testing.assert_allclose(out[0, 1], [0.125, 0.125, 0.375, 0.375], atol=1e-7)
    np.testing.assert_allclose(out[0, 2], [-0.25, 0.125, 0.75, 0.375], atol=1e-7)
    np.testing.assert_allclose(out[0, 3], [0.5, 0, 1.0, 0.5], atol=1e-7)  # next x cell: 0.75


def test_multibox_transform_loc_values():
    anchor = np.array([[[0.1, 0.1, 0.3, 0.5], [0.5, 0.5, 0.9, 0.7]]], "float32")
    cls = np.array([[[0.2, 0.9], [0.5, 0.05], [0.3, 0.05]]], "float32")  # (1, 3 classes, 2)
    loc = np.array([[1.0, 0.0, 0.0, np.log(2) / 0.2, 0, 0, 0, 0]], "float32")
    c, lv, an = (relay.var(n, shape=v.shape) for n, v in (("c", cls), ("l", loc),
                                                         ("a", anchor)))
    f = relay.Function([c, lv, an], vision.multibox_transform_loc(
        c, lv, an, clip=False, threshold=0.1).astuple())
    out, count = _both(f, [cls, loc, anchor])
    np.testing.assert_array_equal(count, [1])  # anchor 1 is background (0.05 < 0.1)
    # anchor 0: class 1 (id 0), x shifted by 0.1 * 0.2, height doubled
    np.testing.assert_allclose(out[0, 0], [0, 0.5, 0.12, -0.1, 0.32, 0.7], rtol=1e-5, atol=1e-6)
    assert (out[0, 1] == -1).all()


def test_roi_align_and_roi_pool_values():
    data = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    rois = np.array([[0, 0, 0, 2, 2]], "float32")
    x, r = relay.var("x", shape=data.shape), relay.var("r", shape=rois.shape)
    out = _ref(relay.Function([x, r], vision.roi_align(x, r, (1, 1), 1.0, sample_ratio=2)),
               [data, rois])[0]  # avg mode compiled: test_roi_align_nhwc_equals_nchw
    # samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5): the mean of the bilinear values
    np.testing.assert_allclose(out.ravel(), [(2.5 + 3.5 + 6.5 + 7.5) / 4 + 0.0 * 1], rtol=1e-6)
    out = _both(relay.Function([x, r], vision.roi_align(x, r, (1, 1), 1.0, 2, mode="max")),
                [data, rois])[0]
    np.testing.assert_allclose(out.ravel(), [7.5], rtol=1e-6)
    out = _ref(relay.Function([x, r], vision.roi_pool(x, r, (2, 2), 1.0)), [data, rois])[0]
    np.testing.assert_array_equal(out[0, 0], [[5, 6], [9, 10]])  # 3x3 region in 2x2 bins
    rois = np.array([[0, -1.5, 0, 1, 1]], "float32")  # -1.5 rounds away from zero to -2
    out = _both(relay.Function([x, r], vision.roi_pool(x, r, (1, 2), 1.0)), [data, rois])[0]
    np.testing.assert_array_equal(out[0, 0], [[0, 5]])  # first bin [-2, 0) is empty


def test_roi_align_nhwc_equals_nchw():
    rng = np.random.default_rng(0)
    d = rng.normal(size=(2, 3, 9, 11)).astype("float32")
    rois = np.array([[0, 1, 2, 15, 17], [1, -3, 0, 8, 30]], "float32")
    r = relay.var("r", shape=rois.shape)
    x = relay.var("x", shape=d.shape)
    a = _both(relay.Function([x, r], vision.roi_align(x, r, (3, 2), 0.5)), [d, rois])[0]
    x = relay.var("x", shape=(2, 9, 11, 3))
    b = _both(relay.Function([x, r], vision.roi_align(x, r, (3, 2), 0.5, layout="NHWC")),
              [d.transpose(0, 2, 3, 1), rois])[0]
    np.testing.assert_allclose(b.transpose(0, 3, 1, 2), a, rtol=1e-6)


def test_yolo_reorg_values():
    x = np.arange(2 * 4 * 2 * 2, dtype="float32").reshape(2, 4, 2, 2)
    v = relay.var("x", shape=x.shape)
    out = _both(relay.Function([v], vision.yolo_reorg(v, 2)), [x])[0]
    assert out.shape == (2, 16, 1, 1)
    # darknet's reorg over the (B, C/4, 2H, 2W) view: the first input-shaped channel (k = 0)
    # holds view[b, 0, 2j, 2i] at (j, i); the output is that, reshaped
    view = x.reshape(2, 1, 4, 4)
    want = [view[:, 0, 2 * j, 2 * i] for j in (0, 1) for i in (0, 1)]
    np.testing.assert_array_equal(out[:, :4, 0, 0], np.stack(want, 1))
    with pytest.raises(TypeInferenceError, match="divide by stride"):
        infer(vision.yolo_reorg(relay.var("y", shape=(1, 6, 4, 4)), 2))


def test_deformable_conv2d_zero_offset_is_conv2d():
    rng = np.random.default_rng(1)
    d = rng.normal(size=(1, 4, 6, 7)).astype("float32")
    w = rng.normal(size=(6, 2, 3, 3)).astype("float32")
    off = np.zeros((1, 2 * 9 * 2, 3, 4), "float32")
    x, o, wv = (relay.var(n, shape=v.shape) for n, v in (("x", d), ("o", off), ("w", w)))
    f = relay.Function([x, o, wv], relay.nn.deformable_conv2d(
        x, o, wv, strides=(2, 2), padding=(1, 1), deformable_groups=2, groups=2, channels=6,
        kernel_size=(3, 3)))
    got = _both(f, [d, off, w])[0]
    x2, w2 = relay.var("x", shape=d.shape), relay.var("w", shape=w.shape)
    conv = relay.Function([x2, w2], relay.nn.conv2d(x2, w2, strides=(2, 2), padding=(1, 1),
                                                    groups=2))
    np.testing.assert_allclose(got, run_interpreter(conv, [d, w]).numpy(), rtol=1e-5,
                               atol=1e-5)
    # without padding, a whole-pixel offset of +1 in x equals shifting the input left by one
    # pixel (the sample point past the right edge reads 0, as the appended zero column)
    off = np.zeros((1, 2 * 9 * 2, 2, 3), "float32")
    off[:, 1::2] = 1.0
    o = relay.var("o", shape=off.shape)
    f = relay.Function([x, o, wv], relay.nn.deformable_conv2d(
        x, o, wv, strides=(2, 2), deformable_groups=2, groups=2, channels=6, kernel_size=(3, 3)))
    conv = relay.Function([x2, w2], relay.nn.conv2d(x2, w2, strides=(2, 2), groups=2))
    shifted = np.concatenate([d[..., 1:], np.zeros_like(d[..., :1])], axis=-1)
    got = _both(f, [d, off, w])[0]
    np.testing.assert_allclose(got, run_interpreter(conv, [shifted, w]).numpy(), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("layout,kernel_layout,kernel_size", [
    ("NCHW", "OIHW", (3, 3)), ("NHWC", "HWIO", (3, 3)), ("NCHW", "OIHW", None),
    ("NHWC", "HWIO", None)])
def test_deformable_conv2d_infers_offset_and_weight_types(layout, kernel_layout, kernel_size):
    # 0.19's relation: the offset's type is filled in from the output size; the weight's from
    # channels and kernel_size, or, without kernel_size, the weight's shape gives the taps
    nchw = layout == "NCHW"
    x = relay.var("x", shape=(2, 4, 16, 12) if nchw else (2, 16, 12, 4))
    wshape = (6, 2, 3, 5) if kernel_layout == "OIHW" else (3, 5, 2, 6)
    ks = None if kernel_size is None else (3, 5)
    w = relay.var("w") if ks else relay.var("w", shape=wshape)
    o = relay.var("o")
    y = relay.nn.deformable_conv2d(x, o, w, strides=(2, 1), padding=(1, 2), deformable_groups=2,
                                   groups=2, channels=6, kernel_size=ks, data_layout=layout,
                                   kernel_layout=kernel_layout)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, o, w], y)))
    main = mod["main"]
    # out (2, 6, 8, 12): (16 + 2 - 3) // 2 + 1 = 8, 12 + 4 - 5 + 1 = 12; offset 2 * 3*5 * 2 = 60
    out, off = ((2, 6, 8, 12), (2, 60, 8, 12)) if nchw else ((2, 8, 12, 6), (2, 8, 12, 60))
    assert main.ret_type == relay.TensorType(out)
    assert main.params[1].checked_type == relay.TensorType(off)
    assert main.params[2].checked_type == relay.TensorType(wshape)


def test_deformable_conv2d_relation_errors():
    x, o = relay.var("x", shape=(1, 4, 8, 8)), relay.var("o")
    w = relay.var("w", shape=(4, 4, 3, 3))
    with pytest.raises(TypeInferenceError, match=r"kernel_size=\[5, 5\] does not match weight"):
        infer(relay.nn.deformable_conv2d(x, o, w, kernel_size=(5, 5)))
    with pytest.raises(TypeInferenceError, match=r"channels=8 does not match weight"):
        infer(relay.nn.deformable_conv2d(x, o, w, channels=8))
    with pytest.raises(TypeInferenceError, match=r"data_layout 'NCHW4c' is not supported"):
        infer(relay.nn.deformable_conv2d(x, o, w, data_layout="NCHW4c"))
    o = relay.var("o", shape=(1, 18, 8, 8))
    with pytest.raises(TypeInferenceError, match=r"offset must have shape \(1, 18, 6, 6\)"):
        infer(relay.nn.deformable_conv2d(x, o, w))


def test_deformable_conv2d_nhwc_hwio_is_the_nchw_result_transposed():
    rng = np.random.default_rng(3)
    d = rng.normal(size=(1, 4, 7, 6)).astype("float32")
    off = rng.uniform(-1.5, 1.5, size=(1, 2 * 9 * 2, 7, 6)).astype("float32")
    w = rng.normal(size=(3, 4, 3, 3)).astype("float32")
    args = dict(padding=(1, 1), deformable_groups=2, channels=3, kernel_size=(3, 3))

    def func(layout, kernel_layout, shapes):
        vs = [relay.var(n, shape=s) for n, s in zip("xow", shapes)]
        return relay.Function(vs, relay.nn.deformable_conv2d(
            *vs, data_layout=layout, kernel_layout=kernel_layout, **args))

    want = _ref(func("NCHW", "OIHW", [d.shape, off.shape, w.shape]), [d, off, w])[0]
    nhwc = [d.transpose(0, 2, 3, 1), off.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)]
    got = _both(func("NHWC", "HWIO", [a.shape for a in nhwc]), nhwc)[0]
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


def test_correlation_values():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(1, 2, 5, 5)).astype("float32")
    b = rng.normal(size=(1, 2, 5, 5)).astype("float32")
    x1, x2 = relay.var("a", shape=a.shape), relay.var("b", shape=b.shape)
    f = relay.Function([x1, x2], relay.nn.correlation(x1, x2, kernel_size=1,
                                                      max_displacement=1, padding=1))
    out = _both(f, [a, b])[0]
    assert out.shape == (1, 9, 5, 5)
    # displacement (0, 0) is channel 4: the channel mean of a * b
    np.testing.assert_allclose(out[0, 4], (a * b).mean(1)[0], rtol=1e-5)
    # displacement (dy, dx) = (1, 0) is channel 7: a[y, x] * b[y + 1, x]
    np.testing.assert_allclose(out[0, 7, :4], (a[0, :, :4] * b[0, :, 1:]).mean(0), rtol=1e-5)


def test_all_class_nms_values_both_formats():
    boxes = np.array([[[0, 0, 10, 10], [1, 1, 10, 10], [50, 50, 60, 60]]], "float32")
    # class 0: a tie between boxes 0 and 1 (IoU 0.81), the first is kept; class 1: box 0 is
    # below the score threshold
    scores = np.array([[[0.8, 0.8, 0.3], [0.1, 0.9, 0.6]]], "float32")
    bx, sc = relay.var("b", shape=boxes.shape), relay.var("s", shape=scores.shape)
    f = relay.Function([bx, sc], vision.all_class_non_max_suppression(
        bx, sc, 2, 0.5, 0.2).astuple())
    sel, total = _both(f, [boxes, scores])
    np.testing.assert_array_equal(total, [4])
    np.testing.assert_array_equal(sel[:4], [[0, 0, 0], [0, 0, 2], [0, 1, 1], [0, 1, 2]])
    assert (sel[4:] == 0).all()
    f = relay.Function([bx, sc], vision.all_class_non_max_suppression(
        bx, sc, 1, 0.5, 0.2, output_format="tensorflow").astuple())
    sel, score, count = _both(f, [boxes, scores])
    np.testing.assert_array_equal(count, [2])
    np.testing.assert_array_equal(sel[0, :2], [[0, 0], [1, 1]])
    np.testing.assert_allclose(score[0, :2], [0.8, 0.9])
    assert (sel[0, 2:] == 0).all() and (score[0, 2:] == 0).all()


def test_proposal_values_and_compiled():
    # one position, one anchor (scale 1, ratio 1, stride 4: the square [0, 0, 3, 3]), zero
    # deltas; a second position is outside the image height and scores -1
    cls = np.array([[[[0.1, 0.2]], [[0.9, 0.8]]]], "float32")  # (1, 2, 1, 2)
    bbox = np.zeros((1, 4, 1, 2), "float32")
    info = np.array([[4, 8, 1.0]], "float32")
    c, b, i = (relay.var(n, shape=v.shape) for n, v in (("c", cls), ("b", bbox), ("i", info)))
    f = relay.Function([c, b, i], vision.proposal(
        c, b, i, scales=(1.0,), ratios=(1.0,), feature_stride=4, threshold=0.7,
        rpn_pre_nms_top_n=2, rpn_post_nms_top_n=3, rpn_min_size=1))
    out = _both(f, [cls, bbox, info])[0]
    # both boxes kept (IoU 0), in score order, then the list repeats
    np.testing.assert_allclose(out, [[0, 0, 0, 3, 3], [0, 4, 0, 7, 3], [0, 0, 0, 3, 3]])
    rng = np.random.default_rng(7)
    cls = rng.uniform(0, 1, (2, 12, 3, 4)).astype("float32")
    bbox = rng.normal(0, 0.3, (2, 24, 3, 4)).astype("float32")
    info = np.array([[40, 64, 1.0], [48, 50, 1.5]], "float32")
    c, b, i = (relay.var(n, shape=v.shape) for n, v in (("c", cls), ("b", bbox), ("i", info)))
    f = relay.Function([c, b, i], vision.proposal(
        c, b, i, scales=(2.0, 4.0), ratios=(0.5, 1.0, 2.0), feature_stride=16, threshold=0.5,
        rpn_pre_nms_top_n=40, rpn_post_nms_top_n=10, rpn_min_size=8))
    _both(f, [cls, bbox, info])


def test_vision_calls_print_and_parse_back():
    d = relay.var("d", shape=(1, 5, 6))
    r = vision.get_valid_counts(d, 0.1)
    o = vision.non_max_suppression(r[1], r[0], r[2], return_indices=False, top_k=3)
    p = vision.multibox_prior(relay.var("f", shape=(1, 2, 3, 3)), sizes=(0.5,), ratios=(1, 2))
    body = relay.Tuple([o, p])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function(relay.analysis.free_vars(body), body)))
    text = mod.astext()
    assert "vision.non_max_suppression(" in text and "top_k=3" in text
    back = relay.transform.InferType()(relay.parse(text))
    assert relay.analysis.structural_equal(mod["main"], back["main"])


def test_nms_thresholds_as_run_time_inputs():
    d = relay.var("d", shape=BOXES.shape)
    mo = relay.var("mo", shape=(), dtype="int32")
    thr = relay.var("thr", shape=(), dtype="float32")
    r = vision.get_valid_counts(d, 0.0)
    f = relay.Function([d, mo, thr], vision.non_max_suppression(
        r[1], r[0], r[2], max_output_size=mo, iou_threshold=thr).astuple())
    idx, count = _both(f, [BOXES, np.array(2, "int32"), np.array(0.5, "float32")])
    np.testing.assert_array_equal(idx[0, :3], [2, 0, -1])
    np.testing.assert_array_equal(count, [[2]])
    idx, count = _ref(f, [BOXES, np.array(-1, "int32"), np.array(0.95, "float32")])
    np.testing.assert_array_equal(idx[0, :6], [2, 0, 1, 3, 4, -1])  # nothing overlaps >= 0.95


def test_nms_leaves_non_positive_scores_and_keep_background():
    # Relay 0.19: a row with score <= 0 is neither suppressed nor counted; it stays in place
    d = np.array([[[0, 0.9, 0, 0, 1, 1], [0, 0.0, 0, 0, 1, 1], [0, 0.5, 0, 0, 1, 1]]],
                 "float32")
    v = relay.var("d", shape=d.shape)
    vc = relay.const(np.array([3], "int32"))
    ind = relay.const(np.arange(3, dtype="int32")[None])
    f = relay.Function([v], vision.non_max_suppression(v, vc, ind, iou_threshold=0.5,
                                                       return_indices=False))
    out = _both(f, [d])[0][0]
    np.testing.assert_array_equal(out[0], d[0, 0])
    np.testing.assert_array_equal(out[1], -np.ones(6))  # 0.5: suppressed by the 0.9 box
    np.testing.assert_array_equal(out[2], d[0, 1])  # score 0: same box, sorted last, left alone
    # keep_background: every anchor kept, class ids unshifted (0 = background)
    cls = np.array([[[0.7, 0.1], [0.3, 0.9]]], "float32")
    loc = np.zeros((1, 8), "float32")
    anchor = np.array([[[0.1, 0.1, 0.3, 0.5], [0.5, 0.5, 0.9, 0.7]]], "float32")
    c, lv, an = (relay.var(n, shape=x.shape) for n, x in (("c", cls), ("l", loc),
                                                         ("a", anchor)))
    f = relay.Function([c, lv, an], vision.multibox_transform_loc(
        c, lv, an, keep_background=True).astuple())
    out, count = _both(f, [cls, loc, anchor])
    np.testing.assert_array_equal(count, [2])
    np.testing.assert_allclose(out[0, :, :2], [[0, 0.7], [1, 0.9]])
    np.testing.assert_allclose(out[0, :, 2:], anchor[0], atol=1e-6)

"""Importer tests of SequenceLast, NumPy-mode cumsum and where, box_iou and boolean_mask: MXNet
1.9.1 computes the expected values, on edge cases as well as random ones."""

import json

import numpy as np
import pytest
from mx_helpers import assert_close, run_mod
from test_mxnet_ops import check
from test_mxnet_ops_names import check_np

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")
import relay_tvm as relay  # noqa: E402
from relay_tvm.errors import ConversionError, RelayError  # noqa: E402

pytestmark = pytest.mark.mxnet
S = mx.sym


# ---- SequenceLast ----


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_last_without_lengths(axis):
    check(lambda x: S.SequenceLast(x, axis=axis), {"x": (4, 3, 2)})
    check(lambda x: S.SequenceLast(x, axis=axis), {"x": (5, 2)})


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("lengths", [[1, 1, 1], [4, 4, 4], [1, 4, 2], [2.7, 1.2, 3.9]],
                         ids=["all-1", "all-full", "mixed", "fractional"])
@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_sequence_last_with_lengths(axis, lengths, kind):
    """Lengths 1 (the first element), full (the last), mixed, and fractional values, which
    MXNet truncates (2.7 -> position 1)."""
    shape = (4, 3, 2) if axis == 0 else (3, 4, 2)
    check(lambda x, n: S.SequenceLast(x, n, use_sequence_length=True, axis=axis),
          {"x": shape, "n": (3,)}, values={"n": np.array(lengths, "float32")}, kind=kind)


def test_sequence_last_int_lengths():
    check(lambda x, n: S.SequenceLast(x, n, use_sequence_length=True, axis=1),
          {"x": (3, 5), "n": (3,)}, dtypes={"x": "float32", "n": "int32"},
          values={"n": np.array([5, 1, 3], "int32")})


def test_sequence_last_bad_input_is_named():
    x, n = S.var("x"), S.var("n")
    with pytest.raises(ConversionError, match=r"SequenceLast.*sequence_length has shape \(4,\), "
                                              r"expected \(3,\)"):
        relay.frontend.from_mxnet(S.SequenceLast(x, n, use_sequence_length=True),
                                  shape={"x": (5, 3, 2), "n": (4,)})
    with pytest.raises(ConversionError, match=r"SequenceLast.*rank >= 2"):
        relay.frontend.from_mxnet(S.SequenceLast(x), shape={"x": (5,)})
    graph = json.loads(S.SequenceLast(x, axis=1).tojson())
    graph["nodes"][-1]["attrs"]["axis"] = "2"
    with pytest.raises(ConversionError, match=r"axis=2: MXNet's SequenceLast supports only"):
        relay.frontend.from_mxnet(json.dumps(graph), shape={"x": (5, 3, 2)})


# ---- NumPy-mode cumsum ----


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 2}, {"dtype": "float64"},
                                    {"axis": 1, "dtype": "float64"}])
def test_np_cumsum(kwargs):
    check_np(lambda x: S.np.cumsum(x, **kwargs), {"x": (2, 3, 4)})


@pytest.mark.parametrize("axis", [-1, -2, -3])
def test_np_cumsum_negative_axis_follows_numpy(axis):
    """MXNet 1.9.1 fails on a negative axis at run time ("index = -1 must be in range"), though
    it exports the graph; the converter counts from the end as NumPy does, and NumPy is the
    reference here."""
    mx.npx.set_np()
    try:
        text = S.np.cumsum(S.var("x").as_np_ndarray(), axis=axis).tojson()
    finally:
        mx.npx.reset_np()
    x = np.random.default_rng(0).uniform(-2, 2, (2, 3, 4)).astype("float32")
    mod, params = relay.frontend.from_mxnet(text, shape={"x": x.shape})
    got = run_mod(mod, params, {"x": x})[0]
    assert got.dtype == np.float32
    assert_close(got, np.cumsum(x, axis=axis), rtol=1e-5)


@pytest.mark.parametrize("dtype, kwargs", [("int32", {}), ("int32", {"axis": 1}),
                                           ("bool", {}), ("bool", {"axis": 0}),
                                           ("bool", {"axis": 1, "dtype": "float32"})])
def test_np_cumsum_dtypes(dtype, kwargs):
    """Integers keep their dtype (MXNet, unlike NumPy, does not widen int32); bool sums as
    int64."""
    x = np.array([[1, 0, 1], [1, 1, 0]]).astype(dtype)
    check_np(lambda x: S.np.cumsum(x, **kwargs), {"x": x.shape}, values={"x": x},
             dtypes={"x": dtype})


def test_cumsum_alias():
    """MXNet registers ``_np_cumsum`` also as ``cumsum``; a graph naming it so converts alike."""
    mx.npx.set_np()
    try:
        graph = json.loads(S.np.cumsum(S.var("x").as_np_ndarray()).tojson())
    finally:
        mx.npx.reset_np()
    (node,) = [n for n in graph["nodes"] if n["op"] == "_np_cumsum"]
    node["op"] = "cumsum"
    x = np.arange(6, dtype="float32").reshape(2, 3)
    mod, _ = relay.frontend.from_mxnet(json.dumps(graph), shape={"x": x.shape})
    np.testing.assert_array_equal(run_mod(mod, {}, {"x": x})[0], np.cumsum(x))


def test_np_cumsum_axis_out_of_range_is_named():
    mx.npx.set_np()
    try:
        graph = json.loads(S.np.cumsum(S.var("x").as_np_ndarray(), axis=1).tojson())
    finally:
        mx.npx.reset_np()
    graph["nodes"][-1]["attrs"]["axis"] = "3"
    with pytest.raises(ConversionError, match=r"_np_cumsum.*axis=3 is out of range for an input "
                                              r"of rank 2"):
        relay.frontend.from_mxnet(json.dumps(graph), shape={"x": (2, 3)})


# ---- NumPy-mode where ----

COND = np.array([1, 0, -2.5, 0], "float32")


@pytest.mark.parametrize("shapes", [
    {"c": (2, 3, 4), "x": (2, 3, 4), "y": (2, 3, 4)},
    {"c": (4,), "x": (3, 1), "y": (1, 4)},          # all three broadcast to (3, 4)
    {"c": (2, 1, 4), "x": (3, 1), "y": ()},          # to (2, 3, 4), y a 0-d array
], ids=["same", "broadcast", "broadcast-3d"])
def test_np_where(shapes):
    rng = np.random.default_rng(1)
    cond = rng.integers(-1, 2, shapes["c"]).astype("float32")  # about a third are zero
    check_np(lambda c, x, y: S.np.where(c, x, y), shapes, values={"c": cond})


def test_np_where_bool_condition():
    check_np(lambda a, b, x, y: S.np.where(S.np.greater(a, b), x, y),
             {"a": (3, 4), "b": (3, 1), "x": (3, 4), "y": (4,)})


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_np_where_scalar_sides(dtype):
    """A scalar on the left (_npi_where_lscalar), right (_npi_where_rscalar) or both
    (_npi_where_scalar2): the scalar takes the array's dtype (1.5 into int32 is 1); two scalars
    give float32."""
    y = np.array([[3, -2, 7, 5]] * 2).astype(dtype)
    shapes, values = {"c": (4,), "y": (2, 4)}, {"c": COND, "y": y}
    dtypes = {"c": "float32", "y": dtype}
    check_np(lambda c, y: S.np.where(c, 1.5, y), shapes, values=values, dtypes=dtypes)
    check_np(lambda c, y: S.np.where(c, y, -1.5), shapes, values=values, dtypes=dtypes)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_np_where_two_scalars_is_float32(dtype):
    check_np(lambda c: S.np.where(c, 1, 2.5), {"c": (4,)}, values={"c": COND.astype(dtype)},
             dtypes={"c": dtype})


# ---- box_iou ----

CORNER_L = np.array([[0, 0, 2, 2], [1, 1, 3, 3], [0, 0, 0, 0], [5, 5, 6, 7],
                     [2, 2, 1, 1]], "float32")  # a point and an inverted box among them
CORNER_R = np.array([[0, 0, 2, 2], [2, 0, 4, 2], [10, 10, 11, 11], [0.5, 0.5, 1.5, 1.5]],
                    "float32")  # same box (1), touching (0), disjoint (0), contained
CENTER_L = np.array([[1, 1, 2, 2], [2, 2, 2, 2], [0, 0, 0, 3], [5, 5, 1, 2]], "float32")
CENTER_R = np.array([[1, 1, 2, 2], [3, 1, 2, 2], [-4, -4, 1, 1]], "float32")


@pytest.mark.parametrize("fmt, lhs, rhs", [("corner", CORNER_L, CORNER_R),
                                           ("center", CENTER_L, CENTER_R)])
@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_box_iou_edge_cases(fmt, lhs, rhs, kind):
    check(lambda a, b: S.contrib.box_iou(a, b, format=fmt), {"a": lhs.shape, "b": rhs.shape},
          values={"a": lhs, "b": rhs}, kind=kind)


def _random_boxes(rng, shape, fmt):
    xy = rng.uniform(0, 8, shape[:-1] + (2,))
    wh = rng.uniform(0.5, 4, shape[:-1] + (2,))
    out = np.concatenate([xy, xy + wh] if fmt == "corner" else [xy, wh], axis=-1)
    return out.astype("float32")


@pytest.mark.parametrize("fmt", ["corner", "center"])
@pytest.mark.parametrize("lshape, rshape", [((6, 4), (5, 4)), ((2, 3, 4), (5, 4)),
                                            ((4, 4), (2, 3, 4)), ((2, 3, 4), (1, 2, 4))])
def test_box_iou_random_batched(fmt, lshape, rshape):
    """Output shape lhs.shape[:-1] + rhs.shape[:-1] for any ranks."""
    rng = np.random.default_rng(2)
    a, b = _random_boxes(rng, lshape, fmt), _random_boxes(rng, rshape, fmt)
    check(lambda a, b: S.contrib.box_iou(a, b, format=fmt), {"a": lshape, "b": rshape},
          values={"a": a, "b": b})


def test_box_iou_bad_input_is_named():
    a, b = S.var("a"), S.var("b")
    with pytest.raises(ConversionError, match=r"_contrib_box_iou.*rhs has shape \(5, 3\), "
                                              r"expected rank >= 2 with a last dimension of 4"):
        relay.frontend.from_mxnet(S.contrib.box_iou(a, b), shape={"a": (2, 4), "b": (5, 3)})
    with pytest.raises(ConversionError, match=r"lhs has shape \(4,\)"):
        relay.frontend.from_mxnet(S.contrib.box_iou(a, b), shape={"a": (4,), "b": (5, 4)})
    graph = json.loads(S.contrib.box_iou(a, b).tojson())
    graph["nodes"][-1]["attrs"] = {"format": "xywh"}
    with pytest.raises(RelayError, match=r"format='xywh': expected 'corner' or 'center'"):
        relay.frontend.from_mxnet(json.dumps(graph), shape={"a": (2, 4), "b": (5, 4)})


# ---- boolean_mask ----


@pytest.mark.parametrize("mask", [[1, 0, 0, 2, -1], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1],
                                  [0, 0, 0, 0, 1]], ids=["some", "none", "all", "last"])
@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_boolean_mask(mask, kind):
    """Rows where the mask is nonzero (negative counts); none selected gives (0, 3). The row
    count depends on the values, so the program runs on the VM or the interpreter."""
    x = np.arange(15, dtype="float32").reshape(5, 3)
    m = np.array(mask, "float32")
    sym = S.contrib.boolean_mask(S.var("x"), S.var("m"))
    expected = sym.bind(mx.cpu(), {"x": mx.nd.array(x), "m": mx.nd.array(m)}).forward()[0]
    mod, params = relay.frontend.from_mxnet(sym, shape={"x": x.shape, "m": m.shape})
    got = run_mod(mod, params, {"x": x, "m": m}, kind=kind)[0]
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert_close(got, expected.asnumpy())


def test_boolean_mask_int_mask_and_3d_data():
    x = np.arange(24, dtype="float32").reshape(4, 3, 2)
    m = np.array([0, 3, 0, 1], "int32")
    sym = S.contrib.boolean_mask(S.var("x"), S.var("m"))
    expected = sym.bind(mx.cpu(), {"x": mx.nd.array(x),
                                   "m": mx.nd.array(m, dtype="int32")}).forward()[0]
    mod, params = relay.frontend.from_mxnet(sym, shape={"x": x.shape, "m": m.shape},
                                            dtype={"x": "float32", "m": "int32"})
    np.testing.assert_array_equal(run_mod(mod, params, {"x": x, "m": m}, kind="vm")[0],
                                  expected.asnumpy())


def test_boolean_mask_bad_input_is_named():
    sym = S.contrib.boolean_mask(S.var("x"), S.var("m"))
    with pytest.raises(ConversionError, match=r"_contrib_boolean_mask.*index has shape \(4,\), "
                                              r"expected a 1-d mask of the \(5,\) rows"):
        relay.frontend.from_mxnet(sym, shape={"x": (5, 3), "m": (4,)})
    graph = json.loads(sym.tojson())
    graph["nodes"][-1]["attrs"] = {"axis": "1"}
    with pytest.raises(ConversionError, match=r"axis=1: MXNet's boolean_mask supports only"):
        relay.frontend.from_mxnet(json.dumps(graph), shape={"x": (5, 3), "m": (3,)})

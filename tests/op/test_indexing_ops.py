"""Slicing and gathering operators against NumPy, through the interpreter and compiled."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import Any, IncompleteType, TensorType
from relay_tvm.op import OpPattern

RNG = np.random.default_rng(2)
A345 = np.arange(60, dtype="float32").reshape(3, 4, 5)

# (begin, end, strides, axes, slice_mode, numpy index)
STRIDED = [
    ((0, 1), (2, 3), None, None, "end", np.s_[0:2, 1:3]),
    ((1,), (3,), None, None, "end", np.s_[1:3]),
    ((-1, 0, 0), (-4, 4, 5), (-1, 1, 2), None, "end", np.s_[-1:-4:-1, 0:4, 0:5:2]),
    ((2,), (-10,), (-1,), None, "end", np.s_[2::-1]),
    ((3, 3), (0, 0), (-1, -2), None, "end", np.s_[3:0:-1, 3:0:-2]),
    ((0, -1), (3, -5), (2, -1), None, "end", np.s_[0:3:2, -1:-5:-1]),
    ((1, 2), (100, 100), None, None, "end", np.s_[1:100, 2:100]),
    ((-100,), (100,), (2,), None, "end", np.s_[-100:100:2]),
    ((1,), (3,), None, (2,), "end", np.s_[:, :, 1:3]),
    ((4, 0), (0, 2), (-1, 1), (2, 0), "end", np.s_[0:2, :, 4:0:-1]),
    ((1, 1), (2, -1), None, None, "size", np.s_[1:3, 1:]),
    ((0, 2, 1), (-1, 1, 3), (5, 5, 5), None, "size", np.s_[:, 2:3, 1:4]),
    ((-2,), (1,), None, (1,), "size", np.s_[:, -2:-1]),
    ((0,), (5,), (7,), None, "end", np.s_[0:5:7]),
    # end / strides longer than begin: 0.19 pads begin (and end) to the rank
    ((1,), (3, 2), None, None, "end", np.s_[1:3, 0:2]),
    ((0,), (2,), (1, 2), None, "end", np.s_[0:2, ::2]),
    # fewer strides than begin / end: the other axes step by 1 (0.19 pads strides with ones;
    # a single stride is not applied to every axis)
    ((0, 1), (3, 4), (2,), None, "end", np.s_[0:3:2, 1:4]),
    ((2, 3, 4), (0, 0, 0), (-1,), None, "end", np.s_[2:0:-1, 3:0, 4:0]),
    # with axes, the default strides [1] are ones on every listed axis
    ((0, 1), (2, 3), (1,), (2, 0), "end", np.s_[1:3, :, 0:2]),
]


@pytest.mark.parametrize("begin,end,strides,axes,mode,index", STRIDED)
def test_strided_slice(begin, end, strides, axes, mode, index):
    x = relay.var("x", shape=(3, 4, 5))
    expr = relay.strided_slice(x, begin, end, strides, axes, mode)
    check_op(expr, [A345], A345[index])


@pytest.mark.parametrize("dtype", ["int8", "float16", "int32"])
def test_strided_slice_dtypes(dtype):
    a = A345.astype(dtype)
    x = relay.var("x", shape=(3, 4, 5), dtype=dtype)
    check_op(relay.strided_slice(x, (2, 0), (0, 4), (-1, 3)), [a], a[2:0:-1, 0:4:3])


def test_strided_slice_axes_need_one_stride_each():
    # 0.19 checked len(strides) == len(axes); only the wrapper's default [1] stands for all
    x = relay.var("x", shape=(3, 4, 5))
    with pytest.raises(TypeInferenceError, match="expected one per axis of axes"):
        infer(relay.strided_slice(x, (0, 0), (2, 2), (2,), axes=(0, 1)))


def test_strided_slice_dynamic_dims():
    x = relay.var("x", relay.TensorType((Any(), 4, 5)))
    assert infer(relay.strided_slice(x, (0, 1), (2, 3))) == TensorType((Any(), 2, 5), "float32")
    assert infer(relay.strided_slice(x, (1,), (3,), axes=(1,))) == TensorType(
        (Any(), 2, 5), "float32"
    )


@pytest.mark.parametrize(
    "dshape,lshape,axes",
    [((3, 4, 5), (2, 3), None), ((3, 4, 5), (9, 2, 9), (1,)), ((3, 4, 5), (3, 4, 1), (-1, 0))],
)
def test_slice_like(dshape, lshape, axes):
    a = RNG.uniform(size=dshape).astype("float32")
    x, y = relay.var("x", shape=dshape), relay.var("y", shape=lshape)
    ax = range(len(lshape)) if axes is None else [i % len(dshape) for i in axes]
    idx = tuple(slice(0, lshape[i]) if i in ax else slice(None) for i in range(len(dshape)))
    check_op(relay.slice_like(x, y, axes), [a, np.zeros(lshape, "float32")], a[idx])


# ---- take --------------------------------------------------------------------------------------

DATA = np.arange(12, dtype="float32").reshape(3, 4)
TAKE = [
    # indices, axis, mode, batch_dims
    ([0, 2, 1], 0, "clip", 0),
    ([[0, 3], [1, 2]], 1, "clip", 0),
    ([-1, 5, 2], 0, "clip", 0),
    ([-1, 5, 2, -4], 1, "wrap", 0),
    ([7, -13, 0], None, "wrap", 0),
    ([11, -2, 0], None, "clip", 0),
    ([[1, 0], [2, 3]], 1, "fast", 0),
    ([3, 0, 11], None, "fast", 0),
]


def _np_take(a, idx, axis, mode):
    if mode == "fast":
        return np.take(a, idx, axis=axis)
    return np.take(a, idx, axis=axis, mode=mode)


@pytest.mark.parametrize("indices,axis,mode,batch_dims", TAKE)
@pytest.mark.parametrize("idtype", ["int32", "int64"])
def test_take(indices, axis, mode, batch_dims, idtype):
    idx = np.array(indices, idtype)
    x = relay.var("x", shape=DATA.shape)
    i = relay.var("i", shape=idx.shape, dtype=idtype)
    check_op(relay.take(x, i, axis, batch_dims, mode), [DATA, idx], _np_take(DATA, idx, axis, mode))


def test_take_batch_dims():
    a = RNG.uniform(size=(2, 3, 4)).astype("float32")
    idx = np.array([[0, 2], [3, 1]], "int32")
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    expected = np.stack([np.take(a[b], idx[b], axis=1) for b in range(2)])
    check_op(relay.take(x, i, axis=2, batch_dims=1), [a, idx], expected)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather(axis):
    a = RNG.uniform(size=(3, 4)).astype("float32")
    n = a.shape[axis]
    idx = RNG.integers(0, n, (3, 4) if axis != 0 else (2, 4)).astype("int32")
    if axis in (1, -1):
        idx = idx[:, :3]
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    check_op(relay.gather(x, axis, i), [a, idx], np.take_along_axis(a, idx, axis))


@pytest.mark.parametrize("axis, idx, expected", [
    # indices shorter than data on the other axis: the output reads its first rows / columns
    # (the interpreter broadcast indices over all of them, and FoldConstant kept that)
    (1, [[5, 0, 2]], [[5, 0, 2]]),
    (0, [[1, 0]], [[6, 1]]),
    (-1, [[1], [5]], [[1], [11]]),
])
def test_gather_indices_smaller_than_data_on_another_axis(axis, idx, expected):
    a = np.arange(12, dtype="float32").reshape(2, 6)
    idx = np.array(idx, "int32")
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    check_op(relay.gather(x, axis, i), [a, idx], np.array(expected, "float32"))
    # constant operands folded at build time
    y = relay.var("y", shape=idx.shape)
    f = relay.Function([y], relay.gather(relay.const(a), axis, relay.const(idx)) + y)
    mod = relay.transform.FoldConstant()(relay.transform.InferType()(relay.IRModule.from_expr(f)))
    body = mod["main"].body
    assert isinstance(body.args[0], relay.Constant)
    np.testing.assert_array_equal(body.args[0].data.numpy(), expected)


def test_gather_indices_larger_than_data_on_another_axis_is_refused():
    with pytest.raises(TypeInferenceError, match=r"indices shape \(3, 2\) exceeds data shape "
                                                 r"\(2, 6\) on axis 0"):
        infer(relay.gather(relay.var("x", shape=(2, 6)), 1,
                           relay.var("i", shape=(3, 2), dtype="int32")))


@pytest.mark.parametrize(
    "indices",
    [[[0, 1], [2, 0]], [[1, 2, 0]], [[[0, 1], [1, 0]], [[2, 3], [0, 0]]], [[2], [3], [1]]],
)
def test_gather_nd(indices):
    a = np.arange(24, dtype="float32").reshape(3, 4, 2)
    idx = np.array(indices, "int32")
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    check_op(relay.gather_nd(x, i), [a, idx], a[tuple(idx)])


def test_gather_nd_batch_dims():
    a = np.arange(24, dtype="float32").reshape(2, 3, 4)
    idx = np.array([[[1, 0], [2, 2]]], "int32")  # (M=1, B=2, Y=2)
    x = relay.var("x", shape=a.shape)
    i = relay.var("i", shape=idx.shape, dtype="int32")
    expected = np.stack([a[b][tuple(idx[:, b])] for b in range(2)])
    check_op(relay.gather_nd(x, i, batch_dims=1), [a, idx], expected)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_one_hot(axis, dtype):
    idx = np.array([[0, 3], [2, -1]], "int32")
    depth = 3
    i = relay.var("i", shape=(2, 2), dtype="int32")
    on, off = relay.const(5, dtype), relay.const(-1, dtype)
    hot = idx[..., None] == np.arange(depth)
    expected = np.moveaxis(np.where(hot, 5, -1).astype(dtype), -1, axis if axis >= 0 else 2)
    check_op(relay.one_hot(i, on, off, depth, axis, dtype), [idx], expected)


@pytest.mark.parametrize("axis,mask_value", [(0, 0.0), (1, -1.5)])
@pytest.mark.parametrize("vdtype", ["int32", "float32"])
def test_sequence_mask(axis, mask_value, vdtype):
    a = RNG.uniform(size=(4, 3, 2) if axis == 0 else (3, 4, 2)).astype("float32")
    vl = np.array([1, 4, 0], vdtype)
    x = relay.var("x", shape=a.shape)
    v = relay.var("v", shape=(3,), dtype=vdtype)
    expected = a.copy()
    for b in range(3):
        if axis == 0:
            expected[int(vl[b]) :, b] = mask_value
        else:
            expected[b, int(vl[b]) :] = mask_value
    check_op(relay.sequence_mask(x, v, mask_value, axis), [a, vl], expected)


@pytest.mark.parametrize("seq_axis,batch_axis", [(1, 0), (0, 1)])
def test_reverse_sequence(seq_axis, batch_axis):
    shape = [0, 0, 2]
    shape[seq_axis], shape[batch_axis] = 4, 3
    a = np.arange(24, dtype="int32").reshape(shape)
    lengths = np.array([1, 4, 2], "int32")
    expected = a.copy()
    for b in range(3):
        n = lengths[b]
        if seq_axis == 1:
            expected[b, :n] = a[b, :n][::-1]
        else:
            expected[:n, b] = a[:n, b][::-1]
    x = relay.var("x", shape=shape, dtype="int32")
    s = relay.var("s", shape=(3,), dtype="int32")
    check_op(relay.reverse_sequence(x, s, seq_axis, batch_axis), [a, lengths], expected)


# ---- type errors ------------------------------------------------------------------------------

X = relay.var("x", shape=(3, 4))


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: relay.strided_slice(X, (0,), (1,), (0,)), r"strided_slice: stride of axis 0 is 0"),
        (
            lambda: relay.strided_slice(X, (0, 0, 0), (1, 1, 1)),
            r"strided_slice: begin \(0, 0, 0\) has 3 entries, more than the data's rank 2",
        ),
        # from a new-user trial: end/strides entries past the rank were dropped unsaid
        (
            lambda: relay.strided_slice(X, (0, 0), (1, 2, 3, 4, 5)),
            r"strided_slice: end \(1, 2, 3, 4, 5\) has 5 entries, more than the data's rank 2",
        ),
        (
            lambda: relay.strided_slice(X, (0,), (1,), (1, 1, 1)),
            r"strided_slice: strides \(1, 1, 1\) has 3 entries, more than the data's rank 2",
        ),
        (
            lambda: relay.strided_slice(X, (0, 0), (1, 1), axes=(1, -1)),
            r"strided_slice: axes \(1, -1\) name an axis twice \(data rank 2",
        ),
        (
            lambda: relay.strided_slice(X, (0, 0), (1, 1), (1, 1, 1), axes=(0, 1)),
            r"strided_slice: strides \(1, 1, 1\) has 3 entries, expected one per axis",
        ),
        (
            lambda: relay.strided_slice(X, (0,), (1,), axes=(3,)),
            r"strided_slice: axis 3 is out of range",
        ),
        (
            lambda: relay.take(X, relay.var("i", shape=(2,))),
            r"take: indices must have an integer dtype, got float32 \(shape \(2,\)\)",
        ),
        (
            lambda: relay.take(X, relay.var("i", shape=(2,), dtype="int32"), 2),
            r"take: axis 2 is out of range",
        ),
        (
            lambda: relay.take(X, relay.var("i", shape=(2,), dtype="int32"), 0, mode="nearest"),
            r"take: mode must be 'clip', 'wrap' or 'fast'",
        ),
        (
            lambda: relay.gather(X, 0, relay.var("i", shape=(2,), dtype="int32")),
            r"gather: data shape \(3, 4\) and indices shape \(2,\) must have one rank",
        ),
        (
            lambda: relay.gather_nd(X, relay.var("i", shape=(3, 2), dtype="int32")),
            r"gather_nd: indices shape \(3, 2\) indexes 3 dimensions .* data shape \(3, 4\)",
        ),
        (
            lambda: relay.one_hot(
                relay.var("i", shape=(2,), dtype="int32"),
                relay.const(1.0),
                relay.var("o", shape=(2,)),
                3,
                -1,
                "float32",
            ),
            r"one_hot: off_value must be a scalar, got shape \(2,\)",
        ),
        (
            lambda: relay.sequence_mask(X, relay.var("v", shape=(3,), dtype="int32")),
            r"sequence_mask: valid_length shape \(3,\) must be \(4,\)",
        ),
        (
            lambda: relay.reverse_sequence(X, relay.var("s", shape=(4,), dtype="int32")),
            r"reverse_sequence: seq_lengths shape \(4,\) must be \(3,\)",
        ),
        (
            lambda: relay.slice_like(X, relay.var("y", shape=(5, 4))),
            r"slice_like: shape_like shape \(5, 4\) is larger than data shape \(3, 4\) on axis 0",
        ),
    ],
)
def test_type_errors(make, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make())


def test_relations_wait_and_patterns():
    t = relay.op.get("take")
    assert t.type_rel([IncompleteType(), TensorType((2,), "int32")], t.make_attrs()) is None
    s = relay.op.get("strided_slice")
    assert s.type_rel([IncompleteType()], s.make_attrs(begin=(0,), end=(1,))) is None
    for name in ("strided_slice", "take", "gather", "gather_nd", "reverse_sequence"):
        assert relay.op.get(name).pattern == OpPattern.INJECTIVE
    assert relay.op.get("one_hot").pattern == OpPattern.OUT_ELEMWISE_FUSABLE


@pytest.mark.parametrize("dtype", ["int8", "float16", "int32", "bool"])
def test_data_movement_dtypes(dtype):
    a = (RNG.integers(-5, 5, (3, 4)) if dtype != "float16" else RNG.uniform(-5, 5, (3, 4))).astype(
        dtype
    )
    x = relay.var("x", shape=(3, 4), dtype=dtype)
    idx = np.array([2, 0], "int32")
    i = relay.var("i", shape=(2,), dtype="int32")
    check_op(relay.take(x, i, axis=1), [a, idx], np.take(a, idx, axis=1))
    gi = np.array([[0, 2, 1, 0]], "int64")
    g = relay.var("g", shape=(1, 4), dtype="int64")
    check_op(relay.gather(x, 0, g), [a, gi], np.take_along_axis(a, gi, 0))
    check_op(relay.transpose(x), [a], a.T)
    check_op(relay.concatenate([x, x], 1), [a], np.concatenate([a, a], 1))
    check_op(relay.broadcast_to(x, (2, 3, 4)), [a], np.broadcast_to(a, (2, 3, 4)))
    check_op(relay.strided_slice(x, (2,), (0,), (-1,)), [a], a[2:0:-1])
    check_op(relay.reverse(x, 1), [a], a[:, ::-1])
    check_op(relay.tile(x, (1, 2)), [a], np.tile(a, (1, 2)))
    c = relay.var("c", shape=(3, 4), dtype="bool")
    cond = RNG.uniform(size=(3, 4)) > 0.5
    check_op(relay.where(c, x, relay.reverse(x, 0)), [cond, a], np.where(cond, a, a[::-1]))


def test_strided_slice_matches_python_slicing_property():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    bound = st.one_of(st.none(), st.integers(-7, 7))
    step = st.integers(-3, 3).filter(lambda s: s != 0)

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.tuples(bound, bound, step), min_size=1, max_size=3))
    def check(spec):
        a = A345
        begin, end, strides, index = [], [], [], []
        for axis, (b, e, s) in enumerate(spec):
            d = a.shape[axis]
            b = (0 if s > 0 else d - 1) if b is None else b
            # Relay has no "None" end: a far bound means "through the edge"
            e_attr = (d + 10 if s > 0 else -(d + 10)) if e is None else e
            begin.append(b)
            end.append(e_attr)
            strides.append(s)
            index.append(slice(b, e, s))
        x = relay.var("x", shape=a.shape)
        check_op(relay.strided_slice(x, begin, end, strides), [a], a[tuple(index)])

    check()

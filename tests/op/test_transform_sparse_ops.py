"""sparse_to_dense, matrix_set_diag, sliding_window, strided_set and fixed_point_multiply
against NumPy, through the interpreter and compiled (tvm.relay 0.19's semantics)."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

RNG = np.random.default_rng(12)


def _tf_matrix_set_diag(data, diag, k1, k2, align):
    """TensorFlow's MatrixSetDiagV3 written out element by element."""
    out = data.copy()
    m, n = data.shape[-2:]
    maxlen = diag.shape[-1]
    for bi in np.ndindex(*data.shape[:-2]):
        for d in range(k1, k2 + 1):
            row = diag[bi] if k1 == k2 else diag[bi][k2 - d]
            length = min(m + min(d, 0), n - max(d, 0))
            right = align.split("_")[0 if d >= 0 else 1] == "RIGHT"
            off = maxlen - length if (right and k1 != k2) else 0
            for t in range(length):
                i, j = (t, t + d) if d >= 0 else (t - d, t)
                out[bi + (i, j)] = row[off + t]
    return out


@pytest.mark.parametrize(
    "shape,dshape,k,align",
    [
        ((2, 2), (2,), 0, "RIGHT_LEFT"),
        ((4, 3, 3), (4, 3), 0, "RIGHT_LEFT"),
        ((2, 3, 4), (2, 3), 1, "RIGHT_LEFT"),
        ((2, 4, 3), (2, 3), -1, "RIGHT_LEFT"),
        ((2, 3, 4), (2, 4, 3), (-1, 2), "RIGHT_LEFT"),
        ((2, 3, 4), (2, 4, 3), (-1, 2), "LEFT_RIGHT"),
        ((2, 3, 4), (2, 4, 3), (-1, 2), "LEFT_LEFT"),
        ((5, 3), (3, 3), (-2, 0), "RIGHT_RIGHT"),
    ],
)
def test_matrix_set_diag(shape, dshape, k, align):
    a = RNG.integers(-100, 100, shape).astype("int32")
    g = RNG.integers(-100, 100, dshape).astype("int32")
    x = relay.var("x", shape=shape, dtype="int32")
    d = relay.var("d", shape=dshape, dtype="int32")
    k1, k2 = (k, k) if isinstance(k, int) else k
    check_op(relay.matrix_set_diag(x, d, k, align), [a, g], _tf_matrix_set_diag(a, g, k1, k2, align))


def test_matrix_set_diag_errors():
    x = relay.var("x", shape=(3, 4))
    with pytest.raises(TypeInferenceError, match=r"diagonal must have shape \(3,\)"):
        infer(relay.matrix_set_diag(x, relay.var("d", shape=(4,))))
    with pytest.raises(TypeInferenceError, match="out of range"):
        infer(relay.matrix_set_diag(x, relay.var("d", shape=(1,)), 4))
    with pytest.raises(ValueError, match="align"):
        relay.matrix_set_diag(x, relay.var("d", shape=(3,)), 0, "RIGHT")


@pytest.mark.parametrize(
    "idx,vals,default,oshape",
    [
        (np.array(1, "int32"), np.array(3.0, "float32"), 0.0, [5]),
        (np.array([0, 1, 4], "int32"), np.array([3, 4, 5], "float32"), 1.5, [5]),
        (np.array([[0, 1], [2, 3], [1, 0]], "int64"), np.array([1, 2, 3], "float32"), 0, [3, 4]),
        (np.array([[0, 0, 1], [1, 2, 0]], "int32"), np.array([7, 8], "int32"), -1, [2, 3, 2]),
        (np.array([2, 2], "int32"), np.array([5, 6], "int32"), 0, [4]),  # a later duplicate wins
    ],
)
def test_sparse_to_dense(idx, vals, default, oshape):
    exp = np.full(oshape, default, vals.dtype)
    for j, pos in enumerate(idx.reshape(-1, 1) if idx.ndim < 2 else idx):
        exp[tuple(pos)] = vals.reshape(-1)[j]
    i = relay.var("i", shape=idx.shape, dtype=str(idx.dtype))
    v = relay.var("v", shape=vals.shape, dtype=str(vals.dtype))
    check_op(relay.sparse_to_dense(i, oshape, v, default), [idx, vals], exp)


def test_sparse_to_dense_default_expr_and_errors():
    i = relay.var("i", shape=(2,), dtype="int32")
    v = relay.var("v", shape=(2,), dtype="float32")
    dflt = relay.var("dflt", shape=(), dtype="float32")
    f = relay.Function([i, v, dflt], relay.sparse_to_dense(i, [3], v, dflt))
    check_op(f, [np.array([2, 0], "int32"), np.array([1, 2], "float32"), np.array(9, "float32")],
             np.array([2, 9, 1], "float32"))
    with pytest.raises(TypeInferenceError, match="sparse_values must have shape"):
        infer(relay.sparse_to_dense(i, [3], relay.var("w", shape=(3,))))
    with pytest.raises(TypeInferenceError, match="rank 1 output"):
        infer(relay.sparse_to_dense(i, [3, 3], v))
    with pytest.raises(TypeInferenceError, match="integer dtype"):
        infer(relay.sparse_to_dense(relay.var("f", shape=(2,)), [3], v))
    with pytest.raises(TypeError, match="list of ints"):
        relay.sparse_to_dense(i, relay.var("s", shape=(1,), dtype="int32"), v)


@pytest.mark.parametrize(
    "shape,axis,window,strides",
    [((2, 3, 9, 10), 1, [3, 4, 5], [1, 2, 3]), ((7,), 0, [3], [2]), ((4, 5), 0, [4, 2], [1, 3])],
)
def test_sliding_window(shape, axis, window, strides):
    a = RNG.uniform(-1, 1, shape).astype("float32")
    x = relay.var("x", shape=shape)
    y = relay.sliding_window(x, axis, window, strides)
    places = [(shape[axis + i] - w) // s + 1 for i, (w, s) in enumerate(zip(window, strides))]
    exp = np.zeros(shape[:axis] + tuple(places) + tuple(window), "float32")
    for lead in np.ndindex(*shape[:axis]):
        for p in np.ndindex(*places):
            sl = tuple(slice(q * s, q * s + w) for q, s, w in zip(p, strides, window))
            exp[lead + p] = a[lead + sl]
    assert infer(y).concrete_shape == exp.shape
    check_op(y, [a], exp)


def test_sliding_window_errors():
    x = relay.var("x", shape=(2, 3))
    with pytest.raises(TypeInferenceError, match="length rank - axis = 1"):
        infer(relay.sliding_window(x, 1, [2, 2], [1, 1]))
    with pytest.raises(TypeInferenceError, match="longer than dimension"):
        infer(relay.sliding_window(x, 1, [4], [1]))


@pytest.mark.parametrize(
    "shape,begin,end,strides",
    [
        ((3, 4), [0, 1], [2, 4], [1, 1]),
        ((3, 4, 5), [0, 3], [2, 0], [1, -2]),
        ((3, 4), [-2], [3], None),
        ((6, 4), [5, 1], [0, 3], [-2, 1]),
    ],
)
def test_strided_set(shape, begin, end, strides):
    a = RNG.uniform(-1, 1, shape).astype("float32")
    sl = [slice(b, e, s) for b, e, s in zip(begin, end, strides or [1] * len(begin))]
    exp = a.copy()
    vshape = exp[tuple(sl)].shape
    v = RNG.uniform(-1, 1, vshape).astype("float32")
    exp[tuple(sl)] = v
    x = relay.var("x", shape=shape)
    vv = relay.var("v", shape=vshape)
    check_op(relay.strided_set(x, vv, begin, end, strides), [a, v], exp)


def test_strided_set_errors():
    x = relay.var("x", shape=(3, 4))
    with pytest.raises(TypeInferenceError, match="v must have data's dtype"):
        infer(relay.strided_set(x, relay.var("v", shape=(2,)), [0], [2]))
    b = relay.const(np.array([0, 0]), "int64")
    with pytest.raises(TypeInferenceError, match="begin must be an int32 vector"):
        infer(relay.strided_set(x, relay.var("v", shape=(2, 4)), b, [2]))
    from relay_tvm.errors import InterpreterError, RelayError

    # begin/end/strides lists become int32 constants through the helper strided_slice uses
    # too; a float in them was truncated to int32 silently (review of 2026-12-05)
    with pytest.raises(RelayError, match=r"strided_set: begin/end/strides must be integers, "
                                         r"got \[0.5\]"):
        relay.strided_set(x, relay.var("v", shape=(2, 4)), [0.5], [2])
    with pytest.raises(RelayError, match="strided_slice: begin/end/strides must be integers"):
        relay.strided_slice(x, [0.5, 0], relay.var("e", shape=(2,), dtype="int64"))
    with pytest.raises(TypeInferenceError, match="slice"):  # known when the call is made
        relay.strided_set(x, relay.const(np.ones((1, 4), "float32")), [0], [2])
    b = relay.var("b", shape=(1,), dtype="int32")  # known at run time: the interpreter raises
    with pytest.raises(InterpreterError, match="slice"):
        f = relay.Function([x, b], relay.strided_set(x, relay.const(np.ones((1, 4), "float32")),
                                                     b, [2]))
        relay.create_executor("debug").evaluate(f)(np.zeros((3, 4), "float32"),
                                                   np.array([0], "int32"))


@pytest.mark.parametrize(
    "multiplier,shift", [(1073741824, -3), (1518500250, 2), (2147483647, 0), (1395864371, -7)]
)
def test_fixed_point_multiply(multiplier, shift):
    a = RNG.integers(-(2**20), 2**20, (40,)).astype("int32")
    a[:4] = [0, 1, -1, 2**20]
    # exact in float64 (|a * multiplier| < 2**53); rounding half towards +inf
    exp = np.floor(a.astype("float64") * multiplier * 2.0 ** (shift - 31) + 0.5).astype("int32")
    x = relay.var("x", shape=a.shape, dtype="int32")
    check_op(relay.fixed_point_multiply(x, multiplier, shift), [a], exp)


def test_fixed_point_multiply_needs_int32():
    with pytest.raises(TypeInferenceError, match="fixed_point_multiply"):
        infer(relay.fixed_point_multiply(relay.var("x", shape=(2,)), 1 << 30, 0))


def _segment_sum_loop(data, ids, num):
    out = np.zeros((num,) + data.shape[1:], data.dtype)
    for i, s in enumerate(ids):
        out[s] += data[i]
    return out


def _segment_sum_cases():
    for dynamic in (False, True):
        for num_segments in (None, 5):
            for shape, dtype in (((5, 3), "float32"), ((6,), "int32"), ((4, 2, 3), "float32")):
                # 3-D data with three Any dimensions took ~55 s of LLVM codegen when the
                # scatter and cumsum kernels indexed flat offsets (topi's), about 1 s now
                yield shape, dtype, num_segments, dynamic


@pytest.mark.parametrize("shape,dtype,num_segments,dynamic", list(_segment_sum_cases()))
def test_segment_sum(shape, dtype, num_segments, dynamic):
    data = RNG.integers(-5, 6, shape).astype(dtype)
    ids = np.array([3, 0, 3, 1, 0, 1][: shape[0]], "int32")
    num = num_segments or int(ids.max()) + 1
    exp = _segment_sum_loop(data, ids, num)
    dshape = tuple(relay.Any() for _ in shape) if dynamic else shape
    x = relay.var("x", shape=dshape, dtype=dtype)
    s = relay.var("s", shape=(relay.Any(),) if dynamic else ids.shape, dtype="int32")
    f = relay.Function([x, s], relay.op.segment_sum(x, s, num_segments))
    mod = relay.IRModule.from_expr(f)
    static = num_segments is not None and not dynamic
    if static:
        assert infer(f).concrete_shape == exp.shape
    kinds = ["debug", "vm"] + (["graph"] if static else [])
    for kind in kinds:
        got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(data, ids)
        np.testing.assert_array_equal(got.numpy(), exp)


def test_segment_sum_ids_of_another_length_refused():
    """One segment id per row of data. A shorter segment_ids silently gave wrong sums: the
    per-row lookup clamped, so the rows past the ids went to the last id's segment (found by
    TVM v0.19's TestSegmentSum, whose reference -- like 0.19 -- ignores those rows). Known
    when the call is made: a TypeInferenceError; known only at run time: an InputError from
    the checked lookup (all executors)."""
    with pytest.raises(TypeInferenceError, match=r"segment_sum: segment_ids has shape \(2,\); "
                                                 r"expected \(3,\), one segment id per row"):
        relay.op.segment_sum(relay.var("x", shape=(3, 4)),
                             relay.var("s", shape=(2,), dtype="int32"), 4)
    x = relay.var("x", shape=(relay.Any(), 4))
    s = relay.var("s", shape=(relay.Any(),), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x, s], relay.op.segment_sum(x, s, 4)))
    data = np.arange(12, dtype="float32").reshape(3, 4)
    for kind in ("debug", "vm"):
        run = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
        np.testing.assert_array_equal(run(data, np.array([0, 2, 2], "int32")).numpy(),
                                      _segment_sum_loop(data, [0, 2, 2], 4))
        with pytest.raises(relay.errors.InputError, match="take: .*out of range"):
            run(data, np.array([0, 2], "int32"))


def test_strided_set_v_of_another_shape():
    """v must have the slice's shape. Known when the call is made: a TypeInferenceError. Known
    only at run time (begin/end/strides variables): compiled code used to read past v's end
    (garbage like 3e-41 in the output) and divide by a zero stride; it now writes only what v
    covers and never reads outside it (lead's review of compat12)."""
    d = relay.var("d", shape=(4, 4))
    v = relay.var("v", shape=(1, 1))
    with pytest.raises(TypeInferenceError, match=r"v has shape \(1, 1\).*has shape \(2, 2\)"):
        relay.strided_set(d, v, [0, 0], [2, 2], [1, 1])
    with pytest.raises(TypeInferenceError, match="stride 1 is 0"):
        relay.strided_set(d, relay.var("w", shape=(2, 2)), [0, 0], [2, 2], [1, 0])
    b = relay.var("b", shape=(2,), dtype="int32")
    dv = np.arange(16, dtype="float32").reshape(4, 4)
    c = relay.const
    for args, runtime, want_set in [
        ((b, c(np.array([2, 2], "int32")), c(np.array([1, 1], "int32"))),
         np.array([0, 0], "int32"), [(0, 0)]),
        ((c(np.array([0, 0], "int32")), c(np.array([2, 2], "int32")), b),
         np.array([0, 1], "int32"), []),
    ]:
        f = relay.Function([d, v, b], relay.strided_set(d, v, *args))
        mod = relay.IRModule.from_expr(f)
        for kind in ("graph", "vm"):
            out = relay.create_executor(kind, mod=mod).evaluate()(
                dv, np.full((1, 1), -1.0, "float32"), runtime).numpy()
            want = dv.copy()
            for pos in want_set:
                want[pos] = -1.0
            np.testing.assert_array_equal(out, want)


def test_mismatched_dtypes_of_the_new_ops_are_refused():
    """matrix_set_diag, nn.conv2d_backward_weight and nn.contrib_dense_pack share relay's
    operand-dtype check (no implicit cast)."""
    v = relay.var
    cases = [
        relay.matrix_set_diag(v("a", shape=(3, 3)), v("d", shape=(3,), dtype="float64")),
        relay.nn.conv2d_backward_weight(v("g", shape=(1, 2, 3, 3)),
                                        v("x", shape=(1, 1, 5, 5), dtype="float64"),
                                        kernel_size=(3, 3), channels=2),
        relay.nn.contrib_dense_pack(v("x", shape=(2, 4)), v("w", shape=(1, 4, 8), dtype="float16")),
    ]
    for call in cases:
        with pytest.raises(TypeInferenceError, match="has dtype float32 but .* has dtype float"):
            infer(call)


def _sparse_reshape_numpy(idx, prev, new):
    """NumPy's ravel / unravel of each index (TensorFlow's SparseReshape)."""
    total = int(np.prod(prev))
    shape = new.astype("int64").copy()
    if (shape == -1).any():
        shape[shape == -1] = total // int(np.prod(shape[shape != -1]))
    if not len(idx):
        return np.zeros((0, len(new)), idx.dtype), shape.astype(idx.dtype)
    flat = np.ravel_multi_index(idx.T.astype("int64"), prev)
    return np.stack(np.unravel_index(flat, shape), 1).astype(idx.dtype), shape.astype(idx.dtype)


SPARSE_RESHAPE_CASES = [
    # TVM v0.19's docstring example, then 4-D int64, a -1 in the middle, no values at all
    (np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 2, 3]], "int32"),
     np.array([2, 3, 6], "int32"), np.array([9, -1], "int32")),
    (np.array([[0, 0, 0, 0], [0, 0, 1, 2], [0, 1, 0, 3], [1, 0, 0, 4], [1, 2, 3, 6]], "int64"),
     np.array([2, 3, 6, 7], "int64"), np.array([9, -1, 7], "int64")),
    (np.array([[0, 0], [0, 1], [3, 4], [4, 3], [7, 3]], "int32"), np.array([9, 5], "int32"),
     np.array([3, -1, 5], "int32")),
    (np.zeros((0, 2), "int32"), np.array([3, 6], "int32"), np.array([-1, 2], "int32")),
]


@pytest.mark.parametrize("case", range(len(SPARSE_RESHAPE_CASES)))
@pytest.mark.parametrize("dynamic", [False, True])
def test_sparse_reshape(case, dynamic):
    idx, prev, new = SPARSE_RESHAPE_CASES[case]
    want = _sparse_reshape_numpy(idx, prev, new)
    dt = str(idx.dtype)
    a = relay.var("a", shape=(relay.Any(), relay.Any()) if dynamic else idx.shape, dtype=dt)
    b = relay.var("b", shape=(relay.Any(),) if dynamic else prev.shape, dtype=dt)
    c = relay.var("c", shape=(relay.Any(),) if dynamic else new.shape, dtype=dt)
    mod = relay.IRModule.from_expr(
        relay.Function([a, b, c], relay.op.sparse_reshape(a, b, c).astuple()))
    kinds = ["debug", "vm"] + ([] if dynamic or not len(idx) else ["graph"])
    for kind in kinds:
        got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(idx, prev, new)
        for g, w in zip(got, want):
            assert g.numpy().dtype == w.dtype
            np.testing.assert_array_equal(g.numpy(), w)


def test_sparse_reshape_errors():
    a = relay.var("a", shape=(5, 3), dtype="int32")
    with pytest.raises(TypeInferenceError, match="has 3 columns; prev_shape has 2 dimensions"):
        infer(relay.op.sparse_reshape(a, relay.var("b", shape=(2,), dtype="int32"),
                                      relay.var("c", shape=(2,), dtype="int32")).astuple())
    with pytest.raises(TypeInferenceError, match="must have one dtype"):
        infer(relay.op.sparse_reshape(a, relay.var("b", shape=(3,), dtype="int64"),
                                      relay.var("c", shape=(2,), dtype="int32")).astuple())
    b, c = relay.var("b", shape=(2,), dtype="int32"), relay.var("c", shape=(2,), dtype="int32")
    run = relay.create_executor("debug", mod=relay.IRModule.from_expr(relay.Function(
        [b, c], relay.op.sparse_reshape(relay.const(np.array([[0, 1]], "int32")), b,
                                        c).astuple()))).evaluate()
    with pytest.raises(relay.errors.InputError, match=r"new_shape \[4, -1\] does not fit"):
        run(np.array([3, 3], "int32"), np.array([4, -1], "int32"))

"""Reductions, argmax/argmin and sorting against NumPy, through the interpreter and compiled."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.types import Any, IncompleteType, TensorType, TupleType
from relay_tvm.op import OpPattern

RNG = np.random.default_rng(3)


def _axes(axis, ndim, exclude):
    if axis is None:
        ax = tuple(range(ndim))
    else:
        ax = tuple(sorted({a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}))
    if exclude:
        ax = tuple(i for i in range(ndim) if i not in ax)
    return ax


# axis, keepdims, exclude
CASES = [
    (None, False, False),
    (1, False, False),
    ((0, 2), True, False),
    (-1, True, False),
    ((1,), False, True),
    ((0, -1), True, True),
]


def _trunc_mean(a, axis, keepdims):
    s = a.sum(axis=axis, keepdims=keepdims, dtype=a.dtype)
    n = int(np.prod([a.shape[i] for i in axis]))
    return (np.sign(s) * (np.abs(s) // n)).astype(a.dtype)


REDUCES = [
    ("sum", np.sum, ["float32", "int32", "float16"]),
    ("mean", np.mean, ["float32", "float16"]),
    ("max", np.max, ["float32", "int8", "int32"]),
    ("min", np.min, ["float32", "int8"]),
    ("prod", np.prod, ["float32", "int32"]),
]


@pytest.mark.parametrize("axis,keepdims,exclude", CASES)
@pytest.mark.parametrize(
    "name,fn,dtype",
    [(n, f, d) for n, f, ds in REDUCES for d in ds],
    ids=[f"{n}-{d}" for n, _, ds in REDUCES for d in ds],
)
def test_reduce(name, fn, dtype, axis, keepdims, exclude):
    if dtype.startswith("int"):
        a = RNG.integers(
            -3 if name == "prod" else -50, 4 if name == "prod" else 50, (2, 3, 4)
        ).astype(dtype)
    else:
        a = RNG.uniform(
            0.5 if name == "prod" else -1, 1.5 if name == "prod" else 1, (2, 3, 4)
        ).astype(dtype)
    x = relay.var("x", shape=(2, 3, 4), dtype=dtype)
    ax = _axes(axis, 3, exclude)
    expected = np.asarray(
        fn(a.astype("float64") if dtype == "float16" else a, axis=ax, keepdims=keepdims)
    ).astype(dtype)
    tol = 1e-2 if dtype == "float16" else 1e-5
    check_op(getattr(relay, name)(x, axis, keepdims, exclude), [a], expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_integer_mean_truncates(axis):
    a = np.array([[[-7, 2], [5, 1]], [[3, -3], [-1, -2]]], "int32")
    x = relay.var("x", shape=a.shape, dtype="int32")
    ax = _axes(axis, 3, False)
    check_op(relay.mean(x, axis), [a], _trunc_mean(a, ax, False))


@pytest.mark.parametrize("name,fn", [("all", np.all), ("any", np.any)])
@pytest.mark.parametrize("axis,keepdims,exclude", CASES[:4])
def test_all_any(name, fn, axis, keepdims, exclude):
    a = RNG.uniform(size=(2, 3, 4)) > 0.3
    x = relay.var("x", shape=a.shape, dtype="bool")
    ax = _axes(axis, 3, exclude)
    check_op(
        getattr(relay, name)(x, axis, keepdims, exclude), [a], fn(a, axis=ax, keepdims=keepdims)
    )


def _np_arg(fn, a, axes, keepdims, last):
    rest = [i for i in range(a.ndim) if i not in axes]
    y = np.transpose(a, rest + list(axes)).reshape([a.shape[i] for i in rest] + [-1])
    idx = y.shape[-1] - 1 - fn(y[..., ::-1], axis=-1) if last else fn(y, axis=-1)
    if keepdims:
        idx = idx.reshape([1 if i in axes else d for i, d in enumerate(a.shape)])
    return np.asarray(idx).astype("int32")


@pytest.mark.parametrize("name,fn", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("axis,keepdims,exclude", CASES)
@pytest.mark.parametrize("last", [False, True])
def test_arg_reduce(name, fn, axis, keepdims, exclude, last):
    a = RNG.integers(0, 4, (2, 3, 4)).astype("float32")  # many ties
    x = relay.var("x", shape=a.shape)
    ax = _axes(axis, 3, exclude)
    expected = _np_arg(fn, a, ax, keepdims, last)
    check_op(getattr(relay, name)(x, axis, keepdims, exclude, last), [a], expected)


def test_argmax_int8_and_first_index_on_ties():
    a = np.array([[1, 5, 5], [-3, -3, -4]], "int8")
    x = relay.var("x", shape=a.shape, dtype="int8")
    check_op(relay.argmax(x, axis=1), [a], np.array([1, 0], "int32"))
    check_op(relay.argmin(x, axis=1, select_last_index=True), [a], np.array([0, 2], "int32"))


@pytest.mark.parametrize("axis,keepdims,exclude", CASES)
@pytest.mark.parametrize("unbiased", [False, True])
def test_variance_std(axis, keepdims, exclude, unbiased):
    a = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")
    x = relay.var("x", shape=a.shape)
    ax = _axes(axis, 3, exclude)
    ddof = 1 if unbiased else 0
    check_op(
        relay.variance(x, axis, keepdims, exclude, unbiased),
        [a],
        np.var(a, axis=ax, keepdims=keepdims, ddof=ddof).astype("float32"),
        rtol=1e-4,
    )
    check_op(
        relay.std(x, axis, keepdims, exclude, unbiased),
        [a],
        np.std(a, axis=ax, keepdims=keepdims, ddof=ddof).astype("float32"),
        rtol=1e-4,
    )


def test_mean_variance_and_mean_std():
    a = RNG.uniform(-1, 1, (3, 4)).astype("float32")
    x = relay.var("x", shape=a.shape)
    check_op(relay.mean_variance(x, 1), [a], (a.mean(1), a.var(1)), rtol=1e-4)
    check_op(
        relay.mean_std(x, 0, keepdims=True),
        [a],
        (a.mean(0, keepdims=True), a.std(0, keepdims=True)),
        rtol=1e-4,
    )


# ---- sorting -----------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("is_ascend", [True, False])
@pytest.mark.parametrize(
    "dtype,idtype", [("float32", "int32"), ("int32", "int64"), ("float16", "int32")]
)
def test_argsort(axis, is_ascend, dtype, idtype):
    a = RNG.permutation(12).reshape(3, 4).astype(dtype)  # distinct values
    x = relay.var("x", shape=a.shape, dtype=dtype)
    order = np.argsort(a if is_ascend else -a.astype("float64"), axis=axis, kind="stable")
    check_op(relay.argsort(x, axis, is_ascend, idtype), [a], order.astype(idtype))


@pytest.mark.parametrize("k", [1, 2, 4, 0])
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk(k, axis, is_ascend):
    a = RNG.permutation(20).reshape(4, 5).astype("float32")
    x = relay.var("x", shape=a.shape)
    order = np.argsort(a if is_ascend else -a, axis=axis, kind="stable")
    n = a.shape[axis] if k < 1 else k
    idx = np.take(order, np.arange(n), axis=axis)
    vals = np.take_along_axis(a, idx, axis)
    both = relay.topk(x, k, axis, "both", is_ascend, "int32")
    assert isinstance(both, relay.TupleWrapper) and len(both) == 2
    check_op(both.astuple(), [a], (vals, idx.astype("int32")))
    check_op(both[0], [a], vals)
    check_op(relay.topk(x, k, axis, "values", is_ascend), [a], vals)
    check_op(relay.topk(x, k, axis, "indices", is_ascend, "int64"), [a], idx.astype("int64"))


def test_topk_int8():
    a = np.array([[3, -7, 9, 0]], "int8")
    x = relay.var("x", shape=a.shape, dtype="int8")
    check_op(
        relay.topk(x, 2).astuple(), [a], (np.array([[9, 3]], "int8"), np.array([[2, 0]], "int32"))
    )


# ---- types and errors --------------------------------------------------------------------------


def test_types():
    x = relay.var("x", relay.TensorType((Any(), 3, 4)))
    assert infer(relay.sum(x, 1)) == TensorType((Any(), 4), "float32")
    assert infer(relay.max(x, 0, keepdims=True)) == TensorType((1, 3, 4), "float32")
    assert infer(relay.argmax(x, 2)) == TensorType((Any(), 3), "int32")
    assert infer(relay.mean(x, 0, exclude=True)) == TensorType((Any(),), "float32")
    assert infer(relay.topk(x, 2).astuple()) == TupleType(
        [TensorType((Any(), 3, 2), "float32"), TensorType((Any(), 3, 2), "int32")]
    )
    assert (
        relay.op.get("sum").type_rel([IncompleteType()], relay.op.get("sum").make_attrs()) is None
    )


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda x: relay.sum(x, 3), r"sum: axis 3 is out of range for rank 3"),
        (lambda x: relay.argmax(x, (-4,)), r"argmax: axis -4 is out of range for rank 3"),
        (lambda x: relay.all(x), r"all: data must have dtype bool, got float32"),
        (lambda x: relay.sum(relay.cast(x, "bool"), 1), r"sum: data has dtype bool; use all/any"),
        (lambda x: relay.argmax(relay.cast(x, "bool")), r"argmax: data has dtype bool"),
        (
            lambda x: relay.variance(relay.cast(x, "int32")),
            r"variance: data must have a float dtype, got int32",
        ),
        (lambda x: relay.topk(x, 2, axis=5).astuple(), r"topk: axis 5 is out of range"),
        (
            lambda x: relay.topk(x, 2, ret_type="value"),
            r"topk: ret_type must be 'both', 'values' or 'indices'",
        ),
        (lambda x: relay.argsort(x, axis=3), r"argsort: axis 3 is out of range"),
        (lambda x: relay.topk(x, 5, ret_type="values"),
         r"topk: k=5 exceeds the size 4 of axis 2 of data shape \(2, 3, 4\)"),
    ],
)
def test_type_errors(make, match):
    with pytest.raises(TypeInferenceError, match=match):
        infer(make(relay.var("x", shape=(2, 3, 4))))


def test_patterns():
    for name in ("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "variance"):
        assert relay.op.get(name).pattern == OpPattern.COMM_REDUCE
    assert relay.op.get("argsort").pattern == OpPattern.OPAQUE
    assert relay.op.get("topk").pattern == OpPattern.OPAQUE


def test_topk_float_index_dtype_compiled():
    """topk with float32 indices (MXNet's default) on float data: compiled indices equal
    NumPy's stable descending order (the gather of the values needs integer indices)."""
    import tvm

    xv = np.array([[0.5, 3.0, -1.0, 2.0], [7.0, 1.0, 1.5, -2.0]], "float32")
    x = relay.var("x", shape=xv.shape)
    f = relay.Function([x], relay.topk(x, k=2, axis=1, ret_type="both", dtype="float32").astuple())
    lib = relay.build(relay.IRModule.from_expr(f), target="llvm")
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    m.set_input("x", xv)
    m.run()
    order = np.argsort(-xv, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.take_along_axis(xv, order, 1))
    assert m.get_output(1).numpy().dtype == np.float32
    np.testing.assert_array_equal(m.get_output(1).numpy(), order.astype("float32"))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "prod", "argmax", "variance", "std"])
@pytest.mark.parametrize("axis", [[1, 1], [1, -1], [-2, 0]])
def test_an_axis_named_twice_is_refused(op, axis):
    """A new-user trial: ``sum(a, axis=[1, 1])`` reduced axis 1 once, silently; NumPy raises
    "duplicate value in 'axis'". Each of these lists names one axis of a rank-2 tensor twice."""
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        np.sum(np.ones((2, 3)), axis=tuple(axis))   # NumPy's own rule
    a = relay.var("a", shape=(2, 3))
    call = getattr(relay, op)(a, axis=axis)
    with pytest.raises(TypeInferenceError, match=r"names axis \d twice"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([a], call)))

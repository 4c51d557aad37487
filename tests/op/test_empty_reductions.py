"""Reductions over an axis of size 0 (new-user trial: compiled code returned uninitialised
memory, because a reduction block's init ran inside the empty reduction loop).

Expected values are NumPy's: sum 0, prod 1, all True, any False, a conv2d with 0 input channels
gives its bias; max/min/argmax/argmin/mean/variance of an empty axis have no value (NumPy raises
or gives nan) and are type errors naming the operator and axis."""

import warnings

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from tests.op.op_check import check_op

RUNS = [("debug", 3), ("graph", 0), ("graph", 3), ("vm", 0), ("vm", 3)]


def _run(executor, opt_level, params, body, *args):
    mod = tvm.IRModule.from_expr(relay.Function(params, body))
    with relay.transform.PassContext(opt_level=opt_level):
        return relay.create_executor(executor, mod=mod, target="llvm").evaluate()(*args)


@pytest.mark.parametrize("executor,opt_level", RUNS)
def test_identity_of_empty_reductions(executor, opt_level):
    x = relay.var("x", shape=(3, 0))
    b = relay.var("b", shape=(3, 0), dtype="bool")
    body = relay.Tuple([relay.sum(x, axis=1), relay.prod(x, axis=1),
                        relay.sum(x, axis=1, keepdims=True), relay.all(b, axis=1),
                        relay.any(b, axis=1), relay.sum(x, axis=0)])
    xv, bv = np.zeros((3, 0), "float32"), np.zeros((3, 0), "bool")
    res = [r.numpy() for r in _run(executor, opt_level, [x, b], body, xv, bv)]
    want = [np.sum(xv, 1), np.prod(xv, 1), np.sum(xv, 1, keepdims=True), np.all(bv, 1),
            np.any(bv, 1), np.sum(xv, 0)]
    for r, w in zip(res, want):
        np.testing.assert_array_equal(r, w)
        assert r.shape == w.shape


@pytest.mark.parametrize("executor,opt_level", RUNS)
def test_conv2d_with_no_input_channels_is_its_bias(executor, opt_level):
    d = relay.var("d", shape=(1, 0, 4, 4))
    w = relay.var("w", shape=(2, 0, 3, 3))
    bias = relay.var("bias", shape=(2,))
    body = relay.nn.bias_add(relay.nn.conv2d(d, w, kernel_size=(3, 3), channels=2), bias)
    bv = np.array([1.5, -2.0], "float32")
    res = _run(executor, opt_level, [d, w, bias], body, np.zeros((1, 0, 4, 4), "float32"),
               np.zeros((2, 0, 3, 3), "float32"), bv).numpy()
    np.testing.assert_array_equal(res, np.broadcast_to(bv[None, :, None, None], (1, 2, 2, 2)))


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin", "mean", "variance"])
def test_no_identity_is_a_type_error(name):
    x = relay.var("x", shape=(3, 0))
    if name == "variance":
        body = relay.variance(x, axis=1)
    else:
        body = getattr(relay, name)(x, axis=1)
    match = "(mean|variance)" if name == "variance" else name  # variance reduces a mean first
    with pytest.raises(TypeInferenceError, match=f"{match}.*axis 1 of size 0"):
        relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], body)))
    with pytest.raises(TypeInferenceError, match=f"{match}.*size 0"):  # not NumPy's ValueError
        _run("debug", 3, [x], body, np.zeros((3, 0), "float32"))
    # a non-empty axis of a tensor with an empty other axis is fine
    if name != "variance":
        y = relay.var("y", shape=(0, 3))
        res = _run("graph", 3, [y], getattr(relay, name)(y, axis=1),
                   np.zeros((0, 3), "float32")).numpy()
        assert res.shape == (0,)


# ---- Any axes that are 0 at run time (new-user trial: the VM returned uninitialised memory, or
# died of SIGFPE on an integer mean, because such kernels kept their init in the reduction loop)

DYN_RUNS = [("vm", 0), ("vm", 3)]
ANY = relay.Any()


@pytest.mark.parametrize("executor,opt_level", DYN_RUNS + [("debug", 3)])
def test_identity_of_reductions_over_an_any_axis(executor, opt_level):
    x = relay.var("x", shape=(ANY, ANY, 3))
    body = relay.Tuple([relay.sum(x, axis=0), relay.prod(x, axis=(0, 1)),
                        relay.sum(x, axis=(1, 2), keepdims=True), relay.sum(x),
                        relay.mean(x, axis=1)])
    for shape in [(0, 4, 3), (2, 0, 3), (2, 4, 3)]:
        xv = np.random.RandomState(0).uniform(0.5, 1.5, shape).astype("float32")
        res = [r.numpy() for r in _run(executor, opt_level, [x], body, xv)]
        with warnings.catch_warnings():  # NumPy: "Mean of empty slice", nan
            warnings.simplefilter("ignore", RuntimeWarning)
            want = [xv.sum(0), xv.prod((0, 1)), xv.sum((1, 2), keepdims=True), xv.sum(),
                    xv.mean(1)]
        for r, w in zip(res, want):
            assert r.shape == w.shape
            np.testing.assert_allclose(r, w, rtol=1e-5)  # mean of nothing: nan in both


@pytest.mark.parametrize("executor,opt_level", DYN_RUNS + [("debug", 3)])
def test_products_with_an_any_inner_dimension_of_zero(executor, opt_level):
    a, b = relay.var("a", shape=(2, ANY)), relay.var("b", shape=(5, ANY))
    p, q = relay.var("p", shape=(2, 3, ANY)), relay.var("q", shape=(2, 4, ANY))
    body = relay.Tuple([relay.nn.dense(a, b), relay.nn.batch_matmul(p, q)])
    for k in (0, 3):
        rs = np.random.RandomState(k)
        av, bv = rs.rand(2, k).astype("float32"), rs.rand(5, k).astype("float32")
        pv, qv = rs.rand(2, 3, k).astype("float32"), rs.rand(2, 4, k).astype("float32")
        d, m = (r.numpy() for r in _run(executor, opt_level, [a, b, p, q], body, av, bv, pv, qv))
        np.testing.assert_allclose(d, av @ bv.T, rtol=1e-5)
        np.testing.assert_allclose(m, pv @ qv.transpose(0, 2, 1), rtol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name,dtype", [("max", "float32"), ("min", "float32"),
                                        ("argmax", "float32"), ("argmin", "int32"),
                                        ("mean", "int32")])
def test_no_value_over_an_any_axis_of_zero_is_a_run_time_error(name, dtype, opt_level):
    from relay_tvm.errors import InputError, InterpreterError

    x = relay.var("x", shape=(ANY, 3), dtype=dtype)
    body = getattr(relay, name)(x, axis=0)
    with pytest.raises(InputError, match=f"{name}.*reduces axis 0 of data, of size 0"):
        _run("vm", opt_level, [x], body, np.zeros((0, 3), dtype))
    with pytest.raises(InterpreterError, match=name):
        _run("debug", opt_level, [x], body, np.zeros((0, 3), dtype))
    # the same kernel over a non-empty axis: NumPy's value
    xv = np.array([[3, 1, 2], [1, 5, 0]], dtype)
    want = xv.mean(0).astype(dtype) if name == "mean" else getattr(np, name)(xv, axis=0)
    np.testing.assert_array_equal(_run("vm", opt_level, [x], body, xv).numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_pooling_an_empty_plane(dtype):
    from relay_tvm.errors import InputError

    # static: a type error; Any: the kernel checks (an integer average divided by a zero count)
    x = relay.var("x", shape=(1, 3, 0, 0), dtype=dtype)
    with pytest.raises(TypeInferenceError, match="global_avg_pool2d: pools axis H of size 0"):
        relay.transform.InferType()(tvm.IRModule.from_expr(
            relay.Function([x], relay.nn.global_avg_pool2d(x))))
    y = relay.var("y", shape=(1, 3, ANY), dtype=dtype)
    body = relay.nn.adaptive_avg_pool1d(y, 2)
    with pytest.raises(InputError, match="adaptive_avg_pool1d: axis W of data has size 0"):
        _run("vm", 3, [y], body, np.zeros((1, 3, 0), dtype))
    yv = np.arange(12).reshape(1, 3, 4).astype(dtype)
    want = np.stack([yv[..., :2].mean(-1), yv[..., 2:].mean(-1)], -1).astype(dtype)
    np.testing.assert_array_equal(_run("vm", 3, [y], body, yv).numpy(), want)
    # no output size: an empty plane stays empty
    z = relay.var("z", shape=(1, 3, ANY), dtype=dtype)
    out = _run("vm", 3, [z], relay.nn.adaptive_avg_pool1d(z), np.zeros((1, 3, 0), dtype))
    assert out.numpy().shape == (1, 3, 0)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_softmax_of_an_empty_any_axis(executor):
    y = relay.var("y", shape=(3, ANY))
    body = relay.Tuple([relay.nn.softmax(y), relay.nn.log_softmax(y)])
    for r in _run(executor, 3, [y], body, np.zeros((3, 0), "float32")):
        assert r.numpy().shape == (3, 0)


@pytest.mark.parametrize("make, shape, ref", [
    (lambda x: relay.argmax(x, axis=1), (0, 3), lambda v: np.argmax(v, axis=1).astype("int32")),
    (lambda x: relay.argmin(x, axis=1), (0, 3), lambda v: np.argmin(v, axis=1).astype("int32")),
    (lambda x: relay.argmax(x, axis=[2, 3]), (0, 2, 4, 4),
     lambda v: np.zeros((0, 2), "int32")),
    (relay.nn.batch_flatten, (0, 2, 4, 4), lambda v: v.reshape(0, 32)),
    (lambda x: relay.nn.adaptive_max_pool2d(x, (2, 2)), (0, 2, 4, 4),
     lambda v: np.zeros((0, 2, 2, 2), "float32")),
], ids=["argmax", "argmin", "argmax_2axes", "batch_flatten", "adaptive_max_pool"])
def test_empty_kept_axis(make, shape, ref):
    """An empty axis that is kept (not reduced): the interpreter's reference kernels reshaped
    with -1, which NumPy refuses for a size-0 array (found by a fresh-user trial: argmax of a
    (0, 3) tensor failed in the interpreter, the compiled kernels were right)."""
    v = np.zeros(shape, "float32")
    x = relay.var("x", shape=shape)
    check_op(make(x), [v], ref(v))

"""transform.gradient (the Relay paper's AD as a program transformation) against central finite
differences of the reference interpreter, NumPy closed forms, and first-order vs higher-order vs
the graph executor."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import GradientError
from relay_tvm.testing import check_grad, run_infer_type

RNG = np.random.default_rng(13)
F64 = "float64"


def _v(name, shape, dtype=F64):
    return relay.var(name, shape=shape, dtype=dtype)


def _n(*shape):
    return RNG.standard_normal(shape)


def _mlp():
    x, w1, b1, w2 = _v("x", (4, 6)), _v("w1", (5, 6)), _v("b1", (5,)), _v("w2", (3, 5))
    h = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w1), b1))
    out = relay.nn.log_softmax(relay.nn.dense(h, w2))
    inputs = [_n(4, 6), _n(5, 6), _n(5), _n(3, 5)]
    return relay.Function([x, w1, b1, w2], relay.sum(out * out)), inputs


def _convnet():
    x, w, w2 = _v("x", (2, 2, 6, 6)), _v("w", (3, 2, 3, 3)), _v("w2", (4, 12))
    y = relay.nn.conv2d(x, w, channels=3, kernel_size=(3, 3), padding=(1, 1))
    y = relay.nn.max_pool2d(relay.tanh(y), pool_size=(3, 3), strides=(3, 3))
    y = relay.nn.dense(relay.nn.batch_flatten(y), w2)
    return relay.Function([x, w, w2], relay.sum(relay.sigmoid(y))), [_n(2, 2, 6, 6), _n(3, 2, 3, 3),
                                                                    _n(4, 12)]


@pytest.mark.parametrize("mode", ["first_order", "higher_order"])
@pytest.mark.parametrize("net", [_mlp, _convnet], ids=["mlp", "convnet"])
def test_networks_finite_differences(net, mode):
    func, inputs = net()
    check_grad(func, inputs, eps=1e-6, atol=1e-6, rtol=1e-5, mode=mode)


def test_broadcast_reduces_to_argument_shape():
    x, y = _v("x", (3, 1)), _v("y", (1, 4))
    func = run_infer_type(relay.Function([x, y], relay.multiply(x, y) + relay.exp(y)))
    xs, ys = _n(3, 1), _n(1, 4)
    for mode in ("first_order", "higher_order"):
        g = relay.transform.gradient(func, mode=mode)
        t = relay.TensorType
        assert g.checked_type == relay.FuncType(
            [t((3, 1), F64), t((1, 4), F64)],
            relay.TupleType([t((3, 4), F64), relay.TupleType([t((3, 1), F64), t((1, 4), F64)])]))
        fwd, (dx, dy) = relay.create_executor().evaluate(g)(xs, ys)
        np.testing.assert_allclose(fwd.numpy(), xs * ys + np.exp(ys))
        np.testing.assert_allclose(dx.numpy(), np.full((3, 1), ys.sum()))
        np.testing.assert_allclose(dy.numpy(), xs.sum() + 3 * np.exp(ys))


def test_let_sharing_and_tuple_output():
    x = _v("x", (2, 3))
    sb = relay.ScopeBuilder()
    y = sb.let("y", relay.sin(x) * x)
    z = sb.let("z", relay.Tuple([y * y, y]))
    sb.ret(relay.Tuple([relay.TupleGetItem(z, 0), relay.TupleGetItem(z, 1) + x]))
    func = relay.Function([x], sb.get())
    xs = _n(2, 3)
    for mode in ("first_order", "higher_order"):
        check_grad(func, [xs], atol=1e-6, rtol=1e-5, mode=mode)
    # closed form: d/dx [y^2 + y + x] with y = x sin x
    y_np = xs * np.sin(xs)
    dy = np.sin(xs) + xs * np.cos(xs)
    _, (dx,) = relay.create_executor().evaluate(relay.transform.gradient(func))(xs)
    np.testing.assert_allclose(dx.numpy(), (2 * y_np + 1) * dy + 1)


def test_tuple_parameter_first_order_and_higher_order():
    t = relay.TensorType((2, 2), F64)
    tup = relay.var("tup", relay.TupleType([t, t]))
    func = relay.Function([tup], relay.TupleGetItem(tup, 0) * relay.TupleGetItem(tup, 1))
    a, b = _n(2, 2), _n(2, 2)
    for mode in ("first_order", "higher_order"):
        _, (g,) = relay.create_executor().evaluate(relay.transform.gradient(
            run_infer_type(func), mode=mode))((a, b))
        np.testing.assert_allclose(g[0].numpy(), b)
        np.testing.assert_allclose(g[1].numpy(), a)


def test_if_on_data():
    x = _v("x", (3,))
    cond = relay.greater(relay.sum(x), relay.const(0.0, F64))
    func = relay.Function([x], relay.If(cond, x * x * x, relay.exp(x)))
    check_grad(func, [np.array([0.5, 1.0, -0.2])], atol=1e-6, rtol=1e-5)  # true branch
    check_grad(func, [np.array([-0.5, -1.0, 0.2])], atol=1e-6, rtol=1e-5)  # false branch


def test_closure_capturing_and_called_twice():
    x, y = _v("x", (2, 2)), _v("y", (2, 2))
    f = relay.var("f")
    sb = relay.ScopeBuilder()
    sb.let(f, relay.Function([y], relay.tanh(y) * x))  # captures x
    sb.ret(f(x) + f(relay.sin(x)))
    check_grad(relay.Function([x], sb.get()), [_n(2, 2)], atol=1e-6, rtol=1e-5)


def _power_by_recursion(n):
    """x ** (n + 1) by a local recursive function over an int32 counter."""
    x = _v("x", (3,))
    i = relay.var("i", shape=(), dtype="int32")
    acc = _v("acc", (3,))
    loop = relay.var("loop", relay.FuncType([relay.TensorType((), "int32"),
                                            relay.TensorType((3,), F64)],
                                           relay.TensorType((3,), F64)))
    body = relay.If(relay.equal(i, relay.const(0)), acc,
                    loop(relay.subtract(i, relay.const(1)), acc * x))
    prog = relay.Let(loop, relay.Function([i, acc], body), loop(relay.const(n), x))
    return relay.Function([x], prog)


def test_recursion_over_counter():
    xs = np.array([0.7, -1.1, 1.3])
    check_grad(_power_by_recursion(3), [xs], atol=1e-6, rtol=1e-5)
    _, (dx,) = relay.create_executor().evaluate(
        relay.transform.gradient(run_infer_type(_power_by_recursion(3))))(xs)
    np.testing.assert_allclose(dx.numpy(), 4 * xs ** 3)


def test_references():
    x = _v("x", (2, 3))
    r, u = relay.var("r"), relay.var("u")
    body = relay.Let(u, relay.RefWrite(r, relay.RefRead(r) * relay.RefRead(r) + x),
                     relay.exp(relay.RefRead(r)))
    func = relay.Function([x], relay.Let(r, relay.RefCreate(x), body))
    check_grad(func, [_n(2, 3) * 0.5], atol=1e-6, rtol=1e-5)


def test_adt_list_map_fold():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    x, y = _v("x", (2,)), _v("y", (2,))
    a, b, e = _v("a", (2,)), _v("b", (2,)), _v("e", (2,))
    square = relay.Function([e], relay.sin(e) * e)
    add = relay.Function([a, b], a + b)
    lst = p.cons(x, p.cons(y, p.cons(x * y, p.nil())))
    body = p.foldl(add, relay.zeros_like(x), p.map(square, lst))
    mod["main"] = relay.Function([x, y], body)
    mod = relay.transform.InferType()(mod)
    grad = relay.transform.gradient(mod["main"], mod=mod)
    xs, ys = _n(2), _n(2)
    fwd, (dx, dy) = relay.create_executor(mod=mod).evaluate(grad)(xs, ys)

    def f(v):
        return np.sin(v) * v

    def df(v):
        return np.sin(v) + v * np.cos(v)

    np.testing.assert_allclose(fwd.numpy(), f(xs) + f(ys) + f(xs * ys))
    np.testing.assert_allclose(dx.numpy(), df(xs) + df(xs * ys) * ys)
    np.testing.assert_allclose(dy.numpy(), df(ys) + df(xs * ys) * xs)


def test_global_functions_and_global_recursion():
    mod = relay.IRModule()
    t = relay.TensorType((3,), F64)
    x = relay.var("x", t)
    double = relay.GlobalVar("double")
    mod[double] = relay.Function([x], x * relay.cos(x))
    n, v = relay.var("n", shape=(), dtype="int32"), relay.var("v", t)
    rec = relay.GlobalVar("rec")
    mod[rec] = relay.Function(
        [n, v], relay.If(relay.equal(n, relay.const(0)), v,
                         rec(relay.subtract(n, relay.const(1)), double(v))), t)
    y = relay.var("y", t)
    mod["main"] = relay.Function([y], rec(relay.const(2), y))
    mod = relay.transform.InferType()(mod)
    grad = relay.transform.gradient(mod.get_global_var("main"), mod=mod)
    assert "rec_grad" in [g.name_hint for g in mod.get_global_vars()]
    ys = np.array([0.3, -0.8, 1.2])
    fwd, (dy,) = relay.create_executor(mod=mod).evaluate(grad)(ys)

    def g(v):
        return v * np.cos(v)

    def dg(v):
        return np.cos(v) - v * np.sin(v)

    np.testing.assert_allclose(fwd.numpy(), g(g(ys)))
    np.testing.assert_allclose(dy.numpy(), dg(g(ys)) * dg(ys))


def test_second_order():
    x = _v("x", (4,))
    func = run_infer_type(relay.Function([x], x * x * x))
    back = relay.transform.gradient(func)
    z = _v("z", (4,))
    dfunc = run_infer_type(relay.Function([z], relay.TupleGetItem(relay.TupleGetItem(back(z), 1),
                                                                  0)))
    back2 = relay.transform.gradient(dfunc)
    xs = _n(4)
    fwd, (d2,) = relay.create_executor().evaluate(back2)(xs)
    np.testing.assert_allclose(fwd.numpy(), 3 * xs ** 2)
    np.testing.assert_allclose(d2.numpy(), 6 * xs)


@pytest.mark.parametrize("net", [_mlp, _convnet], ids=["mlp", "convnet"])
def test_first_order_compiles_on_graph_executor(net):
    func, inputs = net()
    grad = relay.transform.gradient(run_infer_type(func), mode="first_order")
    ref_fwd, ref_grads = relay.create_executor("debug").evaluate(grad)(*inputs)
    mod = relay.IRModule.from_expr(grad)
    fwd, grads = relay.create_executor("graph", mod=mod).evaluate()(*inputs)
    np.testing.assert_allclose(fwd.numpy(), ref_fwd.numpy(), rtol=1e-10)
    for a, b in zip(grads, ref_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)


def test_first_order_has_no_duplicate_forward():
    x, y = _v("x", (6, 6)), _v("y", (6, 6))
    xy = relay.nn.dense(x, y)
    func = run_infer_type(relay.Function([x, y], relay.sum(xy - relay.sum(xy, keepdims=True))))
    grad = relay.transform.gradient(func, mode="first_order")
    count = []
    relay.analysis.post_order_visit(
        grad, lambda e: count.append(1) if isinstance(e, relay.Call) and
        getattr(e.op, "name", "") == "nn.dense" else None)
    assert len(count) == 3  # one forward, two backward


def test_errors():
    x = _v("x", (4,))
    func = run_infer_type(relay.Function([x], relay.cumprod(x)))
    for mode in ("first_order", "higher_order"):
        with pytest.raises(GradientError, match="operator cumprod has no gradient rule"):
            relay.transform.gradient(func, mode=mode)
    with pytest.raises(GradientError, match="unknown mode"):
        relay.transform.gradient(func, mode="forward")
    with pytest.raises(GradientError, match="dataflow programs; found Function"):
        relay.transform.gradient(_power_by_recursion(1), mode="first_order")
    cond = relay.less(relay.sum(x), relay.const(0.0, F64))
    with pytest.raises(GradientError, match="dataflow programs; found If"):
        relay.transform.gradient(relay.Function([x], relay.If(cond, x, x * x)), mode="first_order")
    # integer-only non-differentiable operators are fine: nothing flows through them
    idx = relay.argsort(x)
    ok = run_infer_type(relay.Function([x], relay.take(x, idx) * x))
    check_grad(ok, [np.array([0.3, -1.0, 2.0, 0.9])], atol=1e-6, rtol=1e-5)


def test_deep_chain():
    x = _v("x", (2,))
    y = x
    for _ in range(3000):
        y = relay.sin(y) * relay.const(1.0, F64)
    func = run_infer_type(relay.Function([x], y))
    for mode in ("first_order", "higher_order"):
        g = relay.transform.gradient(func, mode=mode)
        assert isinstance(g.checked_type, relay.FuncType)


def test_conv2d_single_input_channel():
    # bug: the conv2d rule took groups=1 with one input channel for a depthwise convolution
    x, w = _v("x", (2, 1, 5, 5)), _v("w", (3, 1, 3, 3))
    y = relay.nn.conv2d(x, w, channels=3, kernel_size=(3, 3))
    check_grad(relay.Function([x, w], relay.sum(relay.tanh(y))), [_n(2, 1, 5, 5), _n(3, 1, 3, 3)],
               atol=1e-6, rtol=1e-5, mode="first_order")


def test_higher_order_backpropagator_shares_no_node():
    # 0.19's gradient was in A-normal form (its test_analysis_feature expects no fGraph): the
    # output's gradient and each argument's reference are let-bound, not read twice
    from relay_tvm.analysis import Feature, detect_feature

    x = relay.var("x", relay.TensorType((3, 2), "float32"))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], x * x + x)))
    back = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.transform.gradient(mod["main"], mod=mod)))["main"]
    assert Feature.fGraph not in detect_feature(back)
    xv = np.random.default_rng(3).standard_normal((3, 2)).astype("float32")
    out, (grad,) = relay.create_executor("debug", mod=relay.IRModule.from_expr(back))\
        .evaluate()(xv)
    np.testing.assert_allclose(out.numpy(), xv * xv + xv, rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), 2 * xv + 1, rtol=1e-6)

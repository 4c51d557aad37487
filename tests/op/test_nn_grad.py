"""Gradient rules of the nn operators against central finite differences (float64), the
gradient expressions run through the interpreter and the compiled graph executor; the pooling
gradient operators against their definition."""

import numpy as np
import pytest
from nn_util import make_mod, run_compiled, run_debug

import relay_tvm as relay
from relay_tvm.ir.types import TupleType


def _rand(shape, seed, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def numeric_grads(call, values, wrt, og, eps=1e-6):
    """d sum(f(args) * og) / d args[i] for i in ``wrt``, by central differences of the
    operator's forward (the interpreter's kernel)."""
    op = call.op

    def loss(args):
        out = op.ref_impl([np.asarray(a) for a in args], call.attrs, call.checked_type)
        return float((np.asarray(out, dtype="float64") * og).sum())

    grads = []
    for i in wrt:
        g = np.zeros_like(values[i])
        for idx in np.ndindex(*values[i].shape):
            plus = [x.copy() for x in values]
            minus = [x.copy() for x in values]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (loss(plus) - loss(minus)) / (2 * eps)
        grads.append(g)
    return grads


def check_grad(make, inputs, rtol=1e-5, atol=1e-6):
    """Compare the rule's gradients for every variable argument of ``make(*vars)`` (a single
    operator call) with finite differences."""
    mod, arrays = make_mod(make, inputs)
    mod = relay.transform.InferType()(mod)
    params = list(mod["main"].params)
    call = mod["main"].body
    assert not isinstance(call.checked_type, TupleType)
    values = [np.asarray(a.data) if isinstance(a, relay.Constant) else arrays[params.index(a)]
              for a in call.args]
    wrt = [i for i, a in enumerate(call.args) if not isinstance(a, relay.Constant)]
    og_val = _rand([int(d) for d in call.checked_type.shape], 99)
    want = numeric_grads(call, values, wrt, og_val)

    def build(*vs):
        fwd = make(*vs[:-1])
        typed = relay.transform.InferType()(
            relay.IRModule.from_expr(relay.Function(list(vs[:-1]), fwd)))
        body, ps = typed["main"].body, typed["main"].params
        grads = body.op.gradient(body, vs[-1])
        return relay.bind(relay.Tuple([grads[i] for i in wrt]), dict(zip(ps, vs[:-1])))

    full = {**inputs, "og": og_val}
    gmod, garrays = make_mod(build, full)
    for got in (run_debug(gmod, garrays), run_compiled(make_mod(build, full)[0], garrays)):
        for k, i in enumerate(wrt):
            np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol,
                                       err_msg=f"gradient of argument {i}")


X = _rand((2, 3, 4), 0)


@pytest.mark.parametrize("make,inputs", [
    (lambda a: relay.nn.relu(a), {"x": X}),
    (lambda a: relay.nn.leaky_relu(a, 0.2), {"x": X}),
    (lambda a, b: relay.nn.prelu(a, b), {"x": X, "a": _rand((3,), 1)}),
    (lambda a: relay.nn.softmax(a), {"x": X}),
    (lambda a: relay.nn.softmax(a, axis=1), {"x": X}),
    (lambda a: relay.nn.log_softmax(a), {"x": X}),
    (lambda a, b: relay.nn.bias_add(a, b), {"x": X, "b": _rand((3,), 2)}),
    (lambda a, b: relay.nn.bias_add(a, b, axis=-1), {"x": X, "b": _rand((4,), 2)}),
    (lambda a, b: relay.nn.dense(a, b), {"x": _rand((2, 3), 3), "w": _rand((4, 3), 4)}),
    (lambda a: relay.nn.batch_flatten(a), {"x": X}),
    (lambda a: relay.nn.pad(a, ((0, 1), (2, 0), (1, 1))), {"x": X}),
])
def test_elementwise_and_dense_grads(make, inputs):
    check_grad(make, inputs)


@pytest.mark.parametrize("ta,tb", [(False, True), (False, False), (True, False), (True, True)])
def test_batch_matmul_grad(ta, tb):
    a = _rand((2, 4, 3) if ta else (2, 3, 4), 5)
    b = _rand((2, 5, 4) if tb else (2, 4, 5), 6)
    check_grad(lambda x, y: relay.nn.batch_matmul(x, y, transpose_a=ta, transpose_b=tb),
               {"a": a, "b": b})


@pytest.mark.parametrize("kw", [
    dict(pool_size=2, strides=2),
    dict(pool_size=3, strides=2, padding=1),
    dict(pool_size=3, strides=2, padding=(1, 0, 0, 1), ceil_mode=True),
])
@pytest.mark.parametrize("kind", ["max", "avg_in", "avg_ex"])
def test_pool2d_grad(kw, kind):
    x = _rand((1, 2, 5, 6), 7)
    if kind == "max":
        check_grad(lambda a: relay.nn.max_pool2d(a, **kw), {"x": x})
    else:
        check_grad(lambda a: relay.nn.avg_pool2d(a, count_include_pad=kind == "avg_in", **kw),
                   {"x": x})


def test_global_avg_pool2d_grad():
    check_grad(lambda a: relay.nn.global_avg_pool2d(a), {"x": _rand((2, 3, 4, 5), 8)})


@pytest.mark.parametrize("kw,wshape", [
    (dict(), (4, 3, 3, 3)),
    (dict(strides=2, padding=(1, 0, 2, 1)), (4, 3, 3, 2)),
    (dict(dilation=2, padding=1), (2, 3, 2, 3)),
    (dict(strides=2, padding=1), (4, 3, 3, 3)),  # the stride drops a row: output_padding
    (dict(groups=3, padding=1, strides=(1, 2)), (3, 1, 3, 3)),  # depthwise
])
def test_conv2d_grad(kw, wshape):
    check_grad(lambda a, b: relay.nn.conv2d(a, b, **kw),
               {"x": _rand((2, 3, 6, 7), 9), "w": _rand(wshape, 10)})


def test_cross_entropy_grads():
    p = _rand((3, 4), 11, 0.1, 1.0)
    t = _rand((3, 4), 12, 0.0, 1.0)
    check_grad(lambda a, b: relay.nn.cross_entropy(a, b), {"p": p, "t": t})
    check_grad(lambda a, b: relay.nn.cross_entropy_with_logits(a, b), {"p": p, "t": t})

"""The gradient rules written with transform.gradient (relay_tvm/transform/_ad_rules.py), each
against central finite differences of the reference interpreter in float64."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import GradientError
from relay_tvm.testing import check_grad

RNG = np.random.default_rng(21)
F64 = "float64"


def _v(name, shape, dtype=F64):
    return relay.var(name, shape=shape, dtype=dtype)


def _n(*shape):
    return RNG.standard_normal(shape)


def _check(make, shapes, extra=(), weight=True, **tol):
    """Gradient of sum(make(*vars) * w) for a fixed random w (so each output element matters)."""
    params = [_v(f"x{i}", s) for i, s in enumerate(shapes)]
    out = make(*params, *extra)
    func = relay.testing.run_infer_type(relay.Function(params, out))
    t = func.body.checked_type
    leaves = t.fields if isinstance(t, relay.TupleType) else [t]
    ws = [relay.const(RNG.standard_normal(tuple(int(d) for d in lt.shape)), F64) for lt in leaves]
    if isinstance(t, relay.TupleType):
        total = None
        for i, w in enumerate(ws):
            term = relay.sum(relay.TupleGetItem(out, i) * w)
            total = term if total is None else total + term
    else:
        total = relay.sum(out * ws[0])
    inputs = [_n(*s) for s in shapes]
    check_grad(relay.Function(params, total), inputs, eps=1e-6,
               atol=tol.get("atol", 1e-6), rtol=tol.get("rtol", 1e-5))


CASES = {
    "fast_exp": (lambda x: relay.fast_exp(x * relay.const(0.3, F64)), [(2, 3)]),
    "fast_tanh": (lambda x: relay.fast_tanh(x), [(2, 3)]),
    "fast_erf": (lambda x: relay.fast_erf(x), [(2, 3)]),
    "fast_softmax": (lambda x: relay.nn.fast_softmax(x), [(2, 4)]),
    "dropout": (lambda x: relay.nn.dropout(x, 0.3), [(2, 3)]),
    "layer_norm": (lambda x, gm, bt: relay.nn.layer_norm(x, gm, bt, axis=1), [(3, 4), (4,),
                                                                               (4,)]),
    "instance_norm": (lambda x, gm, bt: relay.nn.instance_norm(x, gm, bt), [(2, 3, 4), (3,),
                                                                            (3,)]),
    "group_norm": (lambda x, gm, bt: relay.nn.group_norm(x, gm, bt, num_groups=2),
                   [(2, 4, 3), (4,), (4,)]),
    "batch_norm": (lambda x, gm, bt, m, v: relay.nn.batch_norm(
        x, gm, bt, m, relay.exp(v))[0], [(2, 3, 2), (3,), (3,), (3,), (3,)]),
    "l2_normalize": (lambda x: relay.nn.l2_normalize(x, 1e-12, axis=[1]), [(2, 3)]),
    "matmul": (lambda a, b: relay.nn.matmul(a, b), [(2, 3), (3, 4)]),
    "matmul_tt": (lambda a, b: relay.nn.matmul(a, b, transpose_a=True, transpose_b=True),
                  [(3, 2), (4, 3)]),
    "conv1d": (lambda x, w: relay.nn.conv1d(x, w, strides=2, padding=1, channels=3,
                                            kernel_size=3), [(2, 2, 7), (3, 2, 3)]),
    "conv2d_transpose": (lambda x, w: relay.nn.conv2d_transpose(
        x, w, strides=(2, 2), padding=(1, 1), channels=3, kernel_size=(3, 3)),
        [(1, 2, 3, 3), (2, 3, 3, 3)]),
    # grouped (not depthwise): the weight gradient convolves per group with the batch as input
    # channels, the data gradient swaps each group's (O/G, I) of the flipped weight
    "conv2d_groups2": (lambda x, w: relay.nn.conv2d(x, w, strides=(2, 1), padding=(1, 0, 0, 1),
                                                    channels=6, kernel_size=(3, 2), groups=2),
                       [(2, 4, 5, 4), (6, 2, 3, 2)]),
    "conv2d_groups3_dilated": (lambda x, w: relay.nn.conv2d(
        x, w, padding=(2, 2), dilation=(2, 1), channels=3, kernel_size=(3, 3), groups=3),
        [(1, 6, 5, 5), (3, 2, 3, 3)]),
    "conv2d_depthwise_multiplier2": (lambda x, w: relay.nn.conv2d(
        x, w, strides=(2, 2), padding=(1, 1), channels=6, kernel_size=(3, 3), groups=3),
        [(2, 3, 5, 5), (6, 1, 3, 3)]),
    "global_max_pool2d": (lambda x: relay.nn.global_max_pool2d(x), [(1, 2, 3, 3)]),
    "adaptive_avg_pool2d": (lambda x: relay.nn.adaptive_avg_pool2d(x, (2, 2)), [(1, 2, 4, 4)]),
    "adaptive_max_pool2d": (lambda x: relay.nn.adaptive_max_pool2d(x, (2, 1)), [(1, 2, 4, 4)]),
    "max_pool1d": (lambda x: relay.nn.max_pool1d(x, 2, 2), [(1, 2, 6)]),
    "avg_pool1d": (lambda x: relay.nn.avg_pool1d(x, 3, 1, padding=1), [(1, 2, 5)]),
    "global_avg_pool1d": (lambda x: relay.nn.global_avg_pool1d(x), [(2, 2, 5)]),
    "adaptive_max_pool1d": (lambda x: relay.nn.adaptive_max_pool1d(x, 2), [(1, 2, 6)]),
    "dilate": (lambda x: relay.nn.dilate(x, (1, 2)), [(2, 3)]),
    "depth_to_space": (lambda x: relay.nn.depth_to_space(x, 2), [(1, 8, 2, 2)]),
    "space_to_depth": (lambda x: relay.nn.space_to_depth(x, 2), [(1, 2, 4, 4)]),
    "space_to_batch_nd": (lambda x: relay.nn.space_to_batch_nd(x, [2], [[1, 1]]), [(1, 4, 2)]),
    "batch_to_space_nd": (lambda x: relay.nn.batch_to_space_nd(x, [2], [[1, 0]]), [(2, 3, 2)]),
    "split": (lambda x: relay.split(x, 3, axis=1).astuple(), [(2, 6)]),
    "trilu": (lambda x: relay.trilu(x, relay.const(0), upper=False), [(3, 3)]),
    "meshgrid": (lambda a, b: relay.meshgrid([a, b], indexing="xy").astuple(), [(3,), (2,)]),
    "sort": (lambda x: relay.sort(x, axis=1), [(2, 4)]),
    "topk": (lambda x: relay.topk(x, 2, axis=1, ret_type="values"), [(2, 4)]),
    "einsum": (lambda a, b: relay.einsum([a, b], "ij,jk->ik"), [(2, 3), (3, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule(name):
    make, shapes = CASES[name]
    _check(make, shapes)


def test_upsampling_rule_closed_form():
    # (the reference kernel of nn.upsampling rounds through float32, so finite differences in
    # float64 are not exact: compare with the closed form, a sum over each replicated block)
    x = _v("x", (1, 2, 2, 2))
    w = _n(1, 2, 4, 6)
    func = relay.testing.run_infer_type(relay.Function([x], relay.sum(
        relay.nn.upsampling(x, 2, 3) * relay.const(w, F64))))
    for mode in ("first_order", "higher_order"):
        _, (dx,) = relay.create_executor().evaluate(relay.transform.gradient(func, mode=mode))(
            _n(1, 2, 2, 2))
        np.testing.assert_allclose(dx.numpy(), w.reshape(1, 2, 2, 2, 2, 3).sum((3, 5)))


def test_scatter_rules():
    idx = relay.const(np.array([[1, 0, 2]], "int64"))
    _check(lambda d, u: relay.scatter_elements(d, idx, u, 0, "update"), [(3, 3), (1, 3)])
    _check(lambda d, u: relay.scatter_elements(d, idx, u, 0, "add"), [(3, 3), (1, 3)])
    nd_idx = relay.const(np.array([[0, 2]], "int64"))
    _check(lambda d, u: relay.scatter_nd(d, nd_idx, u, "update"), [(3, 2), (2, 2)])
    _check(lambda d, u: relay.scatter_nd(d, nd_idx, u, "add"), [(3, 2), (2, 2)])


def test_unsupported_variants_name_the_operator():
    x = _v("x", (1, 4, 2, 2))
    func = relay.testing.run_infer_type(relay.Function([x], relay.sum(
        relay.nn.depth_to_space(x, 2, mode="CRD"))))
    with pytest.raises(GradientError, match="depth_to_space"):
        relay.transform.gradient(func)
    y = _v("y", (4,))
    func = relay.testing.run_infer_type(relay.Function([y], relay.sum(relay.cumprod(y))))
    with pytest.raises(GradientError, match="operator cumprod has no gradient rule"):
        relay.transform.gradient(func, mode="first_order")
    # a dilated max pool: the rule's own error, not the type relation's of nn.max_pool2d_grad
    # (a fresh-user trial got a TypeInferenceError quoting the generated expression)
    z = _v("z", (1, 1, 6, 6))
    func = relay.testing.run_infer_type(relay.Function([z], relay.sum(
        relay.nn.max_pool2d(z, (2, 2), dilation=(2, 2)))))
    with pytest.raises(GradientError, match=r"gradient of nn.max_pool2d: dilation \(2, 2\) "
                                            r"is not supported"):
        relay.transform.gradient(func)


def test_arange_gradient_with_respect_to_start_and_step():
    # out[i] = start + i * step, here (2.5, 4.3, 6.1, 7.9); the gradient seeds every output
    # with 1: d/dstart = 4 (the length), d/dstep = 0 + 1 + 2 + 3, d/dstop = 0
    start, stop, step = (relay.var(n, shape=(), dtype=F64) for n in ("start", "stop", "step"))
    func = relay.testing.run_infer_type(
        relay.Function([start, stop, step], relay.arange(start, stop, step, F64)))
    back = relay.testing.run_infer_type(relay.transform.gradient(func))
    args = [np.array(v, F64) for v in (2.5, 9.5, 1.8)]
    value, (g_start, g_stop, g_step) = relay.create_executor("debug").evaluate(back)(*args)
    np.testing.assert_allclose(value.numpy(), [2.5, 4.3, 6.1, 7.9])
    np.testing.assert_allclose(g_start.numpy(), 4.0)
    np.testing.assert_allclose(g_stop.numpy(), 0.0)
    np.testing.assert_allclose(g_step.numpy(), 6.0)

"""Importer tests for the operator names that MXNet writes under aliases, legacy names, the
NumPy-interface (_npi_/_npx_) names and the _v1 / contrib variants; MXNet computes the
expected values."""

import json

import numpy as np
import pytest
from mx_helpers import assert_close, run_mod
from test_mxnet_ops import IMG, XY, X, check

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")
import relay_tvm as relay  # noqa: E402

pytestmark = pytest.mark.mxnet
S = mx.sym

# (alias as it may appear in symbol JSON, the canonical operator MXNet writes, builder, shapes)
ALIASES = [
    ("Softmax", "SoftmaxOutput", lambda x, y: S.SoftmaxOutput(x, y), {"x": (2, 5), "y": (2,)}),
    ("concat", "Concat", lambda x, y: S.concat(x, y, dim=1), XY),
    ("flatten", "Flatten", lambda x: S.Flatten(x), IMG),
    ("pad", "Pad", lambda x: S.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 0)), IMG),
    ("reshape", "Reshape", lambda x: S.Reshape(x, shape=(0, -1)), X),
    ("split", "SliceChannel", lambda x: S.Group(list(S.split(x, num_outputs=2, axis=2))), X),
    ("broadcast_plus", "broadcast_add", lambda x, y: S.broadcast_add(x, y), XY),
    ("broadcast_minus", "broadcast_sub", lambda x, y: S.broadcast_sub(x, y), XY),
    ("broadcast_axes", "broadcast_axis", lambda x: S.broadcast_axis(x, axis=1, size=3),
     {"x": (2, 1, 4)}),
    ("sum_axis", "sum", lambda x: S.sum(x, axis=1), X),
    ("max_axis", "max", lambda x: S.max(x, axis=(0, 2)), X),
    ("min_axis", "min", lambda x: S.min(x, axis=2, keepdims=True), X),
    ("Convolution_v1", "Convolution",
     lambda x: S.Convolution(x, kernel=(3, 3), num_filter=2, pad=(1, 1), name="c"), IMG),
    ("Pooling_v1", "Pooling",
     lambda x: S.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max"), IMG),
    ("BatchNorm_v1", "BatchNorm", lambda x: S.BatchNorm(x, fix_gamma=False, name="bn"), IMG),
    ("_contrib_SyncBatchNorm", "BatchNorm",
     lambda x: S.BatchNorm(x, fix_gamma=False, name="bn"), IMG),
    # legacy (MXNet < 1.0) scalar operator names
    ("__add_scalar__", "_plus_scalar", lambda x: x + 1.5, X),
    ("__sub_scalar__", "_minus_scalar", lambda x: x - 1.5, X),
    ("__rsub_scalar__", "_rminus_scalar", lambda x: 1.5 - x, X),
    ("__mul_scalar__", "_mul_scalar", lambda x: x * 1.5, X),
    ("__div_scalar__", "_div_scalar", lambda x: x / 1.5, X),
    ("__rdiv_scalar__", "_rdiv_scalar", lambda x: 1.5 / x, X),
    ("__pow_scalar__", "_power_scalar", lambda x: x ** 2.0, X),
    ("__rpow_scalar__", "_rpower_scalar", lambda x: 2.0 ** x, X),
]


@pytest.mark.parametrize("alias, canonical, build, shapes", ALIASES, ids=[a[0] for a in ALIASES])
def test_alias(alias, canonical, build, shapes):
    """The graph as MXNet writes it, with the node renamed to ``alias``: the same values."""
    sym = build(**{n: S.var(n) for n in shapes})
    graph = json.loads(sym.tojson())
    ops = [n for n in graph["nodes"] if n["op"] == canonical]
    assert ops, f"{canonical} not in the symbol"
    for n in ops:
        n["op"] = alias
    rng = np.random.default_rng(0)
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    vals = {}
    for name, shp in list(zip(sym.list_arguments(), arg_shapes)) + list(
            zip(sym.list_auxiliary_states(), aux_shapes)):
        lo = 0.5 if name.endswith(("var", "gamma")) or name == "x" and "div" in alias else -1.0
        vals[name] = rng.uniform(lo, 1.5, shp).astype("float32")
    aux = sym.list_auxiliary_states()
    exe = sym.bind(mx.cpu(), args={n: mx.nd.array(vals[n]) for n in sym.list_arguments()},
                   aux_states={n: mx.nd.array(vals[n]) for n in aux})
    expected = [e.asnumpy() for e in exe.forward(is_train=False)]
    params = {k: v for k, v in vals.items() if k not in shapes}
    mod, bound = relay.frontend.from_mxnet(json.dumps(graph), shape=shapes, arg_params=params)
    got = run_mod(mod, bound, {k: vals[k] for k in shapes})
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-5)


def check_np(build, shapes, values=None, dtypes=None):
    """Like ``check`` for MXNet's NumPy interface (mx.sym.np / npx): built in np mode."""
    dtypes = dtypes or {}
    rng = np.random.default_rng(0)
    vals = {n: rng.uniform(-2, 2, s).astype(dtypes.get(n, "float32")) for n, s in shapes.items()}
    vals.update(values or {})
    mx.npx.set_np()
    try:
        sym = build(**{n: S.var(n).as_np_ndarray() for n in shapes})
        text = sym.tojson()
        exe = sym.bind(mx.cpu(), args={n: mx.np.array(v, dtype=v.dtype) for n, v in vals.items()})
        expected = [e.asnumpy() for e in exe.forward()]
    finally:
        mx.npx.reset_np()
    mod, params = relay.frontend.from_mxnet(text, shape=shapes, dtype=dtypes or "float32")
    got = run_mod(mod, params, vals)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        assert_close(g.astype("float64"), e.astype("float64"), rtol=1e-5)


NP = [
    ("_npi_add", lambda x, y: S.np.add(x, y), XY),
    ("_npi_subtract", lambda x, y: S.np.subtract(x, y), XY),
    ("_npi_multiply", lambda x, y: S.np.multiply(x, y), XY),
    ("_npi_power", lambda x, y: S.np.power(S.np.abs(x), y), XY),
    ("_npi_less", lambda x, y: S.np.less(x, y), XY),
    ("_npi_less_equal", lambda x, y: S.np.less_equal(x, y), XY),
    ("_npi_add_scalar", lambda x: x + 2.5, X),
    ("_npi_subtract_scalar", lambda x: x - 2.5, X),
    ("_npi_multiply_scalar", lambda x: x * 2.5, X),
    ("_npi_true_divide_scalar", lambda x: x / 2.5, X),
    ("_npi_power_scalar", lambda x: S.np.abs(x) ** 1.5, X),
    ("_npi_tanh", lambda x: S.np.tanh(x), X),
    ("_npi_absolute", lambda x: S.np.abs(x), X),
    ("_npi_transpose", lambda x: S.np.transpose(x, (1, 2, 0)), X),
    ("_np_transpose", lambda x: x.T, X),
    ("_npi_concatenate", lambda x, y: S.np.concatenate([x, y], axis=2), XY),
    ("_npi_stack", lambda x, y: S.np.stack([x, y], axis=1), XY),
    ("_npi_copy", lambda x: S.np.copy(x), X),
    ("_npi_pad", lambda x: S.np.pad(x, ((0, 0), (1, 2), (2, 1)), mode="constant",
                                    constant_values=0.5), X),
    ("_npi_where_rscalar", lambda c, x: S.np.where(c, x, 1.5), {"c": (2, 3, 4), "x": (2, 3, 4)}),
    ("_npi_where_lscalar", lambda c, x: S.np.where(c, 1.5, x), {"c": (2, 3, 4), "x": (2, 3, 4)}),
    ("_npi_where_scalar2", lambda c: S.np.where(c, 1.5, -2), {"c": (2, 3, 4)}),
    ("_npi_where", lambda c, x, y: S.np.where(c, x, y), {"c": (2, 3, 4), "x": (2, 3, 4),
                                                         "y": (3, 1)}),
    ("_np_cumsum", lambda x: S.np.cumsum(x, axis=1), X),
    ("_npx_reshape", lambda x: S.npx.reshape(x, (-2, -1)), X),
    ("_npx_reshape-5", lambda x: S.npx.reshape(x, (-5, -1)), X),
    ("_npx_reshape-6", lambda x: S.npx.reshape(x, (-6, 1, 2, -4)), X),
    ("_npx_reshape-3", lambda x: S.npx.reshape(x, (-2, -3, -4)), {"x": (2, 1, 3, 4)}),
]


@pytest.mark.parametrize("name, build, shapes", NP, ids=[n[0] for n in NP])
def test_numpy_interface(name, build, shapes):
    check_np(build, shapes)


@pytest.mark.parametrize("written, alias, build", [
    ("_np_copy", "_npi_copy", lambda x: S.np.copy(x)),
    ("_np_transpose", "_npi_transpose", lambda x: S.np.transpose(x, (2, 0, 1))),
])
def test_np_renamed(written, alias, build):
    """Operators MXNet 1.9.1 writes under one name and other versions under ``alias``."""
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4)).astype("float32")
    mx.npx.set_np()
    try:
        sym = build(S.var("x").as_np_ndarray())
        graph = json.loads(sym.tojson())
        expected = sym.bind(mx.cpu(), args={"x": mx.np.array(x)}).forward()[0].asnumpy()
    finally:
        mx.npx.reset_np()
    renamed = [n for n in graph["nodes"] if n["op"] == written]
    assert renamed
    for n in renamed:
        n["op"] = alias
    mod, _ = relay.frontend.from_mxnet(json.dumps(graph), shape={"x": x.shape})
    np.testing.assert_array_equal(run_mod(mod, {}, {"x": x})[0], expected)


def test_misc_named_ops():
    idx = np.array([0, 5, 11, 7], "float32")
    check(lambda i: S.unravel_index(i, shape=(3, 4)), {"i": (4,)}, values={"i": idx})
    check(lambda x, y: S.Group(list(S.amp_multicast(x, y, num_outputs=2))), XY,
          dtypes={"x": "float16", "y": "float32"}, rtol=1e-3)
    check(lambda x, y: S._internal._rnn_param_concat(x, y, dim=0, num_args=2),
          {"x": (3,), "y": (5,)})


def test_batchnorm_v1_direct():
    check(lambda x: S.BatchNorm_v1(x, fix_gamma=False, eps=1e-2, name="bn"), IMG)
    check(lambda x: S.BatchNorm_v1(x, name="bn"), IMG)


def test_spatial_transformer():
    theta = np.array([[0.9, 0.1, 0.05, -0.1, 1.1, 0.0]], "float32")
    check(lambda x, t: S.BilinearSampler(x, S.GridGenerator(t, transform_type="affine",
                                                            target_shape=(5, 6))),
          {"x": (1, 2, 7, 7), "t": (1, 6)}, values={"t": theta}, rtol=1e-4)

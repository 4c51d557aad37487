"""Importer tests of gamma / gammaln, hypot, MXNet's modulo and power, and the NumPy interface's
true division, scalar comparisons and reductions: MXNet 1.9.1 computes the expected values and
dtypes, edge cases (poles, zero divisors, mixed dtypes) included."""

import json

import numpy as np
import pytest
from mx_helpers import run_mod
from test_mxnet_ops import check
from test_mxnet_ops_names import check_np

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")
import relay_tvm as relay  # noqa: E402
from relay_tvm.errors import ConversionError  # noqa: E402

pytestmark = pytest.mark.mxnet
S = mx.sym


def _mx_forward(sym, feed, np_mode=False):
    """MXNet's outputs of ``sym`` bound to ``feed`` (name -> NumPy array)."""
    arr = mx.np.array if np_mode else mx.nd.array
    exe = sym.bind(mx.cpu(), {k: arr(v, dtype=v.dtype) for k, v in feed.items()})
    return [o.asnumpy() for o in exe.forward()]


def _compare(sym_json, feed, want, kinds=("debug", "graph"), rtol=1e-5, dtype=None):
    """Import ``sym_json`` and check every executor against MXNet's ``want``: same dtype and
    shape, NaN where MXNet has NaN, equal infinities, values within ``rtol`` (no absolute
    tolerance, so infinities and small values count)."""
    shapes = {k: v.shape for k, v in feed.items()}
    dtypes = dtype or {k: str(v.dtype) for k, v in feed.items()}
    mod, params = relay.frontend.from_mxnet(sym_json, shape=shapes, dtype=dtypes)
    for kind in kinds:
        got = run_mod(mod, params, feed, kind=kind)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (kind, g.dtype, w.dtype, g.shape)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, err_msg=kind)


# ---- gamma, gammaln ----

POSITIVE = np.array([0.01, 0.1, 0.5, 0.999, 1.0, 1.5, 2.0, 2.5, 3.7, 7.25, 10.0, 20.5, 34.0],
                    "float32")


@pytest.mark.parametrize("op", ["gamma", "gammaln"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_positive(op, dtype):
    """Positive arguments (small, near the zeros of gammaln at 1 and 2, up to float32's overflow
    at about 35) at rtol 1e-5 against MXNet's kernel; gammaln(1) and gammaln(2) are 0 in both."""
    x = POSITIVE.astype(dtype)
    sym = getattr(S, op)(S.var("x"))
    want = _mx_forward(sym, {"x": x})
    if op == "gammaln":  # MXNet's exact zeros against our ~1e-16: compare them absolutely
        zero = want[0] == 0
        mod, params = relay.frontend.from_mxnet(sym, shape={"x": x.shape}, dtype=dtype)
        got = run_mod(mod, params, {"x": x}, kind="graph")[0]
        assert got.dtype == want[0].dtype
        np.testing.assert_allclose(got[zero], 0, atol=1e-6)
        np.testing.assert_allclose(got[~zero], want[0][~zero], rtol=1e-5)
        return
    _compare(sym, {"x": x}, want)


def test_gamma_float64_large_and_accurate():
    """In float64 the Lanczos sum is good to ~1e-13 relative: Gamma(170.5) ~ 1.6e306 and
    lgamma(1e6), against MXNet (C's tgamma / lgamma in double)."""
    x = np.array([0.3, 4.5, 50.0, 100.25, 170.5, 1e6], "float64")
    for op in ("gamma", "gammaln"):
        sym = getattr(S, op)(S.var("x"))
        _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}), rtol=1e-12, kinds=("graph",))


@pytest.mark.parametrize("op", ["gamma", "gammaln"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_negative_and_poles(op, dtype):
    """Negative non-integers by the reflection formula (gamma(-0.5) = -3.5449, gamma(-3.5) =
    0.27), the poles (gamma(0) = inf, gamma(-1) = gamma(-4) = nan; gammaln = inf there), float32
    overflow (gamma(35.5) = inf), large arguments and infinities, as MXNet gives them."""
    x = np.array([-3.5, -2.5, -1.25, -0.5, -1e-3, -1.0, -4.0, 0.0, 35.5, 200.0, -50.5,
                  np.inf], dtype)
    sym = getattr(S, op)(S.var("x"))
    _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}), rtol=2e-5)


@pytest.mark.parametrize("op", ["gamma", "gammaln"])
def test_gamma_integers_truncate(op):
    """int32 data: computed in double, truncated back as MXNet (gamma(5) = 24, gammaln(5) = 3)."""
    x = np.array([1, 2, 3, 5, 7, 12], "int32")
    sym = getattr(S, op)(S.var("x"))
    _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}))


# ---- hypot, power, mod (legacy names) ----

A = np.array([5.5, -5.5, 5.5, -5.5, 3.0, 0.0, 7.0, 2.0, 3e30, -1e-30], "float32")
B = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 3.0, 7.0, 0.0, 4e30, 1e-30], "float32")


@pytest.mark.parametrize("build", [S._internal._hypot, S.broadcast_hypot],
                         ids=["_hypot", "broadcast_hypot"])
def test_hypot(build):
    """No overflow of the squares (hypot(3e30, 4e30) = 5e30) nor underflow (1e-30)."""
    sym = build(S.var("a"), S.var("b"))
    feed = {"a": A, "b": B}
    _compare(sym, feed, _mx_forward(sym, feed))
    ints = {"a": A[:8].astype("int32"), "b": B[:8].astype("int32")}  # hypot(7, 7) = 9
    _compare(sym, ints, _mx_forward(sym, ints))


@pytest.mark.parametrize("scalar", [2.0, -2.0, 0.0, 1.5])
@pytest.mark.parametrize("op", ["_hypot_scalar", "_mod_scalar", "_rmod_scalar"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_legacy_scalar_ops(op, scalar, dtype):
    """The scalar takes the data's dtype (1.5 is 1 for int32, MXNet's legacy rule); mod by 0
    is 0."""
    x = A[:8].astype(dtype)
    sym = getattr(S._internal, op)(S.var("x"), scalar=scalar)
    _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}))


@pytest.mark.parametrize("build", [S._internal._mod, S.broadcast_mod],
                         ids=["_mod", "broadcast_mod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_mod_zero_divisor_is_zero(build, dtype):
    """MXNet's mod takes the divisor's sign and gives 0 for a zero divisor, floats included;
    broadcast_mod gave NaN there (relay.floor_mod is NumPy's)."""
    feed = {"a": A[:8].astype(dtype), "b": B[:8].astype(dtype)}
    sym = build(S.var("a"), S.var("b"))
    _compare(sym, feed, _mx_forward(sym, feed))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_elementwise_power(dtype):
    """``_power`` (elementwise, same shape): int32 computes in double and truncates
    (5 ** -2 = 0), 0 ** 0 = 1."""
    a = np.array([5, -5, 5, 2, 3, 0, 7, 2], dtype)
    b = np.array([2, 2, -2, 3, 0, 3, 7, 0], dtype)
    sym = S._internal._power(S.var("a"), S.var("b"))
    _compare(sym, {"a": a, "b": b}, _mx_forward(sym, {"a": a, "b": b}))


# ---- NumPy interface ----


def _np_graph(build, feed):
    """``build`` on NumPy-mode variables: (symbol JSON, MXNet's outputs)."""
    mx.npx.set_np()
    try:
        sym = build(*[S.var(n).as_np_ndarray() for n in feed])
        return sym.tojson(), _mx_forward(sym, feed, np_mode=True)
    finally:
        mx.npx.reset_np()


NA = A[:8].reshape(2, 4)
NB = B[:8].reshape(2, 4)
MIXED = [("float32", "float32"), ("float64", "float64"), ("int32", "int32"), ("int64", "int64"),
         ("uint8", "uint8"), ("float16", "float16"), ("int32", "float32"), ("float32", "int32"),
         ("float32", "float64"), ("bool", "bool")]


@pytest.mark.parametrize("da, db", [m for m in MIXED if m != ("float32", "float64")])
def test_np_true_divide(da, db):
    """Integers and bools divide into float32, an int with a float takes the float, float16
    stays (MXNet 1.9.1, measured; it has no float32 / float64 kernel); x / 0 is inf."""
    feed = {"a": NA.astype(da), "b": NB.astype(db)}
    text, want = _np_graph(lambda a, b: S.np.true_divide(a, b), feed)
    _compare(text, feed, want, rtol=1e-3 if "float16" in (da, db) else 1e-5)


@pytest.mark.parametrize("da, db", [m for m in MIXED if m[0] != "bool"])
def test_np_mod(da, db):
    """``np.mod``: divisor's sign, 0 for a zero divisor; int with float gives the float."""
    feed = {"a": NA.astype(da), "b": NB.astype(db)}
    text, want = _np_graph(lambda a, b: S.np.mod(a, b), feed)
    _compare(text, feed, want, rtol=1e-3 if "float16" in (da, db) else 1e-5)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
@pytest.mark.parametrize("da, db", [("int32", "float32"), ("float16", "float32"),
                                    ("int32", "int64"), ("bool", "int32"), ("uint8", "int32"),
                                    ("float32", "float64"), ("float32", "float32")])
def test_np_arithmetic_mixed_dtypes(op, da, db):
    """``_npi_add`` / ``_npi_subtract`` / ``_npi_multiply`` of two dtypes promote as MXNet 1.9.1
    does (int32 with float32 is float32, bool with int32 is int32); the importer refused them
    ("Relay does not cast implicitly"). MXNet refuses to subtract two different integer / bool
    dtypes, and so does the importer."""
    feed = {"a": NA.astype(da), "b": NB.astype(db)}
    if op == "subtract" and da != db and "float" not in da + db:
        with pytest.raises(Exception, match="does not support combination"):
            _np_graph(lambda a, b: S.np.subtract(a, b), feed)  # MXNet's own refusal
        mx.npx.set_np()
        try:
            text = S.np.subtract(S.var("a").as_np_ndarray(), S.var("b").as_np_ndarray()).tojson()
        finally:
            mx.npx.reset_np()
        with pytest.raises(ConversionError, match=f"operands have dtypes {da} and {db}: MXNet "
                                                  "1.9.1 does not subtract"):
            _compare(text, feed, None)
        return
    text, want = _np_graph(lambda a, b: getattr(S.np, op)(a, b), feed)
    _compare(text, feed, want, rtol=1e-3 if "float16" in (da, db) else 1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_np_hypot(dtype):
    feed = {"a": NA.astype(dtype), "b": NB.astype(dtype)}
    text, want = _np_graph(lambda a, b: S.np.hypot(a, b), feed)
    _compare(text, feed, want)


def test_np_hypot_refuses_integers():
    """MXNet's np.hypot refuses integers ("only support floating point"); so does the
    importer, naming the node and the dtypes."""
    mx.npx.set_np()
    try:
        text = S.np.hypot(S.var("a").as_np_ndarray(), S.var("b").as_np_ndarray()).tojson()
    finally:
        mx.npx.reset_np()
    with pytest.raises(ConversionError, match=r"_npi_hypot node 'hypot\d*': operands have dtypes "
                                              r"int32 and int32, expected float dtypes"):
        relay.frontend.from_mxnet(text, shape={"a": (2,), "b": (2,)}, dtype="int32")


CMP = [(">", lambda x, s: x > s), ("<", lambda x, s: x < s), (">=", lambda x, s: x >= s),
       ("<=", lambda x, s: x <= s), ("==", lambda x, s: x == s), ("!=", lambda x, s: x != s)]


@pytest.mark.parametrize("name, build", CMP, ids=[c[0] for c in CMP])
@pytest.mark.parametrize("scalar", [1, 1.5, -1.5, 0.5, -2])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool"])
def test_np_scalar_comparisons(name, build, scalar, dtype):
    """``_npi_<cmp>_scalar``: bool results; an int array meets a float scalar in float64 (MXNet:
    int32 1 >= 1.5 is False), a bool array takes the scalar as a bool (True == 1.5)."""
    x = np.array([[0, 1, 2, -1], [-2, 5, 1, 0]]).astype(dtype)
    text, want = _np_graph(lambda x: build(x, scalar), {"x": x})
    _compare(text, {"x": x}, want)


@pytest.mark.parametrize("expr", ["np.maximum(x, 1.5)", "np.minimum(x, 1.5)",
                                  "np.maximum(x, 1)", "np.hypot(x, 1.5)", "np.hypot(x, -2)"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_np_mode_legacy_scalar_ops_promote(expr, dtype):
    """NumPy mode writes legacy ``_maximum_scalar`` / ``_minimum_scalar`` / ``_hypot_scalar``
    nodes with ``is_int``; MXNet then promotes as for the ``_npi_`` scalar operators (int32
    with 1.5 gives float64, bool with 1 gives int64); the importer cut the scalar to the data's
    dtype (maximum(int32 x, 1.5) was x)."""
    x = np.array([[0, 1, 2, -1], [-2, 5, 1, 0]]).astype(dtype)
    text, want = _np_graph(lambda x: eval(expr, {"np": S.np, "x": x}), {"x": x})  # noqa: S307
    _compare(text, {"x": x}, want)


REDUCE = [("sum", {}), ("sum", {"axis": 1}), ("sum", {"axis": (0, 1), "keepdims": True}),
          ("sum", {"axis": 0, "dtype": "float32"}), ("prod", {}), ("prod", {"axis": 1}),
          ("max", {}), ("max", {"axis": 0}), ("min", {"axis": -1, "keepdims": True}),
          ("mean", {}), ("mean", {"axis": 1}), ("mean", {"axis": 0, "dtype": "float64"}),
          ("mean", {"axis": (0, 1), "keepdims": True})]


@pytest.mark.parametrize("fn, kwargs", REDUCE, ids=[f"{f}-{k}" for f, k in REDUCE])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_np_reductions(fn, kwargs, dtype):
    """``_np_sum`` / ``_np_prod`` / ``_np_max`` / ``_np_min`` / ``_npi_mean``: shape () when all
    axes are reduced; ints keep their dtype (sum, prod, max, min) or give float32 (mean); bool
    sums as int64 and averages as float32 (MXNet 1.9.1, measured)."""
    x = np.array([[5, -5, 5, -5], [3, 0, 7, 2], [1, 2, 1, 3]]).astype(dtype)
    check_np(lambda x: getattr(S.np, fn)(x, **kwargs), {"x": x.shape}, values={"x": x},
             dtypes={"x": dtype})


def test_np_reduction_initial_is_refused():
    mx.npx.set_np()
    try:
        graph = json.loads(S.np.sum(S.var("x").as_np_ndarray()).tojson())
    finally:
        mx.npx.reset_np()
    graph["nodes"][-1].setdefault("attrs", {})["initial"] = "2.0"
    with pytest.raises(ConversionError, match=r"_np_sum node 'sum\d*': attribute "
                                              r"initial='2.0' is not supported"):
        relay.frontend.from_mxnet(json.dumps(graph), shape={"x": (2, 3)})


def test_np_mean_graph_executor():
    x = np.arange(12, dtype="int32").reshape(3, 4)
    text, want = _np_graph(lambda x: S.np.mean(x, axis=0), {"x": x})
    _compare(text, {"x": x}, want)


def test_legacy_check_helper_still_used():
    """gamma through the generic ``check`` helper (random inputs in (0.5, 2))."""
    check(lambda x: S.gamma(x), {"x": (2, 3)}, positive=("x",))


# ---- nansum / nanprod, size_array, diag (new-user trial: unsupported) ----

NAN_DATA = np.array([[1.5, np.nan, -2.0], [np.nan, np.nan, 4.0]], "float32")


@pytest.mark.parametrize("op", ["nansum", "nanprod"])
@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": 0, "keepdims": True},
                                {"axis": 1, "exclude": True}])
def test_nansum_nanprod(op, kw):
    sym = getattr(S, op)(S.var("x"), **kw)
    _compare(sym, {"x": NAN_DATA}, _mx_forward(sym, {"x": NAN_DATA}))


def test_nansum_of_integers():
    x = np.arange(6, dtype="int32").reshape(2, 3)
    sym = S.nansum(S.var("x"), axis=0)
    _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}))


def test_size_array():
    x = np.zeros((3, 4, 5), "float32")
    sym = S.size_array(S.var("x"))
    _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}))


@pytest.mark.parametrize("shape,kw", [((3, 4), {}), ((3, 4), {"k": 1}), ((3, 4), {"k": -2}),
                                      ((2, 3, 4), {"k": 1, "axis1": 1, "axis2": 2}),
                                      ((2, 3, 4), {"axis1": 2, "axis2": 0}),
                                      ((4,), {}), ((3,), {"k": 2}), ((3,), {"k": -1})])
def test_diag(shape, kw):
    x = np.random.default_rng(4).standard_normal(shape).astype("float32")
    if len(shape) == 1:
        x[1] = np.inf  # kept on the diagonal only (no 0 * inf off it)
    sym = S.diag(S.var("x"), **kw)
    _compare(sym, {"x": x}, _mx_forward(sym, {"x": x}))


def test_diag_of_an_empty_diagonal_is_refused():
    with pytest.raises(ConversionError, match=r"diagonal k=5 of a 3 x 4 plane is empty"):
        relay.frontend.from_mxnet(S.diag(S.var("x"), k=5), shape={"x": (3, 4)})


# ---- erfinv, ravel_multi_index ----


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erfinv_against_mxnet(dtype):
    """Across (-1, 1) (the central and the tail branch of the approximation, values next to
    +-1 and tiny ones), +-1 -> +-inf, |x| > 1 and NaN -> NaN, as MXNet gives them; float64
    against MXNet at 1e-12."""
    x = np.concatenate([np.linspace(-0.999, 0.999, 41),
                        [-0.999999, 0.9999, 0.99999, 1e-8, -3e-5, 0.0, 1.0, -1.0, 1.5, -7.0,
                         np.nan]]).astype(dtype)
    if dtype == "float16":  # float16 cannot hold 1 - 1e-6
        x[x == -1.0] = -1.0
    sym = S.erfinv(S.var("x"))
    want = _mx_forward(sym, {"x": x})
    _compare(sym, {"x": x}, want, rtol={"float16": 1e-3, "float32": 2e-6,
                                        "float64": 1e-12}[dtype])


def test_erfinv_of_integers_is_refused():
    with pytest.raises(ConversionError, match="erfinv of int32 data: expected a float dtype"):
        relay.frontend.from_mxnet(S.erfinv(S.var("x")), shape={"x": (3,)},
                                  dtype={"x": "int32"})


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("shape", [(7, 6), (-1, 6), (2, 3, 4)])
def test_ravel_multi_index_against_mxnet(shape, dtype):
    """Columns of multi-indices to flat row-major indices; the first dimension may be -1;
    out-of-range and negative indices give the formula's value (MXNet checks nothing)."""
    rng = np.random.default_rng(5)
    n = len(shape)
    data = np.stack([rng.integers(0, abs(d), 5) for d in shape]).astype(dtype)
    data[:, 0] = [9] + [-1] * (n - 1)  # out of range
    sym = S.ravel_multi_index(S.var("x"), shape=shape)
    _compare(sym, {"x": data}, _mx_forward(sym, {"x": data}), rtol=0)


def test_ravel_multi_index_rows_must_match_shape():
    sym = S.ravel_multi_index(S.var("x"), shape=(2, 3))
    with pytest.raises(ConversionError, match=r"data of shape \(3, 4\): expected \(2, N\)"):
        relay.frontend.from_mxnet(sym, shape={"x": (3, 4)})

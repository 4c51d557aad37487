"""Regressions of issue 17 (differential fuzzing): the interpreter, the graph executor at opt
levels 0-3 and the VM agree on NaN/inf and on special constants, and the value is NumPy's."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.testing.differential import compare, run_all

nan, inf = np.nan, np.inf
PATHS = ("graph0", "graph1", "graph3", "vm")
ROWS = np.array([[1, nan, 3, -2], [-inf, -inf, -inf, -inf], [2, 5, inf, 5]], "float32")


def _check(body_fn, inputs, expected):
    xs = [relay.var(f"p{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(inputs)]
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(xs, body_fn(*xs))))
    res = run_all(mod, inputs, PATHS)
    want = [np.asarray(expected)]
    compare(want, res.pop("debug"), "interpreter vs numpy")
    for path, got in res.items():
        if isinstance(got, Exception):
            raise AssertionError(f"{path} raised {type(got).__name__}: {got}")
        compare(want, got, path)


@pytest.mark.parametrize("name", ["max", "min"])
def test_reduce_max_min_propagate_nan_and_start_from_inf(name):
    data = ROWS if name == "max" else -ROWS
    _check(lambda x: getattr(relay, name)(x, axis=1), [data], getattr(np, name)(data, axis=1))


def test_reduce_max_over_kept_inner_axis():  # the vectorized (window) schedule
    data = np.random.default_rng(0).normal(size=(2, 3, 16)).astype("float32")
    data[0, 1, ::3] = nan
    data[1, :, 5] = -inf
    _check(lambda x: relay.max(x, axis=1), [data], np.max(data, axis=1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("last", [False, True])
def test_argmax_argmin_first_nan_wins_and_all_inf_rows(name, last):
    data = ROWS if name == "argmax" else -ROWS
    fn = getattr(np, name)
    want = (data.shape[1] - 1 - fn(data[:, ::-1], axis=1)) if last else fn(data, axis=1)
    if last:  # the last NaN wins with select_last_index
        want[0] = 1
    _check(lambda x: getattr(relay, name)(x, axis=1, select_last_index=last), [data],
           want.astype("int32"))


def test_argmax_nan_over_kept_inner_axis():
    data = np.random.default_rng(1).integers(0, 4, (2, 3, 8)).astype("float32")
    data[0, 1, ::3] = nan
    data[1, :, 1] = -inf
    _check(lambda x: relay.argmax(x, axis=1), [data], np.argmax(data, axis=1).astype("int32"))


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan(name):
    a = ROWS
    b = np.array([0, 0, nan, 7], "float32")
    _check(lambda x, y: getattr(relay, name)(x, y), [a, b], getattr(np, name)(a, b))
    _check(lambda x, y: getattr(relay, name)(y, x), [a, b], getattr(np, name)(b, a))


def test_relu_and_clip_keep_nan():
    _check(lambda x: relay.nn.relu(x), [ROWS], np.maximum(ROWS, 0))
    _check(lambda x: relay.clip(x, -1.0, 1.0), [ROWS], np.clip(ROWS, -1, 1))


def test_max_pool_nan_and_all_inf_window():
    data = np.array([[[[1, nan], [2, 3]]], [[[-inf, -inf], [-inf, -inf]]]], "float32")
    _check(lambda x: relay.nn.max_pool2d(x, pool_size=(2, 2)), [data],
           np.array([[[[nan]]], [[[-inf]]]], "float32"))
    _check(lambda x: relay.nn.global_max_pool2d(x), [data],
           np.array([[[[nan]]], [[[-inf]]]], "float32"))
    _check(lambda x: relay.nn.adaptive_max_pool2d(x, output_size=(1, 2)), [data],
           np.array([[[[2, nan]]], [[[-inf, -inf]]]], "float32"))


def test_logsumexp_of_infinite_rows():
    data = np.array([[-inf, -inf], [inf, 1], [0, np.log(3, dtype="float32")]], "float32")
    _check(lambda x: relay.logsumexp(x, axis=1), [data],
           np.array([-inf, inf, np.log(4)], "float32"))


def test_float_identities_hold_only_under_ieee():
    data = np.array([1, 0, -2, nan], "float32")
    # x*inf - x*inf: common subexpressions make it t - t inside one kernel; IEEE gives NaN
    _check(lambda x: relay.subtract(relay.multiply(x, relay.const(inf)),
                                    relay.multiply(x, relay.const(inf))), [data],
           np.full(4, nan, "float32"))
    with np.errstate(all="ignore"):
        _check(lambda x: relay.divide(relay.exp(x), relay.exp(x)), [data * 100],
               np.exp(data * 100) / np.exp(data * 100))
    _check(lambda x: relay.multiply(relay.log(x), relay.zeros_like(x)), [data],
           np.array([0, nan, nan, nan], "float32"))


def test_scalar_constants_folded_into_kernels_build():
    a = np.array([[1, -1, 0]], "float32")
    _check(lambda p0, p1: relay.divide(p1, relay.zeros_like(p0)), [a, a],
           np.array([[inf, -inf, nan]], "float32"))
    _check(lambda p0: relay.any(relay.cast(relay.full_like(p0, relay.const(2.0)), "bool")), [a],
           np.array(True))
    _check(lambda p0: relay.cast(relay.multiply(p0, relay.const(nan)), "bool"), [a],
           np.array([[True, True, True]]))


def test_avg_pool_dilation_counts_taps():
    data = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    _check(lambda x: relay.nn.avg_pool2d(x, pool_size=(1, 1), strides=(2, 2), dilation=(2, 2)),
           [data], np.array([[[[0, 2], [8, 10]]]], "float32"))
    # 2x2 taps at dilation 2 with padding 1: count_include_pad=False counts taps inside the input
    want = np.zeros((1, 1, 4, 4))
    xp = np.pad(data[0, 0], 1, constant_values=np.nan)
    for i in range(4):
        for j in range(4):
            w = xp[i:i + 3:2, j:j + 3:2]
            want[0, 0, i, j] = np.nanmean(w)
    _check(lambda x: relay.nn.avg_pool2d(x, pool_size=(2, 2), dilation=(2, 2), padding=(1, 1)),
           [data], want.astype("float32"))


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "bool"])
def test_sort_argsort_topk_narrow_dtypes(dtype):
    data = np.array([[3, 1, 2, 0, 1], [0, 1, 1, 0, 2]]).astype(dtype)
    order = np.argsort(data, axis=1, kind="stable").astype("int32")
    _check(lambda x: relay.sort(x, axis=1), [data], np.sort(data, axis=1, kind="stable"))
    _check(lambda x: relay.argsort(x, axis=1), [data], order)
    _check(lambda x: relay.topk(x, k=2, axis=1, ret_type="values", is_ascend=True), [data],
           np.take_along_axis(data, order[:, :2], 1))


def test_fused_output_that_is_a_parameter():
    # at opt level 1 the tuple (%a, exp(%b)) fuses; its field 0 is the group's own parameter
    a = np.array([[1, 2, 3]], "float32")
    xs = [relay.var("a", shape=(1, 3)), relay.var("b", shape=(1, 3))]
    body = relay.Tuple([relay.TupleGetItem(relay.Tuple([xs[0], relay.exp(xs[1])]), 0), xs[1]])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(xs, body)))
    res = run_all(mod, [a, a + 1], PATHS)
    for path, got in res.items():
        assert not isinstance(got, Exception), f"{path}: {got}"
        compare([a, a + 1], got, path)


def test_sort_argsort_topk_put_nan_last():
    data = np.array([[3, nan, 1, nan, -inf, 2, inf, 0, -0.0]], "float32")
    order = np.argsort(data, axis=1, kind="stable").astype("int32")
    _check(lambda x: relay.sort(x, axis=1), [data], np.sort(data, axis=1))
    _check(lambda x: relay.argsort(x, axis=1), [data], order)
    # descending: NaN first (the largest), ties in their original order
    desc = (data.shape[1] - 1 - np.argsort(data[:, ::-1], axis=1, kind="stable"))[:, ::-1]
    _check(lambda x: relay.argsort(x, axis=1, is_ascend=False), [data], desc.astype("int32"))
    _check(lambda x: relay.topk(x, k=3, axis=1, ret_type="indices"), [data],
           desc[:, :3].astype("int32"))
    d64 = data.astype("float64")
    _check(lambda x: relay.sort(x, axis=1), [d64], np.sort(d64, axis=1))


def test_not_equal_where_floor_mod_on_special_values():
    a = np.array([0, nan, 2, -0.0, -1, 1, inf], "float32")
    b = np.array([0, 0, nan, 0, inf, -inf, 1], "float32")
    _check(lambda x, y: relay.not_equal(x, y), [a, b], np.not_equal(a, b))
    # a float condition means nonzero (tvm.relay's WhereRel takes any dtype); NaN is true
    _check(lambda c, x: relay.where(c, x, relay.negative(x)), [a, b], np.where(a != 0, b, -b))
    with np.errstate(all="ignore"):
        _check(lambda x, y: relay.floor_mod(x, y), [a, b], np.mod(a, b))
        _check(lambda x, y: relay.mod(x, y), [a, b], np.fmod(a, b))


@pytest.mark.parametrize("make,match", [
    (lambda x, w: relay.nn.max_pool2d(x, pool_size=(0, 0)), "pool_size must be >= 1"),
    (lambda x, w: relay.nn.avg_pool2d(x, pool_size=(0, 2)), "pool_size must be >= 1"),
    (lambda x, w: relay.nn.max_pool2d(x, strides=(0, 1)), "strides must be >= 1"),
    (lambda x, w: relay.nn.conv2d(x, w, dilation=(0, 0)), "dilation must be >= 1"),
    (lambda x, w: relay.nn.conv2d(x, w, strides=(0, 0)), "strides must be >= 1"),
    (lambda x, w: relay.nn.conv2d(x, w, strides=(-1, 1)), r"strides must be >= 1 .*\(-1, 1\)"),
    (lambda x, w: relay.nn.conv2d(x, w, padding=(-1, 0)), "padding must be >= 0"),
    (lambda x, w: relay.nn.avg_pool2d(x, pool_size=(2, 2), padding=(-1, -1)),
     "padding must be >= 0"),
])
def test_bad_window_attributes_are_type_errors(make, match):
    from relay_tvm.errors import TypeInferenceError

    x, w = relay.var("x", shape=(1, 1, 4, 4)), relay.var("w", shape=(1, 1, 3, 3))
    e = make(x, w)
    params = [v for v in (x, w) if v in relay.analysis.free_vars(e)]
    with pytest.raises(TypeInferenceError, match=match):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, e)))


@pytest.mark.parametrize("make", [
    lambda a, b: relay.TupleGetItem(relay.Tuple([a, b]), 1),
    lambda a, b: relay.Tuple([relay.TupleGetItem(relay.Tuple([a, b]), 1), a]),
])
def test_fused_group_of_only_tuples(make):
    # opt level 1 grouped the Tuple and its projection alone into a Primitive=0 function
    a = np.array([[1, 2, 3]], "float32")
    xs = [relay.var("a", shape=(1, 3)), relay.var("b", shape=(1, 3))]
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(xs, make(*xs))))
    res = run_all(mod, [a, a + 1], PATHS)
    ref = res.pop("debug")
    for path, got in res.items():
        assert not isinstance(got, Exception), f"{path}: {got}"
        compare(ref, got, path)
    np.testing.assert_array_equal(ref[0], a + 1)


@pytest.mark.parametrize("name", ["equal", "not_equal", "less_equal", "greater_equal"])
def test_comparing_a_value_with_itself_keeps_nan_rules(name):
    # t == t inside one kernel: TVM's simplifier would fold it to true
    data = np.array([1, nan, -inf, 0], "float32")
    _check(lambda x: getattr(relay, name)(relay.add(x, x), relay.add(x, x)), [data],
           getattr(np, name)(data + data, data + data))


def test_nested_nan_selects_build_quickly():
    # clip(clip(x)) / itself, compared with itself: select operands used 3 times each grew the
    # inlined kernel exponentially (the build never finished) before they were let-bound
    data = np.array([[1, nan, -3, 0.5]], "float32")

    def body(x):
        c = relay.clip(relay.clip(relay.clip(x, -1.0, 2.0), -1.0, 2.0), -1.0, 2.0)
        d = relay.divide(c, c)
        return relay.where(relay.greater(d, d), x, relay.maximum(d, relay.minimum(d, c)))

    c = np.clip(data, -1, 2)
    with np.errstate(all="ignore"):
        d = c / c
    _check(body, [data], np.where(d > d, data, np.maximum(d, np.minimum(d, c))))


def test_nan_max_of_a_vectorized_bool_cast():
    # relu(cast(x > c)) on the vectorized path: a let of a bool cast broke TVM's vectorizer
    data = np.random.default_rng(2).normal(size=(2, 3, 4, 4)).astype("float32")
    _check(lambda x: relay.nn.relu(relay.cast(relay.greater(x, relay.const(0.5)), "float32")),
           [data], (data > 0.5).astype("float32"))
    _check(lambda x: relay.minimum(x, relay.cast(relay.equal(x, x), "float32")), [data],
           np.minimum(data, 1.0))

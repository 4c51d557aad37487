"""tvm.relay 0.19's ``relay.frontend.common`` converter helpers: the recurrent cells against NumPy
steps, unbind / autopad / ensure_scalar_shape with values, AttrCvt / Renamer / StrAttrsDict /
ExprTable behaviour and errors."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import structural_equal
from relay_tvm.errors import AttributeSchemaError, ConversionError, UnsupportedOperatorError
from relay_tvm.frontend import common

RNG = np.random.default_rng(7)


def _rand(*shape):
    return RNG.uniform(-1, 1, shape).astype("float32")


def _eval(outputs, feeds):
    """Values of ``outputs`` (a list of expressions) with ``feeds`` ``{var: array}``."""
    params = list(feeds)
    f = relay.Function(params, relay.Tuple(list(outputs)))
    res = relay.create_executor("debug", mod=relay.IRModule.from_expr(f)).evaluate()(
        *feeds.values())
    return [r.numpy() for r in res]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_lstm(xs, h, c, wi, wh, bi, bh, proj=None, peep=None):
    out = []
    for x in xs:
        gates = x @ wi.T + h @ wh.T + bi + bh
        i, f, g, o = np.split(gates, 4, axis=1)
        if peep is not None:
            i, f = i + peep[0] * c, f + peep[1] * c
        i, f = _sigmoid(i), _sigmoid(f)
        c = f * c + i * np.tanh(g)
        o = _sigmoid(o + peep[2] * c) if peep is not None else _sigmoid(o)
        h = o * np.tanh(c)
        if proj is not None:
            h = h @ proj.T
        out.append(h)
    return out, h, c


@pytest.mark.parametrize("variant", ["plain", "backwards", "peephole_projection"])
def test_lstm_cell_matches_a_numpy_lstm(variant):
    batch, feat, hid, steps, psize = 2, 3, 4, 3, 2
    out_h = psize if variant == "peephole_projection" else hid
    xs = [_rand(batch, feat) for _ in range(steps)]
    h0, c0 = _rand(batch, out_h), _rand(batch, hid)
    wi, wh = _rand(4 * hid, feat), _rand(4 * hid, out_h)
    bi, bh = _rand(4 * hid), _rand(4 * hid)
    proj = _rand(psize, hid) if variant == "peephole_projection" else None
    peep = [_rand(batch, hid) for _ in range(3)] if variant == "peephole_projection" else None
    values = {"h0": h0, "c0": c0, "wi": wi, "wh": wh, "bi": bi, "bh": bh}
    v = {k: relay.var(k, shape=a.shape) for k, a in values.items()}
    xv = [relay.var(f"x{t}", shape=(batch, feat)) for t in range(steps)]
    extra = {}
    if proj is not None:
        for k, a in (("proj", proj), ("p_i", peep[0]), ("p_f", peep[1]), ("p_o", peep[2])):
            values[k] = a
            extra[k] = v[k] = relay.var(k, shape=a.shape)
    outs, h, c = common.lstm_cell(xv, v["h0"], v["c0"], v["wi"], v["wh"], v["bi"], v["bh"],
                                  backwards=variant == "backwards", **extra)
    feeds = {**{xv[t]: xs[t] for t in range(steps)}, **{v[k]: a for k, a in values.items()}}
    got = _eval([*outs, h, c], feeds)
    order = xs[::-1] if variant == "backwards" else xs
    want_outs, want_h, want_c = _np_lstm(order, h0, c0, wi, wh, bi, bh, proj, peep)
    for g, w in zip(got, [*want_outs, want_h, want_c]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _np_gru(xs, h, wi, wh, bi, bh, linear_before_reset):
    out = []
    for x in xs:
        i_r, i_z, i_n = np.split(x @ wi.T + bi, 3, axis=1)
        w_hr, w_hz, w_hn = np.split(wh, 3, axis=0)
        b_hr, b_hz, b_hn = np.split(bh, 3)
        r = _sigmoid(i_r + h @ w_hr.T + b_hr)
        z = _sigmoid(i_z + h @ w_hz.T + b_hz)
        if linear_before_reset:
            n = np.tanh(i_n + r * (h @ w_hn.T + b_hn))
        else:
            n = np.tanh(i_n + (r * h) @ w_hn.T + b_hn)
        h = (1 - z) * n + z * h
        out.append(h)
    return out, h


@pytest.mark.parametrize("linear_before_reset", [True, False])
def test_gru_cell_matches_a_numpy_gru(linear_before_reset):
    batch, feat, hid, steps = 2, 3, 4, 3
    xs = [_rand(batch, feat) for _ in range(steps)]
    h0, wi, wh, bi, bh = _rand(batch, hid), _rand(3 * hid, feat), _rand(3 * hid, hid), \
        _rand(3 * hid), _rand(3 * hid)
    values = {"h0": h0, "wi": wi, "wh": wh, "bi": bi, "bh": bh}
    v = {k: relay.var(k, shape=a.shape) for k, a in values.items()}
    xv = [relay.var(f"x{t}", shape=(batch, feat)) for t in range(steps)]
    outs, h = common.gru_cell(xv, v["h0"], v["wi"], v["wh"], v["bi"], v["bh"],
                              linear_before_reset=linear_before_reset)
    feeds = {**{xv[t]: xs[t] for t in range(steps)}, **{v[k]: a for k, a in values.items()}}
    got = _eval([*outs, h], feeds)
    want_outs, want_h = _np_gru(xs, h0, wi, wh, bi, bh, linear_before_reset)
    for g, w in zip(got, [*want_outs, want_h]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_gru_cell_sequence_lengths_keep_the_last_valid_state():
    batch, feat, hid, steps = 2, 3, 4, 3
    xs = [_rand(batch, feat) for _ in range(steps)]
    h0, wi, wh, bi, bh = _rand(batch, hid), _rand(3 * hid, feat), _rand(3 * hid, hid), \
        _rand(3 * hid), _rand(3 * hid)
    xv = [relay.var(f"x{t}", shape=(batch, feat)) for t in range(steps)]
    lens = relay.var("lens", shape=(batch,), dtype="int32")
    outs, h = common.gru_cell(xv, relay.const(h0), relay.const(wi), relay.const(wh),
                              relay.const(bi), relay.const(bh), sequence_lens=lens)
    got = _eval([*outs, h], {**{xv[t]: xs[t] for t in range(steps)},
                             lens: np.array([3, 1], "int32")})
    full, _ = _np_gru(xs, h0, wi, wh, bi, bh, True)
    one, _ = _np_gru([xs[0][1:]], h0[1:], wi, wh, bi, bh, True)  # row 1, one step
    np.testing.assert_allclose(got[-1][0], full[-1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[-1][1], one[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[1][1], np.zeros(hid))  # past the length: zeros


def test_rnn_cell_and_unbind():
    x = relay.var("x", shape=(3, 2, 4))
    xv = _rand(3, 2, 4)
    parts = common.unbind(x, axis=0)
    assert len(parts) == 3
    got = _eval([parts[i] for i in range(3)], {x: xv})
    for i in range(3):
        np.testing.assert_array_equal(got[i], xv[i])
    w_i, w_h, h0 = _rand(5, 4), _rand(5, 5), _rand(2, 5)
    outs, h = common.rnn_cell([parts[0], parts[1], parts[2]], relay.const(h0), relay.const(w_i),
                              relay.const(w_h))
    want = h0
    for t in range(3):
        want = np.tanh(xv[t] @ w_i.T + want @ w_h.T)
    np.testing.assert_allclose(_eval([h], {x: xv})[0], want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ConversionError, match="axis 3 is not an axis of a rank-3"):
        common.unbind(x, axis=3)
    with pytest.raises(AttributeError):  # what 0.19 raised
        common.unbind(x, axis=3)


@pytest.mark.parametrize("size, mode, want", [
    (5, "SAME_UPPER", (1, 1)), (6, "SAME_UPPER", (0, 1)), (6, "SAME_LOWER", (1, 0)),
])
def test_autopad_same_padding(size, mode, want):
    x = relay.var("x", shape=(1, 2, size, size))
    xv = _rand(1, 2, size, size)
    y = common.autopad(x, strides=(2, 2), kernel_shape=(3, 3), mode=mode, pad_value=-7.0)
    got = _eval([y], {x: xv})[0]
    np.testing.assert_array_equal(
        got, np.pad(xv, [(0, 0), (0, 0), want, want], constant_values=-7.0))


def test_ensure_scalar_shape():
    x = relay.var("x", shape=(1, 1))
    y = common.ensure_scalar_shape(x)
    assert common.infer_shape(y) == ()
    assert float(_eval([y], {x: np.array([[2.5]], "float32")})[0]) == 2.5
    s = relay.var("s", shape=())
    assert common.ensure_scalar_shape(s) is s
    with pytest.raises(ConversionError, match=r"shape \(2, 3\) to scalar form: it has 6"):
        common.ensure_scalar_shape(relay.var("m", shape=(2, 3)))


def test_try_resolve_var_to_const():
    x = relay.var("w", shape=(2,), dtype="int32")
    c = common.try_resolve_var_to_const(x, {"w": np.array([3, 4], "int64")})
    assert isinstance(c, relay.Constant) and c.data.numpy().dtype == np.int32
    assert common.try_resolve_var_to_const(x, {}) is x


# ---- attribute conversion ------------------------------------------------------------------


def test_attr_cvt_renames_defaults_transforms_and_adds_extras():
    data = relay.var("data", shape=(1, 3, 8, 8))
    weight = relay.var("weight", shape=(4, 3, 3, 3))
    cvt = common.AttrCvt(
        "conv2d",
        transforms={"kernel": "kernel_size", "num_filter": "channels",
                    "pad": ("padding", (0, 0)),
                    "stride": ("strides", (1, 1), lambda s: tuple(int(v) for v in s))},
        ignores=["workspace"], disables=["cudnn_tune"], extras={"groups": 1})
    attrs = {"kernel": (3, 3), "num_filter": 4, "pad": None, "stride": ["2", "2"],
             "workspace": 1024, "cudnn_tune": "off", "_node_name": "conv0",
             "dilation": (1, 1)}
    out = cvt([data, weight], attrs)
    want = relay.nn.conv2d(data, weight, kernel_size=(3, 3), channels=4, padding=(0, 0),
                           strides=(2, 2), groups=1, dilation=(1, 1))
    assert structural_equal(out, want)
    assert attrs["workspace"] == 1024  # the caller's dict is left alone
    name, new = cvt.convert_attrs({"kernel": (1, 1)})
    assert (name, new) == ("conv2d", {"kernel_size": (1, 1), "groups": 1})  # absent: no default


def test_attr_cvt_op_name_callable_and_errors():
    x = relay.var("x", shape=(2, 3))
    cvt = common.AttrCvt(lambda a: "max" if a["mode"] == "max" else "sum",
                         transforms={"ax": "axis"}, ignores=["mode"])
    assert structural_equal(cvt([x], {"mode": "max", "ax": 1}), relay.max(x, axis=1))
    excl = common.AttrCvt("nn.relu", excludes=["cudnn_off"])
    with pytest.raises(UnsupportedOperatorError, match="Attribute cudnn_off in operator nn.relu"):
        excl([x], {"cudnn_off": True})
    with pytest.raises(NotImplementedError):
        excl([x], {"cudnn_off": True})
    checked = common.AttrCvt("nn.relu", custom_check=(lambda a: a.get("n", 0) < 2, "n < 2"))
    with pytest.raises(ConversionError, match="Check failed: n < 2"):
        checked([x], {"n": 3})
    bad = common.AttrCvt("nn.relu", transforms={"k": (1, 2)})
    with pytest.raises(AttributeSchemaError, match=r"transforms entry \(1, 2\) is not valid"):
        bad([x], {"k": 1})
    with pytest.raises(UnsupportedOperatorError, match="no Relay operator 'nope'"):
        common.AttrCvt("nope")([x], {})


def test_renamer_drops_tvm_custom():
    x = relay.var("x", shape=(2, 3))
    attrs = {"axis": 1, "tvm_custom": {"x": 1}}
    out = common.Renamer("softmax")([x], attrs)
    assert structural_equal(out, relay.nn.softmax(x, axis=1))
    assert "tvm_custom" in attrs


def test_str_attrs_dict_parsing():
    a = common.StrAttrsDict({
        "f": "0.5", "i": "3", "n": "None", "s": "NCHW", "t": "(1, 2, None)", "ft": "[0.5, 2]",
        "tt": "((1, 2), (3, 4))", "l": "[4, 5]", "b": "True", "b0": "0", "bad_i": "3.5",
        "bad_b": "maybe", "bad_l": "[1, x]"})
    assert a.has_attr("f") and not a.has_attr("zz")
    assert a.get_float("f") == 0.5 and a.get_int("i") == 3 and a.get_int("n") is None
    assert a.get_str("s") == "NCHW"
    assert a.get_int_tuple("t") == (1, 2, None)
    assert a.get_float_tuple("ft") == (0.5, 2.0)
    assert a.get_tuple_tuple_int("tt") == ((1, 2), (3, 4))
    assert a.get_int_list("l") == (4, 5)
    assert a.get_bool("b") is True and a.get_bool("b0") is False
    assert a.get_int("zz", 7) == 7 and a.get_bool("zz", None) is None


def test_str_attrs_dict_errors_name_the_attribute():
    a = common.StrAttrsDict({"bad_i": "3.5", "bad_b": "maybe", "bad_l": "[1, x]"},
                            op_name="Convolution")
    with pytest.raises(AttributeError, match="Required attribute kernel not found of "
                                             "Convolution"):
        a.get_int_tuple("kernel")
    with pytest.raises(AttributeSchemaError, match="bad_i='3.5' of Convolution is not an "
                                                   "integer"):
        a.get_int("bad_i")
    with pytest.raises(ValueError, match="bad_b='maybe' of Convolution is not a boolean"):
        a.get_bool("bad_b")
    with pytest.raises(ValueError, match="is not a list of integers"):
        a.get_int_list("bad_l")
    with pytest.raises(common.MissingAttributeError):
        common.StrAttrsDict({}).get_float("f")


def test_expr_table():
    table = common.ExprTable()
    v = table.new_const(np.zeros((2, 3), "float32"), source_name="conv0_weight")
    assert v.name_hint == "_param_1" and common.infer_shape(v) == (2, 3)
    assert v.span.source_name == "conv0_weight"
    assert table.params["_param_1"].shape == (2, 3)
    assert table.new_const(np.ones(4, "float32")).name_hint == "_param_2"
    x, y = relay.var("x"), relay.var("y")
    table.set_expr("a", x)
    table.set_expr("a", y)
    assert table.get_expr("a") is x
    table.set_expr("a", y, force_override=True)
    assert table.get_expr("a") is y and table.has_expr("a")
    with pytest.raises(KeyError):
        table.get_expr("b")
    with pytest.raises(ConversionError, match="no expression named 'b'"):
        table.get_expr("b")
    with pytest.raises(ConversionError, match="expected a relay expression, got int"):
        table.set_expr("c", 3)

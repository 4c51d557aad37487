"""ConvertLayout's propagation: each program is converted and run against the original (the
interpreter's values), and the number of layout_transforms says the new layout was carried
through the operators after the convolution instead of being undone right after it."""

import numpy as np
import pytest
from pass_util import assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform

RNG = np.random.default_rng(3)


def conv_nhwc(x, c_in=8, c_out=8, name="w"):
    w = relay.const(RNG.normal(size=(3, 3, c_in, c_out)).astype("float32"))
    return relay.nn.conv2d(x, w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")


def nhwc_input(shape=(1, 6, 6, 8)):
    return relay.var("x", shape=shape)


def transforms(func):
    out = []
    relay.analysis.post_order_visit(
        func, lambda n: out.append((n.attrs.src_layout, n.attrs.dst_layout))
        if isinstance(n, relay.Call) and getattr(n.op, "name", "") == "layout_transform"
        else None)
    return sorted(out)


def tails():
    """(name, body builder from the NHWC convolution's result, layout transforms expected
    after ConvertLayout to NCHW besides the input's)."""
    bias = relay.const(RNG.normal(size=(8,)).astype("float32"))
    gamma = relay.const(RNG.uniform(0.5, 1.5, size=(8,)).astype("float32"))
    beta = relay.const(RNG.normal(size=(8,)).astype("float32"))
    mean = relay.const(RNG.normal(size=(8,)).astype("float32"))
    var = relay.const(RNG.uniform(0.5, 1.5, size=(8,)).astype("float32"))
    return [
        # bias_add on the channel axis (CanonicalizeOps' add of a (C,) vector): the vector is
        # expanded and transformed once, the result stays NCHW through relu and the pool
        ("bias_relu_pool", lambda y: relay.nn.max_pool2d(
            relay.nn.relu(relay.nn.bias_add(y, bias, axis=3)), pool_size=(2, 2),
            layout="NHWC"), 1),
        ("batch_norm", lambda y: relay.nn.batch_norm(y, gamma, beta, mean, var, axis=3)[0], 1),
        ("layer_norm", lambda y: relay.nn.layer_norm(y, gamma, beta, axis=3), 1),
        ("mean_hw", lambda y: relay.mean(y, axis=[1, 2], keepdims=True), 1),
        # reducing C leaves N, H, W in the same order in both layouts: nothing to undo
        ("sum_c", lambda y: relay.sum(y, axis=3), 0),
        ("concat_c", lambda y: relay.concatenate([y, relay.nn.relu(y)], axis=3), 1),
        ("split_c", lambda y: relay.Tuple(list(relay.split(y, 2, axis=3))), 2),
        ("strided_slice", lambda y: relay.strided_slice(y, begin=[0, 1, 0, 2],
                                                        end=[1, 5, 6, 7]), 1),
        ("squeeze", lambda y: relay.squeeze(relay.mean(y, axis=[1], keepdims=True),
                                            axis=[1]), 1),
        ("l2_normalize", lambda y: relay.nn.l2_normalize(y, eps=1e-3, axis=[3]), 1),
        # a 3-d per-(H, W, C) tensor: transformed like the 4-d one (expand_dims first)
        ("add_hwc", lambda y: relay.add(y, relay.const(
            RNG.normal(size=(6, 6, 8)).astype("float32"))), 1),
        # the permutation is rewritten to give the original output order directly
        ("transpose", lambda y: relay.transpose(y, axes=[0, 3, 1, 2]), 0),
    ]


@pytest.mark.parametrize("name,tail,n_out", tails(), ids=[t[0] for t in tails()])
def test_nhwc_to_nchw_carries_the_layout_and_keeps_the_values(name, tail, n_out):
    x = nhwc_input()
    before = relay.Function([x], tail(relay.nn.relu(conv_nhwc(x))))
    after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NCHW", "default"]}))
    lts = [t for t in transforms(after) if t != ("HWIO", "OIHW")]
    # the input into NCHW, and each result back (a (C,) bias adds its own NHWC -> NCHW)
    assert ("NHWC", "NCHW") in lts
    into = [t for t in lts if t[1] == "NCHW"]
    assert len(lts) - len(into) == n_out, (name, lts)
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def test_nchw_to_nhwc_through_a_residual_block_and_pooling():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w1 = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    w2 = relay.const(RNG.normal(size=(8, 8, 1, 1)).astype("float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1)))
    z = relay.add(relay.nn.conv2d(y, w2), y)
    out = relay.nn.global_avg_pool2d(relay.nn.relu(z))
    before = relay.Function([x], relay.nn.batch_flatten(out))
    after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}))
    text = after.astext()
    assert 'layout="NHWC"' in text  # the pooling follows the new layout
    assert [t for t in transforms(after) if t[0] in ("NCHW", "NHWC")] == \
        [("NCHW", "NHWC"), ("NHWC", "NCHW")]
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def test_pool_with_a_desired_layout_and_layout_config_skip():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    y = relay.nn.conv2d(relay.nn.conv2d(x, w, padding=(1, 1)), w, padding=(1, 1))
    before = relay.Function([x], relay.nn.max_pool2d(y, pool_size=(2, 2)))
    desired = {"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NCHW"]}
    after = run_opt_pass(before, transform.ConvertLayout(desired))
    assert after.body.op.name == "nn.max_pool2d" and after.body.attrs.layout == "NCHW"
    assert_same_result(before, after, atol=1e-3, rtol=1e-4)
    with transform.LayoutConfig(skip_layers=[0]):
        skipped = run_opt_pass(before, transform.ConvertLayout(desired))
    convs = []
    relay.analysis.post_order_visit(skipped, lambda n: convs.append(n.attrs.data_layout)
                                    if isinstance(n, relay.Call)
                                    and getattr(n.op, "name", "") == "nn.conv2d" else None)
    assert convs == ["NCHW", "NHWC"]  # the first convolution kept its layout
    assert_same_result(before, skipped, atol=1e-3, rtol=1e-4)


def test_blocked_nchwc_conversion_runs():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    before = relay.Function([x], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    after = run_opt_pass(before, transform.ConvertLayout(
        {"nn.conv2d": ["NCHW4c", "OIHW4i4o"]}))
    assert "nn.contrib_conv2d_NCHWc" in after.astext()
    assert_same_result(before, after, atol=1e-3, rtol=1e-4)


def test_an_operator_without_a_rule_is_a_boundary():
    x = nhwc_input()
    y = relay.nn.relu(conv_nhwc(x))
    before = relay.Function([x], relay.nn.softmax(relay.nn.batch_flatten(y)))
    after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NCHW", "default"]}))
    flat = after.body.args[0]
    assert flat.op.name == "nn.batch_flatten" and flat.args[0].op.name == "layout_transform"
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def test_qnn_conv2d_and_requantize_follow_the_new_layout():
    x = relay.var("x", shape=(1, 6, 6, 8), dtype="int8")
    w = relay.const(RNG.integers(-20, 20, size=(3, 3, 8, 8)).astype("int8"))
    y = relay.qnn.op.conv2d(x, w, relay.const(1), relay.const(0), relay.const(0.05),
                            relay.const(0.02), kernel_size=(3, 3), channels=8, padding=(1, 1),
                            data_layout="NHWC", kernel_layout="HWIO")
    y = relay.qnn.op.requantize(y, relay.const(0.001), relay.const(0), relay.const(0.1),
                                relay.const(3), axis=3, out_dtype="int8")
    before = relay.Function([x], y)
    after = run_opt_pass(before, transform.ConvertLayout({"qnn.conv2d": ["NCHW", "default"]}))
    req = after.body.args[0]
    assert req.op.name == "qnn.requantize" and req.attrs.axis == 1  # C is axis 1 in NCHW
    assert req.args[0].op.name == "qnn.conv2d" and req.args[0].attrs.data_layout == "NCHW"
    assert_same_result(before, after, atol=0, rtol=0)


def test_topk_pad_and_slice_like_follow_the_new_layout():
    x = nhwc_input()
    y = relay.nn.relu(conv_nhwc(x))
    padded = relay.nn.pad(y, ((0, 0), (1, 2), (0, 1), (0, 0)))
    vals = relay.topk(y, k=2, axis=2, ret_type="values")
    like = relay.slice_like(y, relay.nn.relu(y), axes=[1, 2])
    before = relay.Function([x], relay.Tuple([padded, vals, like]))
    after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NCHW", "default"]}))
    ops = {}
    relay.analysis.post_order_visit(after, lambda n: ops.setdefault(n.op.name, n)
                                    if isinstance(n, relay.Call) and hasattr(n.op, "name")
                                    else None)
    assert ops["nn.pad"].attrs.pad_width == ((0, 0), (0, 0), (1, 2), (0, 1))
    assert ops["topk"].attrs.axis == 3
    assert tuple(ops["slice_like"].attrs.axes) == (2, 3)
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def test_blocked_data_layout_conv2d_runs_in_every_executor():
    # nn.conv2d reads a blocked data layout and writes another out_layout (Relay's relation
    # accepted any layout with N, C, H, W axes); compiled, VM and interpreter agree with the
    # NCHW convolution
    xs = RNG.normal(size=(1, 16, 5, 5)).astype("float32")
    ws = RNG.normal(size=(8, 16, 3, 3)).astype("float32")
    x = relay.var("x", shape=xs.shape)
    w = relay.var("w", shape=ws.shape)
    want = relay.create_executor("debug", mod=relay.IRModule.from_expr(relay.Function(
        [x, w], relay.nn.conv2d(x, w, padding=(1, 1))))).evaluate()(xs, ws).numpy()
    y = relay.nn.conv2d(relay.layout_transform(x, "NCHW", "NCHW8c"), w, padding=(1, 1),
                        data_layout="NCHW8c", out_layout="NHWC")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], y)))
    assert tuple(mod["main"].ret_type.shape) == (1, 5, 5, 8)
    for kind in ("debug", "graph", "vm"):
        got = relay.create_executor(kind, mod=mod).evaluate()(xs, ws).numpy()
        np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def test_users_alter_op_layout_hook_is_carried_like_convert_layout():
    from relay_tvm.op.op_attrs import TempOpAttr

    def to_nchw8c(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **{**dict(attrs.items()), "data_layout": "NCHW8c"})

    x = relay.var("x", shape=(1, 16, 6, 6))
    w = relay.const(RNG.normal(size=(16, 16, 3, 3)).astype("float32"))
    b = relay.const(RNG.normal(size=(16, 1, 1)).astype("float32"))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(x, w, padding=(1, 1)), b))
    before = relay.Function([x], relay.nn.max_pool2d(y, pool_size=(2, 2)))
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", to_nchw8c):
        after = run_opt_pass(before, transform.AlterOpLayout())
    # into NCHW8c once, the bias re-blocked, the pooling in NCHW8c, back once at the end
    assert after.body.op.name == "layout_transform"
    assert after.body.args[0].op.name == "nn.max_pool2d"
    assert after.body.args[0].attrs.layout == "NCHW8c"
    assert "nn.contrib_conv2d_NCHWc" not in after.astext()  # the hook replaced the built-in
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def test_a_misspelt_operator_name_is_an_error():
    # new-user trial: {"nn.conv2x": ...} returned the module unchanged without a word
    from relay_tvm.errors import RelayError

    with pytest.raises(RelayError, match=r"'nn.conv2x', which is not an operator; did you mean "
                                         r"'nn.conv2d'"):
        transform.ConvertLayout({"nn.conv2x": ["NHWC", "default"]})


def blocked_tails():
    """Operators after a convolution converted to NCHW4c (8 channels) that a second trial
    broke: wrong values (l2_normalize over the outer channel axis only, strided_slice's short
    strides) or ill-typed programs (norms, split, topk, variance, preset out_layout)."""
    g = relay.const(RNG.uniform(0.5, 1.5, size=(8,)).astype("float32"))
    b = relay.const(RNG.normal(size=(8,)).astype("float32"))
    return [
        ("l2_normalize_c", lambda y: relay.nn.l2_normalize(y, eps=1e-5, axis=[1])),
        ("l2_normalize_chw", lambda y: relay.nn.l2_normalize(y, eps=1e-5, axis=[1, 2, 3])),
        ("batch_norm", lambda y: relay.nn.batch_norm(y, g, b, b, g)[0]),
        ("layer_norm", lambda y: relay.nn.layer_norm(y, g, b, axis=1)),
        ("instance_norm", lambda y: relay.nn.instance_norm(y, g, b, axis=1)),
        ("split_indices", lambda y: relay.Tuple(list(relay.split(y, (2, 6), axis=1)))),
        ("split_sections", lambda y: relay.Tuple(list(relay.split(y, 4, axis=1)))),
        ("split_sections_ok", lambda y: relay.Tuple(list(relay.split(y, 2, axis=1)))),
        ("topk_c", lambda y: relay.topk(y, k=2, axis=1, ret_type="values")),
        ("variance_c", lambda y: relay.variance(y, axis=[1], keepdims=True)),
        ("mean_c", lambda y: relay.mean(y, axis=[1], keepdims=True)),
        ("strided_slice_short_strides", lambda y: relay.strided_slice(
            y, begin=[0], end=[1], strides=[2])),
    ]


@pytest.mark.parametrize("name,tail", blocked_tails(), ids=[t[0] for t in blocked_tails()])
def test_blocked_conversion_keeps_the_values(name, tail):
    x = relay.var("x", shape=(2, 8, 6, 6))
    w = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    before = relay.Function([x], tail(relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))))
    after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NCHW4c",
                                                                        "OIHW4i4o"]}))
    assert "nn.contrib_conv2d_NCHWc" in after.astext()
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def test_blocked_conversion_output_block_and_preset_out_layout():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(RNG.normal(size=(16, 8, 3, 3)).astype("float32"))
    for out_layout in ("", "NCHW", "NHWC"):
        y = relay.nn.conv2d(x, w, padding=(1, 1), out_layout=out_layout)
        before = relay.Function([x], relay.nn.relu(y))
        after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NCHW4c",
                                                                            "OIHW4i8o"]}))
        conv = [n for n in _calls(after) if n.op.name == "nn.contrib_conv2d_NCHWc"]
        assert conv and conv[0].attrs.out_layout == "NCHW8c", out_layout
        assert_same_result(before, after, atol=1e-4, rtol=1e-4)
    # grouped / depthwise convolutions and channels the blocks do not divide keep their form
    dw = relay.const(RNG.normal(size=(8, 1, 3, 3)).astype("float32"))
    odd = relay.const(RNG.normal(size=(10, 8, 1, 1)).astype("float32"))
    y = relay.nn.conv2d(relay.nn.conv2d(x, dw, padding=(1, 1), groups=8), odd)
    before = relay.Function([x], y)
    after = run_opt_pass(before, transform.ConvertLayout({"nn.conv2d": ["NCHW4c",
                                                                        "OIHW4i4o"]}))
    assert "contrib_conv2d_NCHWc" not in after.astext()
    assert_same_result(before, after, atol=1e-4, rtol=1e-4)


def _calls(func):
    out = []
    relay.analysis.post_order_visit(func, lambda n: out.append(n) if isinstance(n, relay.Call)
                                    and hasattr(n.op, "name") else None)
    return out


@pytest.mark.parametrize("desired,match", [
    ({"nn.conv2d": ["NCHW0c", "OIHW0i0o"]}, r"malformed layout 'NCHW0c'"),
    ({"nn.conv2d": ["NH?C", "default"]}, r"malformed layout 'NH\?C'"),
    ({"nn.conv2d": ["nhwc", "default"]}, r"malformed layout 'nhwc'"),
    ({"nn.max_pool2d": []}, r"expected a non-empty list of layouts"),
    ({"nn.max_pool2d": "NHWC"}, r"expected a non-empty list of layouts"),
    (None, r"must be a dict of operator name -> list of layouts, got NoneType"),
])
def test_bad_desired_layouts_are_named(desired, match):
    from relay_tvm.errors import RelayError

    with pytest.raises(RelayError, match=match):
        transform.ConvertLayout(desired)


def test_a_users_rule_must_return_an_infer_correct_layout_output():
    import tvm

    from relay_tvm.errors import RelayError
    from relay_tvm.op.op_attrs import TempOpAttr

    x = nhwc_input()
    f = relay.Function([x], relay.nn.relu(conv_nhwc(x)))
    with TempOpAttr("nn.relu", "FInferCorrectLayout", lambda *a: None):
        with pytest.raises(RelayError, match="returned NoneType; expected an "
                                             "InferCorrectLayoutOutput"):
            transform.ConvertLayout({"nn.conv2d": ["NCHW", "default"]})(
                tvm.IRModule.from_expr(f))

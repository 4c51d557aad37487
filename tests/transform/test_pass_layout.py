"""AlterOpLayout (NCHW -> NCHW{c}c) and ConvertLayout (NCHW <-> NHWC), and the
nn.contrib_conv2d_NCHWc operator they use."""

import numpy as np
import pytest
from pass_util import assert_equal_structure, assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.errors import RelayError
from relay_tvm.op.nn_contrib import contrib_conv2d_nchwc
from relay_tvm.transform.layout import block_size

RNG = np.random.default_rng(0)
W1 = RNG.normal(size=(32, 16, 3, 3)).astype("float32")
W2 = RNG.normal(size=(16, 32, 1, 1)).astype("float32")
B = RNG.normal(size=(32, 1, 1)).astype("float32")


def block_net():
    x = relay.var("x", shape=(1, 16, 6, 6))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(x, relay.const(W1), padding=(1, 1)), relay.const(B)))
    z = relay.add(relay.nn.conv2d(y, relay.const(W2)), x)
    return relay.Function([x], relay.nn.global_avg_pool2d(z))


def lt(x, s, d):
    return relay.layout_transform(x, s, d)


def test_block_size_is_whole_vectors_up_to_16():
    # the largest factor <= 16 that is a multiple of 8 (else 4), else the largest factor:
    # 24 -> 8 (12 would be a vector and a half), 1000 -> 8 (SqueezeNet's classifier: 10 made
    # its 1x1 convolution 9x slower), 20 -> 4
    assert [block_size(n) for n in (3, 16, 24, 64, 7, 96, 1000, 20, 12)] == \
        [3, 16, 8, 16, 7, 16, 8, 4, 12]


def test_alter_op_layout_transforms_only_at_the_boundaries():
    def expected():
        x = relay.var("x", shape=(1, 16, 6, 6))
        xb = lt(x, "NCHW", "NCHW16c")
        w1 = relay.const(W1.reshape(2, 16, 16, 1, 3, 3).transpose(0, 3, 4, 5, 2, 1)
                         .reshape(2, 1, 3, 3, 16, 16))
        c1 = contrib_conv2d_nchwc(xb, w1, padding=(1, 1, 1, 1), channels=32,
                                           kernel_size=(3, 3), data_layout="NCHW16c",
                                           kernel_layout="OIHW16i16o", out_layout="NCHW16c")
        bias = relay.const(B.reshape(2, 16, 1, 1).transpose(0, 2, 3, 1))
        y = relay.nn.relu(relay.add(c1, bias))
        w2 = relay.const(W2.reshape(1, 16, 2, 16, 1, 1).transpose(0, 2, 4, 5, 3, 1))
        c2 = contrib_conv2d_nchwc(y, w2, padding=(0, 0, 0, 0), channels=16,
                                           kernel_size=(1, 1), data_layout="NCHW16c",
                                           kernel_layout="OIHW16i16o", out_layout="NCHW16c")
        z = relay.nn.global_avg_pool2d(relay.add(c2, xb), layout="NCHW16c")
        return relay.Function([x], lt(z, "NCHW16c", "NCHW"))

    after = run_opt_pass(block_net(), [transform.AlterOpLayout(), transform.FoldConstant()])
    assert_equal_structure(after, expected())
    assert_same_result(block_net(), after, atol=1e-3, rtol=1e-4)


def test_alter_op_layout_is_idempotent_and_skips_grouped_conv():
    once = run_opt_pass(block_net(), [transform.AlterOpLayout(), transform.FoldConstant()])
    twice = run_opt_pass(once, transform.AlterOpLayout())
    assert relay.analysis.structural_equal(once, twice)
    x = relay.var("x", shape=(1, 4, 5, 5))
    w = relay.const(RNG.normal(size=(4, 2, 3, 3)).astype("float32"))
    dw = relay.Function([x], relay.nn.conv2d(x, w, groups=2, padding=(1, 1)))
    assert_equal_structure(run_opt_pass(dw, transform.AlterOpLayout()), dw)


def test_convert_layout_to_nhwc():
    after = run_opt_pass(block_net(), [transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}),
                                       transform.FoldConstant()])
    transforms = []
    relay.analysis.post_order_visit(
        after, lambda n: transforms.append((n.attrs.src_layout, n.attrs.dst_layout))
        if isinstance(n, relay.Call) and getattr(n.op, "name", "") == "layout_transform" else None)
    # the input once into NHWC, the result once back: nothing in between
    assert sorted(transforms) == [("NCHW", "NHWC"), ("NHWC", "NCHW")]
    assert_same_result(block_net(), after, atol=1e-3, rtol=1e-4)


def test_convert_layout_kernel_layout_of_the_users_choice_and_refusals():
    # NCHW data with an HWIO kernel is a layout pair the convolution computes directly
    after = run_opt_pass(block_net(), transform.ConvertLayout({"nn.conv2d": ["NCHW", "HWIO"]}))
    assert after.astext().count('kernel_layout="HWIO"') == 2
    assert_same_result(block_net(), after, atol=1e-3, rtol=1e-4)
    with pytest.raises(RelayError, match="nn.conv2d to data layout 'NWHC' with the default"):
        run_opt_pass(block_net(), transform.ConvertLayout({"nn.conv2d": ["NWHC", "default"]}))
    with pytest.raises(RelayError, match="data layout cannot be 'default'"):
        run_opt_pass(block_net(), transform.ConvertLayout({"nn.conv2d": ["default", "OIHW"]}))
    with pytest.raises(RelayError, match="a desired layout for its data and its kernel"):
        run_opt_pass(block_net(), transform.ConvertLayout({"nn.conv2d": ["NHWC"]}))


@pytest.mark.parametrize("ic,oc,stride,pad", [(4, 8, 1, 1), (8, 4, 2, 0), (3, 16, 1, 2)])
def test_contrib_conv2d_nchwc_reference_matches_conv2d(ic, oc, stride, pad):
    c, o = ic * 2, oc
    x = RNG.normal(size=(1, c, 7, 7)).astype("float32")
    w = RNG.normal(size=(o, c, 3, 3)).astype("float32")
    xv = relay.var("x", shape=x.shape)
    ref_f = relay.Function([xv], relay.nn.conv2d(xv, relay.const(w), strides=(stride, stride),
                                                 padding=(pad, pad)))
    after = run_opt_pass(ref_f, transform.AlterOpLayout())
    assert "nn.contrib_conv2d_NCHWc" in after.astext()
    assert_same_result(ref_f, after, atol=1e-3, rtol=1e-4)


def test_depthwise_conv_becomes_blocked_too():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(RNG.normal(size=(8, 1, 3, 3)).astype("float32"))
    w2 = relay.const(RNG.normal(size=(16, 8, 1, 1)).astype("float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w, groups=8, padding=(1, 1), strides=(2, 2)))
    f = relay.Function([x], relay.nn.conv2d(y, w2))
    after = run_opt_pass(f, [transform.AlterOpLayout(), transform.FoldConstant()])
    ops = []
    relay.analysis.post_order_visit(
        after, lambda n: ops.append(n.op.name) if isinstance(n, relay.Call) else None)
    assert ops == ["layout_transform", "nn.contrib_depthwise_conv2d_NCHWc", "nn.relu",
                   "nn.contrib_conv2d_NCHWc", "layout_transform"]
    assert_same_result(f, after, atol=1e-4)


def _calls(expr, name):
    found = []
    relay.analysis.post_order_visit(
        expr, lambda e: found.append(e) if isinstance(e, relay.Call)
        and getattr(e.op, "name", None) == name else None)
    return found


@pytest.mark.parametrize("hw, strides", [((14, 14), (2, 2)), ((7, 9), (2, 2)), ((8, 6), (2, 1)),
                                         ((9, 9), (3, 3))])
def test_strided_1x1_conv_reads_one_shared_strided_slice(hw, strides):
    """A 1x1 convolution with strides and no padding reads a strided_slice of its blocked input
    at stride 1 (ResNet v1's projection layers: 3.12 -> 2.82 ms); the two strided 1x1 layers
    of a ResNet v1 stage's first block share one slice. Checked against the interpreter on
    odd sizes (7 -> 4 rows at stride 2) and unequal strides."""
    rng = np.random.default_rng(1)
    x = relay.var("x", shape=(1, 32) + hw)
    r = relay.nn.relu(x)
    wa = relay.const(rng.normal(size=(16, 32, 1, 1)).astype("float32"))
    wb = relay.const(rng.normal(size=(64, 32, 1, 1)).astype("float32"))
    ya = relay.nn.relu(relay.nn.conv2d(r, wa, strides=strides, channels=16, kernel_size=(1, 1)))
    yb = relay.nn.conv2d(r, wb, strides=strides, channels=64, kernel_size=(1, 1))
    f = relay.Function([x], relay.Tuple([ya, yb]))
    after = run_opt_pass(f, [transform.AlterOpLayout(), transform.FoldConstant()])
    slices = _calls(after, "strided_slice")
    assert len(slices) == 1
    assert list(slices[0].attrs.strides) == [1, 1, strides[0], strides[1], 1]
    convs = _calls(after, "nn.contrib_conv2d_NCHWc")
    assert len(convs) == 2 and all(tuple(c.attrs.strides) == (1, 1) for c in convs)
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)
    # and compiled, against the interpreter
    mod = relay.IRModule.from_expr(f)
    xv = rng.normal(size=(1, 32) + hw).astype("float32")
    ref = relay.create_executor("debug", mod=mod).evaluate()(xv)
    with transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm")
    import tvm

    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", xv)
    gm.run()
    for i in range(2):
        np.testing.assert_allclose(gm.get_output(i).numpy(), ref[i].numpy(), rtol=1e-4,
                                   atol=1e-4)


def test_strided_1x1_conv_with_padding_keeps_its_strides():
    """Padding puts zeros between the sampled positions' grid and the input: no slice then."""
    x = relay.var("x", shape=(1, 16, 8, 8))
    w = relay.const(RNG.normal(size=(16, 16, 1, 1)).astype("float32"))
    f = relay.Function([x], relay.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1),
                                            channels=16, kernel_size=(1, 1)))
    after = run_opt_pass(f, [transform.AlterOpLayout(), transform.FoldConstant()])
    assert not _calls(after, "strided_slice")
    assert [tuple(c.attrs.strides) for c in _calls(after, "nn.contrib_conv2d_NCHWc")] == [(2, 2)]
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)

"""FoldScaleAxis: per-channel scales fold into conv2d weights (before/expected + semantics)."""

import numpy as np
from pass_util import assert_equal_structure, assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform

RNG = np.random.default_rng(0)
W = RNG.normal(size=(4, 3, 3, 3)).astype("float32")
S_OUT = RNG.uniform(0.5, 2, size=(4, 1, 1)).astype("float32")
S_IN = RNG.uniform(0.5, 2, size=(3, 1, 1)).astype("float32")
B = RNG.normal(size=(4, 1, 1)).astype("float32")


def conv(x, w):
    return relay.nn.conv2d(x, relay.const(w), padding=(1, 1), channels=4, kernel_size=(3, 3))


def test_backward_fold_into_weight():
    def before():
        x = relay.var("x", shape=(1, 3, 6, 6))
        return relay.Function([x], relay.nn.relu(relay.multiply(conv(x, W), relay.const(S_OUT))))

    def expected():
        x = relay.var("x", shape=(1, 3, 6, 6))
        return relay.Function([x], relay.nn.relu(conv(x, W * S_OUT.reshape(4, 1, 1, 1))))

    after = run_opt_pass(before(), transform.FoldScaleAxis())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after, atol=1e-4)


def test_backward_fold_through_bias_add():
    def before():
        x = relay.var("x", shape=(1, 3, 6, 6))
        y = relay.add(conv(x, W), relay.const(B))
        return relay.Function([x], relay.multiply(y, relay.const(S_OUT)))

    def expected():
        x = relay.var("x", shape=(1, 3, 6, 6))
        return relay.Function([x], relay.add(conv(x, W * S_OUT.reshape(4, 1, 1, 1)),
                                             relay.const(B * S_OUT)))

    after = run_opt_pass(before(), transform.FoldScaleAxis())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after, atol=1e-4)


def test_backward_fold_through_nn_bias_add():
    """Gluon's Conv2D(use_bias=True) then BatchNorm (ResNet-50 v1's bottlenecks): the scale
    folds through ``nn.bias_add`` as Relay 0.19's rule does (the bias is scaled too)."""
    b = B.reshape(4)

    def before():
        x = relay.var("x", shape=(1, 3, 6, 6))
        y = relay.nn.bias_add(conv(x, W), relay.const(b))
        return relay.Function([x], relay.multiply(y, relay.const(S_OUT)))

    def expected():
        x = relay.var("x", shape=(1, 3, 6, 6))
        return relay.Function([x], relay.nn.bias_add(conv(x, W * S_OUT.reshape(4, 1, 1, 1)),
                                                     relay.const(b * S_OUT.reshape(4))))

    after = run_opt_pass(before(), transform.FoldScaleAxis())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after, atol=1e-4)
    # a bias_add on another axis is left alone
    x = relay.var("x", shape=(1, 3, 6, 6))
    f = relay.Function([x], relay.multiply(
        relay.nn.bias_add(conv(x, W), relay.const(np.ones(6, "float32")), axis=3),
        relay.const(S_OUT)))
    assert_equal_structure(run_opt_pass(f, transform.FoldScaleAxis()), f)


def test_forward_fold_into_weight():
    def before():
        x = relay.var("x", shape=(1, 3, 6, 6))
        return relay.Function([x], conv(relay.multiply(x, relay.const(S_IN)), W))

    def expected():
        x = relay.var("x", shape=(1, 3, 6, 6))
        return relay.Function([x], conv(x, W * S_IN.reshape(1, 3, 1, 1)))

    after = run_opt_pass(before(), transform.FoldScaleAxis())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after, atol=1e-4)


def test_no_fold_when_conv_has_other_uses_or_scale_not_per_channel():
    x = relay.var("x", shape=(1, 3, 6, 6))
    c = conv(x, W)
    f = relay.Function([x], relay.add(relay.multiply(c, relay.const(S_OUT)), c))
    after = run_opt_pass(f, transform.FoldScaleAxis())
    assert_equal_structure(after, f)
    full = RNG.uniform(size=(1, 4, 6, 6)).astype("float32")
    g = relay.Function([x], relay.multiply(conv(x, W), relay.const(full)))
    assert_equal_structure(run_opt_pass(g, transform.FoldScaleAxis()), g)


def test_batch_norm_vanishes_into_conv_in_pipeline():
    x = relay.var("x", shape=(1, 3, 6, 6))
    consts = [relay.const(RNG.uniform(0.5, 1.5, size=4).astype("float32")) for _ in range(4)]
    y = relay.nn.relu(relay.nn.batch_norm(conv(x, W), *consts)[0])
    f = relay.Function([x], y)
    mod = transform.InferType()(relay.IRModule.from_expr(f))
    with transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        opt = transform.default_pipeline(3)(mod)
    ops = []
    relay.analysis.post_order_visit(opt["main"], lambda n: ops.append(n.op.name) if isinstance(n, relay.Call) and isinstance(n.op, relay.op.Op) else None)
    assert sorted(ops) == ["add", "nn.conv2d", "nn.relu"]
    assert_same_result(mod, opt, atol=1e-4)


def test_integer_conv_with_narrow_weight_keeps_its_multiply():
    # found by a fresh-user trial: BackwardFoldScaleAxis multiplied an int8 weight by the int32
    # scale after an int32-output convolution (a type error at build); an int8 weight cannot
    # hold the scaled values, so the multiply stays, in both directions
    import tvm

    rng = np.random.default_rng(0)
    wv = rng.integers(-128, 128, (32, 16, 3, 3)).astype("int8")
    xv = rng.integers(0, 256, (1, 16, 8, 8)).astype("uint8")
    x = relay.var("x", shape=xv.shape, dtype="uint8")
    conv = relay.nn.conv2d(x, relay.const(wv), padding=(1, 1), channels=32, kernel_size=(3, 3),
                           out_dtype="int32")
    y = relay.multiply(conv, relay.const(np.arange(1, 33, dtype="int32").reshape(32, 1, 1)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    for p in (relay.transform.BackwardFoldScaleAxis(), relay.transform.ForwardFoldScaleAxis()):
        out = relay.transform.InferType()(p(mod))
        assert tvm.ir.structural_equal(out, mod)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm")
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    gm.set_input("x", xv)
    gm.run()
    ref = relay.create_executor("debug", mod=mod).evaluate()(xv).numpy()
    np.testing.assert_array_equal(gm.get_output(0).numpy(), ref)

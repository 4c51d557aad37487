"""FuseOps: before/expected structures (after Relay's test_pass_fuse_ops.py) and semantics."""

import numpy as np
import pytest
from pass_util import assert_equal_structure, assert_same_result, prim, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.errors import RelayError
from relay_tvm.transform.fuse_ops import fused_function_name


def fuse(f, level=2, config=None):
    return run_opt_pass(f, transform.FuseOps(), opt_level=level, config=config)


def prim_funcs(func):
    out = []
    relay.analysis.post_order_visit(
        func, lambda n: out.append(n) if isinstance(n, relay.Function) and n.is_primitive else None
    )
    return out


def test_fuse_simple():
    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.add(x, relay.const(1, "float32"))
        z = relay.exp(y)
        w = relay.squeeze(z)
        return relay.Function([x], w)

    def expected():
        p = relay.var("p0", shape=(10, 20))
        body = relay.squeeze(relay.exp(relay.add(p, relay.const(1, "float32"))))
        f1 = prim([p], body, "fused_add_exp_squeeze")
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], relay.Call(f1, [x]))

    after = fuse(before())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


def test_conv2d_fuse():
    """Relay's conv2d test: the injective ops before a conv stay out; conv + add fuse."""

    def before(dshape):
        x = relay.var("x", shape=dshape)
        x = relay.add(x, relay.const(1, "float32"))
        y = relay.nn.conv2d(x, relay.var("w1"), kernel_size=(3, 3), padding=(1, 1), channels=16)
        y1 = relay.add(relay.const(1, "float32"), y)
        y = relay.add(y, y1)
        z2 = relay.nn.conv2d(y, relay.var("w2"), kernel_size=(1, 1), padding=(0, 0), channels=16)
        z3 = relay.nn.conv2d(y, relay.var("w3"), kernel_size=(3, 3), padding=(1, 1), channels=16)
        z = relay.add(z2, z3)
        return relay.Function(relay.analysis.free_vars(z), z)

    def expected(dshape):
        x = relay.var("p0", shape=dshape)
        f0 = prim([x], relay.add(x, relay.const(1, "float32")), "fused_add")
        x = relay.var("p0", shape=dshape)
        w = relay.var("p1", shape=(16, 16, 3, 3))
        y = relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1), channels=16)
        y1 = relay.add(relay.const(1, "float32"), y)
        f1 = prim([x, w], relay.add(y, y1), "fused_nn_conv2d_add_add")
        x = relay.var("p0", shape=dshape)
        w = relay.var("p1", shape=(16, 16, 3, 3))
        f2 = prim([x, w], relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1), channels=16),
                  "fused_nn_conv2d")
        x = relay.var("p0", shape=dshape)
        w = relay.var("p1", shape=(16, 16, 1, 1))
        o = relay.var("p2", shape=dshape)
        z = relay.nn.conv2d(x, w, kernel_size=(1, 1), padding=(0, 0), channels=16)
        f3 = prim([x, w, o], relay.add(z, o), "fused_nn_conv2d_add")
        x = relay.var("x", shape=dshape)
        w1, w2, w3 = (relay.var(n) for n in ("w1", "w2", "w3"))
        y = relay.Call(f1, [relay.Call(f0, [x]), w1])
        z3 = relay.Call(f2, [y, w3])
        z = relay.Call(f3, [y, w2, z3])
        return relay.Function([x, w1, w2, w3], z)

    dshape = (1, 16, 8, 8)
    before_f = run_opt_pass(before(dshape), [], opt_level=2)
    after = fuse(before_f)
    fns = prim_funcs(after)
    names = sorted(fused_function_name(f.body) for f in fns)
    assert names == sorted(["fused_add", "fused_nn_conv2d_add_add", "fused_nn_conv2d",
                            "fused_nn_conv2d_add"])
    exp = run_opt_pass(expected(dshape), [], opt_level=2)
    assert relay.analysis.structural_equal(after, exp, map_free_vars=True)
    assert_same_result(before_f, after, atol=1e-4)


def test_concatenate_fuses_with_producers():
    def before():
        x = relay.var("x", shape=(1, 4, 6, 6))
        y = relay.exp(x)
        z = relay.concatenate((x, y), axis=1)
        return relay.Function([x], relay.add(z, relay.const(1, "float32")))

    def expected():
        p = relay.var("p0", shape=(1, 4, 6, 6))
        body = relay.add(relay.concatenate((p, relay.exp(p)), axis=1), relay.const(1, "float32"))
        f = prim([p], body, "fused_exp_concatenate_add")
        x = relay.var("x", shape=(1, 4, 6, 6))
        return relay.Function([x], relay.Call(f, [x]))

    after = fuse(before())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


def test_tuple_root_is_not_fused():
    def before():
        x = relay.var("x", shape=(4, 4))
        a = relay.exp(x)
        b = relay.negative(x)
        return relay.Function([x], relay.Tuple([a, b]))

    def expected():
        p = relay.var("p0", shape=(4, 4))
        fa = prim([p], relay.exp(p), "fused_exp")
        q = relay.var("p0", shape=(4, 4))
        fb = prim([q], relay.negative(q), "fused_negative")
        x = relay.var("x", shape=(4, 4))
        return relay.Function([x], relay.Tuple([relay.Call(fa, [x]), relay.Call(fb, [x])]))

    after = fuse(before())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


def test_split_tuple_getitem_fuses():
    """Relay's test_fuse_tuple_get_elemwise: split's outputs fuse with the elementwise tail."""

    def before():
        x = relay.var("x", shape=(6, 4))
        s = relay.split(x, 3, axis=0).astuple()
        y = relay.add(relay.TupleGetItem(s, 0), relay.TupleGetItem(s, 1))
        return relay.Function([x], relay.exp(relay.add(y, relay.TupleGetItem(s, 2))))

    def expected():
        p = relay.var("p0", shape=(6, 4))
        s = relay.split(p, 3, axis=0).astuple()
        y = relay.add(relay.TupleGetItem(s, 0), relay.TupleGetItem(s, 1))
        body = relay.exp(relay.add(y, relay.TupleGetItem(s, 2)))
        f = prim([p], body, "fused_split_add_add_exp")
        x = relay.var("x", shape=(6, 4))
        return relay.Function([x], relay.Call(f, [x]))

    after = fuse(before())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


def test_reduce_takes_elementwise_producers():
    def before():
        x = relay.var("x", shape=(8, 5))
        y = relay.sum(relay.exp(x), axis=1)
        return relay.Function([x], relay.sqrt(y))

    after = fuse(before())
    names = [fused_function_name(f.body) for f in prim_funcs(after)]
    # exp fuses into the reduction; the tail after a reduction starts a new kernel
    assert sorted(names) == ["fused_exp_sum", "fused_sqrt"]
    assert_same_result(before(), after)


def test_opt_level_zero_one_kernel_per_operator():
    x = relay.var("x", shape=(3, 3))
    f = relay.Function([x], relay.exp(relay.add(x, x)))
    after = fuse(f, level=0)
    assert sorted(fused_function_name(fn.body) for fn in prim_funcs(after)) == ["fused_add", "fused_exp"]
    after1 = fuse(f, level=1)
    assert [fused_function_name(fn.body) for fn in prim_funcs(after1)] == ["fused_add_exp"]
    # an explicit fuse_opt_level overrides the context's level
    after2 = run_opt_pass(f, transform.FuseOps(fuse_opt_level=0), opt_level=3)
    assert len(prim_funcs(after2)) == 2


def test_fuse_is_idempotent():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(8, 8, 3, 3))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(x, w, padding=(1, 1)), x))
    once = fuse(relay.Function([x, w], y))
    twice = run_opt_pass(relay.IRModule.from_expr(once), transform.FuseOps(), opt_level=2)
    assert relay.analysis.structural_equal(twice["main"], once)


def test_if_and_let_are_fusion_barriers():
    """Relay's myia regression: each branch of an if is fused on its own."""
    x = relay.var("x", shape=(4,))
    c = relay.var("c", shape=(), dtype="bool")
    t = relay.exp(relay.add(x, x))
    e = relay.negative(relay.exp(x))
    v = relay.var("v")
    body = relay.Let(v, relay.If(c, t, e), relay.sqrt(relay.sqrt(v)))
    f = relay.Function([x, c], body)
    after = fuse(f)
    names = sorted(fused_function_name(fn.body) for fn in prim_funcs(after))
    assert names == ["fused_add_exp", "fused_exp_negative", "fused_sqrt_sqrt"]
    mod = relay.IRModule.from_expr(f)
    mod = transform.InferType()(mod)
    for cond in (True, False):
        args = [np.array([0.1, 0.2, 0.3, 0.4], "float32"), np.array(cond)]
        a = relay.create_executor("debug", mod=mod).evaluate()(*args)
        b = relay.create_executor("debug", mod=relay.IRModule.from_expr(after)).evaluate()(*args)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)


def test_resnet_block_is_one_kernel():
    """conv2d + bias + batch-norm arithmetic + relu + residual add: one kernel."""
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(8, 8, 3, 3))
    b = relay.var("b", shape=(8,))
    scale = relay.var("scale", shape=(8, 1, 1))
    shift = relay.var("shift", shape=(8, 1, 1))
    y = relay.nn.conv2d(x, w, padding=(1, 1))
    y = relay.add(y, relay.expand_dims(b, axis=1, num_newaxis=2))
    y = relay.add(relay.multiply(y, scale), shift)
    y = relay.nn.relu(y)
    y = relay.add(y, x)
    f = relay.Function([x, w, b, scale, shift], y)
    after = fuse(f)
    names = sorted(fused_function_name(fn.body) for fn in prim_funcs(after))
    # expand_dims is a broadcast op in Relay: it joins the conv2d kernel too
    assert names == ["fused_nn_conv2d_expand_dims_add_multiply_add_nn_relu_add"]
    assert_same_result(f, after, atol=1e-4)


def test_max_depth_on_100k_chain():
    n = 100_000
    x = relay.var("x", shape=(2,))
    y = x
    for i in range(n):
        y = relay.negative(y) if i % 2 else relay.exp(y)
    f = relay.Function([x], y)
    after = fuse(f, level=1, config={"relay.FuseOps.max_depth": 100})
    fns = prim_funcs(after)
    assert len(fns) == n // 100
    sizes = set()
    for fn in fns:
        k = [0]
        relay.analysis.post_order_visit(fn.body, lambda e, k=k: k.__setitem__(0, k[0] + isinstance(e, relay.Call)))
        sizes.add(k[0])
    assert sizes == {100}


def test_default_max_depth_is_256():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(600):
        y = relay.exp(y)
    after = fuse(relay.Function([x], y), level=1)
    assert len(prim_funcs(after)) == 3  # 256 + 256 + 88


def test_bad_max_depth():
    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayError, match="'relay.FuseOps.max_depth' must be a positive int, got 0"):
        fuse(relay.Function([x], relay.exp(x)), config={"relay.FuseOps.max_depth": 0})


def test_fused_function_name_truncates():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(30):
        y = relay.exp(y)
    name = fused_function_name(y)
    assert name.startswith("fused_exp_exp") and len(name) < 110 and name.endswith("_")
    assert name != fused_function_name(relay.exp(y))


def test_spans_are_kept():
    span = relay.Span("model.json", 3, 1)
    x = relay.var("x", shape=(2,))
    c = relay.Call(relay.op.get("exp"), [x], None, (), span)
    after = fuse(relay.Function([x], c))
    assert after.body.span == span
    assert after.body.op.body.span == span


def test_resnet_block_through_default_pipeline():
    """conv2d + bias_add + batch_norm + relu + residual add: the default pipeline at opt level 3
    folds the normalization into the weights and leaves one kernel for the block."""
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 8, 6, 6))

    def c(*shape, lo=-1.0, hi=1.0):
        return relay.const(rng.uniform(lo, hi, size=shape).astype("float32"))

    y = relay.nn.conv2d(x, c(8, 8, 3, 3), padding=(1, 1))
    y = relay.nn.bias_add(y, c(8))
    y = relay.nn.batch_norm(y, c(8), c(8), c(8), c(8, lo=0.5, hi=2.0))[0]
    y = relay.add(relay.nn.relu(y), x)
    mod = transform.InferType()(relay.IRModule.from_expr(relay.Function([x], y)))
    for disabled in ([], ["AlterOpLayout"]):
        with transform.PassContext(opt_level=3, disabled_pass=disabled):
            opt = transform.default_pipeline(3)(mod)
        kernels = [fused_function_name(fn.body) for fn in prim_funcs(opt["main"])]
        conv_kernels = [k for k in kernels if "conv2d" in k]
        assert len(conv_kernels) == 1
        assert conv_kernels[0].endswith("add_nn_relu_add"), kernels
        assert_same_result(mod, opt, atol=1e-4, rtol=1e-4)


def test_default_pipeline_on_a_20k_chain():
    x = relay.var("x", shape=(4,))
    y = x
    for i in range(20_000):
        y = relay.add(y, relay.const(1.0)) if i % 3 == 0 else relay.nn.relu(y)
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    with transform.PassContext(opt_level=3):
        opt = transform.default_pipeline(3)(mod)
    # scalar constants fuse and count toward max_depth (256) as in Relay: 20,000 ops + 6,667
    assert len(prim_funcs(opt["main"])) == -(-(20_000 + 6_667) // 256)
    out = relay.create_executor("debug", mod=opt).evaluate()(np.zeros(4, "float32"))
    np.testing.assert_allclose(out.numpy(), np.full(4, 6667.0, "float32"))


def test_softmax_takes_its_elementwise_consumers():
    """nn.softmax / log_softmax are kOutEWiseFusable in 0.19: a cast after them joins their
    kernel; the built kernel computes what the interpreter does."""
    import tvm

    def before():
        x = relay.var("x", shape=(4, 16))
        y = relay.cast(relay.nn.softmax(x), "float16")
        return relay.Function([x], relay.add(relay.nn.log_softmax(relay.cast(y, "float32")),
                                             relay.const(1.0)))

    after = fuse(before())
    names = sorted(fused_function_name(f.body) for f in prim_funcs(after))
    assert names == ["fused_nn_log_softmax_add", "fused_nn_softmax_cast_cast"]
    mod = relay.IRModule.from_expr(before())
    x = np.random.default_rng(0).normal(size=(4, 16)).astype("float32")
    ref = relay.create_executor("debug", mod=mod).evaluate()(x).numpy()
    with tvm.transform.PassContext(opt_level=3):
        got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(x).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-3)


def test_link_params_keeps_constants_inside_and_builds():
    import tvm

    idx = np.array([[0, 1], [1, 0]], "int64")

    def before():
        x = relay.var("x", shape=(10, 1))
        c = relay.concatenate([x, x], axis=-1)
        return relay.Function([x], relay.gather_nd(c, relay.const(idx)))

    plain = fuse(before())
    (f,) = prim_funcs(plain)
    assert len(f.params) == 2 and len(plain.body.args) == 2
    linked = fuse(before(), config={"relay.FuseOps.link_params": True})
    (g,) = prim_funcs(linked)
    assert len(g.params) == 1 and isinstance(g.body.args[1], relay.Constant)
    x = np.arange(10, dtype="float32").reshape(10, 1)
    mod = relay.IRModule.from_expr(linked)
    with tvm.transform.PassContext(opt_level=0):
        lib = relay.build(mod, "llvm")
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", x)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), [x[0, 0], x[1, 0]])


@pytest.mark.parametrize("dynamic", [False, True])
def test_target_max_function_args_limits_kernel_arguments(dynamic):
    """Under a target with max_function_args (Metal: 31) no fused kernel takes more arguments
    than that, counted as 0.19 did (a dynamic (?, 4) input is 1 + 1 Any + rank 2 = 4
    arguments, the output 1 + 1 Any = 2)."""
    import tvm

    shape = (relay.Any(), 4) if dynamic else (2, 4)
    xs = [relay.var(f"x{i}", shape=shape) for i in range(40)]
    outs = [relay.exp(relay.add(x, relay.const(1.0))) for x in xs]
    acc = outs[0]
    for o in outs[1:]:
        acc = relay.add(acc, o)
    f = relay.Function(xs, acc)
    assert len(prim_funcs(fuse(f))) == 1  # no target: one kernel of 40 inputs
    with tvm.target.Target("metal"):
        assert tvm.target.Target.current().max_function_args == 31
        after = fuse(f, config={"relay.FuseOps.max_depth": 1000})
    per_in, per_out = (4, 2) if dynamic else (1, 1)
    kernels = prim_funcs(after)
    assert len(kernels) > 1
    assert max(len(k.params) for k in kernels) * per_in + per_out in (30, 31)  # filled up
    for k in kernels:
        assert len(k.params) * per_in + per_out <= 31
    if not dynamic:
        assert_same_result(f, after)

"""SimplifyInference, FoldConstant, EliminateCommonSubexpr, CanonicalizeOps, SimplifyExpr,
FastMath: before/expected structures and interpreter agreement."""

import numpy as np
import pytest
import tvm
from pass_util import assert_equal_structure, assert_same_result, run_opt_pass

import relay_tvm as relay
from relay_tvm import transform
from relay_tvm.analysis import structural_equal


def C(v, dtype="float32"):
    return relay.const(np.array(v, dtype=dtype))


# ---- SimplifyInference ---------------------------------------------------------------------------

def test_batch_norm_unpacks_to_scale_shift():
    def before():
        x = relay.var("x", shape=(1, 3, 4, 4))
        g, b, m, v = (relay.var(n, shape=(3,)) for n in "gbmv")
        return relay.Function([x, g, b, m, v], relay.nn.batch_norm(x, g, b, m, v, epsilon=0.01)[0])

    def expected():
        x = relay.var("x", shape=(1, 3, 4, 4))
        g, b, m, v = (relay.var(n, shape=(3,)) for n in "gbmv")
        scale = relay.multiply(relay.divide(C(1.0), relay.sqrt(relay.add(v, C(0.01)))), g)
        shift = relay.add(relay.multiply(relay.negative(m), scale), b)
        out = relay.multiply(x, relay.expand_dims(scale, axis=1, num_newaxis=2))
        return relay.Function([x, g, b, m, v], relay.add(out, relay.expand_dims(shift, axis=1, num_newaxis=2)))

    after = run_opt_pass(before(), transform.SimplifyInference())
    assert_equal_structure(after, expected())
    mod = transform.InferType()(relay.IRModule.from_expr(before()))
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(1, 3, 4, 4)).astype("float32")] + [
        rng.uniform(0.5, 1.5, size=(3,)).astype("float32") for _ in range(4)]
    a = relay.create_executor("debug", mod=mod).evaluate()(*args)
    b = relay.create_executor("debug", mod=relay.IRModule.from_expr(after)).evaluate()(*args)
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("build", [
    lambda x, g, b: relay.nn.layer_norm(x, g, b, axis=-1),
    lambda x, g, b: relay.nn.layer_norm(x, g, b, axis=1, center=False),
    lambda x, g, b: relay.nn.instance_norm(x, g, b, axis=1),
    lambda x, g, b: relay.nn.group_norm(x, g, b, num_groups=2, axis=1),
    lambda x, g, b: relay.nn.l2_normalize(x, eps=1e-6, axis=[1]),
    lambda x, g, b: relay.add(relay.nn.dropout(x, 0.3), g),
])
def test_norms_become_arithmetic(build):
    x = relay.var("x", shape=(2, 4, 3, 4))
    g = relay.var("g", shape=(4,))
    b = relay.var("b", shape=(4,))
    f = relay.Function([x, g, b], build(x, g, b))
    after = run_opt_pass(f, transform.SimplifyInference())
    names = set()
    relay.analysis.post_order_visit(after, lambda n: names.add(n.op.name) if isinstance(n, relay.Call) else None)
    assert not {n for n in names if n.startswith("nn.")}, names
    assert_same_result(f, after, atol=1e-4, rtol=1e-4)


# ---- FoldConstant --------------------------------------------------------------------------------

def test_fold_constant_subgraph():
    c = C(np.arange(6).reshape(2, 3))

    def before():
        x = relay.var("x", shape=(2, 3))
        y = relay.add(relay.multiply(c, C(2.0)), C(1.0))
        return relay.Function([x], relay.add(x, relay.exp(y) if False else y))

    def expected():
        x = relay.var("x", shape=(2, 3))
        return relay.Function([x], relay.add(x, C(np.arange(6).reshape(2, 3) * 2.0 + 1.0)))

    after = run_opt_pass(before(), transform.FoldConstant())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


def test_fold_let_tuple_and_if():
    x = relay.var("x", shape=(2,))
    t = relay.var("t")
    tup = relay.Tuple([C([1.0, 2.0]), C([3.0, 4.0])])
    body = relay.Let(t, tup, relay.add(x, relay.add(relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 1))))
    body = relay.If(relay.less(C(1.0), C(2.0)), body, x)
    f = relay.Function([x], body)
    after = run_opt_pass(f, transform.FoldConstant())
    x2 = relay.var("x", shape=(2,))
    assert_equal_structure(after, relay.Function([x2], relay.add(x2, C([4.0, 6.0]))))


def test_fold_shape_of_static_but_not_dynamic():
    x = relay.var("x", shape=(2, 5))
    f = relay.Function([x], relay.shape_of(x))
    after = run_opt_pass(f, transform.FoldConstant())
    assert isinstance(after.body, relay.Constant)
    np.testing.assert_array_equal(after.body.data, [2, 5])
    y = relay.var("y", shape=(relay.Any(), 5))
    g = relay.Function([y], relay.shape_of(y))
    after = run_opt_pass(g, transform.FoldConstant())
    assert isinstance(after.body, relay.Call)


def test_fold_keeps_reference_effects():
    r = relay.var("r")
    u = relay.var("u")
    body = relay.Let(r, relay.RefCreate(C(1.0)),
                     relay.Let(u, relay.RefWrite(r, relay.add(C(1.0), C(2.0))), relay.RefRead(r)))
    f = relay.Function([], body)
    after = run_opt_pass(f, transform.FoldConstant())
    assert isinstance(after.body, relay.Let)
    out = relay.create_executor("debug", mod=relay.IRModule.from_expr(after)).evaluate()()
    assert float(out.numpy()) == 3.0


def test_fold_leaves_a_stateful_operator():
    """nn.dropout is TOpIsStateful (as in 0.19): its call on a constant is not folded, nor is a
    user's operator marked so; a plain operator on the same constant is."""
    from relay_tvm.op.op_attrs import temp_op_attr

    c = C([1.0, 2.0])
    f = relay.Function([], relay.TupleGetItem(relay.nn.dropout_raw(c, 0.5), 0))
    after = run_opt_pass(f, transform.FoldConstant())
    assert isinstance(after.body, relay.TupleGetItem)
    assert after.body.tuple_value.op.name == "nn.dropout"
    with temp_op_attr("nn.dropout", "TOpIsStateful", False):  # the attribute decides
        assert isinstance(run_opt_pass(f, transform.FoldConstant()).body, relay.Constant)
    g = relay.Function([], relay.exp(c))
    assert isinstance(run_opt_pass(g, transform.FoldConstant()).body, relay.Constant)
    with temp_op_attr("exp", "TOpIsStateful", True):
        assert isinstance(run_opt_pass(g, transform.FoldConstant()).body, relay.Call)


def test_fold_constant_is_idempotent():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.add(x, relay.exp(C([0.0, 1.0]))))
    once = run_opt_pass(f, transform.FoldConstant())
    twice = run_opt_pass(once, transform.FoldConstant())
    assert structural_equal(once, twice)


def test_fold_skips_nullary_and_stateful_calls():
    # zeros() has no arguments and dropout is stateful: 0.19 folds neither
    z = relay.zeros((4, 5), "float32")
    f = relay.Function([], relay.add(z, C(1.0)))
    after = run_opt_pass(f, transform.FoldConstant())
    assert isinstance(after.body, relay.Call) and after.body.args[0].op.name == "zeros"
    d = relay.Function([], relay.add(relay.nn.dropout(C(np.arange(3.0))), C(1.0)))
    after = run_opt_pass(d, transform.FoldConstant())
    assert structural_equal(after, run_opt_pass(d, transform.InferType()))
    assert_same_result(d, after)


def test_fold_qnn_only_when_asked():
    def before():
        q = relay.qnn.op.quantize(C([1.0, 2.0, 3.5]), C(0.5), relay.const(1, "int32"))
        x = relay.var("x", shape=(3,), dtype="int8")
        return relay.Function([x], relay.subtract(x, q))

    kept = run_opt_pass(before(), transform.FoldConstant())
    assert structural_equal(kept, run_opt_pass(before(), transform.InferType()))
    folded = run_opt_pass(before(), transform.FoldConstant(fold_qnn=True))
    const = folded.body.args[1]
    assert isinstance(const, relay.Constant) and const.data.dtype == np.int8
    np.testing.assert_array_equal(const.data, [3, 5, 8])  # round(v / 0.5) + 1
    assert_same_result(before(), folded)


def test_create_workload_takes_019_initializers():
    from relay_tvm.testing import create_workload

    x = relay.var("data", shape=(1, 3))
    w = relay.var("w", shape=(2, 3))

    def init(name, arr):  # 0.19's contract: fill the zero array in place
        arr[...] = 7.0

    _, params = create_workload(relay.Function([x, w], relay.nn.dense(x, w)), init)
    np.testing.assert_array_equal(params["w"].numpy(), np.full((2, 3), 7.0, "float32"))


# ---- EliminateCommonSubexpr ----------------------------------------------------------------------

def test_cse():
    def before():
        x = relay.var("x", shape=(1, 16))
        y1 = relay.nn.relu(relay.add(x, C(1.0)))
        y2 = relay.nn.relu(relay.add(x, C(1.0)))
        return relay.Function([x], relay.add(y1, y2))

    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.nn.relu(relay.add(x, C(1.0)))
        return relay.Function([x], relay.add(y, y))

    after = run_opt_pass(before(), transform.EliminateCommonSubexpr())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


def test_cse_respects_attrs_and_fskip():
    x = relay.var("x", shape=(4, 4))
    f = relay.Function([x], relay.add(relay.sum(x, axis=0), relay.sum(x, axis=1)))
    after = run_opt_pass(f, transform.EliminateCommonSubexpr())
    assert structural_equal(after, run_opt_pass(f, []))
    g = relay.Function([x], relay.add(relay.exp(x), relay.exp(x)))
    skip = run_opt_pass(g, transform.EliminateCommonSubexpr(lambda c: c.op.name == "exp"))
    assert skip.body.args[0] is not skip.body.args[1]


# ---- CanonicalizeOps -----------------------------------------------------------------------------

def test_canonicalize_bias_add():
    def before():
        x = relay.var("x", shape=(1, 8, 4, 4))
        b = relay.var("b", shape=(8,))
        return relay.Function([x, b], relay.nn.bias_add(x, b))

    def expected():
        x = relay.var("x", shape=(1, 8, 4, 4))
        b = relay.var("b", shape=(8,))
        return relay.Function([x, b], relay.add(x, relay.expand_dims(b, axis=1, num_newaxis=2)))

    after = run_opt_pass(before(), transform.CanonicalizeOps())
    assert_equal_structure(after, expected())
    assert_same_result(before(), after)


# ---- SimplifyExpr --------------------------------------------------------------------------------

@pytest.mark.parametrize("make,simplified", [
    (lambda x: relay.multiply(x, C(1.0)), lambda x: x),
    (lambda x: relay.multiply(C(1.0), x), lambda x: x),
    # x + (-0.0) and x - (+0.0) are x for every float; x + (+0.0) and x - (-0.0) turn -0.0
    # into +0.0 (IEEE 754), so they stay
    (lambda x: relay.add(x, C(-0.0)), lambda x: x),
    (lambda x: relay.add(C(-0.0), x), lambda x: x),
    (lambda x: relay.subtract(x, C(0.0)), lambda x: x),
    (lambda x: relay.add(x, C(0.0)), lambda x: relay.add(x, C(0.0))),
    (lambda x: relay.add(C(0.0), x), lambda x: relay.add(C(0.0), x)),
    (lambda x: relay.subtract(x, C(-0.0)), lambda x: relay.subtract(x, C(-0.0))),
    (lambda x: relay.divide(x, C(1.0)), lambda x: x),
    (lambda x: relay.reshape(relay.reshape(x, (6, 2)), (3, 4)), lambda x: relay.reshape(x, (3, 4))),
    (lambda x: relay.reshape(x, (2, 6)), lambda x: x),
    (lambda x: relay.transpose(relay.transpose(x, (1, 0)), (1, 0)), lambda x: x),
    (lambda x: relay.cast(x, "float32"), lambda x: x),
    # a broadcast is not an identity: kept
    (lambda x: relay.add(x, C(np.zeros((3, 2, 6)))), lambda x: relay.add(x, C(np.zeros((3, 2, 6))))),
])
def test_simplify_expr_rules(make, simplified):
    x = relay.var("x", shape=(2, 6))
    after = run_opt_pass(relay.Function([x], make(x)), transform.SimplifyExpr())
    x2 = relay.var("x", shape=(2, 6))
    assert_equal_structure(after, relay.Function([x2], simplified(x2)))
    assert_same_result(relay.Function([x], make(x)), after)


def test_simplify_transpose_compose():
    x = relay.var("x", shape=(2, 3, 4))
    f = relay.Function([x], relay.transpose(relay.transpose(x, (1, 2, 0)), (2, 0, 1)))
    after = run_opt_pass(f, transform.SimplifyExpr())
    assert after.body is after.params[0]
    g = relay.Function([x], relay.transpose(relay.transpose(x, (1, 0, 2)), (0, 2, 1)))
    after = run_opt_pass(g, transform.SimplifyExpr())
    assert after.body.op.name == "transpose" and tuple(after.body.attrs.axes) == (1, 2, 0)
    assert_same_result(g, after)


# ---- FastMath ------------------------------------------------------------------------------------

def test_fast_math():
    x = relay.var("x", shape=(8,))
    f = relay.Function([x], relay.add(relay.exp(x), relay.tanh(x)))
    after = run_opt_pass(f, transform.FastMath(), opt_level=4)
    names = []
    relay.analysis.post_order_visit(after, lambda n: names.append(n.op.name) if isinstance(n, relay.Call) else None)
    assert sorted(names) == ["add", "fast_exp", "fast_tanh"]
    assert_same_result(f, after, rtol=1e-4, atol=1e-5)
    # below opt level 4 it does not run in a Sequential
    with transform.PassContext(opt_level=3):
        mod = transform.Sequential([transform.FastMath()])(relay.IRModule.from_expr(f))
    assert mod["main"] is f


def test_fast_math_softmax_becomes_fast_softmax_and_runs_compiled():
    # 0.19's FastMath also rewrote nn.softmax (keeping its axis) into nn.fast_softmax
    x = relay.var("x", shape=(3, 5))
    f = relay.Function([x], relay.nn.softmax(x, axis=0))
    after = run_opt_pass(f, transform.FastMath(), opt_level=4)
    assert after.body.op.name == "nn.fast_softmax" and after.body.attrs.axis == 0
    data = np.random.default_rng(0).uniform(-4, 4, (3, 5)).astype("float32")
    want = np.exp(data) / np.exp(data).sum(axis=0, keepdims=True)
    lib = relay.build(relay.IRModule.from_expr(after), target="llvm")
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", data)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)
    f16 = relay.var("y", shape=(4,), dtype="float16")
    kept = run_opt_pass(relay.Function([f16], relay.nn.softmax(f16)), transform.FastMath(),
                        opt_level=4)
    assert kept.body.op.name == "nn.softmax"  # fast_exp is float32 only


def test_reshape_chains_with_reverse_reshape_become_one_reshape():
    def before():
        x = relay.var("x", shape=(32, 16, 16))
        y = relay.reshape(x, newshape=(1, 16, -1))
        y = relay.reshape(y, newshape=(4, 8, -1, 16))
        return relay.Function([x], relay.reverse_reshape(y, newshape=(32, 0, -1)))

    after = run_opt_pass(before(), transform.SimplifyExpr())
    x = relay.var("x", shape=(32, 16, 16))
    assert_equal_structure(after, relay.Function([x], relay.reshape(x, newshape=(32, 16, 16))))
    assert_same_result(before(), after)

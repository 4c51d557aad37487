"""The default pipeline at opt levels 0..3 keeps the interpreter's numbers on random well-typed
dataflow programs (hypothesis), leaves a well-typed module, and is checked after each pass."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relay_tvm as relay
from relay_tvm import transform

SHAPE = (2, 3, 4, 4)
UNARY = ["exp", "negative", "sigmoid", "tanh", "abs", "relu"]
BINARY = ["add", "subtract", "multiply", "maximum"]


def _unary(name, x):
    return relay.nn.relu(x) if name == "relu" else getattr(relay, name)(x)


@st.composite
def programs(draw):
    """A random DAG over ``SHAPE`` tensors: elementwise, broadcast with constants, batch_norm,
    bias_add, conv2d (same padding), transpose pairs, reshape pairs and reductions kept in
    shape, each node choosing its inputs among earlier nodes."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = relay.var("x", shape=SHAPE)
    nodes = [x]
    n = draw(st.integers(1, 8))
    for _ in range(n):
        kind = draw(st.sampled_from(["unary", "binary", "const", "bn", "bias", "conv", "tr",
                                     "reshape", "mean"]))
        a = nodes[draw(st.integers(0, len(nodes) - 1))]
        if kind == "unary":
            y = _unary(draw(st.sampled_from(UNARY)), a)
        elif kind == "binary":
            b = nodes[draw(st.integers(0, len(nodes) - 1))]
            y = getattr(relay, draw(st.sampled_from(BINARY)))(a, b)
        elif kind == "const":
            c = relay.const(rng.uniform(0.5, 1.5, size=(3, 1, 1)).astype("float32"))
            y = getattr(relay, draw(st.sampled_from(["add", "multiply"])))(a, c)
        elif kind == "bn":
            g, b, m = (relay.const(rng.uniform(-1, 1, size=3).astype("float32")) for _ in range(3))
            v = relay.const(rng.uniform(0.5, 2, size=3).astype("float32"))
            y = relay.nn.batch_norm(a, g, b, m, v)[0]
        elif kind == "bias":
            y = relay.nn.bias_add(a, relay.const(rng.normal(size=3).astype("float32")))
        elif kind == "conv":
            w = relay.const(rng.normal(scale=0.3, size=(3, 3, 3, 3)).astype("float32"))
            y = relay.nn.conv2d(a, w, padding=(1, 1))
        elif kind == "tr":
            y = relay.transpose(relay.transpose(a, (0, 2, 3, 1)), (0, 3, 1, 2))
        elif kind == "reshape":
            y = relay.reshape(relay.reshape(a, (2, 48)), SHAPE)
        else:
            y = relay.add(a, relay.mean(a, axis=1, keepdims=True))
        nodes.append(y)
    out = nodes[-1]
    if draw(st.booleans()) and len(nodes) > 2:
        out = relay.Tuple([out, nodes[draw(st.integers(1, len(nodes) - 1))]])
    return relay.Function([x], out)


def _run(mod, data):
    out = relay.create_executor("debug", mod=mod).evaluate()(data)
    if isinstance(out, (tuple, list)):
        return [np.asarray(o.numpy()) for o in out]
    return [np.asarray(out.numpy())]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
def test_opt_levels_agree(func, seed):
    mod = transform.InferType()(relay.IRModule.from_expr(func))
    data = np.random.default_rng(seed).uniform(-1, 1, size=SHAPE).astype("float32")
    ref = _run(mod, data)
    for level in range(4):
        with transform.PassContext(opt_level=level,
                                   config={"relay.debug.check_each_pass": True}):
            opt = transform.default_pipeline(level)(mod)
        got = _run(opt, data)
        assert len(got) == len(ref)
        for a, b in zip(ref, got):
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4, err_msg=f"opt_level={level}")


def test_default_pipeline_order():
    names = [p.name for p in transform.default_pipeline(3).passes]
    assert names == ["QnnLowering", "SimplifyInference", "EliminateCommonSubexpr", "FoldConstant",
                     "FoldScaleAxis", "SimplifyExpr", "CanonicalizeOps", "FlattenAtrousConv",
                     "AlterOpLayout", "FastMath", "FoldConstant", "FuseOps", "InferType"]


def test_check_each_pass_names_the_broken_pass():
    import pytest

    from relay_tvm.errors import RelayError

    @transform.function_pass(opt_level=0, name="BreakIt")
    def break_it(func, mod, ctx):
        return relay.Function(func.params, relay.add(func.body, relay.const(1, "int32")))

    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    with transform.PassContext(config={"relay.debug.check_each_pass": True}):
        with pytest.raises(RelayError, match="pass BreakIt left an ill-formed or ill-typed"):
            break_it(mod)

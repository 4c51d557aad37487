"""from_mxnet on Gluon HybridBlocks: nested tuple / list outputs come back as nested Relay tuples,
NumPy-mode blocks (npx.set_np()) are traced with mx.np symbols; the block run by MXNet (in the
same nesting) is the reference."""

import numpy as np
import pytest
from mx_helpers import randomize_block

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")
import relay_tvm as relay  # noqa: E402
from relay_tvm.errors import ConversionError  # noqa: E402
from relay_tvm.ir.types import TupleType  # noqa: E402

pytestmark = pytest.mark.mxnet


def _run(mod, params, inputs, kind):
    """``mod['main']`` on ``inputs`` (list, in order) with the executor ``kind``; the result
    keeps its tuple nesting, leaves as NumPy arrays."""
    if kind == "debug":
        f = relay.create_executor("debug", mod=mod, params=params).evaluate()
    else:
        with relay.transform.PassContext(opt_level=3):
            f = relay.create_executor(kind, mod=mod, params=params, target="llvm").evaluate()
    return _nested(f(*inputs))


def _nested(v):
    if hasattr(v, "numpy"):
        return v.numpy()
    return tuple(_nested(x) for x in v)


def _mx_nested(v):
    """MXNet's imperative output in the same form (tuples of NumPy arrays)."""
    if isinstance(v, (list, tuple)):
        return tuple(_mx_nested(x) for x in v)
    return v.asnumpy()


def _assert_same(got, want, rtol=1e-5):
    assert isinstance(got, tuple) == isinstance(want, tuple), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, rtol)
    else:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


def _shape_of_type(t):
    if isinstance(t, TupleType):
        return tuple(_shape_of_type(f) for f in t.fields)
    return "T"


class Nested(mx.gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.dense = mx.gluon.nn.Dense(4, in_units=3)

    def hybrid_forward(self, F, x):
        y = self.dense(x)
        return y + 1, (x * 2, [F.relu(y), x - 1])


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("kind", ["debug", "vm", "graph"])
def test_nested_outputs_keep_their_nesting(hybridize, kind):
    """(a, (b, [c, d])) from forward: MXNet's Group took only a flat list (TypeError "Expected a
    list of symbols", as tvm.relay 0.19's from_mxnet); now main returns (a, (b, (c, d)))."""
    net = Nested()
    net.initialize()
    randomize_block(net)
    if hybridize:
        net.hybridize()
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3)).astype("float32")
    want = _mx_nested(net(mx.nd.array(x)))
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    assert _shape_of_type(mod["main"].checked_type.ret_type) == ("T", ("T", ("T", "T")))
    _assert_same(_run(mod, params, [x], kind), want)


def test_nested_multi_output_leaf_is_a_tuple():
    """An unindexed split (a symbol of two outputs) inside the nesting is a tuple of its outputs,
    as MXNet returns a list of arrays for it."""
    class Split(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return [F.split(x, num_outputs=2, axis=1), (x + 1,)]

    x = np.arange(8, dtype="float32").reshape(2, 4)
    want = _mx_nested(Split()(mx.nd.array(x)))
    mod, params = relay.frontend.from_mxnet(Split(), shape={"data": x.shape})
    assert _shape_of_type(mod["main"].checked_type.ret_type) == (("T", "T"), ("T",))
    _assert_same(_run(mod, params, [x], "vm"), want)


def test_flat_tuple_output_is_unchanged():
    class Flat(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x + 1, x * 2

    mod, _ = relay.frontend.from_mxnet(Flat(), shape={"data": (2, 3)})
    assert _shape_of_type(mod["main"].checked_type.ret_type) == ("T", "T")


@pytest.mark.parametrize("ret, where, what", [("(x, [x, 3])", r"output\[1\]\[1\]", "int"),
                                              ("(x, None)", r"output\[1\]", "NoneType")])
def test_nested_output_that_is_not_a_symbol_is_named(ret, where, what):
    class Bad(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return eval(ret)  # noqa: S307 - the return value under test

    with pytest.raises(ConversionError, match=rf"{where} of the block's forward is a {what}"):
        relay.frontend.from_mxnet(Bad(), shape={"data": (2, 3)})


def test_empty_output_is_refused():
    class Empty(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return ()

    with pytest.raises(ConversionError, match=r"HybridBlock Empty\): its forward returned \(\), "
                                              r"no outputs"):
        relay.frontend.from_mxnet(Empty(), shape={"data": (2, 3)})


# ---- NumPy-mode blocks ----


def _np_block(deferred=False):
    class NpBlock(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.dense = mx.gluon.nn.Dense(4) if deferred else mx.gluon.nn.Dense(4, in_units=3)

        def hybrid_forward(self, F, x):
            y = F.np.tanh(self.dense(x)) * 2 + x.sum()
            return y, (F.npx.relu(y), F.np.mean(x, axis=1))

    return NpBlock()


@pytest.mark.parametrize("hybridize", [False, True])
def test_numpy_mode_block_with_set_np(hybridize):
    """A NumPy-mode block under npx.set_np(): tracing with legacy symbols failed ("a numpy
    operator which can only accept MXNet numpy ndarrays"); now traced with mx.np symbols, and
    NumPy mode stays on afterwards."""
    mx.npx.set_np()
    try:
        net = _np_block()
        net.initialize()
        if hybridize:
            net.hybridize()
        x = np.random.default_rng(1).uniform(-1, 1, (2, 3)).astype("float32")
        want = _mx_nested(net(mx.np.array(x)))
        mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
        assert mx.util.is_np_array() and mx.util.is_np_shape()
    finally:
        mx.npx.reset_np()
    _assert_same(_run(mod, params, [x], "vm"), want)


def test_numpy_mode_block_converted_after_reset_np():
    """A block made (and initialized) under npx.set_np() holds mx.np parameters; converted with
    NumPy mode off it is traced under NumPy semantics all the same, which are off again after."""
    mx.npx.set_np()
    try:
        net = _np_block()
        net.initialize()
        x = np.random.default_rng(2).uniform(-1, 1, (2, 3)).astype("float32")
        want = _mx_nested(net(mx.np.array(x)))
    finally:
        mx.npx.reset_np()
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    assert not mx.util.is_np_array() and not mx.util.is_np_shape()
    _assert_same(_run(mod, params, [x], "debug"), want)


def test_numpy_mode_block_with_deferred_init_needs_set_np():
    """Deferred initialization and NumPy mode off: nothing tells the block is a NumPy-mode one
    (MXNet cannot run it either); the error says to call npx.set_np(), and that works."""
    mx.npx.set_np()
    try:
        net = _np_block(deferred=True)
        net.initialize()
    finally:
        mx.npx.reset_np()
    with pytest.raises(ConversionError, match=r"tracing it with the inputs \['data'\] failed: "
                                              r"TypeError: .*\n  hint: it looks like a NumPy-mode "
                                              r"block .* call mx\.npx\.set_np\(\) before"):
        relay.frontend.from_mxnet(net, shape={"data": (2, 3)})
    mx.npx.set_np()
    try:
        x = np.random.default_rng(3).uniform(-1, 1, (2, 3)).astype("float32")
        mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
        want = _mx_nested(net(mx.np.array(x)))
    finally:
        mx.npx.reset_np()
    _assert_same(_run(mod, params, [x], "debug"), want)


def test_legacy_block_under_set_np_is_explained():
    """A legacy block (F.relu, F.FullyConnected) converted while npx.set_np() is active: MXNet's
    raw TypeError came with a hint to export; the hint now says what is mixed and to call
    npx.reset_np()."""
    class Legacy(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.relu(x)

    mx.npx.set_np()
    try:
        with pytest.raises(ConversionError, match=r"HybridBlock Legacy\): .*legacy operator.*\n"
                                                  r"  hint: it was traced under MXNet's NumPy "
                                                  r"semantics .* call mx\.npx\.reset_np\(\)"):
            relay.frontend.from_mxnet(Legacy(), shape={"data": (2, 3)})
    finally:
        mx.npx.reset_np()
    mod, _ = relay.frontend.from_mxnet(Legacy(), shape={"data": (2, 3)})
    x = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    np.testing.assert_array_equal(_run(mod, {}, [x], "debug"), np.maximum(x, 0))


def test_deferred_init_failure_keeps_mxnets_reason():
    """New-user trial: converting a freshly initialized (deferred) Dense with dtype float16
    said only "failed: Traceback (most recent call last):"; the reason MXNet gives is kept."""
    net = mx.gluon.nn.Dense(3)
    net.initialize()
    with pytest.raises(ConversionError, match=r"to initialize them failed: MXNetError: Check "
                                              r"failed: .*expected float16, got float32.*\n.*"
                                              r"block.cast\(dtype\)"):
        relay.frontend.from_mxnet(net, shape={"data": (2, 5)}, dtype="float16")

"""MXNet's fused ``RNN`` operator and Gluon's ``rnn.LSTM/GRU/RNN`` layers, unrolled into
dataflow: values equal MXNet 1.9.1's within 1e-5 (relative to the output's magnitude) on the
reference interpreter, the graph executor and the VM.

CI runs a covering subset of the grid (every mode, 1 and 2 layers, uni- and bidirectional, with
and without begin states and state outputs each appear); ``-m sweep`` runs the full grid of
4 modes x 2 layer counts x 2 directions x begin states x state outputs.
"""

import itertools

import numpy as np
import pytest
from mx_helpers import MXNetOneDNN, assert_close, randomize_block, run_mod

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")
import relay_tvm as relay  # noqa: E402
from relay_tvm.errors import ConversionError  # noqa: E402

pytestmark = pytest.mark.mxnet
S = mx.sym
RTOL = 1e-5
GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}
_MX = []


@pytest.fixture(scope="module", autouse=True)
def _mx_worker():
    _MX.append(MXNetOneDNN())
    yield
    _MX.pop().close()


def _mx_forward(sym, feed):
    """MXNet's outputs, computed with oneDNN on (see ``MXNetOneDNN``)."""
    return _MX[0].forward(sym, feed)


def _n_params(mode, layers, dirs, feat, hidden, proj=None):
    g, out = GATES[mode], proj or hidden
    n = 0
    for layer in range(layers):
        inp = feat if layer == 0 else dirs * out
        n += dirs * (g * hidden * (inp + out) + (proj * hidden if proj else 0) + 2 * g * hidden)
    return n


def _rnn_case(mode, layers, bi, begin, state_outputs, proj=None, steps=4, batch=2, feat=3,
              hidden=5, seed=0):
    """An ``RNN`` symbol and its inputs; without begin states it gets Gluon's batch-0 zeros."""
    rng = np.random.default_rng(seed)
    dirs = 2 if bi else 1
    out = proj or hidden
    n = _n_params(mode, layers, dirs, feat, hidden, proj)
    feed = {"data": rng.standard_normal((steps, batch, feat)).astype("float32"),
            "params": (rng.standard_normal(n) * 0.5).astype("float32")}
    args = [S.var("data"), S.var("params")]
    shapes = [(layers * dirs, batch, out)] + ([(layers * dirs, batch, hidden)]
                                              if mode == "lstm" else [])
    for name, shape in zip(("h0", "c0"), shapes):
        if begin:
            args.append(S.var(name))
            feed[name] = rng.standard_normal(shape).astype("float32")
        else:
            args.append(S.zeros((shape[0], 0, shape[2])))
    kw = {"projection_size": proj} if proj else {}
    sym = S.RNN(*args, state_size=hidden, num_layers=layers, bidirectional=bi, mode=mode,
                state_outputs=state_outputs, **kw)
    arg_shapes = sym.infer_shape(data=(steps, batch, feat))[0]
    assert arg_shapes[1] == (n,)  # the parameter layout the converter assumes is MXNet's
    return sym, feed


def _check_rnn(sym, feed, kinds, params_as_input=True):
    ref = _mx_forward(sym, feed)
    if params_as_input:
        mod, params = relay.frontend.from_mxnet(sym, shape={k: v.shape for k, v in feed.items()})
        inputs = feed
    else:  # the flat vector as a bound parameter, as from a .params file
        shape = {k: v.shape for k, v in feed.items() if k != "params"}
        mod, params = relay.frontend.from_mxnet(sym, shape=shape,
                                                arg_params={"params": feed["params"]})
        inputs = {k: v for k, v in feed.items() if k != "params"}
    for kind in kinds:
        got = run_mod(mod, params, inputs, kind=kind)
        assert len(got) == len(ref), kind
        for g, r in zip(got, ref):
            assert g.shape == r.shape, kind
            assert_close(g, r, rtol=RTOL)


GRID = list(itertools.product(GATES, (1, 2), (False, True), (False, True), (False, True)))
# every factor's values appear; each mode once with 2 layers and once bidirectional
CI_GRID = [("lstm", 2, True, True, True), ("gru", 1, False, False, True),
           ("rnn_relu", 2, False, True, False), ("rnn_tanh", 1, True, False, False),
           ("gru", 2, True, True, True), ("lstm", 1, False, False, False)]


@pytest.mark.parametrize("mode, layers, bi, begin, state_outputs", CI_GRID)
def test_rnn_op_interpreter(mode, layers, bi, begin, state_outputs):
    sym, feed = _rnn_case(mode, layers, bi, begin, state_outputs)
    _check_rnn(sym, feed, ("debug",))


@pytest.mark.parametrize("mode, layers, bi, begin, state_outputs", [("lstm", 1, True, True, True)])
def test_rnn_op_graph_executor_and_vm(mode, layers, bi, begin, state_outputs):
    sym, feed = _rnn_case(mode, layers, bi, begin, state_outputs)
    _check_rnn(sym, feed, ("graph", "vm"), params_as_input=False)


@pytest.mark.sweep
@pytest.mark.parametrize("mode, layers, bi, begin, state_outputs", GRID)
def test_rnn_op_grid(mode, layers, bi, begin, state_outputs):
    sym, feed = _rnn_case(mode, layers, bi, begin, state_outputs)
    _check_rnn(sym, feed, ("debug", "graph", "vm"), params_as_input=False)


@pytest.mark.parametrize("layers, bi", [(1, False), (2, True)])
def test_lstm_projection(layers, bi):
    sym, feed = _rnn_case("lstm", layers, bi, True, True, proj=3)
    _check_rnn(sym, feed, ("debug",))


def _np_lstm_clipped(x, flat, h, c, lo, hi):
    """One-layer LSTM in NumPy, the cell state clipped to [lo, hi] after each update (cuDNN's
    cudnnRNNSetClip, which MXNet's lstm_state_clip_min/max set; its CPU kernels ignore it)."""
    hidden, feat = h.shape[-1], x.shape[-1]
    sizes = [4 * hidden * feat, 4 * hidden * hidden, 4 * hidden, 4 * hidden]
    wx, wh, bx, bh = np.split(flat, np.cumsum(sizes)[:-1])
    wx, wh = wx.reshape(4 * hidden, feat), wh.reshape(4 * hidden, hidden)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h, c, outs = h[0], c[0], []
    for xt in x:
        i, f, g, o = np.split(xt @ wx.T + bx + h @ wh.T + bh, 4, axis=1)
        c = np.clip(sig(f) * c + sig(i) * np.tanh(g), lo, hi)
        h = sig(o) * np.tanh(c)
        outs.append(h)
    return [np.stack(outs), h[None], c[None]]


def test_lstm_state_clip():
    _, feed = _rnn_case("lstm", 1, False, True, True)
    feed["data"] = feed["data"] * 4.0  # saturate the cell so the clip acts
    args = [S.var(k) for k in ("data", "params", "h0", "c0")]
    kw = dict(state_size=5, num_layers=1, mode="lstm", state_outputs=True)
    ref = _np_lstm_clipped(feed["data"].astype("float64"), feed["params"].astype("float64"),
                           feed["h0"], feed["c0"], -0.3, 0.4)
    assert ref[2].max() == pytest.approx(0.4) and ref[2].min() == pytest.approx(-0.3)
    # without the clip, the NumPy LSTM is MXNet's
    ref_mx = _mx_forward(S.RNN(*args, **kw), feed)
    for r, m in zip(_np_lstm_clipped(feed["data"], feed["params"], feed["h0"], feed["c0"],
                                     -np.inf, np.inf), ref_mx):
        assert_close(r, m, rtol=RTOL)
    sym = S.RNN(*args, lstm_state_clip_min=-0.3, lstm_state_clip_max=0.4, **kw)
    mod, params = relay.frontend.from_mxnet(sym, shape={k: v.shape for k, v in feed.items()})
    for g, r in zip(run_mod(mod, params, feed), ref):
        assert_close(g, r, rtol=RTOL)


def test_rnn_errors_name_the_problem():
    sym, feed = _rnn_case("gru", 1, False, True, False)
    shape = {k: v.shape for k, v in feed.items()}
    with pytest.raises(ConversionError, match=r"parameter vector has shape \(7,\), expected"):
        relay.frontend.from_mxnet(sym, shape=dict(shape, params=(7,)))
    with pytest.raises(ConversionError, match=r"state has shape \(1, 3, 5\), expected \(1, 2, 5\)"):
        relay.frontend.from_mxnet(sym, shape=dict(shape, h0=(1, 3, 5)))
    seq = S.RNN(S.var("data"), S.var("params"), S.var("h0"), sequence_length=S.var("len"),
                state_size=5, num_layers=1, mode="gru", use_sequence_length=True)
    with pytest.raises(ConversionError, match="use_sequence_length"):
        relay.frontend.from_mxnet(seq, shape=dict(shape, len=(2,)))


class WithStates(mx.gluon.HybridBlock):
    """A Gluon recurrent layer called with explicit begin states (so it returns its states)."""

    def __init__(self, layer, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.layer = layer

    def hybrid_forward(self, F, x, *states):
        out, new = self.layer(x, list(states))
        return [out] + list(new)


def _gluon(layer, x, states, kinds, tmp_path=None):
    """A Gluon layer (its input_size given, so no deferred initialization) with random
    weights, hybridized, imported from the block or its exported files, against MXNet."""
    net = WithStates(layer) if states else layer
    net.initialize()
    randomize_block(net, seed=1)
    net.hybridize()
    names = ["data"] + [f"s{k}" for k in range(len(states))]
    feed = dict(zip(names, [x] + list(states)))
    out = net(*[S.var(n) for n in names])
    sym = S.Group(list(out)) if isinstance(out, (list, tuple)) else out
    weights = {p.name: p.data().asnumpy() for p in net.collect_params().values()}
    ref = _mx_forward(sym, {**feed, **weights})
    shape = {k: v.shape for k, v in feed.items()}
    if tmp_path is None:
        mod, params = relay.frontend.from_mxnet(net, shape=shape)
    else:  # the files HybridBlock.export writes (its own export needs an in-process forward,
        # which MXNet 1.9.1 without oneDNN cannot run for an LSTM)
        sym.save(str(tmp_path / "rnn-symbol.json"))
        mx.nd.save(str(tmp_path / "rnn-0000.params"),
                   {f"arg:{k}": mx.nd.array(v) for k, v in weights.items()})
        mod, params = relay.frontend.from_mxnet(str(tmp_path / "rnn-symbol.json"), shape=shape,
                                                arg_params=str(tmp_path / "rnn-0000.params"))
    for kind in kinds:
        got = run_mod(mod, params, feed, kind=kind)
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            assert_close(g, r, rtol=RTOL)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_gluon_lstm_bidirectional_two_layers_exported(tmp_path):
    layer = mx.gluon.rnn.LSTM(6, num_layers=2, bidirectional=True, input_size=4)
    _gluon(layer, _x(5, 2, 4), [], ("debug", "graph"), tmp_path=tmp_path)


def test_gluon_gru_ntc_with_states():
    layer = mx.gluon.rnn.GRU(5, num_layers=1, layout="NTC", input_size=3)
    _gluon(layer, _x(2, 6, 3), [_x(1, 2, 5, seed=1)], ("debug",))


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_gluon_rnn(activation):
    layer = mx.gluon.rnn.RNN(4, num_layers=2, activation=activation, input_size=3)
    _gluon(layer, _x(3, 2, 3), [_x(2, 2, 4, seed=1)], ("debug",))


@pytest.mark.sweep
@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
@pytest.mark.parametrize("layers, bi", [(1, False), (2, True)])
def test_gluon_layers_sweep(cls, layers, bi, tmp_path):
    layer = getattr(mx.gluon.rnn, cls)(5, num_layers=layers, bidirectional=bi, input_size=3)
    d = (2 if bi else 1) * layers
    states = [_x(d, 2, 5, seed=k + 1) for k in range(2 if cls == "LSTM" else 1)]
    _gluon(layer, _x(4, 2, 3), states, ("debug", "graph", "vm"))


@pytest.mark.parametrize("cell_cls", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cell_unroll_without_begin_state(cell_cls):
    """A Gluon cell unrolled without ``begin_state`` starts from ``F.zeros(shape=(0, hidden))``,
    MXNet's "batch inferred from the graph"; it was read as a size-0 batch and the conversion
    failed ("shapes (2, 80) and (0, 80) do not broadcast", fresh-user trial). MXNet's values."""
    cell = getattr(mx.gluon.rnn, cell_cls)(20, input_size=3)
    cell.initialize(mx.init.Uniform(0.3))

    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.cell = cell

        def hybrid_forward(self, F, x):
            return self.cell.unroll(5, x, layout="NTC", merge_outputs=True)[0]

    net = Net()
    x = np.random.default_rng(0).uniform(-1, 1, (2, 5, 3)).astype("float32")
    mod, params = relay.frontend.from_mxnet(net, shape={"data": x.shape})
    out = relay.create_executor("graph", mod=mod).evaluate()(x, **params).numpy()
    np.testing.assert_allclose(out, net(mx.nd.array(x)).asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls,layout", [("LSTM", "NTC"), ("GRU", "TNC")])
def test_gluon_layer_with_any_batch_on_the_vm(cls, layout):
    """A Gluon layer without begin states imported with an ``Any`` batch: its zero states
    take the batch from the data at run time (it failed: "zeros: attribute shape: expected an
    int, got ?", fresh-user trial). One VM executable runs batches 2 and 3; MXNet's values."""
    layer = getattr(mx.gluon.rnn, cls)(5, num_layers=2, layout=layout, input_size=3)
    layer.initialize()
    randomize_block(layer, seed=1)
    layer.hybridize()
    sym = layer(S.var("data"))
    weights = {p.name: p.data().asnumpy() for p in layer.collect_params().values()}
    any_shape = (relay.Any(), 4, 3) if layout == "NTC" else (4, relay.Any(), 3)
    mod, params = relay.frontend.from_mxnet(layer, shape={"data": any_shape})
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    for batch in (2, 3):
        x = _x(*((batch, 4, 3) if layout == "NTC" else (4, batch, 3)), seed=batch)
        ref = _mx_forward(sym, {"data": x, **weights})[0]
        assert_close(run(x, **params).numpy(), ref, rtol=RTOL)

"""MXNet control flow (``_cond``, ``_foreach``, ``_while_loop``) converted to Relay ``If`` and
recursive local functions: values equal MXNet 1.9.1's on the reference interpreter and the VM.

MXNet's ``while_loop`` stacks its per-step outputs into ``max_iterations`` rows and leaves the
rows after the last step uninitialized; the converted program fills them with zeros, so only the
rows of the steps taken are compared with MXNet (the step count comes from MXNet's own loop
counter) and the rest must be zero.
"""

import json

import numpy as np
import pytest
from mx_helpers import assert_close, randomize_block, run_mod, runner

mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the importer tests")
import relay_tvm as relay  # noqa: E402
from relay_tvm.errors import ConversionError, UnsupportedOperatorError  # noqa: E402

pytestmark = pytest.mark.mxnet
S = mx.sym
RTOL = 1e-5


def _mx_run(sym, inputs):
    ex = sym.bind(mx.cpu(), {k: mx.nd.array(v, dtype=v.dtype) for k, v in inputs.items()})
    return [o.asnumpy() for o in ex.forward()]


def _convert(sym, inputs):
    return relay.frontend.from_mxnet(sym, shape={k: v.shape for k, v in inputs.items()},
                                     dtype={k: str(v.dtype) for k, v in inputs.items()})


def _check(sym, inputs, kinds=("debug", "vm"), mod=None, compare=None):
    """Convert once, run every input set on each executor, compare with MXNet."""
    mod, params = mod or _convert(sym, inputs[0])
    refs = [_mx_run(sym, feed) for feed in inputs]
    for kind in kinds:
        run = runner(mod, params, kind)
        for feed, ref in zip(inputs, refs):
            got = run(feed)
            assert len(got) == len(ref)
            if compare is not None:
                compare(got, ref, kind)
                continue
            for k, (g, r) in enumerate(zip(got, ref)):
                assert g.shape == r.shape and g.dtype == r.dtype, (kind, k)
                assert_close(g, r, rtol=RTOL)


def _rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype("float32")


def test_cond_takes_the_branch_the_data_selects():
    x, y, w = S.var("x"), S.var("y"), S.var("w")
    out = S.contrib.cond(S.sum(x) > 0, lambda: [x * w + y, S.relu(y)],
                         lambda: [x - y, y * 2.0])
    sym = S.Group(out)
    feeds = [{"x": np.abs(_rand(2, 3)), "y": _rand(2, 3, seed=1), "w": _rand(2, 3, seed=2)},
             {"x": -np.abs(_rand(2, 3)), "y": _rand(2, 3, seed=1), "w": _rand(2, 3, seed=2)}]
    mod, _ = _convert(sym, feeds[0])
    assert "if (" in mod.astext()
    _check(sym, feeds, mod=(mod, {}))


def test_foreach_two_sequences_two_states_and_a_free_variable():
    a, b, h0, acc0, w = S.var("a"), S.var("b"), S.var("h0"), S.var("acc0"), S.var("w")

    def step(data, states):
        xa, xb = data
        h, acc = states
        h2 = S.tanh(xa * w + h)
        return [h2, h2 * xb], [h2, acc + S.sum(xb)]

    outs, states = S.contrib.foreach(step, [a, b], [h0, acc0])
    sym = S.Group(outs + states)
    feed = {"a": _rand(5, 3), "b": _rand(5, 3, seed=1), "h0": _rand(3, seed=2),
            "acc0": _rand(1, seed=3), "w": _rand(3, seed=4)}
    _check(sym, [feed])


def _counting_loop(max_iterations):
    """Data-dependent trip count: grow ``s`` until its sum passes ``limit``."""
    i, s, w, limit = S.var("i"), S.var("s"), S.var("w"), S.var("limit")
    outs, final = S.contrib.while_loop(
        lambda i, s: S.sum(s) < S.sum(limit),
        lambda i, s: ([s * w, i], [i + 1, s * 1.5 + w]),
        [i, s], max_iterations=max_iterations)
    return S.Group(outs + final)


def _compare_padded(n_out):
    """Outputs [stacked..., final loop vars...], loop var 0 counts the steps taken."""
    def compare(got, ref, kind):
        steps = int(ref[n_out][0])
        for k in range(n_out):
            assert got[k].shape == ref[k].shape, (kind, k)
            assert_close(got[k][:steps], ref[k][:steps], rtol=RTOL)
            assert not got[k][steps:].any(), f"{kind}: padding rows of output {k} are not zero"
        for g, r in zip(got[n_out:], ref[n_out:]):
            assert_close(g, r, rtol=RTOL)
    return compare


def test_while_loop_data_dependent_trip_count_and_padding():
    sym = _counting_loop(max_iterations=9)
    base = {"i": np.zeros(1, "float32"), "s": np.abs(_rand(4)) + 0.1,
            "w": np.abs(_rand(4, seed=1)) * 0.1}
    feeds = [dict(base, limit=np.array([v], "float32")) for v in (0.0, 6.0, 20.0, 1e6)]
    # MXNet's symbol cannot run a loop of no step (its outputs get no shape): feed 0 is checked
    # against the definition (nothing runs, outputs are padding), the others against MXNet
    trips = [0] + [int(_mx_run(sym, f)[2][0]) for f in feeds[1:]]
    assert 0 < trips[1] < trips[2] < 9 and trips[3] == 9, trips
    mod, params = _convert(sym, feeds[0])
    for kind in ("debug", "vm"):
        run = runner(mod, params, kind)
        for feed, steps in zip(feeds, trips):
            got = run(feed)
            if steps == 0:
                assert got[0].shape == (9, 4) and got[1].shape == (9, 1)
                assert not got[0].any() and not got[1].any()
                np.testing.assert_array_equal(got[3], feed["s"])
                assert got[2][0] == 0
                continue
            _compare_padded(2)(got, _mx_run(sym, feed), kind)


def test_nested_foreach_inside_cond():
    # (MXNet cannot infer the shapes of a cond inside a foreach body, so nest the other way)
    x, h0 = S.var("x"), S.var("h0")

    def scan():
        o, s = S.contrib.foreach(lambda xt, st: (S.tanh(xt + st[0]), [xt * st[0]]), x, [h0])
        return [o, s[0]]

    sym = S.Group(S.contrib.cond(S.sum(h0) > 0, scan,
                                 lambda: [S.broadcast_mul(x, S.expand_dims(h0, 0)), h0 * 2.0]))
    h = np.abs(_rand(2, seed=1))
    _check(sym, [{"x": _rand(6, 2), "h0": h}, {"x": _rand(6, 2), "h0": -h}])


def _foreach_json(op_inside="_mul_scalar"):
    data, s0 = S.var("data"), S.var("s0")
    outs, st = S.contrib.foreach(lambda x, s: ((x + s[0]) * 2.0, [x + s[0]]), data, [s0])
    g = json.loads(S.Group([outs] + st).tojson())
    for n in g["nodes"][2]["subgraphs"][0]["nodes"]:
        if n["op"] == "_mul_scalar":
            n["op"] = op_inside
    return g


def test_foreach_from_json_and_unsupported_operator_inside_a_body():
    g = _foreach_json()
    mod, _ = relay.frontend.from_mxnet(json.dumps(g), shape={"data": (3, 2), "s0": (2,)})
    x, s = _rand(3, 2), _rand(2, seed=1)
    ref = _mx_run(S.load_json(json.dumps(g)), {"data": x, "s0": s})
    got = run_mod(mod, {}, {"data": x, "s0": s})
    for g_, r in zip(got, ref):
        assert_close(g_, r, rtol=RTOL)
    with pytest.raises(UnsupportedOperatorError, match=r"_foo_op \(1: node '[^']+'\)"):
        relay.frontend.from_mxnet(_foreach_json("_foo_op"), shape={"data": (3, 2), "s0": (2,)})


def test_loop_state_that_changes_shape_is_named():
    g = _foreach_json()
    sub = g["nodes"][2]["subgraphs"][0]
    sub["nodes"].append({"op": "sum", "name": "shrink", "inputs": [[2, 0, 0]], "attrs": {}})
    sub["heads"][1] = [len(sub["nodes"]) - 1, 0, 0]
    with pytest.raises(ConversionError,
                       match=r"_foreach\d+.*loop state 0 changes from \(2,\) float32 to \(1,\)"):
        relay.frontend.from_mxnet(g, shape={"data": (3, 2), "s0": (2,)})


class ForeachLSTM(mx.gluon.HybridBlock):
    """A hand-written recurrent loop: an LSTM cell stepped by ``F.contrib.foreach``."""

    def __init__(self, hidden, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.cell = mx.gluon.rnn.LSTMCell(hidden)
            self.proj = mx.gluon.nn.Dense(3, flatten=False)

    def hybrid_forward(self, F, x, h, c):
        def step(xt, states):
            out, new = self.cell(xt, states)
            return self.proj(out), new

        outs, states = F.contrib.foreach(step, x, [h, c])
        return outs, states[0], states[1]


def test_gluon_block_with_foreach():
    net = ForeachLSTM(6)
    net.initialize()
    x, h, c = _rand(5, 2, 4), _rand(2, 6, seed=1), _rand(2, 6, seed=2)
    net(mx.nd.array(x), mx.nd.array(h), mx.nd.array(c))
    randomize_block(net, seed=3)
    net.hybridize()
    ref = [o.asnumpy() for o in net(mx.nd.array(x), mx.nd.array(h), mx.nd.array(c))]
    mod, params = relay.frontend.from_mxnet(net, shape={"x": x.shape, "h": h.shape,
                                                        "c": c.shape})
    for kind in ("debug", "vm"):
        got = run_mod(mod, params, {"x": x, "h": h, "c": c}, kind=kind)
        for g, r in zip(got, ref):
            assert_close(g, r, rtol=RTOL)
    # the static-length scan unrolled into dataflow runs on the graph executor too
    mod, params = relay.frontend.from_mxnet(net, shape={"x": x.shape, "h": h.shape,
                                                        "c": c.shape}, unroll_foreach=True)
    assert "if (" not in mod.astext()
    for kind in ("debug", "graph"):
        got = run_mod(mod, params, {"x": x, "h": h, "c": c}, kind=kind)
        for g, r in zip(got, ref):
            assert_close(g, r, rtol=RTOL)


def _char_rnn(vocab, embed, hidden, eos, max_iterations):
    """Greedy decoding with an LSTM cell: feed back the arg-max token until ``eos`` comes out,
    at most ``max_iterations`` steps. Loop variables: step counter, token, h, c."""
    i, tok, h, c = S.var("i"), S.var("tok"), S.var("h"), S.var("c")
    emb, wx, wh, b, wo, bo = (S.var(n) for n in ("emb", "wx", "wh", "b", "wo", "bo"))

    def step(i, tok, h, c):
        e = S.Embedding(tok, emb, input_dim=vocab, output_dim=embed)
        g = (S.FullyConnected(e, wx, b, num_hidden=4 * hidden)
             + S.FullyConnected(h, wh, no_bias=True, num_hidden=4 * hidden))
        gi, gf, gg, go = S.split(g, num_outputs=4, axis=1)
        c2 = S.sigmoid(gf) * c + S.sigmoid(gi) * S.tanh(gg)
        h2 = S.sigmoid(go) * S.tanh(c2)
        logits = S.FullyConnected(h2, wo, bo, num_hidden=vocab)
        nxt = S.argmax(logits, axis=1)
        return [nxt, logits], [i + 1, nxt, h2, c2]

    outs, final = S.contrib.while_loop(lambda i, tok, h, c: tok != eos, step, [i, tok, h, c],
                                       max_iterations=max_iterations)
    return S.Group(outs + final)


def test_char_rnn_greedy_decoding_of_data_dependent_length():
    vocab, embed, hidden, max_it = 7, 4, 8, 12
    sym = _char_rnn(vocab, embed, hidden, eos=0, max_iterations=max_it)
    rng = np.random.default_rng(0)
    w = {"emb": rng.standard_normal((vocab, embed)),
         "wx": rng.standard_normal((4 * hidden, embed)) * 0.5,
         "wh": rng.standard_normal((4 * hidden, hidden)) * 0.5,
         "b": rng.standard_normal(4 * hidden) * 0.1, "wo": rng.standard_normal((vocab, hidden)),
         "bo": rng.standard_normal(vocab) * 0.5}
    feeds = []
    for start in (2, 3, 1):
        h = np.random.default_rng(start).standard_normal((1, hidden))
        feed = dict(w, i=np.zeros(1), tok=np.array([start]), h=h, c=np.zeros((1, hidden)))
        feeds.append({k: v.astype("float32") for k, v in feed.items()})
    trips = [int(_mx_run(sym, f)[2][0]) for f in feeds]
    assert 0 < trips[0] < trips[1] < trips[2] == max_it, trips  # stops at EOS, or at the cap
    _check(sym, feeds, compare=_compare_padded(2))

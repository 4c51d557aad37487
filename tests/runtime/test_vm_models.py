"""Models with data-dependent control flow on the VM: a child-sum TreeLSTM over a random tree
(ADT recursion, closures over the weights) and a char-RNN-style loop whose trip count depends
on the data; against the interpreter and a NumPy implementation."""

import numpy as np

import relay_tvm as relay
from relay_tvm.prelude import Prelude
from relay_tvm.runtime.interpreter import ConstructorValue
from relay_tvm.text import parse

X, H = "Tensor[(1, 4), float32]", "Tensor[(1, 6), float32]"
W = "(Tensor[(18, 4), float32], Tensor[(18, 6), float32], Tensor[(6, 4), float32], " \
    "Tensor[(6, 6), float32])"
HC = f"({H}, {H})"

# Child-sum TreeLSTM (Tai, Socher, Manning 2015, section 3.1): i, o, u gates from the input and
# the sum of the children's h; one forget gate per child.
TREE_LSTM = f"""#[version = "0.0.5"]
def @tlstm(%t: Tree[{X}], %w: {W}) -> {HC} {{
  match (%t) {{
    Rose(%x, %kids) => {{
      let %hcs = @map(fn (%k: Tree[{X}]) -> {HC} {{ @tlstm(%k, %w) }}, %kids);
      let %hsum = @foldl(fn (%a: {H}, %hc: {HC}) -> {H} {{ add(%a, %hc.0) }},
                         zeros(shape=[1, 6], dtype="float32"), %hcs);
      let %iou = add(nn.dense(%x, %w.0), nn.dense(%hsum, %w.1));
      let %s = split(%iou, indices_or_sections=3, axis=1);
      let %wfx = nn.dense(%x, %w.2);
      let %fc = @foldl(fn (%a2: {H}, %hc2: {HC}) -> {H} {{
          add(%a2, multiply(sigmoid(add(%wfx, nn.dense(%hc2.0, %w.3))), %hc2.1))
        }}, zeros(shape=[1, 6], dtype="float32"), %hcs);
      let %c = add(multiply(sigmoid(%s.0), tanh(%s.2)), %fc);
      (multiply(sigmoid(%s.1), tanh(%c)), %c)
    }}
  }}
}}

def @main(%t: Tree[{X}], %w: {W}) -> {HC} {{
  @tlstm(%t, %w)
}}
"""


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _np_tlstm(node, w):
    x, kids = node
    hcs = [_np_tlstm(k, w) for k in kids]
    hsum = sum((h for h, _ in hcs), np.zeros((1, 6), "float32"))
    iou = x @ w[0].T + hsum @ w[1].T
    i, o, u = np.split(iou, 3, axis=1)
    fc = sum((_sig(x @ w[2].T + h @ w[3].T) * c for h, c in hcs), np.zeros((1, 6), "float32"))
    c = _sig(i) * np.tanh(u) + fc
    return _sig(o) * np.tanh(c), c


def _random_tree(rng, depth):
    n = int(rng.integers(0, 4)) if depth > 0 else 0
    return (rng.standard_normal((1, 4)).astype("float32"),
            [_random_tree(rng, depth - 1) for _ in range(n)])


def _as_value(p, node):
    x, kids = node
    lst = ConstructorValue(p.nil, [])
    for k in reversed(kids):
        lst = ConstructorValue(p.cons, [_as_value(p, k), lst])
    return ConstructorValue(p.rose, [x, lst])


def test_tree_lstm_over_a_random_tree():
    mod = relay.IRModule()
    p = Prelude(mod)
    mod = parse(TREE_LSTM, init_module=mod)
    rng = np.random.default_rng(7)
    w = tuple((0.4 * rng.standard_normal(s)).astype("float32")
              for s in ((18, 4), (18, 6), (6, 4), (6, 6)))
    tree = _random_tree(rng, 4)
    arg = _as_value(p, tree)
    ref = relay.create_executor("debug", mod).evaluate()(arg, w)
    vm = relay.create_executor("vm", mod).evaluate()
    got = vm(arg, w)
    want = _np_tlstm(tree, w)
    for r, g, n in zip(ref, got, want):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g.numpy(), n, rtol=1e-4, atol=1e-5)
    # the same executable on another tree shape
    other = _random_tree(rng, 3)
    np.testing.assert_allclose(vm(_as_value(p, other), w)[0].numpy(), _np_tlstm(other, w)[0],
                               rtol=1e-4, atol=1e-5)


CHAR_RNN = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 5), float32], %wx: Tensor[(5, 5), float32],
          %wh: Tensor[(5, 5), float32]) {
  // h <- tanh(x Wx' + h Wh'); x <- softmax(h) until the largest probability passes 0.4
  // or 50 steps; returns the step count, the state and the list of outputs (newest first)
  let %loop = fn (%i: int32, %xi: Tensor[(1, 5), float32], %h: Tensor[(1, 5), float32],
                  %outs: List[Tensor[(1, 5), float32]]) -> (int32, Tensor[(1, 5), float32],
                                                            List[Tensor[(1, 5), float32]]) {
    let %h2 = tanh(add(nn.dense(%xi, %wx), nn.dense(%h, %wh)));
    let %y = nn.softmax(%h2);
    if (logical_or(greater(max(%y), 0.4f), greater_equal(%i, 50))) {
      (%i, %h2, Cons(%y, %outs))
    } else {
      %loop(add(%i, 1), %y, %h2, Cons(%y, %outs))
    }
  };
  %loop(1, %x, zeros(shape=[1, 5], dtype="float32"), Nil)
}
"""


def _np_char_rnn(x, wx, wh):
    h = np.zeros((1, 5), "float32")
    outs, i = [], 1
    while True:
        h = np.tanh(x @ wx.T + h @ wh.T)
        e = np.exp(h - h.max())
        y = e / e.sum()
        outs.append(y)
        if y.max() > 0.4 or i >= 50:
            return i, h, outs
        x, i = y, i + 1


def test_char_rnn_loop_of_data_dependent_length():
    mod = relay.IRModule()
    Prelude(mod)
    mod = parse(CHAR_RNN, init_module=mod)
    vm = relay.create_executor("vm", mod).evaluate()
    interp = relay.create_executor("debug", mod).evaluate()
    counts = set()
    for seed in range(4):
        rng = np.random.default_rng(seed)
        args = [rng.standard_normal((1, 5)).astype("float32"),
                (rng.standard_normal((5, 5)) * (0.5 + seed)).astype("float32"),
                (rng.standard_normal((5, 5)) * (0.5 + seed)).astype("float32")]
        n, h, outs = _np_char_rnn(*args)
        got, ref = vm(*args), interp(*args)
        assert int(got[0].numpy()) == int(ref[0].numpy()) == n
        counts.add(n)
        np.testing.assert_allclose(got[1].numpy(), h, rtol=1e-4, atol=1e-5)
        lst, k = got[2], 0
        while lst.fields:
            np.testing.assert_allclose(lst.fields[0].numpy(), outs[-1 - k], rtol=1e-4, atol=1e-5)
            lst, k = lst.fields[1], k + 1
        assert k == n
    assert len(counts) > 1, counts  # the trip count really depends on the data

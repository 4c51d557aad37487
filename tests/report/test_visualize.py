"""relay.visualize: the DOT of a ResNet basic block (nodes, edge types, one cluster per fused
group with the operators FuseOps put there), rendering, every expression kind, deep programs."""

import re
import shutil
import subprocess
import warnings

import pytest

import relay_tvm as relay
from relay_tvm.ir.functor import post_order
from relay_tvm.report import graph as graph_mod
from relay_tvm.transform.fuse_ops import fused_function_name  # noqa: E402

HAS_DOT = shutil.which("dot") is not None


def _bn(x, name, c):
    ps = [relay.var(f"{name}_{p}", shape=(c,)) for p in ("gamma", "beta", "mean", "var")]
    return relay.nn.batch_norm(x, *ps)[0]


def basic_block(c=16, hw=8):
    """ResNet v1 basic block (Gluon's BasicBlockV1): conv-bn-relu-conv-bn, + input, relu."""
    x = relay.var("data", shape=(1, c, hw, hw))
    w1, w2 = relay.var("w1", shape=(c, c, 3, 3)), relay.var("w2", shape=(c, c, 3, 3))
    y = relay.nn.relu(_bn(relay.nn.conv2d(x, w1, padding=(1, 1)), "bn1", c))
    y = _bn(relay.nn.conv2d(y, w2, padding=(1, 1)), "bn2", c)
    y = relay.nn.relu(relay.add(y, x))
    return relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(y), y))


def labels(dot):
    return re.findall(r'^\s*n\d+ \[label="([^"]*)"', dot, flags=re.M)


def ops_of(dot):
    """Names of the operator nodes (the filled boxes) in ``dot``, in order."""
    return re.findall(r'\[label="([^"\\]*)[^"]*", shape="box", style="rounded,filled"', dot)


def clusters(dot):
    """Each ``subgraph cluster_N { ... }`` as (label, operator names inside)."""
    out = []
    for m in re.finditer(r"subgraph cluster_\d+ \{\n  label=\"([^\"]*)\";\n(.*?)\n  \}", dot,
                         flags=re.S):
        out.append((m.group(1), ops_of(m.group(2))))
    return out


def fused_groups(mod):
    """Operators of each primitive function FuseOps makes, found independently of visualize."""
    fused = relay.transform.FuseOps()(relay.transform.InferType()(mod))
    groups = [n for n in post_order(fused["main"])
              if isinstance(n, relay.Function) and n.is_primitive]
    return [(fused_function_name(g.body),
             [n.op.name for n in post_order(g.body)
              if isinstance(n, relay.Call) and isinstance(n.op, relay.op.Op)]) for g in groups]


@pytest.mark.parametrize("simplify", [False, True])
def test_resnet_block_clusters_are_fuseops_groups(simplify):
    mod = basic_block()
    if simplify:  # batch norm as arithmetic: fused into the convolutions, as build fuses it
        mod = relay.transform.SimplifyInference()(relay.transform.InferType()(mod))
    dot = relay.visualize(mod)
    expected = fused_groups(mod)
    got = clusters(dot)
    assert dot.count("subgraph cluster_") == len(expected) == len(got)
    assert sorted(got) == sorted((str(name), ops) for name, ops in expected)
    assert ops_of(dot).count("nn.conv2d") == 2
    if simplify:
        assert len(got) == 4  # two scale computations, two conv + bn (+ add) + relu kernels
        assert sum("nn.conv2d" in ops for _, ops in got) == 2
    else:
        assert [ops for _, ops in got].count(["add", "nn.relu"]) == 1


def test_unfused_block_nodes_and_edge_types():
    dot = relay.visualize(basic_block(), fused=False)
    assert "subgraph cluster_" not in dot
    ops = ops_of(dot)
    assert sorted(ops) == sorted(["nn.conv2d", "nn.batch_norm", "nn.relu"] * 2 + ["add"])
    assert "%data\\n1x16x8x8 float32" in labels(dot)
    # the input feeds the first convolution and the residual add, each edge typed
    data = re.search(r'(n\d+) \[label="%data', dot).group(1)
    targets = re.findall(rf"^\s*{data} -> (n\d+) \[label=\"1x16x8x8 float32\"\]", dot, re.M)
    names = {re.search(rf'{t} \[label="([^"\\]*)', dot).group(1) for t in targets}
    assert names == {"nn.conv2d", "add"}
    assert dot.count(r'label="nn.conv2d\npadding 1x1x1x1"') == 2  # defaults left out
    assert "(1x16x8x8 float32, 16 float32, 16 float32)" in dot  # batch_norm's tuple result


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed (apt-get install "
                    "graphviz); the .dot fallback is tested below")
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_renders_picture(tmp_path, fmt):
    path = tmp_path / f"block.{fmt}"
    relay.visualize(basic_block(), str(path))
    data = path.read_bytes()
    if fmt == "svg":
        text = data.decode()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert text.count(">nn.conv2d<") == 2 and text.count('class="cluster"') == 6
    else:
        assert data[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_dot_accepts_every_expression_kind():
    """A program with let, if, tuples, closures, references, ADTs and globals: every kind is a
    node, and dot parses the text (a quoting mistake would fail here)."""
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    x = relay.var("x", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    v = relay.var("v", shape=(2,))
    r = relay.var("r")
    body = relay.Let(r, relay.RefCreate(x), relay.Tuple([
        relay.RefWrite(r, relay.negative(x)), relay.RefRead(r),
        relay.If(c, relay.TupleGetItem(relay.Tuple([x, x]), 0), x),
        p.map(relay.Function([v], v * relay.const(2.0)), p.cons(x, p.nil())),
        relay.Match(p.cons(x, p.nil()), [relay.Clause(relay.PatternWildcard(), relay.const(1))])]))
    mod["main"] = relay.Function([x, c], body)
    dot = relay.visualize(mod, fused=False)
    labs = labels(dot)
    for want in ("ref", "ref :=", "!ref", "if", "tuple", ".0", "match", "Cons", "call @map",
                 "fn(%v)", "negative", "multiply"):
        assert want in [lab.split("\\n")[0] for lab in labs], want
    assert "def @map" in dot and "def @main" in dot  # every function of the module, boxed
    subprocess.run(["dot", "-Tcanon"], input=dot.encode(), check=True, capture_output=True)


def test_without_dot_writes_the_text_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_mod.shutil, "which", lambda name: None)
    with pytest.warns(RuntimeWarning, match="'dot' program is not installed"):
        dot = relay.visualize(basic_block(), str(tmp_path / "block.svg"))
    assert not (tmp_path / "block.svg").exists()
    assert (tmp_path / "block.dot").read_text() == dot


def test_dot_suffix_and_bad_input(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dot = relay.visualize(basic_block(), str(tmp_path / "g.dot"))
    assert (tmp_path / "g.dot").read_text() == dot
    with pytest.raises(relay.RelayError, match=r"ending in \.svg, \.png, \.pdf"):
        relay.visualize(basic_block(), str(tmp_path / "g.jpeg"))
    with pytest.raises(relay.RelayError, match="expected an IRModule or a Relay expression"):
        relay.visualize(42)
    x = relay.var("x", shape=(2,))
    with pytest.raises(relay.TypeInferenceError):
        relay.visualize(relay.Function([x], relay.nn.dense(x, x)))


def test_deep_chain_is_drawn_iteratively():
    x = relay.var("x", shape=(4,))
    y = x
    n = 100_000
    for _ in range(n):
        y = relay.negative(y)
    dot = relay.visualize(relay.Function([x], y), fused=False)
    assert dot.count('label="negative"') == n
    assert dot.count(" -> ") == n + 1  # x into the chain, each call into the next, the result


def test_already_fused_module_is_drawn_as_it_is():
    """relay.optimize's output (what build compiles) keeps its groups; fusing again changes
    nothing."""
    opt, _ = relay.optimize(basic_block())
    dot = relay.visualize(opt)
    assert dot == relay.visualize(opt, fused=False)
    n_groups = sum(1 for n in post_order(opt["main"])
                   if isinstance(n, relay.Function) and n.is_primitive)
    assert len(clusters(dot)) == n_groups == 4

"""``relay-tvm show --stats`` and ``--graph`` on an NNVM graph written here (no MXNet needed)."""

import json
import re
import shutil

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.cli import main
from relay_tvm.report import graph as graph_mod


@pytest.fixture
def model(tmp_path):
    """conv 3x3 (3 -> 4, pad 1, bias) + relu on 1x3x8x8, flatten, dense 256 -> 10 (bias)."""
    nodes = []

    def node(op, name, inputs=(), **attrs):
        nodes.append({"op": op, "name": name, "inputs": [[i, 0, 0] for i in inputs],
                      "attrs": {k: str(v) for k, v in attrs.items()}})
        return len(nodes) - 1

    data = node("null", "data")
    conv = node("conv2d", "conv", [data, node("null", "conv_weight"), node("null", "conv_bias")],
                channels=4, kernel_size=(3, 3), padding=(1, 1))
    flat = node("flatten", "flat", [node("relu", "relu", [conv])])
    node("dense", "fc", [flat, node("null", "fc_weight"), node("null", "fc_bias")], units=10)
    graph = {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
             "node_row_ptr": list(range(len(nodes) + 1)), "heads": [[len(nodes) - 1, 0, 0]],
             "attrs": {}}
    rng = np.random.default_rng(0)
    params = {"conv_weight": rng.standard_normal((4, 3, 3, 3)), "conv_bias": rng.standard_normal(4),
              "fc_weight": rng.standard_normal((10, 256)), "fc_bias": rng.standard_normal(10)}
    (tmp_path / "net.json").write_text(json.dumps(graph))
    (tmp_path / "net.params").write_bytes(relay.save_param_dict(
        {k: v.astype("float32") for k, v in params.items()}))
    return ["show", str(tmp_path / "net.json"), "--format", "nnvm", "--params",
            str(tmp_path / "net.params"), "--shape", "data=1,3,8,8"]


def test_show_stats(model, capsys):
    assert main(model + ["--stats", "--opt-level", "2"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  nn\.conv2d +1$", out, re.M)
    assert re.search(r"^  nn\.bias_add +2$", out, re.M)
    assert "MACs                  9,472" in out  # 4*8*8 * 3*3*3 + 10*256
    assert "parameters            2,682 (10,728 bytes" in out  # 108 + 4 + 2560 + 10 floats
    # conv+bias+relu, flatten, dense+bias; two 1024-byte buffers alternate
    assert "kernels after fusion  3 calls of 3 distinct kernels" in out
    assert "planned memory        2,048 bytes" in out and "2,088 bytes" in out
    assert "def @main" not in out  # --stats replaces the text


def test_show_graph(model, tmp_path, capsys):
    out_path = tmp_path / "net.svg"
    assert main(model + ["--graph", str(out_path)]) == 0
    captured = capsys.readouterr()
    if shutil.which("dot"):
        assert captured.out.strip() == f"wrote {out_path}"
        svg = out_path.read_text()
        # fused: conv+bias+relu, flatten, dense+bias
        assert svg.count('class="cluster"') == 3 and ">nn.conv2d<" in svg
    else:
        assert captured.out.strip() == f"wrote {tmp_path / 'net.dot'}"
        assert "'dot' program is not installed" in captured.err
    dot_path = tmp_path / "unfused.dot"
    assert main(model + ["--graph", str(dot_path), "--unfused"]) == 0
    text = dot_path.read_text()
    assert "subgraph cluster_" not in text and "nn.batch_flatten" in text


def test_show_graph_without_dot(model, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(graph_mod.shutil, "which", lambda name: None)
    assert main(model + ["--graph", str(tmp_path / "g.png")]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == f"wrote {tmp_path / 'g.dot'}"
    assert "apt-get install graphviz" in captured.err
    assert (tmp_path / "g.dot").read_text().startswith("digraph relay {")


@pytest.mark.parametrize("name, match", [("g.jpeg", "must end in .svg, .png, .pdf"),
                                         ("missing/g.svg", "does not exist")])
def test_show_graph_bad_path(model, tmp_path, capsys, name, match):
    assert main(model + ["--graph", str(tmp_path / name)]) == 2
    assert match in capsys.readouterr().err

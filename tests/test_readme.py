"""The README's "Using it" example runs as written (it asserts its own results against the
interpreter) and the VM executable it exports loads back; its command-line sequence makes every
file it uses and runs (on a smaller network)."""

import os
import warnings

import numpy as np
import pytest

README = os.path.join(os.path.dirname(os.path.dirname(__file__)), "README.md")


def test_using_it_example_runs(tmp_path, monkeypatch):
    text = open(README).read()
    block = text[text.index("## Using it"):].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(block, "README.md: Using it", "exec"), scope)
    import relay_tvm as relay

    vm = relay.vm.VirtualMachine(relay.vm.load_executable(str(tmp_path / "vm.so")))
    np.testing.assert_allclose(vm.run(scope["xv"]).numpy(), scope["ref"], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(scope["twos"].numpy(), np.full((2, 2), 2, "float32"))
    assert relay.runtime.load_module(str(tmp_path / "net.so")) is not None


def _cli_commands():
    """The README's command-line sequence as argument lists (comments dropped)."""
    import shlex

    text = open(README).read()
    block = text[text.index("Command line, a sequence"):].split("```sh\n", 1)[1]
    block = block.split("```", 1)[0]
    return [argv for argv in (shlex.split(ln, comments=True) for ln in block.splitlines())
            if argv]


def _option(argv, *names):
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in names]


def test_cli_sequence_makes_every_file_it_uses():
    """From a new-user trial: the README ran `relay-tvm run r18.so --input data=x.npy` and
    `relay-tvm show model-symbol.json` without saying how to make x.npy or the model files.
    Every file a command of the sequence reads is now written by a line before it."""
    import re

    made, used = set(), []
    for argv in _cli_commands():
        if argv[0] == "python":
            code = argv[argv.index("-c") + 1]
            made.update(re.findall(r"np\.save\('([^']+)'", code))
            for prefix in re.findall(r"\.export\('([^']+)'\)", code):
                made.update({f"{prefix}-symbol.json", f"{prefix}-0000.params"})
            continue
        assert argv[0] == "relay-tvm", argv
        cmd, rest = argv[1], argv[2:]
        reads = [rest[0]] if rest and not rest[0].startswith("-") else []
        reads += [v.partition("=")[2] or v for v in _option(rest, "--input", "-i")]
        reads += _option(rest, "--tuning-db", "--params")
        for path in reads:
            assert path.rstrip("/") in {m.rstrip("/") for m in made}, (
                f"README: `{' '.join(argv)}` uses {path!r}, which no line before it makes")
        used += reads
        made.update(_option(rest, "-o", "--output", "--work-dir") if cmd != "run" else [])
    assert {"x.npy", "r18.so", "r18-vm.so", "model-symbol.json", "r18-tuning/"} <= set(used)


@pytest.mark.mxnet
def test_cli_sequence_runs(tmp_path, monkeypatch):
    """The sequence runs in an empty directory, on mobilenet0.25 at 32x32 instead of
    ResNet-18 at 224x224 (the demo and tuning lines are left out: tests/frontend/test_cli.py
    runs both). The zoo weights are seeded alike for each command, so the graph library and the
    VM executable must agree; the library compiled from the exported files must agree with
    MXNet running those files."""
    mx = pytest.importorskip("mxnet", reason="the README's sequence uses --zoo and MXNet")
    from relay_tvm.cli import main

    monkeypatch.chdir(tmp_path)
    small = {"resnet18_v1": "mobilenet0.25", "1,3,224,224": "1,3,32,32",
             "(1, 3, 224, 224)": "(1, 3, 32, 32)"}
    for argv in _cli_commands():
        line = " ".join(argv)
        if argv[:2] == ["relay-tvm", "demo"] or "r18-tuning/" in line:
            continue
        for old, new in small.items():
            argv = [a.replace(old, new) for a in argv]
        if argv[0] == "python":
            exec(compile(argv[argv.index("-c") + 1], "README.md: command line", "exec"), {})
            continue
        mx.random.seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # --graph without Graphviz writes .dot, warning
            assert main(argv[1:]) == 0, line
    x = np.load("x.npy")
    graph, vm = np.load("out/output_0.npy"), np.load("out-vm/output_0.npy")
    assert graph.shape == (1, 1000) and np.abs(graph).max() > 0
    np.testing.assert_allclose(vm, graph, rtol=1e-4, atol=1e-5)
    assert main(["run", "model.so", "--input", "data=x.npy", "--output-dir", "out-model",
                 "--repeat", "1"]) == 0
    net = mx.gluon.SymbolBlock.imports("model-symbol.json", ["data"], "model-0000.params")
    ref = net(mx.nd.array(x)).asnumpy()
    np.testing.assert_allclose(np.load("out-model/output_0.npy"), ref, rtol=1e-4,
                               atol=1e-4 * float(np.abs(ref).max()))

"""The README's "Using it" example runs as written (it asserts its own results against the
interpreter) and the VM executable it exports loads back."""

import os

import numpy as np

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
    assert relay.runtime.load_module(str(tmp_path / "net.so")) is not None

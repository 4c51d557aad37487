"""Where the VM runs a program: a program whose VM calls nest a bounded depth runs on the
caller's thread (with TVM's kernel thread pool and workspaces of that thread, as the graph
executor does); a recursive one, or one that calls closures, on a thread with a big stack
(vm_emit.call_depth, runtime.vm._call_with_big_stack)."""

import threading

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.backend.vm_emit import _CALL, _RET, call_depth
from relay_tvm.runtime import vm as rvm
from relay_tvm.runtime.vm import Executable, VirtualMachine

RECURSIVE = """#[version = "0.0.5"]
def @sum_to(%n: int32) -> int32 {
  if (less(%n, 1)) { 0 } else { add(%n, @sum_to(subtract(%n, 1))) }
}
def @main(%n: int32) { @sum_to(%n) }
"""

CHAIN = """#[version = "0.0.5"]
def @g(%x: Tensor[(4), float32]) -> Tensor[(4), float32] { multiply(%x, 2f) }
def @f(%x: Tensor[(4), float32]) -> Tensor[(4), float32] { add(@g(%x), 1f) }
def @main(%x: Tensor[(4), float32]) { @f(@g(%x)) }
"""

HIGHER_ORDER = """#[version = "0.0.5"]
def @apply(%f: fn (Tensor[(4), float32]) -> Tensor[(4), float32], %x: Tensor[(4), float32])
    -> Tensor[(4), float32] { %f(%x) }
def @main(%x: Tensor[(4), float32]) { @apply(fn (%y: Tensor[(4), float32]) { negative(%y) }, %x) }
"""


def _no_big_stack(monkeypatch):
    def fail(fn, args):
        raise AssertionError("ran on the big-stack thread")

    monkeypatch.setattr(rvm, "_call_with_big_stack", fail)


def _small_net(batch):
    """conv -> relu -> max pool -> dense, the batch dimension ``batch`` (an int or Any)."""
    rng = np.random.default_rng(1)
    x = relay.var("x", shape=(batch, 3, 8, 8))
    w = relay.const(rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    d = relay.const(rng.standard_normal((5, 4 * 4 * 4)).astype("float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.dense(relay.nn.batch_flatten(y), d)
    return relay.IRModule.from_expr(relay.Function([x], y))


def test_call_depth_of_instruction_lists():
    leaf = [(_CALL, "kernel", [("r", 0)], 1), (_RET, 1)]

    def calls(f):
        return [(_CALL, f, [("r", 0)], 1), (_RET, 1)]

    assert call_depth({"main": leaf}) == 1
    assert call_depth({"main": calls("f"), "f": calls("g"), "g": leaf}) == 3
    # a diamond counts its longest path once
    assert call_depth({"main": calls("f") + calls("g"), "f": calls("g"), "g": leaf}) == 3
    assert call_depth({"main": calls("f"), "f": calls("g"), "g": calls("f")}) is None
    assert call_depth({"main": calls("main")}) is None
    closure = [(_CALL, "vm.builtin.invoke_closure", [("state",), ("r", 0)], 1), (_RET, 1)]
    assert call_depth({"main": closure}) is None


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_dynamic_batch_net_runs_on_callers_thread(monkeypatch, batch):
    dmod = _small_net(relay.Any())
    exe = relay.vm.compile(dmod, target="llvm")
    assert exe.meta["call_depth"] == 1
    vm = VirtualMachine(exe)
    _no_big_stack(monkeypatch)
    x = np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype("float32")
    want = relay.create_executor("debug", mod=_small_net(batch)).evaluate()(x).numpy()
    for _ in range(3):  # buffers reused across runs give the same values
        np.testing.assert_allclose(vm.run(x).numpy(), want, rtol=1e-4, atol=1e-4)


def test_acyclic_global_calls_are_flat(monkeypatch):
    mod = relay.parse(CHAIN)
    exe = relay.vm.compile(mod, target="llvm")
    assert exe.meta["call_depth"] == 3  # main -> f -> g
    vm = VirtualMachine(exe)
    _no_big_stack(monkeypatch)
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(vm.run(x).numpy(), (x * 2) * 2 + 1)


def _spy_big_stack(monkeypatch):
    used = []
    real = rvm._call_with_big_stack

    def spy(fn, args):
        used.append(threading.get_ident())
        return real(fn, args)

    monkeypatch.setattr(rvm, "_call_with_big_stack", spy)
    return used


def test_closure_calls_use_the_big_stack_thread(monkeypatch):
    exe = relay.vm.compile(relay.parse(HIGHER_ORDER), target="llvm")
    assert exe.meta["call_depth"] is None
    used = _spy_big_stack(monkeypatch)
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(VirtualMachine(exe).run(x).numpy(), -x)
    assert len(used) == 1


def test_deep_recursion_runs_on_the_big_stack_thread(monkeypatch):
    exe = relay.vm.compile(relay.parse(RECURSIVE), target="llvm")
    assert exe.meta["call_depth"] is None
    vm = VirtualMachine(exe)
    used = _spy_big_stack(monkeypatch)
    n = 20000  # deeper than the main thread's 8 MiB stack allows
    for _ in range(2):
        assert int(vm.run(np.array(n, "int32")).numpy()) == n * (n + 1) // 2
    assert len(used) == 2
    with pytest.raises(ZeroDivisionError):  # errors come back to the caller's thread
        rvm._call_with_big_stack(lambda: 1 // 0, [])


def test_executable_without_call_depth_takes_the_big_stack_thread(monkeypatch):
    exe = relay.vm.compile(_small_net(relay.Any()), target="llvm")
    meta = {k: v for k, v in exe.meta.items() if k != "call_depth"}
    old = VirtualMachine(Executable(exe.lib, meta))
    used = _spy_big_stack(monkeypatch)
    x = np.ones((2, 3, 8, 8), "float32")
    want = VirtualMachine(exe).run(x).numpy()
    assert used == []
    np.testing.assert_allclose(old.run(x).numpy(), want)
    assert len(used) == 1


def test_call_depth_survives_export(tmp_path):
    from relay_tvm.runtime.vm import load_executable

    exe = relay.vm.compile(relay.parse(CHAIN), target="llvm")
    path = str(tmp_path / "chain.so")
    exe.export_library(path)
    assert load_executable(path).meta["call_depth"] == 3

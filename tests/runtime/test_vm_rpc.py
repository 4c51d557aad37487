"""A VM executable exported, uploaded over tvm.rpc and run by a remote VirtualMachine (TVM 0.19's
test_vm_rpc workflow): the remote run computes the program, and a program whose output is one of
its constants runs too (the local VM copies such outputs; a remote one hands them out, as 0.19's
did); a tuple result, which stays in the remote session, is a clear error. Regression: a VirtualMachine of a remote executable failed in its constructor
('RPCObjectRef' object is not iterable) when it read the executable's constant list."""

import numpy as np
import pytest
import tvm
from tvm import rpc

import relay_tvm as relay
from relay_tvm.errors import BuildError


@pytest.fixture(scope="module")
def remote():
    server = rpc.Server("127.0.0.1")
    try:
        yield rpc.connect(server.host, server.port, session_timeout=60)
    finally:
        server.terminate()


def _upload(remote, mod, name, tmp_path):
    path = str(tmp_path / name)
    relay.vm.compile(mod, target="llvm").mod.export_library(path)
    remote.upload(path)
    return remote.load_module(name)


def test_remote_vm_runs_the_program(remote, tmp_path):
    x = relay.var("x", shape=(10, 1))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x) * relay.const(3.0)))
    dev = remote.cpu()
    vm = relay.vm.VirtualMachine(_upload(remote, mod, "vm_add.so", tmp_path), dev)
    a = np.random.default_rng(0).uniform(size=(10, 1)).astype("float32")
    out = vm.invoke("main", tvm.runtime.tensor(a, dev))
    np.testing.assert_allclose(out.numpy(), 6 * a, rtol=1e-6)


def test_remote_vm_returns_a_constant_output(remote, tmp_path):
    c = np.arange(6, dtype="float32").reshape(2, 3)
    x = relay.var("x", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.const(c)))
    dev = remote.cpu()
    vm = relay.vm.VirtualMachine(_upload(remote, mod, "vm_const.so", tmp_path), dev)
    out = vm.invoke("main", tvm.runtime.tensor(np.ones((2, 3), "float32"), dev))
    np.testing.assert_array_equal(out.numpy(), c)


def test_remote_vm_tuple_result_is_a_clear_error(remote, tmp_path):
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple([x, x + x])))
    dev = remote.cpu()
    vm = relay.vm.VirtualMachine(_upload(remote, mod, "vm_tuple.so", tmp_path), dev)
    with pytest.raises(BuildError, match="only tensors come back"):
        vm.invoke("main", tvm.runtime.tensor(np.ones((2,), "float32"), dev))

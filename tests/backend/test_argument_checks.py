"""Graph libraries' kernels without TVM's per-argument checks; their main checks its own
arguments (relay_tvm/backend/argument_checks.py, graph_codegen.emit_vm)."""

import numpy as np
import pytest
import tvm
from tvm.runtime.vm import VirtualMachine

import relay_tvm as relay
from relay_tvm.errors import InputError
from relay_tvm.runtime import GraphModule


def _net():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    y = relay.nn.softmax(relay.nn.batch_flatten(relay.nn.max_pool2d(y, (2, 2), (2, 2))))
    rng = np.random.default_rng(0)
    return (relay.IRModule.from_expr(relay.Function([x, w], y)),
            rng.standard_normal((4, 3, 3, 3)).astype("float32"),
            rng.standard_normal((1, 3, 8, 8)).astype("float32"))


def _reference(mod, w, xv):
    return relay.create_executor("debug", mod=mod).evaluate()(xv, w).numpy()


def test_graph_kernels_have_no_argument_checks_and_vm_kernels_keep_them():
    mod, w, xv = _net()
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params={"w": w})
        exe = relay.vm.compile(mod, target="llvm", params={"w": w})
    from relay_tvm.backend.build_module import kernel_source

    # MakePackedAPI's messages name the kernel's signature ("... on argument #0 ...
    # tvmgen_default_fused_...(p0: Tensor([1, 3, 8, 8], float32), ...)"): only main's
    # layout-check kernels keep them
    graph_ll, vm_ll = lib.get_source("ll"), kernel_source(exe.module, "ll")
    signatures = [line for line in graph_ll.splitlines() if "Tensor([" in line]
    assert signatures and all("__relay_check_layout_float32_" in x for x in signatures)
    assert "tvmgen_default_fused_nn_contrib_conv2d_NCHWc" in graph_ll
    assert "tvmgen_vm_fused_nn_contrib_conv2d_NCHWc_nn_relu(p0: Tensor([" in vm_ll
    m = GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", xv)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(mod, w, xv), rtol=1e-5,
                               atol=1e-6)


def test_drop_keeps_the_kernels_own_asserts():
    """Asserts inside the compute_scope (an operator's run-time check) stay; the wrapper's go."""
    from tvm.script import tirx as T

    from relay_tvm.backend import argument_checks

    @T.prim_func
    def f(a: T.Buffer((4,), "int32"), b: T.Buffer((4,), "int32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(4):
            assert a[i] < 4, "index out of range"
            b[i] = a[i]

    mod = tvm.IRModule({"f": f})
    tgt = tvm.target.Target("llvm")
    mod = tvm.tirx.transform.BindTarget(tgt.with_host(tgt))(mod)
    base, _, _ = tvm.tirx.get_tir_pipeline("default")
    packed = base(mod)["f"]
    before = str(packed)
    after = str(argument_checks.drop(packed))
    assert before.count("assert") > 10 and "on argument #" in before
    assert after.count("assert") == 1 and "index out of range" in after
    # a function without a compute_scope is left as it is
    assert argument_checks.drop(f).same_as(f)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((1, 3, 8, 9), "float32"), r"argument #0 'x' \(1, 3, 8, 8\) float32.*shape\[3\]"),
    (np.zeros((1, 3, 8, 8), "float64"), r"argument #0 'x'.*dtype float32 but get float64"),
    (np.zeros((3, 8, 8), "float32"), r"argument #0 'x'.*ndim 4 but get 3"),
])
def test_main_checks_its_arguments(bad, match):
    """Called directly (not through GraphModule, which checks first), the library's main
    refuses an argument of another shape, dtype or rank, naming it, before a kernel reads it."""
    mod, w, _ = _net()
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params={"w": w})
    vm = VirtualMachine(lib.lib, tvm.cpu())
    params = list(vm["__relay_params"]())
    with pytest.raises(Exception, match=match):
        vm["main"](tvm.runtime.tensor(bad), *params)
    with pytest.raises(Exception, match=r"argument #0 'x'.*expect a Tensor but get"):
        vm["main"](3, *params)


def test_main_refuses_strided_tensors_and_views_at_an_offset():
    """The kernels read an argument's data pointer as its first element, row-major: main's
    layout-check kernel refuses what they would misread (found by a fresh-user trial: a view
    at a byte offset gave [0, 2, 4, 6] for x * 2 of [32, 33, 34, 35])."""
    import tvm_ffi

    x = relay.var("x", shape=(4, 4))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], x * relay.const(2.0))),
                      target="llvm")
    vm = VirtualMachine(lib.lib, tvm.cpu())
    a = np.arange(32, dtype="float32").reshape(2, 4, 4)
    np.testing.assert_array_equal(vm["main"](tvm.runtime.tensor(a[1]))[0].numpy(), a[1] * 2)
    view = tvm.runtime.tensor(a)._create_view((4, 4), relative_byte_offset=64)
    np.testing.assert_array_equal(view.numpy(), a[1])
    with pytest.raises(ValueError, match="byte_offset"):
        vm["main"](view)
    strided = tvm_ffi.from_dlpack(a[1].T, require_contiguous=False)
    with pytest.raises(ValueError, match="compact"):
        vm["main"](strided)
    # what a copy of the same values gives
    np.testing.assert_array_equal(vm["main"](np.ascontiguousarray(a[1].T))[0].numpy(),
                                  a[1].T * 2)


def test_zero_copy_input_must_be_compact_without_offset():
    import tvm_ffi

    mod, w, xv = _net()
    lib = relay.build(mod, target="llvm", params={"w": w})
    m = GraphModule(lib["default"](tvm.cpu()))
    big = tvm.runtime.tensor(np.concatenate([np.zeros_like(xv), xv]))
    view = big._create_view((1, 3, 8, 8), relative_byte_offset=xv.nbytes)
    np.testing.assert_array_equal(view.numpy(), xv)
    with pytest.raises(InputError, match="'x'.*byte offset.*set_input"):
        m.set_input_zero_copy("x", view)
    buf = np.zeros(xv.size + 32, "float32")
    start = (-buf.ctypes.data % 64) // 4 + 1  # 4 bytes past a 64-byte boundary
    odd = buf[start:start + xv.size].reshape(xv.shape)
    with pytest.raises(InputError, match="not aligned to 64 bytes"):
        m.set_input_zero_copy("x", tvm_ffi.from_dlpack(odd))
    # the same values at offset 0 are taken, and read as they are
    m.set_input_zero_copy("x", tvm.runtime.tensor(xv))
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(mod, w, xv), rtol=1e-5,
                               atol=1e-6)


def test_set_input_takes_a_strided_host_tensor_by_copying_it():
    import tvm_ffi

    x = relay.var("x", shape=(4, 4))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], x * relay.const(2.0))),
                      target="llvm")
    m = GraphModule(lib["default"](tvm.cpu()))
    a = np.arange(16, dtype="float32").reshape(4, 4)
    strided = tvm_ffi.from_dlpack(a.T, require_contiguous=False)
    assert not strided.is_contiguous()
    m.set_input("x", strided)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), a.T * 2)
    with pytest.raises(InputError, match="not compact"):
        m.set_input_zero_copy("x", strided)


def test_vm_takes_views_and_strided_tensors_by_copying_them():
    """relay.vm's VirtualMachine passed a view at a byte offset to the kernels, which refused
    it with TVM's ValueError, while the graph executor copies it (found by a fresh-user
    trial); now both read the values the view shows, in a tensor argument and inside a
    tuple."""
    import tvm_ffi

    x = relay.var("x", shape=(4, 4))
    t = relay.var("t", relay.TupleType([relay.TensorType((4, 4), "float32")]))
    body = x * relay.const(2.0) + relay.TupleGetItem(t, 0)
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x, t], body)), "llvm")
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    a = np.arange(32, dtype="float32").reshape(2, 4, 4)
    view = tvm.runtime.tensor(a)._create_view((4, 4), relative_byte_offset=64)
    strided = tvm_ffi.from_dlpack(a[0].T, require_contiguous=False)
    assert not strided.is_contiguous()
    out = vm.run(view, (strided,))
    np.testing.assert_array_equal(out.numpy(), a[1] * 2 + a[0].T)
    np.testing.assert_array_equal(view.numpy(), a[1])  # the caller's tensors are untouched

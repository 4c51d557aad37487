"""tvm.relay 0.19 names added for a new-user trial: ``relay.TypeConstraint``,
``relay.analysis.all_dtypes`` / ``check_constant``, ``relay.vm.VMExecutor``,
``relay.nn.contrib_conv2d_nchwc`` / ``contrib_depthwise_conv2d_nchwc``."""

import numpy as np

import relay_tvm as relay
from relay_tvm.ir.module import IRModule


def test_type_constraint_is_type_relation_base():
    assert issubclass(relay.TypeRelation, relay.TypeConstraint)
    assert relay.ty.TypeConstraint is relay.TypeConstraint


def test_all_dtypes():
    x = relay.var("x", shape=(2,), dtype="int8")
    y = relay.var("y", shape=(2,), dtype="float16")
    body = relay.Tuple([relay.cast(x, "int32") + relay.const(1), relay.cast(y, "float32")])
    f = relay.Function([x, y], body)
    assert relay.analysis.all_dtypes(f) == set()  # nothing typed yet, as 0.19
    typed = relay.transform.InferType()(IRModule.from_expr(f))["main"]
    assert relay.analysis.all_dtypes(typed) == {"int8", "int32", "float16", "float32"}
    b = relay.var("b", shape=(), dtype="bool")
    g = relay.transform.InferType()(
        IRModule.from_expr(relay.Function([b], relay.If(b, relay.const(1, "int64"),
                                                        relay.const(2, "int64"))))
    )["main"]
    assert relay.analysis.all_dtypes(g) == {"bool", "int64"}


def test_check_constant():
    c = relay.const(np.ones(2, "float32"))
    x = relay.var("x", shape=(2,))
    assert relay.analysis.check_constant(c)
    assert relay.analysis.check_constant(relay.Tuple([c, relay.Tuple([c, relay.const(1)])]))
    assert relay.analysis.check_constant(relay.Tuple([]))
    assert not relay.analysis.check_constant(x)
    assert not relay.analysis.check_constant(relay.Tuple([c, x]))
    assert not relay.analysis.check_constant(c + c)  # a call is constant only once folded


def test_vm_executor_name():
    x = relay.var("x", shape=(3,))
    mod = IRModule.from_expr(relay.Function([x], x * relay.const(2.0)))
    ex = relay.create_executor("vm", mod=mod, target="llvm")
    assert isinstance(ex, relay.vm.VMExecutor)
    a = np.arange(3, dtype="float32")
    direct = relay.vm.VMExecutor(mod, None, "llvm")
    np.testing.assert_allclose(direct.evaluate()(a).numpy(), a * 2)


def test_contrib_conv2d_nchwc_names():
    data = relay.var("d", shape=(1, 2, 5, 5, 4))
    w = relay.var("w", shape=(2, 2, 3, 3, 4, 4))
    y = relay.nn.contrib_conv2d_nchwc(data, w, padding=(1, 1), channels=8, kernel_size=(3, 3),
                                      data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    assert y.op.name == "nn.contrib_conv2d_NCHWc"
    assert relay.op.nn.contrib_depthwise_conv2d_nchwc is relay.nn.contrib_depthwise_conv2d_nchwc
    # the blocked convolution against the plain one on unblocked data
    a = np.random.default_rng(0).uniform(-1, 1, (1, 8, 5, 5)).astype("float32")
    k = np.random.default_rng(1).uniform(-1, 1, (8, 8, 3, 3)).astype("float32")
    ab = a.reshape(1, 2, 4, 5, 5).transpose(0, 1, 3, 4, 2)
    kb = k.reshape(2, 4, 2, 4, 3, 3).transpose(0, 2, 4, 5, 3, 1)
    xp = relay.var("xp", shape=a.shape)
    wp = relay.var("wp", shape=k.shape)
    plain = relay.create_executor("debug").evaluate(
        relay.Function([xp, wp], relay.nn.conv2d(xp, wp, padding=(1, 1))))(a, k).numpy()
    got = relay.create_executor("graph", target="llvm").evaluate(
        relay.Function([data, w], y))(ab, kb).numpy()
    np.testing.assert_allclose(got, plain.reshape(1, 2, 4, 5, 5).transpose(0, 1, 3, 4, 2),
                               rtol=1e-5, atol=1e-5)


def test_vm_executable_stats():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    helper = relay.GlobalVar("helper")
    mod = IRModule()
    mod[helper] = relay.Function([y], relay.nn.relu(y))
    c4 = relay.const(np.arange(4, dtype="float32"))
    mod["main"] = relay.Function(
        [x], relay.Tuple([relay.exp(relay.Call(helper, [x])), c4, relay.const(7.0)]))
    exe = relay.vm.compile(mod, target="llvm")
    lines = exe.stats.splitlines()
    assert lines[0] == "Relay VM executable statistics:"
    assert lines[1] == "  Constant shapes (# 2): [[4], scalar]"
    assert lines[2].startswith("  Globals (#2): [") and '("main", ' in lines[2]
    assert '("helper", ' in lines[2]
    prims = lines[3].split(": ", 1)[1].strip("[]").split(", ")
    assert lines[3].startswith(f"  Primitive ops (#{len(prims)}): ")
    assert any("relu" in p for p in prims) and any("exp" in p for p in prims)
    code, lib = exe.save()
    assert relay.vm.Executable.load_exec(code, lib).stats == exe.stats
    res = relay.vm.VirtualMachine(exe, None).invoke("main", np.ones((2, 3), "float32"))
    np.testing.assert_allclose(res[1].numpy(), np.arange(4))


def test_backend_submodules_are_attributes_without_importing_them():
    """0.19 scripts call ``relay.backend.vm.compile`` after ``import tvm.relay`` alone (was an
    AttributeError until ``tvm.relay.backend.vm`` was imported)."""
    import subprocess
    import sys

    code = ("import relay_tvm as relay, relay_tvm.vm as vm, relay_tvm.runtime.interpreter as it\n"
            "assert relay.backend.vm.compile is vm.compile\n"
            "assert relay.backend.interpreter is it\n"
            "try:\n    relay.backend.nope\nexcept AttributeError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       check=True)
    assert "module 'relay_tvm.backend' has no attribute 'nope'" in r.stdout

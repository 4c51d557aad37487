"""The VM compiler and VirtualMachine (relay.vm.compile, create_executor("vm")) agree with the
reference interpreter on programs with if, let, tuples and recursive global functions."""

import subprocess
import sys

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.runtime.vm import VirtualMachine, load_executable


def _both(mod, *args):
    ref = relay.create_executor("debug", mod).evaluate()(*args)
    got = relay.create_executor("vm", mod, target="llvm").evaluate()(*args)
    return ref, got


def _np(v):
    return tuple(_np(x) for x in v) if isinstance(v, tuple) else v.numpy()


def _assert_same(ref, got):
    ref, got = _np(ref), _np(got)
    if isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(ref) == len(got)
        for r, g in zip(ref, got):
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    else:
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_fused_branches(cond):
    x = relay.var("x", shape=(3,))
    c = relay.var("c", shape=(), dtype="bool")
    body = relay.If(c, relay.nn.relu(relay.add(x, x)), relay.exp(relay.multiply(x, x)))
    mod = relay.IRModule.from_expr(relay.Function([x, c], relay.Tuple([relay.add(body, x), x])))
    _assert_same(*_both(mod, np.array([1, -2, 3], "float32"), np.array(cond)))


def _loop_module():
    # @loop(i, acc) = if (i < n) { @loop(i + 1, acc * 1.5 + 1) } else { acc }
    mod = relay.IRModule()
    loop = relay.GlobalVar("loop")
    i = relay.var("i", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(2, 2))
    body = relay.If(
        relay.less(i, relay.const(10, "int32")),
        relay.Call(loop, [relay.add(i, relay.const(1, "int32")),
                          relay.add(relay.multiply(acc, relay.const(1.5)), relay.const(1.0))]),
        acc,
    )
    mod[loop] = relay.Function([i, acc], body)
    x = relay.var("x", shape=(2, 2))
    mod["main"] = relay.Function([x], relay.Call(loop, [relay.const(0, "int32"), x]))
    return mod


def test_recursive_global_function():
    mod = _loop_module()
    x = np.array([[0.0, 1.0], [2.0, -1.0]], "float32")
    ref, got = _both(mod, x)
    _assert_same(ref, got)
    expect = x.copy()
    for _ in range(10):
        expect = expect * 1.5 + 1
    np.testing.assert_allclose(got.numpy(), expect, rtol=1e-5)


def test_let_and_tuple_projection():
    x = relay.var("x", shape=(4,))
    t = relay.var("t")
    v = relay.var("v")
    body = relay.Let(t, relay.Tuple([relay.exp(x), relay.negative(x)]),
                     relay.Let(v, relay.add(relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 1)),
                               relay.Tuple([v, relay.TupleGetItem(t, 1)])))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    _assert_same(*_both(mod, np.arange(4, dtype="float32")))


def test_dense_with_weight_param_and_export(tmp_path):
    mod = _loop_module()
    x = relay.var("x", shape=(3, 8))
    w = relay.var("w", shape=(16, 8))
    c = relay.var("c", shape=(), dtype="bool")
    y = relay.If(c, relay.nn.dense(x, w), relay.nn.relu(relay.nn.dense(x, w)))
    mod = relay.IRModule.from_expr(relay.Function([x, w, c], y))
    wv = np.random.default_rng(0).standard_normal((16, 8)).astype("float32")
    xv = np.random.default_rng(1).standard_normal((3, 8)).astype("float32")
    exe = relay.vm.compile(mod, target="llvm", params={"w": wv})
    path = str(tmp_path / "vm.so")
    exe.export_library(path)
    code = (
        "import numpy as np, relay_tvm as relay\n"
        "from relay_tvm.runtime.vm import VirtualMachine, load_executable\n"
        f"vm = VirtualMachine(load_executable({path!r}))\n"
        f"x = np.load({str(tmp_path / 'x.npy')!r})\n"
        f"np.save({str(tmp_path / 'o.npy')!r}, vm.run(x, np.array(False)).numpy())\n"
    )
    np.save(tmp_path / "x.npy", xv)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "o.npy"), np.maximum(xv @ wv.T, 0), rtol=1e-5,
                               atol=1e-5)
    vm = VirtualMachine(exe)
    np.testing.assert_allclose(vm.invoke("main", xv, True).numpy(), xv @ wv.T, rtol=1e-5,
                               atol=1e-5)


def test_vm_argument_errors():
    # a wrong argument is an InputError, as on the graph executor and the interpreter (a new
    # user's `except InputError` missed the VM's BuildError)
    exe = relay.vm.compile(_loop_module())
    vm = VirtualMachine(exe)
    with pytest.raises(relay.InputError, match="got dtype float64, expected float32"):
        vm.run(np.zeros((2, 2)))
    with pytest.raises(relay.InputError, match="got shape"):
        vm.run(np.zeros((2, 3), "float32"))
    with pytest.raises(relay.InputError, match="takes 1 argument"):
        vm.run()
    # a name the caller got wrong is an input error (it was a plain BuildError; fresh-user trial)
    with pytest.raises(relay.InputError, match=r"no function 'nope'; the executable has \['loop', 'main'\]"):
        vm.invoke("nope")


def test_vm_misspelt_keyword_arguments_get_a_did_you_mean():
    """A new-user trial: ``vm.run(Data=x)`` and ``vm.set_input("main", Data=x)`` for a
    parameter ``data`` said only "unknown argument 'Data'"."""
    d = relay.var("data", shape=(2,))
    vm = VirtualMachine(relay.vm.compile(relay.IRModule.from_expr(relay.Function([d], d + d))))
    x = np.array([1.0, 2.0], "float32")
    msg = r"^@main: unknown argument 'Data' \(did you mean 'data'\?\); parameters are \['data'\]$"
    with pytest.raises(relay.InputError, match=msg):
        vm.run(Data=x)
    with pytest.raises(relay.InputError, match=msg):
        vm.set_input("main", Data=x)
    with pytest.raises(relay.InputError, match=r"unknown argument 'xyz'; parameters are"):
        vm.run(xyz=x)
    vm.set_input("main", data=x)
    np.testing.assert_array_equal(vm.run().numpy(), [2.0, 4.0])


def test_local_functions_are_inlined():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    f = relay.var("f")
    a = relay.var("a")
    g = relay.var("g")
    z = relay.var("z", shape=(3,))
    w = relay.var("w", shape=(3,))
    double = relay.Function([y], relay.multiply(y, relay.const(2.0)))
    body = relay.Let(f, double, relay.Let(
        a, relay.exp(x),
        relay.Let(g, relay.Function([z], relay.add(a, z)),  # captures a
                  relay.Tuple([relay.add(relay.Call(f, [x]), relay.Call(f, [relay.exp(x)])),
                               relay.Call(g, [x]),
                               relay.Call(relay.Function([w], relay.nn.relu(w)), [x])]))))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    _assert_same(*_both(mod, np.array([1.0, -2.0, 0.5], "float32")))


def test_closure_values_and_local_recursion_run():
    # formerly rejected ("closures", "recursive local functions"): now lifted to VM closures
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = relay.Function([y], relay.add(x, y))
    t = relay.var("t")
    body = relay.Let(t, relay.Tuple([f, x]),
                     relay.Call(relay.TupleGetItem(t, 0), [relay.TupleGetItem(t, 1)]))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    _assert_same(*_both(mod, np.array([1.0, 2.5], "float32")))
    # let rec: a local function that calls itself
    n = relay.var("n", shape=(), dtype="int32")
    loop = relay.var("loop")
    body = relay.If(relay.less(n, relay.const(3, "int32")),
                    relay.Call(loop, [relay.add(n, relay.const(1, "int32"))]), n)
    prog = relay.Let(loop, relay.Function([n], body), relay.Call(loop, [relay.const(0, "int32")]))
    ref, got = _both(relay.IRModule.from_expr(relay.Function([], prog)))
    _assert_same(ref, got)
    assert int(got.numpy()) == 3


def test_load_executable_errors(tmp_path):
    with pytest.raises(relay.BuildError, match="no such file"):
        load_executable(str(tmp_path / "none.so"))


def test_graph_loader_points_a_vm_executable_to_load_executable(tmp_path):
    """From the new-user trial: relay.runtime.load_module on an exported VM executable said
    only "no function '__relay_meta'"; it now names relay.vm.load_executable, and 0.19's
    ``exe.mod`` is the executable's runtime module."""
    x = relay.var("x", shape=(2,))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], relay.add(x, x))))
    assert exe.mod is exe.lib
    path = str(tmp_path / "vm.so")
    exe.export_library(path)
    with pytest.raises(relay.BuildError, match=r"is a relay_tvm VM executable .*"
                                               r"relay.vm.load_executable"):
        relay.runtime.load_module(path)
    vm = VirtualMachine(load_executable(path))
    np.testing.assert_allclose(vm.run(np.array([1.5, -2.0], "float32")).numpy(), [3.0, -4.0])


def test_save_and_load_exec_in_a_new_process(tmp_path):
    exe = relay.vm.compile(_loop_module())
    code, lib = exe.save()
    x = np.array([[0.0, 1.0], [2.0, -1.0]], "float32")
    want = relay.create_executor("debug", _loop_module()).evaluate()(x).numpy()
    again = relay.vm.Executable.load_exec(code, lib)
    np.testing.assert_allclose(VirtualMachine(again).run(x).numpy(), want, rtol=1e-5)
    (tmp_path / "code.bin").write_bytes(bytes(code))
    lib.export_library(str(tmp_path / "kernels.so"))
    prog = (
        "import numpy as np, tvm\n"
        "from relay_tvm.runtime.vm import Executable, VirtualMachine\n"
        f"code = open({str(tmp_path / 'code.bin')!r}, 'rb').read()\n"
        f"lib = tvm.runtime.load_module({str(tmp_path / 'kernels.so')!r})\n"
        "vm = VirtualMachine(Executable.load_exec(code, lib))\n"
        "x = np.array([[0.0, 1.0], [2.0, -1.0]], 'float32')\n"
        f"np.save({str(tmp_path / 'o.npy')!r}, vm.run(x).numpy())\n"
    )
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "o.npy"), want, rtol=1e-5)
    with pytest.raises(relay.BuildError, match="load_exec"):
        relay.vm.Executable.load_exec(b"not code", lib)


@pytest.mark.parametrize("kind", ["graph", "vm", "debug"])
def test_big_endian_input_keeps_its_values(kind):
    """From the new-user trial: a ``>f4`` array raised TVM's "unknown dtype" ValueError; its
    values are float32 values and run as such (stored in native byte order)."""
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(2.0))))
    xv = np.array([1.5, -2.25, 1e30], ">f4")
    out = relay.create_executor(kind, mod, target="llvm").evaluate()(xv).numpy()
    np.testing.assert_array_equal(out, xv.astype("<f4") * 2)


def test_truncated_library_is_refused_before_dlopen(tmp_path):
    """From the new-user trial: loading the first 5,000 bytes of an exported library killed
    Python with SIGBUS inside dlopen; both loaders, and tvm.runtime.load_module (a later
    trial: the README offers it for relay_tvm libraries), now refuse it with a BuildError
    first."""
    import tvm

    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    full = tmp_path / "net.so"
    relay.build(mod, target="llvm").export_library(str(full))
    cut = tmp_path / "cut.so"
    cut.write_bytes(full.read_bytes()[:5000])
    for load in (relay.runtime.load_module, load_executable, tvm.runtime.load_module):
        with pytest.raises(relay.BuildError, match=r"is cut short \(5000 bytes"):
            load(str(cut))
    assert relay.runtime.load_module(str(full)) is not None
    assert tvm.runtime.load_module(str(full)) is not None


@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_flipped_byte_in_an_exported_library_is_refused(tmp_path, kind):
    """From the new-user trial: one byte flipped in an exported library segfaulted the process
    at load or run (or raised a raw TVM / JSON error); the CRC-32 written at export is checked
    before dlopen. Every flip position is refused, and the intact file still loads and runs."""
    import tvm

    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.5))))
    full = tmp_path / "net.so"
    if kind == "graph":
        relay.build(mod, target="llvm").export_library(str(full))
        load = relay.runtime.load_module
    else:
        relay.vm.compile(mod, target="llvm").export_library(str(full))
        load = load_executable
    data = full.read_bytes()
    rng = np.random.default_rng(0)
    for off in list(rng.integers(0, len(data), 6)) + [0x1200, len(data) - 1]:
        bad = bytearray(data)
        bad[off] ^= 0x5A
        path = tmp_path / f"bad{off}.so"
        path.write_bytes(bytes(bad))
        with pytest.raises(relay.BuildError, match="is damaged"):
            load(str(path))
        with pytest.raises(relay.BuildError, match="is damaged"):  # TVM's loader too
            tvm.runtime.load_module(str(path))
    out = relay.create_executor(kind, mod, target="llvm").evaluate()(np.ones(2, "float32"))
    np.testing.assert_array_equal(out.numpy(), [2.5, 2.5])
    assert load(str(full)) is not None


def test_virtual_machine_takes_the_module_load_module_returns(tmp_path):
    """tvm.relay 0.19's VirtualMachine wrapped a runtime module itself, so
    VirtualMachine(tvm.runtime.load_module(path), dev) ran an exported executable; relay_tvm
    refused it (a later new-user trial). Against NumPy, from a .so and a .tar."""
    import tvm

    x = relay.var("x", shape=(2, 3))
    exe = relay.vm.compile(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))), "llvm")
    v = np.random.default_rng(2).standard_normal((2, 3)).astype("float32")
    for name in ("vm.so", "vm.tar"):
        exe.export_library(str(tmp_path / name))
        vm = relay.vm.VirtualMachine(tvm.runtime.load_module(str(tmp_path / name)), tvm.cpu())
        np.testing.assert_allclose(vm.run(v).numpy(), np.exp(v), rtol=1e-6)

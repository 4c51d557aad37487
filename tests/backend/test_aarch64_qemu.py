"""AArch64 libraries RUN under qemu-aarch64 and equal the x86 build (issue 15).

Each model is built twice: for ``llvm -mtriple=aarch64-linux-gnu`` (exported, linked by
aarch64-linux-gnu-g++, run by TVM's runtime in an arm64 Python under qemu-user) and for the
host's ``llvm`` (run in this process). The op table is also checked against the reference
interpreter. Needs ``tools/setup_aarch64_qemu.sh`` (run by .ci/run); without it the module skips
with the reason.
"""

import numpy as np
import pytest
from backend_util import rand

import relay_tvm as relay
from relay_tvm.runtime import GraphModule
from relay_tvm.testing import aarch64, resnet

needs_qemu = pytest.mark.skipif(aarch64.unavailable_reason() is not None,
                                reason=str(aarch64.unavailable_reason()))

# Both builds run the same schedules with the same reduction order and FMA contraction on both
# ISAs, so equality is expected up to rounding: 1e-5 relative (atol scaled to the output's size
# for entries near zero after cancellation).
RTOL = 1e-5


def _close(got, ref, what):
    assert got.shape == ref.shape and got.dtype == ref.dtype, (what, got.shape, ref.shape)
    atol = RTOL * float(np.abs(ref).max() or 1.0)
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=atol, err_msg=what)


def _x86(mod, params, inputs, opt_level=3):
    with relay.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"]())
    m.run(**inputs)
    return [m.get_output(i).numpy() for i in range(m.get_num_outputs())]


def _conv(x_shape, w_shape, **kw):
    def make():
        x = relay.var("x", shape=x_shape)
        w = relay.var("w", shape=w_shape)
        b = relay.var("b", shape=(w_shape[0] if kw.get("kernel_layout", "OIHW") == "OIHW"
                                  else w_shape[3],))
        axis = 3 if kw.get("data_layout") == "NHWC" else 1
        y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, **kw), b, axis=axis))
        return [x, w, b], y
    return make


def _depthwise_pointwise():
    """A MobileNet block (depthwise 3x3 + bias + ReLU, then 1x1 + bias + ReLU): one merged
    kernel on CPU targets (transform/fuse_depthwise.py)."""
    x = relay.var("x", shape=(1, 32, 12, 12))
    wd, bd = relay.var("wd", shape=(32, 1, 3, 3)), relay.var("bd", shape=(32,))
    wp, bp = relay.var("wp", shape=(48, 32, 1, 1)), relay.var("bp", shape=(48,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(
        x, wd, padding=(1, 1), groups=32, channels=32, kernel_size=(3, 3)), bd))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, wp, kernel_size=(1, 1)), bp))
    return [x, wd, bd, wp, bp], y


def _dense(batch, k, n):
    def make():
        x, w, b = relay.var("x", shape=(batch, k)), relay.var("w", shape=(n, k)), \
            relay.var("b", shape=(n,))
        return [x, w, b], relay.nn.bias_add(relay.nn.dense(x, w), b)
    return make


def _unary(shape, fn):
    def make():
        x = relay.var("x", shape=shape)
        return [x], fn(x)
    return make


def _batch_norm_relu():
    x = relay.var("x", shape=(1, 16, 10, 10))
    g, b, m, v = (relay.var(n, shape=(16,)) for n in ("g", "beta", "mean", "var"))
    return [x, g, b, m, v], relay.nn.relu(relay.nn.batch_norm(x, g, b, m, v)[0])


OPS = {
    "conv3x3_pad1": _conv((1, 16, 14, 14), (32, 16, 3, 3), padding=(1, 1)),
    "conv7x7_s2_stem": _conv((1, 3, 32, 32), (16, 3, 7, 7), strides=(2, 2), padding=(3, 3)),
    "conv1x1": _conv((1, 32, 8, 8), (64, 32, 1, 1)),
    "conv3x3_s2_odd": _conv((1, 8, 15, 15), (16, 8, 3, 3), strides=(2, 2), padding=(1, 1)),
    "conv_depthwise": _conv((1, 32, 12, 12), (32, 1, 3, 3), padding=(1, 1), groups=32),
    "depthwise_pointwise": _depthwise_pointwise,
    "conv_grouped": _conv((1, 16, 10, 10), (16, 4, 3, 3), padding=(1, 1), groups=4),
    "conv_dilated": _conv((1, 8, 16, 16), (8, 8, 3, 3), padding=(2, 2), dilation=(2, 2)),
    "conv_nhwc": _conv((1, 12, 12, 16), (3, 3, 16, 24), padding=(1, 1), data_layout="NHWC",
                       kernel_layout="HWIO"),
    "dense_b1": _dense(1, 512, 100),
    "dense_b4": _dense(4, 96, 37),
    "max_pool3x3_s2": _unary((1, 16, 15, 15), lambda x: relay.nn.max_pool2d(
        x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))),
    "avg_pool2x2_excl_pad": _unary((1, 16, 11, 11), lambda x: relay.nn.avg_pool2d(
        x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), count_include_pad=False)),
    "global_avg_pool": _unary((1, 64, 7, 7), relay.nn.global_avg_pool2d),
    "batch_norm_relu": _batch_norm_relu,
    "softmax": _unary((2, 1000), relay.nn.softmax),
}


def _inputs_of(params_vars, seed):
    vals = {}
    for i, v in enumerate(params_vars):
        shape = tuple(int(d) for d in v.type_annotation.shape)
        a = rand(shape, seed=seed + i)
        if v.name_hint == "var":
            a = np.abs(a) + 0.5  # a variance
        vals[v.name_hint] = a
    return vals


@pytest.fixture(scope="module")
def op_table(tmp_path_factory):
    """Per op: (arm outputs, x86 outputs, reference-interpreter output, library path, data
    inputs). The weights are bound
    parameters (inside the library), the data input ``x`` is passed at run time."""
    tmp = tmp_path_factory.mktemp("aarch64_ops")
    jobs, refs = [], {}
    for k, (name, make) in enumerate(OPS.items()):
        params_vars, body = make()
        mod = relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function(params_vars, body)))
        vals = _inputs_of(params_vars, seed=10 * k)
        data = {"x": vals["x"]}
        bound = {n: v for n, v in vals.items() if n != "x"}
        path = aarch64.build_and_export(mod, tmp / f"{name}.so", params=bound)
        jobs.append((path, data))
        interp = relay.create_executor("debug", mod).evaluate()(
            *[vals[v.name_hint] for v in params_vars]).numpy()
        refs[name] = (_x86(mod, bound, data), interp)
    arm = aarch64.run_exported_many(jobs)
    return {name: (arm[i],) + refs[name] + jobs[i] for i, name in enumerate(OPS)}


@needs_qemu
@pytest.mark.parametrize("name", list(OPS))
def test_op_runs_under_qemu_and_equals_x86(op_table, name):
    arm, x86, interp, _, _ = op_table[name]
    assert len(arm) == len(x86) == 1
    _close(arm[0], x86[0], f"{name}: aarch64 vs x86")
    np.testing.assert_allclose(arm[0], interp, rtol=1e-4, atol=1e-4 * np.abs(interp).max(),
                               err_msg=f"{name}: aarch64 vs the reference interpreter")


@needs_qemu
def test_rpc_server_under_qemu_runs_uploaded_libraries(op_table):
    # The board's way: TVM's RPC server (python -m tvm.exec.rpc_server) runs in the arm64
    # Python; this process uploads the exported libraries and runs them remotely.
    with aarch64.QemuRPCServer() as server:
        remote = server.connect()
        for name in ("conv3x3_s2_odd", "dense_b4", "max_pool3x3_s2"):
            _, x86, _, path, data = op_table[name]
            (got,) = aarch64.run_over_rpc(remote, path, data)
            _close(got, x86[0], f"{name} over RPC: aarch64 vs x86")
        with pytest.raises(relay.BuildError, match=r"input 'x': expected \(4, 96\) float32"):
            aarch64.run_over_rpc(remote, op_table["dense_b4"][3], {"x": np.zeros((4, 95), "f")})


@needs_qemu
def test_resnet18_runs_under_qemu_and_equals_x86(tmp_path):
    # ImageNet ResNet-18 (every layer kind: the 7x7 stem, strided blocks, pooling, the dense
    # classifier) at batch 1 on a 112x112 image: a quarter of the 224x224 arithmetic, which
    # qemu emulates at about 1/50 of native speed (the 224x224 run took 110 of CI's 2,500 s).
    # The logits (the input of the final softmax) are compared: softmax of Xavier-initialized
    # logits is nearly uniform and would hide errors.
    mod, params = resnet.get_workload(batch_size=1, num_layers=18, image_shape=(3, 112, 112))
    main = mod["main"]
    assert main.body.op.name == "nn.softmax"
    logits = relay.IRModule.from_expr(relay.Function(main.params, main.body.args[0]))
    x = np.random.default_rng(7).uniform(-1, 1, (1, 3, 112, 112)).astype("float32")
    path = aarch64.build_and_export(logits, tmp_path / "resnet18_arm.so", params=params)
    (arm,) = aarch64.run_exported(path, {"data": x})
    (x86,) = _x86(logits, params, {"data": x})
    assert arm.shape == (1, 1000)
    assert np.abs(x86).max() > 1e-3 and np.std(x86) > 1e-4  # logits that separate classes
    _close(arm, x86, "ResNet-18 logits: aarch64 vs x86")
    assert int(arm.argmax()) == int(x86.argmax())


@needs_qemu
def test_wrong_input_is_named_by_the_arm_loader(tmp_path):
    x = relay.var("x", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    path = aarch64.build_and_export(mod, tmp_path / "relu.so")
    ok = rand((2, 3))
    (got,) = aarch64.run_exported(path, {"x": ok})
    np.testing.assert_array_equal(got, np.maximum(ok, 0))
    with pytest.raises(relay.BuildError, match=r"input 'x': expected \(2, 3\) float32, got "
                                               r"\(3, 2\) float32"):
        aarch64.run_exported(path, {"x": ok.T.copy()})
    with pytest.raises(relay.BuildError, match="input 'x' was not given"):
        aarch64.run_exported(path, {})


def test_unavailable_environment_is_reported(tmp_path):
    reason = aarch64.unavailable_reason(root=str(tmp_path))
    assert "setup_aarch64_qemu.sh" in reason
    with pytest.raises(relay.BuildError, match="cannot run AArch64 code here"):
        aarch64.run_exported(str(tmp_path / "none.so"), {}, root=str(tmp_path))


def _conv_model():
    params_vars, body = OPS["conv3x3_pad1"]()
    x, w, b = params_vars
    mod = relay.IRModule.from_expr(relay.Function([x, w, b], body))
    params = {"w": rand((32, 16, 3, 3)), "b": rand((32,))}
    return mod, params


@needs_qemu
def test_cli_run_qemu_writes_the_outputs_of_the_x86_build(tmp_path, capsys):
    """`relay-tvm run NET.so --qemu`: an AArch64 library run on this machine from the command
    line (before, only relay_tvm.testing.aarch64 could; fresh-user trial)."""
    from relay_tvm.cli import main

    mod, params = _conv_model()
    lib = aarch64.build_and_export(mod, tmp_path / "conv_arm.so", params=params)
    x = rand((1, 16, 14, 14))
    np.save(tmp_path / "x.npy", x)
    assert main(["run", lib, "--qemu", "-i", f"x={tmp_path / 'x.npy'}",
                 "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "latency: not measured (qemu-aarch64 emulates the CPU" in printed
    (x86,) = _x86(mod, params, {"x": x})
    _close(np.load(tmp_path / "out" / "output_0.npy"), x86, "CLI --qemu vs x86")
    # inputs are checked against the library's, read under qemu, before it runs
    np.save(tmp_path / "bad.npy", x[:, :8])
    assert main(["run", lib, "--qemu", "-i", f"x={tmp_path / 'bad.npy'}"]) == 2
    assert ("the model's input 'x' has shape (1, 16, 14, 14), but the file holds an array of "
            "shape (1, 8, 14, 14)") in capsys.readouterr().err


def _x86_host_with_cross_compiler() -> None:
    """Skip unless the host is x86_64 (the messages name it) and the AArch64 cross compiler
    that exports the libraries is installed."""
    from relay_tvm.backend.isa import host_isa

    if host_isa()[0] != "x86_64":
        pytest.skip("the message names this x86_64 host")
    reason = aarch64.unavailable_reason(need_cross_compiler=True)
    if reason and "cross compiler" in reason:
        pytest.skip(reason)


def test_cli_run_of_an_aarch64_library_names_qemu(tmp_path, capsys, monkeypatch):
    from relay_tvm.cli import main

    _x86_host_with_cross_compiler()
    x = relay.var("x", shape=(2, 3))
    lib = aarch64.build_and_export(relay.IRModule.from_expr(relay.Function([x], relay.abs(x))),
                                   tmp_path / "abs_arm.so")
    assert main(["run", lib, "--fill-random"]) == 2
    assert ("was compiled for aarch64 and this machine is x86_64: run it on an AArch64 "
            "machine, or here under emulation with --qemu") in capsys.readouterr().err
    # no arm64 environment: what to run to make one
    monkeypatch.setenv("RELAY_TVM_AARCH64_DIR", str(tmp_path / "none"))
    assert main(["run", lib, "--qemu", "--fill-random"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("relay-tvm: error: --qemu: cannot run AArch64 code on this machine")
    assert "setup_aarch64_qemu.sh" in err


def test_cli_run_qemu_refuses_a_library_of_this_machine(tmp_path, capsys):
    from relay_tvm.backend.isa import host_isa
    from relay_tvm.cli import main

    if host_isa()[0] != "x86_64":
        pytest.skip("the message names this x86_64 host")

    x = relay.var("x", shape=(2, 3))
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.abs(x))), "llvm")
    lib.export_library(str(tmp_path / "abs.so"))
    assert main(["run", str(tmp_path / "abs.so"), "--qemu", "--fill-random"]) == 2
    assert capsys.readouterr().err.startswith(
        f"relay-tvm: error: --qemu: {tmp_path / 'abs.so'} was compiled for x86_64, not aarch64")
    assert main(["run", str(tmp_path / "abs.so"), "--qemu", "--device", "cuda"]) == 2
    assert "qemu-aarch64 emulates the CPU only" in capsys.readouterr().err


def test_cli_run_of_an_aarch64_vm_executable_does_not_point_to_qemu(tmp_path, capsys):
    """A native run of an AArch64 VM executable named --qemu, which then refused it (VM
    executables need relay_tvm on the board; fresh-user trial): the library is recognised as a
    VM executable from its file, so neither message needs qemu or the arm64 environment."""
    from relay_tvm.backend.library_file import holds_vm_executable
    from relay_tvm.cli import main

    _x86_host_with_cross_compiler()
    x = relay.var("x", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.abs(x)))
    path = tmp_path / "abs_vm.so"
    relay.vm.compile(mod, target=aarch64.AARCH64_TARGET).export_library(str(path))
    graph = aarch64.build_and_export(mod, tmp_path / "abs_arm.so")
    assert holds_vm_executable(str(path)) and not holds_vm_executable(str(graph))
    assert main(["run", str(path), "--fill-random"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"relay-tvm: error: {path} is a VM executable compiled for aarch64 and this "
                   f"machine is x86_64: run it on an AArch64 machine with relay_tvm installed "
                   f"(relay-tvm run there, or relay.vm.load_executable)"]
    assert main(["run", str(path), "--qemu", "--fill-random"]) == 2
    assert (f"--qemu: {path} is a VM executable (relay-tvm compile --executor vm); --qemu runs "
            f"graph libraries") in capsys.readouterr().err

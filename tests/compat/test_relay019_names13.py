"""tvm.relay 0.19 names added for a new-user trial: the debug graph executor, the profiling VM
and their reports, ``tvm.runtime.ndarray``, ``relay.backend.executor_factory``,
``transform.SplitArgs / PartitionGraph / ManifestAlloc``, ``relay.op.strategy``, workload
parameters as tensors, ``tvm.ir.save_json / load_json`` of Relay modules."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.analysis import structural_equal
from relay_tvm.errors import BuildError, NotProvidedError
from relay_tvm.ir.attrs import DictAttrs
from relay_tvm.ir.functor import post_order
from relay_tvm.ir.module import IRModule
from relay_tvm.op.annotation import compiler_begin as cb
from relay_tvm.op.annotation import compiler_end as ce
from relay_tvm.op.op_attrs import temp_op_attr

RNG = np.random.default_rng(0)


def _dense_relu_exp():
    x = relay.var("x", shape=(4, 8))
    w = relay.var("w", shape=(16, 8))
    y = relay.nn.relu(relay.nn.dense(x, w))  # also an output: a kernel of its own
    return IRModule.from_expr(relay.Function([x, w], relay.Tuple([relay.exp(y) + relay.const(
        1.0), y])))


def _values():
    a = RNG.uniform(-1, 1, (4, 8)).astype("float32")
    b = RNG.uniform(-1, 1, (16, 8)).astype("float32")
    return a, b, np.maximum(a @ b.T, 0)


# ---- tvm.contrib.debugger.debug_executor -----------------------------------------------------

def test_debug_executor_runs_node_by_node_and_dumps(tmp_path, capsys):
    from tvm.contrib.debugger import debug_executor

    lib = relay.build(_dense_relu_exp(), target="llvm")
    m = debug_executor.create(lib.get_graph_json(), lib, tvm.cpu(), dump_root=str(tmp_path))
    assert isinstance(m, relay.runtime.graph_executor.GraphModule)
    a, b, relu = _values()
    m.set_input("x", a)
    m.set_input("w", b)
    m.run(number=2, repeat=3)
    np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(relu) + 1, rtol=1e-5)
    table = capsys.readouterr().out
    kernels = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"]
               if n["op"] != "null"]
    assert table.splitlines()[0].split()[:3] == ["Node", "Name", "Ops"]
    assert all(k in table for k in kernels) and "Total_time" in table
    # every node's output is kept: the inputs as given, the dense+relu kernel's value
    outs = m.debug_datum.get_output_tensors()
    nodes = m.debug_datum.get_graph_nodes()
    assert len(outs) == len(nodes)
    np.testing.assert_array_equal(outs["x____topo-index:0____output-num:0"].numpy(), a)
    dense = next(k for k in outs if "dense" in k)
    np.testing.assert_allclose(outs[dense].numpy(), relu, rtol=1e-5)
    times = m.debug_datum._time_list
    assert len(times) == len(nodes) and all(len(t) == 3 for t in times)
    assert times[0] == [0.0, 0.0, 0.0] and all(t > 0 for t in times[-1])
    dump = tmp_path / "_tvmdbg_device_CPU_0"
    saved = relay.load_param_dict((dump / "output_tensors.params").read_bytes())
    np.testing.assert_allclose(saved[dense].numpy(), relu, rtol=1e-5)
    graph = json.loads((dump / "_tvmdbg_graph_dump.json").read_text())
    assert [n["op"] for n in graph["nodes"] if n["op"] != "param"] == kernels
    trace = json.loads((dump / "_tvmdbg_execution_trace.json").read_text())
    assert len(trace["traceEvents"]) == 2 * len(nodes)
    # one node's output, by name and by index
    name = next(n["name"] for n in nodes if "dense" in n["op"])
    np.testing.assert_allclose(m.debug_get_output(name).numpy(), relu, rtol=1e-5)
    out = tvm.runtime.empty((4, 16), "float32", tvm.cpu())
    m.debug_get_output(nodes.index(next(n for n in nodes if n["name"] == name)), out)
    np.testing.assert_allclose(out.numpy(), relu, rtol=1e-5)
    with pytest.raises(AttributeError, match="no_such_node"):
        m.debug_get_output("no_such_node")
    assert m.run_individual_node(nodes.index(next(n for n in nodes if n["name"] == name)),
                                 number=2, repeat=2).mean > 0
    m.exit()
    assert not os.path.exists(tmp_path)


def test_debug_executor_profile_report():
    from tvm.contrib.debugger import debug_executor
    from tvm.runtime.profiling import Duration, Report

    lib = relay.build(_dense_relu_exp(), target="llvm")
    m = debug_executor.create(lib.get_graph_json(), lib, tvm.cpu())
    a, b, relu = _values()
    rep = m.profile(x=a, w=b)
    np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(relu) + 1, rtol=1e-5)
    np.testing.assert_allclose(m.get_output(1).numpy(), relu, rtol=1e-5)
    kernels = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"]
               if n["op"] != "null"]
    assert [c["Name"] for c in rep.calls] == kernels
    assert all(isinstance(c["Duration (us)"], Duration) and c["Duration (us)"].microseconds > 0
               for c in rep.calls)
    total = rep.device_metrics["cpu0"]["Duration (us)"].microseconds
    assert sum(c["Duration (us)"].microseconds for c in rep.calls) <= total
    dense = next(c for c in rep.calls if "dense" in c["Name"])
    assert dense["Argument Shapes"] == "float32[4, 8], float32[1, 8, 16], float32[4, 16]"
    assert rep.configuration["Executor"] == "Graph"
    text = str(rep)
    assert text.splitlines()[0].split()[:3] == ["Name", "Duration", "(us)"]
    assert "Sum" in text and "Total" in text
    assert rep.csv().splitlines()[0] == "Name,Duration (us),Percent,Count,Device,Argument Shapes"
    back = Report.from_json(rep.json())
    assert back.calls == rep.calls and back.device_metrics == rep.device_metrics
    with pytest.raises(NotProvidedError, match="collectors"):
        m.profile(collectors=["papi"])
    m.exit()


def test_debug_executor_checks_its_graph():
    from tvm.contrib.debugger import debug_executor

    lib = relay.build(_dense_relu_exp(), target="llvm")
    with pytest.raises(ValueError, match="graph JSON string"):
        debug_executor.create(None, lib, tvm.cpu())
    with pytest.raises(BuildError, match="differs"):
        debug_executor.create(json.dumps({"nodes": []}), lib, tvm.cpu())


# ---- tvm.runtime.profiler_vm -----------------------------------------------------------------

def test_profiler_vm_reports_each_kernel_call():
    from tvm.runtime import profiler_vm

    assert relay.vm.VirtualMachineProfiler is profiler_vm.VirtualMachineProfiler
    assert profiler_vm.enabled()
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    flag = relay.var("flag", shape=(), dtype="bool")
    helper = relay.GlobalVar("helper")
    mod = IRModule()
    mod[helper] = relay.Function([y], relay.nn.relu(y))
    mod["main"] = relay.Function([x, flag], relay.If(
        flag, relay.exp(relay.Call(helper, [x])), relay.negative(x)))
    exe = relay.vm.compile(mod, target="llvm")
    vm = profiler_vm.VirtualMachineProfiler(exe, tvm.cpu())
    a = RNG.uniform(-1, 1, (2, 3)).astype("float32")
    rep = vm.profile(a, np.array(True), func_name="main")
    names = [c["Name"] for c in rep.calls]
    assert len(names) == 2 and "relu" in names[0] and "exp" in names[1]  # no VM built-ins
    assert all(c["Argument Shapes"] == "float32[2, 3], float32[2, 3]" for c in rep.calls)
    assert rep.configuration["Executor"] == "VM"
    np.testing.assert_allclose(vm.get_outputs()[0].numpy(), np.exp(np.maximum(a, 0)),
                               rtol=1e-6)
    rep = vm.profile(a, np.array(False))
    assert len(rep.calls) == 1 and "negative" in rep.calls[0]["Name"]
    np.testing.assert_allclose(vm.get_outputs()[0].numpy(), -a)
    # the instrumentation is off again: a plain invoke still works
    np.testing.assert_allclose(vm.invoke("main", a, np.array(False)).numpy(), -a)
    with pytest.raises(NotProvidedError, match="collectors"):
        vm.profile(a, np.array(True), collectors=["papi"])


def test_profiler_vm_lists_kernels_only_not_runtime_builtins():
    # a new-user trial: matches over ADT values listed ffi.ArrayContains (the VM's constructor
    # tag test) as a kernel
    from tvm.runtime import profiler_vm

    mod = relay.fromtext("""#[version = "0.0.5"]
type MyList[A] { MyCons(A, MyList[A]), MyNil, }
def @sum_list(%l: MyList[int32]) -> int32 {
  match (%l) {
    MyCons(%h, %t) => add(%h, @sum_list(%t)),
    MyNil => 0,
  }
}
def @main(%n: int32) -> int32 {
  @sum_list(MyCons(%n, MyCons(2, MyCons(3, MyNil))))
}
""")
    exe = relay.vm.compile(mod, target="llvm")
    vm = profiler_vm.VirtualMachineProfiler(exe, tvm.cpu())
    rep = vm.profile(np.array(7, "int32"))
    assert int(vm.get_outputs()[0].numpy()) == 12
    names = [c["Name"] for c in rep.calls]
    assert len(names) == 3 and all("add" in n for n in names), names  # one add per MyCons
    assert "ffi." not in str(rep) and "vm." not in str(rep)


# ---- tvm.runtime.ndarray, relay.backend.executor_factory ---------------------------------------

def test_runtime_ndarray_is_tvm_nd():
    import tvm.runtime.ndarray as ndarray

    assert ndarray is tvm.nd and tvm.runtime.ndarray is tvm.nd
    t = ndarray.array(np.arange(6, dtype="int32").reshape(2, 3))
    assert isinstance(t, ndarray.NDArray) and isinstance(t, tvm.runtime.Tensor)
    np.testing.assert_array_equal(t.numpy(), np.arange(6).reshape(2, 3))
    e = ndarray.empty((3,), "float16")
    assert tuple(e.shape) == (3,) and str(e.dtype) == "float16"


def test_executor_factory_names_the_build_result():
    from tvm.relay.backend import executor_factory

    lib = relay.build(_dense_relu_exp(), target="llvm")
    assert isinstance(lib, executor_factory.GraphExecutorFactoryModule)
    assert isinstance(lib, executor_factory.ExecutorFactoryModule)
    assert relay.backend.executor_factory is executor_factory
    assert not hasattr(executor_factory, "AOTExecutorFactoryModule")
    with pytest.raises(NotProvidedError, match="no ahead-of-time"):
        executor_factory.AOTExecutorFactoryModule  # noqa: B018


# ---- SplitArgs ---------------------------------------------------------------------------------

def test_split_args_chains_concatenates():
    xs = [relay.var(f"x{i}", shape=(2, i + 1)) for i in range(7)]
    mod = IRModule.from_expr(relay.Function(xs, relay.concatenate(xs, axis=1)))
    got = relay.transform.SplitArgs(4)(mod)  # 3 inputs + the output per kernel

    def fenced(fields):  # 0.19's form: the whole tuple wrapped
        return relay.annotation.stop_fusion(relay.Tuple(fields))

    c1 = relay.concatenate(fenced(xs[:3]), axis=1)
    c2 = relay.concatenate(fenced([c1] + xs[3:5]), axis=1)
    expected = relay.Function(xs, relay.concatenate(fenced([c2] + xs[5:]), axis=1))
    assert structural_equal(got["main"], relay.transform.InferType()(
        IRModule.from_expr(expected))["main"])
    vals = [RNG.uniform(-1, 1, (2, i + 1)).astype("float32") for i in range(7)]
    ref = np.concatenate(vals, axis=1)
    np.testing.assert_array_equal(
        relay.create_executor("debug", mod=got).evaluate()(*vals).numpy(), ref)
    lib = relay.build(got, target="llvm")
    nodes = json.loads(lib.get_graph_json())["nodes"]
    kernels = [n for n in nodes if n["op"] != "null"]
    assert len(kernels) == 3 and all(len(n["inputs"]) <= 3 for n in kernels)
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    m.run(**{f"x{i}": v for i, v in enumerate(vals)})
    np.testing.assert_array_equal(m.get_output(0).numpy(), ref)
    exe = relay.vm.compile(got, target="llvm")
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    np.testing.assert_array_equal(vm.invoke("main", *vals).numpy(), ref)


def test_stop_fusion_of_a_tuple_is_the_identity_and_fences_each_field():
    # 0.19's stop_fusion takes any type (IdentityRel); of a tuple, each field ends its kernel
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3))
    t = relay.annotation.stop_fusion(relay.Tuple([relay.exp(x), relay.negative(y)]))
    out = relay.nn.relu(relay.concatenate(t, axis=0))
    mod = relay.transform.InferType()(IRModule.from_expr(relay.Function([x, y], out)))
    assert mod["main"].body.args[0].args[0].checked_type == relay.TupleType(
        [relay.TensorType((2, 3), "float32")] * 2)
    a = RNG.uniform(-1, 1, (2, 3)).astype("float32")
    b = RNG.uniform(-1, 1, (2, 3)).astype("float32")
    ref = np.maximum(np.concatenate([np.exp(a), -b], axis=0), 0)
    np.testing.assert_allclose(
        relay.create_executor("debug", mod=mod).evaluate()(a, b).numpy(), ref, rtol=1e-6)
    with tvm.transform.PassContext(opt_level=3):
        fused = relay.transform.FuseOps()(mod)
    # exp and negative end their kernels; concatenate and relu fuse
    names = sorted(c.op.attrs["Primitive"] and c.op.body.op.name for c in
                   post_order(fused["main"].body) if isinstance(c, relay.Call)
                   and isinstance(c.op, relay.Function))
    assert names == ["exp", "negative", "nn.relu"]
    lib = relay.build(mod, target="llvm")
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    m.run(x=a, y=b)
    np.testing.assert_allclose(m.get_output(0).numpy(), ref, rtol=1e-6)
    with pytest.raises(relay.errors.TypeInferenceError, match="tensor or a tuple of tensors"):
        f = relay.var("f", relay.FuncType([], relay.TensorType((), "float32")))
        relay.transform.InferType()(IRModule.from_expr(relay.Function(
            [f], relay.annotation.stop_fusion(f))))


def test_split_args_leaves_small_concatenates_and_checks_the_limit():
    xs = [relay.var(f"x{i}", shape=(2,)) for i in range(3)]
    mod = relay.transform.InferType()(
        IRModule.from_expr(relay.Function(xs, relay.concatenate(xs, axis=0))))
    assert structural_equal(relay.transform.SplitArgs(5)(mod)["main"], mod["main"])
    assert structural_equal(relay.transform.SplitArgs(0)(mod)["main"], mod["main"])
    with pytest.raises(relay.errors.RelayError, match="leaves no argument"):
        relay.transform.SplitArgs(1)(mod)
    # new-user trials: SplitArgs(-1) was refused as "leaving no argument" when it ran, then as
    # negative; 0.19 took a uint64_t, and its relay.build passed -1 for a target without a
    # limit: no split
    for off in (-1, -7, np.int64(-1)):
        assert structural_equal(relay.transform.SplitArgs(off)(mod)["main"], mod["main"])
    for bad in (2.5, "4", True):
        with pytest.raises(relay.errors.RelayError,
                           match=rf"^SplitArgs: max_function_args must be an int \(the most "
                                 rf"arguments a kernel may take; 0 or a negative count turns the "
                                 rf"pass off\), got {re.escape(repr(bad))}$"):
            relay.transform.SplitArgs(bad)
    assert structural_equal(relay.transform.SplitArgs(np.int64(5))(mod)["main"], mod["main"])


# ---- PartitionGraph, ManifestAlloc --------------------------------------------------------------

def test_partition_graph_lifts_regions_to_global_functions():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3))
    bx, by = cb(x, "ccompiler"), cb(y, "ccompiler")
    ea = ce(relay.add(bx, by), "ccompiler")
    es = ce(relay.subtract(bx, by), "ccompiler")
    c = relay.const(np.full((2, 3), 2.0, "float32"))
    m = ce(relay.multiply(cb(ea, "ccompiler"), cb(c, "ccompiler")), "ccompiler")
    mod = IRModule.from_expr(relay.Function([x, y], relay.Tuple([m, relay.exp(es)])))
    got = relay.transform.PartitionGraph()(mod)

    # expected: a two-output region (a tuple, read by projections) and one with the
    # constant bound inside
    p0, p1 = relay.var("ccompiler_0_i0", shape=(2, 3)), relay.var("ccompiler_0_i1", shape=(2, 3))
    q0 = relay.var("ccompiler_2_i0", shape=(2, 3))

    def attrs(name):
        return {"Primitive": 1, "Inline": 1, "Compiler": "ccompiler", "global_symbol": name}

    f0 = relay.Function([p0, p1], relay.Tuple([relay.add(p0, p1), relay.subtract(p0, p1)]))
    f2 = relay.Function([q0], relay.multiply(q0, c))
    names = sorted(gv.name_hint for gv in got.functions)
    assert names == ["main", "tvmgen_default_ccompiler_main_0",
                     "tvmgen_default_ccompiler_main_2"]
    exp = IRModule()
    g0, g2 = relay.GlobalVar(names[1]), relay.GlobalVar(names[2])
    t23 = relay.TensorType((2, 3), "float32")  # the return types are written, as 0.19's
    exp[g0] = relay.Function(f0.params, f0.body, relay.TupleType([t23, t23]), (),
                             DictAttrs(attrs(names[1])))
    exp[g2] = relay.Function(f2.params, f2.body, t23, (), DictAttrs(attrs(names[2])))
    call = relay.Call(g0, [x, y])
    exp["main"] = relay.Function([x, y], relay.Tuple([
        relay.Call(g2, [relay.TupleGetItem(call, 0)]), relay.exp(relay.TupleGetItem(call, 1))]))
    assert structural_equal(got, relay.transform.InferType()(exp))

    a, b = RNG.uniform(-1, 1, (2, 3)).astype("float32"), RNG.uniform(-1, 1, (2, 3)).astype(
        "float32")
    r = relay.create_executor("debug", mod=got).evaluate()(a, b)
    np.testing.assert_allclose(r[0].numpy(), (a + b) * 2, rtol=1e-6)
    np.testing.assert_allclose(r[1].numpy(), np.exp(a - b), rtol=1e-6)
    with pytest.raises(BuildError, match="external compiler 'ccompiler'"):
        relay.build(got, target="llvm")
    with pytest.raises(BuildError, match="external compiler 'ccompiler'"):
        relay.vm.compile(got, target="llvm")

    unbound = relay.transform.PartitionGraph("mine", bind_constants=False)(mod)
    f = unbound["tvmgen_mine_ccompiler_main_2"]
    assert len(f.params) == 2  # the constant stays an argument
    r = relay.create_executor("debug", mod=unbound).evaluate()(a, b)
    np.testing.assert_allclose(r[0].numpy(), (a + b) * 2, rtol=1e-6)


def test_partition_graph_after_annotate_target_and_merge():
    def relu_only(call):
        return True

    x = relay.var("x", shape=(4,))
    w = relay.var("w", shape=(4,))
    body = relay.exp(relay.nn.relu(relay.nn.relu(x) * w))
    mod = IRModule.from_expr(relay.Function([x, w], body))
    with temp_op_attr("nn.relu", "target.mycc", relu_only):
        annotated = relay.transform.AnnotateTarget("mycc")(mod)
    merged = relay.transform.MergeCompilerRegions()(annotated)
    got = relay.transform.PartitionGraph()(merged)
    ext = [gv.name_hint for gv, f in got.functions.items()
           if f.attrs is not None and f.attrs.get("Compiler") == "mycc"]
    assert len(ext) == 2  # the two relus, separated by the multiply TVM keeps
    for name in ext:
        ops = relay.testing.count_ops(got[name])
        assert ops == {"nn.relu": 1}
    # no annotation is left anywhere
    assert "annotation.compiler" not in got.astext()
    a, b = RNG.uniform(-1, 1, 4).astype("float32"), RNG.uniform(-1, 1, 4).astype("float32")
    out = relay.create_executor("debug", mod=got).evaluate()(a, b).numpy()
    np.testing.assert_allclose(out, np.exp(np.maximum(np.maximum(a, 0) * b, 0)), rtol=1e-6)


def test_partition_graph_drops_default_regions_and_flattens_tuple_ends():
    x = relay.var("x", shape=(3,))
    s = relay.add(cb(x, "cc"), cb(x, "cc"))  # one region that x enters twice
    t = ce(relay.Tuple([relay.nn.relu(s), relay.negative(s)]), "cc")
    d = ce(relay.exp(cb(relay.TupleGetItem(t, 0), "default")), "default")
    mod = IRModule.from_expr(relay.Function([x], relay.add(d, relay.TupleGetItem(t, 1))))
    got = relay.transform.PartitionGraph()(mod)
    assert sorted(gv.name_hint for gv in got.functions) == ["main", "tvmgen_default_cc_main_0"]
    f = got["tvmgen_default_cc_main_0"]
    assert len(f.params) == 1  # x entered twice: one parameter
    assert isinstance(f.body, relay.Tuple) and len(f.body.fields) == 2  # the tuple's ends
    assert relay.testing.count_ops(got["main"]) == {"exp": 1, "add": 1}  # "default": TVM's
    a = RNG.uniform(-1, 1, 3).astype("float32")
    out = relay.create_executor("debug", mod=got).evaluate()(a).numpy()
    np.testing.assert_allclose(out, np.exp(np.maximum(2 * a, 0)) - 2 * a, rtol=1e-6)


def test_manifest_alloc_is_refused_with_what_to_use():
    with pytest.raises(NotProvidedError, match="relay_tvm.backend.vm_codegen"):
        relay.transform.ManifestAlloc()


# ---- relay.op.strategy -------------------------------------------------------------------------

def test_op_strategy_is_refused_with_where_schedules_live():
    assert not hasattr(relay.op.strategy, "conv2d_strategy")
    with pytest.raises(NotProvidedError, match="relay_tvm.backend.schedule"):
        relay.op.strategy.generic  # noqa: B018
    with pytest.raises(NotProvidedError, match="register_compute"):
        from tvm.relay.op.strategy import x86  # noqa: F401
    with pytest.raises(NotProvidedError, match="op strategy"):
        import tvm.relay.op.strategy.cuda  # noqa: F401


# ---- relay.testing workloads ---------------------------------------------------------------------

def test_workload_params_are_tensors_the_builders_take():
    mod, params = relay.testing.mlp.get_workload(batch_size=1, num_classes=4,
                                                 image_shape=(1, 4, 4))
    assert all(isinstance(v, tvm.nd.NDArray) and isinstance(v, tvm.runtime.Tensor)
               for v in params.values())
    data = RNG.uniform(-1, 1, (1, 1, 4, 4)).astype("float32")
    ref = relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()
    np_params = {k: v.numpy() for k, v in params.items()}
    ref_np = relay.create_executor("debug", mod=mod, params=np_params).evaluate()(data).numpy()
    np.testing.assert_array_equal(ref, ref_np)
    lib = relay.build(mod, target="llvm", params=params)
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    m.run(data=data)
    np.testing.assert_allclose(m.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    exe = relay.vm.compile(mod, target="llvm", params=params)
    out = relay.vm.VirtualMachine(exe, tvm.cpu()).invoke("main", data).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


# ---- tvm.ir.save_json / load_json --------------------------------------------------------------

def test_save_json_round_trips_relay_modules_and_expressions():
    x = relay.var("x", shape=(2, 3))
    c = relay.const(np.array([[1.0, -0.0, np.nan], [np.inf, 1e-40, 3.25]], "float32"))
    mod = IRModule.from_expr(relay.Function([x], relay.nn.relu(x * c + relay.const(1.5))))
    text = tvm.ir.save_json(mod)
    assert json.loads(text)["kind"] == "IRModule"
    back = tvm.ir.load_json(text)
    assert isinstance(back, IRModule)
    tvm.ir.assert_structural_equal(back, mod)
    assert back["main"].ret_type is None  # as saved: loading adds no annotation
    got = back["main"].body.args[0].args[0].args[1].data.numpy()
    assert got.tobytes() == c.data.numpy().tobytes()  # bit for bit (NaN, -0.0, subnormal)
    a = RNG.uniform(-1, 1, (2, 3)).astype("float32")
    np.testing.assert_array_equal(
        relay.create_executor("debug", mod=back).evaluate()(a).numpy(),
        relay.create_executor("debug", mod=mod).evaluate()(a).numpy())
    e = x * c
    assert tvm.ir.structural_equal(tvm.ir.load_json(tvm.ir.save_json(e)), e, map_free_vars=True)
    n = tvm.tirx.Var("n", "int32")  # TVM's own objects: TVM's JSON, unchanged
    assert "relay_tvm_json" not in tvm.ir.save_json(n)
    assert tvm.ir.load_json(tvm.ir.save_json(n)).name == "n"

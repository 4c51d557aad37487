"""0.19-era scripts on TVM 0.27: the tvm.relay alias and the TVM names relay_tvm restores."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.analysis import post_order_visit
from relay_tvm.errors import BuildError, RelayError


def _interp(func, *args):
    mod = relay.IRModule.from_expr(func)
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def _interp_mod(func, *args):
    mod = relay.IRModule.from_expr(func)
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def test_tvm_relay_is_relay_tvm_with_019_module_paths():
    import tvm.relay
    import tvm.relay.testing
    from tvm.relay.expr_functor import ExprMutator
    from tvm.relay.scope_builder import ScopeBuilder
    from tvm.relay.transform import InferType

    assert tvm.relay is relay
    assert tvm.relay.testing is relay.testing
    assert relay.ty.TensorType is relay.TensorType
    assert relay.expr.Call is relay.Call
    assert ExprMutator is relay.ExprMutator and ScopeBuilder is relay.ScopeBuilder
    assert InferType is relay.transform.InferType
    import relay_tvm.expr_functor as ef

    assert ef.ExprVisitor is relay.ExprVisitor


def test_autotvm_import_names_the_meta_schedule_tuning_to_use():
    """A new-user trial: ``from tvm import autotvm`` (TVM 0.19 scripts' tuning) said only
    "cannot import name 'autotvm' from 'tvm'"."""
    from relay_tvm.errors import ModuleNotProvidedError

    msg = (r"^tvm\.autotvm: TVM removed AutoTVM in 0\.20 \(with Relay\) and relay_tvm does not "
           r"provide it; relay_tvm tunes with TVM's meta_schedule instead: "
           r"relay_tvm\.tune\.extract_tasks\(mod, target, params\) .*relay_tvm\.tune\."
           r"tune_relay\(mod, params, target, work_dir, max_trials_global\) .*relay\.build\("
           r"mod, target, params=params, database=db\)")
    with pytest.raises(ModuleNotProvidedError, match=msg) as e:
        from tvm import autotvm  # noqa: F401
    assert isinstance(e.value, ImportError) and isinstance(e.value, RelayError)
    import importlib
    import inspect

    with pytest.raises(ModuleNotProvidedError, match=msg):  # again: nothing half-made is kept
        importlib.import_module("tvm.autotvm.tuner")
    assert "tvm.autotvm" not in sys.modules and not hasattr(tvm, "autotvm")
    # the auto-scheduler too (it was a plain ImportError; fresh-user trial)
    with pytest.raises(ModuleNotProvidedError, match=r"^tvm\.auto_scheduler: TVM removed the "
                                                     r"auto-scheduler \(Ansor\) in 0\.20 .*"
                                                     r"relay_tvm\.tune\.tune_relay\("):
        from tvm import auto_scheduler  # noqa: F401
    assert "tvm.auto_scheduler" not in sys.modules
    # what it names exists
    from relay_tvm.tune import extract_tasks, tune_relay  # noqa: F401

    assert "database" in inspect.signature(relay.build).parameters


def test_alias_opt_out_by_environment_variable():
    env = dict(os.environ, RELAY_TVM_NO_TVM_ALIAS="1")
    code = ("import relay_tvm, tvm\n"
            "try:\n    import tvm.relay\nexcept ModuleNotFoundError:\n    print('absent')\n"
            "print(hasattr(tvm, 'nd'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                         timeout=300)
    assert out.stdout.split() == ["absent", "False"], out.stderr


def test_tvm_relay_attribute_after_import_relay_tvm():
    """From the new-user trial: ``import tvm, relay_tvm`` then ``tvm.relay.fromtext`` was an
    AttributeError until ``import tvm.relay`` ran (a fresh process: the test session has
    imported tvm.relay already)."""
    code = ("import tvm, relay_tvm\n"
            "f = tvm.relay.fromtext('#[version = \"0.0.5\"]\\ndef @main(%x: float32) { %x }')\n"
            "print(tvm.relay is relay_tvm, len(f.functions))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                         timeout=300)
    assert out.stdout.split() == ["True", "1"], out.stderr


def test_tvm_nd_and_tir_names():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    t = tvm.nd.array(a)
    assert isinstance(t, tvm.nd.NDArray)
    np.testing.assert_array_equal(t.numpy(), a)
    # 0.19's deprecated NDArray.asnumpy on compiled results (fresh-user trial: AttributeError)
    np.testing.assert_array_equal(t.asnumpy(), a)
    x = relay.var("x", shape=(2, 3))
    ev = relay.create_executor("graph", mod=relay.IRModule.from_expr(
        relay.Function([x], relay.add(x, x))), target="llvm").evaluate()
    np.testing.assert_array_equal(ev(a).asnumpy(), 2 * a)
    e = tvm.nd.empty((4,), "int32")
    assert e.shape == (4,) and str(e.dtype) == "int32"
    assert tvm.tir.IntImm is tvm.tirx.IntImm
    assert tvm.tir.Any is relay.Any
    assert tvm.device("llvm") == tvm.cpu(0)
    assert tvm.cpu(0).device_type == 1 and tvm.cpu(3).device_id == 3  # kDLCPU
    from tvm.contrib import graph_executor

    assert graph_executor.GraphModule is relay.runtime.GraphModule
    from tvm.contrib import nvcc

    assert nvcc.have_fp16("6.0") and not nvcc.have_fp16("5.0")
    x = relay.var("x", shape=(2,))
    res = _interp_mod(relay.Function([x], relay.Tuple([x, x + x])), np.ones(2, "float32"))
    assert isinstance(res, tvm.runtime.container.ADT)
    np.testing.assert_array_equal(res[1].numpy(), [2, 2])
    from tvm.contrib import utils

    tmp = utils.tempdir()
    assert os.path.isdir(os.path.dirname(tmp.relpath("x.so")))


def test_irmodule_from_expr_and_constructor_take_relay():
    x = relay.var("x", shape=(3,))
    f = relay.Function([x], relay.exp(x) * x)
    mod = tvm.IRModule.from_expr(f)
    assert isinstance(mod, relay.IRModule) and isinstance(mod, tvm.IRModule)
    a = np.array([0.5, -1.0, 2.0], "float32")
    np.testing.assert_allclose(_interp(mod["main"], a), np.exp(a) * a, rtol=1e-6)
    m2 = tvm.IRModule()  # called from a module that imported relay: a Relay module
    m2["main"] = f
    assert isinstance(m2, relay.IRModule)
    gv = relay.GlobalVar("main")
    assert isinstance(tvm.IRModule({gv: f}), relay.IRModule)


def test_irmodule_keeps_tvm_modules_for_tvm_content():
    from tvm import te

    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    prim = te.create_prim_func([A, B])
    mod = tvm.IRModule({"main": prim})
    assert type(mod) is tvm.ir.module.IRModule
    assert isinstance(tvm.IRModule.from_expr(prim), tvm.ir.module.IRModule)


def _count_calls(mod, name):
    n = [0]

    def visit(e):
        if isinstance(e, relay.Call) and getattr(e.op, "name", None) == name:
            n[0] += 1

    for _, f in mod.functions.items():
        post_order_visit(f, visit)
    return n[0]


def _foldable():
    x = relay.var("x", shape=(4,))
    return relay.Function([x], x * relay.add(relay.const(1.0), relay.const(2.0)))


def test_tvm_pass_context_opt_level_drives_relay_build():
    a = np.arange(4, dtype="float32")
    counts = {}
    for level in (0, 3):
        with tvm.transform.PassContext(opt_level=level):
            lib = relay.build(tvm.IRModule.from_expr(_foldable()), target="llvm")
        counts[level] = _count_calls(lib.optimized_mod, "add")
        gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
        gm.set_input("x", a)
        gm.run()
        np.testing.assert_allclose(gm.get_output(0).numpy(), a * 3.0)
    assert counts == {0: 1, 3: 0}  # FoldConstant (opt level 2) ran only at 3


def test_tvm_pass_context_relay_config_and_disabled_pass():
    seq = tvm.transform.Sequential([relay.transform.InferType(), relay.transform.FoldConstant()])
    assert isinstance(seq, relay.transform.Sequential)
    assert isinstance(relay.transform.FoldConstant(), tvm.transform.Pass)
    assert not isinstance(relay.var("x"), tvm.transform.Pass)
    mod = tvm.IRModule.from_expr(_foldable())
    with tvm.transform.PassContext(opt_level=3, disabled_pass=["FoldConstant"],
                                   config={"relay.FuseOps.max_depth": 7}) as ctx:
        assert relay.transform.PassContext.current().config["relay.FuseOps.max_depth"] == 7
        assert _count_calls(seq(mod), "add") == 1
        assert ctx.opt_level == 3
    with tvm.transform.PassContext(opt_level=3):
        assert _count_calls(seq(mod), "add") == 0
    assert relay.transform.PassContext.current().opt_level == 2  # nothing left entered


@pytest.mark.parametrize("config,message", [
    ({"tir.disable_vectorise": True},
     r"unknown config option 'tir.disable_vectorise'; did you mean 'tir.disable_vectorize'"),
    ({"tirx.unroll_loops": 1}, r"unknown config option 'tirx.unroll_loops'"),
    ({"tir.disable_vectorize": "yes"},
     r"config option 'tir.disable_vectorize' takes a bool, got str 'yes'"),
    ({"tir.vtcm_capacity": 2.5}, r"config option 'tir.vtcm_capacity' takes an int, got float"),
])
def test_tvm_config_option_misspelt_or_mistyped_is_refused_by_the_name_given(config, message):
    """TVM's own error listed all its options (no nearest name) for a misspelt ``tir.X`` key, and
    named the renamed ``tirx.X`` key and an FFI type for a wrong value, at build time
    (fresh-user finding); both are refused when the context is made."""
    with pytest.raises(relay.RelayError, match=message):
        tvm.transform.PassContext(opt_level=3, config=config)
    ok = tvm.transform.PassContext(opt_level=3, config={"tir.disable_vectorize": 1})
    assert int(ok.config["tirx.disable_vectorize"]) == 1


def test_c_target_build_warns_once_about_a_key_without_effect():
    """The C target's code generation derived a TVM context carrying the relay.* keys, which
    relay_tvm's compat context checked again: a key without effect warned twice. Both derived
    contexts (this and the CPU TIR pipeline's) now come from one helper that leaves them out."""
    import warnings

    x = relay.var("x", shape=(1, 4))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with tvm.transform.PassContext(opt_level=3,
                                       config={"relay.backend.use_auto_scheduler": True}):
            relay.build(mod, "c")
    assert len([w for w in got if "use_auto_scheduler" in str(w.message)]) == 1


@pytest.mark.parametrize("make", ["tvm", "relay"])
@pytest.mark.parametrize("config", [[("relay.FuseOps.max_depth", 3)], "relay.FuseOps.max_depth"])
def test_config_that_is_no_dict_is_refused(make, config):
    """From a fresh-user trial: ``config=[(key, value)]`` raised AttributeError ('list' object
    has no attribute 'items') from tvm.transform.PassContext; both contexts take a dict only,
    as TVM's does, and say so."""
    cls = tvm.transform.PassContext if make == "tvm" else relay.transform.PassContext
    with pytest.raises(relay.RelayError, match=r"^PassContext: config must be a dict of option "
                                               r"name -> value, got (list|str) "):
        cls(opt_level=3, config=config)


@pytest.mark.parametrize("config,message", [
    ({"relay.AlterOpLayout.winograd": "8"}, r"'relay.AlterOpLayout.winograd' must be 'auto', "
                                            r"'never', 2 or 4, got '8'"),
    ({"relay.FuseOps.max_depth": "abc"}, r"'relay.FuseOps.max_depth' must be a positive int"),
    ({"relay.FuseOps.max_depth": -1}, r"'relay.FuseOps.max_depth' must be a positive int, got -1"),
    ({"relay.FuseOps.link_params": "false"}, r"must be True or False, got 'false'"),
    ({"relay.debug.check_each_pass": 2}, r"must be True or False, got 2"),
    ({"relay.backend.use_meta_schedule": "yes"}, r"must be True or False, got 'yes'"),
])
@pytest.mark.parametrize("make", ["tvm", "relay"])
def test_relay_config_value_refused_when_the_context_is_made(config, message, make):
    """From a fresh-user trial: a bad value of a relay.* option (the Winograd word "8", a
    max_depth of "abc") built without error unless a pass that reads it ran (a module without
    convolutions, or opt level 2); 0.19 converted every option to its type when the context
    was made, and so does relay_tvm now ("false" would have been true as a truth value)."""
    cls = tvm.transform.PassContext if make == "tvm" else relay.transform.PassContext
    with pytest.raises(relay.RelayError, match=message):
        cls(opt_level=3, config=config)
    ok = cls(opt_level=3, config={"relay.AlterOpLayout.winograd": "Never",
                                  "relay.FuseOps.link_params": 0,
                                  "relay.debug.check_each_pass": np.bool_(True),
                                  "relay.FuseOps.max_depth": tvm.tirx.IntImm("int32", 7)})
    from relay_tvm.transform.pass_infra import config_value
    from relay_tvm.transform.winograd_choice import winograd_mode

    with ok:
        assert winograd_mode() == "never"
        cfg = relay.transform.PassContext.current().config
        assert config_value(cfg, "relay.FuseOps.link_params", True) is False
        assert config_value(cfg, "relay.debug.check_each_pass", False) is True
        assert config_value(cfg, "relay.FuseOps.max_depth", 256) == 7
    assert config_value({}, "relay.FuseOps.max_depth", 256) == 256


def test_pass_context_config_reads_back_the_options_given():
    """``ctx.config`` read back {} for relay.* options of a tvm.transform.PassContext although
    they were honoured; it now gives the options as given (tvm.relay 0.19's mapping), TVM's
    own ones too (a renamed ``tir.X`` key under both names)."""
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(6):
        y = relay.tanh(relay.add(y, relay.const(1.0)))
    mod = tvm.IRModule.from_expr(relay.Function([x], y))
    given = {"relay.FuseOps.max_depth": 2, "tir.disable_vectorize": True}
    ctx = tvm.transform.PassContext(opt_level=3, config=given)
    assert ctx.config["relay.FuseOps.max_depth"] == 2
    assert bool(ctx.config["tir.disable_vectorize"]) and bool(
        ctx.config["tirx.disable_vectorize"])
    assert {k: ctx.config[k] for k in given} == given
    with ctx:
        assert tvm.transform.PassContext.current().config["relay.FuseOps.max_depth"] == 2
        lib = relay.build(mod, target="llvm")  # honoured: groups of at most 2 operators
    with tvm.transform.PassContext(opt_level=3):
        one = relay.build(mod, target="llvm")
    def kernel_calls(built):
        return sum(n["op"] == "tvm_op" for n in json.loads(built.get_graph_json())["nodes"])

    assert kernel_calls(lib) >= 6 and kernel_calls(one) == 1  # 12 operators
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    a = np.linspace(-1, 0, 4).astype("float32")
    gm.set_input("x", a)
    gm.run()
    want = a
    for _ in range(6):
        want = np.tanh(want + 1)
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5)
    rctx = relay.transform.PassContext(config={"relay.FuseOps.max_depth": 5})
    assert dict(rctx.config) == {"relay.FuseOps.max_depth": 5}
    assert dict(tvm.transform.PassContext().config) == {}
    tvm_only = tvm.transform.PassContext(config={"tirx.disable_vectorize": True})
    assert dict(tvm_only.config) == {"tirx.disable_vectorize": True}


def test_tvm_pass_context_rejects_unknown_tvm_keys():
    with pytest.raises(RelayError, match="unknown config option 'no.such.option'; TVM's options: "
                       r".*tirx\.disable_vectorize"):
        tvm.transform.PassContext(config={"no.such.option": 1})


def test_structural_equal_on_relay_and_tvm_nodes():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    f = relay.Function([x], x + x)
    tvm.ir.assert_structural_equal(f, relay.Function([y], y + y))
    assert not tvm.ir.structural_equal(f, relay.Function([y], y * y))
    with pytest.raises(RelayError, match="structural mismatch"):
        tvm.ir.assert_structural_equal(f, relay.Function([y], y * y))
    assert tvm.ir.structural_hash(f) == tvm.ir.structural_hash(relay.Function([y], y + y))
    tvm.ir.assert_structural_equal(tvm.tirx.const(3), tvm.tirx.const(3))


def test_assert_structural_equal_raises_a_value_error():
    # TVM 0.19 and 0.27 raise ValueError; relay_tvm's error is that and a RelayError
    from relay_tvm.errors import StructuralMismatchError

    x = relay.var("x", shape=(2,))
    for check in (tvm.ir.assert_structural_equal, relay.analysis.assert_structural_equal,
                  relay.analysis.assert_graph_equal):
        with pytest.raises(ValueError, match="^structural mismatch:") as info:
            check(x + relay.const(1.0), x + relay.const(2.0))
        assert isinstance(info.value, StructuralMismatchError)
        assert isinstance(info.value, RelayError)
        assert str(info.value).endswith("--- first difference ---\nlhs:\n    1f\nrhs:\n    2f\n"
                                        "in lhs:\n    add(%x, 1f)\nin rhs:\n    add(%x, 2f)")
    with pytest.raises(ValueError):  # TVM's own nodes still go to TVM
        tvm.ir.assert_structural_equal(tvm.runtime.convert([1]), tvm.runtime.convert([2]))


def test_structural_mismatch_pairs_bound_variables():
    # renamed bound variables are no difference; the first real one is reported
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    with pytest.raises(ValueError) as info:
        tvm.ir.assert_structural_equal(
            relay.Function([x], relay.exp(x) + relay.const(1.0)),
            relay.Function([y], relay.exp(y) + relay.const(2.0)))
    where = str(info.value).split("--- first difference ---\n")[1]
    assert where.startswith("lhs:\n    1f\nrhs:\n    2f\n")
    # a variable paired with another where it is bound is named with its counterpart
    with pytest.raises(ValueError, match=r"first difference \(%x was paired with %y where it is "
                                         r"bound\) ---\nlhs:\n    %x\nrhs:\n    %x\n"):
        tvm.ir.assert_structural_equal(relay.Function([x, y], x + y),
                                       relay.Function([y, x], x + y))
    # free variables: the same object unless map_free_vars
    with pytest.raises(ValueError, match=r"\(free variables must be the same object; "
                                         r"map_free_vars=True pairs distinct ones\)"):
        tvm.ir.assert_structural_equal(relay.exp(x), relay.exp(y))
    tvm.ir.assert_structural_equal(relay.exp(x), relay.exp(y), map_free_vars=True)


def test_relay_errors_are_tvm_errors():
    with pytest.raises(tvm.error.TVMError):
        relay.transform.PassContext(opt_level=9)
    assert issubclass(relay.TypeInferenceError, RuntimeError)


def test_get_source_of_built_library():
    x = relay.var("x", shape=(8,))
    lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], relay.sigmoid(x))),
                      target="llvm")
    ll = lib.get_source()
    asm = lib.get_source("asm")
    assert "define" in ll and "sigmoid" in ll
    assert "sigmoid" in asm and "define" not in asm
    assert lib.lib.get_source("asm") == asm
    assert "sigmoid" in lib.lib.imported_modules[0].get_source()
    # with bound parameters (held by a const_loader module that imports the kernels) the
    # first imported module is still the kernels' library
    w = relay.var("w", shape=(8,))
    lib = relay.build(tvm.IRModule.from_expr(relay.Function([x, w], relay.sigmoid(x * w))),
                      target="llvm", params={"w": np.arange(8, dtype="float32")})
    assert [m.kind for m in lib.lib.mod.imports] == ["const_loader"]
    assert "sigmoid" in lib.lib.imported_modules[0].get_source()


def test_get_source_of_a_cuda_build_019_paths():
    """0.19 scripts print a GPU build's CUDA C as ``lib.get_lib().imported_modules[0]
    .get_source()``; that gave the host's LLVM IR (fresh-user trial). ``get_source("cuda")``
    is the CUDA C alone (building needs no GPU)."""
    x = relay.var("x", shape=(8,))
    lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], relay.sigmoid(x))),
                      target="cuda -arch=sm_80")
    first = lib.get_lib().imported_modules[0]
    assert first.kind == "cuda"
    assert "__global__" in first.get_source() and "target datalayout" not in first.get_source()
    cu = lib.get_source("cuda")
    assert "__global__" in cu and "target datalayout" not in cu


def test_tvm_runtime_load_module_of_exported_graph_library(tmp_path):
    # 0.19's deploy script: tvm.runtime.load_module, then lib["default"](dev) into
    # tvm.contrib.graph_executor.GraphModule
    from tvm.contrib import graph_executor

    x = relay.var("x", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))
    path = str(tmp_path / "net.so")
    relay.build(mod, target="llvm", mod_name="net").export_library(path)
    lib = tvm.runtime.load_module(path)
    m = graph_executor.GraphModule(lib["net"](tvm.cpu(0)))
    m.set_input("x", np.array([[-1, 2, 3], [4, -5, 6]], "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), [[0, 4, 6], [8, 0, 12]])
    with pytest.raises(BuildError, match=r"no function 'default'.*m\['net'\]\(dev\) makes a "):
        lib["default"]
    assert callable(lib["vm_load_executable"])  # TVM's own functions are found as before

    vm_path = str(tmp_path / "vm.so")
    relay.vm.compile(mod, target="llvm").mod.export_library(vm_path)
    with pytest.raises(BuildError, match=r"VM executable .* relay.vm.load_executable"):
        tvm.runtime.load_module(vm_path)["default"]


def test_executor_and_runtime_options():
    from tvm.relay.backend import Executor, Runtime

    x = relay.var("x", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.abs(x)))
    lib = relay.build(mod, target="llvm", executor=Executor("graph"), runtime=Runtime("cpp"))
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", np.array([-1, 2, -3], "float32"))
    gm.run()
    np.testing.assert_array_equal(gm.get_output(0).numpy(), [1, 2, 3])
    with pytest.raises(BuildError, match="'aot' is not available"):
        Executor("aot")
    with pytest.raises(BuildError, match="'crt' is not available"):
        relay.build(mod, target="llvm", runtime="crt")
    with pytest.raises(BuildError, match="unknown option 'interface-api'"):
        Executor("graph", {"interface-api": "c"})
    # a misspelt name is unknown (not "removed from TVM"), with the close one (new-user trial)
    with pytest.raises(BuildError, match=r"Executor: unknown name 'grph'.*did you mean 'graph'"):
        Executor("grph")


def test_global_type_var_applies_to_types():
    p = relay.Prelude()
    t = relay.TensorType((2,), "float32")
    assert p.list(t) == relay.TypeCall(p.list, (t,))


def test_tvm_testing_019_decorators():
    import tvm.testing

    def f():
        return 1

    assert tvm.testing.uses_gpu(f) is f
    marks = tvm.testing.requires_llvm.marks()
    assert len(marks) == 1 and not marks[0].args[0]  # llvm is there: no skip
    assert tvm.testing.requires_hexagon.marks()[0].args[0]  # skipped here
    assert tvm.testing.requires_some_future_feature.marks()[0].args[0]


def test_tvm_ffi_and_make_node_dict_attrs():
    from tvm._ffi.base import TVMError, py_str

    assert TVMError is tvm.error.TVMError and py_str(b"relay") == "relay"
    assert tvm._ffi.get_global_func("runtime.GetDeviceAttr") is not None
    attrs = tvm.ir.make_node("DictAttrs", Composite="dense", Primitive=1)
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.nn.relu(x), attrs=attrs)
    assert dict(f.attrs.items()) == {"Composite": "dense", "Primitive": 1}


def test_target_takes_019_command_line_strings():
    t = tvm.target.Target("llvm -mtriple=aarch64-linux-gnu -mattr=+neon")
    assert isinstance(t, tvm.target.Target)
    assert str(t.kind) == "llvm" and t.attrs["mtriple"] == "aarch64-linux-gnu"
    assert list(t.attrs["mattr"]) == ["+neon"]
    with tvm.target.Target("llvm -mcpu=skylake"):
        assert tvm.target.Target.current().attrs["mcpu"] == "skylake"
    assert tvm.target.Target({"kind": "llvm"}).kind.name == "llvm"
    # fresh-user trial: a host in the command-line form was passed to TVM untranslated
    t = tvm.target.Target("cuda -arch=sm_80", host="llvm -mtriple=aarch64-linux-gnu")
    assert t.attrs["arch"] == "sm_80" and t.host.attrs["mtriple"] == "aarch64-linux-gnu"
    t = tvm.target.Target("cuda", host="llvm -mtriple=aarch64-linux-gnu")
    assert t.host.attrs["mtriple"] == "aarch64-linux-gnu"


def test_019_target_helpers_and_device_of_a_target():
    """0.19's ``tvm.target.cuda()`` / ``arm_cpu(board)`` / ``intel_graphics()`` ... (the
    relay_quick_start and tune_relay_* tutorials call them) and ``tvm.device(str(target), 0)``,
    whose string is JSON now (fresh-user trial: ValueError "Invalid device")."""
    t = tvm.target.cuda(arch="sm_80")
    assert t.kind.name == "cuda" and t.attrs["arch"] == "sm_80"
    t = tvm.target.cuda(options="-arch=sm_90")
    assert t.attrs["arch"] == "sm_90"
    t = tvm.target.arm_cpu("rasp4b64")
    assert (t.attrs["mtriple"], t.attrs["mcpu"], list(t.attrs["mattr"])) == \
        ("aarch64-linux-gnu", "cortex-a72", ["+neon"])
    assert "arm_cpu" in list(t.keys)
    assert tvm.target.arm_cpu("rasp4b64", options="-mcpu=cortex-a53").attrs["mcpu"] == \
        "cortex-a53"  # a key of the caller's options replaces the board's
    assert tvm.target.rasp().attrs["mtriple"] == "armv7l-linux-gnueabihf"
    assert tvm.target.riscv_cpu().attrs["mabi"] == "lp64d"
    assert tvm.target.intel_graphics().attrs["thread_warp_size"] == 16
    assert tvm.target.mali().kind.name == "opencl"
    assert tvm.target.create("llvm -mcpu=haswell").attrs["mcpu"] == "haswell"
    cpu = tvm.target.Target("llvm")
    for given in (str(cpu), cpu, "llvm -mcpu=haswell", "llvm"):
        assert tvm.device(given, 0) == tvm.cpu(0)
    assert tvm.device(str(tvm.target.cuda(arch="sm_80")), 0) == tvm.cuda(0)


@pytest.mark.parametrize("target, why", [
    ("gpu", "unknown target kind 'gpu'; expected one of \\[.*'c', 'cuda', .*'llvm', "),
    ({"kind": "gpu"}, "unknown target kind 'gpu'"),
    ("nvidia/foo", "unknown target tag 'nvidia/foo'"),
    ({"kind": "llvm", "foo": 1}, "Unknown config option 'foo'"),
    ("gpu -arch=sm_80", "unknown target kind 'gpu'"),  # the 0.19 string form, translated
])
def test_target_of_an_unknown_kind_is_an_input_error_and_a_value_error(target, why):
    """TVM's own ValueError said only 'Target kind "gpu" is not defined'; relay_tvm's names the
    string and the kinds there are, and stays a ValueError for code that caught TVM's."""
    with pytest.raises(relay.InputError, match=why) as info:
        tvm.target.Target(target)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(("tvm.target.Target(", "target 'gpu -arch"))


def test_tvm_testing_parameters_and_targets_with_the_plugin(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "import relay_tvm\npytest_plugins = ['relay_tvm.compat.pytest_plugin']\n")
    (tmp_path / "test_p.py").write_text(
        "import tvm, tvm.testing\n"
        "a, b = tvm.testing.parameters((1, 2), (3, 4))\n"
        "size = tvm.testing.parameter(5, 6)\n"
        "def test_corr(a, b, size):\n    assert b == a + 1 and size in (5, 6)\n"
        "c, d = tvm.testing.parameters(([3, 5], 1), ([4], 2))\n"
        "def test_one_of_pair(c):\n    assert isinstance(c, list)\n"
        "@tvm.testing.parametrize_targets('llvm')\n"
        "def test_targets(target, dev):\n    assert target == 'llvm' and dev == tvm.cpu(0)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=root), cwd=tmp_path)
    # 2 pairs x 2 sizes + 2 lists + 1 target
    assert "7 passed" in out.stdout, out.stdout + out.stderr


def test_tvm_parser_module_of_older_scripts():
    # TVM 0.8-0.12 scripts parse text with tvm.parser (a new user got "module 'tvm' has no
    # attribute 'parser'")
    import tvm.parser

    mod = tvm.parser.parse('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) '
                           '{ add(%x, %x) }')
    out = relay.create_executor("debug", mod=mod).evaluate()(np.array([1, 2], "float32"))
    np.testing.assert_array_equal(out.numpy(), [2, 4])
    assert isinstance(tvm.parser.parse_expr("1f"), relay.Constant)
    assert tvm.parser.fromtext is relay.fromtext


def test_runtime_convert_of_relay_content_stays_python():
    import tvm

    x = relay.var("x", shape=(2,))
    call = relay.exp(x)
    got = tvm.runtime.convert([call, x])
    assert got == [call, x] and got[0] is call
    assert isinstance(tvm.runtime.convert((call,)), list)
    tup = relay.Tuple(tvm.runtime.convert([call]))
    assert tup.fields[0] is call
    arr = tvm.runtime.convert([1, 2])  # TVM values: TVM's conversion, unchanged
    assert not isinstance(arr, list) and [int(v) for v in arr] == [1, 2]


def test_pass_context_refuses_typos_and_bad_levels():
    """Found by the new-user trial: a misspelt relay.* option, a string opt_level and
    FuseOps(fuse_opt_level=9) were accepted (the typo silently ignored)."""
    import warnings

    x = relay.var("x", shape=(1, 4))
    for ctx in (tvm.transform.PassContext, relay.transform.PassContext):
        with pytest.raises(RelayError, match=r"'relay.FuseOps.max_depthh'; did you mean "
                                             r"'relay.FuseOps.max_depth'"):
            ctx(opt_level=3, config={"relay.FuseOps.max_depthh": 3})
        with pytest.raises(RelayError, match=r"opt_level must be an int in 0..4, got '3'"):
            ctx(opt_level="3")
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            ctx(opt_level=3, config={"relay.backend.use_auto_scheduler": True})
        assert any("no effect in relay_tvm" in str(w.message) for w in got)
    with pytest.raises(RelayError, match=r"fuse_opt_level must be an int in -1..4.*got 9"):
        relay.transform.FuseOps(fuse_opt_level=9)
    # a known key still works: max_depth 1 leaves relu(relu(x)) in two kernels
    y = relay.nn.relu(relay.nn.relu(x))
    m2 = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], y)))
    with tvm.transform.PassContext(opt_level=3, config={"relay.FuseOps.max_depth": 1}):
        fused = relay.transform.FuseOps()(m2)
    assert relay.astext(fused).count("Primitive=1") == 2


@pytest.mark.parametrize("ctx", ["tvm", "relay"])
def test_config_key_without_effect_warns_once_per_context(ctx, recwarn):
    """``relay.backend.use_auto_scheduler`` warned twice in one build under a
    tvm.transform.PassContext (again when relay_tvm mirrored the context) and again in each
    context relay_tvm derived from it (task extraction, extract_fused_functions)."""
    from relay_tvm import tune

    make = tvm.transform.PassContext if ctx == "tvm" else relay.transform.PassContext
    x = relay.var("x", shape=(1, 4))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with make(opt_level=3, config={"relay.backend.use_auto_scheduler": True}):
        relay.build(mod, "llvm")
        tune.extract_tasks(mod, "llvm")
        relay.analysis.extract_fused_functions(mod)
        assert relay.transform.PassContext.current().config[
            "relay.backend.use_auto_scheduler"] is True  # still there for passes to read
    got = [w for w in recwarn if "use_auto_scheduler" in str(w.message)]
    assert len(got) == 1, [str(w.message) for w in got]
    assert got[0].filename == __file__  # at the user's `with` line


def test_print_ir_on_relay_and_tvm_modules(capsys):
    """``tvm.transform.PrintIR`` alone and inside a Sequential with Relay passes prints the
    Relay text and returns the module unchanged; on a TVM module it is TVM's pass."""
    x = relay.var("x", shape=(2, 2))
    mod = relay.IRModule.from_expr(
        relay.Function([x], relay.add(x, relay.const(1.0) + relay.const(2.0))))
    out = tvm.transform.Sequential([relay.transform.FoldConstant(),
                                    tvm.transform.PrintIR("after fold")])(mod)
    text = capsys.readouterr().err  # stderr, where 0.19's LOG(INFO) wrote it
    assert "PrintIR(after fold)" in text and "add(%x, 3f)" in text
    assert isinstance(out, relay.IRModule)
    a = np.ones((2, 2), "float32")
    np.testing.assert_allclose(_interp_mod(out["main"], a).numpy(), a + 3)
    assert tvm.transform.PrintIR()(mod) is mod
    assert "add(1f, 2f)" in capsys.readouterr().err
    from tvm.script import tirx as T

    @T.prim_func
    def f(a: T.Buffer((4,), "float32")):
        for i in range(4):
            a[i] = a[i] + T.float32(1)

    tmod = tvm.IRModule({"f": f})
    assert tvm.transform.PrintIR("tir")(tmod).same_as(tmod)


def test_019_pass_objects_pass_info_and_empty_sequential():
    """0.19's test_pass_manager: isinstance(module pass, tvm.transform.ModulePass),
    PassInfo without ``required``, an empty Sequential on a Relay module, and a user's function
    pass whose result is type-checked afterwards."""
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))

    @tvm.transform.module_pass(opt_level=1)
    def keep(m, ctx):
        return m

    assert isinstance(keep, tvm.transform.ModulePass)
    assert not isinstance(relay.transform.FoldConstant(), tvm.transform.ModulePass)
    info = tvm.transform.PassInfo(opt_level=1, name="xyz")
    assert (info.opt_level, info.name, list(info.required)) == (1, "xyz", [])
    assert tvm.transform.Sequential([], opt_level=1)(mod) is mod

    @relay.transform.function_pass(opt_level=1)
    def to_log(f, m, ctx):
        y = relay.var("y", shape=(3,))
        return relay.Function([y], relay.log(y))  # built without types

    out = to_log(mod)["main"]
    assert out.ret_type == relay.TensorType((3,), "float32")
    a = np.array([1.0, 2.0, 4.0], "float32")
    np.testing.assert_allclose(_interp(out, a), np.log(a), rtol=1e-6)
    # TVM's own class-based module_pass still subclasses TVM's ModulePass
    from tvm.script import tirx as T

    @T.prim_func
    def g(a: T.Buffer((4,), "float32")):
        for i in range(4):
            a[i] = a[i] * T.float32(2)

    @tvm.transform.module_pass(opt_level=0)
    class Same:
        def transform_module(self, m, ctx):
            return m

    tmod = tvm.IRModule({"g": g})
    assert Same()(tmod).same_as(tmod)
    assert tvm.transform.Sequential([])(tmod).same_as(tmod)


def test_tvm_ir_op_get_finds_relay_operators():
    # TVM 0.27 knows Relax/TIR operators only: "Operator nn.dense is not registered" (trial)
    assert tvm.ir.Op.get("nn.dense") is relay.op.get("nn.dense")
    pattern = tvm.ir.Op.get("nn.dense").get_attr("TOpPattern")
    assert pattern == int(relay.op.OpPattern.OUT_ELEMWISE_FUSABLE)
    assert tvm.ir.Op.get("relax.add").name == "relax.add"  # TVM's own stay TVM's
    with pytest.raises(Exception, match="nn.densee is not registered"):
        tvm.ir.Op.get("nn.densee")


def test_build_module_create_executor():
    # 0.19 defined create_executor in relay.build_module (trial: AttributeError)
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], x * relay.const(2.0)))
    f = relay.build_module.create_executor("graph", mod, tvm.cpu(), "llvm").evaluate()
    np.testing.assert_array_equal(f(np.arange(3, dtype="float32")).numpy(), [0.0, 2.0, 4.0])


def test_from_relay_tvm_import_relay_is_the_package():
    """From a new-user trial: ``from relay_tvm import relay`` (the shape of ``from tvm import
    relay``) raised a bare ImportError; it gives the package, so a Relay-era script runs."""
    import numpy as np

    import relay_tvm
    from relay_tvm import relay

    assert relay is relay_tvm and "relay" not in dir(relay_tvm)
    x = relay.var("x", shape=(3,))
    f = relay.create_executor("debug", mod=relay.IRModule.from_expr(
        relay.Function([x], relay.nn.relu(x)))).evaluate()
    np.testing.assert_array_equal(f(np.array([-1, 0, 2], "float32")).numpy(), [0, 0, 2])


def test_relay_viz_and_bsr_dense_are_refused_with_what_to_use():
    """Gallery v0.19 trial: ``from tvm.contrib import relay_viz`` and
    ``data_dep_optimization.bsr_dense`` are not provided; the errors say so and name the
    replacement."""
    import pytest

    import relay_tvm

    with pytest.raises(relay_tvm.errors.NotProvidedError, match=r"relay_viz .*post_order_visit"):
        from tvm.contrib import relay_viz  # noqa: F401
    from tvm.relay import data_dep_optimization as ddo

    assert not hasattr(ddo, "bsr_dense")
    with pytest.raises(relay_tvm.errors.NotProvidedError, match=r"bsr_dense .*nn\.sparse_dense"):
        ddo.bsr_dense.convert  # noqa: B018


def test_more_019_module_paths_and_the_ones_not_provided():
    """From a fresh-user trial: tvm.relay.op.nn.nn said "'tvm.relay.op.nn' is not a package",
    and 0.19's internal modules a plain ModuleNotFoundError."""
    import importlib

    from relay_tvm.errors import ModuleNotProvidedError

    for path, real in [("tvm.relay.op.nn.nn", relay.op.nn), ("relay_tvm.op.nn.nn", relay.op.nn),
                       ("tvm.relay.op.image.image", relay.op.image),
                       ("tvm.relay.qnn.op.qnn", relay.qnn.op)]:
        assert importlib.import_module(path) is real, path
    from tvm.relay.analysis.feature import Feature, detect_feature

    x = relay.var("x", shape=(2,))
    assert Feature.fLet in detect_feature(relay.Let(x, relay.const(1.0), x))
    for path in ("tvm.relay.op._tensor", "tvm.relay.op.nn._nn", "tvm.relay.op.memory",
                 "tvm.relay.debug"):
        with pytest.raises(ModuleNotProvidedError, match=rf"^{path}: no such module in "
                                                         r"relay_tvm \(a module of tvm\.relay "
                                                         r"0\.19 it does not provide.*"
                                                         r"tvm\.relay\.transform"):
            importlib.import_module(path)
        assert path not in sys.modules
    with pytest.raises(ModuleNotFoundError):  # relay_tvm's own paths stay as Python has them
        importlib.import_module("relay_tvm.no_such_module")


def test_019_passes_not_provided_say_why_and_batching_ops():
    from relay_tvm.errors import NotProvidedError

    assert not hasattr(relay.transform, "PlanDevices")
    with pytest.raises(NotProvidedError, match=r"^relay\.transform\.ManifestLifetimes \(tvm\."
                                               r"relay 0\.19\) is not provided: relay_tvm has "
                                               r"no Relay memory dialect"):
        relay.transform.ManifestLifetimes()
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchPass'"):
        relay.transform.NoSuchPass  # noqa: B018
    # BatchingOps: the three CombineParallel passes (0.19's Sequential of them)
    x = relay.var("x", shape=(1, 4, 6, 6))
    ws = [relay.const(np.random.default_rng(k).standard_normal((3, 4, 3, 3)).astype("float32"))
          for k in range(3)]
    body = relay.concatenate([relay.nn.conv2d(x, w, padding=(1, 1)) for w in ws], axis=1)
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    with relay.transform.PassContext(opt_level=4):
        out = relay.transform.BatchingOps()(relay.transform.InferType()(mod))
    convs = []
    post_order_visit(out["main"], lambda e: convs.append(e) if isinstance(e, relay.Call) and
                     getattr(e.op, "name", "") == "nn.conv2d" else None)
    assert len(convs) == 1
    xv = np.random.default_rng(9).standard_normal((1, 4, 6, 6)).astype("float32")
    run = [relay.create_executor("debug", mod=m).evaluate()(xv).numpy() for m in (mod, out)]
    np.testing.assert_allclose(run[1], run[0], rtol=1e-5, atol=1e-5)

"""run_as_python, check_basic_block_normal_form, the backend name helpers and the synthetic /
Inception-v3 workloads (tvm.relay 0.19 names)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.analysis import check_basic_block_normal_form
from relay_tvm.analysis.basic_block import NotBasicBlockNormalFormError
from relay_tvm.backend import name_transforms as nt
from relay_tvm.backend.utils import mangle_module_name
from relay_tvm.runtime.interpreter import ConstructorValue, RefValue
from relay_tvm.testing import inception_v3, run_as_python, synthetic, to_python


def test_run_as_python_matches_the_interpreter_on_a_recursive_program():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    x = relay.var("x", shape=(2,))
    double = relay.Function([x], relay.multiply(x, relay.const(2.0)))
    xs = p.cons(relay.const(np.array([1.0, 2.0], "float32")),
                p.cons(relay.const(np.array([3.0, -1.0], "float32")), p.nil()))
    # foldl with an accumulating add over map with a closure
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    total = p.foldl(relay.Function([a, b], relay.add(a, b)), relay.const(np.zeros(2, "float32")),
                    p.map(double, xs))
    got = run_as_python(total, mod)
    assert isinstance(got, tvm.runtime.Tensor)
    np.testing.assert_allclose(got.numpy(), [8.0, 2.0])
    ref = relay.create_executor("debug", mod=mod).evaluate(total)
    np.testing.assert_allclose(got.numpy(), ref.numpy())


def test_run_as_python_refs_tuples_adts_and_local_recursion():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    r = relay.var("r")
    body = relay.Let(r, relay.RefCreate(relay.const(1)),
                     relay.Let(relay.var("_"), relay.RefWrite(r, relay.const(5)),
                               relay.Tuple([relay.RefRead(r), r, p.some(relay.const(3))])))
    val, ref, some = run_as_python(body, mod)
    assert val.numpy() == 5 and isinstance(ref, RefValue) and ref.value.numpy() == 5
    assert isinstance(some, ConstructorValue) and some.tag == p.some.tag
    assert some.fields[0].numpy() == 3
    # let-bound recursive function: sum 0..n
    f, n = relay.var("f"), relay.var("n", shape=(), dtype="int32")
    sub = relay.subtract(n, relay.const(1))
    fn = relay.Function([n], relay.If(relay.equal(n, relay.const(0)), relay.const(0),
                                      relay.add(n, relay.Call(f, [sub]))))
    prog = relay.Let(f, fn, relay.Call(f, [relay.const(10)]))
    assert run_as_python(prog).numpy() == 55
    source, _ns = to_python(prog)
    assert "def " in source and "if bool(" in source


def test_run_as_python_incomplete_match_fails():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    x = relay.var("x")
    xs = relay.var("xs", p.list(relay.scalar_type("int32")))
    m = relay.Match(xs, [relay.Clause(
        relay.PatternConstructor(p.cons, [relay.PatternVar(x), relay.PatternWildcard()]), x)],
        complete=False)
    hd = relay.Function([xs], m)
    assert run_as_python(hd(p.cons(relay.const(4), p.nil())), mod).numpy() == 4
    with pytest.raises(relay.errors.RelayError, match="no match clause"):
        run_as_python(hd(p.nil()), mod)


def test_basic_block_normal_form_check():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(1,))
    shared = relay.add(x, x)
    bad = relay.Function([c, x], relay.If(c, relay.multiply(shared, x),
                                          relay.subtract(shared, x)))
    with pytest.raises(NotBasicBlockNormalFormError, match="more than one block"):
        check_basic_block_normal_form(bad)
    with pytest.raises(tvm.error.TVMError):  # tvm.relay callers catch TVMError
        check_basic_block_normal_form(bad)
    # the pass establishes the form, and sharing within one block is fine
    fixed = relay.transform.ToBasicBlockNormalForm()(relay.IRModule.from_expr(bad))["main"]
    assert check_basic_block_normal_form(fixed)
    assert check_basic_block_normal_form(relay.Function([x], relay.add(shared, shared)))


def test_c_name_helpers():
    assert nt.to_c_function_style(nt.prefix_generated_name(["my", "model", "run"])) == \
        "TVMGenMyModelRun"
    assert nt.to_c_variable_style(nt.prefix_name(["Dev", "x"])) == "tvm_dev_x"
    assert nt.to_c_constant_style("TVM_a_b") == "TVM_A_B"
    assert nt.sanitize_name("a.b-c:0 d") == "a_b_c_0_d"
    with pytest.raises(nt.NameError_, match="not TVM prefixed"):
        nt.to_c_function_style("Foo_bar")
    with pytest.raises(nt.NameError_, match="Name segment is empty"):
        nt.prefix_name(["a", ""])
    assert mangle_module_name("net") == "tvmgen_net" and mangle_module_name(None) == "tvmgen"
    with pytest.raises(ValueError):
        mangle_module_name("n\u00e9t")


def test_synthetic_workload_runs_and_keeps_the_input_shape():
    mod, params = synthetic.get_workload(input_shape=(1, 2, 4, 3))
    data = np.random.default_rng(0).standard_normal((1, 2, 4, 3)).astype("float32")
    out = relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()
    assert out.shape == (1, 2, 4, 3)
    # the last op adds a relu (>= 0) and a channel softmax (in (0, 1)): every value > 0
    assert (out > 0).all()


def test_inception_v3_structure():
    mod, params = inception_v3.get_workload(batch_size=2, num_classes=10)
    assert mod["main"].checked_type.ret_type == relay.TensorType((2, 10), "float32")
    counts = relay.testing.count_ops(mod["main"])
    assert counts["nn.conv2d"] == 94  # the published network's convolution count
    assert counts["concatenate"] == 11


def test_debug_op_calls_back_with_the_value_and_passes_it_on():
    seen = []
    x = relay.var("x", shape=(2,), dtype="int32")
    prog = relay.op.debug(relay.multiply(x, x), debug_func=lambda v: seen.append(v.numpy()))
    out = relay.create_executor().evaluate(
        relay.add(prog, relay.const(1)), {x: relay.const(np.array([3, -2], "int32"))})
    np.testing.assert_array_equal(out.numpy(), [10, 5])
    assert len(seen) == 1 and seen[0].tolist() == [9, 4]


def test_np_randn_from_type_shape_dtype_and_scale():
    from relay_tvm.testing import _np_randn_from_type

    np.random.seed(0)
    a = _np_randn_from_type(relay.TensorType((200, 3), "float64"), scale=1e-3, mean=5)
    assert a.shape == (200, 3) and a.dtype == np.float64
    assert abs(a.mean() - 5) < 1e-3 and 0 < a.std() < 2e-3
    assert _np_randn_from_type(relay.scalar_type("float16")).dtype == np.float16


def test_call_graph_counts_references_and_recursion():
    from relay_tvm.analysis import CallGraph

    mod = relay.IRModule()
    a = relay.var("a", shape=(), dtype="int32")
    leaf, loop = relay.GlobalVar("leaf"), relay.GlobalVar("loop")
    mod[leaf] = relay.Function([a], relay.negative(a))
    n = relay.var("n", shape=(), dtype="int32")
    mod[loop] = relay.Function([n], relay.If(
        relay.equal(n, relay.const(0)), leaf(n), loop(relay.subtract(n, relay.const(1)))),
        relay.scalar_type("int32"))
    m = relay.var("m", shape=(), dtype="int32")
    mod["main"] = relay.Function([m], relay.add(loop(m), leaf(m)))
    cg = CallGraph(mod)
    assert cg.global_call_count("main") == 2 and cg.global_call_count(leaf) == 0
    assert cg.ref_count(leaf) == 2 and cg.ref_count(loop) == 2 and cg.ref_count("main") == 0
    assert cg.is_recursive(loop) and not cg.is_recursive("main")
    assert "#refs = 2" in cg.print_var("leaf") and "loop" in str(cg)
    with pytest.raises(relay.errors.RelayError):
        cg.ref_count(relay.GlobalVar("elsewhere"))


def test_dqn_workload_output_and_layouts():
    from relay_tvm.testing import dqn

    mod, params = dqn.get_workload(batch_size=2, num_actions=5)
    assert mod["main"].checked_type.ret_type == relay.TensorType((2, 5), "float32")
    assert params["conv1_weight"].shape == (32, 4, 8, 8)
    mod, params = dqn.get_workload(image_shape=(84, 84, 4), layout="NHWC")
    assert params["conv1_weight"].shape == (8, 8, 4, 32)
    # 7x7x64 features after the three convolutions
    assert params["dense1_weight"].shape == (512, 7 * 7 * 64)


def test_evaluate_binds_arrays_and_legacy_constructor_value():
    x = relay.var("x", shape=(2,))
    got = relay.create_executor().evaluate(relay.add(x, x),
                                           binds={x: np.array([1.5, 2.0], "float32")})
    np.testing.assert_allclose(got.numpy(), [3.0, 4.0])
    p = relay.Prelude(relay.IRModule())
    nil = ConstructorValue(p.nil.tag, [], p.nil)  # tvm.relay 0.19's argument order
    assert nil.constructor is p.nil
    with pytest.raises(relay.errors.InterpreterError, match="not the tag"):
        ConstructorValue(p.cons.tag, [], p.nil)


def test_annotation_ops_are_identities_when_run_and_differentiated():
    x = relay.var("x", shape=(3,))
    body = relay.annotation.checkpoint(
        relay.multiply(relay.annotation.stop_fusion(relay.add(x, x)), x))
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    xv = np.array([1.0, -2.0, 3.0], "float32")
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, mod=mod).evaluate()(xv).numpy()
        np.testing.assert_allclose(got, 2 * xv * xv)
    grad = relay.transform.gradient(relay.transform.InferType()(mod)["main"])
    _, (dx,) = relay.create_executor("debug").evaluate(grad)(xv)
    np.testing.assert_allclose(dx.numpy(), 4 * xv)  # d(2x^2)/dx

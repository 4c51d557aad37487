"""An operator registered from Python with only a TE compute (tvm.relay 0.19's custom-operator
recipe: ``op.register``, ``add_type_rel``, ``register_pattern``, ``register_compute``): it runs in
every executor, the debug one included, and 0.19's schedule and shape-function registrations
either act or are refused with what to use instead."""

from __future__ import annotations

import numpy as np
import pytest
from tvm import te, topi

import relay_tvm as relay
from relay_tvm.errors import InterpreterError, NotProvidedError, RelayError
from relay_tvm.op import op as _op


def _cube_op(name):
    """A registered ``name(x) = x * x * x`` with an identity type relation and a compute."""
    if _op.is_registered(name):
        return _op.get(name)
    _op.register(name, "cube of each element")
    o = _op.get(name)
    o.set_num_inputs(1)
    o.add_argument("data", "Tensor", "input")
    o.add_type_rel("Identity")
    _op.register_pattern(name, relay.op.OpPattern.ELEMWISE)
    _op.register_stateful(name, False)

    @_op.register_compute(name)
    def _compute(attrs, inputs, out_type):
        return [topi.multiply(topi.multiply(inputs[0], inputs[0]), inputs[0])]

    return o


X = np.array([0.5, 1.0, -1.0, 2.0], "float32")


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_compute_only_operator_runs_in_every_executor(kind):
    """The debug executor raised 'operator my_cube has no reference kernel'; as in 0.19 it now
    runs the registered compute (compiled for the call)."""
    o = _cube_op("compat_test_cube")
    x = relay.var("x", shape=(4,))
    mod = relay.transform.InferType()(
        relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.Call(o, [x])))))
    got = relay.create_executor(kind, mod=mod).evaluate()(X).numpy()
    np.testing.assert_allclose(got, np.exp(X ** 3), rtol=1e-6)


def test_debug_executor_runs_the_compute_inside_control_flow():
    """The compiled call is reused by each iteration of a loop (one compile per call node)."""
    o = _cube_op("compat_test_cube")
    x = relay.var("x", shape=(4,))
    c = relay.var("c", shape=(), dtype="bool")
    f = relay.Function([x, c], relay.If(c, relay.Call(o, [relay.Call(o, [x])]), x))
    run = relay.create_executor("debug", mod=relay.IRModule.from_expr(f)).evaluate()
    np.testing.assert_allclose(run(X, np.array(True)).numpy(), X ** 9, rtol=1e-6)
    np.testing.assert_array_equal(run(X, np.array(False)).numpy(), X)


def test_operator_without_reference_or_compute_says_how_to_add_one():
    name = "compat_test_no_kernel"
    if not _op.is_registered(name):
        _op.register(name)
        _op.get(name).set_num_inputs(1)
        _op.get(name).add_type_rel("Identity")
    x = relay.var("x", shape=(2,))
    run = relay.create_executor(
        "debug", mod=relay.IRModule.from_expr(relay.Function([x], relay.Call(_op.get(name), [x]))))
    with pytest.raises(InterpreterError, match=r"compat_test_no_kernel has neither a reference "
                                               r"kernel nor a TE compute: .*register_ref"):
        run.evaluate()(np.zeros(2, "float32"))


def test_registration_levels_of_a_new_operator():
    """A new operator's attributes are unset: the first registration at the default level
    is taken, a second at that level is an error (0.19's rule)."""
    name = "compat_test_levels"
    if not _op.is_registered(name):
        _op.register(name)
        _op.register_pattern(name, relay.op.OpPattern.INJECTIVE)
    assert _op.get(name).get_attr("TOpPattern") == int(relay.op.OpPattern.INJECTIVE)
    with pytest.raises(RelayError, match="TOpPattern of compat_test_levels is already "
                                         "registered at level 10"):
        _op.register_pattern(name, relay.op.OpPattern.ELEMWISE)
    with pytest.raises(RelayError, match="already registered at level 10"):
        relay.op.register_injective_schedule("exp")  # every built-in operator has a schedule


def test_schedule_registrations_pick_relay_tvm_rules():
    """register_injective_schedule: the generic rule (what elementwise kernels get);
    register_reduce_schedule at a higher level: the CPU reduction rule, which falls back to
    the generic one for a kernel it does not fit; results are unchanged."""
    o = _cube_op("compat_test_cube_sched")
    if o.schedule is None:
        relay.op.register_injective_schedule(o.name)
    assert o.schedule is None
    with pytest.raises(RelayError, match="schedule .* already registered at level 10"):
        relay.op.register_broadcast_schedule(o.name)
    relay.op.register_reduce_schedule(o.name, level=11)
    assert o.schedule == "reduce"
    x = relay.var("x", shape=(4,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Call(o, [x])))
    got = relay.create_executor("graph", mod=mod).evaluate()(X).numpy()
    np.testing.assert_allclose(got, X ** 3, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda: relay.op.register_strategy("compat_test_cube", lambda *a: None),
    lambda: _op.register_schedule("compat_test_cube", lambda *a: None),
    lambda: relay.op.register_op_attr("compat_test_cube", "FTVMStrategy", lambda *a: None,
                                      level=20),
    lambda: _op.OpStrategy,
])
def test_strategies_are_refused_with_the_alternative(call):
    _cube_op("compat_test_cube")
    with pytest.raises(NotProvidedError, match="register_compute.*relay_tvm.backend.schedule"):
        call()


def test_shape_func_of_input_shapes_is_refused():
    _cube_op("compat_test_cube")
    with pytest.raises(NotProvidedError, match="derives the shape function .* from its TE "
                                               "compute"):
        relay.op.register_shape_func("compat_test_cube", False, lambda *a: None)


def _first_n_op(name):
    """``name(data, n)``: the first ``n`` elements of ``data`` (an output of run-time size),
    with a 0.19-form data-dependent shape function."""
    if _op.is_registered(name):
        return _op.get(name)
    _op.register(name, "the first n elements")
    o = _op.get(name)
    o.set_num_inputs(2)

    def rel(arg_types, attrs):
        return relay.TensorType((relay.Any(),), arg_types[0].dtype)

    o.add_type_rel("first_n", rel)
    _op.register_pattern(name, relay.op.OpPattern.OPAQUE)

    @_op.register_compute(name)
    def _compute(attrs, inputs, out_type):
        data = inputs[0]
        return [te.compute(out_type.shape, lambda i: data[i], name="first_n")]

    @relay.op.register_shape_func(name, True)
    def _shape(attrs, inputs, out_ndims):
        assert out_ndims == [1]
        n = inputs[1]
        return [te.compute((1,), lambda _: n[()].astype("int64"), name="shape")]

    return o


def test_data_dependent_shape_func_in_019_form_runs_in_the_vm():
    o = _first_n_op("compat_test_first_n")
    x = relay.var("x", shape=(6,))
    n = relay.var("n", shape=(), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x, n], relay.Call(o, [x, n])))
    v = np.arange(6, dtype="float32") + 1
    run = relay.create_executor("vm", mod=mod).evaluate()
    np.testing.assert_array_equal(run(v, np.array(4, "int32")).numpy(), v[:4])
    np.testing.assert_array_equal(run(v, np.array(2, "int32")).numpy(), v[:2])

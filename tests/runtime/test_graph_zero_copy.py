"""GraphModule.set_input_zero_copy: the given tensor is the input itself (later changes are
seen by later runs); bad tensors are refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import InputError


def _module():
    x = relay.var("x", shape=(2, 3))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], x * relay.const(2.0))), "llvm")
    return relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))


def test_zero_copy_input_is_shared():
    m = _module()
    a = np.arange(6, dtype="float32").reshape(2, 3)
    t = tvm.runtime.tensor(a, tvm.cpu(0))
    m.module["set_input_zero_copy"](m.get_input_index("x"), t)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), 2 * a)
    t.copyfrom(-a)  # no set_input: the module reads the same tensor
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), -2 * a)


def test_zero_copy_refuses_what_needs_a_copy():
    m = _module()
    with pytest.raises(InputError, match="use set_input"):
        m.set_input_zero_copy("x", np.zeros((2, 3), "float32"))
    with pytest.raises(InputError, match="expected"):
        m.set_input_zero_copy("x", tvm.runtime.tensor(np.zeros((3, 2), "float32")))
    with pytest.raises(InputError, match="expected"):
        m.set_input_zero_copy(0, tvm.runtime.tensor(np.zeros((2, 3), "float64")))


def test_get_input_before_set_input_is_the_input_buffer_and_benchmark_leaves_outputs():
    """0.19 habits: ``get_input`` before ``set_input`` gives the input's buffer (zeros here),
    which ``copyfrom`` fills; after ``benchmark`` the outputs of a run are there."""
    m = _module()
    buf = m.get_input(0)
    assert buf.shape == (2, 3) and str(buf.dtype) == "float32"
    np.testing.assert_array_equal(buf.numpy(), np.zeros((2, 3), "float32"))
    a = np.arange(6, dtype="float32").reshape(2, 3)
    buf.copyfrom(a)
    m.benchmark(tvm.cpu(0), number=1, repeat=1)
    np.testing.assert_array_equal(m.get_output(0).numpy(), 2 * a)


def test_get_output_into_a_given_tensor():
    """get_output(i, out) copies into ``out``; an ``out`` of another shape or dtype was a raw
    TVM InternalError (fresh-user trial), now an InputError naming both."""
    m = _module()
    a = np.arange(6, dtype="float32").reshape(2, 3)
    m.set_input("x", a)
    m.run()
    out = tvm.runtime.tensor(np.zeros((2, 3), "float32"))
    assert m.get_output(0, out) is out
    np.testing.assert_array_equal(out.numpy(), 2 * a)
    for bad, pattern in [(tvm.runtime.tensor(np.zeros((1, 2), "float32")), r"shape \(1, 2\)"),
                         (tvm.runtime.tensor(np.zeros((2, 3), "int32")), r"dtype int32"),
                         (np.zeros((2, 3), "float32"), r"got ndarray")]:
        with pytest.raises(InputError, match=r"shape \(2, 3\) and dtype float32.*" + pattern):
            m.get_output(0, bad)


def test_get_output_index_is_checked_before_the_run():
    """An index out of range is reported as such before a run too (it said "has not run yet",
    fresh-user trial); a valid index before a run says that."""
    m = _module()
    with pytest.raises(InputError, match="index 3 out of range; the module has 1 output$"):
        m.get_output(3)
    with pytest.raises(InputError, match="not run yet"):
        m.get_output(0)
    m.set_input("x", np.ones((2, 3), "float32"))
    m.run()
    with pytest.raises(InputError, match="index -1 out of range"):
        m.get_output(-1)
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.full((2, 3), 2, "float32"))


def test_set_input_writes_the_modules_own_buffer_never_a_callers():
    """A second ``set_input`` copies into the tensor the module allocated for the first (0.19
    wrote into the executor's input buffer: a tensor from ``get_input`` shows the new value),
    never into a tensor the caller handed over with ``set_input_zero_copy`` nor into the
    caller's NumPy array, and a big-endian or strided array keeps its values."""
    m = _module()
    a = np.arange(6, dtype="float32").reshape(2, 3)
    m.set_input("x", a)
    buf = m.get_input("x")
    m.set_input("x", 3 * a)
    assert m.get_input("x") is buf
    np.testing.assert_array_equal(buf.numpy(), 3 * a)
    np.testing.assert_array_equal(a, np.arange(6, dtype="float32").reshape(2, 3))
    big = (5 * a).astype(">f4")
    m.set_input("x", big)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), 10 * a)
    m.set_input("x", np.ascontiguousarray((7 * a).T).T)  # Fortran order
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), 14 * a)
    mine = tvm.runtime.tensor(-a, tvm.cpu(0))
    m.set_input_zero_copy("x", mine)
    m.set_input("x", a)  # the module's own tensor again, not a write into the caller's
    np.testing.assert_array_equal(mine.numpy(), -a)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), 2 * a)


def test_set_input_of_a_scalar_input_keeps_its_rank():
    x = relay.var("x", shape=(), dtype="float32")
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], x + relay.const(1.0))), "llvm")
    m = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    for v in (np.array(2.0, "float32"), 4.0, np.array(8.0, ">f4")):
        m.set_input("x", v)
        m.run()
        out = m.get_output(0).numpy()
        assert out.shape == () and out == float(v) + 1


def test_shared_zero_copy_tensor_is_never_written():
    """A caller's tensor given with set_input_zero_copy and then shared (share_params) was
    written by either module's set_input (fresh-user trial); both read it until they set the
    input, which gives the setter a tensor of its own."""
    from relay_tvm import save_param_dict

    m1, m2 = _module(), _module()
    a = np.arange(6, dtype="float32").reshape(2, 3)
    z = tvm.runtime.tensor(a, tvm.cpu(0))
    m1.set_input_zero_copy("x", z)
    m2.share_params(m1, save_param_dict({"x": a}))
    m2.run()
    np.testing.assert_array_equal(m2.get_output(0).numpy(), 2 * a)
    m2.set_input("x", np.full((2, 3), 9, "float32"))
    m1.set_input("x", np.full((2, 3), 7, "float32"))
    np.testing.assert_array_equal(z.numpy(), a)
    m1.run()
    m2.run()
    np.testing.assert_array_equal(m1.get_output(0).numpy(), np.full((2, 3), 14, "float32"))
    np.testing.assert_array_equal(m2.get_output(0).numpy(), np.full((2, 3), 18, "float32"))


def test_two_wrappers_of_one_executor_share_its_inputs():
    """``GraphModule(g)`` twice wraps one executor, as in 0.19: an input set through one is
    the other's (each had a copy of the state, and lacked the other's inputs)."""
    x = relay.var("x", shape=(2, 3))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], x * relay.const(2.0))), "llvm")
    g = lib["default"](tvm.cpu(0))
    ga, gb = relay.runtime.GraphModule(g), relay.runtime.GraphModule(g)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    ga.set_input("x", a)
    gb.run()
    np.testing.assert_array_equal(gb.get_output(0).numpy(), 2 * a)
    np.testing.assert_array_equal(ga.get_output(0).numpy(), 2 * a)


def test_an_output_taken_before_the_next_run_keeps_its_values():
    """Each run's outputs are new tensors (README: 0.19 returned views of its buffer that the
    next run overwrote); set_output_zero_copy is the way to have runs write one tensor."""
    m = _module()
    a = np.arange(6, dtype="float32").reshape(2, 3)
    m.run(x=a)
    first = m.get_output(0)
    m.run(x=-a)
    np.testing.assert_array_equal(first.numpy(), 2 * a)
    np.testing.assert_array_equal(m.get_output(0).numpy(), -2 * a)
    out = tvm.runtime.tensor(np.zeros((2, 3), "float32"), tvm.cpu(0))
    m.set_output_zero_copy(0, out)
    m.run(x=a)
    np.testing.assert_array_equal(out.numpy(), 2 * a)

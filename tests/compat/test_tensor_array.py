"""Tensor arrays of the Prelude (dynamic per dtype, and StaticTensorArrayOps), checked on the
reference interpreter against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import InterpreterError
from relay_tvm.prelude import Prelude, StaticTensorArrayOps, get_tensor_array_shape


def _run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def _elems(v):
    """A Relay List of boxed tensors -> Python list of arrays (None for an unwritten slot)."""
    out = []
    while v.constructor.name_hint == "Cons":
        box = v.fields[0]
        out.append(np.asarray(box.fields[0]) if box.fields else None)
        v = v.fields[1]
    return out


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_write_then_stack_gives_numpy_stack(dtype):
    mod = relay.IRModule()
    p = Prelude(mod)
    a, b = relay.var("a", shape=(3,), dtype=dtype), relay.var("b", shape=(3,), dtype=dtype)
    box = p.get_tensor_ctor("tensor1", dtype)
    write = p.get_global_var("tensor_array_write", dtype)
    ta = p.get_global_var("tensor_array", dtype)(relay.const(2))
    ta = write(write(ta, relay.const(1), box(b)), relay.const(0), box(a))
    mod["main"] = relay.Function([a, b], p.get_global_var("tensor_array_stack", dtype)(ta))
    av, bv = np.arange(3).astype(dtype), (np.arange(3) * 7).astype(dtype)
    got = _run(mod, av, bv)
    assert got.constructor.name_hint == f"tensor2_{dtype}"
    np.testing.assert_array_equal(got.fields[0].numpy(), np.stack([av, bv]))


def test_unstack_split_concat_scatter():
    mod = relay.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(5, 2))
    lengths = relay.var("lengths", shape=(2,), dtype="int32")
    g = lambda name: p.get_global_var(name, "float32")  # noqa: E731
    box2 = p.get_tensor_ctor("tensor2", "float32")
    mod["unstack"] = relay.Function([x], g("tensor_array_unstack_tensor2")(x))
    split = g("tensor_array_split")(g("tensor_array")(relay.const(2)), box2(x), lengths)
    mod["split"] = relay.Function([x, lengths], split)
    mod["concat"] = relay.Function([x, lengths], g("tensor_array_concat")(split))
    idx = relay.var("idx", shape=(2,), dtype="int32")
    scat = g("tensor_array_scatter")(g("tensor_array")(relay.const(3)), idx, split)
    mod["scatter"] = relay.Function([x, lengths, idx], scat)
    xv = np.arange(10, dtype="float32").reshape(5, 2)
    ex = relay.create_executor("debug", mod=mod)
    rows = _elems(ex.evaluate(mod.get_global_var("unstack"))(xv))
    assert len(rows) == 5 and all(np.array_equal(r, xv[i]) for i, r in enumerate(rows))
    lv = np.array([2, 3], "int32")
    parts = _elems(ex.evaluate(mod.get_global_var("split"))(xv, lv))
    np.testing.assert_array_equal(parts[0], xv[:2])
    np.testing.assert_array_equal(parts[1], xv[2:])
    whole = ex.evaluate(mod.get_global_var("concat"))(xv, lv)
    np.testing.assert_array_equal(whole.fields[0].numpy(), xv)
    slots = _elems(ex.evaluate(mod.get_global_var("scatter"))(xv, lv, np.array([2, 0], "int32")))
    assert slots[1] is None  # never written
    np.testing.assert_array_equal(slots[2], xv[:2])
    np.testing.assert_array_equal(slots[0], xv[2:])


def test_reading_an_unwritten_slot_as_data_fails():
    mod = relay.IRModule()
    p = Prelude(mod)
    ops = StaticTensorArrayOps(p, "float32", (2,))
    ops.register()
    read = p.get_global_var_static("tensor_array_read", "float32", (2,))
    get = p.get_global_var_static("tensor_get_data", "float32", (2,))
    ta = p.get_global_var_static("tensor_array", "float32", (2,))(relay.const(1))
    mod["main"] = relay.Function([], get(read(ta, relay.const(0))))
    with pytest.raises(InterpreterError):
        _run(mod)


def test_static_gather_and_stack_shapes():
    mod = relay.IRModule()
    p = Prelude(mod)
    shape = (2, 3)
    StaticTensorArrayOps(p, "float32", shape).register()
    box = p.get_tensor_ctor_static("tensor_constructor", "float32", shape)
    write = p.get_global_var_static("tensor_array_write", "float32", shape)
    ta = p.get_global_var_static("tensor_array", "float32", shape)(relay.const(3))
    vs = [relay.var(f"v{i}", shape=shape) for i in range(3)]
    for i, v in enumerate(vs):
        ta = write(ta, relay.const(i), box(v))
    idx = relay.var("idx", shape=(2,), dtype="int32")
    gather = p.get_global_var_static("tensor_array_gather", "float32", shape)
    mod["main"] = relay.Function([*vs, idx], gather(ta, idx))
    arrs = [np.full(shape, i, "float32") + np.arange(6, dtype="float32").reshape(shape)
            for i in range(3)]
    got = _run(mod, *arrs, np.array([2, 0], "int32"))
    np.testing.assert_array_equal(got.fields[0].numpy(), np.stack([arrs[2], arrs[0]]))
    # the element shape is recoverable from the array's type
    assert get_tensor_array_shape(ta, "float32", p) == shape


def test_static_names_follow_relay_019():
    p = Prelude(relay.IRModule())
    StaticTensorArrayOps(p, "int32", (relay.Any(), 4)).register()
    assert p.get_type_static("tensor_t", "int32", (relay.Any(), 4)).name_hint == \
        "static_tensor_int32_any_4_t"
    assert p.get_global_var_static("tensor_array_split", "int32", (relay.Any(), 4)).name_hint == \
        "tensor_array_split_int32_any_4"
    assert p.get_name("tensor_t", "int8") == "tensor_int8_t"
    # every dtype of tvm.relay 0.19's Prelude has its dynamic tensor array
    for dtype in ("float16", "float64", "uint8", "int8", "int16", "uint16", "int64"):
        assert p.mod.get_type(f"tensor_{dtype}_t")[1].name_hint == f"tensor_nil_{dtype}"


def test_import_from_std_and_nat_list_indexing():
    mod = relay.IRModule()
    mod.import_from_std("nat.rly")
    p = Prelude(mod)
    from relay_tvm.testing import count, make_nat_expr

    xs = p.cons(make_nat_expr(p, 4), p.cons(make_nat_expr(p, 7), p.nil()))
    ex = relay.create_executor("debug", mod=mod)
    assert count(p, ex.evaluate(p.nat_nth(xs, make_nat_expr(p, 1)))) == 7
    updated = ex.evaluate(p.nat_update(xs, make_nat_expr(p, 1), make_nat_expr(p, 2)))
    assert [count(p, updated.fields[0]), count(p, updated.fields[1].fields[0])] == [4, 2]
    with pytest.raises(relay.errors.RelayError, match="unknown standard library file"):
        mod.import_from_std("nosuch.rly")


def test_polymorphic_function_types_equal_up_to_renaming():
    a, b, c = relay.TypeVar("a"), relay.TypeVar("b"), relay.TypeVar("c")
    assert relay.FuncType([a], a, [a]) == relay.FuncType([b], b, [b])
    assert hash(relay.FuncType([a], a, [a])) == hash(relay.FuncType([b], b, [b]))
    assert relay.FuncType([a, c], a, [a, c]) != relay.FuncType([b, c], c, [b, c])
    # a free variable is not captured by a renamed parameter
    assert relay.FuncType([a], a, [a]) != relay.FuncType([b], a, [b])
    p = Prelude(relay.IRModule())
    mod = relay.transform.InferType()(p.mod)
    x = relay.TypeVar("x")
    assert mod[p.length].checked_type == relay.FuncType([p.list(x)], relay.scalar_type("int32"),
                                                        [x])

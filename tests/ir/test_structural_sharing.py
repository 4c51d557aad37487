"""Structural equality and hashing as tvm.relay 0.19 defined them (include/tvm/node/
structural_equal.h, relay's SEqualReduce): shared subexpressions are part of the program, free
variables pair one to one under ``map_free_vars``, function types are equal up to renaming of
their type parameters, constraints included; the hash agrees with equality."""

import tvm

import relay_tvm as relay
from relay_tvm.analysis import structural_equal, structural_hash


def consistent(a, b, map_free_vars=False):
    eq = structural_equal(a, b, map_free_vars)
    assert eq == structural_equal(b, a, map_free_vars)
    assert eq == (structural_hash(a, map_free_vars) == structural_hash(b, map_free_vars))
    return eq


def test_sharing_counts():
    x = relay.var("x")
    y0 = relay.add(x, x)
    y1 = relay.add(x, x)
    shared0, shared1 = relay.add(y0, y0), relay.add(y1, y1)
    two_trees = relay.add(relay.add(x, x), relay.add(x, x))
    assert consistent(shared0, shared1)
    assert not consistent(shared0, two_trees)  # %0 = add(%x, %x); add(%0, %0) is another graph


def test_free_variables_pair_one_to_one():
    x, y = relay.var("x"), relay.var("y")
    assert not consistent(relay.add(x, y), relay.add(x, x), map_free_vars=True)
    assert consistent(relay.add(x, y), relay.add(y, x), map_free_vars=True)
    assert not consistent(relay.add(x, y), relay.add(y, x))  # without mapping: the same objects


def test_func_type_equal_up_to_renaming_with_constraints():
    t1 = relay.TensorType((1, 2), "float32")
    broadcast = tvm.ir.EnvFunc.get("tvm.relay.type_relation.Broadcast")
    identity = tvm.ir.EnvFunc.get("tvm.relay.type_relation.Identity")

    def fn_type(rel, same_arg=True):
        a = relay.TypeVar("a")
        s = relay.TypeVar("s", relay.TypeKind.ShapeVar)
        r = relay.TypeRelation(rel, [a, s] if same_arg else [s, a], 1, None)
        return relay.FuncType([t1, a], a, [a, s], [r])

    assert fn_type(broadcast) == fn_type(broadcast)
    assert hash(fn_type(broadcast)) == hash(fn_type(broadcast))
    assert fn_type(broadcast) != fn_type(identity)
    assert fn_type(broadcast) != fn_type(broadcast, same_arg=False)


def test_function_attributes_naming_parameters():
    # 0.19's test_fn_vid_map: an attribute dict keyed by the function's own parameter
    def fn(value=1, key_is_param=True):
        x = relay.var("x", shape=(10,), dtype="float32")
        key = x if key_is_param else relay.var("x", shape=(10,), dtype="float32")
        return relay.Function([x], x).with_attr("dict", {key: value})

    assert consistent(fn(), fn())
    assert not consistent(fn(), fn(2))
    assert not structural_equal(fn(), fn(key_is_param=False))


def test_symbolic_dimensions_pair_like_free_variables():
    # 0.19's test_meta_data round trip: the parsed program has its own `n`
    n, m = tvm.te.size_var("n"), tvm.te.size_var("m")
    x = relay.var("x", shape=(n, 10, 224, 224))
    w = relay.var("w")
    f = relay.Function([x, w], relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1),
                                               channels=2))
    back = relay.parse_expr(f.astext())
    assert consistent(back, f, map_free_vars=True)
    assert not structural_equal(back, f)  # without mapping, another variable is another `n`

    def fn(*shape):
        return relay.Function([relay.var("a", shape=shape)], relay.const(1))

    assert consistent(fn(n, n), fn(m, m), map_free_vars=True)
    assert not structural_equal(fn(n, n), fn(n, m), map_free_vars=True)  # one to one
    assert not structural_equal(fn(n, m), fn(n, n), map_free_vars=True)

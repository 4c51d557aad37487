"""Static dimensions of a TensorType are ints that also answer TVM 0.19's IntImm ``.value`` /
``.dtype`` (Relay-era code reads ``ty.shape[0].value``), while staying plain ints for equality,
hashing, arithmetic and printing."""

import copy
import json
import pickle

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.ir.types import IntDim


def test_static_dims_answer_value_dtype_and_int():
    t = relay.TensorType((1, 3, 224, 224), "float32")
    assert all(type(d) is IntDim for d in t.shape)
    assert [d.value for d in t.shape] == [1, 3, 224, 224]
    assert all(type(d.value) is int for d in t.shape)
    assert [int(d) for d in t.shape] == [1, 3, 224, 224]
    assert all(d.dtype == "int32" for d in t.shape)
    assert relay.TensorType((2**31,)).shape[0].dtype == "int64"
    assert relay.TensorType((2**31 - 1,)).shape[0].dtype == "int32"


@pytest.mark.parametrize("dims", [
    (1, 3),
    [1, 3],
    (np.int64(1), np.int32(3)),
    (tvm.tirx.IntImm("int64", 1), tvm.tirx.IntImm("int32", 3)),
    (IntDim(1), IntDim(3)),
    np.zeros((1, 3)).shape,
])
def test_every_way_to_give_static_dims_gives_the_same_type(dims):
    t = relay.TensorType(dims, "float32")
    ref = relay.TensorType((1, 3), "float32")
    assert t == ref and hash(t) == hash(ref)
    assert t.shape == (1, 3) and hash(t.shape) == hash((1, 3))
    assert all(type(d) is IntDim for d in t.shape)
    assert {t: 1}[ref] == 1


def test_dims_behave_as_plain_ints():
    d0, d1 = relay.TensorType((4, 5)).shape
    assert isinstance(d0, int) and not isinstance(d0, bool)
    assert d0 == 4 and 4 == d0 and hash(d0) == hash(4)
    assert d0 * d1 == 20 and type(d0 * d1) is int and type(d0 + 0) is int
    assert str(d0) == repr(d0) == f"{d0}" == "4"
    assert json.dumps(list((d0, d1))) == "[4, 5]"
    assert np.zeros((d0, d1)).shape == (4, 5)
    assert list(range(d0)) == [0, 1, 2, 3]


def test_text_format_and_serialization_unchanged():
    t = relay.TensorType((1, 3), "float32")
    assert str(t) == repr(t) == "Tensor[(1, 3), float32]"
    x = relay.var("x", shape=(1, 3))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    text = mod.astext()
    assert "%x: Tensor[(1, 3), float32]) -> Tensor[(1, 3), float32]" in text
    assert tvm.ir.structural_equal(relay.fromtext(text)["main"], mod["main"])
    for back in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert back == t and type(back.shape[0]) is IntDim and back.shape[1].value == 3


def test_any_and_symbolic_dims_are_kept():
    n = tvm.tirx.Var("n", "int64")
    t = relay.TensorType((relay.Any(), n, 4))
    assert isinstance(t.shape[0], relay.Any) and t.shape[1].same_as(n)
    assert type(t.shape[2]) is IntDim and t.shape[2].value == 4
    assert str(t) == "Tensor[(?, n, 4), float32]"
    assert t == relay.TensorType((relay.Any(), n, 4)) != relay.TensorType((relay.Any(), n, 5))


def test_inferred_dims_are_int_dims():
    # shapes computed by type relations (broadcasting, conv2d) are IntDims too
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.add(relay.nn.conv2d(x, w, padding=(1, 1)), relay.const(np.ones((4, 1, 1), "float32")))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w], y)))
    shape = mod["main"].body.checked_type.shape
    assert [d.value for d in shape] == [1, 4, 8, 8] and all(d.dtype == "int32" for d in shape)
    const_shape = mod["main"].body.args[1].checked_type.shape
    assert [d.value for d in const_shape] == [4, 1, 1]


def test_019_type_args_idiom():
    # TVM 0.19 tests/python/relay/test_type_infer.py::test_type_args
    x = relay.var("x", shape=(10, 10))
    y = relay.var("y", shape=(1, 10))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.add(x, y)))
    ty_args = mod["main"].body.type_args
    assert len(ty_args) == 2 and ty_args[0].dtype == ty_args[1].dtype == "float32"
    assert [d.value for d in ty_args[0].shape] == [10, 10]
    assert [d.value for d in ty_args[1].shape] == [1, 10]


def test_019_graph_executor_input_info_idiom():
    # TVM 0.19 tests/python/relay/test_backend_graph_executor.py::test_graph_executor_api
    from relay_tvm.runtime import graph_executor

    data = [relay.var(n, shape=(1, 1), dtype="float32") for n in ("data_0", "data_1")]
    func = relay.Function(data, relay.add(*data))
    lib = relay.build(tvm.IRModule.from_expr(func), "llvm")
    mod = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    shape_dict, dtype_dict = mod.get_input_info()
    for v in data:
        ty = v.type_annotation
        assert tuple(shape_dict[v.name_hint]) == tuple(i.value for i in ty.shape) == (1, 1)
        assert dtype_dict[v.name_hint] == ty.dtype

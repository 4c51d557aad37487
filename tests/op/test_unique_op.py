"""relay.unique (tvm.relay 0.19's) against NumPy: the reference interpreter, the graph executor
and the VM; padding past num_unique as documented (0; n in indices)."""

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.ir.module import IRModule

RNG = np.random.default_rng(21)


def _expected(data, is_sorted, return_counts):
    """Written from the definition, element by element (not with np.unique)."""
    n = len(data)
    order = sorted(set(data.tolist())) if is_sorted else list(dict.fromkeys(data.tolist()))
    k = len(order)
    out = np.zeros(n, data.dtype)
    out[:k] = order
    first = np.full(n, n, "int32")
    first[:k] = [data.tolist().index(v) for v in order]
    inverse = np.array([order.index(v) for v in data.tolist()], "int32")
    res = [out, first, inverse, np.array([k], "int32")]
    if return_counts:
        counts = np.zeros(n, "int32")
        counts[:k] = [data.tolist().count(v) for v in order]
        res.append(counts)
    return tuple(res)


CASES = [
    np.array([4, 5, 1, 2, 3, 3, 4, 5], "int32"),
    np.array([7], "int64"),
    np.array([2, 2, 2, 2], "int8"),
    np.array([-3, 9, -3, 0, 0, 12, -7, 9, 1, 1, 1], "int32"),
]


@pytest.mark.parametrize("data", CASES + [RNG.integers(0, 20, 64).astype("int32")],
                         ids=lambda a: f"{a.dtype}x{a.size}")
@pytest.mark.parametrize("is_sorted", [True, False])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique(data, is_sorted, return_counts):
    x = relay.var("x", shape=data.shape, dtype=str(data.dtype))
    u = relay.unique(x, is_sorted, return_counts)
    assert len(u) == (5 if return_counts else 4)
    check_op(u.astuple(), [data], _expected(data, is_sorted, return_counts))


def test_unique_vm_and_fields():
    data = np.array([3, 1, 3, 2, 1], "int32")
    x = relay.var("x", shape=(5,), dtype="int32")
    u = relay.unique(x, False, True)
    mod = IRModule.from_expr(relay.Function([x], relay.Tuple([u[0], u[3], u[4]])))
    res = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(data)
    exp = _expected(data, False, True)
    for got, want in zip(res, (exp[0], exp[3], exp[4])):
        np.testing.assert_array_equal(got.numpy(), want)


def test_unique_types_and_errors():
    t = infer(relay.unique(relay.var("x", shape=(6,), dtype="int16"), True, True).astuple())
    assert [str(f.dtype) for f in t.fields] == ["int16", "int32", "int32", "int32", "int32"]
    assert [f.concrete_shape for f in t.fields] == [(6,), (6,), (6,), (1,), (6,)]
    with pytest.raises(TypeInferenceError, match="1-D"):
        infer(relay.unique(relay.var("x", shape=(2, 3), dtype="int32")).astuple())
    with pytest.raises(TypeInferenceError, match="integer dtype"):
        infer(relay.unique(relay.var("x", shape=(3,))).astuple())


@pytest.mark.parametrize("is_sorted", [True, False])
@pytest.mark.parametrize("data", [np.array([4, 5, 1, 2, 3, 3, 4, 5, 9, 9], "int64"),
                                  np.array([], "int64"), np.array([-1], "int64")],
                         ids=["10", "empty", "one"])
def test_unique_any_length_on_the_vm(is_sorted, data):
    x = relay.var("x", shape=(relay.Any(),), dtype="int64")
    mod = IRModule.from_expr(relay.Function([x], relay.unique(x, is_sorted, True).astuple()))
    exp = _expected(data, is_sorted, True)
    for kind in ("vm", "debug"):
        res = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(data)
        for got, want in zip(res, exp):
            np.testing.assert_array_equal(got.numpy(), want)

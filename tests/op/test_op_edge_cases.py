"""0-d tensors and zero-size dimensions through operators, both paths."""

import numpy as np
import pytest
from op_check import check_op

import relay_tvm as relay

S = relay.var("s", shape=(), dtype="float32")
A0 = np.array(2.5, "float32")
Z = relay.var("z", shape=(0, 3))
AZ = np.zeros((0, 3), "float32")
X = relay.var("x", shape=(2, 3))
AX = np.arange(6, dtype="float32").reshape(2, 3)

CASES = [
    ("add-0d", lambda: relay.add(S, S), [A0], A0 + A0),
    ("exp-0d", lambda: relay.exp(S), [A0], np.exp(A0)),
    ("sum-0d", lambda: relay.sum(S), [A0], A0),
    ("reshape-0d", lambda: relay.reshape(S, (1, 1)), [A0], A0.reshape(1, 1)),
    ("expand_dims-0d", lambda: relay.expand_dims(S, 0), [A0], A0.reshape(1)),
    (
        "broadcast_to-0d",
        lambda: relay.broadcast_to(S, (2, 2)),
        [A0],
        np.full((2, 2), 2.5, "float32"),
    ),
    ("shape_of-0d", lambda: relay.shape_of(S), [A0], np.zeros((0,), "int32")),
    ("ndarray_size-0d", lambda: relay.ndarray_size(S), [A0], np.array(1, "int32")),
    ("concatenate-empty", lambda: relay.concatenate([Z, X], 0), [AZ, AX], np.concatenate([AZ, AX])),
    ("sum-empty", lambda: relay.sum(Z, 0), [AZ], np.zeros(3, "float32")),
    ("add-empty", lambda: relay.add(Z, Z), [AZ], AZ),
    ("argmax-all", lambda: relay.argmax(X), [AX], np.array(5, "int32")),
    ("strided_slice-empty", lambda: relay.strided_slice(X, (1,), (1,)), [AX], AX[1:1]),
    ("take-0d-index", lambda: relay.take(X, relay.const(1), 1), [AX], AX[:, 1]),
]


@pytest.mark.parametrize("name,make,inputs,expected", CASES, ids=[c[0] for c in CASES])
def test_edge_case(name, make, inputs, expected):
    check_op(make(), inputs, expected)


@pytest.mark.parametrize("opname, npf", [("equal", np.equal), ("not_equal", np.not_equal)])
def test_equality_on_bool_tensors_compiles(opname, npf):
    # TVM 0.27 emitted `fcmp` on i1 operands for bool ==; the compute compares as int8.
    x = relay.var("x", shape=(4,), dtype="bool")
    y = relay.var("y", shape=(4,), dtype="bool")
    mod = relay.IRModule.from_expr(relay.Function([x, y], getattr(relay, opname)(x, y)))
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    for kind in ("debug", "graph"):
        out = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(a, b)
        np.testing.assert_array_equal(out.numpy(), npf(a, b))


@pytest.mark.parametrize("make", [
    lambda x: relay.nn.max_pool2d(x, pool_sizee=2),
    lambda x: relay.nn.global_avg_pool2d(x, layoutt="NCHW"),
    lambda x: relay.nn.adaptive_max_pool2d(x, output_sizee=1),
    lambda x: relay.sum(x, axiss=1),
    lambda x: relay.argmax(x, axiss=1),
])
def test_a_misspelled_keyword_names_the_operator(make):
    """The constructors made by factories raised ``_pool_ctor.<locals>.ctor() got an
    unexpected keyword argument`` (fresh-user trial): the message names the operator now."""
    x = relay.var("x", shape=(1, 1, 4, 4))
    with pytest.raises(TypeError) as info:
        make(x)
    msg = str(info.value)
    assert "<locals>" not in msg and "unexpected keyword argument" in msg
    assert msg.split("(")[0] in ("max_pool2d", "global_avg_pool2d", "adaptive_max_pool2d",
                                 "sum", "argmax")

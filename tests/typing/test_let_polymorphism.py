"""Let-polymorphism (Relay's type system, TVM 0.19's test_type_infer): a polymorphic function
bound by ``let`` is instantiated at each call in the let's body. The variable took the value's
type only after the body was typed, so the first call fixed ``A`` and the second was a type
error ("expected int32, got ()")."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError
from relay_tvm.typing.infer import infer_expr


def _poly_id():
    a = relay.TypeVar("A")
    x = relay.Var("x", a)
    return relay.Function([x], x, a, [a])


def test_let_bound_identity_at_two_types():
    f = relay.Var("id")
    body = relay.Let(f, _poly_id(), relay.Tuple([f(relay.const(1)), f(relay.Tuple([]))]))
    typed = infer_expr(body)
    assert typed.checked_type == relay.TupleType([relay.TensorType((), "int32"),
                                                   relay.TupleType([])])
    mod = relay.IRModule.from_expr(relay.Function([], body))
    for kind in ("debug", "vm"):
        one, unit = relay.create_executor(kind, mod=mod, target="llvm").evaluate()()
        assert one.numpy() == 1 and len(unit) == 0


def test_let_bound_function_on_two_tensor_types():
    """``%twice`` at float32 (2,) and int64 (3,): NumPy's x + x for each."""
    a = relay.TypeVar("A")
    x = relay.Var("x", a)
    twice = relay.Var("twice")
    # a polymorphic function of a tuple: (x, x), then each call's first field
    fn = relay.Function([x], relay.Tuple([x, x]), relay.TupleType([a, a]), [a])
    p = relay.var("p", shape=(2,), dtype="float32")
    q = relay.var("q", shape=(3,), dtype="int64")
    body = relay.Let(twice, fn, relay.Tuple([relay.TupleGetItem(twice(p), 0) + p,
                                             relay.TupleGetItem(twice(q), 1) + q]))
    mod = relay.IRModule.from_expr(relay.Function([p, q], body))
    pv = np.array([1.5, -2.0], "float32")
    qv = np.array([1, 2, 3], "int64")
    for kind in ("debug", "vm"):
        r0, r1 = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(pv, qv)
        np.testing.assert_array_equal(r0.numpy(), pv + pv)
        np.testing.assert_array_equal(r1.numpy(), qv + qv)


def test_monomorphic_let_still_checks_its_uses():
    """A let-bound function without type parameters keeps one type: calling it at two types
    is a type error naming the call."""
    x = relay.var("x", shape=(), dtype="int32")
    f = relay.Var("f")
    body = relay.Let(f, relay.Function([x], x), relay.Tuple([f(relay.const(1)),
                                                            f(relay.const(1.0))]))
    with pytest.raises(TypeInferenceError, match="%f"):
        infer_expr(body)


def test_infer_type_fills_call_type_args():
    """Call.type_args after InferType, as 0.19's: an operator call's argument types, a
    polymorphic function's type arguments at that call (they stayed empty: TVM 0.19's
    test_type_args / test_type_arg_infer)."""
    x, y = relay.var("x", shape=(10, 10)), relay.var("y", shape=(1, 10))
    body = relay.transform.InferType()(relay.IRModule.from_expr(relay.add(x, y)))["main"].body
    assert body.type_args == (relay.TensorType((10, 10), "float32"),
                              relay.TensorType((1, 10), "float32"))
    mod = relay.parse('#[version = "0.0.5"]\n'
                      "def @id[A](%x: A) -> A { %x }\n"
                      "def @main(%f: float32, %g: (int8, bool)) -> (float32, (int8, bool)) {\n"
                      "  (@id(%f), @id(%g))\n}\n")
    calls = relay.transform.InferType()(mod)["main"].body.fields
    assert calls[0].type_args == (relay.TensorType((), "float32"),)
    assert calls[1].type_args == (relay.TupleType([relay.TensorType((), "int8"),
                                                   relay.TensorType((), "bool")]),)

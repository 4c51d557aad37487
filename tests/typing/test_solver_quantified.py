"""Unification of quantified function types (Relay's rule: type parameters renamed, extra ones
solved as unknowns) in inference, and 0.19's type solver harness
(relay.analysis._ffi_api._test_type_solver) with Identity / Broadcast relations."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.analysis import _ffi_api
from relay_tvm.errors import RelayError, TypeInferenceError

T = relay.TensorType


def test_let_annotated_with_renamed_type_parameters_type_checks_and_runs():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    x = relay.var("x", a)
    poly = relay.Function([x], x, a, [a])
    f = relay.var("f", relay.FuncType([b], b, [b]))  # same type, other variable name
    y = relay.var("y", shape=(2,))
    prog = relay.Function([y], relay.Let(f, poly, f(y) * relay.const(2.0)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(prog))
    assert mod["main"].checked_type == relay.FuncType([T((2,), "float32")], T((2,), "float32"))
    out = relay.create_executor("debug", mod=mod).evaluate()(np.array([1.5, -3], "float32"))
    np.testing.assert_array_equal(out.numpy(), [3.0, -6.0])


def test_unify_function_with_more_type_parameters():
    s = _ffi_api._test_type_solver()
    unify = s("Unify")
    a, b, c = relay.TypeVar("a"), relay.TypeVar("b"), relay.TypeVar("c")
    general = relay.FuncType([a, relay.TupleType([b, c])], b, [a, b, c])
    special = relay.FuncType([a, relay.TupleType([a, a])], a, [a])
    assert unify(general, special) == special
    assert unify(special, general) == special
    with pytest.raises(TypeInferenceError):  # b and c are distinct parameters in both
        unify(relay.FuncType([a, b], c, [a, b, c]), relay.FuncType([b, c], a, [a, b, c]))


def _rel(name, args):
    func = tvm.ir.EnvFunc.get("tvm.relay.type_relation." + name)
    return relay.ty.TypeRelation(func, args, len(args) - 1, None)


def test_harness_solves_forward_and_backward():
    s = _ffi_api._test_type_solver()
    add, solve, resolve = s("AddConstraint"), s("Solve"), s("Resolve")
    x = T((4, 1), "float32")
    hole_in, mid, out = relay.IncompleteType(), relay.IncompleteType(), relay.IncompleteType()
    add(_rel("Broadcast", [x, hole_in, mid]))  # needs hole_in, known only backwards
    add(_rel("Identity", [mid, out]))
    add(_rel("Identity", [hole_in, T((2, 1, 3), "float32")]))
    assert solve()
    assert resolve(hole_in) == T((2, 1, 3), "float32")
    assert resolve(out) == T((2, 4, 3), "float32")


def test_harness_reports_unsolved_and_bad_relations():
    s = _ffi_api._test_type_solver()
    s("AddConstraint")(_rel("Broadcast", [relay.IncompleteType(), T((2,), "float32"),
                                          relay.IncompleteType()]))
    assert s("Solve")() is False  # the first input is never known
    s("AddConstraint")(_rel("Broadcast", [T((2,), "float32"), T((3,), "float32"),
                                          relay.IncompleteType()]))
    with pytest.raises(TypeInferenceError):
        s("Solve")()
    with pytest.raises(RelayError, match="no method"):
        s("Frobnicate")
    with pytest.raises(tvm.error.TVMError):  # a RelayError is a TVMError to 0.19 code
        s("Unify")(relay.GlobalTypeVar("g1"), relay.GlobalTypeVar("g2"))


def test_harness_takes_relay_tvm_relations():
    s = _ffi_api._test_type_solver()

    def double_rows(types, attrs):
        (t,) = types
        return T((t.shape[0] * 2, *t.shape[1:]), t.dtype)

    out = relay.IncompleteType()
    s("AddConstraint")(relay.ty.TypeRelation(double_rows, [T((3, 5), "int8"), out], 1, None))
    assert s("Solve")()
    assert s("Resolve")(out) == T((6, 5), "int8")


def test_relation_names_are_not_callable_through_ffi():
    f = tvm.ir.EnvFunc.get("tvm.relay.type_relation.Identity")
    assert f.name == "tvm.relay.type_relation.Identity"
    with pytest.raises(Exception, match="relay_tvm type relation"):
        f(1)

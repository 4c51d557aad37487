"""Kind checking of types and operator statistics (tvm.relay.analysis ``check_kind``,
``list_op_freqs``, ``extract_intermdeiate_expr`` — 0.19's spelling kept).

Kinds (Relay's ``TypeKind``): tensor, tuple, function, reference and applied-ADT types are of
kind ``Type``; a type variable has the kind it was made with; a ``GlobalTypeVar`` names an ADT
(``AdtHandle``); a ``TypeRelation`` is a ``Constraint``. Well-kindedness: tuple fields,
function arguments and results, reference contents, relation arguments and type-call
arguments are of kind ``Type``; a function's constraints are ``Constraint`` s; a type call's
callee is an ``AdtHandle`` applied to as many arguments as its definition has parameters.
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeKind,
    TypeRelation,
    TypeVar,
)


def _expect(t, kind, where, mod):
    got = check_kind(t, mod)
    if got != kind:
        raise TypeInferenceError(f"check_kind: {where} must be of kind {kind.name}, "
                                 f"got {got.name} ({t})")


def check_kind(t, mod=None) -> TypeKind:
    """The kind of type ``t`` (checking it is well kinded; see the module doc).

    Args:
        t: a Relay type.
        mod: the module holding the ADT definitions a ``TypeCall`` refers to.

    Raises:
        TypeInferenceError: ``t`` is ill kinded (a tuple of shapes, a call of a non-ADT, ...).
    """
    if isinstance(t, (TensorType,)):
        return TypeKind.Type
    if isinstance(t, (TypeVar, GlobalTypeVar, IncompleteType)):
        return TypeKind(t.kind)
    if isinstance(t, TupleType):
        for i, f in enumerate(t.fields):
            _expect(f, TypeKind.Type, f"tuple field {i}", mod)
        return TypeKind.Type
    if isinstance(t, FuncType):
        for i, a in enumerate(t.arg_types):
            _expect(a, TypeKind.Type, f"function argument {i}", mod)
        _expect(t.ret_type, TypeKind.Type, "function result", mod)
        for c in t.type_constraints:
            _expect(c, TypeKind.Constraint, "function constraint", mod)
        return TypeKind.Type
    if isinstance(t, RefType):
        _expect(t.value, TypeKind.Type, "reference contents", mod)
        return TypeKind.Type
    if isinstance(t, TypeRelation):
        for i, a in enumerate(t.args):
            _expect(a, TypeKind.Type, f"relation argument {i}", mod)
        return TypeKind.Constraint
    if isinstance(t, TypeCall):
        _expect(t.func, TypeKind.AdtHandle, "type call callee", mod)
        for i, a in enumerate(t.args):
            _expect(a, TypeKind.Type, f"type call argument {i}", mod)
        if mod is not None and isinstance(t.func, GlobalTypeVar):
            data = mod[t.func]
            if len(data.type_vars) != len(t.args):
                raise TypeInferenceError(
                    f"check_kind: {t.func.name_hint} takes {len(data.type_vars)} type "
                    f"arguments, got {len(t.args)}")
        return TypeKind.Type
    raise TypeInferenceError(f"check_kind: not a Relay type: {type(t).__name__}")


def list_op_freqs(mod) -> dict:
    """``operator name -> number of calls`` over every function of ``mod`` (fused primitive
    functions included)."""
    from ..ir.expr import Call
    from ..ir.functor import post_order
    from ..op.registry import Op

    freqs: dict = {}
    seen: set = set()
    for _, func in mod.functions.items():
        for node in post_order(func, skip=seen):
            seen.add(id(node))
            if type(node) is Call and isinstance(node.op, Op):
                freqs[node.op.name] = freqs.get(node.op.name, 0) + 1
    return freqs


def extract_intermdeiate_expr(mod, expr_id: int):
    """A module whose ``main`` computes the ``expr_id``-th call / tuple / tuple projection of
    ``mod["main"]`` (post order, counting from 0) — 0.19's ``ExtractIntermediateExpr``.

    Raises:
        RelayError: ``expr_id`` is out of range.
    """
    from ..errors import RelayError
    from ..ir.expr import Call, Tuple, TupleGetItem
    from ..ir.functor import post_order
    from ..ir.module import IRModule

    nodes = [n for n in post_order(mod["main"]) if type(n) in (Call, Tuple, TupleGetItem)]
    if not 0 <= expr_id < len(nodes):
        raise RelayError(f"extract_intermdeiate_expr: expr_id {expr_id} out of range; main has "
                         f"{len(nodes)} calls/tuples/projections")
    return IRModule.from_expr(nodes[expr_id])


extract_intermediate_expr = extract_intermdeiate_expr

__all__ = ["check_kind", "list_op_freqs", "extract_intermdeiate_expr",
           "extract_intermediate_expr"]

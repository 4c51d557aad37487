"""The operator registry.

One :class:`Op` per operator name holds everything about the operator in one place:

- ``attrs_schema``: its attributes (:class:`relay_tvm.ir.attrs.AttrsSchema`);
- ``type_rel``: its type relation ``rel(arg_types, attrs)``. It returns the output type; or
  ``None`` when the argument types are not known well enough yet; or ``(out, {i: type})`` to also
  fill in the type of argument ``i`` (how ``nn.conv2d`` infers an unannotated weight); or raises
  :class:`TypeInferenceError` naming the operator, the argument and both shapes;
- ``ref_impl``: the NumPy reference kernel ``ref(args, attrs, out_type)`` used by the interpreter;
  ``args`` are NumPy arrays (a tuple-typed argument comes as a Python tuple of arrays); it returns
  an array, or a tuple of arrays when ``out_type`` is a ``TupleType``;
- ``compute``: the TE compute ``compute(attrs, inputs, out_type)`` (topi wherever it has the op),
  used by lowering; ``inputs`` is a flat list of ``te.Tensor`` (a tuple-typed argument contributes
  its fields, as Relay's FTVMCompute had it); it returns a ``te.Tensor`` or a list of them (one
  per field of a ``TupleType`` output);
- ``pattern``: the fusion pattern kind (:class:`OpPattern`);
- ``gradient``: the gradient rule, ``grad(orig_call, output_grad) -> [arg grads]``;
- ``schedule``: an optional per-target schedule rule name used by the backend;
- ``shape_func``: for a data-dependent operator (``dyn.reshape``, ``arange`` of tensors, ...), the
  TE computation of its output shapes from its input values, run by the VM before allocating
  the outputs (:func:`register_shape_func`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Callable

from ..errors import RelayError
from ..ir.attrs import Attrs, AttrsSchema
from ..ir.base import RelayExpr
from ..ir.expr import Call
from ..ir.functor import register_expr_kind


class OpPattern(enum.IntEnum):
    """Fusion pattern kinds, ordered as Relay orders them."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


# Relay's names for the kinds.
kElemWise = OpPattern.ELEMWISE
kBroadcast = OpPattern.BROADCAST
kInjective = OpPattern.INJECTIVE
kCommReduce = OpPattern.COMM_REDUCE
kOutEWiseFusable = OpPattern.OUT_ELEMWISE_FUSABLE
kTuple = OpPattern.TUPLE
kOpaque = OpPattern.OPAQUE

_EMPTY_SCHEMA = AttrsSchema("DictAttrs", [])


@dataclass(eq=False, repr=False)
class Op(RelayExpr):
    """A primitive operator (printed by name, e.g. ``nn.conv2d``). One object per name."""

    name: str
    num_inputs: int = -1  # -1: variadic (a tuple argument or any count)
    arguments: tuple = ()
    attrs_schema: AttrsSchema = _EMPTY_SCHEMA
    type_rel: Callable | None = None
    ref_impl: Callable | None = None
    compute: Callable | None = None
    pattern: OpPattern = OpPattern.OPAQUE
    gradient: Callable | None = None
    description: str = ""
    support_level: int = 10
    schedule: str | None = None
    shape_func: Callable | None = None
    # whether output row b (axis 0) is computed from row b of each operand alone, so that a
    # kernel over a dynamic batch may run as its batch-1 kernel in a loop (backend/batch_loop):
    # True, a rule ``(attrs, rank) -> bool``, or None (unknown: never looped)
    batch_rows: Callable | bool | None = None
    span: None = None

    # one object per name: identity (object's own C-level hash and ==, the fastest there is;
    # operators are hashed in every pass's memo)
    __hash__ = object.__hash__
    __eq__ = object.__eq__

    def __repr__(self):
        return f"Op({self.name})"

    __str__ = __repr__

    def get_attr(self, key: str):
        """Relay-style access: ``TOpPattern``, ``FTVMCompute``, ``FTypeRelation``, ..."""
        value = {
            "TOpPattern": int(self.pattern),
            "FTVMCompute": self.compute,
            "FTypeRelation": self.type_rel,
            "FReference": self.ref_impl,
            "FPrimalGradient": self.gradient,
            "FShapeFunc": self.shape_func,
        }.get(key)
        return value if value is not None else _user_attr(self.name, key)

    def make_attrs(self, **values) -> Attrs | None:
        if not self.attrs_schema.fields:
            if values:
                self.attrs_schema.make(self.name, **values)  # raises the unknown-attribute error
            return None
        return self.attrs_schema.make(self.name, **values)

    def __call__(self, *args, **attrs):
        return Call(self, list(args), self.make_attrs(**attrs))

    # ---- tvm.relay 0.19's builder methods for operators registered from Python ---------------
    def reset_attr(self, attr_key: str) -> None:
        """Remove the attribute ``attr_key`` set with ``register_op_attr`` (0.19's method)."""
        from .op_attrs import reset_op_attr

        reset_op_attr(self.name, attr_key)

    def set_num_inputs(self, n: int) -> None:
        self.num_inputs = int(n)

    def add_argument(self, name: str, type_info: str = "Tensor", description: str = "") -> None:
        self.arguments = (*self.arguments, name)

    def set_support_level(self, level: int) -> None:
        self.support_level = int(level)

    def set_attrs_type_key(self, key: str) -> None:
        """Accepted for 0.19 code; relay_tvm operators take any ``DictAttrs``."""

    def add_type_rel(self, rel_name: str, type_rel_func: Callable | None = None) -> None:
        """The type relation: ``type_rel_func(arg_types, attrs) -> output type`` (None: not
        known yet), or a built-in one by name: ``"Identity"`` (the output has the first
        input's type) or ``"Broadcast"`` (NumPy broadcasting of two inputs).

        Raises:
            RelayError: an unknown built-in relation name.
        """
        if type_rel_func is None:
            from ._common import broadcast_rel, identity_rel

            makers = {"Identity": identity_rel, "Broadcast": broadcast_rel}
            if rel_name not in makers:
                raise RelayError(f"{self.name}: unknown type relation {rel_name!r}; give a "
                                 f"function or one of {sorted(makers)}")
            type_rel_func = makers[rel_name](self.name)
        self.type_rel = type_rel_func


register_expr_kind(Op, "visit_op")  # functors dispatch operators to visit_op

_REGISTRY: dict[str, Op] = {}


def _user_attr(name, key):
    from .op_attrs import get_op_attr  # attributes set with register_op_attr / hooks

    return get_op_attr(name, key)


def register_op(
    name: str,
    *,
    num_inputs: int = -1,
    arguments=(),
    attrs=None,
    rel: Callable | None = None,
    ref: Callable | None = None,
    compute: Callable | None = None,
    pattern: OpPattern = OpPattern.OPAQUE,
    gradient: Callable | None = None,
    doc: str = "",
    level: int = 10,
    schedule: str | None = None,
    batch_rows: Callable | bool | None = None,
) -> Op:
    """Register (or update) the operator ``name`` and return it.

    ``batch_rows`` declares that output row ``b`` (axis 0) depends only on row ``b`` of each
    operand whose rank is the output's (operands of lower rank, or of size 1 on axis 0,
    broadcast over the rows): ``True``, or a rule ``(attrs, rank) -> bool`` for operators
    where it depends on attributes (an ``axis`` that may be 0). Only such operators run over
    a dynamic batch as a loop of their batch-1 kernel; elementwise-looking operators that
    read other rows (``trilu``, ``repeat`` along axis 0) must not declare it."""
    op = _REGISTRY.get(name)
    if op is None:
        op = Op(name)
        _REGISTRY[name] = op
    op.num_inputs = num_inputs
    op.arguments = tuple(arguments)
    if attrs is not None:
        op.attrs_schema = attrs if isinstance(attrs, AttrsSchema) else AttrsSchema(*attrs)
    if rel is not None:
        op.type_rel = rel
    if ref is not None:
        op.ref_impl = ref
    if compute is not None:
        op.compute = compute
    op.pattern = OpPattern(pattern)
    if gradient is not None:
        op.gradient = gradient
    op.description = doc
    op.support_level = level
    if schedule is not None:
        op.schedule = schedule
    if batch_rows is not None:
        op.batch_rows = batch_rows
    return op


def rows_unless_axis_0(*keys):
    """A ``batch_rows`` rule: rows stay apart unless one of the attributes ``keys`` (a channel
    axis of per-channel operands: bias_add, prelu, qnn's scales) is axis 0."""

    def rule(attrs, rank):
        vals = [getattr(attrs, k, None) for k in keys]
        return all(v is None or int(v) % rank != 0 for v in vals)

    return rule


def register(op_name: str, describe: str = "") -> None:
    """Register a new operator named ``op_name`` from Python (``tvm.relay.op.op.register``);
    complete it with ``get(op_name).set_num_inputs(...)``, ``add_type_rel(...)``, ... and
    ``register_pattern``.

    Raises:
        RelayError: an operator of that name is already registered.
    """
    if op_name in _REGISTRY:
        raise RelayError(f"Operator {op_name} is registered before")
    register_op(op_name, doc=describe)


def register_stateful(op_name: str, stateful: bool, level: int = 10) -> None:
    """Mark ``op_name`` as having (or not) side effects (attribute ``TOpIsStateful``)."""
    from .op_attrs import register_op_attr

    register_op_attr(op_name, "TOpIsStateful", bool(stateful), level)


def _setter(field: str):
    def register(name: str, fn: Callable | None = None):
        def deco(f):
            op = get(name)
            setattr(op, field, f)
            return f

        return deco(fn) if fn is not None else deco

    register.__name__ = f"register_{field}"
    return register


register_compute = _setter("compute")
register_ref = _setter("ref_impl")
register_gradient = _setter("gradient")
register_rel = _setter("type_rel")
# A data-dependent operator's shape function ``shape_func(attrs, inputs, out_type)``: TE computes
# of int64 vectors, one per output tensor, giving its shape from the input *values* (``inputs``
# are the kernel's TE tensors). The VM runs it before allocating the outputs. Operators whose
# output shape follows from the input shapes need none: their shape function is derived from the
# TE compute (see :mod:`relay_tvm.backend.lower`).
register_shape_func = _setter("shape_func")
# What it means when a shape function gives a negative dimension (its sign for "these values
# make no output"): a string, or ``f(attrs) -> str``; the VM's InputError says it. Without one
# the message lists the usual causes.
register_shape_error = _setter("shape_error")


def register_pattern(name: str, pattern: OpPattern) -> None:
    get(name).pattern = OpPattern(pattern)


def get(name: str) -> Op:
    """The registered operator ``name`` (``relay.op.get``).

    Raises:
        RelayError: no operator of that name is registered.
    """
    op = _REGISTRY.get(name)
    if op is None:
        raise RelayError(f"operator {name!r} is not registered")
    return op


def is_registered(name: str) -> bool:
    return name in _REGISTRY


def list_op_names() -> list:
    return sorted(_REGISTRY)


def make_call(name: str, args, span=None, **attrs) -> Call:
    """Build a call of the registered operator ``name`` with attributes checked by its schema."""
    op = get(name)
    return Call(op, list(args), op.make_attrs(**attrs), span=span)


__all__ = [
    "Op",
    "OpPattern",
    "register_op",
    "register_compute",
    "register_ref",
    "register_gradient",
    "register_rel",
    "register_shape_func",
    "register_shape_error",
    "register_pattern",
    "get",
    "is_registered",
    "list_op_names",
    "make_call",
    "kElemWise",
    "kBroadcast",
    "kInjective",
    "kCommReduce",
    "kOutEWiseFusable",
    "kOpaque",
]

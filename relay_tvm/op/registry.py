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
from ..ir.base import RelayExpr, new_seal_epoch
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

    def __setattr__(self, name, value):
        if name == "type_rel" and value is not getattr(self, "type_rel", None):
            # types inferred with the old relation are stale: unseal them all (see ir.base)
            new_seal_epoch()
        object.__setattr__(self, name, value)

    def get_attr(self, key: str):
        """Relay-style access: ``TOpPattern`` (an int), ``FTVMCompute``, ``FTypeRelation``,
        ``FPrimalGradient``, ... (the fields of :data:`OP_FIELDS`, as overridden with
        ``register_op_attr`` / ``TempOpAttr``), or any other key set with ``register_op_attr``;
        None when not set."""
        field = OP_FIELDS.get(key)
        if field is None:
            return _user_attr(self.name, key)
        return int(self.pattern) if key == "TOpPattern" else getattr(self, field)

    def set_attr(self, attr_name: str, value, plevel: int = 10) -> None:
        """Set the attribute ``attr_name`` at priority ``plevel`` (0.19's ``Op.set_attr``; the
        rules of :func:`relay_tvm.op.op_attrs.register_op_attr`).

        Raises:
            RelayError: ``attr_name`` is already set at ``plevel``.
        """
        from .op_attrs import register_op_attr

        register_op_attr(self.name, attr_name, value, plevel)

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
        """Remove the attribute ``attr_key`` (0.19's method): one set with ``register_op_attr``,
        or a built-in one of :data:`OP_FIELDS` (a reset ``TOpPattern`` is ``OPAQUE``)."""
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


# tvm.relay 0.19's attribute keys that are fields of :class:`Op`: the passes and the backend read
# the fields, and ``register_op_attr`` / ``TempOpAttr`` / ``reset_attr`` of these keys write them
OP_FIELDS = {
    "TOpPattern": "pattern",
    "FTVMCompute": "compute",
    "FTypeRelation": "type_rel",
    "FReference": "ref_impl",
    "FPrimalGradient": "gradient",
    "FShapeFunc": "shape_func",
}

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
    from .op_attrs import mark_unset

    register_op(op_name, doc=describe)
    mark_unset(op_name)


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


def _register_attr(op_name, key, value, level):
    from .op_attrs import register_op_attr

    return register_op_attr(op_name, key, value, level)


# The registration functions below follow 0.19's rules (:func:`~.op_attrs.register_op_attr`): a
# value already registered at a higher level is kept, one at the same level is an error, and
# relay_tvm's own operators hold theirs at level 10 (override one with a higher level or
# ``TempOpAttr``). Each is a decorator when the function is None, and raises RelayError for an
# unknown operator or a second registration at the same level.
def register_compute(op_name: str, compute: Callable | None = None, level: int = 10):
    """Register the TE compute ``compute(attrs, inputs, out_type)`` of ``op_name``
    (``FTVMCompute``, tvm.relay 0.19's ``register_compute``), used by lowering and, for an
    operator without a reference kernel, by the interpreter."""
    return _register_attr(op_name, "FTVMCompute", compute, level)


def register_ref(op_name: str, ref: Callable | None = None, level: int = 10):
    """Register the NumPy reference kernel ``ref(args, attrs, out_type)`` of ``op_name``
    (``FReference``), which the interpreter (``create_executor("debug")``) runs."""
    return _register_attr(op_name, "FReference", ref, level)


def register_gradient(op_name: str, fgradient: Callable | None = None, level: int = 10):
    """Register the gradient rule ``fgradient(orig_call, output_grad) -> [arg grads]`` of
    ``op_name`` (``FPrimalGradient``, tvm.relay 0.19's ``register_gradient``)."""
    return _register_attr(op_name, "FPrimalGradient", fgradient, level)


def register_rel(op_name: str, rel: Callable | None = None, level: int = 10):
    """Register the type relation ``rel(arg_types, attrs)`` of ``op_name`` (``FTypeRelation``;
    see :class:`Op`)."""
    return _register_attr(op_name, "FTypeRelation", rel, level)


def register_shape_func(op_name: str, data_dependent=None, shape_func: Callable | None = None,
                        level: int = 10):
    """Register the shape function of a data-dependent operator (attribute ``FShapeFunc``).

    relay_tvm's form is ``register_shape_func(op_name, shape_func)``: ``shape_func(attrs,
    inputs, out_type)`` returns TE computes of int64 vectors, one per output tensor, giving its
    shape from the input *values* (``inputs`` are the kernel's TE tensors); the VM runs it
    before allocating the outputs. tvm.relay 0.19's form ``register_shape_func(op_name, True,
    shape_func, level)`` is accepted with ``shape_func(attrs, inputs, out_ndims)`` (``out_ndims``:
    the rank of each output), written with ``te.compute`` (TVM has no ``te.hybrid`` any more).
    An operator whose output shape follows from its input shapes needs none: its shape function
    is derived from its TE compute (see :mod:`relay_tvm.backend.lower`).

    Raises:
        NotProvidedError: 0.19's ``data_dependent=False`` (a shape function of the input
            shapes), which relay_tvm derives from the compute instead.
        RelayError: no operator named ``op_name``, or ``FShapeFunc`` already registered at
            ``level``.
    """
    from .op_attrs import register_op_attr

    if callable(data_dependent) and shape_func is None:  # relay_tvm's (op_name, shape_func)
        return register_op_attr(op_name, "FShapeFunc", data_dependent, level)
    if data_dependent is None:
        return register_op_attr(op_name, "FShapeFunc", None, level)
    if not data_dependent:
        from ..errors import NotProvidedError

        raise NotProvidedError(
            f"register_shape_func({op_name!r}, data_dependent=False): relay_tvm derives the "
            "shape function of an operator whose output shape follows from its input shapes "
            "from its TE compute (register_compute), so none is registered; drop this call. A "
            "data-dependent operator's shape function is registered with data_dependent=True")

    def adapt(fn019):
        def fn(attrs, inputs, out_type):
            outs = [out_type] if not hasattr(out_type, "fields") else list(out_type.fields)
            return fn019(attrs, inputs, [len(t.shape) for t in outs])

        fn.__wrapped__ = fn019
        register_op_attr(op_name, "FShapeFunc", fn, level)
        return fn019

    return adapt(shape_func) if shape_func is not None else adapt


# What it means when a shape function gives a negative dimension (its sign for "these values
# make no output"): a string, or ``f(attrs) -> str``; the VM's InputError says it. Without one
# the message lists the usual causes.
register_shape_error = _setter("shape_error")


def register_pattern(op_name: str, pattern: OpPattern, level: int = 10) -> None:
    """Register the fusion pattern kind of ``op_name`` (attribute ``TOpPattern``, read by
    FuseOps) at priority ``level``, with the rules of :func:`register_compute`.

    Raises:
        RelayError: no operator named ``op_name``, or its pattern already registered at
            ``level``.
    """
    from .op_attrs import register_op_attr

    register_op_attr(op_name, "TOpPattern", OpPattern(int(pattern)), level)


def register_injective_schedule(op_name: str, level: int = 10) -> None:
    """Schedule the kernels whose anchor is ``op_name`` as injective (tvm.relay 0.19's
    ``register_injective_schedule``): relay_tvm's generic rule, which every elementwise,
    broadcast and injective kernel gets (:mod:`relay_tvm.backend.schedule`); it replaces a
    template rule the operator had. Level rules as :func:`register_compute`'s.

    Raises:
        RelayError: no operator named ``op_name``, or its schedule already registered at
            ``level`` (relay_tvm's operators hold theirs at level 10).
    """
    from .op_attrs import register_schedule_rule

    register_schedule_rule(op_name, None, level)


def register_broadcast_schedule(op_name: str, level: int = 10) -> None:
    """Schedule the kernels whose anchor is ``op_name`` as broadcast ones (tvm.relay 0.19's
    ``register_broadcast_schedule``, the injective schedule there too): see
    :func:`register_injective_schedule`."""
    from .op_attrs import register_schedule_rule

    register_schedule_rule(op_name, None, level)


def register_reduce_schedule(op_name: str, level: int = 10) -> None:
    """Schedule the kernels whose anchor is ``op_name`` with the CPU reduction rule
    (tvm.relay 0.19's ``register_reduce_schedule``; ``relay_tvm.backend.schedule.cpu``'s
    ``"reduce"`` rule, which falls back to the generic one where it does not fit).

    Raises:
        RelayError: as :func:`register_injective_schedule`.
    """
    from .op_attrs import register_schedule_rule

    register_schedule_rule(op_name, "reduce", level)


_NO_STRATEGY = ("relay_tvm has no op strategies or TE schedules (TVM's te.create_schedule is "
                "gone): register the operator's TE compute with register_compute, and its "
                "kernel is scheduled by relay_tvm.backend.schedule (register_injective_schedule, "
                "register_broadcast_schedule or register_reduce_schedule pick the rule; tune "
                "it with relay_tvm.tune)")


def register_strategy(op_name: str, fstrategy: Callable | None = None, level: int = 10):
    """tvm.relay 0.19's ``register_strategy`` (an ``OpStrategy`` of topi computes and
    schedules per target), which relay_tvm cannot honour.

    Raises:
        NotProvidedError: always, naming what to use instead.
    """
    from ..errors import NotProvidedError

    raise NotProvidedError(f"register_strategy({op_name!r}) / FTVMStrategy: {_NO_STRATEGY}")


def register_schedule(op_name: str, schedule: Callable, level: int = 10):
    """tvm.relay 0.19's ``register_schedule`` (a topi TE schedule function), which relay_tvm
    cannot honour.

    Raises:
        NotProvidedError: always, naming what to use instead.
    """
    from ..errors import NotProvidedError

    raise NotProvidedError(f"register_schedule({op_name!r}): {_NO_STRATEGY}")


def get(name: str) -> Op:
    """The registered operator ``name`` (``relay.op.get``).

    Raises:
        RelayError: no operator of that name is registered.
    """
    op = _REGISTRY.get(name)
    if op is None:
        from ..errors import did_you_mean

        raise RelayError(f"operator {name!r} is not registered{did_you_mean(name, _REGISTRY)}")
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
    "register_injective_schedule",
    "register_broadcast_schedule",
    "register_reduce_schedule",
    "register_strategy",
    "register_schedule",
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

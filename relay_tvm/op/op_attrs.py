"""Per-operator attributes users set and override (tvm.relay 0.19's ``register_op_attr`` and
the ``register_alter_op_layout`` / ``register_convert_op_layout`` / ``register_legalize``
hooks).

The passes look the hooks up by key:

- ``"FTVMAlterOpLayout"``: ``f(attrs, inputs, tinfos, out_type) -> Expr | None`` replaces a
  call in :func:`~relay_tvm.transform.AlterOpLayout` (``None``: keep the call as it is; as in
  Relay, the hook takes the place of the built-in x86 rule for its operator, and the new
  layouts are carried forward by the layout rules of
  :mod:`relay_tvm.transform.convert_layout`).
- ``"FTVMConvertOpLayout"``: ``f(attrs, inputs, tinfos, desired_layouts) -> Expr | None``
  replaces a call in :func:`~relay_tvm.transform.ConvertLayout`.
- ``"FTVMLegalize"``: ``f(attrs, inputs, types) -> Expr | None`` replaces a call in
  :func:`~relay_tvm.transform.Legalize`.

``attrs`` is the call's :class:`Attrs`, ``inputs`` the (already rewritten) argument
expressions, ``tinfos`` / ``types`` the arguments' checked :class:`TensorType`\\ s (with
``.shape`` and ``.dtype``, as 0.19's ``te`` placeholders had), ``out_type`` the call's type.
A Legalize hook that returns ``None`` leaves the call to the built-in rule; an AlterOpLayout or
ConvertLayout hook that returns ``None`` keeps the call in its layouts (Relay's behaviour: the
user's hook is the operator's only one).
"""

from __future__ import annotations

import contextlib
from typing import Callable

from ..errors import RelayError

_ATTRS: dict = {}  # (op name, key) -> (value, level), for keys that are not Op fields
# (op name, key) -> level of an Op field's value (registry.OP_FIELDS) set by register_op_attr,
# TempOpAttr or reset; a field never set that way holds relay_tvm's own value, at BUILTIN_LEVEL
_FIELD_LEVELS: dict = {}
BUILTIN_LEVEL = 10

HOOK_KEYS = ("FTVMAlterOpLayout", "FTVMConvertOpLayout", "FTVMLegalize")

# key -> operators for which a relay_tvm pass holds a built-in rule under that key at
# BUILTIN_LEVEL without an entry in _ATTRS (declare_builtin); a user's rule for one of them
# needs a higher level, as overriding one of 0.19's own registrations did
_BUILTIN_RULES: dict = {}

#: 0.19's FTVMExternalCompiler hook (register_external_compiler): nothing reads it in relay_tvm
EXTERNAL_COMPILER_REFUSAL = (
    "relay_tvm has no external code generators (BYOC): relay.build / vm.compile of a "
    "partitioned module raise BuildError. The IR side of BYOC is provided: mark the operators "
    "a compiler takes with tvm.ir.register_op_attr(op_name, \"target.<compiler>\", "
    "predicate) (or a pattern table, relay.op.contrib.register_pattern_table, with "
    "transform.MergeComposite), then transform.AnnotateTarget([\"<compiler>\"]), "
    "MergeCompilerRegions and PartitionGraph")


def declare_builtin(attr_key: str, op_names) -> None:
    """Record that a pass has built-in ``attr_key`` rules for ``op_names`` at level 10 (so
    :func:`register_op_attr` at the default level is refused for them, as in 0.19)."""
    _BUILTIN_RULES.setdefault(attr_key, set()).update(op_names)


def _check_op(op_name: str) -> str:
    from .registry import is_registered

    if not isinstance(op_name, str):
        op_name = getattr(op_name, "name", op_name)
    if not is_registered(op_name):
        raise RelayError(f"register_op_attr: no operator named {op_name!r}")
    return op_name


def _level(op_name: str, attr_key: str) -> int:
    """The level of the value ``attr_key`` of ``op_name`` has now (0: none)."""
    from .registry import OP_FIELDS, get

    if attr_key == "FTVMStrategy":  # every relay_tvm operator is scheduled (a level-10 rule)
        entry = _ATTRS.get((op_name, attr_key))
        return entry[1] if entry else BUILTIN_LEVEL
    if attr_key in OP_FIELDS:
        level = _FIELD_LEVELS.get((op_name, attr_key))
        if level is not None:
            return level
        # a field set by relay_tvm's own registration: 0.19 registered its operators' attributes
        # at the default level 10
        return BUILTIN_LEVEL if getattr(get(op_name), OP_FIELDS[attr_key]) is not None else 0
    entry = _ATTRS.get((op_name, attr_key))
    if entry is None and op_name in _BUILTIN_RULES.get(attr_key, ()):
        return BUILTIN_LEVEL
    return entry[1] if entry else 0


def _store(op_name: str, attr_key: str, value, level: int) -> None:
    """Set ``attr_key`` of ``op_name`` to ``value`` at ``level`` (no level check)."""
    from .registry import OP_FIELDS, OpPattern, get

    field = OP_FIELDS.get(attr_key)
    if field is None:
        _ATTRS[(op_name, attr_key)] = (value, level)
        return
    if attr_key == "TOpPattern":
        value = OpPattern(int(value))
    setattr(get(op_name), field, value)
    _FIELD_LEVELS[(op_name, attr_key)] = level


def register_op_attr(op_name: str, attr_key: str, value=None, level: int = 10):
    """Set attribute ``attr_key`` of operator ``op_name`` to ``value`` at priority ``level``
    (a decorator when ``value`` is None), with 0.19's rules: a value already set at a higher
    level is kept (the call is ignored), one at the same level is an error, a lower one is
    replaced. relay_tvm's own operators hold their attributes at level 10, so overriding a
    built-in ``TOpPattern``, ``FTVMCompute``, ``FPrimalGradient``, ``FTypeRelation``,
    ``FReference`` or ``FShapeFunc`` (the keys of :data:`~relay_tvm.op.registry.OP_FIELDS`,
    read by FuseOps, lowering, ``gradient``, type inference, the interpreter and the VM) takes a
    level above 10, or :class:`TempOpAttr`.

    Raises:
        RelayError: no operator named ``op_name``, or ``attr_key`` already registered at
            ``level``.
        NotProvidedError: ``attr_key`` is ``"FTVMExternalCompiler"`` (0.19's
            ``register_external_compiler``; relay_tvm has no external code generators).
    """
    op_name = _check_op(op_name)
    if attr_key == "FTVMExternalCompiler":
        from ..errors import NotProvidedError

        raise NotProvidedError(f"register_op_attr({op_name!r}, \"FTVMExternalCompiler\") "
                               f"(tvm.relay.op.register_external_compiler): "
                               f"{EXTERNAL_COMPILER_REFUSAL}")
    if attr_key == "FTVMStrategy":
        from .registry import register_strategy

        register_strategy(op_name, value, level)  # raises NotProvidedError

    def register(v):
        old = _level(op_name, attr_key)
        if old == level:
            raise RelayError(f"attribute {attr_key} of {op_name} is already registered at "
                             f"level {level}; register at a higher level to override it")
        if old < level:
            _store(op_name, attr_key, v, level)
        return v

    return register(value) if value is not None else register


def get_op_attr(op_name: str, attr_key: str):
    """The value set for ``attr_key`` of ``op_name``, or None."""
    from .registry import OP_FIELDS, get

    if attr_key in OP_FIELDS:
        return get(op_name).get_attr(attr_key)
    entry = _ATTRS.get((op_name, attr_key))
    return entry[0] if entry else None


def reset_op_attr(op_name: str, attr_key: str) -> None:
    """Remove ``attr_key`` of ``op_name`` (0.19's ``Op.reset_attr``): a built-in one too (a
    reset ``TOpPattern`` is ``OPAQUE``, as an operator without a pattern was in 0.19)."""
    from .registry import OP_FIELDS, OpPattern, get

    op_name = _check_op(op_name)
    _ATTRS.pop((op_name, attr_key), None)
    field = OP_FIELDS.get(attr_key)
    if field is not None:
        setattr(get(op_name), field, OpPattern.OPAQUE if attr_key == "TOpPattern" else None)
        _FIELD_LEVELS[(op_name, attr_key)] = 0


def mark_unset(op_name: str) -> None:
    """Record that the built-in attribute fields of the new operator ``op_name`` hold no
    registered value yet (its default ``OPAQUE`` pattern included), so its first registrations
    at the default level are accepted."""
    from .registry import OP_FIELDS

    for key in OP_FIELDS:
        _FIELD_LEVELS[(op_name, key)] = 0
    _ATTRS[(op_name, "FTVMStrategy")] = (None, 0)


def register_schedule_rule(op_name: str, rule: str | None, level: int) -> None:
    """Give the kernels anchored at ``op_name`` the schedule rule ``rule`` (``Op.schedule``;
    None: the generic rule) at priority ``level`` (attribute ``FTVMStrategy``, with the rules
    of :func:`register_op_attr`)."""
    from .registry import get

    op_name = _check_op(op_name)
    old = _level(op_name, "FTVMStrategy")
    if old == level:
        raise RelayError(f"the schedule (FTVMStrategy) of {op_name} is already registered at "
                         f"level {level}; register at a higher level to override it")
    if old < level:
        _ATTRS[(op_name, "FTVMStrategy")] = (rule, level)
        get(op_name).schedule = rule


@contextlib.contextmanager
def temp_op_attr(op_name: str, attr_key: str, attr_value):
    """Set ``attr_key`` of ``op_name`` to ``attr_value`` inside the ``with`` block and restore
    the previous value and its level after (tvm.relay.testing's ``TempOpAttr``): as in 0.19 the
    attribute is reset and set at level 10, so it replaces a built-in one too.

    Raises:
        RelayError: no operator named ``op_name``.
    """
    from .registry import OP_FIELDS, get

    op_name = _check_op(op_name)
    field = OP_FIELDS.get(attr_key)
    if field is None:
        saved = _ATTRS.get((op_name, attr_key))
    else:
        saved = (getattr(get(op_name), field), _FIELD_LEVELS.get((op_name, attr_key)))
    reset_op_attr(op_name, attr_key)
    _store(op_name, attr_key, attr_value, BUILTIN_LEVEL)
    try:
        yield
    finally:
        if field is None:
            if saved is None:
                _ATTRS.pop((op_name, attr_key), None)
            else:
                _ATTRS[(op_name, attr_key)] = saved
        else:
            setattr(get(op_name), field, saved[0])
            if saved[1] is None:
                _FIELD_LEVELS.pop((op_name, attr_key), None)
            else:
                _FIELD_LEVELS[(op_name, attr_key)] = saved[1]


class TempOpAttr:
    """``with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", f):`` (tvm.relay.testing)."""

    def __init__(self, op_name: str, attr_key: str, attr_value):
        self._cm = temp_op_attr(op_name, attr_key, attr_value)

    def __enter__(self):
        self._cm.__enter__()
        return self

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _hook_register(key: str):
    def register(op_name: str, fn: Callable | None = None, level: int = 10):
        return register_op_attr(op_name, key, fn, level)

    return register


register_alter_op_layout = _hook_register("FTVMAlterOpLayout")
register_alter_op_layout.__doc__ = "Set the AlterOpLayout hook of an operator (see module doc)."
register_convert_op_layout = _hook_register("FTVMConvertOpLayout")
register_convert_op_layout.__doc__ = "Set the ConvertLayout hook of an operator (module doc)."
register_legalize = _hook_register("FTVMLegalize")
register_legalize.__doc__ = "Set the Legalize hook of an operator (see module doc)."


register_infer_correct_layout = _hook_register("FInferCorrectLayout")
register_infer_correct_layout.__doc__ = """Set the layout rule of an operator for ConvertLayout
(Relay's ``FInferCorrectLayout``): ``fn(attrs, new_in_layouts, old_in_layouts, old_in_types)``
returns an :class:`~relay_tvm.transform.infer_layout_utils.InferCorrectLayoutOutput` (the
layouts the call reads and writes, and its attributes in them); ``new_in_layouts`` is None on
the first query (the original program). See :mod:`relay_tvm.transform.convert_layout`.
AlterOpLayout calls it where users' FTVMAlterOpLayout hooks change layouts; its built-in x86
blocking keeps rules of its own."""


def apply_hook(key: str, call, orig, *extra):
    """Run the ``key`` hook of ``call``'s operator, if any, on the rewritten ``call`` whose
    original (typed) form is ``orig``; returns the replacement or None."""
    from ..ir.expr import Call
    from .registry import Op

    if type(call) is not Call or not isinstance(call.op, Op):
        return None
    fn = get_op_attr(call.op.name, key)
    if fn is None:
        return None
    types = [a.checked_type for a in orig.args]
    if key in ("FTVMLegalize", "FTVMQnnLegalize", "FTVMQnnCanonicalize"):
        out = fn(call.attrs, list(call.args), types + [orig.checked_type])
    elif key == "FTVMAlterOpLayout":
        out = fn(call.attrs, list(call.args), types, orig.checked_type)
    else:
        out = fn(call.attrs, list(call.args), types, *extra)
    if out is None or out is call:
        return None
    from ..ir.base import RelayExpr

    if not isinstance(out, RelayExpr):
        raise RelayError(f"the {key} hook of {call.op.name} returned {type(out).__name__}, "
                         "not a Relay expression or None")
    return out


# tvm.relay 0.19's attrs node classes for operators relay_tvm does not provide (binary and
# sparse operators, NNPACK, conv3d Winograd, STFT, the device planner's and the auto-schedulers'
# annotations): ``isinstance`` against them is False for every call relay_tvm builds.
_ATTRS_WITHOUT_OP = ("AutoSchedulerLayoutTransformAttrs", "BinaryConv2DAttrs", "BinaryDenseAttrs",
                     "BitPackAttrs", "Conv2DWinogradNNPACKWeightTransformAttrs",
                     "Conv3DWinogradAttrs", "MetaScheduleLayoutTransformAttrs", "OnDeviceAttrs",
                     "ShapeFuncAttrs", "SparseConv2DAttrs",
                     "SparseTransposeAttrs", "StftAttrs", "TupleGetItemAttrs", "WithFuncIdAttrs")


def _schemas_by_key() -> dict:
    """type key -> the attribute schemas of the registered operators that use it."""
    from .registry import _REGISTRY

    out: dict = {}
    for op in _REGISTRY.values():
        out.setdefault(op.attrs_schema.type_key, []).append(op.attrs_schema)
    return out


class _AttrsNodeClass(type):
    """The class of tvm.relay 0.19's attrs node classes (``Conv2DAttrs``, ...): an
    :class:`~relay_tvm.ir.attrs.Attrs` is an instance of the one named by its type key."""

    def __instancecheck__(cls, obj):
        from ..ir.attrs import Attrs

        return isinstance(obj, Attrs) and obj.type_key == cls.type_key

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} cannot be constructed directly: use "
                        f"tvm.ir.make_node({cls.type_key!r}, **fields) or the operator's "
                        "constructor")


_NODE_CLASSES: dict = {}


def __getattr__(name):
    """``relay.op.op_attrs.Conv2DAttrs`` etc.: classes for ``isinstance(call.attrs, ...)``."""
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        key = "relay.attrs." + name
        if name not in _ATTRS_WITHOUT_OP and key not in _schemas_by_key():
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        cls = _NODE_CLASSES[name] = _AttrsNodeClass(
            name, (), {"type_key": key, "__module__": __name__,
                       "__doc__": f"``isinstance(attrs, {name})``: attrs of type key {key!r}."})
    return cls


def make_attrs(type_key: str, **fields):
    """``tvm.ir.make_node("relay.attrs.Conv2DAttrs", **fields)``: an
    :class:`~relay_tvm.ir.attrs.Attrs` of that type key, its other fields at their defaults
    (the schema of an operator that uses the key and has every field given; the one with the
    most fields if several do, e.g. ``reshape``'s rather than ``dyn.reshape``'s).

    Raises:
        AttributeSchemaError: no operator uses ``type_key``, a field that none of its
            operators has, a value of the wrong kind, or a required field left out.
    """
    from ..errors import AttributeSchemaError

    schemas = _schemas_by_key().get(type_key)
    if not schemas:
        raise AttributeSchemaError(f"make_node({type_key!r}): no relay_tvm operator has "
                                   "attributes of this type key")
    fits = [s for s in schemas if set(fields) <= set(s.fields)]
    if not fits:
        names = sorted({f for s in schemas for f in s.fields})
        bad = sorted(set(fields) - set(names))
        raise AttributeSchemaError(f"make_node({type_key!r}): unknown field(s) "
                                   f"{', '.join(bad) or ', '.join(sorted(fields))}; expected "
                                   f"some of {', '.join(names)}")
    return max(fits, key=lambda s: len(s.fields)).make(type_key, **fields)


__all__ = ["register_op_attr", "get_op_attr", "reset_op_attr", "temp_op_attr", "TempOpAttr",
           "make_attrs", "register_alter_op_layout", "register_convert_op_layout", "register_legalize"]

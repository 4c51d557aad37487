"""Checking a value given to an executor against its parameter's Relay type (the debug
executor's arguments, the VM's ADT arguments, the arguments of closures either one returned):
no silent cast, broadcast or reinterpretation. The tensors' check is
:func:`relay_tvm.transform.bind_params.check_arg`, which binding parameters shares."""

from __future__ import annotations

from ..errors import InputError, RelayError
from ..ir.types import FuncType, GlobalTypeVar, RefType, TensorType, TupleType, TypeCall, type_str
from ..transform.bind_params import check_arg, describe_kind, not_a_tensor
from ..typing.solver import substitute_type_vars
from .interpreter import ConstructorValue, RefValue, describe_value


def check_value(value, ty, where: str, mod=None, sizes=None, given=None):
    """Check a user value against a parameter's type: no silent cast or broadcast.

    Tensors (NumPy arrays, tvm tensors) must have the type's dtype and shape; a symbolic
    dimension (``tvm.tir.Var``) takes the size of its first occurrence and must have it
    wherever else it occurs in the arguments checked with the same ``sizes`` dict; ``Any``
    takes any size. Tuples are checked field by field, references by their current content.
    An algebraic data type's value (``ConstructorValue``) must be built by one of the type's
    constructors, and with ``mod`` (where the type is defined) its fields are checked against
    the constructor's field types with the type's arguments substituted (iteratively: a long
    list is fine). Function-typed parameters take any function value.

    Args:
        value: the user's value (interpreter values: NumPy arrays, tuples,
            ``ConstructorValue``, ``RefValue``, closures).
        ty: the parameter's checked type.
        where: the argument, for messages (``"argument 0 (%x)"``).
        mod: the ``IRModule`` that defines the ADTs ``ty`` mentions (None: the constructor is
            checked, not its fields).
        sizes: ``{tir.Var: (size, where)}`` shared across the arguments of one call.
        given: the value as the user passed it, when ``value`` is its conversion
            (:func:`relay_tvm.runtime.interpreter.to_value` makes lists tuples and numbers
            arrays): messages name what was passed.

    Raises:
        InputError: a value of another kind, dtype, shape, arity or ADT than ``ty`` says.
    """
    sizes = {} if sizes is None else sizes
    fields_of = {}  # (constructor tag, ADT type) -> the field types, substituted once
    stack = [(value, ty, where, value if given is None else given)]
    while stack:
        v, t, w, g = stack.pop()
        if not isinstance(w, str):  # (constructor, field index): named only for a message
            w = f"{where}: field {w[1]} of a {w[0].name_hint} in it"
        if isinstance(t, TensorType):
            if not _is_tensor(v):
                raise not_a_tensor(t, w, g)
            check_arg(v, t, w, sizes)
        elif isinstance(t, TupleType):
            if not isinstance(v, (tuple, list)) or len(v) != len(t.fields):
                raise InputError(f"{w}: expected a tuple of {len(t.fields)} values "
                                 f"({type_str(t)}), got {describe_kind(g)}")
            gs = g if isinstance(g, (tuple, list)) and len(g) == len(v) else v
            stack.extend((f, ft, f"{w} field {i}", gf)
                         for i, (f, ft, gf) in enumerate(zip(v, t.fields, gs)))
        elif isinstance(t, TypeCall) and isinstance(t.func, GlobalTypeVar):
            adt = t.func.name_hint
            if not isinstance(v, ConstructorValue):
                raise InputError(f"{w}: expected a value of type {type_str(t)} (a "
                                 f"ConstructorValue of {adt}), got {describe_kind(g)}")
            ctor = v.constructor
            if ctor.belong_to is not t.func and (
                    owner := getattr(ctor.belong_to, "name_hint", None)) != adt:
                raise InputError(f"{w}: expected a value of type {type_str(t)}, got "
                                 f"{describe_value(v, width=80)}, a value of {owner}")
            key = (ctor.tag, t)
            types = fields_of.get(key, ())
            if types == ():
                types = fields_of[key] = field_types(mod, t, ctor)
            if types is None:  # no definition to check the fields against
                continue
            if len(v.fields) != len(types):
                raise InputError(f"{w}: {ctor.name_hint} has {len(types)} fields, the "
                                 f"value {len(v.fields)}")
            # a ConstructorValue is not converted (to_value): its fields are the user's
            stack.extend((f, ft, (ctor, i), f)
                         for i, (f, ft) in enumerate(zip(v.fields, types)))
        elif isinstance(t, RefType):
            if not isinstance(v, RefValue):
                raise InputError(f"{w}: expected a reference ({type_str(t)}, a RefValue), got "
                                 f"{describe_kind(g)}")
            stack.append((v.value, t.value, f"{w} (its content)", v.value))
        elif isinstance(t, FuncType):
            if not callable(v):
                raise InputError(f"{w}: expected a function ({type_str(t)}), got {describe_kind(g)}")


def _is_tensor(v) -> bool:
    return hasattr(v, "shape") and hasattr(v, "dtype")


def field_types(mod, t, ctor):
    """The field types of ``ctor``'s value in type ``t`` (the ADT's type arguments put in),
    from ``mod``'s definition of the ADT; the constructor is found by name when it is not the
    definition's own object (a value built in another process, or from another parse of the
    definition). None when there is no definition or no such constructor (the executor
    reports that one)."""
    if mod is None:
        return None
    try:
        data = mod[t.func]
    except (RelayError, KeyError, TypeError):
        return None
    decl = next((c for c in data.constructors if c is ctor), None) or next(
        (c for c in data.constructors if c.name_hint == ctor.name_hint), None)
    if decl is None:
        return None
    mapping = dict(zip(data.type_vars, t.args))
    return [substitute_type_vars(ft, mapping) for ft in decl.inputs]


def number_arg(value, ty, where: str):
    """A Python ``bool`` / ``int`` / ``float`` (not a NumPy scalar) or list of them passed for
    a tensor parameter of type ``ty``: a NumPy array of its dtype, refused as for main's
    arguments when the dtype does not hold it exactly (``bind_params.list_to_array``); any
    other value as it is.

    Raises:
        InputError: naming ``where``, the value and the dtype."""
    from ..ir.types import TensorType

    # (a NumPy scalar has its own dtype, checked as it is: np.float64 is a float subclass)
    if type(value) in (bool, int, float, list) and isinstance(ty, TensorType):
        from ..transform.bind_params import list_to_array

        return list_to_array(value, ty.dtype, where)
    return value


def check_call(values, types, what: str, mod=None, names=None, given=None) -> None:
    """Check the arguments of a call of a function value from Python (a closure an executor
    returned): their number, then each against its parameter's type (None: not checked), one
    ``sizes`` dict for the symbolic dimensions of them all.

    Args:
        values: the arguments, as :func:`check_value` takes them.
        types: the parameters' types.
        what: the function, for messages (``"closure"``).
        mod: as for :func:`check_value`.
        names: the parameters' names, when known (for messages).
        given: the arguments as the user passed them (``values`` converted), for messages.

    Raises:
        InputError: another number of arguments, or a value of another type.
    """
    listed = f" {list(names)}" if names is not None else ""
    if len(values) != len(types):
        raise InputError(f"{what} of {len(types)} parameter(s){listed}: called with "
                         f"{len(values)} argument(s)")
    sizes = {}
    for i, (v, t) in enumerate(zip(values, types)):
        if t is not None:
            name = f" (%{names[i]})" if names is not None else ""
            check_value(v, t, f"{what} argument {i}{name}", mod, sizes,
                        None if given is None else given[i])


__all__ = ["check_value", "check_call", "field_types", "number_arg"]

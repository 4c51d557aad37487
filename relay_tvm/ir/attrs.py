"""Operator and function attributes.

An :class:`Attrs` is an immutable, structurally compared record of named values, with the type key
of tvm.relay's attribute node (``"relay.attrs.Conv2DAttrs"``). Operators declare an
:class:`AttrsSchema`: the fields, their kinds and defaults. Every ``Call`` to an operator carries a
complete ``Attrs`` of its schema: defaults filled in, values normalized (tuples of ints, dtype
strings, ...). The text parser types the attributes it reads through the same schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any as _AnyT
from typing import Callable

import numpy as np

from ..errors import AttributeSchemaError
from .base import check_dtype


class AttrArray(tuple):
    """An attribute's sequence value: a tuple that prints as TVM's ``Array`` did,
    ``[0, 2, 3, 1]`` (0.19 scripts compare ``str(call.attrs.axes)`` with ``str([0, 2, 3, 1])``);
    equal to, and hashed like, the plain tuple."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[" + ", ".join(repr(x) for x in self) + "]"

    __str__ = __repr__

    def __reduce__(self):
        return (AttrArray, (tuple(self),))


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return AttrArray(_freeze(x) for x in v)
    if isinstance(v, np.ndarray):
        return AttrArray(_freeze(x) for x in v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    return v


class Attrs:
    """Immutable attributes with attribute and item access (``attrs.strides``, ``attrs["strides"]``).

    Args:
        type_key: the attribute node name, e.g. ``"relay.attrs.Conv2DAttrs"`` or ``"DictAttrs"``.
        fields: mapping of names to values (already normalized).
    """

    __slots__ = ("type_key", "_fields", "_hash")

    def __init__(self, type_key: str, fields: dict):
        object.__setattr__(self, "type_key", type_key)
        object.__setattr__(self, "_fields", {k: _freeze(v) for k, v in fields.items()})
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("Attrs are immutable")

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"{self.type_key} has no attribute {name!r}") from None

    def __getitem__(self, name):
        return self._fields[name]

    def __contains__(self, name):
        return name in self._fields

    def get(self, name, default=None):
        return self._fields.get(name, default)

    def keys(self):
        return list(self._fields.keys())

    def items(self):
        return list(self._fields.items())

    def list_field_info(self):
        return list(self._fields.keys())

    def get_int_tuple(self, name):
        return tuple(int(x) for x in self._fields[name])

    def get_int(self, name):
        return int(self._fields[name])

    def get_str(self, name):
        return str(self._fields[name])

    def __len__(self):
        return len(self._fields)

    def __iter__(self):
        return iter(self._fields)

    def with_fields(self, **changes) -> Attrs:
        d = dict(self._fields)
        d.update(changes)
        return Attrs(self.type_key, d)

    def _key(self):
        return (self.type_key, tuple(sorted(self._fields.items(), key=lambda kv: kv[0])))

    def __eq__(self, other):
        if not isinstance(other, Attrs):
            return NotImplemented
        return self.type_key == other.type_key and _values_equal(self._fields, other._fields)

    def __hash__(self):
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(_hashable(self._key())))
        return self._hash

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields.items())
        return f"{self.type_key}({inner})"


def _hashable(v):
    if isinstance(v, tuple):
        return tuple(_hashable(x) for x in v)
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def _values_equal(a, b) -> bool:
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_values_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, tuple):
        return (
            isinstance(b, tuple)
            and len(a) == len(b)
            and all(_values_equal(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    try:
        r = a == b
        return bool(r) if isinstance(r, (bool, np.bool_)) else False
    except Exception:
        return False


def DictAttrs(fields: dict | None = None) -> Attrs:  # noqa: N802 - Relay's name
    """Free-form attributes of a function (``Primitive``, ``Composite``, ...)."""
    return Attrs("DictAttrs", dict(fields or {}))


#: function attributes whose key starts with this are relay_tvm's own bookkeeping (e.g.
#: ``relay_tvm.bound_params``, set by ``relay.quantize.quantize``), not part of the program:
#: the text format does not print them and structural equality ignores them
INTERNAL_ATTR_PREFIX = "relay_tvm."


def public_attrs(attrs):
    """``attrs`` without its internal keys (:data:`INTERNAL_ATTR_PREFIX`); ``attrs`` itself
    when it has none (or is not a ``DictAttrs``), None when nothing else is left."""
    fields = getattr(attrs, "_fields", None)
    if fields is None or attrs.type_key != "DictAttrs" or \
            not any(str(k).startswith(INTERNAL_ATTR_PREFIX) for k in fields):
        return attrs
    kept = {k: v for k, v in fields.items() if not str(k).startswith(INTERNAL_ATTR_PREFIX)}
    return DictAttrs(kept) if kept else None


def internal_attrs(attrs) -> dict:
    """``attrs``' internal keys (:data:`INTERNAL_ATTR_PREFIX`) whose values are strings, as a
    dict (empty when there are none): what the text format keeps in its metadata section."""
    fields = getattr(attrs, "_fields", None) or {}
    return {str(k): str(v) for k, v in fields.items()
            if str(k).startswith(INTERNAL_ATTR_PREFIX) and isinstance(v, str)}


# ---- field kinds -----------------------------------------------------------------------------


def _int(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        if hasattr(v, "value") and isinstance(v.value, int):  # tvm IntImm
            return int(v.value)
        raise AttributeSchemaError(f"attribute {name}: expected an int, got {v!r}")
    return int(v)


def _float(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise AttributeSchemaError(f"attribute {name}: expected a number, got {v!r}")
    return float(v)


def _bool(v, name):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)) and v in (0, 1):
        return bool(v)
    raise AttributeSchemaError(f"attribute {name}: expected a bool, got {v!r}")


def _str(v, name):
    if not isinstance(v, str):
        raise AttributeSchemaError(f"attribute {name}: expected a string, got {v!r}")
    return v


def _ints(v, name):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),)
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_int(x, name) for x in v)
    raise AttributeSchemaError(f"attribute {name}: expected a tuple of ints, got {v!r}")


def _opt(kind):
    def conv(v, name):
        return None if v is None else kind(v, name)

    conv.__name__ = f"optional_{kind.__name__.strip('_')}"
    return conv


def _dtype(v, name):
    if v is None or v == "":
        return ""
    try:
        return check_dtype(v, f"attribute {name}")
    except Exception as e:
        raise AttributeSchemaError(str(e)) from None


def _any(v, name):
    return _freeze(v)


def _floats(v, name):
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return (float(v),)
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_float(x, name) for x in v)
    raise AttributeSchemaError(f"attribute {name}: expected a tuple of numbers, got {v!r}")


FIELD_KINDS: dict[str, Callable] = {
    "int": _int,
    "float": _float,
    "bool": _bool,
    "str": _str,
    "ints": _ints,
    "floats": _floats,
    "dtype": _dtype,
    "any": _any,
    "int?": _opt(_int),
    "float?": _opt(_float),
    "str?": _opt(_str),
    "ints?": _opt(_ints),
    "floats?": _opt(_floats),
}

_REQUIRED = object()


@dataclass(frozen=True)
class AttrField:
    """One attribute of an operator: its name, kind (a key of ``FIELD_KINDS``) and default.

    A field without a default is required. ``always_printed`` marks a field that tvm.relay 0.19
    declared without a default (``TransposeAttrs.axes``): its text form shows it even when the
    value is the Python-side default ``None`` (``transpose(%x, axes=None)``).
    """

    name: str
    kind: str
    default: _AnyT = _REQUIRED
    doc: str = ""
    always_printed: bool = False

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


class AttrsSchema:
    """The attribute schema of an operator.

    Args:
        type_key: tvm.relay's attrs node name, e.g. ``"relay.attrs.Conv2DAttrs"``.
        fields: the :class:`AttrField` s, in Relay's order.
    """

    def __init__(self, type_key: str, fields):
        self.type_key = type_key
        self.fields = {}
        for f in fields:
            if isinstance(f, tuple):
                f = AttrField(*f)
            if f.kind not in FIELD_KINDS:
                raise ValueError(f"unknown attribute kind {f.kind!r} for {f.name}")
            self.fields[f.name] = f

    def make(self, op_name: str = "", **values) -> Attrs:
        """Build a complete, normalized :class:`Attrs`.

        Raises:
            AttributeSchemaError: an unknown attribute, a missing required one, or a value of the
                wrong kind; the message names the operator and the attribute.
        """
        unknown = [k for k in values if k not in self.fields]
        if unknown:
            raise AttributeSchemaError(
                f"{op_name or self.type_key}: unknown attribute(s) {', '.join(sorted(unknown))}; "
                f"expected one of {', '.join(self.fields) or '(none)'}"
            )
        out = {}
        for name, f in self.fields.items():
            if name in values:
                v = values[name]
            elif f.required:
                raise AttributeSchemaError(
                    f"{op_name or self.type_key}: missing required attribute {name}"
                )
            else:
                v = f.default
            if v is None and f.default is not None and f.default is not _REQUIRED and \
                    "?" not in f.kind and f.kind != "any":
                # None given for an attribute that has a value by default (leaky_relu's
                # alpha=None was kept and failed in the build: new-user trial)
                raise AttributeSchemaError(
                    f"{op_name or self.type_key}: {name}: expected {f.kind}, got None (leave "
                    f"it out for the default, {f.default!r})")
            try:
                out[name] = FIELD_KINDS[f.kind](v, name) if v is not None or "?" in f.kind or f.kind == "any" else None
            except AttributeSchemaError as e:
                raise AttributeSchemaError(f"{op_name or self.type_key}: {e}") from None
        return Attrs(self.type_key, out)


__all__ = ["Attrs", "DictAttrs", "AttrsSchema", "AttrField", "FIELD_KINDS", "INTERNAL_ATTR_PREFIX",
           "internal_attrs", "public_attrs"]

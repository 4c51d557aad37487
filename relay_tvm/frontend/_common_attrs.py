"""tvm.relay 0.19's attribute helpers of ``relay.frontend.common``, for converters written
against them: :class:`StrAttrsDict`, :class:`AttrCvt`, :class:`Renamer`, :class:`ExprTable`.

They behave as 0.19's did (what is renamed, defaulted, ignored, which values parse), except
that the errors are relay_tvm's, naming the attribute, the operator and what was expected; each
is also the built-in exception 0.19 raised (``AttributeError`` for a missing attribute,
``ValueError`` for a malformed one, ``NotImplementedError`` for an excluded one), so existing
``except`` clauses still catch them.
"""

from __future__ import annotations

import logging

from ..errors import AttributeSchemaError, ConversionError, UnsupportedOperatorError
from ..ir.expr import Expr, var

logger = logging.getLogger("Frontend")


class MissingAttributeError(AttributeSchemaError, AttributeError):
    """A required attribute is missing (0.19 raised ``AttributeError``)."""


class AttributeValueError(AttributeSchemaError, ValueError):
    """An attribute's value does not parse as the kind asked for (0.19: ``ValueError``)."""


class UnsupportedAttributeError(UnsupportedOperatorError, NotImplementedError):
    """An attribute that the conversion does not support is set (0.19's ``AttrCvt``
    ``excludes``: ``NotImplementedError``)."""


class RequiredAttr:
    """The default of :class:`StrAttrsDict` getters meaning "required" (0.19's marker)."""


_REQUIRED = RequiredAttr()
_TRUE = ("true", "1", "t", "y", "yes")
_FALSE = ("false", "0", "f", "n", "no", "none", "")


class StrAttrsDict:
    """Typed access to attributes stored as strings (``{"kernel": "(3, 3)"}``), 0.19's
    ``StrAttrsDict``.

    Each getter takes ``key`` and a ``default`` returned when the key is absent; without a
    default the attribute is required.

    Args:
        attrs: ``dict`` of attribute name to string (other values are taken as they are).
        op_name: the operator, named in errors (optional, not in 0.19's signature).

    Raises (from the getters):
        MissingAttributeError: a required attribute is absent (an ``AttributeError``).
        AttributeValueError: the value does not parse (a ``ValueError``).
    """

    def __init__(self, attrs, op_name: str | None = None):
        self.attrs = attrs
        self.op_name = op_name

    def _where(self) -> str:
        return f" of {self.op_name}" if self.op_name else ""

    def _get(self, key, default):
        if key in self.attrs:
            return self.attrs[key], False
        if isinstance(default, RequiredAttr):
            have = ", ".join(sorted(map(str, self.attrs))) or "none"
            raise MissingAttributeError(f"Required attribute {key} not found{self._where()} "
                                        f"(attributes given: {have})")
        return default, True

    def _parse(self, key, value, kind, parse, item=None):
        """``parse(item)`` (``item`` defaults to ``value``), errors naming ``key=value``."""
        try:
            return parse(value if item is None else item)
        except (TypeError, ValueError):
            raise AttributeValueError(f"attribute {key}={value!r}{self._where()} is not "
                                      f"{kind}") from None

    def has_attr(self, key) -> bool:
        """Whether ``key`` is present."""
        return key in self.attrs

    def get_str(self, key, default=_REQUIRED):
        """The value as stored."""
        return self._get(key, default)[0]

    def get_float(self, key, default=_REQUIRED):
        """``float(value)``."""
        v, dflt = self._get(key, default)
        return v if dflt else self._parse(key, v, "a number", float)

    def get_int(self, key, default=_REQUIRED):
        """``int(value)``; the string ``"None"`` gives ``None``."""
        v, dflt = self._get(key, default)
        if dflt:
            return v
        if v == "None" or v is None:
            return None
        return self._parse(key, v, "an integer", _int)

    def get_bool(self, key, default=_REQUIRED):
        """True for ``true/1/t/y/yes`` (any case), False for ``false/0/f/n/no/None``."""
        v, dflt = self._get(key, default)
        if dflt or isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise AttributeValueError(f"attribute {key}={v!r}{self._where()} is not a boolean "
                                  f"(one of {', '.join(_TRUE + _FALSE[:-1])})")

    def get_int_tuple(self, key, default=_REQUIRED):
        """``"(1, 2)"`` / ``"[1,2]"`` -> ``(1, 2)``; an entry that is not an integer
        (``"None"``) gives ``None`` there, as in 0.19."""
        v, dflt = self._get(key, default)
        if dflt:
            return v
        if isinstance(v, (list, tuple)):
            return tuple(None if x is None else self._parse(key, v, "integers", _int, x)
                         for x in v)
        return tuple(int(x) if x.strip("- ").isdigit() else None
                     for x in str(v).strip("()[]").split(",") if x)

    def _sequence(self, key, default, what, conv):
        """The value of ``key`` as a tuple of ``conv`` of each element (a list / tuple, or a
        string such as ``"(1, 2)"`` / ``"[1, 2]"``); ``default`` when absent."""
        v, dflt = self._get(key, default)
        if dflt:
            return v
        items = v if isinstance(v, (list, tuple)) else str(v).strip("()[]").split(",")
        return tuple(self._parse(key, v, what, conv, str(x).strip()) for x in items)

    def get_float_tuple(self, key, default=_REQUIRED):
        """``"(0.5, 1)"`` -> ``(0.5, 1.0)``."""
        return self._sequence(key, default, "a tuple of numbers", float)

    def get_int_list(self, key, default=_REQUIRED):
        """``"[1, 2]"`` -> ``(1, 2)`` (a tuple, as 0.19 returned)."""
        return self._sequence(key, default, "a list of integers", _int)

    def get_tuple_tuple_int(self, key, default=_REQUIRED):
        """``"((1, 2), (3, 4))"`` -> ``((1, 2), (3, 4))``."""
        v, dflt = self._get(key, default)
        if dflt:
            return v
        kind = "a tuple of integer tuples"
        if isinstance(v, (list, tuple)):
            return tuple(tuple(self._parse(key, v, kind, _int, x) for x in t) for t in v)
        out = []
        for tup in str(v).strip("()").split("),"):
            tup = tup.strip("[]() ")
            out.append(tuple(self._parse(key, v, kind, _int, x.strip("( "))
                             for x in tup.split(",")))
        return tuple(out)


def _int(x) -> int:
    if isinstance(x, bool):
        raise ValueError(x)
    if isinstance(x, float):
        if x != int(x):
            raise ValueError(x)
        return int(x)
    return int(x)


class ExprTable:
    """Relay expressions of a graph by name, and the parameters made for constants (0.19's
    ``ExprTable``, used by converters that walk a framework graph).

    ``new_const(value)`` makes a variable ``_param_<k>`` of ``value``'s shape and records
    ``value`` in ``params`` under that name; ``set_expr`` keeps the first expression given for a
    name unless ``force_override``.
    """

    def __init__(self):
        self.exprs: dict = {}
        self.params: dict = {}
        self.const_ctr = 1
        self.in_padding = False
        self.paddings = None

    def new_const(self, value, shape=None, dtype="float32", source_name=None):
        """A new parameter variable for ``value`` (its shape wins over ``shape``)."""
        name = f"_param_{self.const_ctr}"
        if hasattr(value, "shape"):
            shape = value.shape
        self.const_ctr += 1
        self.params[name] = value
        v = var(name, shape=shape, dtype=dtype)
        if source_name:
            from ..ir.base import Span

            object.__setattr__(v, "span", Span(str(source_name)))
        self.exprs[name] = v
        return v

    def get_expr(self, name):
        """The expression named ``name``.

        Raises:
            ConversionError: no expression has that name (also a ``KeyError``).
        """
        try:
            return self.exprs[name]
        except KeyError:
            raise _MissingExpr(f"ExprTable: no expression named {name!r}; it has "
                               f"{len(self.exprs)} ({', '.join(list(self.exprs)[:10])}"
                               f"{' ...' if len(self.exprs) > 10 else ''})") from None

    def set_expr(self, name, expr, force_override=False):
        """Record ``expr`` under ``name`` (an existing entry is kept unless
        ``force_override``)."""
        if not isinstance(expr, Expr):
            raise ConversionError(f"ExprTable.set_expr({name!r}): expected a relay expression, "
                                  f"got {type(expr).__name__}")
        if name not in self.exprs or force_override:
            self.exprs[name] = expr

    def has_expr(self, name) -> bool:
        return name in self.exprs

    def set_padding(self, paddings):
        self.paddings = paddings
        self.in_padding = True

    def clear_padding(self):
        self.in_padding = False


class _MissingExpr(ConversionError, KeyError):
    def __str__(self):  # KeyError would quote the message
        return self.args[0]


# attributes every AttrCvt ignores (framework bookkeeping), as 0.19's did
_ALWAYS_IGNORED = ("_output_shapes", "_input_shapes", "T", "use_cudnn_on_gpu", "_node_name",
                   "is_training", "_target_layout", "tvm_custom")


class AttrCvt:
    """A converter from a framework operator to a Relay operator by attribute renaming
    (0.19's ``AttrCvt``): ``AttrCvt("nn.conv2d", {"kernel": "kernel_size"})(inputs, attrs)``
    calls ``relay.nn.conv2d(*inputs, kernel_size=attrs["kernel"], ...)``.

    Args:
        op_name: the Relay operator (a name for :func:`get_relay_op`), or a callable taking the
            attributes and returning the name.
        transforms: ``{old: new}`` renames; ``{old: (new, default)}`` also replaces a value of
            ``None`` by ``default``; ``{old: (new, default, fn)}`` passes the value through
            ``fn``. As in 0.19, only attributes present are converted: a default is not
            added for an absent attribute (the Relay operator's own default applies).
        excludes: attributes that must not be set.
        disables: attributes dropped (logged at debug level).
        ignores: attributes dropped silently (logged at debug level).
        extras: attributes added to every call (overriding converted ones).
        custom_check: ``(fn, message)``; ``fn(attrs)`` must be true.

    Attributes not named anywhere are passed on unchanged.

    Raises (when called):
        UnsupportedAttributeError: an excluded attribute is present (a ``NotImplementedError``).
        ConversionError: ``custom_check`` failed (a ``RuntimeError``).
        AttributeValueError: a ``transforms`` entry is malformed.
        UnsupportedOperatorError: no Relay operator has the name.
    """

    def __init__(self, op_name, transforms=None, excludes=None, disables=None, ignores=None,
                 extras=None, custom_check=None):
        self._op_name = op_name
        self._transforms = transforms if transforms else {}
        self._excludes = excludes if excludes else []
        self._disables = disables if disables else []
        self._ignores = list(ignores if ignores else []) + list(_ALWAYS_IGNORED)
        self._extras = extras if extras else {}
        self._custom_check = custom_check

    def _name(self, attrs) -> str:
        if isinstance(self._op_name, str):
            return self._op_name
        if not callable(self._op_name):
            raise ConversionError(f"AttrCvt: op_name must be a string or a callable, got "
                                  f"{type(self._op_name).__name__}")
        return self._op_name(attrs)

    def convert_attrs(self, attrs) -> tuple:
        """``(relay operator name, converted attributes)`` for ``attrs`` (no call made)."""
        if self._custom_check:
            func, msg = self._custom_check
            if not func(attrs):
                raise ConversionError(f"Check failed: {msg} (attributes {dict(attrs)})")
        op_name = self._name(attrs)
        new_attrs = {}
        for k in attrs.keys():
            if k in self._excludes:
                raise UnsupportedAttributeError(f"Attribute {k} in operator {op_name} is not "
                                                f"supported (value {attrs[k]!r})")
            if k in self._disables:
                logger.debug("Attribute %s is disabled in relay.sym.%s", k, op_name)
            elif k in self._ignores:
                if k != "tvm_custom":
                    logger.debug("Attribute %s is ignored in relay.sym.%s", k, op_name)
            elif k in self._transforms:
                new_name, default, fn = self._parse_default(self._transforms[k], op_name)
                value = attrs[k]
                new_attrs[new_name] = default if value is None else fn(value)
            else:
                new_attrs[k] = attrs[k]
        new_attrs.update(self._extras)
        return op_name, new_attrs

    def __call__(self, inputs, attrs, *args):
        from .common import get_relay_op

        op_name, new_attrs = self.convert_attrs(attrs)
        return get_relay_op(op_name)(*inputs, **new_attrs)

    def _parse_default(self, target, op_name="?"):
        """``(new name, default, transform)`` of a ``transforms`` entry."""
        if not isinstance(target, (list, tuple)):
            k, v, t = target, None, _identity
        elif len(target) == 1:
            k, v, t = target[0], None, _identity
        elif len(target) == 2:
            k, v, t = target[0], target[1], _identity
        elif len(target) > 2:
            k, v, t = target[0], target[1], target[2]
        else:
            k = None
        if not isinstance(k, str):
            raise AttributeValueError(f"AttrCvt for {op_name}: transforms entry {target!r} is "
                                      "not valid; expected new_name, (new_name, default) or "
                                      "(new_name, default, transform)")
        return k, v, t

    def _parse_bool(self, value) -> bool:
        """A boolean attribute given as a string or a value."""
        if isinstance(value, str):
            return value.strip().lower() in _TRUE
        return bool(value)

    def _required_attr(self, attr, key):
        """``attr[key]``, which must be present."""
        if key not in attr:
            raise MissingAttributeError(f"Required attribute {key} not found (attributes "
                                        f"given: {', '.join(sorted(map(str, attr))) or 'none'})")
        return attr[key]


def _identity(x):
    return x


class Renamer:
    """A converter that only renames the operator (0.19's ``Renamer``):
    ``Renamer("nn.relu")(inputs, attrs)`` is ``relay.nn.relu(*inputs, **attrs)`` without the
    ``tvm_custom`` attribute."""

    def __init__(self, new_name):
        self._new_name = new_name

    def __call__(self, inputs, attrs, *args):
        from .common import get_relay_op

        attrs = {k: v for k, v in attrs.items() if k != "tvm_custom"}
        return get_relay_op(self._new_name)(*inputs, **attrs)


__all__ = ["StrAttrsDict", "RequiredAttr", "ExprTable", "AttrCvt", "Renamer", "logger",
           "MissingAttributeError", "AttributeValueError", "UnsupportedAttributeError"]

"""Helpers shared by the frontends: string attributes, shape queries, spans, the op report."""

from __future__ import annotations

import ast
from collections import Counter

import numpy as np

from ..errors import ConversionError, RelayError, UnsupportedOperatorError
from ..ir.base import Span
from ..ir.expr import Call, Constant, Tuple, TupleGetItem, Var
from ..ir.functor import dataflow_children

_NONE = object()


class StrAttrs:
    """Typed access to a node's string attributes (``{"kernel": "(3, 3)", "no_bias": "True"}``).

    Every getter names the node, the operator and the attribute in its error.

    Args:
        attrs: the attribute dict as found in the graph JSON (values are strings, or already
            Python values).
        op_name: the framework operator name, for messages.
        node_name: the graph node name, for messages.
    """

    def __init__(self, attrs: dict, op_name: str, node_name: str):
        self.attrs = dict(attrs or {})
        self.op_name = op_name
        self.node_name = node_name

    def __contains__(self, key):
        return key in self.attrs

    def _err(self, key, value, expected):
        return ConversionError(
            f"{self.op_name} node {self.node_name!r}: attribute {key}={value!r} is not {expected}"
        )

    def _raw(self, key, default):
        if key not in self.attrs:
            if default is _NONE:
                raise ConversionError(
                    f"{self.op_name} node {self.node_name!r}: required attribute {key!r} is missing"
                )
            return default, True
        return self.attrs[key], False

    def get_str(self, key, default=_NONE):
        v, dflt = self._raw(key, default)
        return v if dflt or v is None else str(v)

    def get_int(self, key, default=_NONE):
        v, dflt = self._raw(key, default)
        if dflt:
            return v
        if isinstance(v, str) and v.strip() == "None":
            return None
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise self._err(key, v, "an integer") from None
        if f != int(f):
            raise self._err(key, v, "an integer")
        return int(f)

    def get_float(self, key, default=_NONE):
        v, dflt = self._raw(key, default)
        if dflt:
            return v
        if isinstance(v, str) and v.strip() == "None":
            return None
        try:
            return float(v)
        except (TypeError, ValueError):
            raise self._err(key, v, "a number") from None

    def get_bool(self, key, default=_NONE):
        v, dflt = self._raw(key, default)
        if dflt or isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("true", "1"):
            return True
        if s in ("false", "0"):
            return False
        raise self._err(key, v, "a boolean (True/False/1/0)")

    def get_tuple(self, key, default=_NONE, allow_none=False):
        """A tuple of ints (``"(1, 2)"``, ``"[1,2]"``, ``"3"``); ``None`` entries when allowed."""
        v, dflt = self._raw(key, default)
        if dflt:
            return v
        if isinstance(v, (list, tuple)):
            vals = list(v)
        else:
            s = str(v).strip()
            if s == "None":
                return None
            try:
                parsed = ast.literal_eval(s)
            except (ValueError, SyntaxError):
                raise self._err(key, v, "a tuple of integers") from None
            vals = list(parsed) if isinstance(parsed, (list, tuple)) else [parsed]
        out = []
        for x in vals:
            if x is None and allow_none:
                out.append(None)
            elif isinstance(x, (int, np.integer)) and not isinstance(x, bool):
                out.append(int(x))
            elif isinstance(x, float) and x == int(x):
                out.append(int(x))
            else:
                raise self._err(key, v, "a tuple of integers" + (" or None" if allow_none else ""))
        return tuple(out)

    def get_float_tuple(self, key, default=_NONE):
        v, dflt = self._raw(key, default)
        if dflt:
            return v
        try:
            parsed = ast.literal_eval(str(v)) if not isinstance(v, (list, tuple)) else v
            vals = parsed if isinstance(parsed, (list, tuple)) else [parsed]
            return tuple(float(x) for x in vals)
        except (ValueError, SyntaxError, TypeError):
            raise self._err(key, v, "a tuple of numbers") from None


# ---- types and shapes of partially built expressions ----


def _typed(e) -> bool:
    return getattr(e, "_checked_type", None) is not None


def infer_type(expr):
    """The type of ``expr`` (free variables take their annotations), computed incrementally: parts
    already typed by an earlier query stand in as typed variables, so repeated queries while a
    graph is built stay linear overall."""
    from ..typing.infer import infer_expr

    if _typed(expr):
        return expr.checked_type
    memo = {}
    stack = [(expr, False)]
    while stack:
        e, done = stack.pop()
        if id(e) in memo:
            continue
        if e is not expr and _typed(e) and not isinstance(e, (Var, Constant)):
            memo[id(e)] = Var("_typed", e.checked_type)
            continue
        kids = dataflow_children(e)
        if not done:
            stack.append((e, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
            continue
        if isinstance(e, Call):
            memo[id(e)] = Call(e.op, [memo[id(a)] for a in e.args], e.attrs, e.type_args, e.span)
        elif isinstance(e, Tuple):
            memo[id(e)] = Tuple([memo[id(f)] for f in e.fields], e.span)
        elif isinstance(e, TupleGetItem):
            memo[id(e)] = TupleGetItem(memo[id(e.tuple_value)], e.index, e.span)
        else:
            memo[id(e)] = e
    proxy = memo[id(expr)]
    infer_expr(proxy)
    expr._set_checked_type(proxy.checked_type)
    return proxy.checked_type


def infer_shape(expr) -> tuple:
    """The static shape of a tensor expression as a tuple of ints.

    Raises:
        ConversionError: the shape is not static.
    """
    t = infer_type(expr)
    if not hasattr(t, "shape"):
        raise ConversionError(f"expected a tensor, got a value of type {t}")
    out = []
    for d in t.shape:
        try:
            out.append(int(d))
        except (TypeError, ValueError):
            raise ConversionError(f"expected a static shape, got {t}") from None
    return tuple(out)


def infer_shape_any(expr) -> tuple:
    """The shape of a tensor expression: ints, and :class:`~relay_tvm.ir.types.AnyDim` for a
    dimension known only at run time (an input given ``relay.Any()``)."""
    from ..ir.types import AnyDim

    t = infer_type(expr)
    if not hasattr(t, "shape"):
        raise ConversionError(f"expected a tensor, got a value of type {t}")
    return tuple(d if isinstance(d, AnyDim) else int(d) for d in t.shape)


def infer_dtype(expr) -> str:
    return str(infer_type(expr).dtype)


def set_spans(roots, span: Span) -> None:
    """Give ``span`` to every expression reachable from ``roots`` that has none yet (the nodes a
    converter just built; earlier nodes already carry their own span and stop the walk)."""
    stack = list(roots)
    seen = set()
    while stack:
        e = stack.pop()
        if id(e) in seen or getattr(e, "span", 0) is not None:
            continue
        seen.add(id(e))
        object.__setattr__(e, "span", span)
        stack.extend(dataflow_children(e))


def report_unsupported(op_names, supported, frontend: str, excluded=None, other=None) -> None:
    """Raise one :class:`UnsupportedOperatorError` listing every unsupported operator with its
    count (in first-seen order) when any operator in ``op_names`` is not in ``supported``.

    ``other`` is ``(operator names, hint)`` of another frontend: when it knows every operator this
    one does not, the message ends with the hint (a graph given to the wrong importer)."""
    counts = Counter(o for o in op_names if o not in supported)
    if not counts:
        return
    tail = ""
    if other is not None and all(o in other[0] for o in counts):
        tail = f". {other[1]}"
    excluded = excluded or {}
    parts = []
    for name, n in counts.items():
        why = f" [{excluded[name]}]" if name in excluded else ""
        parts.append(f"{name} ({n}){why}")
    raise UnsupportedOperatorError(
        f"The following operators are not supported by the {frontend} frontend: "
        + ", ".join(parts) + tail
    )


class ParamArray(np.ndarray):
    """A parameter value: a NumPy array that also answers tvm's ``numpy()`` / ``asnumpy()``."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)

    asnumpy = numpy


def to_numpy(value, name: str) -> np.ndarray:
    """A parameter given as NumPy, an MXNet NDArray, a tvm Tensor or a list, as NumPy."""
    if isinstance(value, np.ndarray):
        return np.asarray(value)
    for attr in ("asnumpy", "numpy"):
        f = getattr(value, attr, None)
        if callable(f):
            try:
                return np.asarray(f())
            except Exception as e:  # noqa: BLE001 - reported with the parameter name
                raise ConversionError(f"parameter {name!r}: cannot read its value: {e}") from None
    try:
        arr = np.asarray(value)
    except Exception as e:  # noqa: BLE001
        raise ConversionError(f"parameter {name!r}: cannot read its value: {e}") from None
    if arr.dtype == object:
        raise ConversionError(f"parameter {name!r}: expected an array, got {type(value).__name__}")
    return arr


def as_param(arr: np.ndarray) -> ParamArray:
    return np.require(arr, requirements="C").view(ParamArray)  # keeps 0-d arrays 0-d


__all__ = [
    "StrAttrs",
    "infer_type",
    "infer_shape",
    "infer_dtype",
    "set_spans",
    "report_unsupported",
    "ParamArray",
    "to_numpy",
    "as_param",
    "RelayError",
]

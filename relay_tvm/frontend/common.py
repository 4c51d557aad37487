"""Helpers shared by the frontends: string attributes, shape queries, spans, the op report; and
tvm.relay 0.19's ``frontend.common`` names that custom converters import (``AttrCvt``,
``StrAttrsDict``, ``ExprTable``, ``Renamer``, ``lstm_cell``, ``gru_cell``, ``rnn_cell``,
``unbind``, ``autopad``, ``ensure_scalar_shape``, ...), defined in ``_common_attrs`` and
``_common_rnn``."""

from __future__ import annotations

import ast
from collections import Counter

import numpy as np

from ..errors import ConversionError, RelayError, UnsupportedOperatorError
from ..ir.base import Span
from ..ir.expr import Call, Constant, Tuple, TupleGetItem, Var
from ..ir.functor import dataflow_children
from ._common_attrs import (  # noqa: F401  (0.19's names)
    AttrCvt,
    AttributeValueError,
    ExprTable,
    MissingAttributeError,
    Renamer,
    RequiredAttr,
    StrAttrsDict,
    UnsupportedAttributeError,
    logger,
)
from ._common_rnn import (  # noqa: F401  (0.19's names)
    autopad,
    ensure_scalar_shape,
    gru_cell,
    lstm_cell,
    rnn_cell,
    try_resolve_var_to_const,
    unbind,
)

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


def type_of(expr):
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


def infer_shape(expr, mod=None) -> tuple:
    """The static shape of a tensor expression as a tuple of ints (``mod``: accepted for
    tvm.relay 0.19's signature; the globals an expression calls are typed with it).

    Raises:
        ConversionError: the shape is not static.
    """
    t = type_of(expr) if mod is None else infer_type(expr, mod).checked_type
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

    t = type_of(expr)
    if not hasattr(t, "shape"):
        raise ConversionError(f"expected a tensor, got a value of type {t}")
    return tuple(d if isinstance(d, AnyDim) else int(d) for d in t.shape)


def infer_dtype(expr) -> str:
    return str(type_of(expr).dtype)


# ---- tvm.relay 0.19's frontend.common helpers (for converters written against it) ----


def infer_type(node, mod=None):
    """``node`` with its type inferred (``infer_type(x).checked_type``): a function comes back
    as the typed function, another expression as the typed body of a function over its free
    variables. ``mod``: an ``IRModule`` whose globals ``node`` may call (0.19's semantics).

    Raises:
        TypeInferenceError: ``node`` does not type-check.
    """
    from ..analysis import free_vars
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..transform import InferType

    func = node if isinstance(node, Function) else Function(free_vars(node), node)
    new = IRModule.from_expr(func)
    if mod is not None:
        for gv, f in mod.functions.items():
            if gv.name_hint != "main":
                new[gv] = f
        for gtv, data in getattr(mod, "type_definitions", {}).items():
            new[gtv] = data
    main = InferType()(new)["main"]
    return main if isinstance(node, Function) else main.body


def get_relay_op(op_name: str):
    """The Relay operator constructor named ``op_name``: ``"nn.conv2d"`` by path, a bare name
    (``"conv2d"``) searched in ``relay``, ``relay.nn``, ``relay.image``, ``relay.vision`` and
    ``relay.contrib`` in that order (0.19's order).

    Raises:
        UnsupportedOperatorError: no such constructor.
    """
    import importlib

    op = importlib.import_module("relay_tvm.op")
    found = None
    if "." in op_name:
        found = op
        for part in op_name.split("."):
            found = getattr(found, part, None)
            if found is None:
                break
    else:
        for space in ("", "nn", "image", "vision", "contrib"):
            mod = getattr(op, space, None) if space else op
            found = getattr(mod, op_name, None) if mod is not None else None
            if found is not None:
                break
    if not callable(found):
        raise UnsupportedOperatorError(f"get_relay_op: no Relay operator {op_name!r}")
    return found


def fold_constant(node, mod=None):
    """``node`` with its constant subexpressions evaluated (``transform.FoldConstantExpr``;
    ``node`` is type-checked first, with the globals of ``mod``)."""
    from ..transform import FoldConstantExpr
    from ..typing.infer import infer_expr

    infer_expr(node, mod)
    return FoldConstantExpr(node, mod)


def infer_channels(inputs, transpose: bool = False) -> int:
    """The output channels of a weight: its first dimension (its second with ``transpose``)."""
    shape = infer_shape(inputs)
    return shape[1] if transpose else shape[0]


def infer_value(input_val, params: dict, mod=None):
    """The value of ``input_val`` (a ``tvm.runtime.Tensor``), computed by the reference
    interpreter with ``params`` giving each free variable (by name); ``mod``: globals it calls.

    Raises:
        RelayError: a free variable has no value in ``params``.
    """
    from ..analysis import free_vars
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..runtime.executor import create_executor

    inputs = free_vars(input_val)
    missing = [v.name_hint for v in inputs if v.name_hint not in params]
    if missing:
        raise RelayError(f"infer_value: no value for the free variable(s) {missing} "
                         f"(params has {sorted(params)})")
    new = IRModule.from_expr(Function(inputs, input_val))
    if mod is not None:
        for gv, f in mod.functions.items():
            if gv.name_hint != "main":
                new[gv] = f
    out = create_executor("debug", mod=new).evaluate()(*[params[v.name_hint] for v in inputs])
    if not hasattr(out, "numpy"):
        raise RelayError(f"infer_value: the value is not a tensor ({type(out).__name__})")
    return out


def try_infer_value(val, on_success=None, on_failure=None, parameters=None):
    """``(value, True)`` when :func:`infer_value` can compute ``val`` (passed through
    ``on_success`` when given), else ``(on_failure() or val, False)``."""
    try:
        ret = infer_value(val, parameters if parameters is not None else {}).numpy()
    except RelayError:
        return (on_failure() if on_failure else val), False
    return (on_success(ret) if on_success else ret), True


def shape_of(x, dtype: str = "int64", start=None, end=None):
    """The shape of ``x`` (dimensions ``start:end``) as a constant when it is static, else the
    ``shape_of`` operator (the whole shape, as 0.19 did)."""
    from ..ir.expr import const
    from ..ir.types import AnyDim
    from ..op import shape_of as shape_op

    dims = infer_shape_any(x)
    if any(isinstance(d, AnyDim) for d in dims):
        return shape_op(x, dtype)
    return const(np.array(list(dims)[start or 0:end or len(dims)], dtype), dtype)


def new_var(name_hint, type_annotation=None, shape=None, dtype="float32"):
    """``relay.var(name_hint, type_annotation, shape, dtype)``."""
    from ..ir.expr import var

    return var(name_hint, type_annotation, shape, dtype)


def to_int_list(np_array) -> list:
    """Python ints of an array (NumPy integers would make int64 attributes)."""
    return [int(x) for x in np_array]


def get_name(node) -> str:
    """A variable's name hint; ``""`` for other expressions."""
    return getattr(node, "name_hint", "")


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


def set_span(sym, span):
    """0.19's ``set_span``: ``span`` (a :class:`Span` or a source name) given to every node of
    ``sym`` (an expression, a list/tuple of them, or a ``TupleWrapper``) that has none; returns
    ``sym``."""
    if isinstance(span, str):
        span = Span(span)
    if isinstance(sym, (list, tuple)):
        roots = list(sym)
    else:
        roots = [getattr(sym, "tuple_value", sym)]
    set_spans(roots, span)
    return sym


def report_unsupported(op_names, supported, frontend: str, excluded=None, other=None) -> None:
    """Raise one :class:`UnsupportedOperatorError` listing every unsupported operator with its
    count and the first node names using it (in first-seen order) when any operator in
    ``op_names`` (names, or ``(name, node name)`` pairs) is not in ``supported``.

    ``other`` is ``(operator names, hint)`` of another frontend: when it knows every operator this
    one does not, the message ends with the hint (a graph given to the wrong importer)."""
    pairs = [o if isinstance(o, tuple) else (o, None) for o in op_names]
    counts = Counter(o for o, _ in pairs if o not in supported)
    if not counts:
        return
    nodes: dict = {}
    for o, node in pairs:
        if o in counts and node is not None:
            nodes.setdefault(o, []).append(node)
    tail = ""
    if other is not None and all(o in other[0] for o in counts):
        tail = f". {other[1]}"
    excluded = excluded or {}
    parts = []
    for name, n in counts.items():
        why = f" [{excluded[name]}]" if name in excluded else ""
        at = nodes.get(name, [])
        where = ""
        if at:
            more = f", ... {len(at) - 3} more" if len(at) > 3 else ""
            where = (": node " if len(at) == 1 else ": nodes ") + \
                ", ".join(repr(x) for x in at[:3]) + more
        parts.append(f"{name} ({n}{where}){why}")
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
    "StrAttrsDict",
    "RequiredAttr",
    "AttrCvt",
    "Renamer",
    "ExprTable",
    "MissingAttributeError",
    "AttributeValueError",
    "UnsupportedAttributeError",
    "logger",
    "unbind",
    "rnn_cell",
    "gru_cell",
    "lstm_cell",
    "autopad",
    "ensure_scalar_shape",
    "try_resolve_var_to_const",
    "set_span",
    "infer_shape_any",
    "type_of",
    "infer_type",
    "get_relay_op",
    "fold_constant",
    "infer_channels",
    "infer_value",
    "try_infer_value",
    "shape_of",
    "new_var",
    "to_int_list",
    "get_name",
    "infer_shape",
    "infer_dtype",
    "set_spans",
    "report_unsupported",
    "ParamArray",
    "to_numpy",
    "as_param",
    "RelayError",
]

"""Pattern nodes of Relay's dataflow pattern language (tvm.relay.dataflow_pattern, 0.19).

A pattern is a small graph describing a shape of Relay expression: ``is_op("nn.conv2d")(
wildcard(), is_constant())`` describes a convolution whose weight is a constant. Patterns are
compared by identity: one pattern object used twice must match one expression twice
(``x = wildcard(); is_op("add")(x, x)`` matches ``a + a`` but not ``a + b``).
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.base import RelayExpr


class DFPattern:
    """Base class of patterns; operators build larger ones (``p(a, b)`` a call, ``p | q`` an
    alternative, ``p + q`` / ``-`` / ``*`` / ``/`` calls of add/subtract/multiply/divide)."""

    __slots__ = ()

    def __call__(self, *args):
        # p(None): a call of p on any arguments
        return CallPattern(self, None if args == (None,) else list(args))

    def __or__(self, other):
        return AltPattern(self, other)

    def __add__(self, other):
        return is_op("add")(self, other)

    def __sub__(self, other):
        return is_op("subtract")(self, other)

    def __mul__(self, other):
        return is_op("multiply")(self, other)

    def __truediv__(self, other):
        return is_op("divide")(self, other)

    def has_attr(self, attrs: dict):
        """This pattern on an expression whose attributes include ``attrs`` (a call's
        operator attributes, an operator's registered attributes, a function's attributes)."""
        return AttrPattern(self, dict(attrs))

    def has_type(self, ttype):
        """This pattern on an expression of (checked) type ``ttype``."""
        return TypePattern(self, ttype)

    def has_dtype(self, dtype: str):
        """This pattern on a tensor of ``dtype``."""
        return DataTypePattern(self, str(dtype))

    def has_shape(self, shape):
        """This pattern on a tensor of ``shape``."""
        return ShapePattern(self, tuple(shape))

    def match(self, expr) -> bool:
        """Whether ``expr`` matches this pattern (at its root)."""
        from .matcher import match

        return match(self, expr)

    def partition(self, expr, attrs=None, check=None):
        """:func:`relay_tvm.dataflow_pattern.partition` with this pattern."""
        from .matcher import partition

        return partition(self, expr, attrs, check)

    def dominates(self, parent, path=None):
        """A pattern where this one (the child) is dominated by ``parent`` through nodes that
        match ``path`` (default: any)."""
        return DominatorPattern(parent, path if path is not None else wildcard(), self)

    def optional(self, option_constructor):
        """This pattern, or ``option_constructor(this pattern)``."""
        return self | option_constructor(self)

    def children(self) -> tuple:
        return ()

    def __repr__(self):
        return type(self).__name__


def _as_pattern(p) -> DFPattern:
    if isinstance(p, DFPattern):
        return p
    if isinstance(p, RelayExpr):
        return ExprPattern(p)
    raise RelayError(f"dataflow pattern: expected a pattern or a Relay expression, got "
                     f"{type(p).__name__}")


class ExprPattern(DFPattern):
    """Matches an expression structurally equal to ``expr`` (an ``Op`` matches itself)."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    def __repr__(self):
        name = getattr(self.expr, "name", None)
        return f"is_op({name!r})" if name else "is_expr(...)"


class VarPattern(DFPattern):
    """Matches a variable, named ``name_hint`` unless that is empty."""

    __slots__ = ("name_hint",)

    def __init__(self, name_hint: str = ""):
        self.name_hint = name_hint

    @property
    def name(self) -> str:
        return self.name_hint


class ConstantPattern(DFPattern):
    """Matches a constant."""

    __slots__ = ()


class WildcardPattern(DFPattern):
    """Matches anything (or what ``redirect_to`` gave it)."""

    __slots__ = ("pattern",)

    def __init__(self):
        self.pattern = None

    def redirect_to(self, pattern):
        self.pattern = _as_pattern(pattern)

    def children(self):
        return (self.pattern,) if self.pattern is not None else ()


class CallPattern(DFPattern):
    """Matches a call of something matching ``op`` on arguments matching ``args`` (any
    arguments when ``args`` is None). ``add`` and ``multiply`` also match with the two
    arguments swapped."""

    __slots__ = ("op", "args")

    def __init__(self, op, args=None):
        self.op = _as_pattern(op)
        self.args = None if args is None else [_as_pattern(a) for a in args]

    def children(self):
        return (self.op, *(self.args or ()))

    def __repr__(self):
        args = "..." if self.args is None else ", ".join(map(repr, self.args))
        return f"{self.op!r}({args})"


class FunctionPattern(DFPattern):
    """Matches a function with parameters matching ``params`` (any when None) and ``body``."""

    __slots__ = ("params", "body")

    def __init__(self, params, body):
        self.params = None if params is None else [_as_pattern(p) for p in params]
        self.body = _as_pattern(body)

    def children(self):
        return (*(self.params or ()), self.body)


class TuplePattern(DFPattern):
    """Matches a tuple whose fields match ``fields`` (any tuple when None)."""

    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = None if fields is None else [_as_pattern(f) for f in fields]

    def children(self):
        return tuple(self.fields or ())


class TupleGetItemPattern(DFPattern):
    """Matches ``tuple[index]`` (any index when ``index`` is None or -1)."""

    __slots__ = ("tuple", "index")

    def __init__(self, tuple_value, index=None):
        self.tuple = _as_pattern(tuple_value)
        self.index = -1 if index is None else int(index)

    def children(self):
        return (self.tuple,)


class IfPattern(DFPattern):
    __slots__ = ("cond", "true_branch", "false_branch")

    def __init__(self, cond, true_branch, false_branch):
        self.cond, self.true_branch, self.false_branch = map(
            _as_pattern, (cond, true_branch, false_branch))

    def children(self):
        return (self.cond, self.true_branch, self.false_branch)


class LetPattern(DFPattern):
    __slots__ = ("var", "value", "body")

    def __init__(self, var, value, body):
        self.var, self.value, self.body = map(_as_pattern, (var, value, body))

    def children(self):
        return (self.var, self.value, self.body)


class AltPattern(DFPattern):
    """Matches what ``left`` matches, else what ``right`` matches."""

    __slots__ = ("left", "right")

    def __init__(self, left, right):
        self.left, self.right = _as_pattern(left), _as_pattern(right)

    def children(self):
        return (self.left, self.right)


class _Refine(DFPattern):
    __slots__ = ("pattern",)

    def children(self):
        return (self.pattern,)


class TypePattern(_Refine):
    __slots__ = ("type",)

    def __init__(self, pattern, ttype):
        self.pattern, self.type = _as_pattern(pattern), ttype


class DataTypePattern(_Refine):
    __slots__ = ("dtype",)

    def __init__(self, pattern, dtype):
        self.pattern, self.dtype = _as_pattern(pattern), dtype


class ShapePattern(_Refine):
    __slots__ = ("shape",)

    def __init__(self, pattern, shape):
        self.pattern, self.shape = _as_pattern(pattern), shape


class AttrPattern(_Refine):
    __slots__ = ("attrs",)

    def __init__(self, pattern, attrs):
        self.pattern, self.attrs = _as_pattern(pattern), attrs


class DominatorPattern(DFPattern):
    """``child`` reached from ``parent`` through nodes matching ``path`` only."""

    __slots__ = ("parent", "path", "child")

    def __init__(self, parent, path, child):
        self.parent, self.path, self.child = map(_as_pattern, (parent, path, child))

    def children(self):
        return (self.parent, self.path, self.child)


# ---- constructors (tvm.relay.dataflow_pattern's functions) ------------------------------------

def is_var(name: str = "") -> VarPattern:
    return VarPattern(name)


def is_constant() -> ConstantPattern:
    return ConstantPattern()


def is_expr(expr) -> ExprPattern:
    return ExprPattern(expr)


def is_op(op_name: str) -> ExprPattern:
    """The operator ``op_name``; call it on argument patterns."""
    from ..op.registry import get

    return ExprPattern(get(op_name))


def is_tuple(fields) -> TuplePattern:
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value, index=None) -> TupleGetItemPattern:
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond, true_branch, false_branch) -> IfPattern:
    return IfPattern(cond, true_branch, false_branch)


def is_let(var, value, body) -> LetPattern:
    return LetPattern(var, value, body)


def wildcard() -> WildcardPattern:
    return WildcardPattern()


def has_type(ttype, pattern=None) -> TypePattern:
    return TypePattern(pattern if pattern is not None else wildcard(), ttype)


def has_dtype(dtype, pattern=None) -> DataTypePattern:
    return DataTypePattern(pattern if pattern is not None else wildcard(), str(dtype))


def has_shape(shape, pattern=None) -> ShapePattern:
    return ShapePattern(pattern if pattern is not None else wildcard(), tuple(shape))


def has_attr(attrs, pattern=None) -> AttrPattern:
    return AttrPattern(pattern if pattern is not None else wildcard(), dict(attrs))


def dominates(parent, path, child) -> DominatorPattern:
    return DominatorPattern(parent, path, child)

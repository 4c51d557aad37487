"""Relay expressions (paper §3.1): variables, constants, calls, functions, let, if, tuples and
references.

Nodes are immutable and compare by identity; every node may carry a :class:`Span`. Lists given to
constructors are stored as tuples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError, RelayError
from .attrs import Attrs, DictAttrs
from .base import RelayExpr, Span
from .types import TensorType, Type


class Expr(RelayExpr):
    """Alias of the expression base class under Relay's name."""

    __slots__ = ()


def _check_expr(x, what):
    if not isinstance(x, RelayExpr):
        hint = ""
        if isinstance(x, (bool, int, float)) or type(x).__module__ == "numpy":
            hint = " (relay.const(value) makes a constant of it)"
        raise RelayError(f"{what}: expected a Relay expression, got {type(x).__name__} "
                         f"{x!r:.80}{hint}")
    return x


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Var(Expr):
    """A local variable, bound by a function parameter, a ``let`` or a pattern.

    Args:
        name_hint: the name used when printing (two variables may share a name).
        type_annotation: optional :class:`Type`.
    """

    name_hint: str
    type_annotation: Type | None = None
    span: Span | None = None

    def __post_init__(self):
        if self.type_annotation is not None and not isinstance(self.type_annotation, Type):
            raise RelayError(
                f"Var {self.name_hint}: type_annotation must be a Type, got {self.type_annotation!r}"
            )

    @property
    def vid(self):
        return self  # tvm.relay's Var.vid.name_hint idiom


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GlobalVar(Expr):
    """The name of a global function in an :class:`IRModule` (printed ``@name``)."""

    name_hint: str
    span: Span | None = None


class _ConstData(np.ndarray):
    """A read-only NumPy array with tvm.runtime.Tensor's ``numpy()`` accessor."""

    def numpy(self) -> np.ndarray:
        return np.array(self)

    asnumpy = numpy

    def __eq__(self, other):
        # ``const.data == tvm_tensor``: 0.19's Constant held that very NDArray, and ``==`` of
        # two NDArrays was one bool; ours is a copy, so the same shape, dtype and values are it
        if hasattr(other, "numpy") and not isinstance(other, np.ndarray):
            o = other.numpy()
            return self.shape == o.shape and self.dtype == o.dtype and bool(
                np.array_equal(np.asarray(self), o, equal_nan=self.dtype.kind == "f"))
        return super().__eq__(other)

    def __ne__(self, other):
        if hasattr(other, "numpy") and not isinstance(other, np.ndarray):
            return not self.__eq__(other)
        return super().__ne__(other)

    __hash__ = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Constant(Expr):
    """A constant tensor.

    Args:
        data: the value, an n-d array (copied, read-only), available as ``data.numpy()``.
    """

    data: np.ndarray
    span: Span | None = None

    def __post_init__(self):
        d = self.data
        if isinstance(d, _ConstData) and not d.flags.writeable:
            return  # another Constant's data: immutable already, share it (weights can be big)
        if hasattr(d, "numpy") and not isinstance(d, np.ndarray):
            d = d.numpy()
        arr = np.array(d, copy=True)
        if arr.dtype == object:
            raise RelayError(f"Constant: cannot hold an object array {arr!r:.60}")
        if (arr.dtype.kind not in "biufV" or arr.dtype.fields is not None
                or (arr.dtype.kind == "f" and arr.dtype.itemsize > 8)):
            # strings, complex numbers, datetimes, float128, structured records: no Relay dtype
            # (a str array failed only at type inference, "'str32' is not a dtype"; fresh-user
            # trials). 'V' without fields: ml_dtypes' bfloat16 / float8
            raise RelayError(f"Constant: cannot hold an array of dtype {arr.dtype} "
                             f"({arr!r:.60}); expected bool, int, uint or float values")
        arr = arr.view(_ConstData)
        arr.flags.writeable = False
        object.__setattr__(self, "data", arr)

    @property
    def tensor_type(self) -> TensorType:
        return TensorType(self.data.shape, _np_dtype_name(self.data.dtype))

    @classmethod
    def adopt(cls, arr: np.ndarray, span: Span | None = None) -> Constant:
        """A Constant holding ``arr`` itself, not a copy: for arrays nobody else writes (a
        kernel's fresh result, as FoldConstant's). ``arr`` must be a bool/int/uint/float
        ndarray; it is made read-only through the Constant's view (a C-contiguous copy is
        taken only of a non-contiguous one). ResNet-50's FoldConstant copied ~1 GB of
        transformed weights this way before (0.8-1.1 of ~11 CPU seconds of its build)."""
        if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
            return cls(arr, span)  # the checks and the copy of __post_init__
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        view = arr.view(_ConstData)
        view.flags.writeable = False
        return cls(view, span)


def _np_dtype_name(dt) -> str:
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        d = np.dtype(dt)
        name = "bool" if d == np.bool_ else d.name
        if isinstance(dt, np.dtype):
            _DTYPE_NAMES[dt] = name
    return name


_DTYPE_NAMES: dict = {}  # numpy dtype -> Relay dtype name (comparing dtypes is slow)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Call(Expr):
    """A call of an operator, a function, a global or a constructor.

    Args:
        op: the callee (``Op``, ``Function``, ``GlobalVar``, ``Var``, ``Constructor`` ...).
        args: the arguments.
        attrs: the operator's :class:`Attrs` (for operator calls).
        type_args: type arguments (InferType fills them in: an operator call's argument types,
            a polymorphic function's type arguments at the call).
    """

    op: RelayExpr
    args: tuple
    attrs: Attrs | None = None
    type_args: tuple = ()
    span: Span | None = None

    def __post_init__(self):
        _check_expr(self.op, "Call op")
        args = tuple(self.args)
        for i, a in enumerate(args):
            _check_expr(a, f"Call argument {i}")
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "type_args", tuple(self.type_args or ()))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Function(Expr):
    """A function: ``fn <type_params> (params) -> ret_type { body }``.

    Args:
        params: the parameter :class:`Var` s.
        body: the body expression.
        ret_type: optional return type annotation.
        type_params: ``TypeVar`` s the function is polymorphic in.
        attrs: a ``DictAttrs`` (``Primitive=1`` marks a fused primitive function).
    """

    params: tuple
    body: RelayExpr
    ret_type: Type | None = None
    type_params: tuple = ()
    attrs: Attrs | None = None
    span: Span | None = None

    def __post_init__(self):
        params = tuple(self.params)
        for p in params:
            if not isinstance(p, Var):
                raise RelayError(f"Function params must be Vars, got {type(p).__name__}")
        object.__setattr__(self, "params", params)
        _check_expr(self.body, "Function body")
        object.__setattr__(self, "type_params", tuple(self.type_params or ()))
        attrs = self.attrs
        if isinstance(attrs, dict):
            attrs = DictAttrs(attrs)
        object.__setattr__(self, "attrs", attrs)

    def with_attr(self, key: str, value) -> Function:
        """A copy with attribute ``key`` set to ``value``."""
        fields = dict(self.attrs._fields) if self.attrs is not None else {}
        fields[key] = value
        return Function(self.params, self.body, self.ret_type, self.type_params, DictAttrs(fields), self.span)

    def get_attr(self, key: str, default=None):
        if self.attrs is None:
            return default
        return self.attrs.get(key, default)

    @property
    def is_primitive(self) -> bool:
        return bool(self.get_attr("Primitive", 0))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Let(Expr):
    """``let var = value; body``. ``var`` is in scope in ``body`` (and in ``value`` when it is a
    function, for local recursion)."""

    var: Var
    value: RelayExpr
    body: RelayExpr
    span: Span | None = None

    def __post_init__(self):
        if not isinstance(self.var, Var):
            raise RelayError(f"Let binds a Var, got {type(self.var).__name__}")
        _check_expr(self.value, "Let value")
        _check_expr(self.body, "Let body")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class If(Expr):
    """``if (cond) { true_branch } else { false_branch }``; ``cond`` is a boolean scalar."""

    cond: RelayExpr
    true_branch: RelayExpr
    false_branch: RelayExpr
    span: Span | None = None

    def __post_init__(self):
        _check_expr(self.cond, "If condition")
        _check_expr(self.true_branch, "If true branch")
        _check_expr(self.false_branch, "If false branch")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tuple(Expr):
    """A tuple ``(f0, f1, ...)``."""

    fields: tuple
    span: Span | None = None

    def __post_init__(self):
        fields = tuple(self.fields)
        for i, f in enumerate(fields):
            _check_expr(f, f"Tuple field {i}")
        object.__setattr__(self, "fields", fields)

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, i):
        return self.fields[i]

    def astype(self, dtype):
        raise RelayError("astype cannot be applied to a tuple")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TupleGetItem(Expr):
    """Field ``index`` of a tuple (printed ``%t.0``)."""

    tuple_value: RelayExpr
    index: int
    span: Span | None = None

    def __post_init__(self):
        _check_expr(self.tuple_value, "TupleGetItem tuple")
        if isinstance(self.index, bool) or not isinstance(self.index, (int, np.integer)):
            raise RelayError(f"TupleGetItem index must be an int, got {self.index!r}")
        object.__setattr__(self, "index", int(self.index))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefCreate(Expr):
    """``ref(value)``: a new mutable cell holding ``value``."""

    value: RelayExpr
    span: Span | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefRead(Expr):
    """``ref_read(ref)``: the value in a cell."""

    ref: RelayExpr
    span: Span | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RefWrite(Expr):
    """``ref_write(ref, value)``: store ``value`` in a cell; evaluates to ``()``."""

    ref: RelayExpr
    value: RelayExpr
    span: Span | None = None


# ---- helpers -----------------------------------------------------------------------------------


def var(name_hint, type_annotation=None, shape=None, dtype="float32", span=None) -> Var:
    """Create a local variable (``relay.var``).

    Args:
        name_hint: the printed name.
        type_annotation: a :class:`Type`, or a dtype string (then ``shape`` may give the shape).
        shape: shape of a tensor variable; with ``dtype`` it makes a ``TensorType``.
        dtype: element type when ``shape`` is given.
    """
    if type_annotation is not None and shape is not None:
        raise RelayError("var: give either type_annotation or shape, not both")
    if shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation, span)


_PY_DEFAULTS = {np.dtype("int64"): "int32", np.dtype("float64"): "float32"}


def const(value, dtype=None, span=None) -> Constant:
    """Create a constant (``relay.const``).

    Python ``float`` and ``int`` (and float64/int64 NumPy arrays) become float32 and int32
    unless ``dtype`` is given, as in Relay; other NumPy arrays and tvm tensors keep their dtype.

    Raises:
        RelayError: ``value`` is not a number, sequence, array or tensor; ``dtype`` is not a
            dtype.
        InputError: ``value`` does not fit the constant's dtype (NumPy's cast, and tvm.relay
            0.19, changed it silently): integers out of an integer dtype's range (``300`` as
            int8 wraps to 44), floats with a fraction, inf or NaN for an integer dtype (0.19
            truncated ``const(1.7, "int32")`` to 1), finite numbers beyond a float dtype's range
            (``const(1e40)`` is float32 inf). inf and NaN given as such stay allowed for floats.
    """
    tensor = hasattr(value, "numpy") and not isinstance(value, np.ndarray)
    if tensor:  # a tvm tensor keeps its dtype, as in 0.19 (its float64 became float32 here)
        value = value.numpy()
    if isinstance(value, (bool, int, float, list, tuple)) or isinstance(value, np.generic):
        value = np.array(value)
    elif not isinstance(value, np.ndarray):
        raise RelayError(f"const: cannot make a constant from {type(value).__name__}")
    if dtype is None:
        target = None if tensor else _PY_DEFAULTS.get(value.dtype)
    else:
        target = _dtype_arg(dtype)
    if target is not None:
        _check_fits(value, np.dtype(target), dtype is None)
        value = value.astype(target)
    return Constant(value, span)


def _dtype_arg(dtype):
    """``relay.const``'s ``dtype`` as NumPy's, or a RelayError naming it (NumPy's TypeError
    "data type 'flot32' not understood" was raised as is)."""
    try:
        np.dtype(dtype)  # ("float" is NumPy's float64 here, as 0.19's relay.const made it)
        return dtype
    except TypeError:
        raise RelayError(f"const: dtype {dtype!r} is not a dtype NumPy can hold (expected e.g. "
                         f"float32, int64)") from None


def _default_hint(value: np.ndarray, defaulted: bool) -> str:
    if not defaulted:
        return ""
    wide = "int64" if value.dtype.kind in "iu" else "float64"
    kind = "ints and int64 arrays default to int32" if wide == "int64" else (
        "floats and float64 arrays default to float32")
    return f" (Python {kind}, as in Relay; give dtype=\"{wide}\")"


def _check_fits(value: np.ndarray, target: np.dtype, defaulted: bool) -> None:
    """Refuse values that the constant's dtype cannot hold: NumPy's cast would wrap integers
    (``2**40 + 5`` as int32 is 5), truncate floats to integers, or turn finite floats into inf.

    Raises:
        InputError: naming the value and the dtype.
    """
    if value.size == 0:
        return
    if target.kind == "f":
        if value.dtype.kind not in "iuf":
            return
        with np.errstate(over="ignore", invalid="ignore"):
            cast = value.astype(target)
        bad = ~np.isfinite(cast)
        if value.dtype.kind == "f":
            bad &= np.isfinite(value)  # inf and NaN given as such stay what they are
        if bad.any():
            first = value.reshape(-1)[int(np.argmax(bad.reshape(-1)))]
            raise InputError(f"const: {first.item()!r} does not fit {target} (largest finite "
                             f"magnitude {np.finfo(target).max.item()!r}; the cast would make "
                             f"it infinite){_default_hint(value, defaulted)}")
        return
    if target.kind not in "iu":
        return
    if value.dtype.kind == "f":
        bad = ~np.isfinite(value) | (value != np.trunc(value))
        if bad.any():
            first = value.reshape(-1)[int(np.argmax(bad.reshape(-1)))]
            raise InputError(f"const: {first!r} is not an integer, and {target} constants hold "
                             f"integers only (round or cast the value explicitly)")
        value = value.astype("float64")
        lo, hi = value.min(), value.max()
        info = np.iinfo(target)
        if lo < info.min or hi > info.max:
            raise InputError(f"const: value range [{lo}, {hi}] does not fit {target} "
                             f"[{info.min}, {info.max}]")
        return
    if value.dtype.kind not in "iub":
        return
    info = np.iinfo(target)
    lo, hi = int(value.min()), int(value.max())
    if lo < info.min or hi > info.max:
        raise InputError(f"const: value range [{lo}, {hi}] does not fit {target} "
                         f"[{info.min}, {info.max}]{_default_hint(value, defaulted)}")


def bind(expr, binds: dict):
    """Substitute variables in ``expr``: ``binds`` maps ``Var`` to ``Expr``.

    For a ``Function``, bound parameters are removed from its parameter list.
    """
    from .functor import substitute

    return substitute(expr, binds)



class TupleWrapper:
    """A tuple-valued operator call that indexes like a Python tuple (``relay.TupleWrapper``).

    ``relay.split`` and ``relay.topk`` return one: ``w[i]`` is ``TupleGetItem(w.tuple_value, i)``,
    ``w.astuple()`` the call itself, ``len(w)`` the number of fields.
    """

    def __init__(self, tuple_value, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self):
        """The underlying tuple-typed expression."""
        return self.tuple_value

    def astext(self, **kwargs):
        """The text of the wrapped tuple (keywords as for ``relay.astext``)."""
        return (
            self.tuple_value.astext(**kwargs)
            if hasattr(self.tuple_value, "astext")
            else str(self.tuple_value)
        )

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError(f"TupleWrapper index must be an int, got {type(index).__name__}")
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError(f"TupleWrapper index {index} out of range for {self.size} fields")
        return TupleGetItem(self.tuple_value, index)

    def __len__(self):
        return self.size

    def __iter__(self):
        return (self[i] for i in range(self.size))

    def __repr__(self):
        return f"TupleWrapper({self.tuple_value!r}, {self.size})"


__all__ = [
    "TupleWrapper",
    "Expr",
    "Var",
    "GlobalVar",
    "Constant",
    "Call",
    "Function",
    "Let",
    "If",
    "Tuple",
    "TupleGetItem",
    "RefCreate",
    "RefRead",
    "RefWrite",
    "var",
    "const",
    "bind",
]

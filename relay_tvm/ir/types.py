"""Relay's types (paper §3.2): tensor types with shapes, tuples, functions, type variables,
references, algebraic data types, and type relations.

Types are frozen values with structural ``==`` and ``hash``, except the ones that are names
(``TypeVar``, ``GlobalTypeVar``, ``IncompleteType``), which compare by identity.

A tensor dimension is a Python ``int`` (in a :class:`TensorType`'s shape an :class:`IntDim`, an
``int`` that also answers 0.19's ``.value`` / ``.dtype``), a symbolic TVM PrimExpr (for example
a ``tvm.tirx.Var("n", "int64")``), or :class:`Any` (known only at run time).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable

import tvm_ffi

from ..errors import RelayError
from .base import Node, Span, check_dtype


class TypeKind(enum.IntEnum):
    """The kind of a type variable (as in Relay)."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


class Type(Node):
    """Base of all Relay types."""

    __slots__ = ()

    def is_dynamic(self) -> bool:
        return False


class AnyDim:
    """A tensor dimension known only at run time, printed ``?`` (``relay.Any()``).

    All ``Any`` dimensions are equal to each other.
    """

    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, AnyDim)

    def __hash__(self):
        return 0x5EED

    def __repr__(self):
        return "?"


#: ``relay.Any()`` / ``tvm.tir.Any()``: a dimension known only at run time. The class itself,
#: as 0.19's ``tvm.tir.Any`` was, so ``isinstance(shape[0], tvm.tir.Any)`` holds.
Any = AnyDim


class IntDim(int):
    """A static dimension of a :class:`TensorType`'s shape: an ``int`` in every respect
    (arithmetic, ``==`` / ``hash`` with plain ints, ``str``, JSON, NumPy shapes), which also
    answers what TVM 0.19's ``tvm.tir.IntImm`` dimensions did: ``.value`` (the plain ``int``)
    and ``.dtype`` (``"int32"``, as 0.19 built shapes given as Python ints; ``"int64"`` past
    the int32 range).

    Arithmetic on it gives plain ints; :class:`TensorType` makes every static dimension of its
    shape one of these.
    """

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)

    @property
    def dtype(self) -> str:
        return "int32" if self < 0x80000000 else "int64"


_NSMALL = 4096
_SMALL_DIMS = tuple(IntDim(i) for i in range(_NSMALL))  # shared: dimensions are immutable


def _tensor_dims(shape) -> tuple:
    """``shape`` (a sequence of dimensions) normalized for a TensorType: ints as IntDim."""
    dims = []
    for d in shape:
        if type(d) is not IntDim:
            if type(d) is int and 0 <= d < _NSMALL:
                d = _SMALL_DIMS[d]
            else:
                d = normalize_dim(d, "TensorType shape")
                if isinstance(d, int) and type(d) is not IntDim:
                    d = _SMALL_DIMS[d] if d < _NSMALL else IntDim(d)
        dims.append(d)
    return tuple(dims)


def _is_prim_expr(x) -> bool:
    if isinstance(x, (int, float, str, tuple, list, AnyDim)) or x is None:
        return False
    import tvm.ir

    return bool(tvm.ir.is_prim_expr(x))


def normalize_dim(d, where: str = "shape"):
    """Turn a user-given dimension into an ``int``, a symbolic PrimExpr or :class:`AnyDim`.

    Raises:
        RelayError: the dimension is negative, a float, or not a dimension at all.
    """
    if isinstance(d, AnyDim):
        return d
    if isinstance(d, bool):
        raise RelayError(f"{where}: dimension {d!r} is a bool, expected a non-negative int")
    if isinstance(d, int):
        if d < 0:
            raise RelayError(f"{where}: dimension {d} is negative, expected >= 0")
        return d
    if hasattr(d, "__index__") and not _is_prim_expr(d):  # numpy integers
        return normalize_dim(int(d), where)
    if _is_prim_expr(d):
        from tvm import tirx

        if isinstance(d, tirx.IntImm) or type(d).__name__ == "IntImm":
            return normalize_dim(int(d.value), where)
        dt = str(getattr(d, "ty", "") or "")
        if not dt.startswith("int"):
            raise RelayError(f"{where}: symbolic dimension {d} has type {dt}, expected int")
        return d
    raise RelayError(f"{where}: {d!r} is not a dimension (expected int, tvm.tirx.PrimExpr or Any)")


def dim_equal(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, AnyDim) or isinstance(b, AnyDim):
        return isinstance(a, AnyDim) and isinstance(b, AnyDim)
    if isinstance(a, int) or isinstance(b, int):
        return False
    return bool(tvm_ffi.structural_equal(a, b, map_free_vars=False))


def dim_hash(d) -> int:
    if isinstance(d, (int, AnyDim)):
        return hash(d)
    return int(tvm_ffi.structural_hash(d))


def dim_str(d) -> str:
    if isinstance(d, AnyDim):
        return "?"
    return str(d)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TensorType(Type):
    """The type of a tensor: ``Tensor[(d0, d1, ...), dtype]``.

    Args:
        shape: sequence of dimensions (int, symbolic TVM PrimExpr, or ``Any()``);
            ``()`` for a scalar. The ints are kept as :class:`IntDim` (ints with 0.19's
            ``.value`` and ``.dtype``).
        dtype: element type, e.g. ``"float32"``, ``"int64"``, ``"bool"``.
    """

    shape: tuple
    dtype: str = "float32"
    span: Span | None = None

    def __post_init__(self):
        shape = self.shape
        # anything but a tuple of IntDims (the common case: another type's shape) is
        # normalized; static dimensions become IntDims (a loop: cheaper than all() here)
        if type(shape) is tuple:
            for d in shape:
                if type(d) is not IntDim:
                    object.__setattr__(self, "shape", _tensor_dims(shape))
                    break
        else:
            if isinstance(shape, (str, bytes)):  # ("2,3" read as the dimensions '2', ',', ...)
                raise RelayError(f"TensorType shape: expected a tuple of dimensions, got the "
                                 f"string {shape!r} (e.g. shape=(2, 3))")
            if isinstance(shape, int) or _is_prim_expr(shape):
                shape = (shape,)
            object.__setattr__(self, "shape", _tensor_dims(shape))
        object.__setattr__(self, "dtype", check_dtype(self.dtype, "TensorType dtype"))

    def __eq__(self, other):
        return (
            isinstance(other, TensorType)
            and self.dtype == other.dtype
            and len(self.shape) == len(other.shape)
            and all(dim_equal(a, b) for a, b in zip(self.shape, other.shape))
        )

    def __hash__(self):
        return hash(("TensorType", self.dtype, tuple(dim_hash(d) for d in self.shape)))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def concrete_shape(self) -> tuple:
        """The shape as a tuple of ints.

        Raises:
            RelayError: some dimension is symbolic or ``Any``.
        """
        if not all(isinstance(d, int) for d in self.shape):
            raise RelayError(f"shape {self.shape} is not concrete")
        return self.shape

    def is_dynamic(self) -> bool:
        return any(isinstance(d, AnyDim) for d in self.shape)


def scalar_type(dtype: str) -> TensorType:
    """The type of a 0-d tensor of ``dtype``."""
    return TensorType((), dtype)


@dataclass(frozen=True, slots=True, repr=False)
class TupleType(Type):
    """The type of a tuple: ``(t0, t1, ...)``."""

    fields: tuple
    span: Span | None = field(default=None, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))

    def is_dynamic(self) -> bool:
        return any(f.is_dynamic() for f in self.fields)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeVar(Type):
    """A type variable, bound by a function's or type definition's type parameters.

    Type variables compare by identity.
    """

    name_hint: str
    kind: TypeKind = TypeKind.Type
    span: Span | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GlobalTypeVar(Type):
    """The name of a global type definition (an algebraic data type such as ``List``)."""

    name_hint: str
    kind: TypeKind = TypeKind.AdtHandle
    span: Span | None = None

    def __call__(self, *args):
        """``List(t)``: this type applied to type arguments, a :class:`TypeCall`."""
        return TypeCall(self, tuple(args))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IncompleteType(Type):
    """A type to be found by inference (printed ``_``). Compares by identity."""

    kind: TypeKind = TypeKind.Type
    span: Span | None = None


@dataclass(frozen=True, slots=True, repr=False)
class TypeConstraint(Type):
    """Base of type constraints attached to function types."""


@dataclass(frozen=True, slots=True, repr=False)
class FuncType(Type):
    """The type of a function: ``fn<type_params>(arg_types) -> ret_type``.

    Args:
        arg_types: parameter types.
        ret_type: return type.
        type_params: ``TypeVar`` s the function is polymorphic in.
        type_constraints: ``TypeRelation`` s over the type parameters.
    """

    arg_types: tuple
    ret_type: Type
    type_params: tuple = ()
    type_constraints: tuple = ()
    span: Span | None = field(default=None, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "arg_types", tuple(self.arg_types))
        object.__setattr__(self, "type_params", tuple(self.type_params or ()))
        object.__setattr__(self, "type_constraints", tuple(self.type_constraints or ()))

    def __eq__(self, other):
        """Alpha-equivalence: ``fn [A](A) -> A == fn [B](B) -> B`` (as tvm.relay's ``==`` on
        types, which is structural equality)."""
        if not isinstance(other, FuncType):
            return NotImplemented
        if len(self.type_params) != len(other.type_params) or len(self.arg_types) != len(
                other.arg_types) or len(self.type_constraints) != len(other.type_constraints):
            return False
        if any(a.kind != b.kind for a, b in zip(self.type_params, other.type_params)):
            return False
        fresh = [TypeVar(p.name_hint, p.kind) for p in self.type_params]

        def body(f):
            ren = dict(zip(f.type_params, fresh))
            # constraints compare by their content (relation, arity, attributes, argument
            # types), as 0.19's structural equality of TypeRelation did
            cons = tuple((c.func, c.num_inputs, c.attrs,
                          tuple(_rename_type_vars(a, ren) for a in c.args))
                         if isinstance(c, TypeRelation) else c for c in f.type_constraints)
            return (tuple(_rename_type_vars(t, ren) for t in f.arg_types),
                    _rename_type_vars(f.ret_type, ren), cons)

        return body(self) == body(other)

    def __hash__(self):
        if self.type_params:  # names of bound type variables do not count
            return hash(("FuncType", len(self.arg_types), len(self.type_params)))
        return hash((self.arg_types, self.ret_type, len(self.type_constraints)))


@dataclass(frozen=True, slots=True, repr=False)
class RefType(Type):
    """The type of a mutable reference cell holding a ``value``."""

    value: Type
    span: Span | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True, slots=True, repr=False)
class TypeCall(Type):
    """An algebraic data type applied to type arguments, e.g. ``List[float32 tensor]``."""

    func: Type
    args: tuple = ()
    span: Span | None = field(default=None, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeRelation(TypeConstraint):
    """A relation among types, solved by inference.

    Args:
        func: ``func(arg_types, attrs)`` returning the output type, ``None`` (not enough
            information yet) or raising :class:`TypeInferenceError`.
        args: the input types followed by the output type.
        num_inputs: how many of ``args`` are inputs.
        attrs: attributes passed to ``func``.
    """

    func: Callable
    args: tuple
    num_inputs: int
    attrs: object = None
    span: Span | None = None


def _rename_type_vars(t, ren: dict):
    """``t`` with the type variables in ``ren`` replaced (types are shallow: recursion is
    bounded by the nesting of the written type)."""
    if isinstance(t, TypeVar):
        return ren.get(t, t)
    if isinstance(t, TupleType):
        return TupleType(tuple(_rename_type_vars(f, ren) for f in t.fields))
    if isinstance(t, FuncType):
        inner = {k: v for k, v in ren.items() if k not in t.type_params}
        return FuncType(tuple(_rename_type_vars(a, inner) for a in t.arg_types),
                        _rename_type_vars(t.ret_type, inner), t.type_params, t.type_constraints)
    if isinstance(t, RefType):
        return RefType(_rename_type_vars(t.value, ren))
    if isinstance(t, TypeCall):
        return TypeCall(_rename_type_vars(t.func, ren),
                        tuple(_rename_type_vars(a, ren) for a in t.args))
    return t


def type_str(t) -> str:
    """A compact rendering of a type for error messages (the printer's form)."""
    if isinstance(t, TensorType):
        if not t.shape:
            return t.dtype
        return f"Tensor[({', '.join(dim_str(d) for d in t.shape)}{',' if len(t.shape) == 1 else ''}), {t.dtype}]"
    if isinstance(t, TupleType):
        return f"({', '.join(type_str(f) for f in t.fields)}{',' if len(t.fields) == 1 else ''})"
    if isinstance(t, FuncType):
        tp = f"[{', '.join(v.name_hint for v in t.type_params)}]" if t.type_params else ""
        return f"fn{tp} ({', '.join(type_str(a) for a in t.arg_types)}) -> {type_str(t.ret_type)}"
    if isinstance(t, (TypeVar, GlobalTypeVar)):
        return t.name_hint
    if isinstance(t, IncompleteType):
        return "_"
    if isinstance(t, RefType):
        return f"ref({type_str(t.value)})"
    if isinstance(t, TypeCall):
        return f"{type_str(t.func)}[{', '.join(type_str(a) for a in t.args)}]"
    return repr(t)



def mentions_func_type(ty, mod=None) -> bool:
    """Whether a value of type ``ty`` can hold a function: ``ty`` is or contains a ``FuncType``
    (through tuple fields, reference contents and type arguments), or, given ``mod``, names an
    ADT one of whose constructors takes a field that does (``mod``'s type definitions; an ADT
    without a definition there counts as holding none)."""
    seen = set()
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, FuncType):
            return True
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, RefType):
            stack.append(t.value)
        elif isinstance(t, TypeCall):
            stack.extend(t.args)
            stack.append(t.func)
        elif isinstance(t, GlobalTypeVar) and t not in seen and mod is not None:
            seen.add(t)
            try:
                data = mod[t]
            except Exception:  # no definition: its fields cannot be typed anyway
                continue
            for c in data.constructors:
                stack.extend(c.inputs)
    return False

__all__ = [
    "TypeKind",
    "Type",
    "Any",
    "AnyDim",
    "IntDim",
    "TensorType",
    "scalar_type",
    "TupleType",
    "TypeVar",
    "GlobalTypeVar",
    "IncompleteType",
    "TypeConstraint",
    "FuncType",
    "RefType",
    "TypeCall",
    "TypeRelation",
    "type_str",
    "mentions_func_type",
    "normalize_dim",
    "dim_equal",
]

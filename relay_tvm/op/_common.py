"""Helpers shared by operator definitions: argument checks and the common type relations."""

from __future__ import annotations

import math

import numpy as np

from ..errors import TypeInferenceError
from ..ir.types import AnyDim, IncompleteType, TensorType, TupleType, dim_equal, type_str


def named(fn, name: str):
    """Give a constructor made by a factory its operator's name (``__name__`` and
    ``__qualname__``: a TypeError then says ``max_pool2d() got an unexpected keyword argument``,
    not ``_pool_ctor.<locals>.ctor()``); returns ``fn``."""
    fn.__name__ = fn.__qualname__ = name
    return fn


def tensor_args(types, names=None, op_name: str = ""):
    """The argument types as ``TensorType`` s, or ``None`` if one is not known yet.

    Raises:
        TypeInferenceError: an argument is known and is not a tensor.
    """
    out = []
    for i, t in enumerate(types):
        if isinstance(t, IncompleteType):
            return None
        if not isinstance(t, TensorType):
            name = names[i] if names and i < len(names) else f"argument {i}"
            raise TypeInferenceError(
                f"{op_name + ': ' if op_name else ''}{name} must be a tensor, got {type_str(t)}"
            )
        out.append(t)
    return out


def shape_str(shape) -> str:
    """``(2, 3)``, ``(4,)``, ``()`` — a shape as the messages print it."""
    from ..ir.types import dim_str

    dims = [dim_str(d) for d in shape]
    return f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"


def _any_str(shape) -> str:
    """:func:`shape_str` with the lowering's symbolic dimensions (TVM variables named by the
    kernel, ``n0``) shown as the ``?`` of the type they stand for."""
    return shape_str([d if isinstance(d, (int, np.integer)) or type(d).__name__ == "IntImm"
                      else AnyDim() for d in shape])


# True while the backend recomputes types over symbolic dimensions (relay_tvm.backend.shape_func);
# the broadcasts that assume two dimensions equal at run time add (condition, message) here, and
# the kernel checks them
LOWERING = [False]
LOWERING_CHECKS: list = []
LOWERING_WHERE = [""]  # the call being lowered, for the messages of the checks


def as_int64(d):
    """A dimension (an int or a PrimExpr) as an int64 PrimExpr."""
    from tvm import tirx

    if isinstance(d, (int, np.integer)):
        return tirx.const(int(d), "int64")
    return d.astype("int64")


def _prod64(shape):
    out = as_int64(1)
    for d in shape:
        out = out * as_int64(d)
    return out


# Checks of index values that TE computes ask of their kernel (``require_indices_in_range``);
# the backend turns those on kernel inputs into asserts before the kernel body.
INDEX_CHECKS: list = []


def require_indices_in_range(indices, bounds, message: str, nonnegative: bool = False,
                             reads=()) -> None:
    """Have the kernel that computes a gather check, before it runs, that every value of the
    integer tensor ``indices`` lies in ``[-n, n)`` (``[0, n)`` with ``nonnegative``), where
    ``n = bounds(index_tuple)`` (a PrimExpr: the size of the data axis that element indexes),
    failing with an :class:`relay_tvm.errors.InputError` ``message``. With ``reads`` (kernel
    inputs), ``bounds`` is called as ``bounds(index_tuple, *loads)``: one function per tensor
    of ``reads`` that loads its element at an index tuple (a bound given by a tensor's values,
    e.g. ``unravel_index``'s shape). Only a kernel input can be checked (an index computed
    inside the kernel is not); the compute must still clamp what it reads."""
    INDEX_CHECKS.append((indices, bounds, message, nonnegative, tuple(reads)))


def require_at_run_time(cond, message: str) -> None:
    """While the backend lowers a dynamic kernel (``LOWERING``): have the kernel check ``cond``
    (a boolean ``PrimExpr`` over its symbolic dimensions) before it runs, failing with
    ``message``. A relation calls this where its type rule accepted an ``Any`` dimension that
    must agree with another at run time; outside lowering it does nothing. ``message`` does not
    name the operator: the backend puts the call being lowered in front of it."""
    if LOWERING[0] and not isinstance(cond, (bool, np.bool_)):
        where = LOWERING_WHERE[0]  # the call: relations' messages do not name it
        LOWERING_CHECKS.append((cond, f"{where}: {message}" if where else message))


def require_equal_dims(a, b, message: str) -> None:
    """:func:`require_at_run_time` of ``a == b`` for two dimensions (ints or symbolic)."""
    if not LOWERING[0] or isinstance(a, AnyDim) or isinstance(b, AnyDim):
        return
    if not (isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))):
        require_at_run_time(as_int64(a) == as_int64(b), message)


def require_same_size(shape_a, shape_b, message: str) -> None:
    """:func:`require_at_run_time` that two shapes have the same element count (a reshape's
    input and output); nothing when a dimension is ``Any`` (the count is then unknown here)."""
    dims = list(shape_a) + list(shape_b)
    if not LOWERING[0] or any(isinstance(d, AnyDim) for d in dims):
        return
    if all(isinstance(d, (int, np.integer)) for d in dims):
        return
    require_at_run_time(_prod64(shape_a) == _prod64(shape_b), message)


def broadcast_shapes(a, b, what: str = "operands"):
    """NumPy broadcasting of two shapes with symbolic and ``Any`` dimensions (Relay's
    BroadcastRel).

    Raises:
        TypeInferenceError: two dimensions differ and neither is 1.
    """
    na, nb = len(a), len(b)
    n = max(na, nb)
    out = []
    for i in range(n):
        da = a[na - n + i] if na - n + i >= 0 else 1
        db = b[nb - n + i] if nb - n + i >= 0 else 1
        if dim_equal(da, db):
            out.append(da)
        elif isinstance(da, int) and da == 1:
            out.append(db)
        elif isinstance(db, int) and db == 1:
            out.append(da)
        elif isinstance(da, AnyDim) or isinstance(db, AnyDim):
            out.append(AnyDim())
        elif LOWERING[0] and not isinstance(da, int) and not isinstance(db, int):
            # two Any dimensions made symbolic in one kernel: equal at run time, or one of
            # them 1 (NumPy's rule; the kernel reads that operand's row 0, see
            # broadcast_inputs)
            from tvm import tirx

            out.append(tirx.Select(da == 1, db, da))
            LOWERING_CHECKS.append((tirx.Or(da == db, tirx.Or(da == 1, db == 1)),
                                    f"{what}: dimension {i} differs ({_any_str(a)} vs "
                                    f"{_any_str(b)}) and neither is 1"))
        elif LOWERING[0]:
            # a static size against an Any one, which must be that size or 1 at run time
            from tvm import tirx

            static, dyn = (da, db) if isinstance(da, int) else (db, da)
            out.append(static)
            LOWERING_CHECKS.append((tirx.Or(dyn == static, dyn == 1),
                                    f"{what}: dimension {i} must be {static} or 1 "
                                    f"({_any_str(a)} vs {_any_str(b)})"))
        else:
            raise TypeInferenceError(
                f"{what}: shapes {shape_str(a)} and {shape_str(b)} do not broadcast "
                f"(dimension {i}: {da} vs {db})"
            )
    return tuple(out)


def broadcast_inputs(inputs, out_shape):
    """TE tensors ``inputs`` of a broadcasting kernel, each with a symbolic dimension that is
    not the output's (an ``Any`` size that may be 1 at run time, see :func:`broadcast_shapes`)
    replaced by a stage reading row 0 where that size is 1: topi's broadcast indexes such a
    dimension with the output's index. Inputs needing nothing come back as they are.

    Args:
        inputs: ``te.Tensor`` s, right-aligned against ``out_shape``.
        out_shape: the kernel's output shape (ints and ``tirx`` expressions).
    """
    from tvm import te, tirx

    n = len(out_shape)
    out = []
    for t in inputs:
        shape = list(t.shape)
        k = n - len(shape)
        stretch = [j for j, d in enumerate(shape)
                   if not isinstance(d, tirx.IntImm) and not _same_dim(d, out_shape[k + j])]
        if not stretch:
            out.append(t)
            continue

        new_shape = list(shape)
        for j in stretch:
            new_shape[j] = out_shape[k + j]
        out.append(te.compute(new_shape, _stretched_read(t, frozenset(stretch), shape),
                              name=f"{t.op.name}_bcast"))
    return out


def _stretched_read(t, stretch, shape):
    from tvm import tirx

    def read(*idx):
        return t(*[tirx.Select(shape[j] == 1, tirx.const(0, str(i.ty)), i)
                   if j in stretch else i for j, i in enumerate(idx)])

    return read


def _same_dim(a, b) -> bool:
    import tvm

    if isinstance(b, int):
        return isinstance(a, tvm.tirx.IntImm) and int(a) == b
    return tvm.ir.structural_equal(a, b)


def same_dtype(types, names, op_name):
    d0 = types[0].dtype
    for t, n in zip(types[1:], names[1:]):
        if t.dtype != d0:
            raise TypeInferenceError(
                f"{op_name}: {names[0]} has dtype {d0} but {n} has dtype {t.dtype} ({names[0]} "
                f"shape {shape_str(types[0].shape)}, {n} shape {shape_str(t.shape)}); Relay does "
                f"not cast implicitly (insert a cast)"
            )
    return d0


def broadcast_rel(op_name: str, out_dtype: str | None = None):
    """Relation of a binary broadcasting operator; ``out_dtype`` overrides (``"bool"`` for
    comparisons)."""

    def rel(types, attrs):
        ts = tensor_args(types, ("lhs", "rhs"), op_name)
        if ts is None:
            return None
        dtype = same_dtype(ts, ("lhs", "rhs"), op_name)
        shape = broadcast_shapes(ts[0].shape, ts[1].shape, f"{op_name} lhs and rhs")
        return TensorType(shape, out_dtype or dtype)

    return rel


def identity_rel(op_name: str, dtypes=None):
    """Relation of a unary elementwise operator: the output has the input's type.

    Args:
        dtypes: if given, the dtype prefixes accepted (``("float",)`` for exp, log, ...).
    """

    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op_name)
        if ts is None:
            return None
        if dtypes and not ts[0].dtype.startswith(tuple(dtypes)):
            raise TypeInferenceError(
                f"{op_name}: data has dtype {ts[0].dtype}, expected {dtype_kinds(dtypes)} dtype"
            )
        return ts[0]

    return rel


def dtype_kinds(prefixes) -> str:
    """``("float", "bfloat")`` -> ``"a float"``, ``("int", "uint")`` -> ``"an int/uint"``: the
    accepted dtype kinds for messages (bfloat16 counts as a float)."""
    kinds = "/".join(p for p in prefixes if p != "bfloat")
    return ("an " if kinds[:1] in "aeiou" else "a ") + kinds


def tuple_or_tensors(t, op_name):
    """Field types of a tuple argument, or ``None`` if not known yet."""
    if isinstance(t, IncompleteType):
        return None
    if not isinstance(t, TupleType):
        raise TypeInferenceError(f"{op_name}: expects a tuple of tensors, got {type_str(t)}")
    return tensor_args(t.fields, None, op_name)


def normalize_axis(axis: int, ndim: int, op_name: str, what: str = "axis") -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise TypeInferenceError(f"{op_name}: {what} {axis} is out of range for rank {ndim}")
    return axis + ndim if axis < 0 else axis


__all__ = [
    "tensor_args",
    "broadcast_shapes",
    "broadcast_rel",
    "identity_rel",
    "same_dtype",
    "tuple_or_tensors",
    "normalize_axis",
    "dtype_kinds",
    "shape_str",
]


from ..ir.expr import TupleWrapper  # noqa: E402,F401  (defined with the IR)


def int_dtype_check(t, what, op_name):
    """Raise unless ``t`` (a TensorType) has an integer dtype."""
    if not t.dtype.startswith(("int", "uint")):
        raise TypeInferenceError(
            f"{op_name}: {what} must have an integer dtype, got {t.dtype} "
            f"(shape {shape_str(t.shape)})"
        )


def is_static(d) -> bool:
    return isinstance(d, int)


def out_dims(shape) -> list:
    """A shape for a TE compute: ints where static, ``PrimExpr`` where symbolic (a dynamic
    kernel's output shape as the backend's lowering recomputes it, see
    :mod:`relay_tvm.backend.shape_func`)."""
    out = []
    for d in shape:
        if isinstance(d, AnyDim):
            raise TypeInferenceError(f"shape {shape_str(shape)}: an Any dimension reached a TE "
                                     f"compute (it should be symbolic by now)")
        out.append(int(d) if isinstance(d, int) or type(d).__name__ == "IntImm" else d)
    return out


__all__ += ["TupleWrapper", "int_dtype_check", "is_static", "out_dims"]


def _simplify(e):
    import tvm

    return tvm.sym.Analyzer().simplify(e)


def dim_add(a, b):
    """``a + b`` of two dimensions: ints add, ``Any`` stays ``Any``, symbolic dims give a
    simplified symbolic sum."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, AnyDim) or isinstance(b, AnyDim):
        return AnyDim()
    return _simplify(a + b)


def dim_mul(a, b):
    """``a * b`` of two dimensions (see :func:`dim_add`)."""
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, AnyDim) or isinstance(b, AnyDim):
        return AnyDim()
    return _simplify(a * b)


def dim_floordiv(d, k: int, what: str = ""):
    """``d // k`` of a dimension and a positive int ``k``: ints divide, ``Any`` stays ``Any``, a
    symbolic ``d`` (a VM kernel being lowered) gives a simplified floor quotient. With ``what``
    (the message of a type rule that requires ``k`` to divide ``d``) a symbolic ``d`` is also
    checked by the kernel at run time (:func:`require_at_run_time`)."""
    if isinstance(d, int):
        return d // k
    if isinstance(d, AnyDim):
        return AnyDim()
    from tvm import tirx

    if what:
        require_at_run_time(tirx.floormod(as_int64(d), k) == 0, what)
    return _simplify(tirx.floordiv(d, k))


def dim_scale(d, s: float):
    """``floor(d * s + 0.5)`` of a dimension (upsampling's output extent): ``Any`` stays
    ``Any``, a symbolic ``d`` (a VM kernel being lowered) gives the same rounding as an int64
    PrimExpr."""
    if isinstance(d, AnyDim):
        return AnyDim()
    if isinstance(d, int):
        return int(math.floor(d * s + 0.5))
    from tvm import tirx

    scaled = tirx.Cast("float64", as_int64(d)) * float(s) + 0.5
    return tirx.Cast("int64", tirx.floor(scaled))


__all__ += ["dim_add", "dim_mul", "dim_floordiv", "dim_scale"]


def static_value(v, what: str, op_name: str):
    """A Python value of an attribute given as a number, a sequence or a ``relay.const``
    (tvm.relay accepted constants where an attribute was expected).

    Raises:
        RelayError: ``v`` is a non-constant expression (a dynamic attribute, which needs the
            ``dyn`` operators relay_tvm does not provide).
    """
    from ..errors import RelayError
    from ..ir.base import RelayExpr
    from ..ir.expr import Constant

    if isinstance(v, Constant):
        return v.data.numpy().tolist()
    if isinstance(v, RelayExpr):
        raise RelayError(
            f"{op_name}: {what} must be static (numbers or a relay.const); a computed {what} "
            f"(dynamic shapes) is not supported"
        )
    if isinstance(v, (list, tuple)):
        return type(v)(static_value(x, what, op_name) for x in v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def as_tuple_expr(data):
    """A ``Tuple`` from a list/tuple of expressions, or the tuple behind a TupleWrapper."""
    from ..ir.expr import Tuple

    if isinstance(data, TupleWrapper):
        return data.astuple()
    if isinstance(data, (list, tuple)):
        return Tuple(list(data))
    return data


def int_vector_const(v, op_name: str, what: str = "begin/end/strides"):
    """``v`` as a Relay expression: an expression unchanged, an int or a list/tuple of ints as
    an int32 constant vector (int64 where a value does not fit int32), as tvm.relay 0.19's
    ``const(list(v))`` for the arguments beside a computed one. Raises RelayError for values
    that are not integers (a float was truncated to int32 before)."""
    from ..errors import RelayError
    from ..ir.base import RelayExpr
    from ..ir.expr import const

    if v is None or isinstance(v, RelayExpr):
        return v
    vals = np.asarray([v] if isinstance(v, (int, np.integer)) else list(v))
    if vals.size and vals.dtype.kind not in "iu":
        raise RelayError(f"{op_name}: {what} must be integers, got {v!r}")
    wide = vals.size and np.abs(vals).max() >= 2 ** 31
    return const(vals.astype("int64" if wide else "int32"))


__all__ += ["static_value", "as_tuple_expr", "int_vector_const"]


def select_of(exprs):
    """``fcompute(i) = exprs[i]`` (te.compute takes no default arguments)."""
    from tvm import tirx

    def fcompute(i):
        e = exprs[-1]
        for k in range(len(exprs) - 2, -1, -1):
            e = tirx.Select(i == k, exprs[k], e)
        return e

    return fcompute

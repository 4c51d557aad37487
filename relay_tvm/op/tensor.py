"""Elementwise and broadcasting tensor operators (tvm.relay.op.tensor).

Semantics (Relay's, checked against TVM's code generation):

- binary operators broadcast as NumPy does and need one dtype for both operands; no implicit cast;
- integer ``divide`` and ``mod`` (and ``trunc_divide``/``trunc_mod``, for any dtype) truncate toward
  zero (C; TVM's ``truncdiv``/``truncmod``), float ``mod`` is C ``fmod``;
  ``floor_divide``/``floor_mod`` round toward negative infinity (Python);
- integer division is total, as in NumPy: a zero divisor gives a quotient and remainder of 0, and
  ``INT_MIN / -1`` wraps to ``INT_MIN`` (remainder 0), in the interpreter and in compiled code
  (hardware division traps on both; the computes guard the divisor); float division is IEEE-754
  (``x / 0`` is ``±inf`` or ``nan``);
- ``round`` rounds half to even (LLVM ``nearbyint``, as ``np.round``);
- ``power`` of floats is TVM's ``pow`` intrinsic; of integers, NumPy's integer power (wrapping),
  a negative exponent giving C's truncated ``1 / x**-e`` (:mod:`._int_power`);
- comparisons and ``isnan``/``isinf``/``isfinite`` return ``bool``; ``logical_*`` keep the dtype;
- arithmetic, ordering comparisons, ``negative``/``abs``/``sign`` reject ``bool`` operands at type
  inference (TVM generates no code for them; use the logical operators or a cast).

TE computes are topi's (``topi.<name>``); NumPy kernels are the reference.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import (
    broadcast_inputs,
    broadcast_rel,
    dtype_kinds,
    identity_rel,
    named,
    out_dims,
    shape_str,
    tensor_args,
)
from ._ieee import broadcast as ieee_broadcast
from ._ieee import elementwise as ieee_elementwise
from ._ieee import is_float, nan_max, nan_min, np_maximum, np_minimum, opaque, to_bool
from ._int_power import int_power, np_int_power
from .registry import OpPattern, make_call, register_gradient, register_op

_FLOAT = ("float", "bfloat")
_INT = ("int", "uint")
_INT_BOOL = ("int", "uint", "bool")
_NUM = ("int", "uint", "float", "bfloat")  # arithmetic: TVM cannot generate it for bool
# the logical operators: TVM's And / Or / Not take bool operands only (float32 / int32 ones
# type-checked and then failed to build; compare with 0 first, as the MXNet importer does)
_BOOL = ("bool",)


def _np_trunc_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        q = np.floor_divide(a, b)
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return (q + fix).astype(a.dtype)
    return np.divide(a, b).astype(a.dtype)


def _np_floor_div(a, b):
    if np.issubdtype(a.dtype, np.integer):
        return np.floor_divide(a, b).astype(a.dtype)
    return np.floor(np.divide(a, b)).astype(a.dtype)


def _np_power(a, b):
    if np.issubdtype(a.dtype, np.integer):
        return np_int_power(a, b)
    return np.power(a, b)


# float arithmetic whose real-number identities TVM's simplifier would apply
# (x == x, x <= x and x >= x are false for NaN; x != x is true; x + 0.0 is +0.0 for x = -0.0,
# but TVM folds an inlined x + 0.0 to x)
_IEEE_ARITH = {"add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide", "mod",
               "floor_mod", "equal", "not_equal", "less_equal", "greater_equal"}


def _float_not_equal(a, b, out_dtype, dtype):
    """not (a == b): LLVM's ordered a != b is false when either is NaN; numpy's is true."""
    from tvm import tirx

    return tirx.Select(a == b, tirx.const(False, "bool"), tirx.const(True, "bool"))


def _float_floor_mod(a, b, out_dtype, dtype):
    """numpy.mod on floats (its npy_divmod): r = fmod(a, b), moved by b when the signs of r and
    b differ, a zero taking b's sign; topi's a - floor(a/b)*b gives NaN for an infinite b.
    Half types compute in float32 and round once, as numpy's npy_half_divmod does (LLVM has no
    half copysign and the C target no half fmod)."""
    from tvm import tirx

    if dtype not in ("float32", "float64"):
        wide = _float_floor_mod(tirx.Cast("float32", a), tirx.Cast("float32", b), "float32",
                                "float32")
        return tirx.Cast(dtype, wide)
    from ._ieee import _let

    zero = tirx.const(0, dtype)

    def body(r, b):
        differ = tirx.Select(b < zero, r > zero, r < zero)  # b == 0: r is NaN either way
        return tirx.Select(r == zero, tirx.copysign(zero, b), tirx.Select(differ, r + b, r))

    # fmod bound once through _ieee's bit-cast let (a plain Let of a vectorized cast from bool
    # failed in TVM's codegen: fuzz seed 7294031, program 1995, floor_mod(cast(equal(x, x)), c))
    return _let([tirx.truncmod(a, b), b], dtype, body)  # LLVM frem: C fmod


_IEEE_BINARY = {"not_equal": _float_not_equal, "floor_mod": _float_floor_mod}

_INT_DIVISION = ("divide", "floor_divide", "trunc_divide", "mod", "floor_mod")


def _guarded_int_division(name, a, b):
    """``topi.<name>(a, b)`` on integers, defined everywhere as NumPy defines it: a zero divisor
    gives 0 and ``INT_MIN / -1`` wraps to ``INT_MIN`` (its remainder is 0). Hardware division
    traps (SIGFPE) on both, so there the divisor becomes 1 (and, for a zero divisor, the
    dividend 0): ``0 / 1 = 0 % 1 = 0`` and ``INT_MIN / 1 = INT_MIN``, ``INT_MIN % 1 = 0``.

    Both operands are guarded instead of selecting 0 after the division: LLVM folds
    ``select(b == 0, 0, a / select(b == 0, 1, b))`` back into ``a / b`` (seen for uint8)."""
    from tvm import te, tirx, topi

    dt = str(a.dtype)

    def scalar(v):
        return te.compute((), lambda: tirx.const(v, dt), name=f"{name}_const")

    zero = topi.equal(b, tirx.const(0, dt))
    bad = zero
    if dt.startswith("int"):
        # a == INT_MIN written as a < INT_MIN + 1: TVM 0.27's simplifier folds x == INT_MIN to
        # False (an overflow in its rewrite of x == c)
        overflow = topi.logical_and(topi.less(a, tirx.const(-(1 << (int(dt[3:]) - 1)) + 1, dt)),
                                    topi.equal(b, tirx.const(-1, dt)))
        bad = topi.logical_or(zero, overflow)
    op = "divide" if name == "trunc_divide" else name
    return getattr(topi, op)(topi.where(zero, scalar(0), a), topi.where(bad, scalar(1), b))


def _guarded_shift(name, a, b):
    """``left_shift`` / ``right_shift`` defined for every shift count, as NumPy defines them: a
    count outside ``[0, bits)`` shifts everything out (0, or -1 for a negative value shifted
    right). The machine instruction takes the count modulo the width and LLVM calls such a
    shift poison (uint8 250 << 250 gave 232 compiled, 0 in the interpreter; fresh-user
    trial), so the count is guarded before the shift."""
    from tvm import te, tirx, topi

    dt = str(a.dtype)
    bits = int(dt.lstrip("uint"))

    def scalar(v):
        return te.compute((), lambda: tirx.const(v, dt), name=f"{name}_const")

    out_of_range = topi.greater_equal(b, tirx.const(bits, dt))
    if dt.startswith("int"):
        out_of_range = topi.logical_or(out_of_range, topi.less(b, tirx.const(0, dt)))
    shifted = getattr(topi, name)(a, topi.where(out_of_range, scalar(0), b))
    if name == "right_shift" and dt.startswith("int"):
        fill = topi.where(topi.less(a, tirx.const(0, dt)), scalar(-1), scalar(0))
    else:
        fill = scalar(0)
    return topi.where(out_of_range, fill, shifted)


def _is_input(t) -> bool:
    """``t`` is a kernel input (a placeholder), whose value TVM cannot know."""
    from tvm import te

    return isinstance(t.op, te.PlaceholderOp)


def _dynamic(inputs) -> bool:
    from tvm import tirx

    return any(not isinstance(d, tirx.IntImm) for t in inputs for d in t.shape)


def _topi(name):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        if len(inputs) == 2 and _dynamic(inputs):
            inputs = broadcast_inputs(inputs, out_type.shape)
        if name in _IEEE_ARITH and is_float(inputs[0].dtype):
            # keep TVM from folding x-x, x/x, x*0, x/0, x==x, x+0: an opaque rhs (lhs too for the
            # commutative x*y, x+y) makes the operands differ syntactically and hides constants
            if name == "add":
                # only x + 0.0 folds here (to x, wrong for x = -0.0), and a kernel input is never
                # a literal: ResNet's residual and bias adds of inputs keep their TIR
                inputs = [t if _is_input(t) else opaque(t) for t in inputs]
            else:
                lhs = opaque(inputs[0]) if name == "multiply" else inputs[0]
                inputs = [lhs, opaque(inputs[1])]
        if name == "power" and str(inputs[0].dtype).startswith(("int", "uint")):
            return int_power(*inputs, out_dims(out_type.shape), out_type.dtype)
        if name in _INT_DIVISION and str(inputs[0].dtype).startswith(("int", "uint")):
            return _guarded_int_division(name, *inputs)
        if name in ("left_shift", "right_shift"):
            return _guarded_shift(name, *inputs)
        if name == "trunc_divide":  # topi.divide truncates integers; floats are truncated here
            q = topi.divide(*inputs)
            return q if out_type.dtype.startswith(("int", "uint")) else topi.trunc(q)
        if name in _IEEE_BINARY and is_float(inputs[0].dtype):
            return ieee_broadcast(lambda a, b: _IEEE_BINARY[name](a, b, out_type.dtype,
                                                                  inputs[0].dtype),
                                  *inputs, out_type.shape, name)
        if name in ("maximum", "minimum") and is_float(inputs[0].dtype):
            # topi.maximum/minimum drop NaN; numpy.maximum/minimum propagate it
            fn = nan_max if name == "maximum" else nan_min
            return ieee_broadcast(lambda a, b: fn(a, b, out_type.dtype), *inputs,
                                  out_type.shape, name)
        if name in ("negative", "sign") and str(inputs[0].dtype).startswith("uint"):
            # topi writes -x and x < 0 ? -1 : ..., constants an unsigned type cannot hold
            # (a BuildError); NumPy's values: -x wraps modulo 2^bits, the sign is 0 or 1
            from tvm import te, tirx

            x = inputs[0]
            zero, one = tirx.const(0, x.dtype), tirx.const(1, x.dtype)
            if name == "negative":
                # ~x + 1: TVM's simplifier folded 0 - x to 0 for uint32
                return te.compute(x.shape, lambda *i: (~x(*i)) + one, name="negative")
            return te.compute(x.shape, lambda *i: tirx.Select(x(*i) > zero, one, zero),
                              name="sign")
        if name in ("equal", "not_equal") and inputs[0].dtype == "bool":
            # TVM 0.27's LLVM codegen emits a float compare for 1-bit operands; compare as int8.
            inputs = [topi.cast(t, "int8") for t in inputs]
        return getattr(topi, name)(*inputs)

    return compute


def _sinh(x):
    from tvm import topi

    return topi.multiply(topi.subtract(topi.exp(x), topi.exp(topi.negative(x))), 0.5)


def _cosh(x):
    from tvm import topi

    return topi.multiply(topi.add(topi.exp(x), topi.exp(topi.negative(x))), 0.5)


def _via_float32(name):
    """Kernels whose TIR intrinsic LLVM cannot lower for float16 (erf, the inverse trig and
    hyperbolic functions) compute in float32 and cast back; ``sinh``/``cosh`` have no LLVM
    lowering at all and are written with ``exp``."""

    def compute(attrs, inputs, out_type):
        from tvm import topi

        fn = {"sinh": _sinh, "cosh": _cosh}.get(name) or getattr(topi, name)
        x = inputs[0]
        if x.dtype == "float16":
            return topi.cast(fn(topi.cast(x, "float32")), "float16")
        return fn(x)

    return compute


def _ieee(fn):
    """The NumPy kernel as a reference kernel; IEEE results (inf, nan) are wanted, not warned
    about."""

    def ref(args, attrs, out_type):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*args)).astype(out_type.dtype, copy=False)

    return ref


def _binary_rel(name, out_dtype, dtypes):
    base = broadcast_rel(name, out_dtype)
    if dtypes is None:
        return base

    def rel(types, attrs):
        ts = tensor_args(types, ("lhs", "rhs"), name)
        if ts is None:
            return None
        if not ts[0].dtype.startswith(dtypes):
            raise TypeInferenceError(
                f"{name}: lhs has dtype {ts[0].dtype}, expected {dtype_kinds(dtypes)} dtype"
            )
        return base(types, attrs)

    return rel


# (relay name, numpy kernel, topi function, output dtype override, accepted dtype prefixes)
_BINARY = [
    ("add", np.add, "add", None, _NUM),
    ("subtract", np.subtract, "subtract", None, _NUM),
    ("multiply", np.multiply, "multiply", None, _NUM),
    ("divide", _np_trunc_div, "divide", None, _NUM),
    ("floor_divide", _np_floor_div, "floor_divide", None, _NUM),
    (
        "trunc_divide",
        lambda a, b: _np_trunc_div(a, b) if a.dtype.kind in "iu" else np.trunc(a / b),
        "trunc_divide",
        None,
        _NUM,
    ),
    ("mod", np.fmod, "mod", None, _NUM),
    ("trunc_mod", np.fmod, "mod", None, _NUM),
    ("floor_mod", np.mod, "floor_mod", None, _NUM),
    # integers too, as 0.19's broadcast relation took them (see _int_power for the semantics)
    ("power", _np_power, "power", None, _NUM),
    ("maximum", np_maximum, "maximum", None, _NUM),  # NaN propagates, -0 < +0 (IEEE 754-2019)
    ("minimum", np_minimum, "minimum", None, _NUM),
    ("equal", np.equal, "equal", "bool", None),
    ("not_equal", np.not_equal, "not_equal", "bool", None),
    ("less", np.less, "less", "bool", _NUM),
    ("less_equal", np.less_equal, "less_equal", "bool", _NUM),
    ("greater", np.greater, "greater", "bool", _NUM),
    ("greater_equal", np.greater_equal, "greater_equal", "bool", _NUM),
    ("logical_and", np.logical_and, "logical_and", None, _BOOL),
    ("logical_or", np.logical_or, "logical_or", None, _BOOL),
    ("logical_xor", np.logical_xor, "logical_xor", None, _BOOL),
    ("bitwise_and", np.bitwise_and, "bitwise_and", None, _INT_BOOL),
    ("bitwise_or", np.bitwise_or, "bitwise_or", None, _INT_BOOL),
    ("bitwise_xor", np.bitwise_xor, "bitwise_xor", None, _INT_BOOL),
    ("left_shift", np.left_shift, "left_shift", None, _INT),
    ("right_shift", np.right_shift, "right_shift", None, _INT),
]

_DIVISION_DOC = (" On integers a zero divisor gives 0 and INT_MIN / -1 wraps to INT_MIN (NumPy's"
                 " semantics; remainder 0); on floats division is IEEE-754.")

for _name, _np_fn, _topi_name, _out, _dts in _BINARY:
    register_op(
        _name,
        batch_rows=True,
        num_inputs=2,
        arguments=("lhs", "rhs"),
        rel=_binary_rel(_name, _out, _dts),
        ref=_ieee(_np_fn),
        compute=_topi(_topi_name),
        pattern=OpPattern.BROADCAST,
        doc=f"Elementwise {_name} with NumPy broadcasting (topi.{_topi_name})."
        + (_DIVISION_DOC if _topi_name in _INT_DIVISION else ""),
        level=1,
    )


def _erf(x):
    from math import erf

    if not x.size:
        return x.copy()
    return np.vectorize(erf, otypes=["float64"])(x.astype("float64"))


# (relay name, numpy kernel, TE compute, accepted dtype prefixes)
_UNARY = [
    ("negative", np.negative, _topi("negative"), _NUM),
    ("abs", np.abs, _topi("abs"), _NUM),
    ("sign", np.sign, _topi("sign"), _NUM),
    ("exp", np.exp, _topi("exp"), _FLOAT),
    ("fast_exp", np.exp, _topi("fast_exp"), _FLOAT),
    ("log", np.log, _topi("log"), _FLOAT),
    ("log2", np.log2, _topi("log2"), _FLOAT),
    ("log10", np.log10, _topi("log10"), _FLOAT),
    ("sqrt", np.sqrt, _topi("sqrt"), _FLOAT),
    ("rsqrt", lambda x: 1 / np.sqrt(x), _topi("rsqrt"), _FLOAT),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), _topi("sigmoid"), _FLOAT),
    ("tanh", np.tanh, _topi("tanh"), _FLOAT),
    ("fast_tanh", np.tanh, _topi("fast_tanh"), _FLOAT),
    ("erf", _erf, _via_float32("erf"), _FLOAT),
    ("fast_erf", _erf, _topi("fast_erf"), _FLOAT),
    ("floor", np.floor, _topi("floor"), _FLOAT),
    ("ceil", np.ceil, _topi("ceil"), _FLOAT),
    ("round", np.round, _topi("round"), _FLOAT),
    ("trunc", np.trunc, _topi("trunc"), _FLOAT),
    ("sin", np.sin, _topi("sin"), _FLOAT),
    ("cos", np.cos, _topi("cos"), _FLOAT),
    ("tan", np.tan, _via_float32("tan"), _FLOAT),
    ("asin", np.arcsin, _via_float32("asin"), _FLOAT),
    ("acos", np.arccos, _via_float32("acos"), _FLOAT),
    ("atan", np.arctan, _via_float32("atan"), _FLOAT),
    ("sinh", np.sinh, _via_float32("sinh"), _FLOAT),
    ("cosh", np.cosh, _via_float32("cosh"), _FLOAT),
    ("asinh", np.arcsinh, _via_float32("asinh"), _FLOAT),
    ("acosh", np.arccosh, _via_float32("acosh"), _FLOAT),
    ("atanh", np.arctanh, _via_float32("atanh"), _FLOAT),
    ("logical_not", np.logical_not, _topi("logical_not"), _BOOL),
    ("bitwise_not", np.invert, _topi("bitwise_not"), _INT_BOOL),
    ("copy", np.copy, _topi("identity"), None),
    ("isnan", np.isnan, _topi("isnan"), _FLOAT),
    ("isinf", np.isinf, _topi("isinf"), _FLOAT),
    ("isfinite", np.isfinite, _topi("isfinite"), _FLOAT),
]

_BOOL_OUT = {"isnan", "isinf", "isfinite"}
# tvm.relay 0.19's support levels of the rounding / sign operators (the rest are level 1)
_LEVEL3 = {"ceil", "floor", "trunc", "round", "abs", "negative"}


def _bool_rel(base):
    def rel(types, attrs):
        t = base(types, attrs)
        return None if t is None else TensorType(t.shape, "bool")

    return rel


for _name, _np_fn, _compute, _dts in _UNARY:
    _rel = identity_rel(_name, _dts)
    register_op(
        _name,
        batch_rows=True,
        num_inputs=1,
        arguments=("data",),
        rel=_bool_rel(_rel) if _name in _BOOL_OUT else _rel,
        ref=_ieee(_np_fn),
        compute=_compute,
        pattern=OpPattern.ELEMWISE,
        doc=f"Elementwise {_name}; the output has the input's shape and dtype.",
        level=3 if _name in _LEVEL3 else 1,
    )


# ---- clip --------------------------------------------------------------------------------------


def _clip_ref(args, attrs, out_type):
    x = args[0]
    lo, hi = attrs.a_min, attrs.a_max
    if np.issubdtype(x.dtype, np.integer):  # topi casts the bounds to the data dtype
        lo, hi = int(lo), int(hi)
    if x.dtype.kind == "f":  # max then min, NaN-propagating, -0 < +0: the compiled order
        lo_, hi_ = np.asarray(lo, x.dtype), np.asarray(hi, x.dtype)
        return np_minimum(np_maximum(x, lo_), hi_).astype(x.dtype)
    return np.clip(x, lo, hi).astype(x.dtype)


def _clip_compute(attrs, inputs, out_type):
    from tvm import tirx, topi

    x = inputs[0]
    if not is_float(x.dtype):
        return topi.clip(x, attrs.a_min, attrs.a_max)
    lo, hi = tirx.const(attrs.a_min, x.dtype), tirx.const(attrs.a_max, x.dtype)
    return ieee_elementwise(lambda v: nan_min(nan_max(v, lo, x.dtype), hi, x.dtype), x, "clip")


register_op(
    "clip",
    batch_rows=True,
    num_inputs=1,
    arguments=("a",),
    attrs=("relay.attrs.ClipAttrs", [F("a_min", "float"), F("a_max", "float")]),
    rel=identity_rel("clip"),
    ref=_clip_ref,
    compute=_clip_compute,
    pattern=OpPattern.ELEMWISE,
    doc="Clamp to [a_min, a_max] (numpy.clip: NaN stays NaN; the bounds are cast to the data "
    "dtype as topi.clip does).",
    level=3,
)


def clip(a, a_min, a_max):
    """Clamp the elements of ``a`` to ``[a_min, a_max]`` (same shape and dtype; topi.clip)."""
    return make_call("clip", [a], a_min=a_min, a_max=a_max)


# ---- where -------------------------------------------------------------------------------------


def _where_rel(types, attrs):
    ts = tensor_args(types, ("condition", "x", "y"), "where")
    if ts is None:
        return None
    from ._common import broadcast_shapes, same_dtype

    dtype = same_dtype(ts[1:], ("x", "y"), "where")
    shape = broadcast_shapes(ts[0].shape, ts[1].shape, "where condition and x")
    shape = broadcast_shapes(shape, ts[2].shape, "where condition/x and y")
    return TensorType(shape, dtype)


def _where_compute(attrs, inputs, out_type):
    from tvm import topi

    if _dynamic(inputs):  # an Any size of 1 at run time reads its row 0 (NumPy broadcasting)
        inputs = broadcast_inputs(inputs, out_type.shape)
    return topi.where(
        to_bool(inputs[0]), *inputs[1:])


register_op(
    "where",
    batch_rows=True,
    num_inputs=3,
    arguments=("condition", "x", "y"),
    rel=_where_rel,
    ref=lambda args, attrs, out_type: np.where(args[0].astype(bool), args[1], args[2]),
    # a non-bool condition is "nonzero" (tvm.relay's WhereRel takes any dtype; numpy's
    # astype(bool)): NaN is true, which topi.where's ordered c != 0 would make false
    compute=_where_compute,
    pattern=OpPattern.BROADCAST,
    doc="Select x where condition is nonzero, else y; all three broadcast (topi.where).",
    level=4,
)


def where(condition, x, y):
    """Elements of ``x`` where ``condition`` is true (nonzero), else of ``y``.

    The three shapes broadcast as NumPy's; ``x`` and ``y`` need one dtype, the result's. A NaN
    condition is unspecified (compiled code reads it as false).

    Raises:
        TypeInferenceError: the shapes do not broadcast or x and y differ in dtype.
    """
    return make_call("where", [condition, x, y])


# ---- initializers: zeros, ones, full and their _like forms ---------------------------------------

_INIT_ATTRS = ("relay.attrs.InitOpAttrs", [F("shape", "ints?", None), F("dtype", "dtype", "")])


def _init_rel(name):
    def rel(types, attrs):
        return TensorType(attrs.shape or (), attrs.dtype or "float32")

    return rel


def _fill_compute(value):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        return topi.full(out_dims(out_type.shape), out_type.dtype, value)

    return compute


for _name, _value in (("zeros", 0), ("ones", 1)):
    register_op(
        _name,
        batch_rows=True,
        num_inputs=0,
        attrs=_INIT_ATTRS,
        rel=_init_rel(_name),
        ref=(
            lambda v: (
                lambda args, attrs, out_type: np.full(out_type.concrete_shape, v, out_type.dtype)
            )
        )(_value),
        compute=_fill_compute(_value),
        pattern=OpPattern.ELEMWISE,
        doc=f"A tensor of {_name} of the given shape and dtype (topi.full).",
        level=3,
    )


def zeros(shape, dtype):
    """A tensor of zeros of ``shape`` and ``dtype`` (a computed ``shape``: ``dyn.zeros``)."""
    from . import dyn

    if dyn.is_dynamic_arg(shape):
        return dyn.zeros(shape, dtype)
    return make_call("zeros", [], shape=_shape_attr(shape), dtype=dtype)


def ones(shape, dtype):
    """A tensor of ones of ``shape`` and ``dtype`` (a computed ``shape``: ``dyn.ones``)."""
    from . import dyn

    if dyn.is_dynamic_arg(shape):
        return dyn.ones(shape, dtype)
    return make_call("ones", [], shape=_shape_attr(shape), dtype=dtype)


def _shape_attr(shape):
    from ._common import static_value

    shape = static_value(shape, "shape", "zeros/ones/full")
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(shape)


def _full_rel(types, attrs):
    ts = tensor_args(types, ("fill_value",), "full")
    if ts is None:
        return None
    if ts[0].ndim != 0:
        raise TypeInferenceError(
            f"full: fill_value must be a scalar (0-d tensor), got shape {shape_str(ts[0].shape)}"
        )
    return TensorType(attrs.shape or (), attrs.dtype or ts[0].dtype)


def _fill_from_scalar(attrs, inputs, out_type):
    from tvm import te

    fill = inputs[-1]
    return te.compute(
        out_dims(out_type.shape), lambda *i: fill().astype(out_type.dtype), name="full"
    )


register_op(
    "full",
    num_inputs=1,
    arguments=("fill_value",),
    attrs=_INIT_ATTRS,
    rel=_full_rel,
    ref=lambda args, attrs, out_type: np.full(out_type.concrete_shape, args[0], out_type.dtype),
    compute=_fill_from_scalar,
    pattern=OpPattern.ELEMWISE,
    doc="A tensor of the given shape filled with a scalar; dtype defaults to the scalar's.",
    level=3,
)


def full(fill_value, shape=(), dtype=""):
    """A tensor of ``shape`` filled with the 0-d tensor ``fill_value``.

    Args:
        fill_value: a 0-d tensor expression.
        shape: the output shape.
        dtype: the output dtype; ``""`` takes fill_value's.
    """
    if isinstance(fill_value, (bool, int, float, np.generic)):
        from ..ir.expr import const

        fill_value = const(fill_value, dtype or None)
    from . import dyn

    if dyn.is_dynamic_arg(shape):
        return dyn.full(fill_value, shape, dtype)
    return make_call("full", [fill_value], shape=_shape_attr(shape), dtype=dtype)


for _name, _value in (("zeros_like", 0), ("ones_like", 1)):
    register_op(
        _name,
        batch_rows=True,
        num_inputs=1,
        arguments=("data",),
        rel=identity_rel(_name),
        ref=(lambda v: lambda args, attrs, out_type: np.full(args[0].shape, v, out_type.dtype))(
            _value
        ),
        compute=_fill_compute(_value),
        pattern=OpPattern.ELEMWISE,
        doc=f"A tensor of {_name[:-5]} with the shape and dtype of data.",
        level=3,
    )


def zeros_like(data):
    """Zeros with the shape and dtype of ``data``."""
    return make_call("zeros_like", [data])


def ones_like(data):
    """Ones with the shape and dtype of ``data``."""
    return make_call("ones_like", [data])


def _full_like_rel(types, attrs):
    ts = tensor_args(types, ("data", "fill_value"), "full_like")
    if ts is None:
        return None
    if ts[1].ndim != 0:
        raise TypeInferenceError(
            f"full_like: fill_value must be a scalar (0-d tensor), got shape "
            f"{shape_str(ts[1].shape)}"
        )
    return ts[0]


register_op(
    "full_like",
    batch_rows=True,
    num_inputs=2,
    arguments=("data", "fill_value"),
    rel=_full_like_rel,
    ref=lambda args, attrs, out_type: np.full(args[0].shape, args[1], out_type.dtype),
    compute=_fill_from_scalar,
    pattern=OpPattern.ELEMWISE,
    doc="A tensor with data's shape and dtype filled with the scalar fill_value.",
    level=3,
)


def full_like(data, fill_value):
    """``data``'s shape and dtype filled with the 0-d tensor ``fill_value``."""
    return make_call("full_like", [data, fill_value])


# ---- constructors of the tables (tvm.relay names) ----------------------------------------------


def _binary_ctor(name):
    def ctor(lhs, rhs):
        return make_call(name, [lhs, rhs])

    named(ctor, name)
    division = name in _INT_DIVISION or name == "trunc_mod"
    ctor.__doc__ = (
        f"Elementwise ``{name}`` with NumPy broadcasting; both operands of one dtype.\n\n"
        + (f"{_DIVISION_DOC.strip()} The compiled code agrees (it never traps).\n\n"
           if division else "")
        + "Raises TypeInferenceError (at type inference) when the shapes do not broadcast or the "
        "dtypes differ."
    )
    return ctor


def _unary_ctor(name):
    def ctor(data):
        return make_call(name, [data])

    named(ctor, name)
    ctor.__doc__ = f"Elementwise ``{name}``; the output has the input's shape."
    return ctor


# the elementwise operators defined on floating-point tensors only (a frontend whose framework
# runs them on integers converts around them: see frontend/_mx_tensor.py)
FLOAT_ONLY = frozenset(n for n, *_, d in _BINARY + _UNARY if d == _FLOAT)

_g = globals()
for _name, *_ in _BINARY:
    _g[_name] = _binary_ctor(_name)
for _name, *_ in _UNARY:
    _g[_name] = _unary_ctor(_name)


__all__ = (
    [n for n, *_ in _BINARY]
    + [n for n, *_ in _UNARY]
    + ["clip", "where", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like"]
    + ["tensor_args"]
)


# ---- gradients (FPrimalGradient: grad(orig_call, output_grad) -> one gradient per argument) ---
# Binary operators broadcast, so each operand's gradient is summed back to its own shape with
# collapse_sum_like. Rules use the arguments' checked types (the call is type-checked first).


class _Calls:
    """``_r.multiply(a, b)``: calls of operators whose constructors this module makes in a loop."""

    def __getattr__(self, name):
        return lambda *args: make_call(name, list(args))


_r = _Calls()


def _c(value, like):
    from ..ir.expr import const

    return const(value, like.checked_type.dtype)


def _collapse(g, like):
    from .shape_ops import collapse_sum_like

    return collapse_sum_like(g, like)


def _unary_grad(rule):
    def grad(orig, g):
        return [_r.multiply(g, rule(orig.args[0], orig))]

    return grad


_UNARY_GRADS = {
    "negative": lambda x, y: _r.negative(ones_like(x)),
    "exp": lambda x, y: y,
    "log": lambda x, y: _r.divide(ones_like(x), x),
    "log2": lambda x, y: _r.divide(ones_like(x), _r.multiply(x, _c(np.log(2.0), x))),
    "log10": lambda x, y: _r.divide(ones_like(x), _r.multiply(x, _c(np.log(10.0), x))),
    "sqrt": lambda x, y: _r.divide(_c(0.5, x), y),
    "rsqrt": lambda x, y: _r.multiply(_c(-0.5, x), _r.divide(y, x)),
    "sigmoid": lambda x, y: _r.multiply(y, _r.subtract(ones_like(y), y)),
    "tanh": lambda x, y: _r.subtract(ones_like(y), _r.multiply(y, y)),
    "erf": lambda x, y: _r.multiply(
        _c(2.0 / np.sqrt(np.pi), x), _r.exp(_r.negative(_r.multiply(x, x)))
    ),
    "abs": lambda x, y: _r.sign(x),
    "sin": lambda x, y: _r.cos(x),
    "cos": lambda x, y: _r.negative(_r.sin(x)),
    "tan": lambda x, y: _r.divide(ones_like(x), _r.multiply(_r.cos(x), _r.cos(x))),
    "sinh": lambda x, y: _r.cosh(x),
    "cosh": lambda x, y: _r.sinh(x),
    "asin": lambda x, y: _r.divide(
        ones_like(x), _r.sqrt(_r.subtract(ones_like(x), _r.multiply(x, x)))
    ),
    "acos": lambda x, y: _r.negative(
        _r.divide(ones_like(x), _r.sqrt(_r.subtract(ones_like(x), _r.multiply(x, x))))
    ),
    "atan": lambda x, y: _r.divide(ones_like(x), _r.add(ones_like(x), _r.multiply(x, x))),
    "asinh": lambda x, y: _r.divide(ones_like(x), _r.sqrt(_r.add(_r.multiply(x, x), ones_like(x)))),
    "acosh": lambda x, y: _r.divide(
        ones_like(x), _r.sqrt(_r.subtract(_r.multiply(x, x), ones_like(x)))
    ),
    "atanh": lambda x, y: _r.divide(ones_like(x), _r.subtract(ones_like(x), _r.multiply(x, x))),
    "copy": lambda x, y: ones_like(x),
}
for _name, _rule in _UNARY_GRADS.items():
    register_gradient(_name, _unary_grad(_rule))

# piecewise constant: zero gradient almost everywhere
for _name in ("floor", "ceil", "round", "trunc", "sign", "zeros_like", "ones_like"):
    register_gradient(_name, lambda orig, g: [zeros_like(orig.args[0])])
for _name, *_ in _BINARY:
    if _name.startswith(
        (
            "equal",
            "not_equal",
            "less",
            "greater",
            "logical",
            "bitwise",
            "left",
            "right",
            "floor_",
            "trunc_",
            "mod",
        )
    ):
        register_gradient(_name, lambda orig, g: [zeros_like(a) for a in orig.args])
for _name in ("zeros", "ones"):
    register_gradient(_name, lambda orig, g: [])


@register_gradient("add")
def _add_grad(orig, g):
    return [_collapse(g, orig.args[0]), _collapse(g, orig.args[1])]


@register_gradient("subtract")
def _subtract_grad(orig, g):
    return [_collapse(g, orig.args[0]), _collapse(_r.negative(g), orig.args[1])]


@register_gradient("multiply")
def _multiply_grad(orig, g):
    x, y = orig.args
    return [_collapse(_r.multiply(g, y), x), _collapse(_r.multiply(g, x), y)]


@register_gradient("divide")
def _divide_grad(orig, g):
    x, y = orig.args
    return [
        _collapse(_r.divide(g, y), x),
        _collapse(_r.negative(_r.divide(_r.multiply(g, orig), y)), y),
    ]


@register_gradient("power")
def _power_grad(orig, g):
    x, y = orig.args
    dx = _r.multiply(y, _r.power(x, _r.subtract(y, ones_like(y))))
    dy = _r.multiply(orig, _r.log(x))
    return [_collapse(_r.multiply(g, dx), x), _collapse(_r.multiply(g, dy), y)]


def _select_grad(pick_lhs):
    def grad(orig, g):
        x, y = orig.args
        mask = pick_lhs(x, y)
        zero = zeros_like(g)
        return [_collapse(where(mask, g, zero), x), _collapse(where(mask, zero, g), y)]

    return grad


register_gradient("maximum", _select_grad(_r.greater_equal))
register_gradient("minimum", _select_grad(_r.less_equal))


@register_gradient("clip")
def _clip_grad(orig, g):
    x = orig.args[0]
    inside = _r.logical_and(
        _r.greater_equal(x, _c(orig.attrs.a_min, x)), _r.less_equal(x, _c(orig.attrs.a_max, x))
    )
    return [where(inside, g, zeros_like(g))]


@register_gradient("where")
def _where_grad(orig, g):
    c, x, y = orig.args
    zero = zeros_like(g)
    return [zeros_like(c), _collapse(where(c, g, zero), x), _collapse(where(c, zero, g), y)]


@register_gradient("full")
def _full_grad(orig, g):
    from .reduce import sum as _sum

    return [_sum(g)]


@register_gradient("full_like")
def _full_like_grad(orig, g):
    from .reduce import sum as _sum

    return [zeros_like(orig.args[0]), _sum(g)]

"""MXNet converters: special functions (gamma, gammaln, hypot), MXNet's modulo, and the NumPy
interface's (``npx.set_np()``) true division, scalar comparisons and reductions.

Semantics and dtypes follow the MXNet 1.9.1 operator documentation and, where it is silent,
MXNet 1.9.1's measured output (values and dtypes, in a bound graph); each converter takes
``(inputs, attrs: StrAttrs, ctx: Ctx)`` and returns a Relay expression.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.expr import const
from ._mx_tensor import _binary, _math, _mx_dtype, _scalar_of, _scalar_op
from ._mx_util import R

# ---- gamma and gammaln: Lanczos approximation in float64 ----

# Lanczos coefficients for g = 7, n = 9 (Godfrey's; relative error below 2e-15 in double
# precision for arguments >= 0.5, Numerical Recipes 3rd ed. section 6.1).
_LANCZOS_G = 7.0
_LANCZOS_P = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
              771.32342877765313, -176.61502916214059, 12.507343278686905,
              -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _f64(v):
    return const(np.float64(v), "float64")


def _lanczos(y):
    """``(log_t_term, a)`` with ``Gamma(y) = exp(log_t_term) * sqrt(2 pi) * a`` for float64
    ``y >= 0.5``: ``log_t_term = (y - 0.5) log(t) - t``, ``t = y + g - 0.5``."""
    z = R("subtract")(y, _f64(1.0))
    a = _f64(_LANCZOS_P[0])
    for i, p in enumerate(_LANCZOS_P[1:], start=1):
        a = R("add")(a, R("divide")(_f64(p), R("add")(z, _f64(i))))
    t = R("add")(z, _f64(_LANCZOS_G + 0.5))
    term = R("subtract")(R("multiply")(R("add")(z, _f64(0.5)), R("log")(t)), t)
    return term, a


def _reflection_parts(x):
    """``(small, y, sin_pi_x, pole)`` for float64 ``x``: ``small`` where ``x < 0.5`` (the
    reflection ``Gamma(x) Gamma(1 - x) = pi / sin(pi x)`` applies), ``y`` the argument >= 0.5
    the Lanczos sum is taken at, ``sin(pi x)`` computed on ``x`` reduced modulo 2 (exact in
    float64, so large negative ``x`` keeps its sign pattern), ``pole`` at 0, -1, -2, ..."""
    small = R("less")(x, _f64(0.5))
    y = R("where")(small, R("subtract")(_f64(1.0), x), x)
    r = R("subtract")(x, R("multiply")(_f64(2.0), R("floor")(R("divide")(x, _f64(2.0)))))
    sin_pi_x = R("sin")(R("multiply")(_f64(np.pi), r))
    pole = R("logical_and")(R("less_equal")(x, _f64(0.0)), R("equal")(x, R("floor")(x)))
    return small, y, sin_pi_x, pole


def _gamma_f64(x):
    """Gamma of float64 ``x`` as C's ``tgamma`` (MXNet's ``gamma``): ``inf`` at 0 and +inf,
    NaN at the negative integers and -inf, the reflection formula below 0.5."""
    small, y, sin_pi_x, pole = _reflection_parts(x)
    term, a = _lanczos(y)
    g = R("multiply")(R("exp")(term), R("multiply")(_f64(np.sqrt(2.0 * np.pi)), a))
    refl = R("divide")(_f64(np.pi), R("multiply")(sin_pi_x, g))
    out = R("where")(small, refl, g)
    # positive integers up to 171 exactly, (x - 1)! from a table, as C's tgamma: the Lanczos
    # sum is ~1e-15 off there, and MXNet truncates integer results (gamma(5) = 23.99... -> 23)
    table = const(np.array([math.factorial(k) for k in range(171)], "float64"), "float64")
    idx = R("cast")(R("clip")(R("subtract")(x, _f64(1.0)), 0.0, 170.0), "int32")
    exact = R("logical_and")(R("equal")(x, R("floor")(x)),
                             R("logical_and")(R("greater_equal")(x, _f64(1.0)),
                                              R("less_equal")(x, _f64(171.0))))
    out = R("where")(exact, R("take")(table, idx, axis=0, mode="clip"), out)
    inf, nan = _f64(np.inf), _f64(np.nan)
    out = R("where")(pole, R("where")(R("equal")(x, _f64(0.0)), inf, nan), out)
    return R("where")(R("equal")(x, inf), inf, out)


def _gammaln_f64(x):
    """``log|Gamma(x)|`` of float64 ``x`` as C's ``lgamma`` (MXNet's ``gammaln``): ``+inf``
    at the poles 0, -1, -2, ... and at +-inf."""
    small, y, sin_pi_x, pole = _reflection_parts(x)
    term, a = _lanczos(y)
    lg = R("add")(R("add")(term, _f64(0.5 * np.log(2.0 * np.pi))), R("log")(a))
    refl = R("subtract")(R("subtract")(_f64(np.log(np.pi)), R("log")(R("abs")(sin_pi_x))), lg)
    out = R("where")(small, refl, lg)
    inf = _f64(np.inf)
    return R("where")(R("logical_or")(pole, R("equal")(R("abs")(x), inf)), inf, out)


def _special(fn):
    """MXNet's ``gamma`` / ``gammaln``: evaluated in float64 whatever the input dtype, cast back
    to it (float32 and float16 results are the correctly rounded double value; integers are
    truncated toward zero, as mshadow's double evaluation: ``gamma(5) = 24``,
    ``gammaln(5) = 3``). MXNet 1.9.1's own float32 kernel (``tgammaf``) is within an ulp.
    Values: ``gamma(-0.5) = -3.5449``, ``gamma(0) = inf``, ``gamma(-1) = nan``,
    ``gamma(35.5) = inf`` in float32 (overflow), ``gammaln(-1) = inf``."""

    def conv(ins, a, c):
        x = ins[0]
        dt = c.dtype(x)
        if dt == "bool":
            raise c.error("data has dtype bool, expected a numeric dtype")
        out = fn(x if dt == "float64" else R("cast")(x, "float64"))
        return out if dt == "float64" else R("cast")(out, dt)

    return conv


# ---- hypot and mod ----


def _hypot_expr(a, b, c):
    """``sqrt(a^2 + b^2)`` without overflow or underflow of the squares (C's ``hypot``):
    ``m * sqrt(1 + (n / m)^2)`` with ``m = max(|a|, |b|)``, ``n = min(|a|, |b|)``; ``inf`` when
    either is infinite; integers in float64, truncated back (MXNet's ``_hypot`` on int32:
    ``hypot(7, 7) = 9``)."""
    dt = c.dtype(a)
    if dt.startswith(("int", "uint")):
        return R("cast")(_hypot_expr(R("cast")(a, "float64"), R("cast")(b, "float64"), c), dt)
    aa, ab = R("abs")(a), R("abs")(b)
    m, n = R("maximum")(aa, ab), R("minimum")(aa, ab)
    zero = R("equal")(m, c.scalar(0, m))
    r = R("divide")(n, R("where")(zero, c.scalar(1, m), m))
    out = R("multiply")(m, R("sqrt")(R("add")(c.scalar(1, m), R("multiply")(r, r))))
    inf = c.scalar(np.inf, out)
    either_inf = R("logical_or")(R("isinf")(a), R("isinf")(b))
    return R("where")(either_inf, inf, out)


def _mod_expr(a, b, c):
    """MXNet's ``mod``: the remainder with the divisor's sign (``floor_mod``; ``-5.5 % 2 = 0.5``,
    ``5.5 % -2 = -0.5``) and 0 for a zero divisor, floats included (mshadow's ``mod``; NumPy
    and ``relay.floor_mod`` give NaN there)."""
    out = R("floor_mod")(a, b)
    if c.dtype(out).startswith(("float", "bfloat")):  # integer floor_mod by 0 is 0 already
        out = R("where")(R("equal")(b, c.scalar(0, b)), c.scalar(0, out), out)
    return out


def _fn2(fn):
    """A converter of two tensors (same dtype, broadcasting) from ``fn(a, b, ctx)``."""
    return lambda ins, a, c: fn(ins[0], ins[1], c)


# ---- NumPy-interface binary operators and scalar comparisons ----


def _np_binary_dtype(da, db, divide=False):
    """The dtype MXNet 1.9.1's NumPy interface computes ``a <op> b`` in (measured): an integer
    or bool with a float gives the float; two floats or two integers the wider (NumPy's
    promotion); true division of integers or bools gives float32."""
    fa, fb = (d.startswith(("float", "bfloat")) for d in (da, db))
    if fa != fb:
        out = da if fa else db
    elif da == db:
        out = da
    else:
        out = np.promote_types(da, db).name
    if divide and not out.startswith(("float", "bfloat")):
        out = "float32"
    return out


def _np_binary(fn, divide=False, ints=True, mixed_ints=True):
    """A NumPy-interface broadcasting operator ``fn(a, b, ctx)`` with both operands cast to
    :func:`_np_binary_dtype` first; ``ints=False`` refuses integer and bool operands as
    MXNet does (``_npi_hypot``: "only support floating point"), ``mixed_ints=False`` two
    different integer / bool dtypes (``_npi_subtract``: "does not support combination of
    int with ...")."""

    def conv(ins, a, c):
        x, y = ins
        da, db = c.dtype(x), c.dtype(y)
        if not mixed_ints and da != db and not any(
                d.startswith(("float", "bfloat")) for d in (da, db)):
            raise c.error(f"operands have dtypes {da} and {db}: MXNet 1.9.1 does not subtract "
                          "two different integer / bool dtypes; cast one operand first")
        dt = _np_binary_dtype(da, db, divide)
        if not ints and not dt.startswith(("float", "bfloat")):
            raise c.error(f"operands have dtypes {c.dtype(x)} and {c.dtype(y)}, expected float "
                          f"dtypes (as MXNet)")
        x, y = (v if c.dtype(v) == dt else R("cast")(v, dt) for v in (x, y))
        return fn(x, y, c)

    return conv


def _np_scalar_cmp(name):
    """``_npi_<cmp>_scalar`` (``x > 1.5`` in NumPy mode): a bool array. The scalar takes the
    data's dtype, except that an integer array with a float scalar (``is_int=False``) compares
    in float64: MXNet 1.9.1 gives ``int32 1 >= 1.5`` False and ``bool True == 1.5`` True (the
    scalar cast to bool), measured."""

    def conv(ins, a, c):
        x = ins[0]
        dt = c.dtype(x)
        s = a.get_float("scalar", 0.0)
        if dt.startswith(("int", "uint")) and not a.get_bool("is_int", False):
            x, s = R("cast")(x, "float64"), const(np.float64(s), "float64")
        elif dt == "bool":  # Relay orders no bools: compare as uint8 0/1
            x, s = R("cast")(x, "uint8"), const(np.uint8(bool(s)), "uint8")
        else:
            s = _scalar_of(a, c, x)
        return R(name)(x, s)

    return conv


# ---- NumPy-interface reductions ----


def _np_reduce(name, *, bool_dtype=None, int_dtype=None):
    """``np.<name>(a, axis=None, dtype=None, keepdims=False)`` of MXNet's NumPy interface
    (``_np_sum``, ``_np_prod``, ``_np_max``, ``_np_min``, ``_npi_mean``): shape ``()`` when
    every axis is reduced (NumPy's, not the legacy ``(1,)``). The result dtype is ``dtype``
    when given, else (MXNet 1.9.1, measured, narrower than NumPy): floats keep theirs;
    integers keep theirs for sum / prod / max / min (NumPy widens to int64) and give float32
    for mean; bool gives int64 for sum / prod, float32 for mean, bool for max / min. The
    reduction runs in that dtype; float16 ones accumulate in float32 (Relay's half kernels),
    where MXNet 1.9.1 accumulates in float16 (the mean of 1000 values of 100 is inf there).
    ``initial`` and ``where`` are refused (MXNet 1.9.1 refuses ``initial`` too)."""

    def conv(ins, a, c):
        x = ins[0]
        for key in ("initial", "where"):
            if a.get_str(key, "None") not in ("None", ""):
                raise c.error(f"attribute {key}={a.get_str(key)!r} is not supported "
                              f"(MXNet 1.9.1 refuses it as well); expected None")
        dt = c.dtype(x)
        out_dt = _mx_dtype(a, None)
        if out_dt is None:
            if dt == "bool":
                out_dt = bool_dtype or "bool"
            elif dt.startswith(("int", "uint")):
                out_dt = int_dtype or dt
            else:
                out_dt = dt
        work = "uint8" if out_dt == "bool" else out_dt  # Relay reduces no bools
        if dt != work:
            x = R("cast")(x, work)
        axis = a.get_tuple("axis", None)
        if axis is not None and len(axis) == 0:  # NumPy: axis=() reduces nothing
            out = x
        else:
            out = R(name)(x, axis=axis, keepdims=a.get_bool("keepdims", False))
        return R("cast")(out, "bool") if out_dt == "bool" else out

    return conv


# ---- nansum / nanprod, size_array, diag ----


def _nan_reduce(name, neutral):
    """``nansum`` / ``nanprod``: NaN counts as ``neutral`` (0 / 1), then the legacy reduction
    (``axis``, ``keepdims``, ``exclude``; shape (1,) when every axis is reduced)."""
    from ._mx_tensor import _reduce

    inner = _reduce(name)

    def conv(ins, a, c):
        x = ins[0]
        dt = c.dtype(x)
        if dt.startswith(("float", "bfloat")):
            x = R("where")(R("isnan")(x), const(np.array(neutral, dt), dt), x)
        return inner([x], a, c)

    return conv


def _size_array(ins, a, c):
    """``size_array``: the element count as an int64 array of shape (1,)."""
    return R("reshape")(R("ndarray_size")(ins[0], dtype="int64"), [1])


def _diag(ins, a, c):
    """``diag(data, k, axis1, axis2)`` (numpy.diag / numpy.diagonal): a 1-D input becomes the
    square matrix with it on diagonal ``k`` (zeros elsewhere, NaN and inf kept only there); an
    N-D input gives the ``k``-th diagonal of the planes ``axis1`` x ``axis2``, appended as the
    last axis."""
    x = ins[0]
    shape = c.shape(x)
    k = a.get_int("k", 0)
    dt = c.dtype(x)
    if any(not isinstance(d, int) for d in shape):
        raise c.error(f"diag of data of shape {shape}: static dimensions expected")
    if len(shape) == 1:
        n = shape[0] + abs(k)
        col = R("nn.pad")(x, [(0, k)] if k >= 0 else [(-k, 0)])  # value of row j
        rows = R("reshape")(col, [n, 1])
        mask = np.eye(n, k=k, dtype=bool)
        full = R("broadcast_to")(rows, [n, n])
        return R("where")(const(mask, "bool"), full, const(np.zeros((), dt), dt))
    nd = len(shape)
    a1, a2 = a.get_int("axis1", 0) % nd, a.get_int("axis2", 1) % nd
    if a1 == a2:
        raise c.error(f"diag: axis1 and axis2 are both {a1}; expected two different axes")
    n1, n2 = shape[a1], shape[a2]
    length = min(n1, n2 - k) if k >= 0 else min(n1 + k, n2)
    if length <= 0:
        raise c.error(f"diag: diagonal k={k} of a {n1} x {n2} plane is empty")
    others = [i for i in range(nd) if i not in (a1, a2)]
    y = R("transpose")(x, axes=others + [a1, a2])
    y = R("reshape")(y, [shape[i] for i in others] + [n1 * n2])
    r0, c0 = max(-k, 0), max(k, 0)
    flat = np.array([(r0 + i) * n2 + c0 + i for i in range(length)], "int64")
    return R("take")(y, const(flat, "int64"), axis=len(others))


# ---- erfinv, ravel_multi_index ----

# M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single-precision
# version: w = -log((1 - x)(1 + x)); erfinv(x) ~ x p(w - 2.5) for w < 5, x q(sqrt(w) - 3) else
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coeffs, w):
    p = _f64(coeffs[0])
    for k in coeffs[1:]:
        p = R("add")(_f64(k), R("multiply")(p, w))
    return p


def _erfinv_f64(x):
    """The inverse error function of float64 ``x`` (MXNet's ``erfinv``): Giles' approximation
    (relative error ~1e-7), then two Newton steps on ``erf(y) = x`` in float64 (erf is
    exact there), which leave float32 and float16 results correctly rounded; ``+-1 -> +-inf``,
    ``|x| > 1`` and NaN -> NaN."""
    one = _f64(1.0)
    w = R("negative")(R("log")(R("multiply")(R("subtract")(one, x), R("add")(one, x))))
    central = _horner(_ERFINV_CENTRAL, R("subtract")(w, _f64(2.5)))
    # the tail's argument where w < 5 is never used; kept finite (sqrt of w >= 5)
    tail = _horner(_ERFINV_TAIL, R("subtract")(R("sqrt")(R("maximum")(w, _f64(5.0))),
                                               _f64(3.0)))
    y = R("multiply")(R("where")(R("less")(w, _f64(5.0)), central, tail), x)
    slope = _f64(2.0 / math.sqrt(math.pi))
    for _ in range(2):  # y -= (erf(y) - x) / erf'(y)
        d = R("multiply")(slope, R("exp")(R("negative")(R("multiply")(y, y))))
        y = R("subtract")(y, R("divide")(R("subtract")(R("erf")(y), x), d))
    ax = R("abs")(x)
    inf = R("multiply")(x, _f64(np.inf))  # +-1 -> +-inf
    out = R("where")(R("equal")(ax, one), inf, y)
    return R("where")(R("greater")(ax, one), _f64(np.nan), out)


def _erfinv(ins, a, c):
    """``erfinv`` of float data (computed in float64, cast back). Integer data is refused:
    MXNet casts the infinite or NaN result of every input but 0 to the integer dtype, which
    is undefined (it gives INT_MIN for 1)."""
    if not c.dtype(ins[0]).startswith(("float", "bfloat")):
        raise c.error(f"erfinv of {c.dtype(ins[0])} data: expected a float dtype (MXNet's "
                      f"integer result is its float result cast, undefined for +-1)")
    return _special(_erfinv_f64)(ins, a, c)


def _ravel_multi_index(ins, a, c):
    """``ravel_multi_index(data, shape)``: ``data`` ``(len(shape), N)`` holds N multi-indices
    as columns; the output ``(N,)`` of data's dtype is each column's row-major flat index,
    ``sum_k data[k] * prod(shape[k+1:])`` (no bounds check, as MXNet: out-of-range indices
    give the formula's value; the first dimension may be -1, unknown)."""
    x = ins[0]
    shape = a.get_tuple("shape")
    xs, dt = c.shape(x), c.dtype(x)
    if len(xs) != 2 or xs[0] != len(shape):
        raise c.error(f"data of shape {xs}: expected ({len(shape)}, N), one row per "
                      f"dimension of shape={shape}")
    if any(d < 1 for d in shape[1:]) or shape[0] < 1 and shape[0] != -1:
        raise c.error(f"shape={shape}: expected positive dimensions (the first may be -1)")
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    weights = const(np.array(strides, dt).reshape(-1, 1), dt)
    return R("sum")(R("multiply")(x, weights), axis=[0])


MATH_CONVERTERS = {
    "gamma": _special(_gamma_f64),
    "gammaln": _special(_gammaln_f64),
    "erfinv": _erfinv,
    "_ravel_multi_index": _ravel_multi_index,
    "ravel_multi_index": _ravel_multi_index,
    "_hypot": _fn2(_hypot_expr),
    "broadcast_hypot": _fn2(_hypot_expr),
    "_hypot_scalar": _scalar_op(_hypot_expr),
    "_npi_hypot": _np_binary(_hypot_expr, ints=False),
    "_power": _binary("power"),
    "_mod": _fn2(_mod_expr),
    "broadcast_mod": _fn2(_mod_expr),
    "_mod_scalar": _scalar_op(_mod_expr),
    "_rmod_scalar": _scalar_op(_mod_expr, reverse=True),
    "_npi_mod": _np_binary(_mod_expr),
    "_npi_mod_scalar": _scalar_op(_mod_expr, numpy=True),
    "_npi_rmod_scalar": _scalar_op(_mod_expr, reverse=True, numpy=True),
    "_npi_true_divide": _np_binary(lambda x, y, c: R("divide")(x, y), divide=True),
    # mixed dtypes promote (int32 + float32 is float32, bool + int32 int32; MXNet 1.9.1)
    "_npi_add": _np_binary(lambda x, y, c: _math("add", [x, y], c)),
    "_npi_subtract": _np_binary(lambda x, y, c: _math("subtract", [x, y], c),
                                mixed_ints=False),
    "_npi_multiply": _np_binary(lambda x, y, c: _math("multiply", [x, y], c)),
    "_npi_mean": _np_reduce("mean", bool_dtype="float32", int_dtype="float32"),
    "_np_sum": _np_reduce("sum", bool_dtype="int64"),
    "_np_prod": _np_reduce("prod", bool_dtype="int64"),
    "_np_max": _np_reduce("max"),
    "_np_min": _np_reduce("min"),
    "nansum": _nan_reduce("sum", 0),
    "nanprod": _nan_reduce("prod", 1),
    "size_array": _size_array,
    "diag": _diag,
}
for _cmp, _relay in (("greater", "greater"), ("greater_equal", "greater_equal"),
                     ("less", "less"), ("less_equal", "less_equal"), ("equal", "equal"),
                     ("not_equal", "not_equal")):
    MATH_CONVERTERS[f"_npi_{_cmp}_scalar"] = _np_scalar_cmp(_relay)

__all__ = ["MATH_CONVERTERS"]

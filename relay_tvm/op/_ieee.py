"""TE building blocks with NumPy / IEEE-754 semantics on special values.

TVM's ``tir.max``/``tir.min`` (and so ``topi.maximum``, ``topi.nn.relu``, ``topi.clip``,
``topi.max``, ``topi.nn.pool*``, ``topi.argmax``) drop NaN, and topi's reductions start from the
lowest/highest *finite* value. NumPy's ``maximum``/``max``/``argmax`` propagate NaN (the first
NaN wins for ``argmax``) and a max over ``-inf`` values is ``-inf``. The helpers here give the
NumPy semantics at the cost of one ``isnan`` test per element (integers are unaffected).
"""

from __future__ import annotations


def is_float(dtype) -> bool:
    return str(dtype).startswith(("float", "bfloat"))


_NAN_BITS = {"float16": (16, 0x7FFF, 0x7C00), "float32": (32, 0x7FFFFFFF, 0x7F800000),
             "float64": (64, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000)}


def _isnan(v, dtype):
    """NaN test on the bits (exponent all ones, mantissa not zero). TVM 0.27 simplifies ``v != v``
    to false, and its LLVM code for a vectorized ``tirx.isnan`` gives wrong lanes."""
    from tvm import tirx

    dtype = str(dtype)
    if isinstance(v, tirx.FloatImm):
        import math

        return tirx.const(math.isnan(v.value), "bool")
    if dtype not in _NAN_BITS:
        return tirx.isnan(v)
    bits, mask, inf = _NAN_BITS[dtype]
    ity = f"int{bits}"
    return (tirx.reinterpret(ity, v) & tirx.const(mask, ity)) > tirx.const(inf, ity)


def _signbit(v, dtype):
    """The sign bit of a float (true for -0): IEEE 754-2019 maximum/minimum order -0 < +0."""
    from tvm import tirx

    dtype = str(dtype)
    if isinstance(v, tirx.FloatImm):  # CUDA C cannot reinterpret a literal (no address)
        import math

        return tirx.const(math.copysign(1.0, v.value) < 0, "bool")
    if dtype not in _NAN_BITS:
        return v < tirx.const(0, dtype)
    ity = f"int{_NAN_BITS[dtype][0]}"
    return tirx.reinterpret(ity, v) < tirx.const(0, ity)


def lowest(dtype):
    """``-inf`` for floats, the minimum for integers: the identity of max."""
    from tvm import tirx

    return tirx.const(float("-inf"), dtype) if is_float(dtype) else tirx.min_value(dtype)


def highest(dtype):
    """``+inf`` for floats, the maximum for integers: the identity of min."""
    from tvm import tirx

    return tirx.const(float("inf"), dtype) if is_float(dtype) else tirx.max_value(dtype)


def _let(values, dtype, body):
    """``body(*vars)`` with each non-trivial value bound once by a ``tirx.Let``: a select uses
    its operands several times, and nested inlined selects would otherwise grow exponentially
    (TVM's simplifier then never finishes). A float is bound as its bits (a reinterpret):
    TVM 0.27 fails to vectorize a let whose value is a cast from bool ("IntImm can only take
    scalar, but boolx4")."""
    from tvm import tirx

    names, vals, args = [], [], []
    bits = _NAN_BITS.get(str(dtype))
    for v in values:
        if isinstance(v, (tirx.Var, tirx.FloatImm, tirx.IntImm)):
            args.append(v)
        elif bits is not None:
            ity = f"int{bits[0]}"
            var = tirx.Var(f"ieee{len(names)}", ity)
            names.append(var)
            vals.append(tirx.reinterpret(ity, v))
            args.append(tirx.reinterpret(str(dtype), var))
        else:
            var = tirx.Var(f"ieee{len(names)}", dtype)
            names.append(var)
            vals.append(v)
            args.append(var)
    out = body(*args)
    for var, v in reversed(list(zip(names, vals))):
        out = tirx.Let(var, v, out)
    return out


def _llvm_target() -> bool:
    """Whether the computes are built for an LLVM target (CPU, AArch64): ``lower`` enters the
    build target; with none in scope, LLVM (the default target) is assumed."""
    from tvm.target import Target

    t = Target.current(allow_none=True)
    return t is None or t.kind.name == "llvm"


def _llvm(name, a, b, dtype):
    """LLVM's IEEE 754-2019 ``llvm.maximum``/``llvm.minimum``: NaN-propagating, one reference
    to each operand (a select names its operands up to three times, and chains of inlined
    selects grow exponentially; TVM's simplifier then runs for minutes)."""
    from tvm import tirx

    return tirx.call_llvm_pure_intrin(str(dtype), name, a, b)


def nan_max(a, b, dtype):
    """IEEE 754-2019 ``maximum(a, b)`` on scalars of ``dtype``: NaN if either is NaN (as
    ``numpy.maximum``), and ``maximum(-0, +0) = +0``."""
    from tvm import tirx

    if not is_float(dtype):
        return tirx.max(a, b)
    if _llvm_target():
        return _llvm("llvm.maximum", a, b, dtype)
    return _let([a, b], dtype, lambda a, b: tirx.Select(
        _isnan(a, dtype) | (a > b) | ((a == b) & _signbit(b, dtype)), a, b))


def nan_min(a, b, dtype):
    """IEEE 754-2019 ``minimum(a, b)`` on scalars of ``dtype``: NaN if either is NaN (as
    ``numpy.minimum``), and ``minimum(-0, +0) = -0``."""
    from tvm import tirx

    if not is_float(dtype):
        return tirx.min(a, b)
    if _llvm_target():
        return _llvm("llvm.minimum", a, b, dtype)
    return _let([a, b], dtype, lambda a, b: tirx.Select(
        _isnan(a, dtype) | (a < b) | ((a == b) & _signbit(a, dtype)), a, b))


def reducer(kind, dtype):
    """``te.comm_reducer`` of ``numpy.max`` (``kind="max"``, identity ``-inf``) or ``numpy.min``
    (identity ``+inf``) over ``dtype``: NaN propagates."""
    from tvm import te

    combine = nan_max if kind == "max" else nan_min
    ident = lowest if kind == "max" else highest
    return te.comm_reducer(lambda x, y: combine(x, y, dtype), lambda t: ident(t),
                           name=f"nan_{kind}")


def reduce(kind, x, axes, keepdims):
    """``numpy.max``/``numpy.min`` of a tensor over ``axes`` (sorted ints) as a TE compute."""
    from tvm import te

    red = reducer(kind, x.dtype)
    ndim = len(x.shape)
    raxes = [te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in axes]
    out_shape = [1 if i in axes else x.shape[i] for i in range(ndim) if keepdims or i not in axes]

    def fcompute(*idx):
        full, it, r = [], iter(idx), iter(raxes)
        for i in range(ndim):
            if i in axes:
                if keepdims:
                    next(it)
                full.append(next(r))
            else:
                full.append(next(it))
        return red(x(*full), axis=raxes)

    return te.compute(out_shape, fcompute, name=f"{kind}_red", tag="comm_reduce")


def arg_reduce(kind, x, axis, keepdims, select_last_index, index_dtype="int32"):
    """``numpy.argmax``/``argmin`` of ``x`` along ``axis`` (the first NaN wins, then the first
    extreme value; the last one with ``select_last_index``) as a TE compute."""
    from tvm import te, tirx

    big = tirx.max_value(index_dtype)
    first_idx = tirx.const(-1, index_dtype) if select_last_index else big
    better = (lambda a, b: a > b) if kind == "max" else (lambda a, b: a < b)
    flt = is_float(x.dtype)

    def combine(lhs, rhs):
        (i1, v1), (i2, v2) = lhs, rhs
        tie_first = (i1 > i2) if select_last_index else (i1 < i2)
        if flt:
            n1, n2 = _isnan(v1, x.dtype), _isnan(v2, x.dtype)
            take1 = (n1 & (~n2 | tie_first)) | (
                ~n1 & ~n2 & (better(v1, v2) | ((v1 == v2) & tie_first)))
        else:
            take1 = better(v1, v2) | ((v1 == v2) & tie_first)
        return tirx.Select(take1, i1, i2), tirx.Select(take1, v1, v2)

    def identity(t_idx, t_val):
        val = lowest(t_val) if kind == "max" else highest(t_val)
        return first_idx.astype(t_idx) if t_idx != index_dtype else first_idx, val

    red = te.comm_reducer(combine, identity, name=f"nan_arg{kind}")
    ndim = len(x.shape)
    k = te.reduce_axis((0, x.shape[axis]), name="k")
    out_shape = [1 if i == axis else x.shape[i] for i in range(ndim) if keepdims or i != axis]

    def fcompute(*idx):
        full, it = [], iter(idx)
        for i in range(ndim):
            if i == axis:
                if keepdims:
                    next(it)
                full.append(k)
            else:
                full.append(next(it))
        return red((k.var.astype(index_dtype), x(*full)), axis=k)

    idx, _ = te.compute(out_shape, fcompute, name=f"arg{kind}_red", tag="comm_reduce_idx")
    return idx


def elementwise(fn, x, name="ieee"):
    """``fn`` applied to each element of ``x`` (a TE compute of the same shape)."""
    from tvm import te

    return te.compute(x.shape, lambda *i: fn(x(*i)), name=name, tag="elemwise")


def broadcast(fn, a, b, out_shape, name="ieee"):
    """``fn(a, b)`` with NumPy broadcasting to ``out_shape``; a symbolic dimension of ``a`` or
    ``b`` must be the output's (``_common.broadcast_inputs`` makes it so)."""
    from tvm import te, tirx

    n = len(out_shape)

    def one(d):
        return isinstance(d, (int, tirx.IntImm)) and int(d) == 1

    def index(t, idx):
        off = n - len(t.shape)
        return [0 if one(t.shape[j]) and not one(out_shape[j + off]) else idx[j + off]
                for j in range(len(t.shape))]

    return te.compute([int(d) if isinstance(d, tirx.IntImm) else d for d in out_shape],
                      lambda *i: fn(a(*index(a, i)), b(*index(b, i))), name=name, tag="broadcast")


def opaque(x):
    """``x`` (a float tensor) through a bit-cast round trip that TVM's simplifier cannot see
    through: it treats float arithmetic as real arithmetic (``x - x -> 0``, ``x * 0 -> 0``) and
    folds ``x / 0`` into a build error; IEEE-754 gives NaN/inf there."""
    from tvm import te, tirx

    dt = str(x.dtype)
    if dt not in _NAN_BITS:
        return x
    ity = f"int{_NAN_BITS[dt][0]}"
    return te.compute(x.shape, lambda *i: tirx.reinterpret(dt, tirx.reinterpret(ity, x(*i))),
                      name="ieee_opaque", tag="elemwise")


def to_bool(x):
    """``x != 0`` (numpy's ``astype(bool)``: NaN is true); TVM folds a cast of a constant such as
    2 to bool into a build error."""
    from tvm import te, tirx

    if str(x.dtype) == "bool":
        return x
    # not (x == 0): LLVM's ordered x != 0 is false for NaN
    zero, t, f = tirx.const(0, x.dtype), tirx.const(True, "bool"), tirx.const(False, "bool")
    return te.compute(x.shape, lambda *i: tirx.Select(x(*i) == zero, f, t), name="to_bool",
                      tag="elemwise")


# ---- the NumPy side (the interpreter's references) ----------------------------------------------
# IEEE 754-2019 ``maximum``/``minimum`` order -0 below +0, as LLVM's ``llvm.maximum`` (the
# compiled path) does; ``numpy.maximum`` returns either zero on a tie (its second operand, or
# whichever its SIMD loop met first in a reduction). These fix the sign of a zero result.


def np_maximum(a, b):
    """``numpy.maximum`` (NaN propagates) with ``maximum(-0, +0) = +0``."""
    import numpy as np

    r = np.maximum(a, b)
    if r.dtype.kind != "f":
        return r
    zero = r == 0  # both operands are <= 0: -0 only if neither is +0
    if np.any(zero):
        neg = np.signbit(a) & np.signbit(b)
        r = np.where(zero, np.where(neg, -0.0, 0.0).astype(r.dtype), r)
    return r


def np_minimum(a, b):
    """``numpy.minimum`` (NaN propagates) with ``minimum(-0, +0) = -0``."""
    import numpy as np

    r = np.minimum(a, b)
    if r.dtype.kind != "f":
        return r
    zero = r == 0  # both operands are >= 0: -0 if either is -0
    if np.any(zero):
        neg = np.signbit(a) | np.signbit(b)
        r = np.where(zero, np.where(neg, -0.0, 0.0).astype(r.dtype), r)
    return r


def np_reduce(kind, x, axis=None, keepdims=False):
    """``numpy.max``/``numpy.min`` (``kind`` "max"/"min") of ``x`` over ``axis`` with the
    signed-zero order of :func:`np_maximum`/:func:`np_minimum`."""
    import numpy as np

    r = np.asarray((np.max if kind == "max" else np.min)(x, axis=axis, keepdims=keepdims))
    if r.dtype.kind != "f" or x.size == 0:
        return r
    zero = r == 0
    if np.any(zero):
        z = x == 0
        # max: +0 if any +0 is in the reduction; min: -0 if any -0 is
        pick = (z & ~np.signbit(x)) if kind == "max" else (z & np.signbit(x))
        has = np.any(pick, axis=axis, keepdims=keepdims)
        neg = ~has if kind == "max" else has
        r = np.where(zero, np.where(neg, -0.0, 0.0).astype(r.dtype), r)
    return r

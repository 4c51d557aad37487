"""MXNet converters: elementwise, scalar, comparison, reduction and creation operators.

Semantics follow the MXNet 1.9.1 operator documentation; each converter takes
``(inputs, attrs: StrAttrs, ctx: Ctx)`` and returns a Relay expression or a list of them.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import const
from ..op.tensor import FLOAT_ONLY
from ._mx_util import R


def _math(name, args, c):
    """``relay.<name>(*args)``, computed as MXNet does on integer tensors where Relay's operator
    is defined on floats only (sqrt, exp, power, tanh, ...): mshadow evaluates the function of
    each element in double precision and stores it back in the integer dtype, truncating
    toward zero (``sqrt([1, 5]) = [1, 2]``, ``exp(4) = 54``, ``tanh(1) = 0``, and
    ``sigmoid(20) = 0``, ``exp(20) = 485165195``, which float32 would round to 1 and
    485165184; MXNet 1.9.1, legacy and NumPy mode alike). Arguments of differing integer
    dtypes stay an error of the operator."""
    dt = c.dtype(args[0])
    if name in FLOAT_ONLY and dt.startswith(("int", "uint")) and all(
            c.dtype(x) == dt for x in args[1:]):
        out = R(name)(*[R("cast")(x, "float64") for x in args])
        return R("cast")(out, dt)
    return R(name)(*args)


def _unary(name):
    return lambda ins, a, c: _math(name, [ins[0]], c)


def _in_float64(conv):
    """The converter ``conv`` run on float64 copies of integer inputs, its result cast back to
    the input dtype (MXNet's integer evaluation of float functions, see :func:`_math`)."""

    def wrapped(ins, a, c):
        dt = c.dtype(ins[0])
        if not dt.startswith(("int", "uint")):
            return conv(ins, a, c)
        return R("cast")(conv([R("cast")(x, "float64") for x in ins], a, c), dt)

    return wrapped


def _round(ins, a, c):
    """MXNet's ``round`` rounds halves away from zero (C's ``round``; ``relay.round`` rounds
    them to even): ``trunc(x) + sign(x)`` where ``x - trunc(x)`` is exactly one half (that
    difference is exact in floating point, unlike ``floor(x + 0.5)`` for large odd values)."""
    x = ins[0]
    if not c.dtype(x).startswith(("float", "bfloat")):
        return x
    t = R("trunc")(x)
    half = R("equal")(R("abs")(R("subtract")(x, t)), c.scalar(0.5, x))
    return R("where")(half, R("add")(t, R("sign")(x)), R("round")(x))


def _rint(ins, a, c):
    """MXNet's ``rint``: the nearer of ``floor(x)`` and ``ceil(x)``, ``floor`` on a tie (so
    ``rint(2.5) = 2`` and ``rint(-2.5) = -3``), mshadow's definition."""
    x = ins[0]
    if not c.dtype(x).startswith(("float", "bfloat")):
        return x
    lo, hi = R("floor")(x), R("ceil")(x)
    return R("where")(R("less_equal")(R("subtract")(x, lo), R("subtract")(hi, x)), lo, hi)


def _binary(name):
    return lambda ins, a, c: _math(name, [ins[0], ins[1]], c)


def _cmp(name, keep_dtype=True):
    """MXNet's legacy comparisons return 0/1 in the input dtype; numpy-style ones (_npi_) bool."""

    def conv(ins, a, c):
        out = R(name)(ins[0], ins[1])
        return R("cast")(out, c.dtype(ins[0])) if keep_dtype else out

    return conv


def _nonzero(x, c):
    return R("not_equal")(x, c.scalar(0, x))


def _logical(name):
    def conv(ins, a, c):
        out = R(name)(_nonzero(ins[0], c), _nonzero(ins[1], c))
        return R("cast")(out, c.dtype(ins[0]))

    return conv


def _scalar_of(a, c, x):
    s = a.get_float("scalar", 0.0)
    if a.get_bool("is_int", False):
        s = int(s)
    return c.scalar(s, x)


def _numpy_promotion(name, dt, is_int):
    """The dtype MXNet's NumPy-mode ``_npi_<op>_scalar`` computes in, for data of dtype ``dt``
    (MXNet 1.9.1 in a graph, hybridized or exported; measured): true division of integers or
    bools gives float32; an integer or bool array with a float scalar gives float64 (``x * 1.5``
    on int32 is 1.5, 3.0, ...: the scalar was cut to the array's dtype, 1, and the values came
    back unchanged; fresh-user trial); a bool array with an int scalar gives int64; otherwise
    the array's dtype. (MXNet's imperative mode differs for bools: it truncates to int64.)"""
    if dt.startswith(("float", "bfloat")):
        return dt
    if name == "divide":
        return "float32"
    if not is_int:
        return "float64"
    return "int64" if dt == "bool" else dt


def _scalar_op(name, reverse=False, cmp=False, keep_dtype=True, numpy=False):
    """A converter of ``<op>(data, scalar)`` (``scalar`` and ``is_int`` attributes): ``name``
    is a Relay operator (computed through :func:`_math`) or a function ``fn(a, b, ctx)``.
    NumPy-mode operators (``numpy=True``) promote as :func:`_numpy_promotion`; so do legacy
    names when the node carries ``is_int`` (MXNet 1.9.1's NumPy mode writes ``_maximum_scalar``
    and ``_hypot_scalar`` with it, and their dtype then follows the same rule: ``maximum(int32,
    1.5)`` is float64, measured); without ``is_int`` the scalar takes the data's dtype."""
    def conv(ins, a, c):
        x = ins[0]
        dt = c.dtype(x)
        numpy_rule = numpy or (not cmp and name != "divide" and "is_int" in a)
        promoted = _numpy_promotion(name, dt, a.get_bool("is_int", False)) if numpy_rule else dt
        if promoted != dt:
            x = R("cast")(x, promoted)
            s = const(np.array(a.get_float("scalar", 0.0)).astype(promoted), promoted)
        else:
            s = _scalar_of(a, c, x)
        args = [s, x] if reverse else [x, s]
        out = name(*args, c) if callable(name) else _math(name, args, c)
        if cmp and keep_dtype:
            out = R("cast")(out, c.dtype(x))
        return out

    return conv


def _square(ins, a, c):
    return R("multiply")(ins[0], ins[0])


def _reciprocal(ins, a, c):
    return R("divide")(c.scalar(1, ins[0]), ins[0])


def _expm1(ins, a, c):
    return R("subtract")(R("exp")(ins[0]), c.scalar(1, ins[0]))


def _log1p(ins, a, c):
    return R("log")(R("add")(ins[0], c.scalar(1, ins[0])))


def _cbrt(ins, a, c):
    x = ins[0]
    mag = R("power")(R("abs")(x), c.scalar(1.0 / 3.0, x))
    return R("multiply")(R("sign")(x), mag)


def _rcbrt(ins, a, c):
    return R("divide")(c.scalar(1, ins[0]), _cbrt(ins, a, c))


def _softsign(ins, a, c):
    x = ins[0]
    return R("divide")(x, R("add")(c.scalar(1, x), R("abs")(x)))


def _softrelu(x, c):
    # log(1 + exp(x)), written to stay finite for large x: max(x, 0) + log1p(exp(-|x|)).
    pos = R("maximum")(x, c.scalar(0, x))
    tail = R("log")(R("add")(c.scalar(1, x), R("exp")(R("negative")(R("abs")(x)))))
    return R("add")(pos, tail)


def _hard_sigmoid(ins, a, c):
    x = ins[0]
    if not c.dtype(x).startswith(("float", "bfloat")):  # MXNet refuses integers here
        raise c.error(f"data has dtype {c.dtype(x)}, expected a float dtype (as MXNet)")
    alpha, beta = a.get_float("alpha", 0.2), a.get_float("beta", 0.5)
    y = R("add")(R("multiply")(x, c.scalar(alpha, x)), c.scalar(beta, x))
    return R("clip")(y, 0.0, 1.0)


def _clip(ins, a, c):
    return R("clip")(ins[0], a.get_float("a_min"), a.get_float("a_max"))


def _smooth_l1(ins, a, c):
    x = ins[0]
    sigma = a.get_float("scalar", 1.0)
    s2 = sigma * sigma
    ax = R("abs")(x)
    quad = R("multiply")(R("multiply")(x, x), c.scalar(0.5 * s2, x))
    lin = R("subtract")(ax, c.scalar(0.5 / s2, x))
    return R("where")(R("less")(ax, c.scalar(1.0 / s2, x)), quad, lin)


def _where(ins, a, c):
    cond, x, y = ins
    if c.shape(cond) != c.shape(x) and len(c.shape(cond)) == 1:
        # MXNet: a 1-d condition selects whole rows of x / y.
        cond = R("reshape")(cond, [-1] + [1] * (len(c.shape(x)) - 1))
    return R("where")(_nonzero(cond, c), x, y)


def _npi_where(ins, a, c):
    """``np.where(cond, x, y)`` of MXNet's NumPy interface (``_npi_where``): the three inputs
    broadcast together as in NumPy; ``cond`` of any dtype counts where nonzero; ``x`` and ``y``
    share one dtype (MXNet 1.9.1 refuses a mix), which is the result's."""
    cond, x, y = ins
    return R("where")(_nonzero(cond, c), x, y)


def _npi_where_rscalar(ins, a, c):
    cond, x = ins
    return R("where")(_nonzero(cond, c), x, _scalar_of(a, c, x))


def _npi_where_lscalar(ins, a, c):
    """``np.where(cond, scalar, y)`` (``_npi_where_lscalar``): the scalar takes ``y``'s dtype
    (MXNet 1.9.1 gives ``where(c, 1.5, int32 array)`` the value 1), the result is ``y``'s."""
    cond, y = ins
    return R("where")(_nonzero(cond, c), _scalar_of(a, c, y), y)


def _npi_where_scalar2(ins, a, c):
    """``np.where(cond, x, y)`` with two Python scalars (``_npi_where_scalar2``, attributes
    ``x`` and ``y``): float32 of ``cond``'s shape whatever ``cond``'s dtype, as MXNet 1.9.1."""
    cond = ins[0]
    pick = [const(np.float32(a.get_float(k)), "float32") for k in ("x", "y")]
    return R("where")(_nonzero(cond, c), *pick)


def _add_n(ins, a, c):
    out = ins[0]
    for x in ins[1:]:
        out = R("add")(out, x)
    return out


def _identity(ins, a, c):
    return ins[0]


def _dropout(ins, a, c):
    """MXNet's Dropout is the identity at inference, unless ``mode='always'``: then it drops at
    inference too (a random mask scaled by 1 / (1 - p)), which a deterministic program cannot
    reproduce; refused rather than converted to the identity (fresh-user trial)."""
    if a.get_str("mode", "training") == "always" and a.get_float("p", 0.5) > 0:
        raise c.error("Dropout(mode='always') drops values at inference too (random); "
                      "relay_tvm converts inference graphs: use mode='training' or p=0")
    return ins[0]


def _copy(ins, a, c):
    return R("copy")(ins[0])


def _cast(ins, a, c):
    return R("cast")(ins[0], a.get_str("dtype"))


def _amp_multicast(ins, a, c):
    n = a.get_int("num_outputs", len(ins))
    dts = [c.dtype(x) for x in ins]
    if a.get_bool("cast_narrow", False):
        target = min(dts, key=lambda d: np.dtype(d).itemsize)
    else:
        target = max(dts, key=lambda d: np.dtype(d).itemsize)
    return [R("cast")(x, target) for x in ins[:n]]


# ---- reductions ----


def _reduce(name, axis_key="axis"):
    def conv(ins, a, c):
        axis = a.get_tuple(axis_key, None)
        if axis is not None and len(axis) == 0:
            axis = None
        keep, excl = a.get_bool("keepdims", False), a.get_bool("exclude", False)
        out = R(name)(ins[0], axis=axis, keepdims=keep, exclude=excl)
        return _legacy_scalar(out, ins[0], axis, keep, excl, c)

    return conv


def _legacy_scalar(out, x, axis, keep, excl, c):
    """MXNet's legacy reductions give shape (1,), not (), when every axis is reduced."""
    if keep:
        return out
    n = len(c.shape(x))
    if axis is None:
        n_red = 0 if excl else n
    else:
        axes = {ax % n for ax in ([axis] if isinstance(axis, int) else axis)}
        n_red = n - len(axes) if excl else len(axes)
    return R("reshape")(out, [1]) if n_red == n else out


def _norm(ins, a, c):
    """MXNet's ``norm``: the L2 (``ord=2``, default) or L1 (``ord=1``) norm over ``axis`` (all
    elements when absent; shape (1,) then, as the legacy reductions); ``out_dtype`` casts."""
    x = ins[0]
    order = a.get_int("ord", 2)
    if order not in (1, 2):
        raise c.error(f"norm ord={order}: MXNet supports 1 and 2")
    axis = a.get_tuple("axis", None)
    axis = None if axis is not None and len(axis) == 0 else axis
    keep = a.get_bool("keepdims", False)
    if order == 1:
        out = R("sum")(R("abs")(x), axis=axis, keepdims=keep)
    else:
        out = R("sqrt")(R("sum")(R("multiply")(x, x), axis=axis, keepdims=keep))
    out = _legacy_scalar(out, x, axis, keep, False, c)
    out_dtype = a.get_str("out_dtype", "None")
    return out if out_dtype in ("None", c.dtype(x)) else R("cast")(out, out_dtype)


def _np_cumsum(ins, a, c):
    """``np.cumsum(a, axis=None, dtype=None)`` of MXNet's NumPy interface (``_np_cumsum``, also
    registered as ``cumsum``): running sums along ``axis``, of the flattened array when
    ``axis`` is None. Without ``dtype`` the result keeps the input's dtype, except bool, which
    sums as int64 (MXNet 1.9.1's type rule, narrower than NumPy's, which widens every small
    integer to int64). A negative ``axis`` counts from the end as in NumPy; MXNet 1.9.1 exports
    such a graph but fails on it at run time ("index = -1 must be in range")."""
    x = ins[0]
    axis = a.get_int("axis", None)
    dtype = _mx_dtype(a, None)
    if c.dtype(x) == "bool":
        # cast first: bool has no addition of its own
        dtype = dtype or "int64"
        x = R("cast")(x, dtype)
    ndim = len(c.shape(x))
    if axis is None:
        x, axis = R("reshape")(x, [-1]), 0
    elif not -ndim <= axis < ndim:
        raise c.error(f"axis={axis} is out of range for an input of rank {ndim}")
    return R("cumsum")(x, axis=axis % max(ndim, 1), dtype=dtype)


def _sort(ins, a, c):
    """MXNet's ``sort``: values along ``axis`` (the flattened array when ``axis=None``)."""
    axis = a.get_int("axis", -1)
    x = ins[0]
    if axis is None:
        x, axis = R("reshape")(x, [-1]), 0
    return R("sort")(x, axis=axis, is_ascend=a.get_bool("is_ascend", True))


def _arg(name):
    def conv(ins, a, c):
        x = ins[0]
        axis = a.get_int("axis", None)
        keep = a.get_bool("keepdims", False)
        out = R(name)(x, axis=None if axis is None else [axis], keepdims=keep)
        out = _legacy_scalar(out, x, axis, keep, False, c)
        return R("cast")(out, c.dtype(x))

    return conv


def _argsort(ins, a, c):
    axis = a.get_int("axis", -1)
    x = ins[0]
    if axis is None:
        x, axis = R("reshape")(x, [-1]), 0
    return R("argsort")(x, axis=axis, is_ascend=a.get_bool("is_ascend", True),
                        dtype=a.get_str("dtype", "float32"))


def _topk(ins, a, c):
    x = ins[0]
    axis = a.get_int("axis", -1)
    if axis is None:
        x, axis = R("reshape")(x, [-1]), 0
    ret = a.get_str("ret_typ", "indices")
    ret = "values" if ret == "value" else ret
    if ret == "mask":  # data's shape and dtype, 1 at the k selected positions along axis
        idx = R("topk")(x, k=a.get_int("k", 1), axis=axis, ret_type="indices",
                        is_ascend=a.get_bool("is_ascend", False), dtype="int32")
        ones = R("ones_like")(R("cast")(idx, c.dtype(x)))
        mask = R("scatter_elements")(R("zeros_like")(x), idx, ones, axis=axis)
        return mask if x is ins[0] else R("reshape_like")(mask, ins[0])
    dtype = a.get_str("dtype", "float32")
    out = R("topk")(x, k=a.get_int("k", 1), axis=axis, ret_type=ret,
                    is_ascend=a.get_bool("is_ascend", False), dtype=dtype)
    if ret == "both":
        from ._mx_util import outputs_of

        return outputs_of(out, 2)
    return out


def _pick(ins, a, c):
    """MXNet's ``pick(data, index, axis=-1, keepdims=False, mode="clip")``: the entry at
    ``index`` along ``axis`` for every other position; ``index`` (any numeric dtype, cast to
    int32) has data's shape without ``axis`` or with size 1 there; out-of-range indices clip to
    ``[0, n)`` or wrap modulo ``n``."""
    x, index = ins
    shape = c.shape(x)
    ndim = len(shape)
    axis = a.get_int("axis", -1)
    if axis is None:
        raise c.error("axis=None (pick from the flattened data) is not supported")
    ax = axis % ndim
    n = int(shape[ax])
    ishape = tuple(c.shape(index))
    rest = tuple(d for k, d in enumerate(shape) if k != ax)
    idx = R("cast")(index, "int32")
    if ishape == rest:
        idx = R("expand_dims")(idx, ax)
    elif not (len(ishape) == ndim and ishape[ax] == 1 and ishape[:ax] + ishape[ax + 1:] == rest):
        raise c.error(f"index has shape {ishape}, expected {rest} (data shape {tuple(shape)} "
                      f"without axis {axis}) or that with size 1 at the axis")
    mode = a.get_str("mode", "clip")
    if mode == "wrap":
        idx = R("floor_mod")(idx, const(n, "int32"))
    elif mode == "clip":
        idx = R("clip")(idx, 0, n - 1)
    else:
        raise c.error(f"mode={mode!r} is not one of 'clip', 'wrap'")
    out = R("gather")(x, ax, idx)
    return out if a.get_bool("keepdims", False) else R("squeeze")(out, axis=[ax])


# ---- creation ----


def _mx_dtype(a, default="float32"):
    dt = a.get_str("dtype", default)
    return default if dt in (None, "None") else dt


def _const(arr):
    arr = np.asarray(arr)
    return const(arr, "bool" if arr.dtype == np.bool_ else arr.dtype.name)


def _zeros(ins, a, c):
    return _const(np.zeros(a.get_tuple("shape"), _mx_dtype(a)))


def _ones(ins, a, c):
    return _const(np.ones(a.get_tuple("shape"), _mx_dtype(a)))


def _full(ins, a, c):
    return _const(np.full(a.get_tuple("shape"), a.get_float("value"), _mx_dtype(a)))


def _zeros_like(ins, a, c):
    return R("zeros_like")(ins[0])


def _ones_like(ins, a, c):
    return R("ones_like")(ins[0])


def _arange_values(a, c):
    start = a.get_float("start", 0.0)
    stop = a.get_float("stop", None)
    step = a.get_float("step", 1.0)
    if stop is None:
        start, stop = 0.0, start
    vals = np.arange(start, stop, step)
    rep = a.get_int("repeat", 1)
    if rep != 1:
        vals = np.repeat(vals, rep)
    return vals


def _arange(ins, a, c):
    if a.get_bool("infer_range", False):
        raise c.error("_arange with infer_range=True is not supported")
    return _const(_arange_values(a, c).astype(_mx_dtype(a)))


def _arange_like(ins, a, c):
    x = ins[0]
    shape = c.shape(x)
    axis = a.get_int("axis", None)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    start, step = a.get_float("start", 0.0), a.get_float("step", 1.0)
    rep = a.get_int("repeat", 1)
    vals = np.repeat(start + step * np.arange(int(np.ceil(n / rep))), rep)[:n]
    vals = vals.astype(c.dtype(x))
    return _const(vals.reshape(shape) if axis is None else vals)


def _shape_array(ins, a, c):
    return _const(np.array(c.shape(ins[0]), dtype="int64"))


TENSOR_CONVERTERS = {
    # activations and unary math
    "relu": _unary("nn.relu"),
    "sigmoid": _unary("sigmoid"),
    "tanh": _unary("tanh"),
    "_npi_tanh": _unary("tanh"),
    "_npi_absolute": _unary("abs"),
    "_npi_exp": _unary("exp"),
    "_npi_log": _unary("log"),
    "_npi_sqrt": _unary("sqrt"),
    "_npi_negative": _unary("negative"),
    "softsign": _softsign,
    "hard_sigmoid": _hard_sigmoid,
    "abs": _unary("abs"),
    "arccos": _unary("acos"),
    "arccosh": _unary("acosh"),
    "arcsin": _unary("asin"),
    "arcsinh": _unary("asinh"),
    "arctan": _unary("atan"),
    "arctanh": _unary("atanh"),
    "cos": _unary("cos"),
    "cosh": _unary("cosh"),
    "sin": _unary("sin"),
    "sinh": _unary("sinh"),
    "tan": _unary("tan"),
    "ceil": _unary("ceil"),
    "floor": _unary("floor"),
    "round": _round,
    "rint": _rint,
    "fix": _unary("trunc"),
    "trunc": _unary("trunc"),
    "sign": _unary("sign"),
    "erf": _unary("erf"),
    "exp": _unary("exp"),
    "log": _unary("log"),
    "log2": _unary("log2"),
    "log10": _unary("log10"),
    "sqrt": _unary("sqrt"),
    "rsqrt": _unary("rsqrt"),
    "negative": _unary("negative"),
    "logical_not": lambda ins, a, c: R("cast")(
        R("equal")(ins[0], c.scalar(0, ins[0])), c.dtype(ins[0])),
    "square": _square,
    "reciprocal": _reciprocal,
    "expm1": _in_float64(_expm1),
    "log1p": _in_float64(_log1p),
    "cbrt": _in_float64(_cbrt),
    "rcbrt": _in_float64(_rcbrt),
    "clip": _clip,
    "smooth_l1": _in_float64(_smooth_l1),
    # binary (same shape and broadcasting)
    "elemwise_add": _binary("add"),
    "elemwise_sub": _binary("subtract"),
    "elemwise_mul": _binary("multiply"),
    "elemwise_div": _binary("divide"),
    "broadcast_add": _binary("add"),
    "broadcast_plus": _binary("add"),
    "broadcast_sub": _binary("subtract"),
    "broadcast_minus": _binary("subtract"),
    "broadcast_mul": _binary("multiply"),
    "broadcast_div": _binary("divide"),
    "broadcast_power": _binary("power"),
    "broadcast_maximum": _binary("maximum"),
    "broadcast_minimum": _binary("minimum"),
    "_maximum": _binary("maximum"),
    "_minimum": _binary("minimum"),
    "_npi_power": _binary("power"),
    "broadcast_equal": _cmp("equal"),
    "broadcast_not_equal": _cmp("not_equal"),
    "broadcast_greater": _cmp("greater"),
    "broadcast_greater_equal": _cmp("greater_equal"),
    "broadcast_lesser": _cmp("less"),
    "broadcast_lesser_equal": _cmp("less_equal"),
    "_equal": _cmp("equal"),
    "_not_equal": _cmp("not_equal"),
    "_greater": _cmp("greater"),
    "_greater_equal": _cmp("greater_equal"),
    "_lesser": _cmp("less"),
    "_lesser_equal": _cmp("less_equal"),
    "_npi_less": _cmp("less", keep_dtype=False),
    "_npi_less_equal": _cmp("less_equal", keep_dtype=False),
    "_npi_greater": _cmp("greater", keep_dtype=False),
    "_npi_greater_equal": _cmp("greater_equal", keep_dtype=False),
    "_npi_equal": _cmp("equal", keep_dtype=False),
    "_npi_not_equal": _cmp("not_equal", keep_dtype=False),
    "broadcast_logical_and": _logical("logical_and"),
    "broadcast_logical_or": _logical("logical_or"),
    "broadcast_logical_xor": _logical("logical_xor"),
    # with a scalar
    "__add_scalar__": _scalar_op("add"),
    "_plus_scalar": _scalar_op("add"),
    "_npi_add_scalar": _scalar_op("add", numpy=True),
    "__sub_scalar__": _scalar_op("subtract"),
    "_minus_scalar": _scalar_op("subtract"),
    "_npi_subtract_scalar": _scalar_op("subtract", numpy=True),
    "_npi_rsubtract_scalar": _scalar_op("subtract", reverse=True, numpy=True),
    "__rsub_scalar__": _scalar_op("subtract", reverse=True),
    "_rminus_scalar": _scalar_op("subtract", reverse=True),
    "__mul_scalar__": _scalar_op("multiply"),
    "_mul_scalar": _scalar_op("multiply"),
    "_npi_multiply_scalar": _scalar_op("multiply", numpy=True),
    "__div_scalar__": _scalar_op("divide"),
    "_div_scalar": _scalar_op("divide"),
    "_npi_true_divide_scalar": _scalar_op("divide", numpy=True),
    "__rdiv_scalar__": _scalar_op("divide", reverse=True),
    "_rdiv_scalar": _scalar_op("divide", reverse=True),
    "__pow_scalar__": _scalar_op("power"),
    "_power_scalar": _scalar_op("power"),
    "_npi_power_scalar": _scalar_op("power", numpy=True),
    "_npi_rpower_scalar": _scalar_op("power", reverse=True, numpy=True),
    "_npi_rtrue_divide_scalar": _scalar_op("divide", reverse=True, numpy=True),
    "__rpow_scalar__": _scalar_op("power", reverse=True),
    "_rpower_scalar": _scalar_op("power", reverse=True),
    "_maximum_scalar": _scalar_op("maximum"),
    "_minimum_scalar": _scalar_op("minimum"),
    "_equal_scalar": _scalar_op("equal", cmp=True),
    "_not_equal_scalar": _scalar_op("not_equal", cmp=True),
    "_greater_scalar": _scalar_op("greater", cmp=True),
    "_greater_equal_scalar": _scalar_op("greater_equal", cmp=True),
    "_lesser_scalar": _scalar_op("less", cmp=True),
    "_lesser_equal_scalar": _scalar_op("less_equal", cmp=True),
    "where": _where,
    "_npi_where": _npi_where,
    "_npi_where_rscalar": _npi_where_rscalar,
    "_npi_where_lscalar": _npi_where_lscalar,
    "_npi_where_scalar2": _npi_where_scalar2,
    "add_n": _add_n,
    "ElementWiseSum": _add_n,
    # identities, copies, casts
    "_copy": _copy,
    "_np_copy": _copy,
    "_npi_copy": _copy,
    "identity": _copy,
    "BlockGrad": _identity,
    "stop_gradient": _identity,
    "make_loss": _identity,
    "MakeLoss": _identity,
    "Dropout": _dropout,
    "Cast": _cast,
    "cast": _cast,
    "amp_cast": _cast,
    "amp_multicast": _amp_multicast,
    # reductions
    "sum": _reduce("sum"),
    "sum_axis": _reduce("sum"),
    "mean": _reduce("mean"),
    "max": _reduce("max"),
    "max_axis": _reduce("max"),
    "min": _reduce("min"),
    "min_axis": _reduce("min"),
    "prod": _reduce("prod"),
    "argmax": _arg("argmax"),
    "argmin": _arg("argmin"),
    "argsort": _argsort,
    "sort": _sort,
    "norm": _norm,
    "topk": _topk,
    "_np_cumsum": _np_cumsum,
    "cumsum": _np_cumsum,
    "pick": _pick,
    # creation
    "_zeros": _zeros,
    "_ones": _ones,
    "_full": _full,
    "zeros_like": _zeros_like,
    "ones_like": _ones_like,
    "_arange": _arange,
    "_contrib_arange_like": _arange_like,
    "shape_array": _shape_array,
}

def _angle(factor):
    """MXNet's ``degrees`` / ``radians``: ``x * factor`` (integers in double precision,
    truncated back, as the other float functions: ``degrees(1) = 57``)."""
    return _in_float64(lambda ins, a, c: R("multiply")(ins[0], c.scalar(factor, ins[0])))


TENSOR_CONVERTERS["degrees"] = _angle(180.0 / np.pi)
TENSOR_CONVERTERS["radians"] = _angle(np.pi / 180.0)
# MXNet's NumPy interface (npx.set_np()) names its unary operators _npi_<name>; on integer and
# float data they compute what the legacy operators of the same name compute (MXNet 1.9.1,
# measured: sin / cbrt / degrees of int32 stay int32, truncated)
for _name in ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh",
              "arccosh", "arctanh", "cbrt", "expm1", "log1p", "square", "reciprocal", "log2",
              "log10", "floor", "ceil", "trunc", "fix", "rint", "sign", "degrees", "radians"):
    TENSOR_CONVERTERS.setdefault(f"_npi_{_name}", TENSOR_CONVERTERS[_name])
TENSOR_CONVERTERS.setdefault("_npx_relu", TENSOR_CONVERTERS["relu"])
TENSOR_CONVERTERS.setdefault("_npx_sigmoid", TENSOR_CONVERTERS["sigmoid"])

__all__ = ["TENSOR_CONVERTERS"]

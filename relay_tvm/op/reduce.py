"""Reductions (tvm.relay.op.reduce): ``axis`` (None = all), ``keepdims``, ``exclude``.

``sum``, ``mean``, ``max``, ``min``, ``prod``, ``all``, ``any``, ``argmax``, ``argmin``
(int32 indices into the flattened reduced axes, ``select_last_index`` for ties), ``variance``
(an operator of data and its mean, as Relay's) and the compositions ``std``, ``mean_variance``,
``mean_std``. Integer ``mean`` divides with truncation, as topi.divide does. TE computes are
topi's; ``mean``/``variance`` are topi sums divided by the element count; float ``max``/``min``
and ``argmax``/``argmin`` use ``_ieee``'s reducers (numpy semantics: NaN propagates, the first
NaN wins an arg reduction, the identity is -inf/+inf, not topi's lowest finite value).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import named, normalize_axis, out_dims, require_at_run_time, shape_str, tensor_args
from ._ieee import arg_reduce, is_float
from ._ieee import np_reduce as _ieee_np_reduce
from ._ieee import reduce as ieee_reduce
from .registry import OpPattern, make_call, register_gradient, register_op

REDUCE_ATTRS = (
    "relay.attrs.ReduceAttrs",
    [F("axis", "ints?", None), F("keepdims", "bool", False), F("exclude", "bool", False)],
)


def reduce_axes(attrs, ndim: int, op_name: str) -> tuple:
    """The sorted axes reduced, after negative axes and ``exclude``.

    Raises:
        TypeInferenceError: an axis out of range, or one axis named twice (``[1, 1]``, or
            ``[1, -1]`` of rank 2), as NumPy refuses it ("duplicate value in 'axis'"); it was
            reduced once, silently.
    """
    if attrs.axis is None:
        axes = tuple(range(ndim))
    else:
        seen = {}
        for a in attrs.axis:
            n = normalize_axis(a, ndim, op_name)
            if n in seen:
                raise TypeInferenceError(
                    f"{op_name}: axis {list(attrs.axis)} names axis {n} twice ({seen[n]} and "
                    f"{a}, data of rank {ndim}); each axis may be reduced once")
            seen[n] = a
        axes = tuple(sorted(seen))
    if attrs.exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


# reductions without an identity: over an empty axis NumPy raises (max, min, argmax, argmin) or
# warns and gives nan (mean, variance); Relay refuses them at type inference, as compiled code
# would otherwise return uninitialised memory or fail to build (division by a zero count)
_NO_IDENTITY = {
    "max": "NumPy raises", "min": "NumPy raises", "argmax": "NumPy raises",
    "argmin": "NumPy raises", "mean": "NumPy gives nan", "variance": "NumPy gives nan",
}


def reduce_rel(op_name: str, out_dtype: str | None = None, numeric: bool = True):
    """Relation of a reduction: the reduced shape; ``numeric`` rejects bool data (TVM has no
    min/max identity for bool and adds bools as 1-bit integers)."""

    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op_name)
        if ts is None:
            return None
        t = ts[0]
        if numeric and t.dtype == "bool":
            raise TypeInferenceError(
                f"{op_name}: data has dtype bool; use all/any, or cast to an integer dtype first"
            )
        axes = reduce_axes(attrs, t.ndim, op_name)
        if op_name in _NO_IDENTITY:
            empty = [a for a in sorted(axes) if isinstance(t.shape[a], int) and t.shape[a] == 0]
            if empty:
                raise TypeInferenceError(
                    f"{op_name}: reduces axis {empty[0]} of size 0 (data shape "
                    f"{shape_str(t.shape)}); {op_name} of an empty axis has no value "
                    f"({_NO_IDENTITY[op_name]})")
            # an Any axis: the kernel checks it where the value would be undefined (integer
            # mean / variance divide by a zero count: SIGFPE in compiled code)
            if _NO_IDENTITY[op_name] == "NumPy raises" or not is_float(t.dtype):
                for a in sorted(axes):
                    if not isinstance(t.shape[a], (int, AnyDim)):
                        require_at_run_time(
                            t.shape[a] > 0, f"reduces axis {a} of data, of size 0 at "
                            f"run time; {op_name} of an empty axis has no value")
        if attrs.keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
        else:
            shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
        return TensorType(shape, out_dtype or t.dtype)

    return rel


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


_HALF = ("float16", "bfloat16")
# reductions that accumulate: on half types they run in float32 and round once at the end, as
# numpy's half loops accumulate in float (npy_half_to_float) — a float16 running product or sum
# would overflow to inf (then NaN against a zero) where numpy's does not
_ACCUMULATING = (np.sum, np.prod)


def _np_reduce(fn):
    def ref(args, attrs, out_type):
        x = args[0]
        axes = reduce_axes(attrs, x.ndim, "")
        if str(x.dtype) in _HALF and (fn in _ACCUMULATING or fn is _mean_np):
            x = x.astype("float32")
        return np.asarray(fn(x, axis=axes, keepdims=attrs.keepdims)).astype(out_type.dtype)

    return ref


def _widened(x, compute):
    """``compute(x)`` in float32 for a half-type ``x``, cast back (see ``_ACCUMULATING``)."""
    from tvm import topi

    dtype = str(x.dtype)
    if dtype not in _HALF:
        return compute(x)
    return topi.cast(compute(topi.cast(x, "float32")), dtype)


def _mean_np(x, axis, keepdims):
    n = _count(x.shape, axis)
    if np.issubdtype(x.dtype, np.integer):
        if n == 0:
            raise ValueError(f"integer mean of an empty axis (data shape {x.shape}) has no value")
        s = np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
        q = np.abs(s) // n
        return (np.sign(s) * q).astype(x.dtype)
    with np.errstate(invalid="ignore"):  # an empty axis: nan (NumPy's value) without a warning
        return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype) / x.dtype.type(n)


def _topi_reduce(name):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        axes = reduce_axes(attrs, len(inputs[0].shape), name)
        if name in ("max", "min") and is_float(inputs[0].dtype):
            # topi.max/min drop NaN and start from the lowest/highest finite value
            return ieee_reduce(name, inputs[0], axes, attrs.keepdims)
        return _widened(inputs[0], lambda x: getattr(topi, name)(x, axis=list(axes),
                                                                 keepdims=attrs.keepdims))

    return compute


def _mean_compute(attrs, inputs, out_type):
    from tvm import topi

    axes = reduce_axes(attrs, len(inputs[0].shape), "mean")
    n = _count(_te_dims(inputs[0].shape), axes)
    return _widened(inputs[0], lambda x: topi.divide(
        topi.sum(x, axis=list(axes), keepdims=attrs.keepdims), _as_scalar(n, x.dtype)))


def _te_dims(shape):
    """A TE tensor's dimensions: ints where static, PrimExprs where symbolic (a kernel with
    ``Any`` dimensions)."""
    return [int(d) if type(d).__name__ == "IntImm" else d for d in shape]


def _as_scalar(n, dtype):
    """An element count (int or PrimExpr) as a scalar of ``dtype`` to divide by."""
    from tvm import tirx

    return tirx.const(n, dtype) if isinstance(n, int) else n.astype(dtype)


def _bool_input_rel(name):
    base = reduce_rel(name, numeric=False)

    def rel(types, attrs):
        ts = tensor_args(types, ("data",), name)
        if ts is None:
            return None
        if ts[0].dtype != "bool":
            raise TypeInferenceError(f"{name}: data must have dtype bool, got {ts[0].dtype}")
        return base(types, attrs)

    return rel


# (name, numpy reduction, TE compute, relation, doc)
def _np_max(x, axis=None, keepdims=False):
    return _ieee_np_reduce("max", x, axis, keepdims)


def _np_min(x, axis=None, keepdims=False):
    return _ieee_np_reduce("min", x, axis, keepdims)


_REDUCES = [
    ("sum", np.sum, _topi_reduce("sum"), reduce_rel("sum"), "Sum (topi.sum)."),
    (
        "mean",
        _mean_np,
        _mean_compute,
        reduce_rel("mean"),
        "Mean: sum / count (truncating for ints).",
    ),
    ("max", _np_max, _topi_reduce("max"), reduce_rel("max"),
     "Maximum (numpy.max: NaN propagates, -inf is the identity; -0 < +0 as IEEE 754-2019)."),
    ("min", _np_min, _topi_reduce("min"), reduce_rel("min"),
     "Minimum (numpy.min: NaN propagates, +inf is the identity; -0 < +0 as IEEE 754-2019)."),
    ("prod", np.prod, _topi_reduce("prod"), reduce_rel("prod"), "Product (topi.prod)."),
    (
        "all",
        np.all,
        _topi_reduce("all"),
        _bool_input_rel("all"),
        "Logical and of bools (topi.all).",
    ),
    ("any", np.any, _topi_reduce("any"), _bool_input_rel("any"), "Logical or of bools (topi.any)."),
]

for _name, _np_fn, _compute, _rel, _doc in _REDUCES:
    register_op(
        _name,
        num_inputs=1,
        arguments=("data",),
        attrs=REDUCE_ATTRS,
        rel=_rel,
        ref=_np_reduce(_np_fn),
        compute=_compute,
        pattern=OpPattern.COMM_REDUCE,
        doc=f"{_doc} Over axis (None: all), keepdims, exclude.",
        level=4,
    )


def _reduce_ctor(name):
    def ctor(data, axis=None, keepdims=False, exclude=False):
        if isinstance(axis, int):
            axis = (axis,)
        return make_call(name, [data], axis=axis, keepdims=keepdims, exclude=exclude)

    named(ctor, name)
    ctor.__doc__ = (
        f"``{name}`` of ``data`` over ``axis`` (an int, a tuple, or None for all axes).\n\n"
        f"Args:\n    keepdims: keep reduced axes with size 1.\n"
        f"    exclude: reduce over the axes NOT in ``axis``.\n"
    )
    return ctor


sum = _reduce_ctor("sum")  # noqa: A001 - Relay's names
mean = _reduce_ctor("mean")
max = _reduce_ctor("max")  # noqa: A001
min = _reduce_ctor("min")  # noqa: A001
prod = _reduce_ctor("prod")
all = _reduce_ctor("all")  # noqa: A001
any = _reduce_ctor("any")  # noqa: A001


# ---- argmax / argmin ---------------------------------------------------------------------------

ARG_REDUCE_ATTRS = (
    "relay.attrs.ArgReduceAttrs",
    [
        F("axis", "ints?", None),
        F("keepdims", "bool", False),
        F("exclude", "bool", False),
        F("select_last_index", "bool", False),
    ],
)


def _arg_ref(fn):
    def ref(args, attrs, out_type):
        x = args[0]
        axes = reduce_axes(attrs, x.ndim, "")
        rest = [i for i in range(x.ndim) if i not in axes]
        y = np.transpose(x, rest + list(axes))
        # the reduced size spelled out: -1 is ambiguous when a kept axis is empty
        y = y.reshape([x.shape[i] for i in rest] + [int(np.prod([x.shape[i] for i in axes]))])
        if attrs.select_last_index:
            idx = y.shape[-1] - 1 - fn(np.flip(y, -1), axis=-1)
        else:
            idx = fn(y, axis=-1)
        if attrs.keepdims:
            idx = idx.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])
        return np.asarray(idx).astype(out_type.dtype)

    return ref


def _arg_compute(name):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        x = inputs[0]
        ndim = len(x.shape)
        axes = reduce_axes(attrs, ndim, name)
        kind = name[3:]
        if len(axes) == 1:
            return arg_reduce(kind, x, axes[0], attrs.keepdims, attrs.select_last_index,
                              out_type.dtype)
        # flatten the reduced axes (last) into one, as the flattened index is returned
        rest = [i for i in range(ndim) if i not in axes]
        y = topi.transpose(x, rest + list(axes)) if rest + list(axes) != list(range(ndim)) else x
        flat = 1  # symbolic dimensions (a VM kernel) multiply as PrimExprs
        for a in axes:
            flat = flat * x.shape[a]
        y = topi.reshape(y, [x.shape[i] for i in rest] + [flat])
        out = arg_reduce(kind, y, len(rest), False, attrs.select_last_index, out_type.dtype)
        if attrs.keepdims:
            out = topi.reshape(out, out_dims(out_type.shape))
        return out

    return compute


for _name, _np_fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    register_op(
        _name,
        num_inputs=1,
        arguments=("data",),
        attrs=ARG_REDUCE_ATTRS,
        rel=reduce_rel(_name, "int32"),
        ref=_arg_ref(_np_fn),
        compute=_arg_compute(_name),
        pattern=OpPattern.COMM_REDUCE,
        doc=f"int32 index of the {_name[3:]} over axis (flattened over several axes; "
        f"numpy.{_name}: the first NaN wins, then the first extreme value).",
        level=4,
    )


def _arg_ctor(name):
    def ctor(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
        if isinstance(axis, int):
            axis = (axis,)
        return make_call(
            name,
            [data],
            axis=axis,
            keepdims=keepdims,
            exclude=exclude,
            select_last_index=select_last_index,
        )

    named(ctor, name)
    ctor.__doc__ = (
        f"int32 index of the {name[3:]} of ``data`` over ``axis`` (None: all axes; several axes "
        f"give an index into their flattening). Ties give the first index unless "
        f"``select_last_index``."
    )
    return ctor


argmax = _arg_ctor("argmax")
argmin = _arg_ctor("argmin")


# ---- variance and its compositions -------------------------------------------------------------

VARIANCE_ATTRS = (
    "relay.attrs.VarianceAttrs",
    [
        F("axis", "ints?", None),
        F("keepdims", "bool", False),
        F("exclude", "bool", False),
        F("unbiased", "bool", False),
    ],
)


def _variance_rel(types, attrs):
    ts = tensor_args(types, ("data", "mean"), "variance")
    if ts is None:
        return None
    data, m = ts
    if not data.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"variance: data must have a float dtype, got {data.dtype}")
    if m.dtype != data.dtype:
        raise TypeInferenceError(f"variance: mean has dtype {m.dtype}, data has {data.dtype}")
    axes = reduce_axes(attrs, data.ndim, "variance")
    kept = tuple(1 if i in axes else d for i, d in enumerate(data.shape))
    from ._common import broadcast_shapes

    broadcast_shapes(data.shape, m.shape, "variance data and mean")
    if m.ndim != data.ndim:
        raise TypeInferenceError(
            f"variance: mean must have data's rank with reduced axes kept (shape "
            f"{kept}), got rank {m.ndim}"
        )
    return reduce_rel("variance")([data], attrs)


def _variance_ref(args, attrs, out_type):
    x, m = args
    axes = reduce_axes(attrs, x.ndim, "variance")
    n = _count(x.shape, axes) - (1 if attrs.unbiased else 0)
    wide = x.dtype if str(x.dtype) not in _HALF else np.dtype("float32")
    d = (x.astype(wide) - m.astype(wide)).astype(wide)
    with np.errstate(invalid="ignore", divide="ignore"):  # no element: nan, as NumPy, quietly
        out = np.sum(d * d, axis=axes, keepdims=attrs.keepdims, dtype=wide) / wide.type(n)
    return out.astype(x.dtype)


def _variance_compute(attrs, inputs, out_type):
    from tvm import topi

    x, m = inputs
    axes = reduce_axes(attrs, len(x.shape), "variance")
    n = _count(_te_dims(x.shape), axes) - (1 if attrs.unbiased else 0)
    dtype = str(x.dtype)
    if dtype in _HALF:  # in float32, as the reference (see _ACCUMULATING)
        x, m = topi.cast(x, "float32"), topi.cast(m, "float32")
    d = topi.subtract(x, m)
    s = topi.sum(topi.multiply(d, d), axis=list(axes), keepdims=attrs.keepdims)
    return topi.cast(topi.divide(s, _as_scalar(n, x.dtype)), dtype)


register_op(
    "variance",
    num_inputs=2,
    arguments=("data", "mean"),
    attrs=VARIANCE_ATTRS,
    rel=_variance_rel,
    ref=_variance_ref,
    compute=_variance_compute,
    pattern=OpPattern.COMM_REDUCE,
    doc="Variance of data around mean (keepdims-shaped) over axis; unbiased divides by N-1.",
    level=4,
)


def _axis_tuple(axis):
    return (axis,) if isinstance(axis, int) else axis


def variance(data, axis=None, keepdims=False, exclude=False, unbiased=False, with_mean=None):
    """Variance of ``data`` over ``axis`` (float dtypes); ``unbiased`` divides by N - 1.
    ``with_mean`` (tvm.relay's argument) is a precomputed mean with the reduced axes kept
    (shape of ``mean(data, axis, keepdims=True)``); by default it is computed here. Half types
    compute in float32 and round once."""
    axis = _axis_tuple(axis)
    m = mean(data, axis, True, exclude) if with_mean is None else with_mean
    return make_call(
        "variance", [data, m], axis=axis, keepdims=keepdims, exclude=exclude, unbiased=unbiased
    )


def std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """Standard deviation: ``sqrt(variance(...))`` with the same arguments."""
    from .tensor import sqrt

    return sqrt(variance(data, axis, keepdims, exclude, unbiased))


def mean_variance(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The tuple ``(mean, variance)`` of ``data`` over ``axis``."""
    from ..ir.expr import Tuple

    axis = _axis_tuple(axis)
    m = mean(data, axis, True, exclude)
    v = make_call(
        "variance", [data, m], axis=axis, keepdims=keepdims, exclude=exclude, unbiased=unbiased
    )
    if not keepdims:
        m = mean(data, axis, False, exclude)
    return Tuple([m, v])


def mean_std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The tuple ``(mean, std)`` of ``data`` over ``axis``."""
    from ..ir.expr import Tuple
    from .tensor import sqrt

    mv = mean_variance(data, axis, keepdims, exclude, unbiased)
    return Tuple([mv.fields[0], sqrt(mv.fields[1])])


def logsumexp(data, axis=None, keepdims=False):
    """``log(sum(exp(data)))`` over ``axis``, computed stably as
    ``max + log(sum(exp(data - max)))`` (tvm.relay's composition), with an infinite max
    replaced by 0 so that a row of ``-inf`` gives ``-inf`` and one holding ``+inf`` gives
    ``+inf`` (as ``numpy.logaddexp.reduce``), not NaN."""
    from .tensor import add, exp, isinf, log, subtract, where, zeros_like
    from .transform import squeeze

    axis = _axis_tuple(axis)
    m = max(data, axis, keepdims=True)
    m = where(isinf(m), zeros_like(m), m)
    s = sum(exp(subtract(data, m)), axis, keepdims=keepdims)
    if not keepdims:
        m = squeeze(m, axis) if axis is not None else squeeze(m)
    return add(m, log(s))


__all__ = [
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "all",
    "any",
    "argmax",
    "argmin",
    "variance",
    "std",
    "mean_variance",
    "mean_std",
    "logsumexp",
    "reduce_axes",
    "reduce_rel",
    "REDUCE_ATTRS",
]


# ---- gradients (FPrimalGradient) --------------------------------------------------------------
# The output gradient is reshaped back to the input's rank (reduced axes kept as 1) and
# broadcast over the input.


def _kept(orig, g):
    """``g`` with the reduced axes of ``orig`` restored as size-1 axes."""
    from .transform import reshape

    x = orig.args[0]
    axes = reduce_axes(orig.attrs, x.checked_type.ndim, orig.op.name)
    shape = [1 if i in axes else d for i, d in enumerate(x.checked_type.concrete_shape)]
    return reshape(g, shape), axes


@register_gradient("sum")
def _sum_grad(orig, g):
    from .shape_ops import broadcast_to_like

    k, _ = _kept(orig, g)
    return [broadcast_to_like(k, orig.args[0])]


@register_gradient("mean")
def _mean_grad(orig, g):
    from ..ir.expr import const
    from .shape_ops import broadcast_to_like
    from .tensor import divide

    k, axes = _kept(orig, g)
    n = _count(orig.args[0].checked_type.concrete_shape, axes)
    return [broadcast_to_like(divide(k, const(n, orig.checked_type.dtype)), orig.args[0])]


def _extremum_grad(orig, g):
    """The gradient flows to the elements equal to the extremum, shared among ties."""
    from .shape_ops import broadcast_to_like
    from .tensor import divide, equal, multiply
    from .transform import cast_like, reshape

    x = orig.args[0]
    k, axes = _kept(orig, g)
    m = reshape(orig, [1 if i in axes else d for i, d in enumerate(x.checked_type.concrete_shape)])
    hit = cast_like(equal(x, broadcast_to_like(m, x)), x)
    count = sum(hit, tuple(axes), keepdims=True) if axes else hit
    return [multiply(divide(hit, count), broadcast_to_like(k, x))]


register_gradient("max", _extremum_grad)
register_gradient("min", _extremum_grad)
for _name in ("argmax", "argmin"):
    register_gradient(_name, lambda orig, g: [make_call("zeros_like", [orig.args[0]])])


@register_gradient("variance")
def _variance_grad(orig, g):
    """d var / d x = 2 (x - mean) / N (the mean's own gradient sums to zero over the axes)."""
    from ..ir.expr import const
    from .shape_ops import broadcast_to_like
    from .tensor import multiply, subtract

    x, m = orig.args
    k, axes = _kept(orig, g)
    n = _count(x.checked_type.concrete_shape, axes) - (1 if orig.attrs.unbiased else 0)
    dx = multiply(multiply(subtract(x, m), const(2.0 / n, x.checked_type.dtype)), k)
    return [broadcast_to_like(dx, x), make_call("zeros_like", [m])]


@register_gradient("prod")
def _prod_grad(orig, g):
    """d prod / d x_i = prod / x_i (for nonzero x_i, as tvm.relay had it)."""
    from .shape_ops import broadcast_to_like
    from .tensor import divide, multiply

    x = orig.args[0]
    k, _ = _kept(orig, g)
    p, _ = _kept(orig, orig)
    return [divide(multiply(broadcast_to_like(k, x), broadcast_to_like(p, x)), x)]

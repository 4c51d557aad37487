"""The realize step (``QuantizeRealize``, tvm.relay 0.19's ``realize.cc``): turn the
calibrated float32 program that simulates quantization into integer arithmetic.

A :class:`QRealizeIntExpr` is an integer tensor ``data`` of dtype ``dtype`` standing for the
real values ``data * dom_scale``. ``simulated_quantize`` of a real value becomes
``clip(round(x / dom_scale))``; of an integer value with another scale a rescaling: a right
shift with rounding (scales differing by a power of two, the "power2" weights with
"global_scale") or a fixed-point multiplication (Q31 multiplier; rounding "UPWARD" adds half
and shifts, "TONEAREST" rounds half away from zero; int64 arithmetic, or the same values in
int32 with ``qnn.multiply_high`` where :func:`rescale` shows that exact). conv2d/dense/batch_matmul take
``dtype_input`` data and ``dtype_weight`` weights and accumulate in ``dtype_activation``
(scale = product of the scales); add aligns both sides to the smaller scale. Values leaving
integer arithmetic are cast to float32 and multiplied by their scale.

relay_tvm extensions (see :func:`~.qconfig.qconfig`): with ``weight_scale="channel_max"`` a
kernel has one scale per output channel, so its accumulator carries a scale array (``(C, 1,
1)`` for NCHW); relu/stop_fusion keep it, a folded bias is added in ``dtype_activation`` at
those scales, add brings the other side to them, the next requantization uses one fixed-point
factor per channel, and any other operator first rescales to one scale
(:func:`to_scalar_scale`). With an unsigned ``dtype_input`` the fields quantized with
``sign=False`` are stored in that dtype (:func:`narrow_dtype`). global_avg_pool2d pools the
dequantized float32 values and avg_pool2d rounds its division (0.19 truncated both).

Operators outside ``debug_enabled_ops`` are not realized (they run in float on dequantized
arguments, as in the simulation), and a value is narrowed to 8 bits (``cast_hint``,
max_pool2d) only where a ``simulated_quantize`` clipped it into range
(:attr:`QRealizeIntExpr.bound`); 0.19 narrowed any integer value there.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import RelayError
from ..ir.expr import Call, Constant, Tuple, const
from ..op import tensor as _t
from ..op import transform as _tr
from ..op.op_attrs import register_op_attr
from ..qnn._bound import INT32_SAFE as _INT32_SAFE
from ..qnn._bound import value_bound
from ._forward import TempExpr
from ._op import OP_NAME
from ._partition import forward_op
from .qconfig import QAnnotateKind, current_qconfig

ATTR = "FQRealizeRewrite"


def _as_scale(s):
    """A float (one scale) or a float32 array (one per channel, broadcasting to the data)."""
    a = np.asarray(s, dtype=np.float32)
    return float(a) if a.ndim == 0 else a


def _per_channel(s) -> bool:
    return isinstance(s, np.ndarray)


class QRealizeIntExpr(TempExpr):
    """Integer ``data`` (dtype ``dtype``) standing for ``data * dom_scale``; ``dom_scale`` is a
    float, or (``weight_scale="channel_max"``) a float32 array broadcasting to ``data`` (one
    scale per channel, e.g. shape ``(C, 1, 1)`` for NCHW). ``bound`` is ``(lo, hi)`` when every
    value of ``data`` is known to lie in ``[lo, hi]`` (clipped by a ``simulated_quantize`` and
    carried through operators that keep the range), else None (an accumulator, a sum)."""

    __slots__ = ("data", "dom_scale", "dtype", "unsigned", "bound")

    def __init__(self, data, dom_scale, dtype: str, unsigned: bool = False, bound=None):
        self.data = data
        self.dom_scale = _as_scale(dom_scale)
        self.dtype = dtype
        self.unsigned = bool(unsigned)  # quantized to [0, 2**nbit - 1] (sign=False)
        self.bound = None if bound is None else (float(bound[0]), float(bound[1]))

    def realize(self):
        return _t.multiply(_tr.cast(self.data, "float32"), const(self.dom_scale, "float32"))


def fits(x, dtype: str) -> bool:
    """Whether the values of the :class:`QRealizeIntExpr` ``x`` are known to fit ``dtype``, so
    that a cast to it keeps them (the partition's ``cast_hint`` to 8 bits of an int32
    accumulator that no ``simulated_quantize`` clipped wrapped: 99.5% error with
    ``debug_enabled_ops=["nn.conv2d"]``, fresh-user trial)."""
    if x.bound is None:
        return False
    info = np.iinfo(dtype)
    return info.min <= x.bound[0] and x.bound[1] <= info.max


def _relu_bound(b):
    return None if b is None else (max(b[0], 0.0), max(b[1], 0.0))


def _with_zero(b):
    """A bound widened to hold 0 (values scaled by factors <= 1, averages with padding)."""
    return None if b is None else (min(b[0], 0.0), max(b[1], 0.0))


def _scalar(e, what: str) -> float:
    if type(e) is not Constant or e.data.size != 1:
        raise RelayError(f"realize: {what} of {OP_NAME} must be a constant scalar (run "
                         f"calibration first), got {type(e).__name__}")
    return float(np.asarray(e.data).reshape(()))


def narrow_dtype(x) -> str:
    """The storage dtype of a quantized INPUT value: ``dtype_input``'s unsigned twin for an
    unsigned field, its signed twin otherwise (``uint8`` -> ``int8`` for a field that can be
    negative)."""
    base = current_qconfig().dtype_input.lstrip("u")
    return "u" + base if getattr(x, "unsigned", False) else base


def _scale_arg(e):
    if type(e) is Constant and e.data.size > 1:
        return _as_scale(np.asarray(e.data))
    return _scalar(e, "dom_scale")


def fixed_point_multiplier_shift(factor: float):
    """``(multiplier, shift)`` with ``factor = multiplier * 2**(shift - 31)``, ``multiplier`` a
    Q31 integer in ``[2**30, 2**31)`` (qnn's GetFixedPointMultiplierShift)."""
    if factor == 0:
        return 0, 0
    sig, exp = math.frexp(factor)
    mult = int(round(sig * (1 << 31)))
    if mult == 1 << 31:
        mult //= 2
        exp += 1
    return mult, exp


def _fixed_point_consts(factor):
    """Q31 multipliers and right shifts (int64 arrays) with ``factor = mult * 2**-total``."""
    f = np.asarray(factor, dtype=np.float64)
    if (f < 0).any() or (f >= 2.0 ** 30).any() or not np.isfinite(f).all():
        raise RelayError(f"realize: a rescaling factor must be in [0, 2**30), got "
                         f"{f.min()}..{f.max()} (scales too far apart)")
    sig, exp = np.frexp(f)
    mult = np.round(sig * 2.0 ** 31).astype(np.int64)
    top = mult == (1 << 31)
    mult, exp = np.where(top, mult // 2, mult), np.where(top, exp + 1, exp).astype(np.int64)
    total = 31 - exp  # >= 1 as factor < 2**30
    tiny = total > 62  # factor < 2**-31: every int32 value rounds to 0
    return np.where(tiny, 0, mult), np.where(tiny, 31, total)


def fixed_point_multiply(data, factor, rounding: str):
    """``round(data * factor)`` of an int64 expression in int64 arithmetic: multiply by a Q31
    multiplier and shift right with rounding ("UPWARD": add half; "TONEAREST": half away from
    zero). ``factor`` is a float in ``[0, 2**30)`` or an array of them broadcasting to ``data``
    (one per channel); ``|data| < 2**32`` keeps the product inside int64."""
    mult, total = _fixed_point_consts(factor)
    half = np.left_shift(np.int64(1), total - 1)

    def c(a):
        a = np.asarray(a, dtype=np.int64)
        return const(int(a), "int64") if a.ndim == 0 else const(a, "int64")

    data = _t.multiply(data, c(mult))
    if rounding == "UPWARD":
        data = _t.add(data, c(half))
    else:
        data = _t.add(data, _t.where(_t.greater_equal(data, const(0, "int64")), c(half),
                                     c(half - 1)))
    return _t.right_shift(data, c(total))


def rescale(data, dtype: str, factor, rounding: str, bound: int | None = None):
    """``round(data * factor)`` of an integer expression ``data`` of dtype ``dtype``
    (:func:`fixed_point_multiply`'s result exactly): in int32 with ``qnn.multiply_high``
    when the rounding is "UPWARD" and ``data`` fits int32
    (:func:`~relay_tvm.qnn.op._multiply_high.int32_fixed_point_multiply`; factors of 2**-2
    and more need a bound of ``|data|`` small enough to shift ``data`` left: the smallest of
    ``bound``, ``dtype``'s range and :func:`._bound.value_bound`), else in int64. The result
    is int32 or int64."""
    from ..qnn.op._multiply_high import int32_fixed_point_multiply

    mult, total = _fixed_point_consts(factor)
    if rounding == "UPWARD" and dtype in _INT32_SAFE:
        known = [b for b in (bound, _INT32_SAFE[dtype], value_bound(data)) if b is not None]
        bound = min(int(b) for b in known)
        out = int32_fixed_point_multiply(data if dtype == "int32" else _tr.cast(data, "int32"),
                                         mult, total, bound)
        if out is not None:
            return out
    return fixed_point_multiply(_tr.cast(data, "int64"), factor, rounding)



def to_scalar_scale(x):
    """A per-channel-scaled :class:`QRealizeIntExpr` rescaled to one scale (the largest, so
    every factor is <= 1); others unchanged."""
    if not isinstance(x, QRealizeIntExpr) or not _per_channel(x.dom_scale):
        return x
    top = float(x.dom_scale.max())
    data = rescale(x.data, x.dtype, x.dom_scale.astype(np.float64) / top,
                   current_qconfig().rounding)
    return QRealizeIntExpr(_tr.cast(data, x.dtype), top, x.dtype, x.unsigned, _with_zero(x.bound))


def _register(*names):
    """Register the decorated rule for ``names``. As in annotation, an operator outside
    ``debug_enabled_ops`` runs in float: its rule is not applied, so its integer arguments are
    dequantized (without this, relu and cast_hint of a conv2d's int32 accumulator ran on the
    integers and cast_hint narrowed them to int8 unclipped; fresh-user trial)."""

    def deco(fn):
        def guarded(ref_call, new_args, ctx):
            if not current_qconfig().guard(ref_call):
                return None
            return fn(ref_call, new_args, ctx)

        for n in names:
            register_op_attr(n, ATTR, fn if n == OP_NAME else guarded)
        return fn

    return deco


@_register(OP_NAME)
def _simulated_quantize(ref_call, new_args, ctx):
    cfg = current_qconfig()
    if ref_call.attrs.rounding != "round":
        raise RelayError(f"realize: {OP_NAME} rounding {ref_call.attrs.rounding!r} is not "
                         f"supported (only 'round')")
    if int(ref_call.attrs.kind) == QAnnotateKind.IDENTITY:
        return None
    uns = not ref_call.attrs.sign
    dom_scale = _scale_arg(new_args[1])
    lo, hi = _scalar(new_args[2], "clip_min"), _scalar(new_args[3], "clip_max")
    x = new_args[0]
    if isinstance(x, QRealizeIntExpr):
        if _per_channel(dom_scale):
            raise RelayError(f"realize: a per-channel dom_scale of {OP_NAME} applies to a "
                             f"constant weight, not to an integer value")
        data, idom, odom = x.data, x.dom_scale, dom_scale
        if _per_channel(idom):  # one fixed-point factor per channel
            data = rescale(data, x.dtype, idom.astype(np.float64) / odom, cfg.rounding)
            return QRealizeIntExpr(_tr.cast(_t.clip(data, lo, hi), x.dtype), odom, x.dtype, uns,
                                   (lo, hi))
        if idom == odom:
            return QRealizeIntExpr(_t.clip(data, lo, hi), odom, x.dtype, uns, (lo, hi))
        shift = math.log2(odom / idom)
        act = cfg.dtype_activation
        if shift == int(shift):
            shift = int(shift)
            if shift > 0:
                if cfg.round_for_shift:
                    data = _t.add(data, const(1 << (shift - 1), act))
                data = _t.right_shift(data, const(shift, act))
            else:
                data = _t.left_shift(data, const(-shift, act))
            return QRealizeIntExpr(_t.clip(data, lo, hi), odom, x.dtype, uns, (lo, hi))
        data = rescale(data, x.dtype, idom / odom, cfg.rounding)
        return QRealizeIntExpr(_tr.cast(_t.clip(data, lo, hi), x.dtype), odom, x.dtype, uns,
                               (lo, hi))
    if isinstance(x, TempExpr):
        x = x.realize()
    inv = (1.0 / dom_scale).astype(np.float32) if _per_channel(dom_scale) else 1.0 / dom_scale
    scaled = _t.multiply(x, const(inv, "float32"))
    return QRealizeIntExpr(_t.clip(_t.round(scaled), lo, hi), dom_scale, "float32", uns,
                           (lo, hi))


def _int_anchor(ref_call, new_args, data_dtype, weight_dtype):
    cfg = current_qconfig()
    lhs, rhs = new_args
    if data_dtype == cfg.dtype_input:
        data_dtype = narrow_dtype(lhs)
    ldata = lhs.data if lhs.dtype == data_dtype else _tr.cast(lhs.data, data_dtype)
    rdata = rhs.data if rhs.dtype == weight_dtype else _tr.cast(rhs.data, weight_dtype)
    if (ref_call.op.name == "nn.conv2d" and {data_dtype, weight_dtype} <= {"int8", "uint8"}
            and cfg.dtype_activation == "int32"):
        # exact: 8-bit values in int16 operands, which the x86 template multiplies in pairs
        # (vpmaddwd, backend/schedule/cpu_int.py) instead of one product per int32 lane; on
        # VNNI targets AlterOpLayout makes them uint8 x int8 again (transform/int8_conv.py)
        ldata, rdata = _tr.cast(ldata, "int16"), _tr.cast(rdata, "int16")
    attrs = ref_call.attrs.with_fields(out_dtype=cfg.dtype_activation)
    out = Call(ref_call.op, [ldata, rdata], attrs, (), ref_call.span)
    wscale = rhs.dom_scale
    if _per_channel(wscale):  # (O, 1, ...) over the kernel -> (O, 1, ...) over the output
        wscale = wscale.reshape((-1,) + (1,) * (wscale.ndim - 2))
    return QRealizeIntExpr(out, np.float32(lhs.dom_scale) * np.float32(wscale),
                           cfg.dtype_activation)


@_register("nn.conv2d", "nn.conv1d", "nn.dense", "nn.batch_matmul")
def _anchor(ref_call, new_args, ctx):
    if all(isinstance(a, QRealizeIntExpr) for a in new_args):
        cfg = current_qconfig()
        lhs, rhs = new_args
        if _per_channel(rhs.dom_scale) and ref_call.op.name == "nn.batch_matmul":
            raise RelayError("realize: per-channel weight scales apply to conv1d/conv2d/dense "
                             "kernels only, not nn.batch_matmul")
        return _int_anchor(ref_call, [to_scalar_scale(lhs), rhs], cfg.dtype_input,
                           cfg.dtype_weight)
    return None


def _product_bound(a, b):
    """The bound of the elementwise product of two bounded values, else None."""
    if a is None or b is None:
        return None
    ends = [x * y for x in a for y in b]
    return min(ends), max(ends)


@_register("multiply")
def _multiply(ref_call, new_args, ctx):
    """Integer product (scale: the product of the scales) of two values known to be clipped
    (:attr:`QRealizeIntExpr.bound`) so that it fits ``dtype_activation``: what annotation
    quantizes (a value and a WEIGHT/INPUT-quantized factor). Anything else (annotation left the
    multiply in float, e.g. an INPUT times a conv2d's unclipped int32 accumulator) runs in float
    on the dequantized arguments, as in the simulation: the int32 product of the int8 value and
    the accumulator wrapped (176% error against NumPy on a 2048-channel 1x1 conv2d; 0.19
    raised at annotation)."""
    if all(isinstance(a, QRealizeIntExpr) for a in new_args):
        new_args = [to_scalar_scale(a) for a in new_args]
        act = current_qconfig().dtype_activation
        bound = _product_bound(new_args[0].bound, new_args[1].bound)
        info = np.iinfo(act)
        if bound is None or not (info.min <= bound[0] and bound[1] <= info.max):
            return None  # in float: the forward rewrite dequantizes the arguments
        args = [a.data if a.dtype == act else _tr.cast(a.data, act) for a in new_args]
        return QRealizeIntExpr(forward_op(ref_call, args),
                               np.float32(new_args[0].dom_scale) * np.float32(
                                   new_args[1].dom_scale), act, bound=bound)
    return None


def _mul_and_div(data, s1: float, s2: float, dtype: str, rounding: str, src: str | None = None):
    """``data * s1 / s2`` for ``s1 >= s2`` (``data`` of dtype ``dtype``, holding values of
    dtype ``src`` when given)."""
    if s1 == s2:
        return data
    factor = s1 / s2
    shift = math.log2(factor)
    if shift == int(shift):
        return _t.left_shift(data, const(int(shift), dtype))
    if factor == int(factor):
        return _t.multiply(data, const(int(factor), dtype))
    out = rescale(data, dtype, factor, rounding, _INT32_SAFE.get(src or dtype))
    return _tr.cast(out, dtype)


def _is_input_sq(ref_arg) -> bool:
    return (isinstance(ref_arg, Call) and getattr(ref_arg.op, "name", None) == OP_NAME
            and int(ref_arg.attrs.kind) == QAnnotateKind.INPUT)


def unify_dtype_scale(ref_args, args, dtype=None):
    """Bring ``args`` (QRealizeIntExprs) to one dtype and one scale (the smallest of two, else
    ``global_scale / 2**(nbit_activation - 1)``); returns ``(datas, dtype, scale)``."""
    from ..op.annotation import stop_fusion

    cfg = current_qconfig()
    args = [to_scalar_scale(a) for a in args]
    if dtype is None:
        # dtype_input only where no side is rescaled: the side of the larger scale is
        # multiplied by s1 / s2 > 1, which in 8 bits wrapped (a concatenation of two branches
        # of different scales: 46% error against 1% simulated; fresh-user trial; 0.19 did the
        # same). dtype_activation holds the product; the consumer's quantize clips it
        narrow = (len(args) == 2 and args[1].dtype == cfg.dtype_input
                  and not cfg.dtype_input.startswith("u")
                  and args[0].dom_scale == args[1].dom_scale)
        dtype = cfg.dtype_input if narrow else cfg.dtype_activation
    datas = []
    for ref, a in zip(ref_args, args):
        d = a.data
        if a.dtype != dtype:
            d = _tr.cast(d, dtype)
        elif _is_input_sq(ref):
            d = _tr.cast(stop_fusion(_tr.cast(d, narrow_dtype(a))), dtype)
        datas.append(d)
    if len(args) == 2:
        s = min(args[0].dom_scale, args[1].dom_scale)
    else:
        s = float(np.float32(cfg.global_scale / 2.0 ** (cfg.nbit_activation - 1)))
    datas = [_mul_and_div(d, a.dom_scale, s, dtype, cfg.rounding, a.dtype)
             for d, a in zip(datas, args)]
    return datas, dtype, s


@_register("add")
def _add(ref_call, new_args, ctx):
    from ..op.annotation import stop_fusion

    if all(isinstance(a, QRealizeIntExpr) for a in new_args):
        if any(_per_channel(a.dom_scale) for a in new_args):
            return _add_per_channel(ref_call, new_args)
        act = current_qconfig().dtype_activation
        datas, dtype, s = unify_dtype_scale(ref_call.args, new_args, act)
        datas = [stop_fusion(d) if a.dtype == "float32" else d for d, a in zip(datas, new_args)]
        return QRealizeIntExpr(forward_op(ref_call, datas), s, dtype)
    return None


def _add_per_channel(ref_call, new_args):
    """add with a per-channel-scaled side (the base, an accumulator): the other side is brought
    to the base's scales; a constant weight (a folded bias) is quantized directly to
    ``dtype_activation`` at those scales."""
    from ..op.annotation import stop_fusion

    cfg = current_qconfig()
    act = cfg.dtype_activation
    b = 0 if _per_channel(new_args[0].dom_scale) else 1
    base, other, ref_other = new_args[b], new_args[1 - b], ref_call.args[1 - b]
    bdata = base.data if base.dtype == act else _tr.cast(base.data, act)
    scale = base.dom_scale.astype(np.float64)
    if (isinstance(ref_other, Call) and getattr(ref_other.op, "name", None) == OP_NAME
            and int(ref_other.attrs.kind) == QAnnotateKind.WEIGHT
            and type(ref_other.args[0]) is Constant):
        q = np.round(np.asarray(ref_other.args[0].data, dtype=np.float64) / scale)
        info = np.iinfo(act)
        if np.abs(q).max(initial=0) > info.max:
            raise RelayError(f"realize: a constant added to a per-channel accumulator does not "
                             f"fit {act} at its scale (max |value / scale| = {np.abs(q).max()})")
        odata = const(q.astype(act), act)
    else:
        odata = other.data
        if other.dtype != act:
            odata = _tr.cast(odata, act)
            if other.dtype == "float32":
                odata = stop_fusion(odata)
        elif _is_input_sq(ref_other):
            odata = _tr.cast(stop_fusion(_tr.cast(odata, narrow_dtype(other))), act)
        factor = np.asarray(other.dom_scale, dtype=np.float64) / scale
        if not np.all(factor == 1.0):
            odata = _tr.cast(rescale(odata, act, factor, cfg.rounding), act)
    datas = [bdata, odata] if b == 0 else [odata, bdata]
    return QRealizeIntExpr(forward_op(ref_call, datas), base.dom_scale, act)


@_register("clip")
def _clip(ref_call, new_args, ctx):
    x = to_scalar_scale(new_args[0])
    if isinstance(x, QRealizeIntExpr):
        s = x.dom_scale
        attrs = ref_call.attrs.with_fields(a_min=ref_call.attrs.a_min / s,
                                           a_max=ref_call.attrs.a_max / s)
        lo, hi = float(np.floor(float(attrs.a_min))), float(np.ceil(float(attrs.a_max)))
        if x.bound is not None:
            lo, hi = max(lo, x.bound[0]), min(hi, x.bound[1])
        return QRealizeIntExpr(Call(ref_call.op, [x.data], attrs, (), ref_call.span), s, x.dtype,
                               bound=(lo, hi))
    return None


@_register("concatenate")
def _concatenate(ref_call, new_args, ctx):
    tup, ref_tup = new_args[0], ref_call.args[0]
    if type(tup) is Tuple and tup.fields and all(isinstance(f, QRealizeIntExpr)
                                                 for f in tup.fields):
        datas, dtype, s = unify_dtype_scale(ref_tup.fields, tup.fields)
        return QRealizeIntExpr(forward_op(ref_call, [Tuple(datas, tup.span)]), s, dtype)
    return None


@_register("nn.relu", "annotation.stop_fusion")
def _scale_free(ref_call, new_args, ctx):
    """relu and stop_fusion commute with any positive scale, per channel too."""
    x = new_args[0]
    if isinstance(x, QRealizeIntExpr):
        b = _relu_bound(x.bound) if ref_call.op.name == "nn.relu" else x.bound
        return QRealizeIntExpr(forward_op(ref_call, [x.data]), x.dom_scale, x.dtype, x.unsigned,
                               b)
    return None


@_register("reshape", "strided_slice", "nn.batch_flatten", "transpose")
def _identity(ref_call, new_args, ctx):
    x = to_scalar_scale(new_args[0])
    if isinstance(x, QRealizeIntExpr):
        return QRealizeIntExpr(forward_op(ref_call, [x.data]), x.dom_scale, x.dtype, x.unsigned,
                               x.bound)
    return None


@_register("nn.max_pool2d", "nn.max_pool1d")
def _max_pool(ref_call, new_args, ctx):
    x = to_scalar_scale(new_args[0])
    if isinstance(x, QRealizeIntExpr):
        dt = narrow_dtype(x)
        if not fits(x, dt):  # not requantized: pooled in its own dtype
            dt = x.dtype
        data = x.data if dt == x.dtype else _tr.cast(x.data, dt)
        return QRealizeIntExpr(forward_op(ref_call, [data]), x.dom_scale, dt, x.unsigned,
                               x.bound)
    return None


_ITYPE_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16}


@_register("nn.avg_pool2d")
def _avg_pool(ref_call, new_args, ctx):
    """Integer average pooling divides with truncation; to round to the nearest step instead,
    8/16-bit values are shifted left first (as far as the int32 window sums allow, at most 16
    bits), and the pooled values shifted back with rounding: same scale and range as the
    input (0.19 truncated, a step low at worst)."""
    x = to_scalar_scale(new_args[0])
    if isinstance(x, QRealizeIntExpr):
        act = current_qconfig().dtype_activation
        d = x.data if x.dtype == act else _tr.cast(x.data, act)
        bits = _ITYPE_BITS.get(x.dtype)
        window = int(np.prod([int(k) for k in ref_call.attrs.pool_size]))
        k = 0
        if bits is not None and act == "int32":
            k = max(0, min(16, 31 - bits - math.ceil(math.log2(max(window, 1)))))
        if not k:
            return QRealizeIntExpr(forward_op(ref_call, [d]), x.dom_scale, act, x.unsigned,
                                   _with_zero(x.bound))
        out = forward_op(ref_call, [_t.left_shift(d, const(k, act))])
        out = _t.right_shift(_t.add(out, const(1 << (k - 1), act)), const(k, act))
        return QRealizeIntExpr(out, x.dom_scale, act, x.unsigned, _with_zero(x.bound))
    return None


@_register("nn.global_avg_pool2d")
def _global_avg_pool(ref_call, new_args, ctx):
    """Quantization stops here (the classifier stays in float): the pooling runs on the
    dequantized float32 values, so its division does not truncate (0.19 pooled the integers,
    which biases every pooled value down by half a step on average)."""
    x = new_args[0]
    if isinstance(x, QRealizeIntExpr):
        return forward_op(ref_call, [x.realize()])
    return None


@_register("annotation.cast_hint")
def _cast_hint(ref_call, new_args, ctx):
    x = to_scalar_scale(new_args[0])
    if isinstance(x, QRealizeIntExpr):
        dt = ref_call.attrs.dtype
        if dt.lstrip("u") == current_qconfig().dtype_input.lstrip("u"):
            dt = narrow_dtype(x)  # the partition's hint gives the width, the field the sign
        if not fits(x, dt):
            # not requantized (an accumulator): kept in its dtype for the next
            # simulated_quantize to rescale and clip, or a float consumer to dequantize; never
            # narrowed unclipped (annotation puts a simulated_quantize before the cast_hint of
            # every quantized operator, so this is a fallback)
            return x
        return QRealizeIntExpr(_tr.cast(x.data, dt), x.dom_scale, dt, x.unsigned, x.bound)
    return None

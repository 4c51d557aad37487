"""Canonicalization of the qnn operators into ordinary Relay integer arithmetic
(tvm.relay 0.19's ``FTVMQnnCanonicalize`` rules, written for relay_tvm).

Every rule produces exactly what the operator's NumPy reference kernel computes
(:mod:`relay_tvm.qnn.op._arith`): requantization is the int64 fixed-point product with the
constants computed by :func:`~relay_tvm.qnn.op._arith.fixed_point` (its value computed in
int32 with ``qnn.multiply_high`` where the input's bound makes that exact), so compiled code
and the interpreter agree bit for bit. Products shift both operands by their zero points in int16 and
run ``nn.conv2d`` / ``nn.dense`` / ``nn.batch_matmul`` with int32 accumulation; when both zero
points are the constant 0 and the operand dtypes agree, the int8/uint8 operands go to the
ordinary operator unchanged (the template's int8 path).

Scales must be constants where the arithmetic needs their values (requantization and
everything built on it); zero points may be any int32 expression.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedOperatorError
from ..ir.expr import Constant, Tuple, TupleGetItem, const
from ..op.registry import make_call
from .op import _arith


def _c(name, *args, **attrs):
    return make_call(name, list(args), **attrs)


def value_of(e, what: str, op: str) -> np.ndarray:
    """The value of a constant argument.

    Raises:
        UnsupportedOperatorError: ``e`` is not a constant (after constant folding).
    """
    if isinstance(e, Constant):
        return np.asarray(e.data)
    raise UnsupportedOperatorError(
        f"{op}: canonicalization needs {what} to be a constant (run FoldConstant / bind the "
        f"parameters first); got a {type(e).__name__}")


def along_expr(e, rank: int, ndim: int, axis: int):
    """A scalar or 1-D parameter expression broadcastable along ``axis`` of an ``ndim`` tensor."""
    if isinstance(e, Constant):
        v = np.asarray(e.data)
        # (np.ascontiguousarray would turn a 0-d parameter into shape (1,))
        return const(np.array(_arith.along(v, ndim, axis), order="C"), str(v.dtype))
    if rank == 0:
        return e
    e = _c("reshape", e, newshape=(-1,))
    n = ndim - axis - 1
    return _c("expand_dims", e, axis=1, num_newaxis=n) if n > 0 else e


def _rank(t) -> int:
    return len(t.shape)


def _is_zero(e) -> bool:
    return isinstance(e, Constant) and not np.any(np.asarray(e.data))


def saturate(x, out_dtype: str):
    """Clip ``x`` (int32/int64) to ``out_dtype`` 's range and cast; int32 output only casts."""
    if out_dtype != "int32":
        lo, hi = _arith.qrange(out_dtype)
        x = _c("clip", x, a_min=float(lo), a_max=float(hi))
    return _c("cast", x, dtype=out_dtype)


def _int32_requantize(x, ndim, izp, m, axis, rounding, in_dtype):
    """The int64 fixed-point product of :func:`requantize_expr` (before the output zero point)
    computed in int32 with ``qnn.multiply_high`` where that is exact (rounding "UPWARD", a
    constant input zero point, a bound of ``|x - izp|`` that the shift allows: see
    :func:`._multiply_high.int32_fixed_point_multiply`), else None. A shift ``s > 0`` of
    0.19's ``(x << s) * sig`` with 31 fractional bits is ``x * sig`` with ``31 - s``."""
    from ._bound import INT32_SAFE as rng
    from ._bound import value_bound
    from .op._multiply_high import int32_fixed_point_multiply

    if rounding != "UPWARD" or in_dtype not in rng or not (
            _is_zero(izp) or isinstance(izp, Constant)):
        return None
    bounds = [b for b in (rng[in_dtype], value_bound(x)) if b is not None]
    bound = min(bounds)
    t = x if in_dtype == "int32" else _c("cast", x, dtype="int32")
    if not _is_zero(izp):
        zv = np.asarray(izp.data).astype("int64")
        bound += int(np.abs(zv).max())
        if bound >= 2 ** 31:
            return None
        t = _c("subtract", t, const(np.array(_arith.along(zv, ndim, axis), "int32", order="C"),
                                    "int32"))
    sig, shift = _arith.fixed_point(m)
    if (sig < 0).any() or (shift > 30).any():
        return None
    sig = np.array(_arith.along(sig, ndim, axis), order="C")
    total = np.array(_arith.along(31 - shift, ndim, axis), order="C")
    return int32_fixed_point_multiply(t, sig, total, bound)


def requantize_expr(x, ndim, iscale, izp, izp_rank, oscale, ozp, axis, rounding, compute_dtype,
                    out_dtype, op="qnn.requantize", in_dtype=None):
    """The Relay code of ``qnn.requantize`` with constant scale values ``iscale`` / ``oscale``
    (NumPy) and zero-point expressions ``izp`` / ``ozp``; ``x`` holds ``in_dtype`` values
    (when given, the int64 arithmetic may run in int32: :func:`_int32_requantize`)."""
    axis = axis % ndim if ndim else 0
    m = _arith.multipliers(iscale, oscale)
    fast = None if compute_dtype != "int64" else _int32_requantize(x, ndim, izp, m, axis,
                                                                   rounding, in_dtype)
    if fast is not None:
        t = fast
        if not _is_zero(ozp):
            t = _c("add", t, _c("cast", ozp, dtype="int32"))
        return saturate(t, out_dtype)
    if compute_dtype == "int64":
        t = _c("cast", x, dtype="int64")
        if not _is_zero(izp):
            t = _c("subtract", t, along_expr(_c("cast", izp, dtype="int64")
                                             if not isinstance(izp, Constant) else
                                             const(np.asarray(izp.data).astype("int64"), "int64"),
                                             izp_rank, ndim, axis))
        sig, shift = _arith.fixed_point(m)
        lshift = np.maximum(shift, 0)
        total = np.maximum(-shift, 0) + 31

        def vec(v):
            return const(np.array(_arith.along(v.astype("int64"), ndim, axis), order="C"),
                         "int64")

        if np.any(lshift):
            t = _c("left_shift", t, vec(lshift))
        t = _c("multiply", t, vec(sig))
        pos = np.left_shift(np.int64(1), total - 1)
        if rounding == "UPWARD":
            t = _c("add", t, vec(pos))
        else:
            t = _c("add", t, _c("where", _c("greater_equal", t, const(np.asarray(0, "int64"), "int64")), vec(pos),
                                vec(pos - 1)))
        t = _c("cast", _c("right_shift", t, vec(total)), dtype="int32")
        if not _is_zero(ozp):
            t = _c("add", t, _c("cast", ozp, dtype="int32"))
        return saturate(t, out_dtype)
    if compute_dtype not in ("float32", "float64"):
        raise UnsupportedOperatorError(f"{op}: compute_dtype {compute_dtype!r}")
    fdt = compute_dtype
    t = _c("cast", x, dtype=fdt)
    t = _c("subtract", t, along_expr(_c("cast", izp, dtype=fdt), izp_rank, ndim, axis))
    t = _c("multiply", const(np.array(_arith.along(m, ndim, axis), fdt, order="C"), fdt), t)
    t = _c("add", t, _c("cast", ozp, dtype=fdt))
    half = const(np.asarray(0.5, fdt), fdt)
    if rounding == "UPWARD":
        t = _c("floor", _c("add", t, half))
    else:
        t = _c("multiply", _c("sign", t), _c("floor", _c("add", _c("abs", t), half)))
    return saturate(_c("cast", t, dtype="int32"), out_dtype)


def _to_output(x, t, scale, zp, oscale, ozp, axis=-1):
    """``x`` (type ``t``) in the output's scale/zero point as int32 (0.19's RequantizeOrUpcast)."""
    op = "qnn"
    s = value_of(scale, "the input scale", op)
    os_ = value_of(oscale, "the output scale", op)
    same_zp = (zp is ozp) or (isinstance(zp, Constant) and isinstance(ozp, Constant) and
                              np.array_equal(np.asarray(zp.data).reshape(-1),
                                             np.asarray(ozp.data).reshape(-1)))
    if same_zp and np.array_equal(s.astype("float32").reshape(-1),
                                  os_.astype("float32").reshape(-1)):
        return _c("cast", x, dtype="int32")
    zr = zp.checked_type if hasattr(zp, "checked_type") else None
    zrank = np.asarray(zp.data).ndim if isinstance(zp, Constant) else _rank(zr)
    return requantize_expr(x, _rank(t), s, zp, zrank, os_, ozp, axis, "UPWARD", "int64",
                           "int32", in_dtype=t.dtype)


# ---- the rules: (new call, original typed call) -> expression ------------------------------


def _quantize(new, orig):
    x, scale, zp = new.args
    t = orig.args[0].checked_type
    nd = _rank(t)
    axis = new.attrs.axis % nd if nd else 0
    srank = _rank(orig.args[1].checked_type)
    zrank = _rank(orig.args[2].checked_type)
    q = _c("round", _c("divide", _c("cast", x, dtype="float32"),
                       along_expr(scale, srank, nd, axis)))
    q = _c("add", q, along_expr(_c("cast", zp, dtype="float32"), zrank, nd, axis))
    return saturating_cast(q, new.attrs.out_dtype)


def saturating_cast(q, dtype: str):
    """``q`` (float32) clipped to ``dtype``'s range and cast. Where float32 cannot hold the
    dtype's largest value (int32: 2**31 - 1 rounds up to 2**31, which a cast wraps to
    -2**31), the clip stops at the float32 below it and values at or above the rounded limit
    become the limit itself: a fresh-user trial had 3e9 quantized to int32 give -2147483648
    compiled and 2147483647 in the interpreter."""
    lo, hi = _arith.qrange(dtype)
    top = np.float32(hi)
    if float(top) <= hi:
        return _c("cast", _c("clip", q, a_min=float(lo), a_max=float(hi)), dtype=dtype)
    below = float(np.nextafter(top, np.float32(0)))
    cast = _c("cast", _c("clip", q, a_min=float(lo), a_max=below), dtype=dtype)
    return _c("where", _c("greater_equal", q, const(top, "float32")),
              const(np.asarray(hi, dtype), dtype), cast)


def _dequantize(new, orig):
    x, scale, zp = new.args
    nd = _rank(orig.args[0].checked_type)
    axis = new.attrs.axis % nd if nd else 0
    srank = _rank(orig.args[1].checked_type)
    zrank = _rank(orig.args[2].checked_type)
    t = _c("subtract", _c("cast", x, dtype="int32"),
           along_expr(_c("cast", zp, dtype="int32"), zrank, nd, axis))
    t = _c("multiply", _c("cast", t, dtype="float32"), along_expr(scale, srank, nd, axis))
    return t if new.attrs.out_dtype == "float32" else _c("cast", t, dtype=new.attrs.out_dtype)


def _requantize(new, orig):
    x, iscale, izp, oscale, ozp = new.args
    a = new.attrs
    op = "qnn.requantize"
    return requantize_expr(x, _rank(orig.args[0].checked_type),
                           value_of(iscale, "input_scale", op), izp,
                           _rank(orig.args[2].checked_type),
                           value_of(oscale, "output_scale", op), ozp, a.axis, a.rounding,
                           a.compute_dtype, a.out_dtype, in_dtype=orig.args[0].checked_type.dtype)


def _shift16(x, zp, zrank, ndim, axis):
    t = _c("cast", x, dtype="int16")
    if _is_zero(zp):
        return t
    return _c("subtract", t, along_expr(_c("cast", zp, dtype="int16"), zrank, ndim, axis))


def _product(nn_name, kaxis_of):
    def rule(new, orig):
        data, kernel, izp, kzp = new.args[:4]
        dt, kt = orig.args[0].checked_type, orig.args[1].checked_type
        attrs = dict(new.attrs.items())
        out_dtype = attrs.get("out_dtype") or "int32"
        attrs["out_dtype"] = out_dtype
        if nn_name != "nn.conv2d" and dt.dtype == kt.dtype and _is_zero(izp) and \
                _is_zero(kzp):
            return make_call(nn_name, [data, kernel], **attrs)
        # convolutions always get int16 operands: the x86 template multiplies int16 pairs
        # (vpmaddwd), the generic one is indifferent; on VNNI targets AlterOpLayout turns them
        # into uint8 x int8 with the zero point folded out (transform/int8_conv.py)
        zr = _rank(orig.args[2].checked_type)
        kr = _rank(orig.args[3].checked_type)
        d = _shift16(data, izp, zr, _rank(dt), 0)
        k = _shift16(kernel, kzp, kr, _rank(kt), kaxis_of(new.attrs))
        return make_call(nn_name, [d, k], **attrs)

    return rule


def _binary(kind):
    def rule(new, orig):
        lhs, rhs, ls, lz, rs, rz, os_, oz = new.args
        lt, rt = orig.args[0].checked_type, orig.args[1].checked_type
        out_dtype = orig.checked_type.dtype
        a = new.attrs
        if kind == "mul":
            op = "qnn.mul"
            lzr, rzr = _rank(orig.args[3].checked_type), _rank(orig.args[5].checked_type)
            lsh = _c("subtract", _c("cast", lhs, dtype="int32"),
                     along_expr(_c("cast", lz, dtype="int32"), lzr, _rank(lt),
                                a.lhs_axis % max(_rank(lt), 1)))
            rsh = _c("subtract", _c("cast", rhs, dtype="int32"),
                     along_expr(_c("cast", rz, dtype="int32"), rzr, _rank(rt),
                                a.rhs_axis % max(_rank(rt), 1)))
            lsv, rsv = value_of(ls, "lhs_scale", op), value_of(rs, "rhs_scale", op)
            scale = lsv.astype("float32") * rsv.astype("float32")
            axis = a.lhs_axis if lsv.size > 1 else a.rhs_axis
            nd = _rank(orig.checked_type)
            return requantize_expr(_c("multiply", lsh, rsh), nd, scale, const(0, "int32"), 0,
                                   value_of(os_, "output_scale", op), oz, axis, "UPWARD",
                                   "int64", out_dtype, in_dtype="int32")
        lq = _to_output(lhs, lt, ls, lz, os_, oz, a.lhs_axis)
        rq = _to_output(rhs, rt, rs, rz, os_, oz, a.rhs_axis)
        zo = _c("cast", oz, dtype="int32")
        if kind == "add":
            out = _c("subtract", _c("add", lq, rq), zo)
        else:
            out = _c("add", _c("subtract", lq, rq), zo)
        return saturate(out, out_dtype)

    return rule


def _fields(e, n):
    if isinstance(e, Tuple):
        return list(e.fields)
    return [TupleGetItem(e, i) for i in range(n)]


def _concatenate(new, orig):
    data_t = orig.args[0].checked_type
    n = len(data_t.fields)
    data = _fields(new.args[0], n)
    scales = _fields(new.args[1], n)
    zps = _fields(new.args[2], n)
    os_, oz = new.args[3], new.args[4]
    parts = [_to_output(x, t, s, z, os_, oz) for x, t, s, z in
             zip(data, data_t.fields, scales, zps)]
    out = make_call("concatenate", [Tuple(parts)], axis=new.attrs.axis)
    return saturate(out, orig.checked_type.dtype)


def _avg_pool2d(new, orig):
    x, s, z, os_, oz = new.args
    t = orig.args[0].checked_type
    q = _to_output(x, t, s, z, os_, oz)
    out = make_call("nn.avg_pool2d", [q], **dict(new.attrs.items()))
    return saturate(out, orig.checked_type.dtype)


def _simulated(quant):
    def rule(new, orig):
        from .op._quantize import SQNN_CODE_TO_DTYPE

        name = orig.op.name
        if not isinstance(new.args[1], Constant):
            return _simulated_dynamic(new, orig, quant)
        code = int(value_of(new.args[1], "the dtype code", name).reshape(-1)[0])
        dt = SQNN_CODE_TO_DTYPE.get(code)
        if dt is None:
            raise UnsupportedOperatorError(f"{name}: unknown dtype code {code}")
        if dt == "disable":
            return new.args[0]
        x = new.args[0]
        sf, zf = _scale_zero_point(new, orig)
        if not quant:
            return _c("multiply", _c("subtract", x, zf), sf)
        q = _c("add", _c("round", _c("divide", x, sf)), zf)
        lo, hi = _arith.qrange(dt)
        return _c("clip", q, a_min=float(lo), a_max=float(hi))

    return rule


def _scale_zero_point(new, orig):
    """The scale and the float32 zero point of a simulated_(de)quantize call (arguments data,
    dtype code, scale, zero point), shaped to broadcast along its axis."""
    nd = _rank(orig.args[0].checked_type)
    axis = new.attrs.axis % nd if nd else 0
    dshape = orig.args[0].checked_type.shape
    zf = _along_any(_c("cast", new.args[3], dtype="float32"), orig.args[3].checked_type, nd,
                    axis, dshape)
    sf = _along_any(new.args[2], orig.args[2].checked_type, nd, axis, dshape)
    return sf, zf


def _along_any(e, t, ndim: int, axis: int, data_shape):
    """``along_expr`` for a 1-D parameter whose length is only known at run time (``Any``):
    one value for the whole tensor or one per channel of ``axis``, picked per channel with
    ``take(e, arange(C) % len(e))`` so both lengths run with one compiled program."""
    if len(t.shape) == 0 or isinstance(t.shape[0], (int, np.integer)):
        return along_expr(e, len(t.shape), ndim, axis)
    ch = data_shape[axis] if ndim else 1
    if not isinstance(ch, (int, np.integer)):
        raise UnsupportedOperatorError(
            "simulated_quantize: a parameter of run-time length needs the data's channel "
            f"dimension (axis {axis}) to be static; data shape {tuple(data_shape)}")
    idx = _c("mod", const(np.arange(int(ch), dtype="int32"), "int32"),
             _c("shape_of", e, dtype="int32"))
    e = _c("take", e, idx, axis=0, batch_dims=0, mode="clip")
    n = ndim - axis - 1
    return _c("expand_dims", e, axis=1, num_newaxis=n) if n > 0 else e


def _simulated_dynamic(new, orig, quant):
    """simulated_(de)quantize whose dtype code is only known at run time: the code selects
    the clip range (int8 / uint8 / int32); any other code (0, "disable", included) passes the
    input through unchanged, as 0.19's kernels do."""
    from .op._quantize import SQNN_CODE_TO_DTYPE

    x, code = new.args[0], new.args[1]
    sf, zf = _scale_zero_point(new, orig)
    code = _c("cast", code, dtype="int32")
    if _rank(orig.args[1].checked_type):  # a [1]-shaped code: one value for the tensor
        code = _c("reshape", code, newshape=())
    f32 = lambda v: const(np.asarray(v, "float32"), "float32")  # noqa: E731
    no = const(np.asarray(False), "bool")
    active, lo, hi = no, f32(0), f32(0)
    for c, dt in sorted(SQNN_CODE_TO_DTYPE.items()):
        if dt == "disable":
            continue
        hit = _c("equal", code, const(np.asarray(c, "int32"), "int32"))
        qlo, qhi = _arith.qrange(dt)
        active = _c("logical_or", active, hit)
        lo = _c("where", hit, f32(qlo), lo)
        hi = _c("where", hit, f32(qhi), hi)
    if quant:
        q = _c("add", _c("round", _c("divide", x, sf)), zf)
        out = _c("minimum", _c("maximum", q, lo), hi)
    else:
        out = _c("multiply", _c("subtract", x, zf), sf)
    return _c("where", active, out, x)


def _unary_lut(new, orig):
    """A qnn unary operator as a lookup: ``take(table, x - min(dtype))``."""
    from .op._unary import table

    name = orig.op.name
    x = new.args[0]
    dt = orig.args[0].checked_type.dtype
    params = [value_of(e, n, name) for e, n in zip(new.args[1:], (
        "the input scale", "the input zero point", "the output scale", "the output zero point"))]
    tab = table(name, dt, *params)
    lo = _arith.qrange(dt)[0]
    idx = _c("cast", x, dtype="int32")
    if lo:
        idx = _c("subtract", idx, const(np.asarray(lo, "int32"), "int32"))
    return _c("take", const(tab, dt), idx, axis=0, batch_dims=0, mode="fast")


RULES = {
    "qnn.quantize": _quantize,
    "qnn.dequantize": _dequantize,
    "qnn.requantize": _requantize,
    "qnn.conv2d": _product("nn.conv2d", lambda a: a.kernel_layout.index("O")),
    "qnn.conv2d_transpose": _product("nn.conv2d_transpose",
                                     lambda a: a.kernel_layout.index("O")),
    "qnn.dense": _product("nn.dense", lambda a: 0),
    "qnn.batch_matmul": _product("nn.batch_matmul", lambda a: 0),
    "qnn.add": _binary("add"),
    "qnn.subtract": _binary("subtract"),
    "qnn.mul": _binary("mul"),
    "qnn.concatenate": _concatenate,
    "qnn.avg_pool2d": _avg_pool2d,
    "qnn.simulated_quantize": _simulated(True),
    "qnn.simulated_dequantize": _simulated(False),
}
RULES.update({name: _unary_lut for name in ("qnn.sqrt", "qnn.rsqrt", "qnn.exp", "qnn.erf",
                                            "qnn.sigmoid", "qnn.hardswish", "qnn.tanh",
                                            "qnn.log", "qnn.abs")})


def _leaky_relu(new, orig):
    """qnn.leaky_relu as a lookup: ``take(table, x - min(dtype))`` (see op._leaky_relu)."""
    from .op._leaky_relu import table

    x = new.args[0]
    dt = orig.args[0].checked_type.dtype
    params = [value_of(e, n, "qnn.leaky_relu") for e, n in zip(new.args[1:], (
        "the input scale", "the input zero point", "the output scale", "the output zero point"))]
    tab = table(dt, orig.attrs.alpha, *params)
    lo = _arith.qrange(dt)[0]
    idx = _c("cast", x, dtype="int32")
    if lo:
        idx = _c("subtract", idx, const(np.asarray(lo, "int32"), "int32"))
    return _c("take", const(tab, dt), idx, axis=0, batch_dims=0, mode="fast")


RULES["qnn.leaky_relu"] = _leaky_relu


def _softmax(new, orig):
    """qnn.softmax as its definition in float32: dequantize, nn.softmax, quantize (see
    op._softmax)."""
    x, s, z, os_, oz = new.args
    dt = orig.args[0].checked_type.dtype
    real = _c("multiply", _c("cast", _c("subtract", _c("cast", x, dtype="int32"),
                                        _c("cast", z, dtype="int32")), dtype="float32"), s)
    sm = _c("nn.softmax", real, axis=orig.attrs.axis)
    q = _c("add", _c("round", _c("divide", sm, os_)), _c("cast", oz, dtype="float32"))
    return saturating_cast(q, dt)


RULES["qnn.softmax"] = _softmax

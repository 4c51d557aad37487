"""MXNet converters of the quantized operators (MXNet 1.9.1 with its MKLDNN backend, what
``mxnet.contrib.quantization.quantize_net`` / ``quantize_model`` produce on CPU).

A quantized MXNet tensor travels with its real range: every quantized operator outputs
``(data, min, max)``. Here ``min``/``max`` become float32 constants of shape (1,) and the
converters read their values; the scale follows MKLDNN's zero-centred convention
(``real / quantum = max(|min|, |max|) / R`` with ``R = 255.5`` for uint8, ``127.5`` for int8,
``2147483647`` for int32). Ranges known only at run time (uncalibrated ``quantize_v2``,
``requantize`` without calibration) are refused with a :class:`ConversionError`.

Fused MKLDNN subgraph operators (``_sg_mkldnn_conv``, ``_sg_mkldnn_fully_connected``) carry
their float32 weights (and BatchNorm parameters); as MXNet does at run time, the converter
folds BatchNorm, quantizes the weights per output channel to int8 and the bias to int32 with
NumPy, and emits ``qnn.conv2d`` / ``qnn.dense`` + ``qnn.requantize`` (with ``with_sum``: the
summand requantized into the output's scale and added; ``with_act`` / ``with_postsum_act``:
ReLU before / after the sum).

Numerics against MXNet: identical where there is a single rounding (quantize, dequantize,
pooling, activation); MKLDNN requantizes in float32 with round-half-even while
``qnn.requantize`` is exact fixed point with ties rounded up, and a fused sum rounds twice
here, so int8 tensors may differ by one quantum in rare elements.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Var, const
from ._mx_util import R

U8_RANGE = np.float32(255.5)
S8_RANGE = np.float32(127.5)
I32_RANGE = np.float32(2147483647.0)


def _qnn():
    from ..qnn import op

    return op


def _value(e, c, what):
    """NumPy value of a constant or a parameter variable."""
    if isinstance(e, Constant):
        return np.asarray(e.data)
    params = getattr(c, "params", None) or {}
    if isinstance(e, Var) and e.name_hint in params:
        return np.asarray(params[e.name_hint])
    raise c.error(f"{what} must be a constant or a parameter with a value (quantized ranges "
                  "known only at run time are not supported)")


def _num(e, c, what) -> np.float32:
    return np.float32(_value(e, c, what).reshape(-1)[0])


def _range_const(v):
    return const(np.asarray([v], "float32"), "float32")


def _qrange(dtype):
    return {"uint8": U8_RANGE, "int8": S8_RANGE, "int32": I32_RANGE}[dtype]


def scale_of(dtype, mn, mx) -> np.float32:
    """Real units per quantum of an MKLDNN zero-centred ``dtype`` tensor with range [mn, mx]."""
    real = max(abs(np.float32(mn)), abs(np.float32(mx)))
    return np.float32(real / _qrange(dtype))


def _f32(v):
    return const(np.asarray(v, "float32"), "float32")


def _i32(v=0):
    return const(np.asarray(v, "int32"), "int32")


def _calib(a):
    if "min_calib_range" in a and "max_calib_range" in a:
        return np.float32(a.get_float("min_calib_range")), np.float32(a.get_float("max_calib_range"))
    return None


# ---- quantize / dequantize / requantize ----------------------------------------------------------


def quantize_v2(ins, a, c):
    x = ins[0]
    if c.dtype(x) in ("int8", "uint8"):
        raise c.error("quantize_v2 of already quantized data is not supported")
    cal = _calib(a)
    if cal is None:
        raise c.error("quantize_v2 without min_calib_range/max_calib_range (ranges computed at "
                      "run time) is not supported: calibrate the model")
    out_type = a.get_str("out_type", "int8")
    if out_type == "auto":
        out_type = "uint8" if cal[0] >= 0 else "int8"
    if out_type not in ("int8", "uint8"):
        raise c.error(f"out_type={out_type!r}, expected int8, uint8 or auto")
    q = _qnn().quantize(x, _f32(scale_of(out_type, *cal)), _i32(0), out_dtype=out_type)
    return [q, _range_const(cal[0]), _range_const(cal[1])]


def quantize_v1(ins, a, c):
    x = ins[0]
    mn, mx = _num(ins[1], c, "min_range"), _num(ins[2], c, "max_range")
    out_type = a.get_str("out_type", "uint8")
    real = max(abs(mn), abs(mx))
    # MXNet 1.9.1 (MKLDNN): zero-centred with 255 / 127 quanta, int8 symmetric [-127, 127]
    if out_type == "uint8":
        q = _qnn().quantize(x, _f32(real / np.float32(255)), _i32(0), out_dtype="uint8")
    elif out_type == "int8":
        q = _qnn().quantize(x, _f32(real / np.float32(127)), _i32(0), out_dtype="int8")
        q = R("clip")(q, a_min=-127.0, a_max=127.0)
    else:
        raise c.error(f"out_type={out_type!r}, expected uint8 or int8")
    return [q, ins[1], ins[2]]


def dequantize(ins, a, c):
    x = ins[0]
    dt = c.dtype(x)
    if dt not in ("int8", "uint8", "int32"):
        raise c.error(f"data has dtype {dt}, expected int8, uint8 or int32")
    s = scale_of(dt, _num(ins[1], c, "min_range"), _num(ins[2], c, "max_range"))
    return _qnn().dequantize(x, _f32(s), _i32(0))


def requantize(ins, a, c):
    x = ins[0]
    if c.dtype(x) != "int32":
        raise c.error(f"data has dtype {c.dtype(x)}, expected int32")
    cal = _calib(a)
    if cal is None:
        raise c.error("requantize without min_calib_range/max_calib_range (ranges computed at "
                      "run time) is not supported: calibrate the model")
    out_type = a.get_str("out_type", "int8")
    if out_type == "auto":
        out_type = "uint8" if cal[0] >= 0 else "int8"
    s_in = scale_of("int32", _num(ins[1], c, "min_range"), _num(ins[2], c, "max_range"))
    # requantize uses 127 / 255 quanta (not MKLDNN's 127.5 / 255.5), as MXNet 1.9.1 measures
    s_out = np.float32(max(abs(cal[0]), abs(cal[1])) / (255 if out_type == "uint8" else 127))
    q = _qnn().requantize(x, _f32(s_in), _i32(0), _f32(s_out), _i32(0),
                          rounding="TONEAREST", out_dtype=out_type)
    return [q, _range_const(cal[0]), _range_const(cal[1])]


# ---- range-preserving operators ------------------------------------------------------------------


def quantized_act(ins, a, c):
    act = a.get_str("act_type", "relu")
    if act != "relu":
        raise c.error(f"act_type={act!r}: only relu is supported for quantized activations")
    return [R("nn.relu")(ins[0]), ins[1], ins[2]]


def quantized_flatten(ins, a, c):
    return [R("nn.batch_flatten")(ins[0]), ins[1], ins[2]]


def quantized_pooling(ins, a, c):
    from ._mx_nn import pooling

    x = ins[0]
    dt = c.dtype(x)
    ptype = a.get_str("pool_type", "max")
    if ptype == "max":
        out = pooling([x], a, c)
    elif ptype == "avg":
        # MKLDNN averages in float and rounds to nearest even
        out = pooling([R("cast")(x, "float32")], a, c)
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        out = R("cast")(R("clip")(R("round")(out), a_min=float(lo), a_max=float(hi)), dt)
    else:
        raise c.error(f"pool_type={ptype!r}: quantized pooling supports max and avg")
    return [out, ins[1], ins[2]]


def _to_int32_at(x, dt, s_in, s_out):
    """``x`` (quantized with ``s_in``) requantized to ``s_out`` as int32."""
    return _qnn().requantize(x, _f32(s_in), _i32(0), _f32(s_out), _i32(0),
                             rounding="TONEAREST", out_dtype="int32")


def _saturate(x, dt):
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    return R("cast")(R("clip")(x, a_min=float(lo), a_max=float(hi)), dt)


def quantized_elemwise_add(ins, a, c):
    lhs, rhs = ins[0], ins[1]
    ld, rd = c.dtype(lhs), c.dtype(rhs)
    ls = scale_of(ld, _num(ins[2], c, "lhs min"), _num(ins[3], c, "lhs max"))
    rs = scale_of(rd, _num(ins[4], c, "rhs min"), _num(ins[5], c, "rhs max"))
    cal = _calib(a)
    if cal is None:
        raise c.error("quantized_elemwise_add without min_calib_range/max_calib_range (int32 "
                      "output with run-time ranges) is not supported: calibrate the model")
    out_dt = "uint8" if cal[0] >= 0 else "int8"
    os_ = scale_of(out_dt, *cal)
    out = R("add")(_to_int32_at(lhs, ld, ls, os_), _to_int32_at(rhs, rd, rs, os_))
    return [_saturate(out, out_dt), _range_const(cal[0]), _range_const(cal[1])]


def quantized_concat(ins, a, c):
    n = a.get_int("num_args")
    axis = a.get_int("dim", 1)
    data = ins[:n]
    mins = [_num(ins[n + 2 * i], c, f"min of input {i}") for i in range(n)]
    maxs = [_num(ins[n + 2 * i + 1], c, f"max of input {i}") for i in range(n)]
    dts = [c.dtype(x) for x in data]
    out_dt = "int8" if "int8" in dts else "uint8"
    omin, omax = min(mins), max(maxs)
    os_ = scale_of(out_dt, omin, omax)
    parts = []
    for x, dt, mn, mx in zip(data, dts, mins, maxs):
        # MKLDNN rescales each input in float32 and rounds half to even
        m = np.float32(scale_of(dt, mn, mx) / os_)
        parts.append(R("round")(R("multiply")(R("cast")(x, "float32"), _f32(m))))
    out = _saturate(R("concatenate")(parts, axis=axis), out_dt)
    return [out, _range_const(omin), _range_const(omax)]


from ._mx_quantized_layers import (  # noqa: E402
    quantized_conv,
    quantized_fully_connected,
    sg_mkldnn_conv,
    sg_mkldnn_fully_connected,
)

QUANTIZED_CONVERTERS = {
    "_contrib_quantize_v2": quantize_v2,
    "_contrib_quantize": quantize_v1,
    "_contrib_dequantize": dequantize,
    "_contrib_requantize": requantize,
    "_contrib_quantized_act": quantized_act,
    "_contrib_quantized_flatten": quantized_flatten,
    "_contrib_quantized_pooling": quantized_pooling,
    "_contrib_quantized_elemwise_add": quantized_elemwise_add,
    "_contrib_quantized_concat": quantized_concat,
    "_contrib_quantized_conv": quantized_conv,
    "_contrib_quantized_fully_connected": quantized_fully_connected,
    "_sg_mkldnn_conv": sg_mkldnn_conv,
    "_sg_mkldnn_fully_connected": sg_mkldnn_fully_connected,
}

__all__ = ["QUANTIZED_CONVERTERS", "scale_of"]

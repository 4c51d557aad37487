"""MXNet quantized layers: ``_contrib_quantized_conv``, ``_contrib_quantized_fully_connected``
and MKLDNN's fused ``_sg_mkldnn_conv`` / ``_sg_mkldnn_fully_connected`` (quantized or float).

See :mod:`relay_tvm.frontend._mx_quantized` for the range conventions. Weight and bias
quantization of the fused operators follows MXNet 1.9.1's ``mkldnn_conv.cc`` /
``mkldnn_fc.cc``: per-output-channel weight scales ``127.5 / max|w_c|`` (lowered so that the
int32 bias stays within INT32_MAX / 2), int8 weights rounded half to even, int32 bias
``round_half_away(b * data_scale * weight_scale_c)``.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import const
from ._mx_quantized import (
    S8_RANGE,
    _calib,
    _f32,
    _i32,
    _num,
    _qnn,
    _range_const,
    _saturate,
    _value,
    scale_of,
)
from ._mx_util import R
from .common import StrAttrs

_INT32_MAX = np.float32(2147483647.0)


def _round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _sub_node(c, op):
    sg = getattr(getattr(c, "node", None), "subgraphs", None) or []
    if len(sg) != 1:
        raise c.error(f"expected one subgraph, got {len(sg)}")
    for n in sg[0].get("nodes", []):
        if n.get("op") == op:
            return StrAttrs(n.get("attrs") or n.get("param") or {}, op, n.get("name", op))
    return None


def _conv_args(c):
    from ._mx_nn import _conv_common

    a = _sub_node(c, "Convolution")
    if a is None:
        raise c.error("the subgraph has no Convolution node")
    kernel, nd, stride, dilate, pad, layout = _conv_common(a, c)
    if nd != 2 or layout != "NCHW":
        raise c.error(f"only 2-d NCHW convolutions are supported, got kernel={kernel} "
                      f"layout={layout}")
    return a, dict(kernel_size=kernel, strides=stride, dilation=dilate, padding=pad,
                   groups=a.get_int("num_group", 1), channels=a.get_int("num_filter"))


def _act_is_relu(c):
    act = _sub_node(c, "Activation")
    if act is not None and act.get_str("act_type", "relu") != "relu":
        raise c.error(f"fused activation {act.get_str('act_type')!r}: only relu is supported")
    return True


def _bn_fold(ins, idx, c, channels):
    """(scale, shift) of the inference BatchNorm at inputs idx..idx+3, from the parameters."""
    bn = _sub_node(c, "BatchNorm")
    eps = np.float32(bn.get_float("eps", 1e-3))
    gamma, beta, mean, var = (_value(ins[idx + k], c, n).astype("float32") for k, n in
                              enumerate(("gamma", "beta", "moving_mean", "moving_var")))
    if bn.get_bool("fix_gamma", True):
        gamma = np.ones_like(gamma)
    scale = gamma / np.sqrt(var + eps)
    return scale, beta - mean * scale


def _weight_scales(w, bias, data_scale):
    """Per-output-channel int8 scales (quanta per real unit), MXNet's GetWeightScales."""
    flat = w.reshape(w.shape[0], -1)
    real = np.maximum(np.abs(flat.min(axis=1)), np.abs(flat.max(axis=1))).astype("float32")
    with np.errstate(divide="ignore"):
        scales = np.where(real > 0, S8_RANGE / real, np.float32(1.0)).astype("float32")
    if bias is not None:
        nz = bias != 0
        lim = np.where(bias > 0, _INT32_MAX, -_INT32_MAX) / 2 / np.where(nz, bias, 1) / data_scale
        scales = np.where(nz, np.minimum(scales, lim.astype("float32")), scales)
    return scales.astype("float32")


def _quantize_weight(w, scales):
    shape = (-1,) + (1,) * (w.ndim - 1)
    return np.clip(np.round(w * scales.reshape(shape)), -128, 127).astype("int8")


def _out_dtype(cal):
    return "uint8" if cal[0] >= 0 else "int8"


def sg_mkldnn_conv(ins, a, c):
    conv_a, kw = _conv_args(c)
    has_bias = not conv_a.get_bool("no_bias", False)
    with_bn = a.get_bool("with_bn", False)
    with_sum = a.get_bool("with_sum", False)
    with_act = a.get_bool("with_act", False) and _act_is_relu(c)
    post_act = a.get_bool("with_postsum_act", False) and _act_is_relu(c)
    bn_idx = 3 if has_bias else 2
    sum_idx = bn_idx + (4 if with_bn else 0)
    data = ins[0]
    if not a.get_bool("quantized", False):
        return _float_conv(ins, c, kw, has_bias, with_bn, with_sum, with_act, post_act,
                           bn_idx, sum_idx)
    ddt = c.dtype(data)
    if ddt not in ("int8", "uint8"):
        raise c.error(f"quantized=True but the data has dtype {ddt}")
    rng_idx = sum_idx + (1 if with_sum else 0)
    d_scale = scale_of(ddt, _num(ins[rng_idx], c, "data min"), _num(ins[rng_idx + 1], c,
                                                                     "data max"))
    w = _value(ins[1], c, "the weight").astype("float32")
    bias = _value(ins[2], c, "the bias").astype("float32") if has_bias else None
    if with_bn:
        s, shift = _bn_fold(ins, bn_idx, c, w.shape[0])
        w = w * s.reshape(-1, 1, 1, 1)
        bias = shift if bias is None else bias * s + shift
    quanta = np.float32(1) / d_scale  # MKLDNN's data scale: quanta per real unit
    wsc = _weight_scales(w, bias, quanta)
    wq = _quantize_weight(w, wsc)
    acc = _qnn().conv2d(data, const(wq, "int8"), _i32(0), _i32(0), _f32(d_scale),
                        _f32(1 / wsc), **kw)
    if bias is not None:
        bq = _round_away(bias * quanta * wsc).astype("int32")
        acc = R("nn.bias_add")(acc, const(bq, "int32"), axis=1)
    if with_act:
        acc = R("nn.relu")(acc)
    cal = _calib(a)
    acc_scale = (np.float32(1) / (quanta * wsc)).astype("float32")
    if cal is None:
        # int32 output: the range MXNet reports for it
        if with_sum:
            raise c.error("with_sum without calibration ranges is not supported")
        real = np.float32(acc_scale.max() * _INT32_MAX)
        q = _qnn().requantize(acc, _f32(acc_scale), _i32(0), _f32(real / _INT32_MAX), _i32(0),
                              axis=1, rounding="TONEAREST", out_dtype="int32")
        return [q, _range_const(-real), _range_const(real)]
    out_dt = _out_dtype(cal)
    o_quanta = np.float32(1) / scale_of(out_dt, *cal)
    # MKLDNN scales the int32 accumulator in float32 by output/data/weight quanta, adds the
    # scaled summand, applies the post-sum ReLU and rounds once, half to even
    m1 = (o_quanta / quanta / wsc).astype("float32")
    out = R("multiply")(R("cast")(acc, "float32"), const(m1.reshape(-1, 1, 1), "float32"))
    if with_sum:
        summand = ins[sum_idx]
        s_quanta = np.float32(1) / scale_of(c.dtype(summand), _num(ins[rng_idx + 2], c,
                                                                   "sum min"),
                                            _num(ins[rng_idx + 3], c, "sum max"))
        m2 = np.float32(o_quanta / s_quanta)
        out = R("add")(out, R("multiply")(R("cast")(summand, "float32"), _f32(m2)))
    if post_act:
        out = R("nn.relu")(out)
    return [_saturate(R("round")(out), out_dt), _range_const(cal[0]), _range_const(cal[1])]


def _float_conv(ins, c, kw, has_bias, with_bn, with_sum, with_act, post_act, bn_idx, sum_idx):
    out = R("nn.conv2d")(ins[0], ins[1], **kw)
    if has_bias:
        out = R("nn.bias_add")(out, ins[2], axis=1)
    if with_bn:
        bn = _sub_node(c, "BatchNorm")
        eps = bn.get_float("eps", 1e-3)
        gamma = ins[bn_idx]
        if bn.get_bool("fix_gamma", True):
            gamma = R("ones_like")(gamma)
        out = R("nn.batch_norm")(out, gamma, ins[bn_idx + 1], ins[bn_idx + 2], ins[bn_idx + 3],
                                 axis=1, epsilon=eps)[0]
    if with_act:
        out = R("nn.relu")(out)
    if with_sum:
        out = R("add")(out, ins[sum_idx])
    if post_act:
        out = R("nn.relu")(out)
    return out


def _fc_node(c):
    fa = _sub_node(c, "FullyConnected")
    if fa is None:
        raise c.error("the subgraph has no FullyConnected node")
    return fa


def sg_mkldnn_fully_connected(ins, a, c):
    fa = _fc_node(c)
    relu = (a.get_bool("with_relu", False) or a.get_bool("with_eltwise", False)
            or _sub_node(c, "Activation") is not None) and _act_is_relu(c)
    if not a.get_bool("quantized", False):
        from ._mx_nn import fully_connected

        out = fully_connected(ins[:3] if not fa.get_bool("no_bias", False) else ins[:2], fa, c)
        return R("nn.relu")(out) if relu else out
    return _quantized_dense(ins, fa, a, c, relu, fused=True)


def _quantized_dense(ins, fa, a, c, relu, fused):
    has_bias = not fa.get_bool("no_bias", False)
    units = fa.get_int("num_hidden")
    data, weight = ins[0], ins[1]
    ddt = c.dtype(data)
    if fa.get_bool("flatten", True) and len(c.shape(data)) != 2:
        data = R("nn.batch_flatten")(data)
    i = 3 if has_bias else 2
    d_scale = scale_of(ddt, _num(ins[i], c, "data min"), _num(ins[i + 1], c, "data max"))
    quanta = np.float32(1) / d_scale
    wdt = c.dtype(weight)
    if wdt == "float32":  # channel-wise: quantized here, like the fused convolution
        w = _value(weight, c, "the weight").astype("float32")
        bias = _value(ins[2], c, "the bias").astype("float32") if has_bias else None
        wsc = _weight_scales(w, bias, quanta)
        wq = const(_quantize_weight(w, wsc), "int8")
        bq = _round_away(bias * quanta * wsc).astype("int32") if has_bias else None
        w_scale = (np.float32(1) / wsc).astype("float32")
    else:
        if wdt != "int8":
            raise c.error(f"weight dtype {wdt}, expected int8 or float32")
        w_quanta = np.float32(1) / scale_of("int8", _num(ins[i + 2], c, "weight min"),
                                            _num(ins[i + 3], c, "weight max"))
        wq = weight
        bq = None
        if has_bias:
            bvals = _value(ins[2], c, "the bias").astype("float32")
            b_real = scale_of("int8", _num(ins[i + 4], c, "bias min"),
                              _num(ins[i + 5], c, "bias max"))
            if b_real == 0 or not np.any(bvals):
                bq = np.zeros(bvals.shape, "int32")  # an all-zero bias has an empty range
            else:
                rescale = np.float32(quanta * w_quanta * b_real)
                bq = _round_away(bvals * rescale)
                if np.abs(bq).max() > _INT32_MAX / 2:
                    raise c.error("the int32 bias would overflow (MXNet rescales the weight "
                                  "here; not supported)")
                bq = bq.astype("int32")
        w_scale = np.float32(1) / w_quanta
    acc = _qnn().dense(data, wq, _i32(0), _i32(0), _f32(d_scale), _f32(w_scale), units=units)
    if bq is not None:
        acc = R("nn.bias_add")(acc, const(bq, "int32"), axis=-1)
    if relu:
        acc = R("nn.relu")(acc)
    acc_scale = (np.float32(d_scale) * np.asarray(w_scale, "float32")).astype("float32")
    if fused and a.get_bool("enable_float_output", False):
        return _qnn().dequantize(acc, _f32(acc_scale), _i32(0), axis=-1)
    cal = _calib(a) if fused else None
    if cal is not None:
        out_dt = _out_dtype(cal)
        q = _qnn().requantize(acc, _f32(acc_scale), _i32(0), _f32(scale_of(out_dt, *cal)),
                              _i32(0), axis=-1, rounding="TONEAREST", out_dtype=out_dt)
        return [q, _range_const(cal[0]), _range_const(cal[1])]
    real = np.float32(np.max(acc_scale) * _INT32_MAX)
    if not fused:
        # the int32 range MXNet 1.9.1 reports: data over 255 (uint8) / 127 (int8) quanta,
        # weight over 127 (the int32 values themselves are the exact accumulators)
        real = _mx_int32_range(ins[i:i + 4], c, np.float32(255 if ddt == "uint8" else 127))
    elif np.size(acc_scale) > 1:
        acc = _qnn().requantize(acc, _f32(acc_scale), _i32(0), _f32(real / _INT32_MAX),
                                _i32(0), axis=-1, rounding="TONEAREST", out_dtype="int32")
    return [acc, _range_const(-real), _range_const(real)]


def _mx_int32_range(rng, c, data_quanta):
    """MXNet's float32 formula of the int32 range of a quantized product."""
    f = np.float32
    dmax = max(abs(_num(rng[0], c, "data min")), abs(_num(rng[1], c, "data max")))
    wmax = max(abs(_num(rng[2], c, "weight min")), abs(_num(rng[3], c, "weight max")))
    return f(f(f(dmax) / data_quanta) * f(f(wmax) / f(127))) * _INT32_MAX


def quantized_fully_connected(ins, a, c):
    return _quantized_dense(ins, a, a, c, relu=False, fused=False)


def quantized_conv(ins, a, c):
    from ._mx_nn import _conv_common

    kernel, nd, stride, dilate, pad, layout = _conv_common(a, c)
    if nd != 2 or layout != "NCHW":
        raise c.error("only 2-d NCHW quantized convolutions are supported")
    has_bias = not a.get_bool("no_bias", False)
    data, weight = ins[0], ins[1]
    i = 3 if has_bias else 2
    ddt = c.dtype(data)
    d_scale = scale_of(ddt, _num(ins[i], c, "data min"), _num(ins[i + 1], c, "data max"))
    w_scale = scale_of("int8", _num(ins[i + 2], c, "weight min"),
                       _num(ins[i + 3], c, "weight max"))
    acc = _qnn().conv2d(data, weight, _i32(0), _i32(0), _f32(d_scale), _f32(w_scale),
                        kernel_size=kernel, strides=stride, dilation=dilate, padding=pad,
                        groups=a.get_int("num_group", 1), channels=a.get_int("num_filter"))
    acc_scale = np.float32(d_scale * w_scale)
    if has_bias:
        b_scale = scale_of("int8", _num(ins[i + 4], c, "bias min"),
                           _num(ins[i + 5], c, "bias max"))
        b = R("cast")(ins[2], "int32")
        b = _qnn().requantize(b, _f32(b_scale), _i32(0), _f32(acc_scale), _i32(0),
                              rounding="TONEAREST", out_dtype="int32")
        acc = R("nn.bias_add")(acc, b, axis=1)
    # the int32 range MXNet 1.9.1 reports: data and weight ranges over 127 quanta each
    real = _mx_int32_range(ins[i:i + 4], c, np.float32(127))
    return [acc, _range_const(-real), _range_const(real)]


__all__ = ["sg_mkldnn_conv", "sg_mkldnn_fully_connected", "quantized_conv",
           "quantized_fully_connected"]

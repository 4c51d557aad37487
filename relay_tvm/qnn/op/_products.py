"""qnn.conv2d, qnn.dense and qnn.batch_matmul (tvm.relay 0.19's ``relay.qnn.op``): integer
products of zero-point-shifted operands, accumulated in int32.

``out = sum((data - input_zero_point) * (kernel - kernel_zero_point))``; the scales do not
enter the computation (a following ``qnn.requantize`` uses ``input_scale * kernel_scale``).
Convolution padding is the input zero point (a padded tap contributes 0), as in 0.19. The
kernel zero point may be per output channel (1-D). Data and kernel may be int8 or uint8
independently (MKLDNN models are uint8 x int8).
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.types import IncompleteType, TensorType
from ...op import nn_conv
from ...op.registry import OpPattern, get, make_call, register_op
from . import _arith
from ._common import check_dtype_in, check_qparam, check_tensor, known

_QDTYPES = ("int8", "uint8", "int16")


def _kernel_out_axis(layout: str) -> int:
    return layout.index("O")


def _check_params(op, types, data, kernel, kaxis):
    izp, kzp, iscale, kscale = types
    check_qparam(izp, "input_zero_point", "int32", op)
    check_qparam(iscale, "input_scale", "float32", op)
    if izp.ndim == 1 and izp.shape[0] != 1:
        raise TypeInferenceError(f"{op}: input_zero_point must be a scalar, got shape "
                                 f"{izp.shape}")
    check_qparam(kzp, "kernel_zero_point", "int32", op, kernel, kaxis)
    check_qparam(kscale, "kernel_scale", "float32", op, kernel, kaxis)


def _rel_via(nn_name, kaxis_of):
    op = "qnn." + nn_name.split(".")[-1]

    def rel(types, attrs):
        data, kernel = types[:2]
        if isinstance(data, IncompleteType) or not known(types[2:]):
            return None
        data = check_tensor(data, "data", op)
        check_dtype_in(data, _QDTYPES, "data", op)
        out_dtype = attrs.out_dtype or "int32"
        if out_dtype not in ("int32", "int64"):
            raise TypeInferenceError(f"{op}: out_dtype {out_dtype!r}, expected int32 or int64")
        filled = {}
        if isinstance(kernel, IncompleteType):
            res = get(nn_name).type_rel([data, kernel], attrs)
            if res is None:
                return None
            out, filled = res
            kernel = filled[1]
        else:
            kernel = check_tensor(kernel, "kernel", op)
            check_dtype_in(kernel, _QDTYPES, "kernel", op)
            # the ordinary relation with the kernel in data's dtype (qnn allows uint8 x int8)
            out = get(nn_name).type_rel([data, TensorType(kernel.shape, data.dtype)], attrs)
            if out is None:
                return None
        _check_params(op, types[2:6], data, kernel, kaxis_of(attrs))
        out = TensorType(out.shape, out_dtype)
        return (out, filled) if filled else out

    return rel


def _shifted(x, zp, axis):
    return x.astype("int64") - _arith.along(zp, x.ndim, axis).astype("int64")


def _conv_ref(args, attrs, out_type):
    data, kernel, izp, kzp = args[:4]
    x = data.astype("int64") - np.asarray(izp).astype("int64").reshape(())
    w = _shifted(kernel, kzp, _kernel_out_axis(attrs.kernel_layout))
    out = get("nn.conv2d").ref_impl([x, w], attrs, TensorType(out_type.shape, "int64"))
    return out.astype(out_type.dtype)


register_op(
    "qnn.conv2d", num_inputs=6,
    arguments=("data", "kernel", "input_zero_point", "kernel_zero_point", "input_scale",
               "kernel_scale"),
    attrs=get("nn.conv2d").attrs_schema,
    rel=_rel_via("nn.conv2d", lambda a: _kernel_out_axis(a.kernel_layout)),
    ref=_conv_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, level=11,
    doc="Quantized 2-D convolution, int32 accumulation of zero-point-shifted operands.")


def conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
           kernel_size, channels, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype="int32"):
    """Quantized 2-D convolution (tvm.relay.qnn.op.conv2d).

    ``out[n, o, y, x] = sum_{c, ky, kx} (data - input_zero_point)[n, c, y*s + ky*d - p, ...]
    * (kernel - kernel_zero_point[o])[o, c, ky, kx]`` with padded taps equal to the input zero
    point (they contribute 0).

    Args:
        data: int8/uint8 tensor in ``data_layout`` (NCHW or NHWC).
        kernel: int8/uint8 tensor in ``kernel_layout`` (OIHW, HWIO, ...).
        input_zero_point: int32 scalar. kernel_zero_point: int32 scalar or 1-D per output
            channel. input_scale / kernel_scale: float32 (carried for requantization; unused
            by the arithmetic).
        kernel_size, channels, strides, padding, dilation, groups, layouts: as nn.conv2d.
        out_dtype: ``"int32"`` (default) or ``"int64"``.

    Returns:
        the int32 accumulator tensor in ``out_layout`` (data_layout when empty).
    """
    call = nn_conv._make_conv(2, data, kernel, strides, padding, dilation, groups, channels,
                              kernel_size, data_layout, kernel_layout, out_layout, out_dtype)
    return make_call("qnn.conv2d", [data, kernel, input_zero_point, kernel_zero_point,
                                    input_scale, kernel_scale], **dict(call.attrs.items()))


def _conv_t_ref(args, attrs, out_type):
    data, kernel, izp, kzp = args[:4]
    x = data.astype("int64") - np.asarray(izp).astype("int64").reshape(())
    w = _shifted(kernel, kzp, _kernel_out_axis(attrs.kernel_layout))
    out = get("nn.conv2d_transpose").ref_impl([x, w], attrs,
                                              TensorType(out_type.shape, "int64"))
    return out.astype(out_type.dtype)


register_op(
    "qnn.conv2d_transpose", num_inputs=6,
    arguments=("data", "weight", "input_zero_point", "kernel_zero_point", "input_scale",
               "kernel_scale"),
    attrs=get("nn.conv2d_transpose").attrs_schema,
    rel=_rel_via("nn.conv2d_transpose", lambda a: _kernel_out_axis(a.kernel_layout)),
    ref=_conv_t_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, level=11,
    doc="Quantized 2-D transposed convolution, int32 accumulation of zero-point-shifted "
        "operands.")


def conv2d_transpose(data, weight, input_zero_point, kernel_zero_point, input_scale,
                     kernel_scale, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                     channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="IOHW",
                     out_layout="", output_padding=(0, 0), out_dtype="int32"):
    """Quantized 2-D transposed convolution (tvm.relay.qnn.op.conv2d_transpose):
    ``nn.conv2d_transpose(data - input_zero_point, weight - kernel_zero_point)`` accumulated
    in int32 (the output's scale is ``input_scale * kernel_scale``, its zero point 0).

    Args:
        data: int8/uint8 tensor in ``data_layout``. weight: int8/uint8 in ``kernel_layout``
            (default IOHW, as 0.19).
        input_zero_point: int32 scalar. kernel_zero_point: int32 scalar or 1-D per output
            channel (the layout's ``O`` axis). input_scale / kernel_scale: float32, carried for
            a following requantize.
        strides, padding, dilation, groups, channels, kernel_size, layouts, output_padding: as
            ``nn.conv2d_transpose``.
        out_dtype: ``"int32"`` (default) or ``"int64"``.

    Returns:
        the accumulator tensor, shaped as ``nn.conv2d_transpose``'s output.
    """
    from ...op import nn as _nn

    call = _nn.conv2d_transpose(data, weight, strides, padding, dilation, groups, channels,
                                kernel_size, data_layout, kernel_layout, out_layout,
                                output_padding, out_dtype)
    return make_call("qnn.conv2d_transpose", [data, weight, input_zero_point,
                                              kernel_zero_point, input_scale, kernel_scale],
                     **dict(call.attrs.items()))


def _dense_ref(args, attrs, out_type):
    data, weight, izp, kzp = args[:4]
    x = data.astype("int64") - np.asarray(izp).astype("int64").reshape(())
    w = _shifted(weight, kzp, 0)
    return (x @ w.T).astype(out_type.dtype)


register_op(
    "qnn.dense", num_inputs=6,
    arguments=("data", "weight", "input_zero_point", "kernel_zero_point", "input_scale",
               "kernel_scale"),
    attrs=get("nn.dense").attrs_schema,
    rel=_rel_via("nn.dense", lambda a: 0),
    ref=_dense_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, level=11,
    doc="Quantized dense layer, int32 accumulation of zero-point-shifted operands.")


def dense(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, units,
          out_dtype="int32"):
    """Quantized dense layer (tvm.relay.qnn.op.dense):
    ``out = (data - input_zero_point) @ (weight - kernel_zero_point[:, None]).T`` in int32.

    Args:
        data: ``(d0, ..., in)`` int8/uint8. weight: ``(units, in)`` int8/uint8.
        kernel_zero_point / kernel_scale: scalars or 1-D per output unit.

    Returns:
        ``(d0, ..., units)`` of ``out_dtype``.
    """
    return make_call("qnn.dense", [data, weight, input_zero_point, kernel_zero_point,
                                   input_scale, kernel_scale], units=units, out_dtype=out_dtype)


def _bmm_rel(types, attrs):
    op = "qnn.batch_matmul"
    if not known(types):
        return None
    x, y = (check_tensor(t, n, op) for t, n in zip(types[:2], ("x", "y")))
    for t, n in ((x, "x"), (y, "y")):
        check_dtype_in(t, _QDTYPES, n, op)
    out = get("nn.batch_matmul").type_rel([x, TensorType(y.shape, x.dtype)], attrs)
    for t, n, dt in zip(types[2:], ("x_zero_point", "y_zero_point", "x_scale", "y_scale"),
                        ("int32", "int32", "float32", "float32")):
        check_qparam(t, n, dt, op)
        if t.ndim == 1 and t.shape[0] != 1:
            raise TypeInferenceError(f"{op}: {n} must be a scalar, got shape {t.shape}")
    return TensorType(out.shape, attrs.out_dtype or "int32")


def _bmm_ref(args, attrs, out_type):
    x, y, xzp, yzp = args[:4]
    a = x.astype("int64") - np.asarray(xzp).astype("int64").reshape(())
    b = y.astype("int64") - np.asarray(yzp).astype("int64").reshape(())
    if attrs.transpose_a:
        a = a.swapaxes(1, 2)
    if attrs.transpose_b:
        b = b.swapaxes(1, 2)
    return (a @ b).astype(out_type.dtype)


register_op(
    "qnn.batch_matmul", num_inputs=6,
    arguments=("x", "y", "x_zero_point", "y_zero_point", "x_scale", "y_scale"),
    attrs=get("nn.batch_matmul").attrs_schema,
    rel=_bmm_rel, ref=_bmm_ref, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, level=11,
    doc="Quantized batch matmul (B, M, K) x (B, N, K)^T in int32.")


def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype="int32",
                 transpose_a=False, transpose_b=True):
    """Quantized batched matrix product (tvm.relay.qnn.op.batch_matmul):
    ``out[b] = (x[b] - x_zp) @ (y[b] - y_zp).T`` in int32; ``x`` is ``(B, M, K)``, ``y``
    ``(B, N, K)`` (a batch of 1 broadcasts); zero points and scales are scalars."""
    return make_call("qnn.batch_matmul", [x, y, x_zero_point, y_zero_point, x_scale, y_scale],
                     out_dtype=out_dtype, transpose_a=transpose_a, transpose_b=transpose_b)


__all__ = ["conv2d", "conv2d_transpose", "dense", "batch_matmul"]

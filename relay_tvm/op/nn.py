"""Neural-network operators (tvm.relay.op.nn): the ``nn.*`` namespace.

Layouts: ``nn.conv2d`` supports NCHW data with OIHW weights and NHWC data with HWIO weights.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType
from ._common import shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

# ---- nn.dense ----------------------------------------------------------------------------------


def _dense_rel(types, attrs):
    data, weight = types
    if isinstance(data, IncompleteType):
        return None
    (data,) = tensor_args([data], ("data",), "nn.dense")
    if isinstance(weight, IncompleteType):
        if attrs.units is None:
            return None
        weight = TensorType((attrs.units, data.shape[-1]), data.dtype)
        out = TensorType((*data.shape[:-1], attrs.units), attrs.out_dtype or data.dtype)
        return out, {1: weight}
    (weight,) = tensor_args([weight], ("weight",), "nn.dense")
    if weight.ndim != 2:
        raise TypeInferenceError(f"nn.dense: weight must be 2-d (units, in), got shape {shape_str(weight.shape)}")
    if data.ndim < 1:
        raise TypeInferenceError("nn.dense: data must have rank >= 1")
    if not _dims_match(data.shape[-1], weight.shape[1]):
        raise TypeInferenceError(
            f"nn.dense: data shape {shape_str(data.shape)} and weight shape "
            f"{shape_str(weight.shape)} disagree on the reduction axis "
            f"({data.shape[-1]} vs {weight.shape[1]})"
        )
    if attrs.units is not None and not _dims_match(weight.shape[0], attrs.units):
        raise TypeInferenceError(
            f"nn.dense: units={attrs.units} but weight shape {shape_str(weight.shape)} has "
            f"{weight.shape[0]} output units"
        )
    if data.dtype != weight.dtype:
        raise TypeInferenceError(
            f"nn.dense: data dtype {data.dtype} and weight dtype {weight.dtype} differ"
        )
    return TensorType((*data.shape[:-1], weight.shape[0]), attrs.out_dtype or data.dtype)


def _dims_match(a, b) -> bool:
    from ..ir.types import AnyDim, dim_equal

    return isinstance(a, AnyDim) or isinstance(b, AnyDim) or dim_equal(a, b)


def _dense_ref(args, attrs, out_type):
    data, weight = args
    acc = "float64" if data.dtype.kind == "f" else "int64"
    return (data.astype(acc) @ weight.astype(acc).T).astype(out_type.dtype)


def _dense_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.dense(inputs[0], inputs[1], out_dtype=out_type.dtype)


register_op(
    "nn.dense",
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=("relay.attrs.DenseAttrs", [F("units", "int?", None), F("out_dtype", "dtype", "")]),
    rel=_dense_rel,
    ref=_dense_ref,
    compute=_dense_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Dense layer: data (d0, ..., in) x weight (units, in)^T -> (d0, ..., units) (topi.nn.dense).",
    level=1,
    schedule="dense",
)


def dense(data, weight, units=None, out_dtype=""):
    """Fully connected layer ``Y = X W^T``.

    Args:
        data: ``(d0, ..., in)`` tensor.
        weight: ``(units, in)`` tensor.
        units: number of output units (lets inference fill in an unannotated weight).
        out_dtype: output dtype; ``""`` means data's dtype.

    Returns:
        ``(d0, ..., units)`` tensor.
    """
    return make_call("nn.dense", [data, weight], units=units, out_dtype=out_dtype)


# ---- nn.conv2d ---------------------------------------------------------------------------------


def pad4(padding, op_name="nn.conv2d"):
    """Relay's padding rules: 1 value for all sides, 2 for (top/bottom, left/right), 4 for
    (top, left, bottom, right)."""
    p = tuple(padding)
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    if len(p) == 4:
        return p
    raise TypeInferenceError(f"{op_name}: padding must have 1, 2 or 4 values, got {padding}")


def _pair(v, name, op_name):
    v = tuple(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise TypeInferenceError(f"{op_name}: {name} must have 1 or 2 values, got {v}")
    return v


def _conv_out(size, k, pad_lo, pad_hi, stride, dil):
    if not isinstance(size, int):
        return size if not isinstance(k, int) else size  # symbolic: keep Any/expr as is
    eff = (k - 1) * dil + 1
    return (size + pad_lo + pad_hi - eff) // stride + 1


_CONV2D_ATTRS = (
    "relay.attrs.Conv2DAttrs",
    [
        F("strides", "ints", (1, 1)),
        F("padding", "ints", (0, 0)),
        F("dilation", "ints", (1, 1)),
        F("groups", "int", 1),
        F("channels", "int?", None),
        F("kernel_size", "ints?", None),
        F("data_layout", "str", "NCHW"),
        F("kernel_layout", "str", "OIHW"),
        F("out_layout", "str", ""),
        F("out_dtype", "dtype", ""),
    ],
)


def _conv2d_rel(types, attrs):
    op = "nn.conv2d"
    data, weight = types
    if isinstance(data, IncompleteType):
        return None
    (data,) = tensor_args([data], ("data",), op)
    if attrs.data_layout not in ("NCHW", "NHWC"):
        raise TypeInferenceError(f"{op}: data_layout {attrs.data_layout!r} is not supported (NCHW, NHWC)")
    expected_kl = {"NCHW": "OIHW", "NHWC": "HWIO"}[attrs.data_layout]
    if attrs.kernel_layout != expected_kl:
        raise TypeInferenceError(
            f"{op}: kernel_layout {attrs.kernel_layout!r} with data_layout {attrs.data_layout} "
            f"is not supported (expected {expected_kl})"
        )
    if data.ndim != 4:
        raise TypeInferenceError(f"{op}: data must be 4-d {attrs.data_layout}, got shape {shape_str(data.shape)}")
    if attrs.data_layout == "NCHW":
        n, c, h, w = data.shape
    else:
        n, h, w, c = data.shape
    groups = attrs.groups
    strides = _pair(attrs.strides, "strides", op)
    dil = _pair(attrs.dilation, "dilation", op)
    pt, pl, pb, pr = pad4(attrs.padding, op)
    inferred = None
    if isinstance(weight, IncompleteType):
        if attrs.channels is None or attrs.kernel_size is None:
            return None
        kh, kw = _pair(attrs.kernel_size, "kernel_size", op)
        o = attrs.channels
        i = c // groups if isinstance(c, int) else c
        wshape = (o, i, kh, kw) if attrs.kernel_layout == "OIHW" else (kh, kw, i, o)
        weight = TensorType(wshape, data.dtype)
        inferred = {1: weight}
    else:
        (weight,) = tensor_args([weight], ("weight",), op)
        if weight.ndim != 4:
            raise TypeInferenceError(f"{op}: weight must be 4-d {attrs.kernel_layout}, got shape {shape_str(weight.shape)}")
        if data.dtype != weight.dtype:
            raise TypeInferenceError(f"{op}: data dtype {data.dtype} and weight dtype {weight.dtype} differ")
    if attrs.kernel_layout == "OIHW":
        o, i, kh, kw = weight.shape
    else:
        kh, kw, i, o = weight.shape
    if isinstance(c, int) and isinstance(i, int):
        if c % groups != 0 or c // groups != i:
            raise TypeInferenceError(
                f"{op}: weight input channels {i} must equal data channels / groups = {c}/{groups}; "
                f"data shape {shape_str(data.shape)}, weight shape {shape_str(weight.shape)}"
            )
    if isinstance(o, int) and o % groups != 0:
        raise TypeInferenceError(f"{op}: output channels {o} are not divisible by groups={groups}")
    if attrs.channels is not None and isinstance(o, int) and o != attrs.channels:
        raise TypeInferenceError(f"{op}: channels={attrs.channels} but weight shape {shape_str(weight.shape)} has {o} output channels")
    if attrs.kernel_size is not None and isinstance(kh, int):
        ks = _pair(attrs.kernel_size, "kernel_size", op)
        if (kh, kw) != ks:
            raise TypeInferenceError(f"{op}: kernel_size={ks} but weight shape {shape_str(weight.shape)} has kernel ({kh}, {kw})")
    oh = _conv_out(h, kh, pt, pb, strides[0], dil[0])
    ow = _conv_out(w, kw, pl, pr, strides[1], dil[1])
    for d, name in ((oh, "height"), (ow, "width")):
        if isinstance(d, int) and d <= 0:
            raise TypeInferenceError(
                f"{op}: output {name} would be {d}: data shape {shape_str(data.shape)} is smaller "
                f"than the dilated kernel ({kh}, {kw}) with padding {attrs.padding}"
            )
    out_dtype = attrs.out_dtype or data.dtype
    oshape = (n, o, oh, ow) if attrs.data_layout == "NCHW" else (n, oh, ow, o)
    out = TensorType(oshape, out_dtype)
    return (out, inferred) if inferred else out


def _conv2d_ref(args, attrs, out_type):
    data, weight = args
    if attrs.data_layout == "NHWC":
        data = data.transpose(0, 3, 1, 2)
        weight = weight.transpose(3, 2, 0, 1)
    acc = "float64" if data.dtype.kind == "f" else "int64"
    data = data.astype(acc)
    weight = weight.astype(acc)
    pt, pl, pb, pr = pad4(attrs.padding)
    sh, sw = _pair(attrs.strides, "strides", "nn.conv2d")
    dh, dw = _pair(attrs.dilation, "dilation", "nn.conv2d")
    g = attrs.groups
    n, c, h, w = data.shape
    o, i, kh, kw = weight.shape
    x = np.pad(data, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (w + pl + pr - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), dtype=acc)
    opg = o // g
    for gi in range(g):
        xs = x[:, gi * i:(gi + 1) * i]
        ws = weight[gi * opg:(gi + 1) * opg]
        for a in range(kh):
            for b in range(kw):
                patch = xs[:, :, a * dh: a * dh + sh * (oh - 1) + 1: sh, b * dw: b * dw + sw * (ow - 1) + 1: sw]
                out[:, gi * opg:(gi + 1) * opg] += np.einsum("nchw,oc->nohw", patch, ws[:, :, a, b])
    if attrs.data_layout == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return out.astype(out_type.dtype)


def _conv2d_compute(attrs, inputs, out_type):
    from tvm import topi

    data, weight = inputs
    return topi.nn.conv2d(
        data, weight, tuple(attrs.strides), tuple(pad4(attrs.padding)), tuple(attrs.dilation)
        if len(attrs.dilation) == 2 else tuple(attrs.dilation) * 2,
        attrs.groups, attrs.data_layout, attrs.kernel_layout, out_type.dtype,
    ) if attrs.groups == 1 else topi.nn.group_conv2d_nchw(
        data, weight, tuple(attrs.strides), tuple(pad4(attrs.padding)), tuple(attrs.dilation),
        attrs.groups, out_type.dtype,
    )


register_op(
    "nn.conv2d",
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=_CONV2D_ATTRS,
    rel=_conv2d_rel,
    ref=_conv2d_ref,
    compute=_conv2d_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="2-D convolution (topi.nn.conv2d); NCHW/OIHW or NHWC/HWIO; groups and dilation.",
    level=2,
    schedule="conv2d",
)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype=""):
    """2-D convolution (tvm.relay.nn.conv2d).

    Args:
        data: ``(N, C, H, W)`` for ``data_layout="NCHW"`` or ``(N, H, W, C)`` for ``"NHWC"``.
        weight: ``(O, C/groups, KH, KW)`` (OIHW) or ``(KH, KW, C/groups, O)`` (HWIO).
        strides, dilation: 1 or 2 ints.
        padding: 1, 2 (top/bottom, left/right) or 4 (top, left, bottom, right) ints.
        groups: channel groups (``groups == C`` is a depthwise convolution).
        channels, kernel_size: output channels and kernel size (let inference type the weight).
        out_dtype: output dtype; ``""`` means data's dtype.

    Returns:
        ``(N, O, OH, OW)`` (or NHWC) with ``OH = (H + pt + pb - (KH-1)*dil - 1) // stride + 1``.

    Raises:
        TypeInferenceError: at inference, when channels, ranks or dtypes do not agree.
    """
    def tup(v):
        return (v, v) if isinstance(v, int) else v

    return make_call(
        "nn.conv2d", [data, weight], strides=tup(strides), padding=tup(padding),
        dilation=tup(dilation), groups=groups, channels=channels,
        kernel_size=tup(kernel_size) if kernel_size is not None else None,
        data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
        out_dtype=out_dtype,
    )


__all__ = ["dense", "conv2d", "pad4"]

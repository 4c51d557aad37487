"""``nn.contrib_conv2d_NCHWc`` and ``nn.contrib_depthwise_conv2d_NCHWc``: 2-D convolution on
channel-blocked layouts (the x86 layout that
AlterOpLayout selects; tvm.relay.nn.contrib_conv2d_nchwc).

Layouts: data ``NCHW{ic}c`` of shape ``(N, C/ic, H, W, ic)``, kernel ``OIHW{ic}i{oc}o`` of shape
``(O/oc, C/ic, KH, KW, ic, oc)``, output ``NCHW{oc}c`` of shape ``(N, O/oc, OH, OW, oc)``.
``groups`` must be 1. TE compute: ``topi.nn.conv2d_NCHWc``.
"""

from __future__ import annotations

import re

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType
from ._common import out_dims, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

_DATA = re.compile(r"^NCHW(\d+)c$")
_KERNEL = re.compile(r"^OIHW(\d+)i(\d+)o$")

_ATTRS = (
    "relay.attrs.Conv2DAttrs",
    [
        F("strides", "ints", (1, 1)),
        F("padding", "ints", (0, 0)),
        F("dilation", "ints", (1, 1)),
        F("groups", "int", 1),
        F("channels", "int?", None),
        F("kernel_size", "ints?", None),
        F("data_layout", "str", "NCHW8c"),
        F("kernel_layout", "str", "OIHW8i8o"),
        F("out_layout", "str", ""),
        F("out_dtype", "dtype", ""),
    ],
)
OP = "nn.contrib_conv2d_NCHWc"
OP_DW = "nn.contrib_depthwise_conv2d_NCHWc"


def _pad4(p):
    p = tuple(p)
    return {1: p * 4, 2: (p[0], p[1], p[0], p[1]), 4: p}[len(p)]


def _pair(v):
    v = tuple(v)
    return v * 2 if len(v) == 1 else v


def blocks(attrs, depthwise=False):
    """``(ic, oc)`` block sizes from the attribute layouts.

    Raises:
        TypeInferenceError: a layout is not ``NCHW<n>c`` / ``OIHW<n>i<m>o``.
    """
    md = _DATA.match(attrs.data_layout)
    mk = _KERNEL.match(attrs.kernel_layout)
    if md is None or mk is None:
        raise TypeInferenceError(
            f"{OP}: layouts must be NCHW<n>c and OIHW<n>i<m>o, got data_layout="
            f"{attrs.data_layout!r}, kernel_layout={attrs.kernel_layout!r}"
        )
    ic, kic, oc = int(md.group(1)), int(mk.group(1)), int(mk.group(2))
    if depthwise:
        if kic != 1 or ic != oc:
            raise TypeInferenceError(
                f"{OP_DW}: kernel_layout must be OIHW1i<n>o with n the data block {ic}, got "
                f"{attrs.kernel_layout!r}"
            )
    elif ic != kic:
        raise TypeInferenceError(f"{OP}: data block {ic} and kernel input block {kic} differ")
    out = attrs.out_layout or f"NCHW{oc}c"
    mo = _DATA.match(out)
    if mo is None or int(mo.group(1)) != oc:
        raise TypeInferenceError(f"{OP}: out_layout {out!r} must be NCHW{oc}c")
    return ic, oc


def _rel(types, attrs, depthwise=False):
    op = OP_DW if depthwise else OP
    data, weight = types
    if isinstance(data, IncompleteType) or isinstance(weight, IncompleteType):
        return None
    data, weight = tensor_args([data, weight], ("data", "weight"), op)
    ic, oc = blocks(attrs, depthwise)
    if data.ndim != 5 or weight.ndim != 6:
        raise TypeInferenceError(
            f"{op}: data must be 5-d and weight 6-d, got {shape_str(data.shape)} and "
            f"{shape_str(weight.shape)}"
        )
    n, cb, h, w, c_in = data.shape
    ob, kcb, kh, kw, k_ic, k_oc = weight.shape
    if depthwise:
        ok = (c_in, k_ic, k_oc, kcb, ob) == (ic, 1, oc, 1, cb) and attrs.groups == cb * ic
    else:
        ok = (c_in, k_ic, k_oc) == (ic, ic, oc) and kcb == cb and attrs.groups == 1
    if not ok:
        raise TypeInferenceError(
            f"{op}: data {shape_str(data.shape)} ({attrs.data_layout}), weight "
            f"{shape_str(weight.shape)} ({attrs.kernel_layout}) and groups={attrs.groups} "
            f"do not agree"
        )
    pt, pl, pb, pr = _pad4(attrs.padding)
    sh, sw = _pair(attrs.strides)
    dh, dw = _pair(attrs.dilation)
    oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (w + pl + pr - (kw - 1) * dw - 1) // sw + 1
    return TensorType((n, ob, oh, ow, oc), attrs.out_dtype or data.dtype)


def _ref(args, attrs, out_type):
    from .nn_conv import conv_nd_reference

    data, weight = args
    n, cb, h, w, ic = data.shape
    ob, kcb, kh, kw, kic, oc = weight.shape
    x = data.transpose(0, 1, 4, 2, 3).reshape(n, cb * ic, h, w).astype("float64")
    k = weight.transpose(0, 5, 1, 4, 2, 3).reshape(ob * oc, kcb * kic, kh, kw).astype("float64")
    pt, pl, pb, pr = _pad4(attrs.padding)
    out = conv_nd_reference(x, k, _pair(attrs.strides), _pair(attrs.dilation), (pt, pl),
                            (pb, pr), attrs.groups)
    _, o, oh, ow = out.shape
    return out.reshape(n, o // oc, oc, oh, ow).transpose(0, 1, 3, 4, 2).astype(out_type.dtype)


def _compute(attrs, inputs, out_type, depthwise=False):
    import contextlib

    import tvm
    from tvm import topi

    ic, oc = blocks(attrs, depthwise)
    if depthwise:
        return _depthwise_compute(attrs, inputs, out_type)
    fn = topi.nn.conv2d_NCHWc
    # topi reads the current target (for its x86 config); any llvm target does for the compute
    has_target = tvm.target.Target.current(allow_none=True) is not None
    with contextlib.nullcontext() if has_target else tvm.target.Target("llvm"):
        return fn(
            inputs[0], inputs[1], tuple(_pair(attrs.strides)), tuple(_pad4(attrs.padding)),
            tuple(_pair(attrs.dilation)), attrs.data_layout, attrs.out_layout or f"NCHW{oc}c",
            out_type.dtype,
        )


def _depthwise_compute(attrs, inputs, out_type):
    """``out[n, b, y, x, c] = sum_{i,j} pad(data)[n, b, y*sh + i*dh, x*sw + j*dw, c] *
    w[b, 0, i, j, 0, c]`` (topi's generic depthwise_conv2d_NCHWc has no default here)."""
    from tvm import te, topi

    data, weight = inputs
    pt, pl, pb, pr = _pad4(attrs.padding)
    sh, sw = _pair(attrs.strides)
    dh, dw = _pair(attrs.dilation)
    _, _, kh, kw, _, _ = (int(d) for d in weight.shape)
    padded = topi.nn.pad(data, (0, 0, pt, pl, 0), (0, 0, pb, pr, 0), name="pad")
    ri = te.reduce_axis((0, kh), name="ri")
    rj = te.reduce_axis((0, kw), name="rj")
    dtype = out_type.dtype

    def f(n, b, y, x, c):
        return te.sum(
            padded[n, b, y * sh + ri * dh, x * sw + rj * dw, c].astype(dtype)
            * weight[b, 0, ri, rj, 0, c].astype(dtype),
            axis=[ri, rj],
        )

    shape = tuple(out_dims(out_type.shape))
    return te.compute(shape, f, name="depthwise_conv2d_NCHWc", tag="depthwise_conv2d_NCHWc")


register_op(
    OP,
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=_ATTRS,
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="2-D convolution on NCHW{ic}c data and OIHW{ic}i{oc}o kernels (topi.nn.conv2d_NCHWc).",
    level=10,
    schedule="conv2d_NCHWc",
)


register_op(
    OP_DW,
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=_ATTRS,
    rel=lambda types, attrs: _rel(types, attrs, True),
    ref=_ref,
    compute=lambda attrs, inputs, out_type: _compute(attrs, inputs, out_type, True),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Depthwise 2-D convolution on NCHW{c}c data and OIHW1i{c}o kernels, groups = channels "
        "(topi.nn.depthwise_conv2d_NCHWc).",
    level=10,
    schedule="depthwise_conv2d_NCHWc",
)


def contrib_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                         groups=1, channels=None, kernel_size=None, data_layout="NCHW8c",
                         kernel_layout="OIHW8i8o", out_layout="", out_dtype=""):
    """Blocked-layout convolution; see the module docstring for shapes."""
    return make_call(OP, [data, kernel], strides=tuple(strides), padding=tuple(padding),
                     dilation=tuple(dilation), groups=groups, channels=channels,
                     kernel_size=tuple(kernel_size) if kernel_size is not None else None,
                     data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout, out_dtype=out_dtype)


def contrib_depthwise_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0),
                                   dilation=(1, 1), groups=1, channels=None, kernel_size=None,
                                   data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="",
                                   out_dtype=""):
    """Blocked-layout depthwise convolution: data ``(N, C/c, H, W, c)``, kernel
    ``(C/c, 1, KH, KW, 1, c)``, ``groups == C``."""
    return make_call(OP_DW, [data, kernel], strides=tuple(strides), padding=tuple(padding),
                     dilation=tuple(dilation), groups=groups, channels=channels,
                     kernel_size=tuple(kernel_size) if kernel_size is not None else None,
                     data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout, out_dtype=out_dtype)


__all__ = ["contrib_conv2d_nchwc", "contrib_depthwise_conv2d_nchwc", "blocks"]

"""``image.dilation2d`` (tvm.relay.image.dilation2d): grayscale morphological dilation.

For NCHW data and an IHW kernel (one ``kh x kw`` window per channel):

    out[n, c, y, x] = max over (i, j) of  pad(data)[n, c, y*sh + i*dh, x*sw + j*dw] + w[c, i, j]

(NHWC data with an HWI kernel likewise), where ``pad`` adds zeros, as tvm.topi's
``dilation2d_nchw`` / ``dilation2d_nhwc`` do; the output is
``(H + top + bottom - ((kh - 1) * dh + 1)) // sh + 1`` high (width likewise). ``strides`` and
``dilations`` give (height, width): their first two values are read, as 0.19's relation did.
``padding`` is 1, 2 or 4 values (``top, left, bottom, right``).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import shape_str, tensor_args
from ._nn_common import pad_before_after
from .registry import OpPattern, make_call, register_op

_LAYOUTS = {("NCHW", "IHW"): (1, 2, 3, 0, 1, 2), ("NHWC", "HWI"): (3, 1, 2, 2, 0, 1)}
# (data C, H, W axes, kernel C, H, W axes)


def _window(attrs):
    op = "image.dilation2d"
    key = (attrs.data_layout, attrs.kernel_layout)
    if key not in _LAYOUTS:
        raise TypeInferenceError(f"{op}: layouts {key} are not supported; expected "
                                 f"('NCHW', 'IHW') or ('NHWC', 'HWI')")
    strides, dil = tuple(attrs.strides), tuple(attrs.dilations)
    if len(strides) < 2 or len(dil) < 2:
        raise TypeInferenceError(f"{op}: strides and dilations need (height, width), got "
                                 f"{strides} and {dil}")
    before, after = pad_before_after(attrs.padding, 2, op)
    if min(strides[:2]) < 1 or min(dil[:2]) < 1 or min(before + after) < 0:
        raise TypeInferenceError(f"{op}: strides {strides[:2]} and dilations {dil[:2]} must be "
                                 f">= 1 and padding {tuple(attrs.padding)} >= 0")
    return _LAYOUTS[key], strides[:2], dil[:2], before, after


def _rel(types, attrs):
    op = "image.dilation2d"
    ts = tensor_args(types, ("data", "weight"), op)
    if ts is None:
        return None
    x, w = ts
    if x.ndim != 4 or w.ndim != 3:
        raise TypeInferenceError(f"{op}: data must be 4-d and weight 3-d, got "
                                 f"{shape_str(x.shape)} and {shape_str(w.shape)}")
    (dc, dh, dw, kc, kh, kw), s, d, before, after = _window(attrs)
    if isinstance(x.shape[dc], int) and isinstance(w.shape[kc], int) \
            and x.shape[dc] != w.shape[kc]:
        raise TypeInferenceError(f"{op}: data has {x.shape[dc]} channels, weight "
                                 f"{w.shape[kc]}; data {shape_str(x.shape)}, weight "
                                 f"{shape_str(w.shape)}")
    shape = list(x.shape)
    for i, (ax, kax) in enumerate(((dh, kh), (dw, kw))):
        n, k = x.shape[ax], w.shape[kax]
        if not (isinstance(n, int) and isinstance(k, int)):
            raise TypeInferenceError(f"{op}: spatial and kernel sizes must be static, got data "
                                     f"{shape_str(x.shape)}, weight {shape_str(w.shape)}")
        out = (n + before[i] + after[i] - ((k - 1) * d[i] + 1)) // s[i] + 1
        if out < 1:
            raise TypeInferenceError(f"{op}: the dilated kernel is larger than the padded input "
                                     f"(data {shape_str(x.shape)}, weight {shape_str(w.shape)})")
        shape[ax] = out
    return TensorType(tuple(shape), attrs.out_dtype or x.dtype)


def _ref(args, attrs, out_type):
    (dc, dh, dw, kc, kh, kw), s, d, before, after = _window(attrs)
    x = np.asarray(args[0])
    w = np.asarray(args[1])
    if attrs.data_layout == "NHWC":
        x = x.transpose(0, 3, 1, 2)
        w = w.transpose(2, 0, 1)
    xp = np.pad(x, ((0, 0), (0, 0), (before[0], after[0]), (before[1], after[1])))
    n, c, _, _ = x.shape
    oh, ow = (out_type.shape[dh], out_type.shape[dw])
    out = np.full((n, c, oh, ow), -np.inf, dtype=np.float64)
    for i in range(w.shape[1]):
        for j in range(w.shape[2]):
            win = xp[:, :, i * d[0]: i * d[0] + (oh - 1) * s[0] + 1: s[0],
                     j * d[1]: j * d[1] + (ow - 1) * s[1] + 1: s[1]]
            out = np.maximum(out, win + w[None, :, i, j, None, None])
    if attrs.data_layout == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return out.astype(out_type.dtype)


def _compute(attrs, inputs, out_type):
    from tvm import topi

    _, s, d, before, after = _window(attrs)
    fn = topi.image.dilation2d_nchw if attrs.data_layout == "NCHW" else \
        topi.image.dilation2d_nhwc
    return fn(inputs[0], inputs[1], tuple(s), (before[0], before[1], after[0], after[1]),
              tuple(d), out_type.dtype)


register_op(
    "image.dilation2d",
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=("relay.attrs.Dilation2DAttrs", [
        F("strides", "ints", (1, 1)),
        F("padding", "ints", (0, 0)),
        F("dilations", "ints", (1, 1)),
        F("data_layout", "str", "NCHW"),
        F("kernel_layout", "str", "IHW"),
        F("out_dtype", "dtype", ""),
    ]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="grayscale morphological dilation (topi.image.dilation2d_nchw / _nhwc)",
    level=5,
)


def dilation2d(data, weight, strides=(1, 1), padding=(0, 0), dilations=(1, 1),
               data_layout="NCHW", kernel_layout="IHW", out_dtype=""):
    """Morphological dilation (tvm.relay.image.dilation2d); see the module docstring.

    Args:
        data: ``(N, C, H, W)`` (NCHW) or ``(N, H, W, C)`` (NHWC), static H and W.
        weight: ``(C, kh, kw)`` (IHW) or ``(kh, kw, C)`` (HWI).
        strides, dilations: (height, width) (only the first two values are read).
        padding: 1, 2 or 4 values (``top, left, bottom, right``); the padding is zeros.
        data_layout, kernel_layout: ``("NCHW", "IHW")`` or ``("NHWC", "HWI")``.
        out_dtype: the output dtype ("" for data's).

    Raises:
        TypeInferenceError: at inference, for other layouts, channel counts that differ,
            dynamic spatial sizes or a kernel larger than the padded input.
    """
    return make_call("image.dilation2d", [data, weight], strides=tuple(strides),
                     padding=tuple(padding), dilations=tuple(dilations),
                     data_layout=data_layout, kernel_layout=kernel_layout, out_dtype=out_dtype)


__all__ = ["dilation2d"]

"""Image operators (tvm.relay.image): ``image.resize2d``.

Semantics are those of Relay's Resize2D (the ONNX Resize rules) as topi.image.resize2d computes
them. Output pixel ``x`` maps to the input coordinate

- ``half_pixel``: ``(x + 0.5) * in / out - 0.5``;
- ``align_corners``: ``x * (in - 1) / (out - 1)``;
- ``asymmetric``: ``x * in / out``;
- ``pytorch_half_pixel``: as half_pixel, but 0 when ``out == 1``;
- ``tf_half_pixel_for_nn``: ``(x + 0.5) * in / out``.

``nearest_neighbor`` takes the pixel at the rounded coordinate (``rounding_method``; ``""``
means ``round`` for align_corners, else ``floor``), ``linear`` interpolates the two neighbours
per axis, ``cubic`` the four with Keys' kernel of parameter ``cubic_alpha`` (``cubic_exclude``
drops taps outside the image and renormalizes). Taps outside the image read the nearest edge
pixel. Interpolation runs in float32 and the result is cast to ``out_dtype`` (data's dtype by
default). Layouts: NCHW and NHWC. Fusion pattern kInjective.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import tensor_args
from ._nn_common import check_rank
from .registry import OpPattern, make_call, register_op

METHODS = ("nearest_neighbor", "linear", "cubic")
COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn")
ROUNDING = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
_ALIASES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest_neighbor"}


def _source_coords(out, size, mode):
    x = np.arange(out, dtype="float64")
    scale = size / out
    if mode == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if mode == "align_corners":
        return x * ((size - 1) / (out - 1) if out > 1 else 0.0)
    if mode == "asymmetric":
        return x * scale
    if mode == "pytorch_half_pixel":
        return (x + 0.5) * scale - 0.5 if out > 1 else np.zeros_like(x)
    return (x + 0.5) * scale  # tf_half_pixel_for_nn


def _round(v, method):
    return {
        "round": np.rint,
        "round_prefer_floor": lambda t: np.ceil(t - 0.5),
        "round_prefer_ceil": lambda t: np.floor(t + 0.5),
        "floor": lambda t: np.floor(t + 1e-5),  # topi's epsilon
        "ceil": lambda t: np.ceil(t - 1e-5),
    }[method](v).astype("int64")


def _cubic_weights(t, a):
    t2, t3 = t * t, t * t * t
    return [a * (t3 - 2 * t2 + t),
            (a + 2) * t3 - (3 + a) * t2 + 1,
            -(a + 2) * t3 + (3 + 2 * a) * t2 - a * t,
            -a * t3 + a * t2]


def axis_taps(size, out, method, mode, rounding="", alpha=-0.5, exclude=0):
    """For one axis, the ``(indices, weights)`` pairs whose weighted sum gives each of the
    ``out`` output positions from an input axis of ``size``."""
    x = _source_coords(out, size, mode)

    def clip(i):
        return np.clip(i, 0, size - 1)

    if method == "nearest_neighbor":
        rounding = rounding or ("round" if mode == "align_corners" else "floor")
        return [(clip(_round(x, rounding)), np.ones(out))]
    base = np.floor(x)
    t = x - base
    base = base.astype("int64")
    if method == "linear":
        return [(clip(base), 1 - t), (clip(base + 1), t)]
    ws = _cubic_weights(t, alpha)
    taps = [base - 1 + k for k in range(4)]
    if exclude:
        ws = [np.where((i < 0) | (i > size - 1), 0.0, w) for i, w in zip(taps, ws)]
        total = sum(ws)
        ws = [w / total for w in ws]
    return [(clip(i), w) for i, w in zip(taps, ws)]


def resize_reference(x, axes, sizes, method, mode, rounding="", alpha=-0.5, exclude=0):
    """Separable NumPy resize of ``x`` along ``axes`` to ``sizes`` (float64 result)."""
    y = x.astype("float32").astype("float64")
    for axis, out in zip(axes, sizes):
        shape = [1] * y.ndim
        shape[axis] = out
        taps = axis_taps(y.shape[axis], out, method, mode, rounding, alpha, exclude)
        y = sum(np.take(y, idx, axis=axis) * w.reshape(shape) for idx, w in taps)
    return y


def _spatial_axes(layout, op):
    if layout not in ("NCHW", "NHWC"):
        raise TypeInferenceError(f"{op}: layout {layout!r} is not supported (NCHW, NHWC)")
    return (2, 3) if layout == "NCHW" else (1, 2)


def _resize2d_rel(types, attrs):
    op = "image.resize2d"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    axes = _spatial_axes(attrs.layout, op)
    check_rank(data, 4, op, "data", attrs.layout)
    for name, value, allowed in (("method", attrs.method, METHODS),
                                 ("coordinate_transformation_mode",
                                  attrs.coordinate_transformation_mode, COORDINATE_MODES),
                                 ("rounding_method", attrs.rounding_method, ROUNDING)):
        if value not in allowed:
            raise TypeInferenceError(f"{op}: {name} {value!r} is not supported; expected one of "
                                     f"{', '.join(repr(a) for a in allowed)}")
    if len(attrs.size) != 2 or any(s <= 0 for s in attrs.size):
        raise TypeInferenceError(f"{op}: size must be 2 positive ints, got {attrs.size}")
    shape = list(data.shape)
    for a, s in zip(axes, attrs.size):
        shape[a] = s
    return TensorType(shape, attrs.out_dtype or data.dtype)


def _resize2d_ref(args, attrs, out_type):
    axes = _spatial_axes(attrs.layout, "image.resize2d")
    y = resize_reference(args[0], axes, attrs.size, attrs.method,
                         attrs.coordinate_transformation_mode, attrs.rounding_method,
                         attrs.cubic_alpha, attrs.cubic_exclude)
    return y.astype("float32").astype(out_type.dtype)


def _resize2d_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.image.resize2d(
        inputs[0], list(attrs.roi) or [0.0] * 4, list(attrs.size), layout=attrs.layout,
        method=attrs.method, coordinate_transformation_mode=attrs.coordinate_transformation_mode,
        rounding_method=attrs.rounding_method, bicubic_alpha=attrs.cubic_alpha,
        bicubic_exclude=attrs.cubic_exclude, extrapolation_value=attrs.extrapolation_value,
        out_dtype=out_type.dtype,
    )


register_op(
    "image.resize2d",
    num_inputs=1,
    arguments=("data",),
    attrs=(
        "relay.attrs.Resize2DAttrs",
        [
            F("roi", "floats", ()),
            F("size", "ints"),
            F("layout", "str", "NCHW"),
            F("method", "str", "linear"),
            F("coordinate_transformation_mode", "str", "half_pixel"),
            F("rounding_method", "str", ""),
            F("cubic_alpha", "float", -0.5),
            F("cubic_exclude", "int", 0),
            F("extrapolation_value", "float", 0.0),
            F("out_dtype", "dtype", ""),
        ],
    ),
    rel=_resize2d_rel,
    ref=_resize2d_ref,
    compute=_resize2d_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Resize the H and W axes to ``size`` by nearest, linear or cubic interpolation "
        "(topi.image.resize2d).",
    level=5,
)


def resize2d(data, size, roi=None, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=""):
    """Resize an image batch (tvm.relay.image.resize2d).

    Args:
        data: ``(N, C, H, W)`` (NCHW) or ``(N, H, W, C)`` (NHWC).
        size: the output ``(height, width)``, ints.
        roi: unused unless a crop-and-resize mode is given (kept for Relay compatibility).
        method: ``"nearest_neighbor"``, ``"linear"`` or ``"cubic"`` (``"bilinear"`` and
            ``"bicubic"`` are accepted as aliases).
        coordinate_transformation_mode: see the module docstring.
        rounding_method: for nearest_neighbor: ``"round"``, ``"floor"``, ``"ceil"``,
            ``"round_prefer_floor"``, ``"round_prefer_ceil"`` or ``""`` (the default rule).
        cubic_alpha, cubic_exclude: Keys' cubic parameter; drop taps outside the image.
        out_dtype: the output dtype, data's when ``""``.

    Returns:
        ``(N, C, size[0], size[1])`` (or NHWC).

    Raises:
        TypeInferenceError: at inference, for an unknown method, mode, layout or rank.
    """
    if isinstance(size, int):
        size = (size, size)
    if not all(isinstance(s, (int, np.integer)) for s in size):
        raise TypeError("image.resize2d: size must be static ints (dynamic sizes are not "
                        "supported)")
    method = _ALIASES.get(method, method)
    return make_call(
        "image.resize2d", [data], roi=tuple(roi) if roi is not None else (), size=tuple(size),
        layout=layout, method=method,
        coordinate_transformation_mode=coordinate_transformation_mode,
        rounding_method=rounding_method, cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude,
        extrapolation_value=extrapolation_value, out_dtype=out_dtype,
    )


__all__ = ["resize2d"]

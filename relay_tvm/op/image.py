"""Image operators (tvm.relay.image): ``image.resize1d/2d/3d``, ``image.affine_grid``,
``image.grid_sample``.

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
default). Layouts: NCW/NWC, NCHW/NHWC, NCDHW/NDHWC. Fusion pattern kInjective.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import shape_str, tensor_args
from ._nn_common import check_rank
from ._nn_common import dims_match as _dims_match
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
        terms = [np.take(y, idx, axis=axis) * w.reshape(shape) for idx, w in taps]
        y = terms[0]
        for t in terms[1:]:  # not sum(): its start 0 + (-0.0) turned a copied -0 into +0
            y = y + t
    return y


_RESIZE_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _spatial_axes(layout, nd, op):
    if layout not in _RESIZE_LAYOUTS[nd]:
        raise TypeInferenceError(
            f"{op}: layout {layout!r} is not supported ({', '.join(_RESIZE_LAYOUTS[nd])})"
        )
    return tuple(range(2, 2 + nd)) if layout[1] == "C" else tuple(range(1, 1 + nd))


def _resize_rel(nd):
    op = f"image.resize{nd}d"

    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op)
        if ts is None:
            return None
        data = ts[0]
        axes = _spatial_axes(attrs.layout, nd, op)
        check_rank(data, nd + 2, op, "data", attrs.layout)
        for name, value, allowed in (("method", attrs.method, METHODS),
                                     ("coordinate_transformation_mode",
                                      attrs.coordinate_transformation_mode, COORDINATE_MODES),
                                     ("rounding_method", attrs.rounding_method, ROUNDING)):
            if value not in allowed:
                raise TypeInferenceError(f"{op}: {name} {value!r} is not supported; expected one "
                                         f"of {', '.join(repr(a) for a in allowed)}")
        if len(attrs.size) != nd or any(s <= 0 for s in attrs.size):
            raise TypeInferenceError(f"{op}: size must be {nd} positive ints, got {attrs.size}")
        shape = list(data.shape)
        for a, s in zip(axes, attrs.size):
            shape[a] = s
        return TensorType(shape, attrs.out_dtype or data.dtype)

    return rel


def _resize_ref(nd):
    def ref(args, attrs, out_type):
        axes = _spatial_axes(attrs.layout, nd, f"image.resize{nd}d")
        y = resize_reference(args[0], axes, attrs.size, attrs.method,
                             attrs.coordinate_transformation_mode, attrs.rounding_method,
                             attrs.cubic_alpha, attrs.cubic_exclude)
        return y.astype("float32").astype(out_type.dtype)

    return ref


def _resize_compute(nd):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        fn = getattr(topi.image, f"resize{nd}d")
        return fn(
            inputs[0], list(attrs.roi) or [0.0] * (2 * nd), list(attrs.size), layout=attrs.layout,
            method=attrs.method,
            coordinate_transformation_mode=attrs.coordinate_transformation_mode,
            rounding_method=attrs.rounding_method, bicubic_alpha=attrs.cubic_alpha,
            bicubic_exclude=attrs.cubic_exclude, extrapolation_value=attrs.extrapolation_value,
            out_dtype=out_type.dtype,
        )

    return compute


for _nd in (1, 2, 3):
    register_op(
        f"image.resize{_nd}d",
        num_inputs=1,
        arguments=("data",),
        attrs=(
            f"relay.attrs.Resize{_nd}DAttrs",
            [
                F("roi", "floats", ()),
                F("size", "ints"),
                F("layout", "str", _RESIZE_LAYOUTS[_nd][0]),
                F("method", "str", "linear"),
                F("coordinate_transformation_mode", "str", "half_pixel"),
                F("rounding_method", "str", ""),
                F("cubic_alpha", "float", -0.5),
                F("cubic_exclude", "int", 0),
                F("extrapolation_value", "float", 0.0),
                F("out_dtype", "dtype", ""),
            ],
        ),
        rel=_resize_rel(_nd),
        ref=_resize_ref(_nd),
        compute=_resize_compute(_nd),
        pattern=OpPattern.INJECTIVE,
        doc=f"Resize the {_nd} spatial axes to ``size`` by nearest, linear or cubic interpolation "
            f"(topi.image.resize{_nd}d).",
        level=5,
    )


def _make_resize(nd, data, size, roi, layout, method, coordinate_transformation_mode,
                 rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype):
    from ..ir.expr import Constant, Expr
    from ..ir.expr import const as _const

    if isinstance(size, Constant):
        size = [int(v) for v in np.asarray(size.data.numpy()).reshape(-1)]
    if isinstance(roi, Constant):
        roi = [float(v) for v in np.asarray(roi.data.numpy()).reshape(-1)]
    if nd == 2 and (isinstance(size, Expr) or isinstance(roi, Expr)):
        from . import dyn_nn

        if not isinstance(size, Expr):
            size = _const(np.asarray(size, "int64"))
        if not isinstance(roi, Expr):
            roi = _const(np.asarray(roi if roi is not None else [0.0] * 4, "float32"))
        return dyn_nn.resize2d(data, size, roi, layout, _ALIASES.get(method, method),
                               coordinate_transformation_mode, rounding_method, cubic_alpha,
                               cubic_exclude, extrapolation_value, out_dtype)
    if isinstance(size, int):
        size = (size,) * nd
    if not all(isinstance(s, (int, np.integer)) for s in size):
        raise TypeError(f"image.resize{nd}d: size must be static ints (a size given as a tensor "
                        f"is supported by resize2d only)")
    method = _ALIASES.get(method, method)
    return make_call(
        f"image.resize{nd}d", [data], roi=tuple(roi) if roi is not None else (),
        size=tuple(size), layout=layout, method=method,
        coordinate_transformation_mode=coordinate_transformation_mode,
        rounding_method=rounding_method, cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude,
        extrapolation_value=extrapolation_value, out_dtype=out_dtype,
    )


def resize1d(data, size, roi=None, layout="NCW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=""):
    """Resize the W axis of ``(N, C, W)`` (NCW) or ``(N, W, C)`` (NWC) data to ``size``
    (tvm.relay.image.resize1d); the arguments are those of :func:`resize2d`."""
    return _make_resize(1, data, size, roi, layout, method, coordinate_transformation_mode,
                        rounding_method, cubic_alpha, cubic_exclude, extrapolation_value,
                        out_dtype)


def resize3d(data, size, roi=None, layout="NCDHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=""):
    """Resize the D, H, W axes of NCDHW or NDHWC data to ``size`` (3 ints)
    (tvm.relay.image.resize3d); the arguments are those of :func:`resize2d`."""
    return _make_resize(3, data, size, roi, layout, method, coordinate_transformation_mode,
                        rounding_method, cubic_alpha, cubic_exclude, extrapolation_value,
                        out_dtype)


def resize2d(data, size, roi=None, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=""):
    """Resize an image batch (tvm.relay.image.resize2d; semantics in the module docstring).

    Args:
        data: ``(N, C, H, W)`` (layout ``"NCHW"``) or ``(N, H, W, C)`` (``"NHWC"``).
        size: the output ``(height, width)``: ints (one int is used for both), or a 1-D
            integer tensor expression (not a constant), which makes a ``dyn.image.resize2d``
            call (its H, W are ``Any``; the VM runs it, see :mod:`relay_tvm.op.dyn_nn`).
        roi: accepted for tvm.relay compatibility and ignored: only the
            ``"tf_crop_and_resize"`` mode reads it, and relay_tvm does not have that mode.
        layout: ``"NCHW"`` or ``"NHWC"``.
        method: ``"nearest_neighbor"``, ``"linear"`` or ``"cubic"`` (tvm.relay 0.19's names).
            relay_tvm also accepts ``"nearest"``, ``"bilinear"`` and ``"bicubic"`` for them
            (stored as the 0.19 name; 0.19 itself refused these; ``nn.upsampling`` takes only
            ``"bilinear"``/``"bicubic"``).
        coordinate_transformation_mode: ``"half_pixel"`` (default), ``"align_corners"``,
            ``"asymmetric"``, ``"pytorch_half_pixel"`` or ``"tf_half_pixel_for_nn"``; the
            mapping of each is in the module docstring.
        rounding_method: for nearest_neighbor: ``"round"``, ``"floor"``, ``"ceil"``,
            ``"round_prefer_floor"``, ``"round_prefer_ceil"`` or ``""`` (``round`` with
            align_corners, else ``floor``).
        cubic_alpha: Keys' cubic parameter (default -0.5).
        cubic_exclude: 1 to drop the taps outside the image and renormalize the others.
        extrapolation_value: accepted and ignored (only tf_crop_and_resize uses it).
        out_dtype: the output dtype, data's when ``""``.

    Returns:
        ``(N, C, size[0], size[1])`` (NCHW) or ``(N, size[0], size[1], C)`` (NHWC).

    Raises:
        TypeInferenceError: at inference, for an unknown method, mode, rounding method or
            layout, data of rank other than 4, or a size that is not 2 positive ints.
    """
    return _make_resize(2, data, size, roi, layout, method, coordinate_transformation_mode,
                        rounding_method, cubic_alpha, cubic_exclude, extrapolation_value,
                        out_dtype)


# ---- affine_grid, grid_sample (spatial transformer networks, Jaderberg et al. 2015) ----------


def _affine_grid_rel(types, attrs):
    op = "image.affine_grid"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    if data.ndim != 3 or data.shape[1:] != (2, 3):
        raise TypeInferenceError(
            f"{op}: data must be (batch, 2, 3) affine matrices, got shape {shape_str(data.shape)}"
        )
    ts_ = tuple(attrs.target_shape)
    if len(ts_) != 2 or any(t <= 1 for t in ts_):
        raise TypeInferenceError(f"{op}: target_shape must be 2 ints > 1, got {ts_}")
    if not data.dtype.startswith("float"):
        raise TypeInferenceError(f"{op}: data has dtype {data.dtype}, expected a float dtype")
    return TensorType((data.shape[0], 2, *ts_), data.dtype)


def _affine_grid_ref(args, attrs, out_type):
    theta = args[0].astype("float64")
    h, w = attrs.target_shape
    ys = -1.0 + np.arange(h) * 2.0 / (h - 1)
    xs = -1.0 + np.arange(w) * 2.0 / (w - 1)
    # out[n, d] = theta[n, d, 0] * x + theta[n, d, 1] * y + theta[n, d, 2]
    out = (theta[:, :, 0, None, None] * xs[None, None, None, :]
           + theta[:, :, 1, None, None] * ys[None, None, :, None]
           + theta[:, :, 2, None, None])
    return out.astype(out_type.dtype)


def _image_affine_grid_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.image.affine_grid(
        inputs[0], list(attrs.target_shape)
    )


register_op(
    "image.affine_grid",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.AffineGridAttrs", [F("target_shape", "ints")]),
    rel=_affine_grid_rel,
    ref=_affine_grid_ref,
    compute=_image_affine_grid_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Sampling grid (batch, 2, H, W) of x, y in [-1, 1] transformed by (batch, 2, 3) affine "
        "matrices (topi.image.affine_grid).",
    level=5,
)


def affine_grid(data, target_shape=None):
    """A 2-D sampling grid from affine matrices (tvm.relay.image.affine_grid).

    Args:
        data: ``(N, 2, 3)`` float affine matrices.
        target_shape: the output ``(H, W)``, both > 1.

    Returns:
        ``(N, 2, H, W)``: channel 0 is x, channel 1 is y, ``theta @ [x, y, 1]`` over the grid
        ``x = -1 + 2 j / (W - 1)``, ``y = -1 + 2 i / (H - 1)``.
    """
    return make_call("image.affine_grid", [data], target_shape=tuple(target_shape))


GRID_METHODS = ("nearest", "bilinear")
GRID_PADDING = ("zeros", "border", "reflection")


def _grid_sample_rel(types, attrs):
    op = "image.grid_sample"
    ts = tensor_args(types, ("data", "grid"), op)
    if ts is None:
        return None
    data, grid = ts
    if attrs.layout != "NCHW":
        raise TypeInferenceError(f"{op}: layout {attrs.layout!r} is not supported (NCHW)")
    check_rank(data, 4, op, "data", "NCHW")
    if grid.ndim != 4 or grid.shape[1] != 2 or not _dims_match(grid.shape[0], data.shape[0]):
        raise TypeInferenceError(
            f"{op}: grid must be (batch, 2, H, W) with data's batch; data shape "
            f"{shape_str(data.shape)}, grid shape {shape_str(grid.shape)}"
        )
    if grid.dtype != data.dtype:
        raise TypeInferenceError(f"{op}: data dtype {data.dtype} and grid dtype {grid.dtype} differ")
    if attrs.method not in GRID_METHODS:
        raise TypeInferenceError(f"{op}: method {attrs.method!r} is not supported; expected one "
                                 f"of {GRID_METHODS}")
    if attrs.padding_mode not in GRID_PADDING:
        raise TypeInferenceError(f"{op}: padding_mode {attrs.padding_mode!r} is not one of "
                                 f"{GRID_PADDING}")
    return TensorType((data.shape[0], data.shape[1], grid.shape[2], grid.shape[3]), data.dtype)


def _grid_source(g, size, attrs):
    """Grid values in [-1, 1] -> input pixel coordinates, with border/reflection handling."""
    if attrs.align_corners:
        x = (g + 1) * (size - 1) / 2
        lo, span = 0.0, size - 1
    else:
        x = -0.5 + (g + 1) * size / 2
        lo, span = -0.5, size
    if attrs.padding_mode == "reflection":
        d = np.abs(x - lo)
        flips = np.floor(d / span) if span > 0 else np.zeros_like(d)
        extra = d - flips * span
        refl = np.where(flips % 2 == 0, lo + extra, lo + span - extra)
        x = np.where((x >= lo) & (x <= lo + span), x, refl)
    if attrs.padding_mode in ("border", "reflection"):
        x = np.clip(x, 0, size - 1)
    return x


def _grid_sample_ref(args, attrs, out_type):
    data, grid = args
    data = data.astype("float64")
    n, c, h, w = data.shape
    y = _grid_source(grid[:, 1].astype("float64"), h, attrs)  # (N, OH, OW)
    x = _grid_source(grid[:, 0].astype("float64"), w, attrs)
    batch = np.arange(n)[:, None, None]

    def pixel(yi, xi):  # (N, C, OH, OW), zero outside the image
        ok = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
        v = data[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # (N, OH, OW, C)
        return np.moveaxis(np.where(ok[..., None], v, 0.0), -1, 1)

    if attrs.method == "nearest":
        out = pixel(np.rint(y).astype("int64"), np.rint(x).astype("int64"))
    else:
        y0, x0 = np.floor(y).astype("int64"), np.floor(x).astype("int64")
        ty, tx = (y - y0)[:, None], (x - x0)[:, None]
        out = (pixel(y0, x0) * (1 - ty) * (1 - tx) + pixel(y0, x0 + 1) * (1 - ty) * tx
               + pixel(y0 + 1, x0) * ty * (1 - tx) + pixel(y0 + 1, x0 + 1) * ty * tx)
    return out.astype(out_type.dtype)


def _image_grid_sample_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.image.grid_sample(
        inputs[0], inputs[1], attrs.method, attrs.layout, attrs.padding_mode, attrs.align_corners
    )


register_op(
    "image.grid_sample",
    num_inputs=2,
    arguments=("data", "grid"),
    attrs=("relay.attrs.GridSampleAttrs", [
        F("method", "str", "bilinear"), F("layout", "str", "NCHW"),
        F("padding_mode", "str", "zeros"), F("align_corners", "bool", True),
    ]),
    rel=_grid_sample_rel,
    ref=_grid_sample_ref,
    compute=_image_grid_sample_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Sample data (N, C, H, W) at grid (N, 2, OH, OW) positions in [-1, 1] "
        "(topi.image.grid_sample).",
    level=5,
)


def grid_sample(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros",
                align_corners=True):
    """Sample an image batch at grid positions (tvm.relay.image.grid_sample).

    Args:
        data: ``(N, C, H, W)``.
        grid: ``(N, 2, OH, OW)`` of data's dtype; channel 0 is x, channel 1 is y, in ``[-1, 1]``
            (``-1``/``1`` are the corner pixel centers when ``align_corners``, else their outer
            edges).
        method: ``"bilinear"`` or ``"nearest"`` (round half to even).
        padding_mode: outside the image read ``"zeros"``, the ``"border"`` or the
            ``"reflection"`` of the coordinate.

    Returns:
        ``(N, C, OH, OW)``.
    """
    return make_call("image.grid_sample", [data, grid], method=method, layout=layout,
                     padding_mode=padding_mode, align_corners=align_corners)


from .image_crop import crop_and_resize  # noqa: E402  (image.crop_and_resize)
from .image_dilation import dilation2d  # noqa: E402  (image.dilation2d)

__all__ = ["resize1d", "resize2d", "resize3d", "affine_grid", "grid_sample", "dilation2d",
           "crop_and_resize"]

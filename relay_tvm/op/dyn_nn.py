"""The dynamic image/nn operators (tvm.relay.op.dyn.image, tvm.relay.op.dyn.nn):
``dyn.image.resize2d``, ``dyn.nn.pad``, ``dyn.nn.upsampling``, ``dyn.nn.upsampling3d``.

Each is its static operator (``image.resize2d``, ``nn.pad``, ``nn.upsampling[3d]``) with the
size-like attribute passed as a tensor whose value is known only at run time:

- ``dyn.image.resize2d(data, size, roi)``: ``size`` a 1-D tensor ``(out_h, out_w)``, integer
  or float (as tvm.relay 0.19 allowed; a float size must hold whole numbers at run time),
  ``roi`` a 1-D float tensor of 4 values (only read by a crop-and-resize mode, which neither
  resize supports); the H and W axes of the output are ``Any``.
- ``dyn.nn.pad(data, pad_width, pad_value)``: ``pad_width`` an integer tensor of shape
  ``(rank, 2)`` of (before, after) widths; every output axis is ``Any``.
- ``dyn.nn.upsampling(data, scale_h, scale_w)``: scalar float tensors; the output H and W are
  ``floor(H * scale_h + 0.5)`` and ``floor(W * scale_w + 0.5)`` (``nn.upsampling``'s rule), ``Any``;
  ``dyn.nn.upsampling3d(data, scale_d, scale_h, scale_w)`` likewise for D, H and W.

``relay.image.resize2d``, ``relay.nn.pad``, ``relay.nn.upsampling`` and ``relay.nn.upsampling3d``
make these calls when the argument is an expression other than a constant (as tvm.relay 0.19
did); ``transform.DynamicToStatic`` turns them back into the static operators once it is
constant.

As the other ``dyn.*`` operators (:mod:`relay_tvm.op.dyn`) they are kOpaque and carry a shape
function (TE over the input values) that the VM runs before it allocates the output. A value that
makes no valid output (a size <= 0, a negative pad width, a reflect width not smaller than its
axis, a scale <= 0) gives a negative dimension in the shape function, and the VM refuses it with
an :class:`relay_tvm.errors.InputError` before running the kernel; the reference kernels (the
interpreter's) raise :class:`relay_tvm.errors.InputError` for the same values. The computed
values are the static operators' (same reference kernels, same topi computes).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..errors import InputError, TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import out_dims, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op, register_shape_error, register_shape_func


def _vec(values):
    from tvm import te

    from ._common import select_of

    return te.compute((len(values),), select_of([v.astype("int64") for v in values]),
                      name="shape")


def _dim(d):
    """A TE tensor's dimension as an int64 PrimExpr."""
    from tvm import tirx

    return tirx.const(int(d), "int64") if isinstance(d, int) or hasattr(d, "value") \
        else d.astype("int64")


def _int_tensor(t, what, op, shape_ok, expected):
    if not str(t.dtype).startswith(("int", "uint")):
        raise TypeInferenceError(f"{op}: {what} must have an integer dtype, got {t.dtype}")
    if not shape_ok(t.shape):
        raise TypeInferenceError(f"{op}: {what} must be {expected}, got shape "
                                 f"{shape_str(t.shape)}")


def _scalar_float(t, what, op):
    if not str(t.dtype).startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op}: {what} must have a float dtype, got {t.dtype}")
    if t.shape:
        raise TypeInferenceError(f"{op}: {what} must be a scalar, got shape "
                                 f"{shape_str(t.shape)}")


def _static_rel(rel, static_name, dyn_name, types, attrs):
    """The static operator's relation; its errors name the dyn operator."""
    try:
        return rel(types, attrs)
    except TypeInferenceError as e:
        msg = str(e)
        if msg.startswith(static_name + ":"):
            raise TypeInferenceError(dyn_name + msg[len(static_name):]) from None
        raise


# ---- dyn.image.resize2d ------------------------------------------------------------------------

_RESIZE = "dyn.image.resize2d"


def _static_resize_attrs(attrs, size):
    fields = {k: getattr(attrs, k) for k in (
        "layout", "method", "coordinate_transformation_mode", "rounding_method", "cubic_alpha",
        "cubic_exclude", "extrapolation_value", "out_dtype")}
    return SimpleNamespace(size=tuple(size), roi=(), **fields)


def _resize_rel(types, attrs):
    from .image import _resize_rel as static_rel
    from .image import _spatial_axes

    ts = tensor_args(types, ("data", "size", "roi"), _RESIZE)
    if ts is None:
        return None
    data, size, roi = ts
    if not str(size.dtype).startswith(("int", "uint", "float")):
        raise TypeInferenceError(f"{_RESIZE}: size must have an integer or float dtype, got "
                                 f"{size.dtype}")
    if tuple(size.shape) != (2,):
        raise TypeInferenceError(f"{_RESIZE}: size must be a 1-D tensor of 2 values (height, "
                                 f"width), got shape {shape_str(size.shape)}")
    if not str(roi.dtype).startswith("float") or tuple(roi.shape) != (4,):
        raise TypeInferenceError(f"{_RESIZE}: roi must be a 1-D float tensor of 4 values, got "
                                 f"{shape_str(roi.shape)} {roi.dtype}")
    # the static relation checks rank, layout, method and modes; H and W become Any
    out = _static_rel(static_rel(2), "image.resize2d", _RESIZE, [data],
                      _static_resize_attrs(attrs, (1, 1)))
    shape = list(out.shape)
    for a in _spatial_axes(attrs.layout, 2, _RESIZE):
        shape[a] = AnyDim()
    return TensorType(shape, out.dtype)


def _resize_sizes(size):
    raw = np.asarray(size).reshape(-1)
    if raw.dtype.kind == "f" and not np.all(raw == np.floor(raw)):
        raise InputError(f"{_RESIZE}: a float size must hold whole numbers, got {raw.tolist()}")
    vals = [int(v) for v in raw]
    if any(v <= 0 for v in vals):
        raise InputError(f"{_RESIZE}: size must be positive, got {vals}")
    return vals


def _resize_ref(args, attrs, out_type):
    from .image import _resize_ref as static_ref

    static = _static_resize_attrs(attrs, _resize_sizes(args[1]))
    return static_ref(2)([args[0]], static, out_type)


def _resize_compute(attrs, inputs, out_type):
    from tvm import topi

    from .image import _spatial_axes

    shape = out_dims(out_type.shape)
    size = [shape[a] for a in _spatial_axes(attrs.layout, 2, _RESIZE)]
    roi = inputs[2]
    return topi.image.resize2d(
        inputs[0], [roi[i] for i in range(4)], size, layout=attrs.layout, method=attrs.method,
        coordinate_transformation_mode=attrs.coordinate_transformation_mode,
        rounding_method=attrs.rounding_method, bicubic_alpha=attrs.cubic_alpha,
        bicubic_exclude=attrs.cubic_exclude, extrapolation_value=attrs.extrapolation_value,
        out_dtype=out_type.dtype, output_shape=shape)


def _resize_shape(attrs, inputs, out_type):
    from tvm import tirx

    from .image import _spatial_axes

    x, size = inputs[0], inputs[1]
    dims = [_dim(d) for d in x.shape]
    for k, a in enumerate(_spatial_axes(attrs.layout, 2, _RESIZE)):
        s = size[k]
        ok = s > tirx.const(0, str(size.dtype))
        if str(size.dtype).startswith("float"):  # whole numbers only (tvm.relay 0.19 took
            ok = tirx.all(ok, s == tirx.floor(s))  # float sizes and truncated them)
        dims[a] = tirx.Select(ok, s.astype("int64"), tirx.const(-1, "int64"))
    return [_vec(dims)]


register_op(
    _RESIZE, num_inputs=3, arguments=("data", "size", "roi"),
    attrs=("relay.attrs.Resize2DAttrs", [
        F("layout", "str", "NCHW"), F("method", "str", "linear"),
        F("coordinate_transformation_mode", "str", "half_pixel"),
        F("rounding_method", "str", ""), F("cubic_alpha", "float", -0.5),
        F("cubic_exclude", "int", 0), F("extrapolation_value", "float", 0.0),
        F("out_dtype", "dtype", "")]),
    rel=_resize_rel, ref=_resize_ref, compute=_resize_compute, pattern=OpPattern.OPAQUE,
    doc="image.resize2d with the output (height, width) given as a 1-D tensor", level=5)
register_shape_func(_RESIZE, _resize_shape)
register_shape_error(
    _RESIZE, "the output size (its tensor argument size) must hold whole numbers >= 1; got a "
    "0, negative or fractional size")


# ---- dyn.nn.pad --------------------------------------------------------------------------------

_PAD = "dyn.nn.pad"


def _pad_rel(types, attrs):
    from .nn_shape import PAD_MODES

    ts = tensor_args(types, ("data", "pad_width", "pad_value"), _PAD)
    if ts is None:
        return None
    data, width, value = ts
    n = data.ndim
    _int_tensor(width, "pad_width", _PAD, lambda s: tuple(s) == (n, 2),
                f"of shape ({n}, 2) (one (before, after) row per axis of data "
                f"{shape_str(data.shape)})")
    if value.ndim != 0:
        raise TypeInferenceError(f"{_PAD}: pad_value must be a scalar, got shape "
                                 f"{shape_str(value.shape)}")
    if attrs.pad_mode not in PAD_MODES:
        raise TypeInferenceError(f"{_PAD}: pad_mode {attrs.pad_mode!r} is not one of "
                                 f"{PAD_MODES}")
    return TensorType((AnyDim(),) * n, data.dtype)


def _pad_widths(x, width, mode):
    widths = [(int(b), int(a)) for b, a in np.asarray(width).reshape(-1, 2)]
    for i, ((b, a), d) in enumerate(zip(widths, x.shape)):
        if b < 0 or a < 0:
            raise InputError(f"{_PAD}: pad_width {widths} has a negative width on axis {i}")
        if mode == "reflect" and max(b, a) >= d and (b or a):
            raise InputError(f"{_PAD}: reflect padding of {max(b, a)} on axis {i} needs a "
                             f"dimension larger than that, data shape {x.shape}")
        if mode == "edge" and d == 0 and (b or a):
            raise InputError(f"{_PAD}: edge padding of the empty axis {i}")
    return widths


def _pad_ref(args, attrs, out_type):
    from .nn_shape import _pad_ref as static_ref

    widths = _pad_widths(args[0], args[1], attrs.pad_mode)
    return static_ref([args[0], args[2]], SimpleNamespace(pad_width=widths,
                                                          pad_mode=attrs.pad_mode), out_type)


def _pad_compute(attrs, inputs, out_type):
    from tvm import te, tirx

    x, width, value = inputs
    shape = out_dims(out_type.shape)
    mode = attrs.pad_mode

    def f(*i):
        src, inside = [], []
        for a in range(len(shape)):
            n = _dim(x.shape[a])
            k = i[a].astype("int64") - width[a, 0].astype("int64")
            if mode == "constant":
                inside.append(tirx.all(k >= 0, k < n))
                src.append(tirx.Select(k < 0, tirx.const(0, "int64"),
                                       tirx.Select(k < n, k, n - 1)))
            elif mode == "edge":
                src.append(tirx.max(tirx.min(k, n - 1), tirx.const(0, "int64")))
            else:  # reflect: mirror without repeating the border (NumPy's "reflect")
                k = tirx.Select(k < 0, -k, k)
                src.append(tirx.Select(k >= n, 2 * (n - 1) - k, k))
        v = x[tuple(src)]
        if mode != "constant":
            return v
        # lazy: an empty axis has nothing to read
        return tirx.if_then_else(tirx.all(*inside) if len(inside) > 1 else inside[0], v,
                                 value[()].astype(x.dtype))

    return te.compute(shape, f, name="dyn_pad")


def _pad_shape(attrs, inputs, out_type):
    from tvm import tirx

    x, width = inputs[0], inputs[1]
    minus = tirx.const(-1, "int64")
    dims = []
    for a in range(len(x.shape)):
        n = _dim(x.shape[a])
        b, e = width[a, 0].astype("int64"), width[a, 1].astype("int64")
        ok = tirx.all(b >= 0, e >= 0)
        if attrs.pad_mode == "reflect":
            ok = tirx.all(ok, tirx.any(tirx.all(b == 0, e == 0), tirx.all(b < n, e < n)))
        elif attrs.pad_mode == "edge":
            ok = tirx.all(ok, tirx.any(tirx.all(b == 0, e == 0), n > 0))
        dims.append(tirx.Select(ok, n + b + e, minus))
    return [_vec(dims)]


register_op(
    _PAD, num_inputs=3, arguments=("data", "pad_width", "pad_value"),
    attrs=("relay.attrs.PadAttrs", [F("pad_mode", "str", "constant")]),
    rel=_pad_rel, ref=_pad_ref, compute=_pad_compute, pattern=OpPattern.OPAQUE,
    doc="nn.pad with the (before, after) widths given as a (rank, 2) integer tensor", level=2)
register_shape_func(_PAD, _pad_shape)


def _pad_error(attrs) -> str:
    extra = {"reflect": "; in mode 'reflect' each width must also be smaller than its axis",
             "edge": "; in mode 'edge' a padded axis must not be empty"}.get(attrs.pad_mode, "")
    return (f"a pad width (its tensor argument pad_width, (rank, 2) of (before, after)) is "
            f"negative; expected widths >= 0{extra}")


register_shape_error(_PAD, _pad_error)


# ---- dyn.nn.upsampling, dyn.nn.upsampling3d ----------------------------------------------------


class _Up:
    """One of the two upsampling operators: its static counterpart's pieces and attributes."""

    def __init__(self, nd):
        self.nd = nd
        self.name = "dyn.nn.upsampling" if nd == 2 else "dyn.nn.upsampling3d"
        self.scales = ("scale_h", "scale_w") if nd == 2 else ("scale_d", "scale_h", "scale_w")
        self.extra = ("align_corners",) if nd == 2 else ("coordinate_transformation_mode",)

    def static(self):
        from . import nn_shape, nn_spatial

        if self.nd == 2:
            return nn_shape._upsampling_rel, nn_shape._upsampling_ref, \
                nn_shape._upsampling_compute
        return nn_spatial._up3_rel, nn_spatial._up3_ref, nn_spatial._up3_compute

    def axes(self, layout):
        return tuple(k for k, c in enumerate(layout) if c in "DHW"[3 - self.nd:])

    def attrs(self, attrs, scales):
        fields = {k: getattr(attrs, k) for k in ("layout", "method") + self.extra}
        return SimpleNamespace(**dict(zip(self.scales, scales)), **fields)

    def rel(self, types, attrs):
        ts = tensor_args(types, ("data",) + self.scales, self.name)
        if ts is None:
            return None
        for t, what in zip(ts[1:], self.scales):
            _scalar_float(t, what, self.name)
        out = _static_rel(self.static()[0], self.name[4:], self.name, [ts[0]],
                          self.attrs(attrs, (1.0,) * self.nd))
        shape = list(out.shape)
        for a in self.axes(attrs.layout):
            shape[a] = AnyDim()
        return TensorType(shape, out.dtype)

    def ref(self, args, attrs, out_type):
        from ._common import dim_scale

        scales = [float(np.asarray(s)) for s in args[1:]]
        if any(not s > 0 for s in scales):
            raise InputError(f"{self.name}: scales must be positive, got {tuple(scales)}")
        shape = list(args[0].shape)
        for a, s in zip(self.axes(attrs.layout), scales):
            shape[a] = dim_scale(shape[a], s)
        if any(d <= 0 for d in shape):
            raise InputError(f"{self.name}: scales {tuple(scales)} make an empty output "
                             f"{tuple(shape)}")
        return self.static()[1]([args[0]], self.attrs(attrs, scales),
                                TensorType(shape, out_type.dtype))

    def compute(self, attrs, inputs, out_type):
        # the static compute reads the (here symbolic) output dims of out_type, not the scales
        return self.static()[2](self.attrs(attrs, (1.0,) * self.nd), [inputs[0]], out_type)

    def shape(self, attrs, inputs, out_type):
        from tvm import tirx

        x = inputs[0]
        dims = [_dim(d) for d in x.shape]
        for a, s in zip(self.axes(attrs.layout), inputs[1:]):
            sv = s[()].astype("float64")
            d = tirx.floor(dims[a].astype("float64") * sv + 0.5).astype("int64")
            dims[a] = tirx.Select(tirx.all(sv > 0, d > 0), d, tirx.const(-1, "int64"))
        return [_vec(dims)]


for _up, _attrs in (
        (_Up(2), ("relay.attrs.UpSamplingAttrs", [
            F("layout", "str", "NCHW"), F("method", "str", "nearest_neighbor"),
            F("align_corners", "bool", False)])),
        (_Up(3), ("relay.attrs.UpSampling3DAttrs", [
            F("layout", "str", "NCDHW"), F("method", "str", "nearest_neighbor"),
            F("coordinate_transformation_mode", "str", "half_pixel")]))):
    register_op(_up.name, num_inputs=1 + _up.nd, arguments=("data",) + _up.scales, attrs=_attrs,
                rel=_up.rel, ref=_up.ref, compute=_up.compute, pattern=OpPattern.OPAQUE,
                doc=f"nn.upsampling{'' if _up.nd == 2 else '3d'} with {', '.join(_up.scales)} "
                    f"given as scalar tensors", level=2)
    register_shape_func(_up.name, _up.shape)
    register_shape_error(_up.name, f"the scales ({', '.join(_up.scales)}, scalar tensors) must "
                                   f"be > 0 and large enough that every output axis has at "
                                   f"least one element")


# ---- constructors (relay.op.dyn.image / relay.op.dyn.nn) ---------------------------------------


def resize2d(data, size, roi=None, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=""):
    """``dyn.image.resize2d`` (tvm.relay.op.dyn.image.resize2d): see the module docstring and
    :func:`relay_tvm.op.image.resize2d` for the attributes; ``roi`` None is four zeros."""
    from ..ir.expr import Expr, const

    if not isinstance(roi, Expr):
        roi = const(np.asarray(roi if roi is not None else [0.0] * 4, "float32"))
    return make_call(_RESIZE, [data, size, roi], layout=layout, method=method,
                     coordinate_transformation_mode=coordinate_transformation_mode,
                     rounding_method=rounding_method, cubic_alpha=cubic_alpha,
                     cubic_exclude=cubic_exclude, extrapolation_value=extrapolation_value,
                     out_dtype=out_dtype)


def pad(data, pad_width, pad_value, pad_mode="constant"):
    """``dyn.nn.pad`` (tvm.relay.op.dyn.nn.pad): ``pad_width`` an integer ``(rank, 2)`` tensor,
    ``pad_value`` a scalar expression or a number (a float32 constant, as ``nn.pad``)."""
    from ..ir.expr import Expr, const

    if not isinstance(pad_value, Expr):
        pad_value = const(np.asarray(pad_value, "float32"))
    return make_call(_PAD, [data, pad_width, pad_value], pad_mode=pad_mode)


def upsampling(data, scale_h, scale_w, layout="NCHW", method="nearest_neighbor",
               align_corners=False):
    """``dyn.nn.upsampling`` (tvm.relay.op.dyn.nn.upsampling): scales as scalar float
    expressions."""
    return make_call("dyn.nn.upsampling", [data, scale_h, scale_w], layout=layout,
                     method=method, align_corners=bool(align_corners))


def upsampling3d(data, scale_d, scale_h, scale_w, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel"):
    """``dyn.nn.upsampling3d`` (tvm.relay.op.dyn.nn.upsampling3d): scales as scalar float
    expressions."""
    return make_call("dyn.nn.upsampling3d", [data, scale_d, scale_h, scale_w], layout=layout,
                     method=method,
                     coordinate_transformation_mode=coordinate_transformation_mode)


image = SimpleNamespace(resize2d=resize2d)
nn = SimpleNamespace(pad=pad, upsampling=upsampling, upsampling3d=upsampling3d)

__all__ = ["resize2d", "pad", "upsampling", "upsampling3d", "image", "nn"]

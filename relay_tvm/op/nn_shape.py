"""Data-movement operators of the nn namespace (tvm.relay.nn): ``nn.pad``, ``nn.batch_flatten``,
``nn.depth_to_space``, ``nn.space_to_depth``, ``nn.upsampling``.

All are kInjective, as in Relay. TE computes: ``topi.nn.pad`` / ``replicate_pad`` /
``mirror_pad``, ``topi.nn.flatten``, ``topi.nn.depth_to_space`` / ``space_to_depth``,
``topi.nn.upsampling`` (which resizes with ``topi.image.resize2d``).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.expr import Constant, Expr
from ..ir.types import AnyDim, TensorType
from ._common import dim_floordiv, dim_mul, dim_scale, out_dims, shape_str, tensor_args
from ._nn_common import check_rank, layout_axes
from .image import resize_reference
from .registry import OpPattern, make_call, register_op

# ---- nn.pad ----------------------------------------------------------------------------------

PAD_MODES = ("constant", "edge", "reflect")


def _pad_rel(types, attrs):
    op = "nn.pad"
    ts = tensor_args(types, ("data", "pad_value"), op)
    if ts is None:
        return None
    data, value = ts
    if value.ndim != 0:
        raise TypeInferenceError(f"{op}: pad_value must be a scalar, got shape {shape_str(value.shape)}")
    if attrs.pad_mode not in PAD_MODES:
        raise TypeInferenceError(f"{op}: pad_mode {attrs.pad_mode!r} is not one of {PAD_MODES}")
    widths = attrs.pad_width
    if len(widths) != data.ndim or any(len(w) != 2 for w in widths):
        raise TypeInferenceError(
            f"{op}: pad_width must hold one (before, after) pair per axis of data shape "
            f"{shape_str(data.shape)}, got {widths}"
        )
    shape = []
    for i, ((b, a), d) in enumerate(zip(widths, data.shape)):
        # a negative width crops that side first (tvm.relay 0.19, ONNX Pad)
        kept = d + min(b, 0) + min(a, 0) if isinstance(d, int) else None
        if (b < 0 or a < 0) and not isinstance(d, int):
            raise TypeInferenceError(f"{op}: pad_width {widths} crops (a negative width) axis "
                                     f"{i}, whose size is not static in {shape_str(data.shape)}")
        if kept is not None and kept < 0:
            raise TypeInferenceError(f"{op}: pad_width {widths} crops {-min(b, 0) - min(a, 0)} "
                                     f"from axis {i} of size {d}")
        if attrs.pad_mode == "reflect" and kept is not None and max(b, a) >= kept and kept > 0:
            raise TypeInferenceError(
                f"{op}: reflect padding of {max(b, a)} on axis {i} needs a dimension larger than "
                f"that, data shape {shape_str(data.shape)}"
                + (f" cropped to {kept}" if kept != d else "")
            )
        shape.append(d + b + a if isinstance(d, int) else (AnyDim() if isinstance(d, AnyDim) else d + b + a))
    return TensorType(shape, data.dtype)


def _crop(widths, shape):
    """``(begin, end)`` per axis of the part a pad_width with negative widths keeps, and the
    remaining (non-negative) widths."""
    begin = [max(-b, 0) for b, _ in widths]
    end = [d - max(-a, 0) for (_, a), d in zip(widths, shape)]
    return begin, end, [(max(b, 0), max(a, 0)) for b, a in widths]


def _pad_ref(args, attrs, out_type):
    data, value = args
    begin, end, widths = _crop([tuple(w) for w in attrs.pad_width], data.shape)
    data = data[tuple(slice(b, e) for b, e in zip(begin, end))]
    if attrs.pad_mode == "constant":
        return np.pad(data, widths, constant_values=np.asarray(value).astype(data.dtype))
    return np.pad(data, widths, mode=attrs.pad_mode)


def _pad_compute(attrs, inputs, out_type):
    from tvm import topi

    data = inputs[0]
    widths = [tuple(int(v) for v in w) for w in attrs.pad_width]
    if any(min(w) < 0 for w in widths):
        begin, end, widths = _crop(widths, [int(d) for d in data.shape])
        data = topi.strided_slice(data, begin, end)
    before = [w[0] for w in widths]
    after = [w[1] for w in widths]
    if attrs.pad_mode == "edge":
        return topi.nn.replicate_pad(data, before, after)
    if attrs.pad_mode == "reflect":
        return topi.nn.mirror_pad(data, before, after, mode="REFLECT")
    value = inputs[1]().astype(data.dtype)
    return topi.nn.pad(data, before, after, pad_value=value)


register_op(
    "nn.pad",
    num_inputs=2,
    arguments=("data", "pad_value"),
    attrs=("relay.attrs.PadAttrs", [F("pad_width", "any"), F("pad_mode", "str", "constant")]),
    rel=_pad_rel,
    ref=_pad_ref,
    compute=_pad_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Pad each axis by (before, after): constant pad_value, edge replication or reflection "
        "(topi.nn.pad / replicate_pad / mirror_pad).",
    level=2,
)


def pad(data, pad_width, pad_value=0.0, pad_mode="constant"):
    """Pad a tensor (tvm.relay.nn.pad).

    Args:
        data: tensor of any rank.
        pad_width: one ``(before, after)`` pair of ints per axis, a negative width cropping
            that side first (tvm.relay 0.19, ONNX ``Pad``; static sizes only); or an integer
            ``(rank, 2)`` tensor expression (not a constant), which makes a ``dyn.nn.pad``
            call whose output shape is ``Any`` (the VM runs it, see
            :mod:`relay_tvm.op.dyn_nn`).
        pad_value: the constant (a number or a scalar expression); it is converted to data's
            dtype, as Relay's compute does.
        pad_mode: ``"constant"``, ``"edge"`` (repeat the border) or ``"reflect"`` (mirror
            without repeating the border, NumPy's ``reflect``).

    Returns:
        data padded, each axis ``d + before + after``.

    Raises:
        TypeInferenceError: pad_width has the wrong length or crops more than an axis holds
            (or an axis of unknown size), or pad_value is not a scalar.
    """
    if isinstance(pad_width, Constant):
        pad_width = np.asarray(pad_width.data.numpy()).tolist()
    if not isinstance(pad_value, Expr):
        pad_value = Constant(np.asarray(pad_value, dtype="float32"))
    elif isinstance(pad_value, Constant) and pad_value.data.ndim != 0:
        raise TypeError("nn.pad: pad_value must be a scalar")
    if isinstance(pad_width, Expr):
        from .dyn_nn import pad as dyn_pad

        return dyn_pad(data, pad_width, pad_value, pad_mode)
    widths = tuple((int(b), int(a)) for b, a in pad_width)
    return make_call("nn.pad", [data, pad_value], pad_width=widths, pad_mode=pad_mode)


# ---- nn.batch_flatten ------------------------------------------------------------------------


def _flatten_rel(types, attrs):
    ts = tensor_args(types, ("data",), "nn.batch_flatten")
    if ts is None:
        return None
    data = ts[0]
    if data.ndim < 1:
        raise TypeInferenceError("nn.batch_flatten: data must have rank >= 1, got a scalar")
    rest = 1
    for d in data.shape[1:]:
        rest = dim_mul(rest, d)  # Any stays Any; symbolic while a VM kernel is lowered
    return TensorType((data.shape[0], rest), data.dtype)


def _nn_batch_flatten_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.flatten(inputs[0])


register_op(
    "nn.batch_flatten",
    num_inputs=1,
    arguments=("data",),
    rel=_flatten_rel,
    # the flattened size spelled out: -1 is ambiguous for a batch of 0
    ref=lambda args, attrs, out_type: args[0].reshape(args[0].shape[0],
                                                      int(np.prod(args[0].shape[1:]))),
    compute=_nn_batch_flatten_compute,
    pattern=OpPattern.INJECTIVE,
    doc="(N, d1, ..., dk) -> (N, d1 * ... * dk) (topi.nn.flatten).",
    level=1,
)


def batch_flatten(data):
    """Flatten all axes but the first: ``(N, d1, ..., dk) -> (N, d1 * ... * dk)``."""
    return make_call("nn.batch_flatten", [data])


# ---- depth_to_space, space_to_depth ----------------------------------------------------------


def _subpixel_rel(op, to_space):
    def rel(types, attrs):
        ts = tensor_args(types, ("data",), op)
        if ts is None:
            return None
        data = ts[0]
        ax = layout_axes(attrs.layout, "NCHW", op, "layout")
        if attrs.layout not in ("NCHW", "NHWC"):
            raise TypeInferenceError(f"{op}: layout {attrs.layout!r} is not supported (NCHW, NHWC)")
        check_rank(data, 4, op, "data", attrs.layout)
        if to_space and attrs.mode not in ("DCR", "CRD"):
            raise TypeInferenceError(f"{op}: mode {attrs.mode!r} is not 'DCR' or 'CRD'")
        b = attrs.block_size
        if b <= 0:
            raise TypeInferenceError(f"{op}: block_size must be positive, got {b}")
        shape = list(data.shape)
        c, h, w = shape[ax["C"]], shape[ax["H"]], shape[ax["W"]]
        if to_space:
            if isinstance(c, int) and c % (b * b):
                raise TypeInferenceError(
                    f"{op}: channels {c} of data shape {shape_str(data.shape)} are not divisible "
                    f"by block_size^2 = {b * b}"
                )
            c = dim_floordiv(c, b * b, f"channels must divide by block_size^2 = {b * b}")
            h, w = dim_mul(h, b), dim_mul(w, b)
        else:
            for d, name in ((h, "height"), (w, "width")):
                if isinstance(d, int) and d % b:
                    raise TypeInferenceError(
                        f"{op}: {name} {d} of data shape {shape_str(data.shape)} is not divisible "
                        f"by block_size {b}"
                    )
            c = dim_mul(c, b * b)
            h = dim_floordiv(h, b, f"height must divide by block_size {b}")
            w = dim_floordiv(w, b, f"width must divide by block_size {b}")
        shape[ax["C"]], shape[ax["H"]], shape[ax["W"]] = c, h, w
        return TensorType(shape, data.dtype)

    return rel


def _depth_to_space_ref(args, attrs, out_type):
    x = args[0]
    if attrs.layout == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    b = attrs.block_size
    if attrs.mode == "DCR":  # channel index = (i * b + j) * C' + c'
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:  # CRD: channel index = c' * b * b + i * b + j
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    y = y.reshape(n, c // (b * b), h * b, w * b)
    return y.transpose(0, 2, 3, 1) if attrs.layout == "NHWC" else y


def _space_to_depth_ref(args, attrs, out_type):
    x = args[0]
    if attrs.layout == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    b = attrs.block_size
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    y = y.reshape(n, c * b * b, h // b, w // b)
    return y.transpose(0, 2, 3, 1) if attrs.layout == "NHWC" else y


_SUBPIXEL = ("relay.attrs.SubPixelAttrs", [F("block_size", "int"), F("layout", "str", "NCHW"),
                                           F("mode", "str", "DCR")])

def _nn_depth_to_space_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.depth_to_space(
        inputs[0], attrs.block_size, attrs.layout, attrs.mode
    )


register_op(
    "nn.depth_to_space",
    num_inputs=1,
    arguments=("data",),
    attrs=_SUBPIXEL,
    rel=_subpixel_rel("nn.depth_to_space", True),
    ref=_depth_to_space_ref,
    compute=_nn_depth_to_space_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Move channel blocks into b x b spatial blocks (DCR or CRD order; topi.nn.depth_to_space).",
    level=5,
)

def _nn_space_to_depth_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.space_to_depth(
        inputs[0], attrs.block_size, attrs.layout
    )


register_op(
    "nn.space_to_depth",
    num_inputs=1,
    arguments=("data",),
    attrs=_SUBPIXEL,
    rel=_subpixel_rel("nn.space_to_depth", False),
    ref=_space_to_depth_ref,
    compute=_nn_space_to_depth_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Move b x b spatial blocks into channels (topi.nn.space_to_depth).",
    level=5,
)


def depth_to_space(data, block_size, layout="NCHW", mode="DCR"):
    """Rearrange depth into spatial blocks (tvm.relay.nn.depth_to_space):
    ``(N, C, H, W) -> (N, C / b^2, H * b, W * b)``.

    Args:
        mode: ``"DCR"`` (depth-column-row, TensorFlow's order) or ``"CRD"`` (PyTorch's
            pixel_shuffle order).
    """
    return make_call("nn.depth_to_space", [data], block_size=block_size, layout=layout, mode=mode)


def space_to_depth(data, block_size, layout="NCHW"):
    """Rearrange spatial blocks into depth (tvm.relay.nn.space_to_depth):
    ``(N, C, H, W) -> (N, C * b^2, H / b, W / b)``, the inverse of DCR depth_to_space."""
    return make_call("nn.space_to_depth", [data], block_size=block_size, layout=layout)


# ---- nn.upsampling ---------------------------------------------------------------------------


def _upsampling_rel(types, attrs):
    op = "nn.upsampling"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    if attrs.layout not in ("NCHW", "NHWC"):
        raise TypeInferenceError(f"{op}: layout {attrs.layout!r} is not supported (NCHW, NHWC)")
    check_rank(data, 4, op, "data", attrs.layout)
    if attrs.method not in ("nearest_neighbor", "bilinear", "bicubic"):
        raise TypeInferenceError(
            f"{op}: method {attrs.method!r} is not 'nearest_neighbor', 'bilinear' or 'bicubic'"
        )
    if attrs.scale_h <= 0 or attrs.scale_w <= 0:
        raise TypeInferenceError(f"{op}: scales must be positive, got ({attrs.scale_h}, {attrs.scale_w})")
    shape = list(data.shape)
    h, w = (2, 3) if attrs.layout == "NCHW" else (1, 2)
    shape[h] = dim_scale(shape[h], attrs.scale_h)
    shape[w] = dim_scale(shape[w], attrs.scale_w)
    return TensorType(shape, data.dtype)


# Keys' cubic parameter of bicubic upsampling: tvm.relay 0.19's topi.nn.upsampling called
# topi.image.resize2d with its default bicubic_alpha, -0.5 in TVM 0.19; TVM 0.27's default is
# -0.75, so it is passed explicitly
UPSAMPLING_CUBIC_ALPHA = -0.5


def _upsampling_method(attrs):
    return {"bilinear": "linear", "bicubic": "cubic"}.get(attrs.method, attrs.method)


def _upsampling_ref(args, attrs, out_type):
    axes = (2, 3) if attrs.layout == "NCHW" else (1, 2)
    # from the array itself: out_type has Any sizes when the data's were
    shape = args[0].shape
    sizes = [dim_scale(shape[a], s) for a, s in zip(axes, (attrs.scale_h, attrs.scale_w))]
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    y = resize_reference(args[0], axes, sizes, _upsampling_method(attrs), mode,
                         alpha=UPSAMPLING_CUBIC_ALPHA)
    return y.astype("float32").astype(out_type.dtype)


def _upsampling_compute(attrs, inputs, out_type):
    from tvm import topi

    axes = (2, 3) if attrs.layout == "NCHW" else (1, 2)
    return topi.image.resize2d(
        inputs[0], [0.0] * 4, [out_dims(out_type.shape)[a] for a in axes], layout=attrs.layout,
        method=_upsampling_method(attrs),
        coordinate_transformation_mode="align_corners" if attrs.align_corners else "asymmetric",
        bicubic_alpha=UPSAMPLING_CUBIC_ALPHA,
    )


register_op(
    "nn.upsampling",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.UpSamplingAttrs", [
        F("scale_h", "float", 1.0), F("scale_w", "float", 1.0), F("layout", "str", "NCHW"),
        F("method", "str", "nearest_neighbor"), F("align_corners", "bool", False),
    ]),
    rel=_upsampling_rel,
    ref=_upsampling_ref,
    compute=_upsampling_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Upsample H and W by scale_h, scale_w (floor(H * scale + 0.5)): nearest_neighbor, "
        "bilinear or bicubic, asymmetric or align_corners coordinates (topi.nn.upsampling "
        "semantics).",
    level=2,
)


def upsampling(data, scale_h=1, scale_w=1, layout="NCHW", method="nearest_neighbor",
               align_corners=False):
    """Upsampling (tvm.relay.nn.upsampling): resize H and W by scale factors.

    Semantics are topi.nn.upsampling's: ``image.resize2d`` to the scaled size, with the
    ``"asymmetric"`` coordinate mapping (``x_in = x_out * in / out``) or, with
    ``align_corners``, ``"align_corners"`` (``x_in = x_out * (in - 1) / (out - 1)``). As in
    topi (0.19's and 0.27's), every pixel is read as float32, nearest neighbour included, and
    the result cast back: float64 data keeps float32 precision, integers beyond 2**24 lose
    their low bits.

    Args:
        data: ``(N, C, H, W)`` (NCHW) or ``(N, H, W, C)`` (NHWC).
        scale_h, scale_w: positive scale factors (below 1 shrinks). The output extent is
            ``floor(H * scale_h + 0.5)``: halves round up, as in tvm.relay 0.19's
            ``dyn.nn.upsampling`` shape function; 0.19's static type relation rounded an
            ``H * scale`` of exactly .5 to even (``3 * 1.5 -> 4``, 5 here). A scalar float
            tensor expression (not a constant) makes a ``dyn.nn.upsampling`` call whose H and
            W are ``Any`` (see :mod:`relay_tvm.op.dyn_nn`).
        layout: ``"NCHW"`` or ``"NHWC"``.
        method: ``"nearest_neighbor"`` (the input pixel at ``floor(x_in)``, or ``round(x_in)``
            with align_corners), ``"bilinear"`` or ``"bicubic"`` (Keys' cubic, alpha -0.5, as
            TVM 0.19's topi). These are the only names accepted: ``image.resize2d``'s
            ``"linear"``/``"cubic"`` are refused here, as tvm.relay 0.19's UpSamplingRel did.
        align_corners: map corner pixels onto corner pixels (else asymmetric, above).

    Returns:
        ``(N, C, H', W')`` (or ``(N, H', W', C)``) with ``H'``, ``W'`` as above, data's dtype.

    Raises:
        TypeInferenceError: at inference, for another method or layout, data of rank other
            than 4, or a scale <= 0.
    """
    if isinstance(scale_h, Constant):
        scale_h = scale_h.data.numpy().item()
    if isinstance(scale_w, Constant):
        scale_w = scale_w.data.numpy().item()
    if isinstance(scale_h, Expr) or isinstance(scale_w, Expr):
        from ..ir.expr import const
        from .dyn_nn import upsampling as dyn_upsampling

        scale_h = scale_h if isinstance(scale_h, Expr) else const(float(scale_h), "float64")
        scale_w = scale_w if isinstance(scale_w, Expr) else const(float(scale_w), "float64")
        return dyn_upsampling(data, scale_h, scale_w, layout, method, align_corners)
    return make_call("nn.upsampling", [data], scale_h=scale_h, scale_w=scale_w, layout=layout,
                     method=method, align_corners=align_corners)


__all__ = ["pad", "batch_flatten", "depth_to_space", "space_to_depth", "upsampling"]

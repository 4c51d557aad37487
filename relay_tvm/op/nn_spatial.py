"""More data movement of the nn namespace (tvm.relay.nn): ``nn.mirror_pad``, ``nn.dilate``,
``nn.space_to_batch_nd``, ``nn.batch_to_space_nd``, ``nn.upsampling3d``.

All are kInjective, as in Relay. Semantics: NumPy's ``symmetric``/``reflect`` padding;
TensorFlow's SpaceToBatchND / BatchToSpaceND (block axes become the slowest part of the batch);
``dilate`` inserts ``strides - 1`` copies of ``dilation_value`` between elements. TE computes:
``topi.nn.mirror_pad``, ``topi.nn.dilate``, ``topi.nn.space_to_batch_nd``, topi reshape /
transpose / strided_slice for batch_to_space_nd, ``topi.image.resize3d``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, TensorType
from ._common import dim_scale, out_dims, shape_str, tensor_args
from ._nn_common import check_rank
from .image import COORDINATE_MODES, resize_reference
from .registry import OpPattern, make_call, register_op

# ---- mirror_pad ------------------------------------------------------------------------------


def _mirror_pad_rel(types, attrs):
    op = "nn.mirror_pad"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    if attrs.mode not in ("SYMMETRIC", "REFLECT"):
        raise TypeInferenceError(f"{op}: mode {attrs.mode!r} is not 'SYMMETRIC' or 'REFLECT'")
    widths = attrs.pad_width
    if len(widths) != data.ndim or any(len(w) != 2 for w in widths):
        raise TypeInferenceError(
            f"{op}: pad_width must hold one (before, after) pair per axis of data shape "
            f"{shape_str(data.shape)}, got {widths}"
        )
    shape = []
    for i, ((b, a), d) in enumerate(zip(widths, data.shape)):
        limit = d if attrs.mode == "SYMMETRIC" else (d - 1 if isinstance(d, int) else d)
        if b < 0 or a < 0 or (isinstance(d, int) and max(b, a) > limit):
            raise TypeInferenceError(
                f"{op}: {attrs.mode} padding ({b}, {a}) on axis {i} of data shape "
                f"{shape_str(data.shape)} must be within 0..{limit}"
            )
        shape.append(d + b + a if not isinstance(d, AnyDim) else d)
    return TensorType(shape, data.dtype)


def _nn_mirror_pad_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.mirror_pad(
        inputs[0], [w[0] for w in attrs.pad_width], [w[1] for w in attrs.pad_width], attrs.mode
    )


register_op(
    "nn.mirror_pad",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.MirrorPadAttrs", [F("mode", "str", "SYMMETRIC"), F("pad_width", "any")]),
    rel=_mirror_pad_rel,
    ref=lambda args, attrs, out_type: np.pad(args[0], [tuple(w) for w in attrs.pad_width],
                                             mode=attrs.mode.lower()),
    compute=_nn_mirror_pad_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Pad by mirroring: SYMMETRIC repeats the border element, REFLECT does not "
        "(topi.nn.mirror_pad).",
    level=2,
)


def mirror_pad(data, pad_width, mode="SYMMETRIC"):
    """Mirror padding (tvm.relay.nn.mirror_pad).

    Args:
        data: tensor of any rank.
        pad_width: one ``(before, after)`` pair per axis; at most the axis size (SYMMETRIC) or
            one less (REFLECT).
        mode: ``"SYMMETRIC"`` (``[a b c] -> b a | a b c | c b``) or ``"REFLECT"``
            (``[a b c] -> c b | a b c | b a``).
    """
    widths = tuple((int(b), int(a)) for b, a in pad_width)
    return make_call("nn.mirror_pad", [data], mode=mode, pad_width=widths)


# ---- dilate ----------------------------------------------------------------------------------


def _dilate_rel(types, attrs):
    op = "nn.dilate"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    if len(attrs.strides) != data.ndim or any(s < 1 for s in attrs.strides):
        raise TypeInferenceError(
            f"{op}: strides must give one positive int per axis of data shape "
            f"{shape_str(data.shape)}, got {attrs.strides}"
        )
    shape = [((d - 1) * s + 1 if d else 0) if isinstance(d, int) else d
             for d, s in zip(data.shape, attrs.strides)]
    return TensorType(shape, data.dtype)


def _dilate_ref(args, attrs, out_type):
    x = args[0]
    shape = [(d - 1) * s + 1 if d else 0 for d, s in zip(x.shape, attrs.strides)]
    out = np.full(shape, attrs.dilation_value, dtype=x.dtype)
    out[tuple(slice(None, None, s) for s in attrs.strides)] = x
    return out


def _nn_dilate_compute(attrs, inputs, out_type):
    # topi.nn.dilate's arithmetic with an axis of size 0 kept empty: topi sizes an axis
    # (d - 1) * s + 1, negative for d = 0 (a static 0 failed to build, an Any one was an
    # invalid shape at run time)
    from tvm import te, tirx

    x = inputs[0]
    shape = []
    for d, st in zip(x.shape, attrs.strides):
        if isinstance(d, tirx.IntImm):
            shape.append((int(d) - 1) * st + 1 if int(d) else 0)
        else:
            shape.append(d if st == 1 else tirx.Select(d == 0, d, (d - 1) * st + 1))
    fill = tirx.const(attrs.dilation_value, x.dtype)

    def f(*i):
        conds = [i[k] % st == 0 for k, st in enumerate(attrs.strides) if st != 1]
        src = [i[k] // st if st != 1 else i[k] for k, st in enumerate(attrs.strides)]
        return tirx.Select(tirx.all(*conds), x(*src), fill) if conds else x(*src)

    return te.compute(shape, f, name="dilate", tag="injective")


register_op(
    "nn.dilate",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.DilateAttrs", [F("strides", "ints"), F("dilation_value", "float", 0.0)]),
    rel=_dilate_rel,
    ref=_dilate_ref,
    compute=_nn_dilate_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Insert strides-1 dilation_value elements between neighbours on each axis "
        "(topi.nn.dilate).",
    level=2,
)


def dilate(data, strides, dilation_value=0.0):
    """Dilate (tvm.relay.nn.dilate): axis ``i`` of size ``d`` becomes ``(d - 1) * strides[i] + 1``
    with the data at multiples of ``strides[i]`` and ``dilation_value`` between."""
    return make_call("nn.dilate", [data], strides=tuple(strides), dilation_value=dilation_value)


# ---- space_to_batch_nd, batch_to_space_nd ----------------------------------------------------


def _block_check(data, block, op):
    if not block or any(b < 1 for b in block) or len(block) + 1 > data.ndim:
        raise TypeInferenceError(
            f"{op}: block_shape {block} must hold 1..{data.ndim - 1} positive ints for data shape "
            f"{shape_str(data.shape)}"
        )


def _s2b_rel(types, attrs):
    op = "nn.space_to_batch_nd"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    block = tuple(attrs.block_shape)
    _block_check(data, block, op)
    pads = attrs.paddings
    if len(pads) != len(block) or any(len(p) != 2 or min(p) < 0 for p in pads):
        raise TypeInferenceError(f"{op}: paddings must be {len(block)} non-negative (before, after) "
                                 f"pairs, got {pads}")
    shape = list(data.shape)
    shape[0] = shape[0] * math.prod(block) if isinstance(shape[0], int) else shape[0]
    for i, (b, (p0, p1)) in enumerate(zip(block, pads)):
        d = data.shape[1 + i]
        if isinstance(d, int):
            if (d + p0 + p1) % b:
                raise TypeInferenceError(
                    f"{op}: padded axis {1 + i} ({d} + {p0} + {p1}) of data shape "
                    f"{shape_str(data.shape)} is not divisible by block {b}"
                )
            shape[1 + i] = (d + p0 + p1) // b
    return TensorType(shape, data.dtype)


def _s2b_ref(args, attrs, out_type):
    x = args[0]
    block = list(attrs.block_shape)
    m = len(block)
    pads = [(0, 0)] + [tuple(p) for p in attrs.paddings] + [(0, 0)] * (x.ndim - 1 - m)
    x = np.pad(x, pads, constant_values=attrs.pad_value)
    n = x.shape[0]
    split = [n]
    for i, b in enumerate(block):
        split += [x.shape[1 + i] // b, b]
    rest = list(x.shape[1 + m:])
    y = x.reshape(split + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, y.ndim))
    return y.transpose(perm).reshape(out_type.concrete_shape)


def _b2s_rel(types, attrs):
    op = "nn.batch_to_space_nd"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    block = tuple(attrs.block_shape)
    _block_check(data, block, op)
    crops = attrs.crops
    if len(crops) != len(block) or any(len(c) != 2 or min(c) < 0 for c in crops):
        raise TypeInferenceError(f"{op}: crops must be {len(block)} non-negative (begin, end) "
                                 f"pairs, got {crops}")
    shape = list(data.shape)
    prod = math.prod(block)
    if isinstance(shape[0], int):
        if shape[0] % prod:
            raise TypeInferenceError(
                f"{op}: batch {shape[0]} of data shape {shape_str(data.shape)} is not divisible "
                f"by the block size {prod}"
            )
        shape[0] //= prod
    for i, (b, (c0, c1)) in enumerate(zip(block, crops)):
        d = data.shape[1 + i]
        if isinstance(d, int):
            shape[1 + i] = d * b - c0 - c1
            if shape[1 + i] <= 0:
                raise TypeInferenceError(f"{op}: crops {crops} remove all of axis {1 + i}")
    return TensorType(shape, data.dtype)


def _b2s_ref(args, attrs, out_type):
    x = args[0]
    block = list(attrs.block_shape)
    m = len(block)
    n = x.shape[0] // math.prod(block)
    y = x.reshape(block + [n] + list(x.shape[1:]))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    full = [n] + [x.shape[1 + i] * b for i, b in enumerate(block)] + list(x.shape[1 + m:])
    y = y.reshape(full)
    crop = (slice(None),) + tuple(slice(c0, full[1 + i] - c1)
                                  for i, (c0, c1) in enumerate(attrs.crops))
    return y[crop]


def _b2s_compute(attrs, inputs, out_type):
    # topi.nn.batch_to_space_nd's C++ binding crashes in TVM 0.27 (FFI type-info error), so the
    # same reshape / transpose / slice as the reference, in topi.
    from tvm import topi

    x = inputs[0]
    shape = [int(d) for d in x.shape]
    block = list(attrs.block_shape)
    m = len(block)
    n = shape[0] // math.prod(block)
    y = topi.reshape(x, block + [n] + shape[1:])
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, m + len(shape)))
    y = topi.transpose(y, perm)
    full = [n] + [shape[1 + i] * b for i, b in enumerate(block)] + shape[1 + m:]
    y = topi.reshape(y, full)
    begin = [0] + [c[0] for c in attrs.crops] + [0] * (len(shape) - 1 - m)
    end = out_dims(out_type.shape)
    end = [b + e for b, e in zip(begin, end)]
    return topi.strided_slice(y, begin, end)


def _nn_space_to_batch_nd_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.space_to_batch_nd(
        inputs[0], list(attrs.block_shape), [p[0] for p in attrs.paddings],
        [p[1] for p in attrs.paddings], attrs.pad_value,
    )


register_op(
    "nn.space_to_batch_nd",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.SpaceToBatchNDAttrs", [F("block_shape", "ints"), F("paddings", "any"),
                                               F("pad_value", "float", 0.0)]),
    rel=_s2b_rel,
    ref=_s2b_ref,
    compute=_nn_space_to_batch_nd_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Pad the spatial axes and move blocks of them into the batch (TensorFlow "
        "SpaceToBatchND; topi.nn.space_to_batch_nd).",
    level=5,
)

register_op(
    "nn.batch_to_space_nd",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.BatchToSpaceNDAttrs", [F("block_shape", "ints"), F("crops", "any")]),
    rel=_b2s_rel,
    ref=_b2s_ref,
    compute=_b2s_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Move batch blocks back into the spatial axes and crop (TensorFlow BatchToSpaceND; "
        "topi.nn.batch_to_space_nd).",
    level=5,
)


def space_to_batch_nd(data, block_shape, paddings, pad_value=0):
    """Space to batch (tvm.relay.nn.space_to_batch_nd).

    Args:
        data: ``(N, S1, ..., SM, rest...)``.
        block_shape: ``M`` block sizes; paddings: ``M`` (before, after) pairs.

    Returns:
        ``(N * prod(block), (S1 + pads) / b1, ..., rest...)``.
    """
    return make_call("nn.space_to_batch_nd", [data], block_shape=tuple(block_shape),
                     paddings=tuple(tuple(p) for p in paddings), pad_value=pad_value)


def batch_to_space_nd(data, block_shape, crops):
    """Batch to space (tvm.relay.nn.batch_to_space_nd), the inverse of
    :func:`space_to_batch_nd`: ``(N * prod(block), S1, ...) -> (N, S1 * b1 - crops, ...)``."""
    return make_call("nn.batch_to_space_nd", [data], block_shape=tuple(block_shape),
                     crops=tuple(tuple(c) for c in crops))


# ---- upsampling3d ----------------------------------------------------------------------------


def _up3_axes(layout, op):
    if layout not in ("NCDHW", "NDHWC"):
        raise TypeInferenceError(f"{op}: layout {layout!r} is not supported (NCDHW, NDHWC)")
    return (2, 3, 4) if layout == "NCDHW" else (1, 2, 3)


def _up3_rel(types, attrs):
    op = "nn.upsampling3d"
    ts = tensor_args(types, ("data",), op)
    if ts is None:
        return None
    data = ts[0]
    axes = _up3_axes(attrs.layout, op)
    check_rank(data, 5, op, "data", attrs.layout)
    if attrs.method not in ("nearest_neighbor", "trilinear"):
        raise TypeInferenceError(f"{op}: method {attrs.method!r} is not 'nearest_neighbor' or "
                                 f"'trilinear'")
    if attrs.coordinate_transformation_mode not in COORDINATE_MODES:
        raise TypeInferenceError(f"{op}: coordinate_transformation_mode "
                                 f"{attrs.coordinate_transformation_mode!r} is not supported")
    shape = list(data.shape)
    for a, s in zip(axes, (attrs.scale_d, attrs.scale_h, attrs.scale_w)):
        if s <= 0:
            raise TypeInferenceError(f"{op}: scales must be positive")
        shape[a] = dim_scale(shape[a], s)
    return TensorType(shape, data.dtype)


def _up3_method(attrs):
    return "linear" if attrs.method == "trilinear" else attrs.method


def _up3_ref(args, attrs, out_type):
    axes = _up3_axes(attrs.layout, "nn.upsampling3d")
    # sizes from the array itself: out_type has Any sizes when the data's were
    sizes = [dim_scale(args[0].shape[a], s)
             for a, s in zip(axes, (attrs.scale_d, attrs.scale_h, attrs.scale_w))]
    y = resize_reference(args[0], axes, sizes, _up3_method(attrs),
                         attrs.coordinate_transformation_mode)
    return y.astype("float32").astype(out_type.dtype)


def _up3_compute(attrs, inputs, out_type):
    from tvm import topi

    axes = _up3_axes(attrs.layout, "nn.upsampling3d")
    return topi.image.resize3d(
        inputs[0], [0.0] * 6, [out_dims(out_type.shape)[a] for a in axes], layout=attrs.layout,
        method=_up3_method(attrs),
        coordinate_transformation_mode=attrs.coordinate_transformation_mode,
    )


register_op(
    "nn.upsampling3d",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.UpSampling3DAttrs", [
        F("scale_d", "float", 1.0), F("scale_h", "float", 1.0), F("scale_w", "float", 1.0),
        F("layout", "str", "NCDHW"), F("method", "str", "nearest_neighbor"),
        F("coordinate_transformation_mode", "str", "half_pixel"),
    ]),
    rel=_up3_rel,
    ref=_up3_ref,
    compute=_up3_compute,
    pattern=OpPattern.INJECTIVE,
    doc="Upsample D, H, W by scale_d, scale_h, scale_w (nearest_neighbor or trilinear; "
        "topi.image.resize3d).",
    level=2,
)


def upsampling3d(data, scale_d=1, scale_h=1, scale_w=1, layout="NCDHW",
                 method="nearest_neighbor", coordinate_transformation_mode="half_pixel"):
    """3-D upsampling (tvm.relay.nn.upsampling3d): each spatial axis becomes
    ``round(size * scale)``; ``method`` is ``"nearest_neighbor"`` or ``"trilinear"``; the
    coordinate modes are those of :func:`relay_tvm.op.image.resize3d` (pixels read as float32,
    as topi does: float64 and large integers lose precision). A scale given as a scalar
    float tensor expression (not a constant) makes a ``dyn.nn.upsampling3d`` call whose D, H, W
    are ``Any`` (see :mod:`relay_tvm.op.dyn_nn`)."""
    from ..ir.expr import Constant, Expr, const

    scales = [s.data.numpy().item() if isinstance(s, Constant) else s
              for s in (scale_d, scale_h, scale_w)]
    if any(isinstance(s, Expr) for s in scales):
        from .dyn_nn import upsampling3d as dyn_upsampling3d

        scales = [s if isinstance(s, Expr) else const(float(s), "float64") for s in scales]
        return dyn_upsampling3d(data, *scales, layout, method, coordinate_transformation_mode)
    scale_d, scale_h, scale_w = scales
    return make_call("nn.upsampling3d", [data], scale_d=scale_d, scale_h=scale_h, scale_w=scale_w,
                     layout=layout, method=method,
                     coordinate_transformation_mode=coordinate_transformation_mode)


__all__ = ["mirror_pad", "dilate", "space_to_batch_nd", "batch_to_space_nd", "upsampling3d"]

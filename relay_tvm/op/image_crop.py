"""``image.crop_and_resize`` (tvm.relay.image.crop_and_resize; TensorFlow's
``tf.image.crop_and_resize``): crops of an image batch resized to one size.

Box ``b`` is ``(y1, x1, y2, x2)`` in normalized coordinates (0 and 1 are the first and last
pixel centres) of image ``box_indices[b]``; output row ``r`` of a ``crop_h``-row crop samples
``y = y1 * (H - 1) + r * (y2 - y1) * (H - 1) / (crop_h - 1)`` (the box centre when
``crop_h == 1``), columns likewise. ``bilinear`` interpolates between the four nearest pixels,
``nearest_neighbor`` takes the rounded position; a sample outside ``[0, H - 1] x [0, W - 1]`` is
``extrapolation_value``. Output ``(num_boxes, C, crop_h, crop_w)`` for NCHW,
``(num_boxes, crop_h, crop_w, C)`` for NHWC. The kernel is ``topi.image.crop_and_resize``.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

_OP = "image.crop_and_resize"


def _rel(types, attrs):
    ts = tensor_args(types, ("data", "boxes", "box_indices"), _OP)
    if ts is None:
        return None
    data, boxes, idx = ts
    if attrs.layout not in ("NCHW", "NHWC"):
        raise TypeInferenceError(f"{_OP}: layout must be NCHW or NHWC, got {attrs.layout!r}")
    if attrs.method not in ("bilinear", "nearest_neighbor"):
        raise TypeInferenceError(f"{_OP}: method must be 'bilinear' or 'nearest_neighbor', got "
                                 f"{attrs.method!r}")
    if data.ndim != 4 or boxes.ndim != 2 or boxes.shape[1] != 4 or idx.ndim != 1:
        raise TypeInferenceError(f"{_OP}: expected 4-d data, (num_boxes, 4) boxes and "
                                 f"(num_boxes,) box_indices; got {shape_str(data.shape)}, "
                                 f"{shape_str(boxes.shape)}, {shape_str(idx.shape)}")
    if len(attrs.crop_size) != 2 or min(attrs.crop_size) < 1:
        raise TypeInferenceError(f"{_OP}: crop_size must be two sizes >= 1, got "
                                 f"{tuple(attrs.crop_size)}")
    if not idx.dtype.startswith("int"):
        raise TypeInferenceError(f"{_OP}: box_indices must be integers, got {idx.dtype}")
    ch, cw = (int(v) for v in attrs.crop_size)
    c = data.shape[1] if attrs.layout == "NCHW" else data.shape[3]
    shape = (boxes.shape[0], c, ch, cw) if attrs.layout == "NCHW" else (boxes.shape[0], ch, cw, c)
    return TensorType(shape, attrs.out_dtype or data.dtype)


def _positions(lo, hi, size, crop):
    if crop == 1:
        return np.array([0.5 * (lo + hi) * (size - 1)])
    return lo * (size - 1) + np.arange(crop) * (hi - lo) * (size - 1) / (crop - 1)


def _ref(args, attrs, out_type):
    data, boxes, idx = (np.asarray(a) for a in args)
    if attrs.layout == "NHWC":
        data = data.transpose(0, 3, 1, 2)
    _, c, h, w = data.shape
    ch, cw = (int(v) for v in attrs.crop_size)
    ext = float(attrs.extrapolation_value)
    out = np.empty((boxes.shape[0], c, ch, cw), dtype=np.float64)
    for b in range(boxes.shape[0]):
        y1, x1, y2, x2 = boxes[b].astype(np.float64)
        img = data[int(idx[b])].astype(np.float64)
        ys, xs = _positions(y1, y2, h, ch), _positions(x1, x2, w, cw)
        for r, y in enumerate(ys):
            for q, x in enumerate(xs):
                if y < 0 or y > h - 1 or x < 0 or x > w - 1:
                    out[b, :, r, q] = ext
                elif attrs.method == "nearest_neighbor":
                    out[b, :, r, q] = img[:, int(np.round(y)), int(np.round(x))]
                else:
                    t, lft = int(np.floor(y)), int(np.floor(x))
                    bt, rt = int(np.ceil(y)), int(np.ceil(x))
                    dy, dx = y - t, x - lft
                    top = img[:, t, lft] + (img[:, t, rt] - img[:, t, lft]) * dx
                    bot = img[:, bt, lft] + (img[:, bt, rt] - img[:, bt, lft]) * dx
                    out[b, :, r, q] = top + (bot - top) * dy
    if attrs.layout == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return out.astype(out_type.dtype)


def _compute(attrs, inputs, out_type):
    from tvm import topi

    data, boxes, idx = inputs
    return topi.image.crop_and_resize(data, boxes, idx, tuple(int(v) for v in attrs.crop_size),
                                      attrs.layout, attrs.method,
                                      float(attrs.extrapolation_value), out_type.dtype)


register_op(
    _OP,
    num_inputs=3,
    arguments=("data", "boxes", "box_indices"),
    attrs=("relay.attrs.CropAndResizeAttrs", [
        F("crop_size", "ints"),
        F("layout", "str", "NCHW"),
        F("method", "str", "bilinear"),
        F("extrapolation_value", "float", 0.0),
        F("out_dtype", "dtype", ""),
    ]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.INJECTIVE,
    doc="crops of an image batch resized to crop_size (tf.image.crop_and_resize)",
    level=5,
)


def crop_and_resize(data, boxes, box_indices, crop_size, layout, method="bilinear",
                    extrapolation_value=0.0, out_dtype=None):
    """Crop boxes out of images and resize them (tvm.relay.image.crop_and_resize); see the
    module docstring.

    Args:
        data: 4-d images, NCHW or NHWC (``layout``).
        boxes: ``(num_boxes, 4)`` float ``(y1, x1, y2, x2)``, normalized.
        box_indices: ``(num_boxes,)`` integer image index of each box.
        crop_size: ``(crop_h, crop_w)``.
        method: ``"bilinear"`` or ``"nearest_neighbor"``.
        extrapolation_value: the value of samples outside the image.
        out_dtype: output dtype (None: data's).

    Raises:
        TypeInferenceError: at inference, for other layouts / methods or malformed shapes.
    """
    return make_call(_OP, [data, boxes, box_indices],
                     crop_size=tuple(int(v) for v in crop_size), layout=layout, method=method,
                     extrapolation_value=float(extrapolation_value), out_dtype=out_dtype or "")


__all__ = ["crop_and_resize"]

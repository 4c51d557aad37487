"""The ``relay.op.annotation.simulated_quantize`` operator (tvm.relay 0.19).

``simulated_quantize(data, dom_scale, clip_min, clip_max, kind, sign=True, rounding="round")``
computes, elementwise in float32::

    round(clip(data / dom_scale, clip_min, clip_max)) * dom_scale

(``round`` ties to even, as NumPy and TVM's ``round`` do), i.e. the value ``data`` takes after
quantizing to integers of step ``dom_scale`` and back. With ``kind == IDENTITY`` it is the
identity (calibration collects statistics through such calls). ``dom_scale``, ``clip_min`` and
``clip_max`` are float32 scalars; the output has the type of ``data``.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ..op._common import tensor_args
from ..op.registry import OpPattern, make_call, register_op
from .qconfig import QAnnotateKind

OP_NAME = "relay.op.annotation.simulated_quantize"
_SCALAR_F32 = TensorType((), "float32")


def _dim_fits(data_dim, scale_dim) -> bool:
    """Whether a scale of extent ``scale_dim`` broadcasts to ``data_dim`` without changing it."""
    try:
        b = int(scale_dim)
    except (TypeError, ValueError):
        return False
    try:
        return b in (1, int(data_dim))
    except (TypeError, ValueError):
        return b == 1


def _rel(types, attrs):
    data = types[0]
    ts = tensor_args([data], ("data",), OP_NAME)
    if ts is None:
        return None
    if not ts[0].shape:
        raise TypeInferenceError(f"{OP_NAME}: data must have at least one dimension, got a "
                                 f"scalar of dtype {ts[0].dtype}")
    fills = {}
    for i, name in ((1, "dom_scale"), (2, "clip_min"), (3, "clip_max")):
        t = types[i]
        if i == 1 and isinstance(t, TensorType) and t.dtype == "float32" and t.shape:
            # a per-channel scale (weight_scale="channel_max", a relay_tvm extension): it
            # must broadcast to the data's shape without changing it
            ds, ss = list(ts[0].shape), list(t.shape)
            if len(ss) > len(ds) or any(not _dim_fits(a, b) for a, b in zip(ds[::-1], ss[::-1])):
                raise TypeInferenceError(f"{OP_NAME}: a tensor dom_scale must broadcast to the "
                                         f"data's shape {tuple(ds)}, got {tuple(ss)}")
            continue
        if isinstance(t, TensorType):
            if t != _SCALAR_F32:
                raise TypeInferenceError(f"{OP_NAME}: {name} must be a float32 scalar, got "
                                         f"Tensor[{tuple(t.shape)}, {t.dtype}]")
        else:
            fills[i] = _SCALAR_F32
    return (ts[0], fills) if fills else ts[0]


def _check_attrs(attrs):
    if attrs.rounding != "round":
        raise TypeInferenceError(f"{OP_NAME}: rounding {attrs.rounding!r} is not supported "
                                 f"(only 'round', as in tvm.relay 0.19)")


def _ref(args, attrs, out_type):
    data, scale, lo, hi = args
    if int(attrs.kind) == QAnnotateKind.IDENTITY:
        return data.copy()
    _check_attrs(attrs)
    scale = np.float32(scale)
    q = np.round(np.clip(data / scale, np.float32(lo), np.float32(hi)))
    return (q * scale).astype(data.dtype)


def _compute(attrs, inputs, out_type):
    from tvm import topi

    data, scale, lo, hi = inputs
    if int(attrs.kind) == QAnnotateKind.IDENTITY:
        return topi.identity(data)
    _check_attrs(attrs)
    scaled = topi.divide(data, scale)
    clipped = topi.maximum(topi.minimum(scaled, hi), lo)
    return topi.multiply(topi.round(clipped), scale)


register_op(
    OP_NAME,
    num_inputs=4,
    arguments=("data", "dom_scale", "clip_min", "clip_max"),
    attrs=("relay.attrs.SimulatedQuantizeAttrs",
           [F("kind", "int"), F("sign", "bool", True), F("rounding", "str", "round")]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.ELEMWISE,
    doc="round(clip(data / dom_scale, clip_min, clip_max)) * dom_scale (identity for kind 0).",
    level=11,
)


def simulated_quantize(data, dom_scale, clip_min, clip_max, kind=QAnnotateKind.IDENTITY,
                       sign=True, rounding="round"):
    """Simulate quantizing ``data`` to integers of step ``dom_scale`` in float32.

    Args:
        data: float32 tensor of any shape (not a scalar).
        dom_scale: float32 scalar, the real value of one integer step.
        clip_min, clip_max: float32 scalars, bounds of the integer value (e.g. -127, 127).
        kind: a :class:`QAnnotateKind` (IDENTITY returns ``data``).
        sign: whether the integer type is signed (only signed is realized).
        rounding: "round" (ties to even).

    Returns:
        The call; its value is ``round(clip(data / dom_scale, clip_min, clip_max)) * dom_scale``
        with the shape and dtype of ``data``.
    """
    return make_call(OP_NAME, [data, dom_scale, clip_min, clip_max], kind=int(kind),
                     sign=bool(sign), rounding=rounding)

"""qnn.quantize, qnn.dequantize, qnn.requantize, qnn.simulated_quantize and
qnn.simulated_dequantize (tvm.relay 0.19's ``relay.qnn.op``).

Scales are float32 and zero points int32 Relay expressions, scalars or 1-D per-channel tensors
along ``axis``. Reference kernels (the interpreter) are the NumPy functions of
:mod:`relay_tvm.qnn.op._arith`; :mod:`relay_tvm.qnn.canonicalize` lowers the calls to integer
Relay arithmetic with the same results.
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import AttrField as F
from ...ir.expr import const
from ...ir.types import TensorType
from ...op.registry import OpPattern, make_call, register_op, rows_unless_axis_0
from . import _arith
from ._common import check_dtype_in, check_out_dtype, check_qparam, check_tensor, known

_AXIS_ATTRS = [F("axis", "int", -1), F("out_dtype", "dtype", "int8")]


def _quantize_rel(types, attrs):
    op = "qnn.quantize"
    if not known(types):
        return None
    data, scale, zp = (check_tensor(t, n, op) for t, n in
                       zip(types, ("data", "output_scale", "output_zero_point")))
    check_dtype_in(data, ("float32", "float16", "int32"), "data", op)
    check_qparam(scale, "output_scale", "float32", op, data, attrs.axis)
    check_qparam(zp, "output_zero_point", "int32", op, data, attrs.axis)
    check_out_dtype(attrs.out_dtype, ("int8", "uint8", "int16", "uint16", "int32"), op)
    return TensorType(data.shape, attrs.out_dtype)


register_op(
    "qnn.quantize", batch_rows=rows_unless_axis_0("axis"),
    num_inputs=3, arguments=("data", "output_scale", "output_zero_point"),
    attrs=("relay.attrs.QuantizeAttrs", _AXIS_ATTRS),
    rel=_quantize_rel,
    ref=lambda a, attrs, t: _arith.quantize(a[0], a[1], a[2], attrs.axis, attrs.out_dtype),
    pattern=OpPattern.ELEMWISE, level=11,
    doc="q = clip(round_half_even(data / scale) + zero_point) in out_dtype.")


def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    """Quantize a float tensor (tvm.relay.qnn.op.quantize):
    ``q = saturate(round(data / output_scale) + output_zero_point)``, rounding half to even
    (TVM's ``round``), saturating to ``out_dtype``'s range.

    Args:
        data: float32 tensor (float16 and int32 are accepted as in 0.19).
        output_scale: float32 scalar, or 1-D with one scale per channel along ``axis``.
        output_zero_point: int32 scalar or 1-D per channel.
        axis: channel axis of per-channel parameters (default the last).
        out_dtype: ``"int8"``, ``"uint8"``, ``"int16"``, ``"uint16"`` or ``"int32"``.

    Returns:
        tensor of data's shape and ``out_dtype``.

    Raises:
        TypeInferenceError: at inference, wrong dtypes or per-channel lengths.
    """
    return make_call("qnn.quantize", [data, output_scale, output_zero_point], axis=axis,
                     out_dtype=out_dtype)


def _dequantize_rel(types, attrs):
    op = "qnn.dequantize"
    if not known(types):
        return None
    data, scale, zp = (check_tensor(t, n, op) for t, n in
                       zip(types, ("data", "input_scale", "input_zero_point")))
    check_dtype_in(data, ("int8", "uint8", "int16", "uint16", "int32"), "data", op)
    check_qparam(scale, "input_scale", "float32", op, data, attrs.axis)
    check_qparam(zp, "input_zero_point", "int32", op, data, attrs.axis)
    check_out_dtype(attrs.out_dtype, ("float32", "float16"), op)
    return TensorType(data.shape, attrs.out_dtype)


register_op(
    "qnn.dequantize", batch_rows=rows_unless_axis_0("axis"),
    num_inputs=3, arguments=("data", "input_scale", "input_zero_point"),
    attrs=("relay.attrs.DequantizeAttrs", [F("axis", "int", -1),
                                          F("out_dtype", "dtype", "float32")]),
    rel=_dequantize_rel,
    ref=lambda a, attrs, t: _arith.dequantize(a[0], a[1], a[2], attrs.axis, attrs.out_dtype),
    pattern=OpPattern.ELEMWISE, level=11,
    doc="data_float = (q - zero_point) * scale.")


def dequantize(data, input_scale, input_zero_point, axis=-1, out_dtype="float32"):
    """Dequantize (tvm.relay.qnn.op.dequantize): ``(data - input_zero_point) * input_scale``,
    the subtraction in int32 and the product in float32.

    Args:
        data: int8/uint8/int16/int32 tensor.
        input_scale: float32 scalar or 1-D per channel along ``axis``.
        input_zero_point: int32 scalar or 1-D per channel.
        out_dtype: ``"float32"`` (or ``"float16"``).

    Returns:
        float tensor of data's shape.
    """
    return make_call("qnn.dequantize", [data, input_scale, input_zero_point], axis=axis,
                     out_dtype=out_dtype)


# ---- requantize --------------------------------------------------------------------------------

_REQ_CONFIG = [{"rounding": "UPWARD", "compute_dtype": "int64"}]


class requantize_config:  # noqa: N801 - tvm.relay 0.19's name
    """``with relay.qnn.op.requantize_config(rounding="TONEAREST", compute_dtype="float64"):``
    sets the defaults that requantize calls with ``rounding="None"`` / ``compute_dtype="None"``
    take (0.19's RequantizeConfig; the defaults are ``"UPWARD"`` and ``"int64"``)."""

    def __init__(self, rounding="UPWARD", compute_dtype="int64"):
        self.cfg = {"rounding": rounding, "compute_dtype": compute_dtype}
        for k, allowed in (("rounding", _arith.ROUNDINGS), ("compute_dtype",
                                                             _arith.COMPUTE_DTYPES)):
            if self.cfg[k] not in allowed:
                raise TypeInferenceError(
                    f"requantize_config: {k}={self.cfg[k]!r}, expected one of {allowed}")

    def __enter__(self):
        _REQ_CONFIG.append(self.cfg)
        return self

    def __exit__(self, *exc):
        _REQ_CONFIG.pop()

    def get_rounding(self):
        return self.cfg["rounding"]

    def get_compute_dtype(self):
        return self.cfg["compute_dtype"]


def current_requantize_config() -> requantize_config:
    """The innermost active :class:`requantize_config` (the defaults when none is)."""
    return requantize_config(**_REQ_CONFIG[-1])


def _requantize_rel(types, attrs):
    op = "qnn.requantize"
    if not known(types):
        return None
    names = ("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point")
    data, iscale, izp, oscale, ozp = (check_tensor(t, n, op) for t, n in zip(types, names))
    check_dtype_in(data, ("int8", "uint8", "int16", "int32"), "data", op)
    check_qparam(iscale, "input_scale", "float32", op, data, attrs.axis)
    check_qparam(izp, "input_zero_point", "int32", op, data, attrs.axis)
    for t, n, dt in ((oscale, "output_scale", "float32"), (ozp, "output_zero_point", "int32")):
        check_qparam(t, n, dt, op)
        if t.ndim == 1 and t.shape[0] != 1:
            raise TypeInferenceError(f"{op}: {n} must be a scalar, got shape {t.shape}")
    if attrs.rounding not in _arith.ROUNDINGS:
        raise TypeInferenceError(f"{op}: rounding {attrs.rounding!r}, expected one of "
                                 f"{_arith.ROUNDINGS}")
    if attrs.compute_dtype not in _arith.COMPUTE_DTYPES:
        raise TypeInferenceError(f"{op}: compute_dtype {attrs.compute_dtype!r}, expected one "
                                 f"of {_arith.COMPUTE_DTYPES}")
    check_out_dtype(attrs.out_dtype, ("int8", "uint8", "int16", "int32"), op)
    return TensorType(data.shape, attrs.out_dtype)


def _requantize_ref(a, attrs, t):
    return _arith.requantize(a[0], a[1], a[2], a[3], a[4], attrs.axis, attrs.rounding,
                             attrs.compute_dtype, attrs.out_dtype)


register_op(
    "qnn.requantize", batch_rows=rows_unless_axis_0("axis"), num_inputs=5,
    arguments=("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"),
    attrs=("relay.attrs.RequantizeAttrs", [
        F("axis", "int", -1), F("rounding", "str", "UPWARD"),
        F("compute_dtype", "str", "int64"), F("out_dtype", "dtype", "int8")]),
    rel=_requantize_rel, ref=_requantize_ref, pattern=OpPattern.ELEMWISE, level=11,
    doc="q_out = zp_out + round(s_in / s_out * (q_in - zp_in)), saturated to out_dtype.")


def requantize(data, input_scale, input_zero_point, output_scale, output_zero_point, axis=-1,
               rounding="None", compute_dtype="None", out_dtype="int8"):
    """Requantize (tvm.relay.qnn.op.requantize):
    ``q_out = saturate(zp_out + round(s_in / s_out * (q_in - zp_in)))``.

    With ``compute_dtype="int64"`` (the default) the multiplier is a 31-bit fixed-point number
    and the product is exact in int64 (0.19's ``FixedPointMultiply``); ``"float32"`` /
    ``"float64"`` compute in floating point. ``rounding``: ``"UPWARD"`` rounds ties toward
    +infinity (-2.5 -> -2), ``"TONEAREST"`` away from zero (-2.5 -> -3). ``"None"`` takes the
    value of the current :class:`requantize_config`. The result saturates to ``out_dtype``
    (int32 output is not clipped, as in 0.19).

    Args:
        data: int8/uint8/int16/int32 tensor.
        input_scale, input_zero_point: scalars or 1-D per channel along ``axis``.
        output_scale, output_zero_point: scalars.
        axis: channel axis of per-channel input parameters.

    Returns:
        tensor of data's shape and ``out_dtype``.
    """
    cfg = current_requantize_config()
    rounding = cfg.get_rounding() if rounding in ("None", None) else rounding
    if compute_dtype in ("None", None):
        compute_dtype = cfg.get_compute_dtype()
    return make_call("qnn.requantize", [data, input_scale, input_zero_point, output_scale,
                                        output_zero_point], axis=axis, rounding=rounding,
                     compute_dtype=compute_dtype, out_dtype=out_dtype)


# ---- simulated quantize / dequantize -----------------------------------------------------------

#: tvm.topi.nn.qnn's codes of the simulated dtype (passed as an int32 tensor argument).
SQNN_DTYPE_TO_CODE = {"disable": 0, "int8": 1, "uint8": 2, "int32": 3}
SQNN_CODE_TO_DTYPE = {v: k for k, v in SQNN_DTYPE_TO_CODE.items()}


def _sim_rel(op):
    def rel(types, attrs):
        if not known(types):
            return None
        data = check_tensor(types[0], "data", op)
        check_tensor(types[1], "dtype code", op)
        check_dtype_in(data, ("float32",), "data", op)
        check_qparam(types[2], "scale", "float32", op, data, attrs.axis)
        check_qparam(types[3], "zero_point", "int32", op, data, attrs.axis)
        return TensorType(data.shape, data.dtype)

    return rel


def _code(a, op):
    code = int(np.asarray(a).reshape(-1)[0])
    if code not in SQNN_CODE_TO_DTYPE:
        raise TypeInferenceError(f"{op}: unknown dtype code {code} (expected one of "
                                 f"{SQNN_DTYPE_TO_CODE})")
    return SQNN_CODE_TO_DTYPE[code]


def _sim_quantize_ref(a, attrs, t):
    dt = _code(a[1], "qnn.simulated_quantize")
    if dt == "disable":
        return a[0]
    q = _arith.quantize(a[0], a[2], a[3], attrs.axis, dt)
    return q.astype("float32")


def _sim_dequantize_ref(a, attrs, t):
    dt = _code(a[1], "qnn.simulated_dequantize")
    if dt == "disable":
        return a[0]
    nd = a[0].ndim
    ax = attrs.axis % nd if nd else 0
    return ((a[0] - _arith.along(a[3], nd, ax).astype("float32"))
            * _arith.along(a[2], nd, ax).astype("float32")).astype("float32")


for _name, _ref, _args in (
        ("qnn.simulated_quantize", _sim_quantize_ref,
         ("data", "out_dtype", "output_scale", "output_zero_point")),
        ("qnn.simulated_dequantize", _sim_dequantize_ref,
         ("data", "in_dtype", "input_scale", "input_zero_point"))):
    register_op(_name, batch_rows=rows_unless_axis_0("axis"), num_inputs=4,
                arguments=_args,
                attrs=("relay.attrs.SimulatedQuantizeAttrs", [F("axis", "int", -1)]),
                rel=_sim_rel(_name), ref=_ref, pattern=OpPattern.ELEMWISE, level=11,
                doc="Quantize/dequantize values kept in float32; the dtype is a run-time code.")


def _dtype_code(dtype):
    if isinstance(dtype, str):
        if dtype not in SQNN_DTYPE_TO_CODE:
            raise TypeInferenceError(f"simulated quantization dtype {dtype!r}: expected one of "
                                     f"{list(SQNN_DTYPE_TO_CODE)}")
        return const(SQNN_DTYPE_TO_CODE[dtype], "int32")
    return dtype


def simulated_quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    """Simulated quantization (tvm.relay.qnn.op.simulated_quantize): the values of
    ``quantize(data, ...)`` as float32 (rounded and saturated to ``out_dtype`` 's range, not
    dequantized). ``out_dtype`` is a string (``"int8"``, ``"uint8"``, ``"int32"``,
    ``"disable"`` = identity) or an int32 expression holding its code, so one compiled program
    can switch types at run time."""
    return make_call("qnn.simulated_quantize",
                     [data, _dtype_code(out_dtype), output_scale, output_zero_point], axis=axis)


def simulated_dequantize(data, input_scale, input_zero_point, axis=-1, in_dtype="int8"):
    """Simulated dequantization (tvm.relay.qnn.op.simulated_dequantize):
    ``(data - zero_point) * scale`` in float32 (``in_dtype="disable"``: identity)."""
    return make_call("qnn.simulated_dequantize",
                     [data, _dtype_code(in_dtype), input_scale, input_zero_point], axis=axis)


__all__ = ["quantize", "dequantize", "requantize", "requantize_config",
           "current_requantize_config", "simulated_quantize", "simulated_dequantize"]

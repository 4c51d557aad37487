"""NumPy arithmetic of the qnn operators, shared by their reference kernels (the interpreter)
and by the canonicalization (which computes the same constants to build Relay integer code).

The semantics are tvm.relay 0.19's ``src/relay/qnn``: a real multiplier ``m`` becomes a 31-bit
fixed-point significand and a power-of-two shift (``frexp``), and ``x * m`` is computed exactly
in int64 as ``((x << lshift) * significand + nudge) >> (31 + rshift)`` where the nudge rounds
half up (``"UPWARD"``) or half away from zero (``"TONEAREST"``).
"""

from __future__ import annotations

import numpy as np

from ...errors import RelayError

#: the requantize rounding modes of tvm.relay 0.19 and the compute dtypes.
ROUNDINGS = ("UPWARD", "TONEAREST")
COMPUTE_DTYPES = ("int64", "float32", "float64")


def qrange(dtype: str) -> tuple:
    """``(min, max)`` of an integer dtype (the saturation bounds)."""
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def along(v, ndim: int, axis: int):
    """A scale/zero-point value ``v`` (scalar or 1-D) shaped to broadcast along ``axis`` of an
    ``ndim`` tensor."""
    v = np.asarray(v)
    if v.ndim == 0 or v.size == 1:
        return v.reshape(())
    shape = [1] * ndim
    shape[axis] = v.size
    return v.reshape(shape)


def fixed_point(multiplier):
    """``(significand, shift)`` int64 arrays with ``multiplier = significand * 2**(shift - 31)``,
    the significand rounded half away from zero to 31 bits (0.19's
    ``GetFixedPointMultiplierShift``); a multiplier of 0 gives ``(0, 0)``."""
    m = np.asarray(multiplier, dtype="float64")
    mant, exp = np.frexp(m)
    sig = np.sign(mant) * np.floor(np.abs(mant) * 2.0**31 + 0.5)
    carry = np.abs(sig) == 2.0**31
    sig = np.where(carry, sig / 2, sig).astype("int64")
    exp = np.where(carry, exp + 1, exp).astype("int64")
    zero = m == 0
    return np.where(zero, 0, sig), np.where(zero, 0, exp)


def fixed_point_multiply(x, multiplier, rounding: str):
    """``round(x * multiplier)`` in int64 fixed point (0.19's FixedPointMultiply[PerChannel]):
    ``x`` int64, ``multiplier`` broadcastable float64; the result wraps to int32 as 0.19's cast."""
    sig, shift = fixed_point(multiplier)
    lshift = np.maximum(shift, 0)
    total = np.maximum(-shift, 0) + 31
    prod = (x.astype("int64") << lshift) * sig
    pos = np.left_shift(np.int64(1), total - 1)
    nudge = pos if rounding == "UPWARD" else np.where(prod >= 0, pos, pos - 1)
    return ((prod + nudge) >> total).astype("int32")


def round_float(x, rounding: str):
    """Rounding of the float requantize path: half up, or half away from zero."""
    if rounding == "UPWARD":
        return np.floor(x + x.dtype.type(0.5))
    return np.sign(x) * np.floor(np.abs(x) + x.dtype.type(0.5))


def multipliers(input_scale, output_scale):
    """``input_scale / output_scale`` in float64 from the float32 values (as 0.19 divides)."""
    ins = np.asarray(input_scale, "float32").astype("float64")
    outs = np.asarray(output_scale, "float32").astype("float64").reshape(())
    if outs == 0:
        raise RelayError("qnn.requantize: the output scale is 0")
    return ins / outs


def requantize(x, input_scale, input_zero_point, output_scale, output_zero_point, axis,
               rounding, compute_dtype, out_dtype):
    """NumPy ``qnn.requantize``: ``q_out = zp_out + round(s_in / s_out * (q_in - zp_in))``
    saturated to ``out_dtype`` (no saturation for int32, which wraps as in 0.19)."""
    nd = x.ndim
    axis = axis % nd if nd else 0
    m = multipliers(input_scale, output_scale)
    if compute_dtype == "int64":
        shifted = x.astype("int64") - along(input_zero_point, nd, axis).astype("int64")
        out = fixed_point_multiply(shifted, along(m, nd, axis), rounding).astype("int64")
    else:
        fdt = np.dtype(compute_dtype)
        shifted = x.astype(fdt) - along(input_zero_point, nd, axis).astype(fdt)
        scaled = along(m, nd, axis).astype(fdt) * shifted
        scaled = scaled + np.asarray(output_zero_point).astype(fdt).reshape(())
        out = round_float(scaled, rounding).astype("int64").astype("int32").astype("int64")
        return saturate(out, out_dtype)
    out = out + np.asarray(output_zero_point).astype("int64").reshape(())
    return saturate(out, out_dtype)


def saturate(x, out_dtype):
    """Clip to ``out_dtype``'s range and cast (int32 wraps instead, as 0.19's cast)."""
    if out_dtype == "int32":
        return x.astype("int32")
    lo, hi = qrange(out_dtype)
    return np.clip(x, lo, hi).astype(out_dtype)


def quantize(x, scale, zero_point, axis, out_dtype):
    """``clip(round_half_even(x / scale) + zp)`` in float32, cast to ``out_dtype``."""
    nd = x.ndim
    axis = axis % nd if nd else 0
    s = along(scale, nd, axis).astype("float32")
    z = along(zero_point, nd, axis).astype("float32")
    q = np.round(x.astype("float32") / s) + z
    lo, hi = qrange(out_dtype)
    return np.clip(q, lo, hi).astype(out_dtype)


def dequantize(q, scale, zero_point, axis, out_dtype="float32"):
    """``(q - zp) * scale``: the subtraction in int32, the product in float32."""
    nd = q.ndim
    axis = axis % nd if nd else 0
    shifted = q.astype("int32") - along(zero_point, nd, axis).astype("int32")
    return (shifted.astype("float32") * along(scale, nd, axis).astype("float32")).astype(out_dtype)

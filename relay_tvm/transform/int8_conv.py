"""Quantized convolutions as uint8 x int8 dot products on VNNI CPUs: AlterOpLayout's rewrite of
an integer ``nn.conv2d`` with int32 output for x86 targets with AVX512-VNNI or AVX-VNNI.

``relay.quantize`` and the qnn canonicalization hand ``nn.conv2d`` int16 operands: 8-bit values
cast to int16 and shifted by their zero points, which AVX2's ``vpmaddwd`` multiplies in pairs
(16 products per instruction). ``vpdpbusd`` multiplies uint8 by int8 in quads (64 products per
zmm instruction) and adds without saturation, so where the data is an 8-bit value ``x`` shifted
by a constant and the weight a constant whose values fit int8, the convolution is rewritten as

    conv(d, w) = conv(u, w8) - z * sum(w8 over its input channels and taps)

with ``u = d + z`` as uint8 (``x`` itself for uint8 data; ``x + 128`` for int8 data) and ``w8``
the weight as int8. The padding of ``d`` is 0, which is ``z`` in ``u``: where ``z != 0`` and the
convolution pads, ``u`` is padded with ``z`` first (``nn.pad``) and the convolution pads no more.
Both forms are the same integer-linear sum, computed in int32 (modulo 2^32), so the result is
bit-identical to the int16 convolution's, including where that wraps. A plain uint8 x int8
``nn.conv2d`` (0.19's x86 int8 form) is kept as it is; an int8 x int8 one gets the shift too
(0.19's x86 legalization does the same).

Conditions: NCHW data, OIHW weight, one group, static shapes, int32 output, a constant weight,
input channels a multiple of 4 and output channels of the target's lanes (16 with AVX512-VNNI,
8 with AVX-VNNI); the template is ``backend/schedule/cpu_int.py``'s. The convolution stays in
NCHW: the template packs ``NCHW4c`` data and an ``OIHW{ob}o4i`` weight itself.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, const
from ..ir.types import TensorType
from ..op.registry import make_call

_EIGHT_BIT = ("uint8", "int8")


def _ty(e):
    return getattr(e, "_checked_type", None)


def _dtype(e):
    t = _ty(e)
    return t.dtype if isinstance(t, TensorType) else None


def _scalar_int(e):
    """The value of a scalar integer constant (or of a cast of one), else None."""
    if isinstance(e, Call) and getattr(e.op, "name", None) == "cast":
        e = e.args[0]
    if isinstance(e, Constant):
        v = e.data.numpy()
        if v.size == 1 and v.dtype.kind in "iu":
            return int(v.reshape(()))
    return None


_TRANSPARENT = ("annotation.stop_fusion", "copy")


def _clip_low(e):
    """``lo`` where ``e`` (under fusion annotations) is a clip whose values, truncated to
    integers, lie in ``[lo, lo + 255]`` with ``lo`` -128 or 0; else None."""
    while isinstance(e, Call) and getattr(e.op, "name", None) in _TRANSPARENT:
        e = e.args[0]
    if not (isinstance(e, Call) and getattr(e.op, "name", None) == "clip"):
        return None
    a_min, a_max = float(e.attrs.a_min), float(e.attrs.a_max)
    for lo in (-128, 0):
        if a_min > lo - 1 and a_max < lo + 256:
            return lo
    return None


def eight_bit_operand(expr):
    """``(src, lo, offset)`` with ``expr == src + offset`` exactly and ``src``'s values in
    ``[lo, lo + 255]``, or None. ``src`` is an 8-bit tensor (``lo`` 0 for uint8, -128 for int8),
    its cast to int16, or the int16 cast of a clip to such a range.

    ``expr`` is typed (the original call's argument): such a source plus or minus scalar
    integer constants (what the qnn canonicalization and ``relay.quantize`` make of a zero
    point)."""
    offset = 0
    while isinstance(expr, Call) and getattr(expr.op, "name", None) in ("add", "subtract"):
        c = _scalar_int(expr.args[1])
        if c is None:
            return None
        offset += c if expr.op.name == "add" else -c
        expr = expr.args[0]
    low = {"uint8": 0, "int8": -128}
    if _dtype(expr) in low:
        return (expr, low[_dtype(expr)], offset) if offset == 0 else None
    if not (isinstance(expr, Call) and getattr(expr.op, "name", None) == "cast" and
            _dtype(expr) == "int16"):
        return None
    if _dtype(expr.args[0]) in low:
        return expr.args[0], low[_dtype(expr.args[0])], offset
    lo = _clip_low(expr.args[0])
    return None if lo is None else (expr, lo, offset)


def _int8_weight(w):
    if not isinstance(w, Constant):
        return None
    v = w.data.numpy()
    if v.dtype.kind not in "iu" or v.size == 0:
        return None
    if v.min() < -128 or v.max() > 127:
        return None
    return v.astype("int8")


def _wrap32(v: np.ndarray) -> np.ndarray:
    return ((v.astype("int64") + 2 ** 31) % 2 ** 32 - 2 ** 31).astype("int32")


def dot_lanes() -> int:
    """int32 lanes of the current target's uint8 x int8 dot product (16 with AVX512-VNNI, 8
    with AVX-VNNI), 0 for a target without one (or not an x86 CPU)."""
    # the ISA model lives with the CPU schedules (AlterOpLayout is a target-dependent pass)
    from ..backend.schedule.cpu_model import cpu_features
    from .winograd_choice import current_target

    tgt = current_target()
    if tgt.kind.name != "llvm":
        return 0
    return cpu_features(tgt).dot_lanes


def vnni_conv(orig, new, lanes: int):
    """``new`` (an ``nn.conv2d`` call; ``orig`` its typed original) as a uint8 x int8
    convolution for a dot product of ``lanes`` int32 lanes (:func:`dot_lanes`), or None where
    the module docstring's conditions do not hold."""
    a = new.attrs
    t_in, t_w = _ty(orig.args[0]), _ty(orig.args[1])
    if not (isinstance(t_in, TensorType) and isinstance(t_w, TensorType)):
        return None
    if (a.data_layout, a.kernel_layout, a.out_layout) != ("NCHW", "OIHW", "") or a.groups != 1:
        return None
    if len(t_in.shape) != 4 or len(t_w.shape) != 4 or \
            not all(isinstance(d, int) for d in (*t_in.shape, *t_w.shape)):
        return None
    if a.out_dtype != "int32" or t_in.dtype not in ("int16", *_EIGHT_BIT):
        return None
    o, c = t_w.shape[:2]
    if o == 0 or c == 0:
        return None
    w8 = _int8_weight(new.args[1])
    if w8 is None:
        return None
    operand = eight_bit_operand(orig.args[0])
    if operand is None:
        return None
    src_orig, lo, offset = operand
    # new's data is orig's rewritten: the same source under it
    src = _peel(new.args[0], orig.args[0], src_orig)
    if src is None:
        return None
    if _dtype(src_orig) == "uint8":
        u = src
    else:  # shifted into [0, 255] in int16, then uint8
        s16 = src if _dtype(src_orig) == "int16" else make_call("cast", [src], dtype="int16")
        u = make_call("cast", [make_call("subtract", [s16, const(np.int16(lo))])],
                      dtype="uint8")
    z = -(lo + offset)  # expr == u - z
    # channels padded to whole quads and vectors: zero weights, any data (z here)
    pc, po = -c % 4, -o % lanes
    if t_in.dtype == "uint8" and t_w.dtype == "int8" and not pc and not po:
        return new  # already the VNNI form: the template applies as it is
    padding = tuple(int(p) for p in a.padding)
    if pc or (z and any(padding)):
        if not 0 <= z <= 255:
            return None  # the padding value is not a uint8 value
        from ..op.nn import pad4
        from ..op.nn_shape import pad

        pt, pl, pb, pr = pad4(padding)
        u = pad(u, ((0, 0), (0, pc), (pt, pb), (pl, pr)), pad_value=const(np.uint8(z)))
        padding = (0, 0, 0, 0)
    if pc or po:
        w8 = np.pad(w8, ((0, po), (0, pc), (0, 0), (0, 0)))
    attrs = dict(new.attrs.items())
    attrs["padding"] = padding
    attrs["channels"] = o + po
    out = make_call("nn.conv2d", [u, const(w8)], span=new.span, **attrs)
    if po:
        n, _, oh, ow = _ty(orig).shape
        out = make_call("strided_slice", [out], begin=[0, 0, 0, 0], end=[n, o, oh, ow],
                        strides=[1, 1, 1, 1], axes=None, slice_mode="end")
    if z == 0:
        return out
    comp = _wrap32(z * w8[:o].astype("int64").sum(axis=(1, 2, 3))).reshape(o, 1, 1)
    return make_call("subtract", [out, const(comp)], span=new.span)


def _peel(new_expr, orig_expr, target_orig):
    """The part of ``new_expr`` (the rewritten ``orig_expr``) that corresponds to
    ``target_orig``, a value under ``orig_expr``'s chain of add / subtract / cast calls; None
    where the rewrite changed that chain (a layout transform moved into it, say)."""
    while orig_expr is not target_orig:
        if not (isinstance(orig_expr, Call) and isinstance(new_expr, Call)) or \
                getattr(orig_expr.op, "name", None) != getattr(new_expr.op, "name", None):
            return None
        orig_expr, new_expr = orig_expr.args[0], new_expr.args[0]
    return new_expr


__all__ = ["dot_lanes", "eight_bit_operand", "vnni_conv"]

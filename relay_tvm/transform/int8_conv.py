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
``nn.conv2d`` (0.19's x86 int8 form) is blocked the same way; an int8 x int8 one gets the
shift too (0.19's x86 legalization does the same).

Conditions: NCHW data, OIHW weight, one group, static shapes, int32 output, a constant weight
whose values fit int8. Channels are padded to whole quads (input) and vectors (output: 16
lanes with AVX512-VNNI, 8 with AVX-VNNI).

The result is blocked as the float convolutions are: ``nn.contrib_conv2d_NCHWc`` on
``NCHW{ib}c`` uint8 data (``ib`` 16, else 8 or 4) and an ``OIHW{ib}i{ob}o`` int8 weight, int32
output ``NCHW{ob}c``, between layout transforms that the propagation of AlterOpLayout carries
through the requantization and cancels between layers. The template
(``backend/schedule/cpu_int.py``) packs the weight as ``OIHW{ib/4}i{ob}o4i`` at build time;
each quad of input channels is contiguous in the data block, and the epilogue runs over the
contiguous output block. (A uint8 x int8 ``nn.conv2d`` left NCHW, below opt level 3, has an NCHW
template too, which packs ``NCHW4c`` data per run.)
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, const
from ..ir.types import TensorType
from ..op.registry import make_call
from ._rewrite import type_of as _ty

_EIGHT_BIT = ("uint8", "int8")


def _dtype(e):
    t = _ty(e)
    return t.dtype if isinstance(t, TensorType) else None


_INT16 = (-2 ** 15, 2 ** 15 - 1)


def _scalar_int(e):
    """The value of a scalar integer constant (or of its cast to an int16 that holds it),
    else None."""
    cast = isinstance(e, Call) and getattr(e.op, "name", None) == "cast"
    if cast:
        if e.attrs.dtype != "int16":
            return None
        e = e.args[0]
    if isinstance(e, Constant):
        v = e.data.numpy()
        if v.size == 1 and v.dtype.kind in "iu":
            v = int(v.reshape(()))
            return v if not cast or _INT16[0] <= v <= _INT16[1] else None
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
    steps = []  # the constants added, outermost first
    while isinstance(expr, Call) and getattr(expr.op, "name", None) in ("add", "subtract"):
        c = _scalar_int(expr.args[1])
        if c is None or _dtype(expr) != "int16":
            return None
        steps.append(c if expr.op.name == "add" else -c)
        expr = expr.args[0]
    low = {"uint8": 0, "int8": -128}
    if _dtype(expr) in low:
        return (expr, low[_dtype(expr)], 0) if not steps else None
    if not (isinstance(expr, Call) and getattr(expr.op, "name", None) == "cast" and
            _dtype(expr) == "int16"):
        return None
    if _dtype(expr.args[0]) in low:
        src, lo = expr.args[0], low[_dtype(expr.args[0])]
    else:
        src, lo = expr, _clip_low(expr.args[0])
        if lo is None:
            return None
    # each int16 add / subtract must not wrap: the range [lo, lo + 255] shifted so far stays in
    # int16 at every step (innermost first)
    offset = 0
    for c in reversed(steps):
        offset += c
        if lo + offset < _INT16[0] or lo + 255 + offset > _INT16[1]:
            return None
    return src, lo, offset


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
    from .winograd_choice import target_features

    feats = target_features()
    return feats.dot_lanes if feats is not None else 0


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
    out = _blocked_conv(u, w8, a, padding, lanes, new.span)
    if po:
        n, _, oh, ow = _ty(orig).shape
        out = make_call("strided_slice", [out], begin=[0, 0, 0, 0], end=[n, o, oh, ow],
                        strides=[1, 1, 1, 1], axes=None, slice_mode="end")
    if z == 0:
        return out
    comp = _wrap32(z * w8[:o].astype("int64").sum(axis=(1, 2, 3))).reshape(o, 1, 1)
    return make_call("subtract", [out, const(comp)], span=new.span)


def _blocked_conv(u, w8, a, padding, lanes, span):
    """``nn.contrib_conv2d_NCHWc`` of the uint8 ``u`` (NCHW) and the int8 weight ``w8``
    (OIHW, channels whole quads and vectors) between layout transforms: data in blocks of 16
    input channels (8 or 4 where 16 do not divide them), output in blocks of ``lanes``."""
    o, c, kh, kw = w8.shape
    ib = next(b for b in (16, 8, 4) if c % b == 0)
    ob = lanes
    wk = w8.reshape(o // ob, ob, c // ib, ib, kh, kw).transpose(0, 2, 4, 5, 3, 1)
    dl, kl, ol = f"NCHW{ib}c", f"OIHW{ib}i{ob}o", f"NCHW{ob}c"
    data = make_call("layout_transform", [u], src_layout="NCHW", dst_layout=dl)
    conv = make_call("nn.contrib_conv2d_NCHWc", [data, const(np.ascontiguousarray(wk))],
                     span=span, strides=tuple(a.strides), padding=padding,
                     dilation=tuple(a.dilation), groups=1, channels=o, kernel_size=(kh, kw),
                     data_layout=dl, kernel_layout=kl, out_layout=ol, out_dtype="int32")
    return make_call("layout_transform", [conv], span=span, src_layout=ol, dst_layout="NCHW")


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

"""Integer Winograd for quantized convolutions: AlterOpLayout's rewrite of an int16 x int16 ->
int32 ``nn.conv2d`` (what ``relay.quantize`` and the qnn canonicalization make of an 8-bit 3x3
convolution) into F(2x2, 3x3) with int16 operands in the batched GEMM.

F(2x2, 3x3)'s input and output transforms ``B`` and ``A`` have entries 0 and +-1, and
``2 G`` is integer, so with ``U = (2G) g (2G)^T`` (exact integers, 4x the usual transformed
weight) ``A^T [U . (B^T d B)] A`` is exactly 4x the convolution: a right shift by 2 gives it
back. The GEMM multiplies int16 pairs into int32 (``vpmaddwd``, 16 products per instruction,
``backend/schedule/cpu_int.py``) over 16 products per tile and channel pair instead of 36, so it
is exact while

- the transformed input fits int16: ``|d| * s_B^2 <= 32767``, ``s_B`` the largest column sum of
  ``|B|`` (2 here): the data's bound is proven from the expression, 8-bit values cast to int16
  and shifted by a constant zero point (|d| <= 255, 510 with a zero point), never assumed;
- the transformed weight fits int16: ``|g| * s_G^2 <= 32767`` (``s_G = 3`` for ``2 G``);
- 4x the true result fits int32 (the int32 sums may wrap on the way: the transforms are
  integer-linear, so the result is exact modulo 2^32, hence exact when it fits).

The rewrite needs a constant weight (transformed and packed at build time, ``(alpha, alpha,
O/k, I/2, k, 2)``, kernel layout ``OIHW{k}o2i``), an even number of input channels, output
channels in blocks of 8, an x86 target with AVX2, and the ``"relay.AlterOpLayout.winograd"``
config not ``"never"``. On a target with VNNI, AlterOpLayout tries the uint8 x int8 form first
(:mod:`.int8_conv`: 64 products per ``vpdpbusd``, against this form's 16 per ``vpmaddwd``,
worth 36 of the direct convolution's after F(2x2, 3x3)'s 2.25x fewer products).
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, const
from ..ir.types import TensorType
from ..op import nn_winograd
from ..op.registry import make_call
from ._rewrite import type_of as _ty
from .winograd_choice import plain_3x3

_TILE = 2
_INT16_MAX = 32767
_SMALL_INTS = {"int8": 128, "uint8": 255}


def value_bound(expr, depth: int = 6):
    """An upper bound of ``|x|`` over the values of the int16 expression ``expr`` that follows
    from its form alone, or None: an 8-bit value cast to int16 (128 / 255), a constant (its
    largest magnitude), a clip (its larger limit), a cast of a bounded value within int16's range, a sum or
    difference of bounded terms, a fusion annotation or copy of a
    bounded value. ``expr`` must be typed (its producers' types are read). ``depth`` limits the (short)
    descent into the producers."""
    if isinstance(expr, Constant):
        v = expr.data.numpy()
        return int(np.abs(v.astype("int64")).max()) if v.size else 0
    if depth <= 0 or not isinstance(expr, Call) or not hasattr(expr.op, "name"):
        return None
    name = expr.op.name
    if name == "cast":
        src = _ty(expr.args[0])
        if isinstance(src, TensorType) and src.dtype in _SMALL_INTS:
            return _SMALL_INTS[src.dtype]
        inner = value_bound(expr.args[0], depth - 1)  # a value already in int16's range
        return inner if inner is not None and inner <= _INT16_MAX else None
    if name == "clip":
        return int(max(abs(expr.attrs.a_min), abs(expr.attrs.a_max)))
    if name in ("annotation.stop_fusion", "copy"):
        return value_bound(expr.args[0], depth - 1)
    if name in ("add", "subtract"):
        bounds = [value_bound(a, depth - 1) for a in expr.args]
        return None if None in bounds else sum(bounds)
    return None


def _avx2_target() -> bool:
    import tvm

    from .winograd_choice import current_target

    tgt = current_target()
    if tgt.kind.name != "llvm":
        return False
    try:
        return bool(tvm.target.codegen.target_has_features("avx2", tgt))
    except Exception:  # a target LLVM does not know
        return False


def _even_block(n: int, limit: int = 16) -> int | None:
    """The channel block of the int16 data: an even divisor of ``n`` up to ``limit``, whole
    8-lane vectors preferred (the input transform's vector), else the largest even one."""
    divs = [d for d in range(2, min(n, limit) + 1, 2) if n % d == 0]
    if not divs:
        return None
    whole = [d for d in divs if d % 8 == 0]
    return max(whole or divs)


def transformed_weight(w: np.ndarray) -> np.ndarray:
    """``U = (2G) g (2G)^T`` of an integer (O, I, 3, 3) kernel, int64, shape (4, 4, O, I):
    4x F(2x2, 3x3)'s transformed weight, in integers."""
    _, _, g = nn_winograd.transform_matrices(_TILE, 3)
    g2 = np.rint(2 * g).astype("int64")
    return np.einsum("ar,oirs,bs->aboi", g2, w.astype("int64"), g2)


def eligible(orig, new) -> bool:
    """Whether the int16 ``nn.conv2d`` ``new`` (``orig`` its typed original) can be the
    integer F(2x2, 3x3) (see the module docstring)."""
    types = plain_3x3(orig, new)
    if types is None:
        return False
    t_in, t_w = types
    if (t_in.dtype, t_w.dtype, new.attrs.out_dtype) != ("int16", "int16", "int32"):
        return False
    o, c = t_w.shape[:2]
    if o == 0 or c % 2 or o % 8 or _even_block(c) is None or \
            type(new.args[1]) is not Constant:
        return False
    _, b_m, _ = nn_winograd.transform_matrices(_TILE, 3)
    s_b = int(np.abs(b_m).sum(axis=0).max())
    bound = value_bound(orig.args[0])  # the typed original: its producers carry types
    if bound is None or bound * s_b * s_b > _INT16_MAX:
        return False
    w = new.args[1].data.numpy().astype("int64")
    u_max = int(np.abs(transformed_weight(w)).max()) if w.size else 0
    if u_max > _INT16_MAX:
        return False
    # 4x the largest possible result must fit int32
    if 4 * 9 * c * bound * int(np.abs(w).max() if w.size else 0) >= 2 ** 31:
        return False
    return _avx2_target()


def weight_block(o: int, tiles: int) -> int:
    """Output channels per block of the packed weight (``OIHW{k}o2i``): 16 (two int32 vectors
    per register tile row, fewer weight loads per ``vpmaddwd``) when a register tile of 4-6
    input tiles divides ``tiles``, else 8 with up to 12 tiles."""
    return 16 if o % 16 == 0 and any(tiles % d == 0 for d in (4, 5, 6)) else 8


def int16_winograd_conv(orig, new):
    """``nn.conv2d`` -> layout_transform to ``NCHW{ic}c``, F(2x2, 3x3) of the integer
    transformed weight packed as ``OIHW{k}o2i``, right shift by 2, layout_transform back."""
    from .layout import block_size

    a = new.attrs
    c = _ty(orig.args[0]).shape[1]
    o = _ty(orig.args[1]).shape[0]
    ic = _even_block(c)
    oc = block_size(o)
    pt, pl, pb, pr = nn_winograd._pad4(a.padding)
    n, _, h, w = _ty(orig.args[0]).shape
    ob = weight_block(o, n * -(-(h + pt + pb - 2) // _TILE) * -(-(w + pl + pr - 2) // _TILE))
    u = transformed_weight(new.args[1].data.numpy())  # (4, 4, O, I)
    al = u.shape[0]
    u = u.reshape(al, al, o // ob, ob, c // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    weight = const(np.ascontiguousarray(u).astype("int16"))
    dl, ol = f"NCHW{ic}c", f"NCHW{oc}c"
    data = make_call("layout_transform", [new.args[0]], src_layout="NCHW", dst_layout=dl)
    conv = make_call(nn_winograd.OP, [data, weight], span=new.span, tile_size=_TILE,
                     strides=(1, 1), padding=tuple(nn_winograd._pad4(a.padding)),
                     dilation=(1, 1), groups=1, channels=o, kernel_size=(3, 3), data_layout=dl,
                     kernel_layout=f"OIHW{ob}o2i", out_layout=ol, out_dtype="int32")
    shifted = make_call("right_shift", [conv, const(np.int32(2))], span=new.span)
    return make_call("layout_transform", [shifted], span=new.span, src_layout=ol,
                     dst_layout="NCHW")


__all__ = ["eligible", "int16_winograd_conv", "transformed_weight", "value_bound"]

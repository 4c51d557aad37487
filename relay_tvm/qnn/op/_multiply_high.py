"""``qnn.multiply_high`` (a relay_tvm operator, not in tvm.relay 0.19): the high 32 bits of
the 64-bit product of two int32 tensors, ``(int64(lhs) * int64(rhs)) >> 32`` (an arithmetic
shift: the floor of ``lhs * rhs / 2**32``), with NumPy broadcasting; int32 in, int32 out.

The integer rescalings of ``relay.quantize`` use it (:func:`int32_fixed_point_multiply`) so
that a Q31 fixed-point multiplication needs no int64 arithmetic: AVX2 has no 64-bit multiply
or 64-bit arithmetic shift, and LLVM lowers this operator's ``sext * sext >> 32`` to
``vpmuldq`` (two per eight lanes) where the int64 form took three ``vpmuludq``, shifts and a
sign fix-up per four lanes.
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.expr import const
from ...op._common import broadcast_rel, tensor_args
from ...op.registry import OpPattern, make_call, register_op

OP = "qnn.multiply_high"


def _rel(types, attrs):
    ts = tensor_args(types, ("lhs", "rhs"), OP)
    if ts is None:
        return None
    for what, t in zip(("lhs", "rhs"), ts):
        if t.dtype != "int32":
            raise TypeInferenceError(f"{OP}: {what} has dtype {t.dtype}, expected int32")
    return broadcast_rel(OP)(types, attrs)


def _ref(args, attrs, out_type):
    a, b = (np.asarray(x).astype("int64") for x in args)
    return ((a * b) >> 32).astype("int32")


def _compute(attrs, inputs, out_type):
    import tvm
    from tvm import topi

    a, b = (topi.cast(x, "int64") for x in inputs)
    prod = topi.multiply(a, b)
    return topi.cast(topi.right_shift(prod, tvm.tirx.const(32, "int64")), "int32")


register_op(
    OP,
    batch_rows=True,
    num_inputs=2,
    arguments=("lhs", "rhs"),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.BROADCAST,
    doc="High 32 bits of the int64 product of two int32 tensors (broadcasting).",
    level=10,
)


def multiply_high(lhs, rhs):
    """``(int64(lhs) * int64(rhs)) >> 32`` as int32 (see the module docstring).

    Args:
        lhs, rhs: int32 tensors whose shapes broadcast (NumPy rules).

    Raises:
        TypeInferenceError: at inference, for another dtype or shapes that do not broadcast.
    """
    return make_call(OP, [lhs, rhs])


def int32_fixed_point_multiply(data, mult, total, bound: int = 2 ** 31):
    """``(int64(data) * mult + 2**(total - 1)) >> total`` (a Q31 multiplier ``mult`` in
    ``[0, 2**31)`` and a right shift ``total`` in ``[1, 62]``: the "UPWARD" rounding of ``data *
    mult / 2**total``), computed in int32 for an int32 ``data`` with ``|data| <= bound``; None
    where that is not exact.

    With ``P = data * mult = H * 2**32 + L`` (``H`` = :func:`multiply_high`, ``0 <= L < 2**32``)
    and ``total >= 33``, ``2**(total - 1)`` is a multiple of ``2**32``, so ``(P + 2**(total -
    1)) >> total == (H + 2**(total - 33)) >> (total - 32)``; ``|H| <= 2**30`` and ``2**(total -
    33) <= 2**29`` keep the sum in int32. A smaller ``total`` is raised to 33 by shifting
    ``data`` left by ``s = 33 - total`` first (``(P 2**s + 2**(total + s - 1)) >> (total + s)``
    is the same value), which needs ``bound * 2**s < 2**31`` (8- and 16-bit values widened to
    int32). Where ``total + s > 62``, ``|P| < 2**(total - 1)`` and the result is 0. ``mult`` and
    ``total`` are NumPy arrays broadcasting to ``data`` (one per channel) or scalars.
    """
    mult = np.asarray(mult, dtype=np.int64)
    total = np.asarray(total, dtype=np.int64)
    if (mult.shape != total.shape or (mult < 0).any() or (mult >= 2 ** 31).any()
            or (total < 1).any() or (total > 62).any()):
        return None
    live = mult != 0
    shift = max(0, 33 - int(total[live].min())) if live.any() else 0
    if shift > 30 or (shift and int(bound) << shift >= 2 ** 31):
        return None
    total = total + shift
    gone = ~live | (total > 62)  # 0 * data, or a product below half the divisor: 0
    mult, total = np.where(gone, 0, mult), np.where(gone, 33, total)

    def c(a):
        a = np.asarray(a).astype("int32")
        return const(int(a), "int32") if a.ndim == 0 else const(a, "int32")

    if shift:
        data = make_call("left_shift", [data, c(shift)])
    high = multiply_high(data, c(mult))
    return make_call("right_shift", [make_call("add", [high, c(np.left_shift(1, total - 33))]),
                                     c(total - 32)])


__all__ = ["int32_fixed_point_multiply", "multiply_high"]

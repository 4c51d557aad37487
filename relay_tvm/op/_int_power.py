"""``power`` of integer tensors: tvm.relay 0.19's ``power`` took any dtype its broadcast relation
took, integers included, but TVM 0.27's ``tirx.pow`` (behind ``topi.power``) is float-only.

Semantics, shared by the reference kernel and the TE compute so that every executor agrees:

- a non-negative exponent gives NumPy's integer power, wrapping modulo ``2**bits`` as NumPy's
  (``numpy.power(np.int8(2), np.int8(7)) == -128``);
- a negative exponent, which NumPy refuses with a ``ValueError``, gives C's truncated
  ``1 / x**-e``: 1 for a base of 1, +-1 for a base of -1 (by the exponent's parity), 0 for any
  other base (0 included, where no value is right).
"""

from __future__ import annotations

import numpy as np


def np_int_power(a, b):
    """The reference kernel: ``a ** b`` of two integer arrays of one dtype (broadcast)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = a.dtype
    with np.errstate(all="ignore"):
        out = np.power(a, np.where(b < 0, 0, b).astype(b.dtype))
    if dtype.kind == "i":
        odd = (b % 2) != 0
        neg = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(dtype)
        out = np.where(b < 0, neg, out)
    return np.asarray(out, dtype=dtype)


def int_power(a, b, out_shape, dtype: str):
    """The TE compute of ``a ** b`` for two integer tensors of ``dtype``, broadcast to
    ``out_shape`` (a symbolic dimension of ``a`` or ``b`` must be the output's).

    Exponentiation by squaring as a sequential loop over the exponent's bits, in a ``te.extern``
    kernel: written as one unrolled expression (each square bound by a ``tirx.Let``), TVM's
    analyzer substitutes every bound square into the next, and the expression, hence build
    time, doubled with every bit (33 s for uint16, minutes for int32). Signed operands multiply
    as their unsigned bits: the same wrapped result, without the undefined behaviour LLVM may
    assume for a signed overflow."""
    import contextlib

    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    from .vision import _ir

    bits = np.dtype(dtype).itemsize * 8
    signed = dtype.startswith("int")
    udt = f"uint{bits}"
    n = len(out_shape)

    def c(v):
        return tirx.const(v, udt)

    def one_dim(d):
        return isinstance(d, (int, tirx.IntImm)) and int(d) == 1

    def index(shape, idx):
        off = n - len(shape)
        return [0 if one_dim(shape[j]) and not one_dim(out_shape[j + off]) else idx[j + off]
                for j in range(len(shape))]

    def body(ins, outs):
        x_buf, e_buf = ins
        out = outs[0]
        with contextlib.ExitStack() as stack:
            idx = [stack.enter_context((T.parallel if k == 0 else T.serial)(0, d))
                   for k, d in enumerate(out_shape)]
            if not idx:  # a scalar: the statements still need one enclosing scope
                stack.enter_context(T.serial(0, 1))
            x = x_buf[tuple(index(a.shape, idx))]
            e = e_buf[tuple(index(b.shape, idx))]
            if signed:
                base = _ir.local(udt, tirx.reinterpret(udt, x))
                ue = tirx.reinterpret(udt, e)
            else:
                base = _ir.local(udt, x)
                ue = e
            r = _ir.local(udt, c(1))
            with T.serial(0, bits - 1 if signed else bits) as k:
                kk = tirx.Cast(udt, k)
                with T.If(tirx.bitwise_and(tirx.shift_right(ue, kk), c(1)) == c(1)):
                    with T.Then():
                        r[0] = r[0] * base[0]
                base[0] = base[0] * base[0]
            if not signed:
                out[tuple(idx)] = r[0]
                return
            one, zero = tirx.const(1, dtype), tirx.const(0, dtype)
            odd = tirx.bitwise_and(e, one) == one
            neg = tirx.Select(x == one, one,
                              tirx.Select(x == tirx.const(-1, dtype),
                                          tirx.Select(odd, tirx.const(-1, dtype), one), zero))
            out[tuple(idx)] = tirx.Select(e < zero, neg, tirx.reinterpret(dtype, r[0]))

    return _ir.extern("power", [tuple(out_shape)], [dtype], [a, b], body)[0]


__all__ = ["np_int_power", "int_power"]

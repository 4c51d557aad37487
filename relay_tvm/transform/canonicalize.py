"""CanonicalizeOps: rewrite operators into simpler canonical ones (opt level 3); and
CanonicalizeCast.

Relay's ``canonicalize_ops.cc``: ``nn.bias_add(data, bias, axis)`` becomes
``add(data, expand_dims(bias, axis=1, num_newaxis=ndim - axis - 1))``, a broadcast add that
fusion can merge into the producing convolution or dense kernel.

CanonicalizeCast (Relay's ``canonicalize_cast.cc``): a widening ``cast`` read by several
elementwise / broadcast operators is duplicated, one copy per reader after the first, so each
copy can fuse into its reader's kernel instead of the cast being a kernel of its own.
"""

from __future__ import annotations

from ..op.registry import make_call
from ._rewrite import Rewriter, called_ops, op_name
from .pass_infra import FunctionPass, PassInfo
from .simplify_inference import expand_to_axis


class _Canonicalize(Rewriter):
    def post_call(self, orig, new):
        if op_name(new) != "nn.bias_add":
            return new
        data, bias = new.args
        ndim = len(orig.args[0].checked_type.shape)
        axis = new.attrs.axis % ndim
        return make_call("add", [data, expand_to_axis(bias, ndim, axis)], span=orig.span)


def canonicalize_ops(func):
    if "nn.bias_add" not in called_ops(func):
        return func
    return _Canonicalize().rewrite(func)


def CanonicalizeOps():  # noqa: N802 - Relay's name
    """``nn.bias_add`` to ``expand_dims`` + ``add`` (opt level 3)."""
    return FunctionPass(lambda f, m, c: canonicalize_ops(f),
                        PassInfo(3, "CanonicalizeOps", ("InferType",)))


def _bits(dtype: str) -> int:
    """Bits of one lane of ``dtype``, by TVM's dtype parser; bool counts as 1 bit (TVM stores
    it in 8), so a bool -> int8 cast is widening."""
    import tvm

    return 1 if dtype == "bool" else tvm.DataType(dtype).bits


class _CanonicalizeCast(Rewriter):
    def __init__(self):
        super().__init__()
        self.uses = {}

    def post_call(self, orig, new):
        from ..op.registry import Op, OpPattern

        if not isinstance(new.op, Op) or new.op.pattern > OpPattern.BROADCAST:
            return new
        args = list(new.args)
        for i, a in enumerate(orig.args):
            if op_name(a) != "cast":
                continue
            src = a.args[0].checked_type
            if _bits(src.dtype) >= _bits(a.attrs.dtype):
                continue
            self.uses[a] = self.uses.get(a, 0) + 1
            if self.uses[a] > 1:
                c = args[i]  # a fresh copy for this reader
                args[i] = type(c)(c.op, c.args, c.attrs, c.type_args, c.span)
        if all(x is y for x, y in zip(args, new.args)):
            return new
        return type(new)(new.op, args, new.attrs, new.type_args, new.span)


def canonicalize_cast(func):
    if "cast" not in called_ops(func):
        return func
    return _CanonicalizeCast().rewrite(func)


def CanonicalizeCast():  # noqa: N802 - Relay's name
    """One copy of a widening cast per elementwise reader (opt level 3)."""
    return FunctionPass(lambda f, m, c: canonicalize_cast(f),
                        PassInfo(3, "CanonicalizeCast", ("InferType",)))


__all__ = ["CanonicalizeOps", "canonicalize_ops", "CanonicalizeCast", "canonicalize_cast"]

"""CanonicalizeOps: rewrite operators into simpler canonical ones (opt level 3).

Relay's ``canonicalize_ops.cc``: ``nn.bias_add(data, bias, axis)`` becomes
``add(data, expand_dims(bias, axis=1, num_newaxis=ndim - axis - 1))``, a broadcast add that
fusion can merge into the producing convolution or dense kernel.
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


__all__ = ["CanonicalizeOps", "canonicalize_ops"]

"""FastMath: replace exp, tanh, erf and softmax by their fast approximations (opt level 4).

Relay's ``fast_math.cc``: ``exp -> fast_exp``, ``tanh -> fast_tanh``, ``erf -> fast_erf``,
``nn.softmax -> nn.fast_softmax`` (same attributes; topi's polynomial approximations; float32
only, accurate to about 1e-5 relative).
"""

from __future__ import annotations

from ..ir.expr import Call
from ..op.registry import get as get_op
from ..op.registry import is_registered
from ._rewrite import Rewriter, op_name
from .pass_infra import FunctionPass, PassInfo

FAST = {"exp": "fast_exp", "tanh": "fast_tanh", "erf": "fast_erf",
        "nn.softmax": "nn.fast_softmax"}


class _FastMath(Rewriter):
    def post_call(self, orig, new):
        fast = FAST.get(op_name(new))
        if fast is None or not is_registered(fast):
            return new
        ty = getattr(orig, "_checked_type", None)
        if ty is not None and getattr(ty, "dtype", "float32") != "float32":
            return new
        return Call(get_op(fast), new.args, new.attrs, new.type_args, new.span)


def FastMath():  # noqa: N802 - Relay's name
    """Use fast approximations of exp, tanh, erf and nn.softmax (opt level 4)."""
    return FunctionPass(lambda f, m, c: _FastMath().rewrite(f),
                        PassInfo(4, "FastMath", ("InferType",)))


__all__ = ["FastMath"]

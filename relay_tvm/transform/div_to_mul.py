"""DivToMul (tvm.relay 0.19's ``div_to_mul.cc``): ``x / c`` with a floating-point constant ``c``
becomes ``x * (1 / c)``, the reciprocal computed once in ``c``'s dtype. A multiplication is
cheaper than a division; the result may differ from the division in the last bit (the
reciprocal is rounded), which is why the pass only runs when asked for (opt level 0, not in
``relay.build``'s pipeline). Integer division is left alone.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, const
from ..op.registry import make_call
from ._rewrite import Rewriter, op_name
from .pass_infra import FunctionPass, PassInfo


class _DivToMul(Rewriter):
    def post_call(self, orig, new):
        if op_name(new) != "divide" or type(new.args[1]) is not Constant:
            return new
        c = np.asarray(new.args[1].data.numpy() if hasattr(new.args[1].data, "numpy")
                       else new.args[1].data)
        if c.dtype.kind != "f":
            return new
        with np.errstate(divide="ignore"):
            recip = (np.ones((), c.dtype) / c).astype(c.dtype)
        return make_call("multiply", [new.args[0], const(recip, str(c.dtype))], span=new.span)


def DivToMul():  # noqa: N802 - Relay's name
    """Replace division by a floating-point constant with multiplication by its reciprocal."""
    return FunctionPass(lambda f, m, c: _DivToMul().rewrite(f), PassInfo(0, "DivToMul"))


__all__ = ["DivToMul"]

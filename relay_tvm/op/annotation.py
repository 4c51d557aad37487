"""``relay.annotation`` identity operators (tvm.relay.op.annotation): ``stop_fusion`` and
``checkpoint``. Both pass their argument through unchanged when run; they carry intent for
passes: ``stop_fusion`` marks a fusion boundary, ``checkpoint`` marks a value that reverse-mode
differentiation may recompute instead of keeping.
"""

from __future__ import annotations

import numpy as np

from ._common import identity_rel
from .registry import OpPattern, make_call, register_gradient, register_op


def _identity_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.identity(inputs[0])


for _name, _doc in (
        ("annotation.stop_fusion", "Identity; FuseOps does not fuse across it (a boundary)."),
        ("annotation.checkpoint", "Identity; marks a value gradients may recompute.")):
    register_op(_name, num_inputs=1, arguments=("data",), rel=identity_rel(_name),
                ref=lambda args, attrs, out_type: np.asarray(args[0]),
                compute=_identity_compute, pattern=OpPattern.OPAQUE, doc=_doc, level=10)
    register_gradient(_name, lambda orig, g: [g])


def stop_fusion(data):
    """``data`` unchanged, as a fusion boundary (``annotation.stop_fusion``)."""
    return make_call("annotation.stop_fusion", [data])


def checkpoint(data):
    """``data`` unchanged, marked for recomputation in gradients (``annotation.checkpoint``)."""
    return make_call("annotation.checkpoint", [data])


__all__ = ["stop_fusion", "checkpoint"]

"""``relay.qnn.transform``: ``CanonicalizeOps`` and ``Legalize`` (tvm.relay 0.19's names).

``CanonicalizeOps`` rewrites every qnn operator into ordinary Relay integer arithmetic
(:mod:`relay_tvm.qnn.canonicalize`); ``relay.build``, the VM compiler and
``relay.optimize`` run ``Legalize`` then ``CanonicalizeOps`` first whenever a module calls a
qnn operator (at every opt level), so qnn programs build without further steps. The
interpreter runs the qnn operators' NumPy reference kernels directly.
"""

from __future__ import annotations

from ..transform._rewrite import Rewriter, called_ops
from ..transform.legalize import legalize
from ..transform.pass_infra import FunctionPass, PassInfo, Sequential
from .canonicalize import RULES


class _Canonicalize(Rewriter):
    def post_call(self, orig, new):
        op = getattr(new.op, "name", None)
        rule = RULES.get(op) if isinstance(op, str) else None
        if rule is None:
            return new
        return rule(new, orig)


def has_qnn(func) -> bool:
    return any(name.startswith("qnn.") for name in called_ops(func))


def canonicalize_qnn(func):
    """``func`` (typed) with every qnn call replaced by integer Relay arithmetic."""
    if not has_qnn(func):
        return func
    return _Canonicalize().rewrite(func)


def CanonicalizeOps():  # noqa: N802 - Relay's name
    """Rewrite the qnn operators into ordinary Relay operators (opt level 0; needs typed
    input)."""
    return FunctionPass(lambda f, m, c: canonicalize_qnn(f),
                        PassInfo(0, "QnnCanonicalizeOps", ("InferType",)))


def Legalize():  # noqa: N802 - Relay's name
    """Run the ``"FTVMQnnLegalize"`` hooks registered with
    ``relay.op.register_op_attr(name, "FTVMQnnLegalize", f)`` (``f(attrs, inputs, types)``
    returns a replacement or None). relay_tvm's qnn operators need no target legalization
    (their canonical forms run on every target), so only user hooks apply."""
    return FunctionPass(lambda f, m, c: legalize(f, m, "FTVMQnnLegalize"),
                        PassInfo(0, "QnnLegalize", ("InferType",)))


def qnn_lowering() -> Sequential:
    """Legalize then CanonicalizeOps then InferType: what the build pipeline runs first."""
    from ..transform import InferType

    return Sequential([Legalize(), CanonicalizeOps(), InferType()], opt_level=0,
                      name="QnnLowering")


__all__ = ["CanonicalizeOps", "Legalize", "canonicalize_qnn", "has_qnn", "qnn_lowering"]

"""DefuseOps: the inverse of FuseOps (tvm.relay 0.19's ``relay.transform.DefuseOps``): every
call of a function literal (FuseOps's primitive functions) is replaced by the function's body
with its parameters replaced by the call's arguments, giving back the unfused dataflow
program (opt level 3)."""

from __future__ import annotations

from ..ir.expr import Function
from ..ir.functor import Rewriter, substitute
from .pass_infra import FunctionPass, PassInfo


class _Defuse(Rewriter):
    enter_primitive = True  # nested fused functions are defused too

    def post_call(self, orig, new):
        f = new.op
        if type(f) is not Function:
            return new
        return substitute(f.body, dict(zip(f.params, new.args)))


def defuse_ops(func: Function) -> Function:
    """DefuseOps on one function (see the module docstring)."""
    body = _Defuse().rewrite(func.body)
    if body is func.body:
        return func
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs, func.span)


def DefuseOps():  # noqa: N802 - Relay's name
    """Inline the calls of (fused) function literals (opt level 3)."""
    return FunctionPass(lambda f, m, c: defuse_ops(f), PassInfo(3, "DefuseOps", ("InferType",)))


__all__ = ["DefuseOps", "defuse_ops"]

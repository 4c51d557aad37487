"""``debug``: the identity that calls a Python function with the value it passes on
(tvm.relay.op.debug), for looking inside a running program.

Only the reference interpreter runs the callback (it has no compiled kernel: ``relay.build``
reports it as an operator without a compute); the value is handed on unchanged.
"""

from __future__ import annotations

from ..ir.attrs import AttrField as F
from ._common import identity_rel
from .registry import OpPattern, make_call, register_op


def _debug_ref(args, attrs, out_type):
    fn = attrs.debug_func if attrs is not None else None
    if fn is not None:
        import tvm

        fn(tvm.runtime.tensor(args[0]))
    return args[0]


register_op(
    "debug",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.DebugAttrs", [F("debug_func", "any", None)]),
    rel=identity_rel("debug"),
    ref=_debug_ref,
    pattern=OpPattern.OPAQUE,
    doc="Identity; the interpreter calls debug_func(value) as the value passes.",
    level=10,
)


def debug(expr, debug_func=None):
    """``expr``, after ``debug_func(value)`` is called with its value (a tvm Tensor) when the
    reference interpreter evaluates it.

    Args:
        expr: a tensor expression.
        debug_func: a Python callable, or None (then ``debug`` is only the identity).
    """
    return make_call("debug", [expr], debug_func=debug_func)


__all__ = ["debug"]

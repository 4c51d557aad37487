"""tvm.relay.analysis ``all_dtypes`` and ``check_constant`` (tvm.relay 0.19's semantics)."""

from __future__ import annotations

from ..ir.expr import Constant, Tuple
from ..ir.functor import TypeVisitor, post_order


class _DtypeCollector(TypeVisitor):
    def __init__(self):
        super().__init__()
        self.dtypes = set()

    def visit_tensor_type(self, t):
        self.dtypes.add(str(t.dtype))


def all_dtypes(expr) -> set:
    """The dtypes of every tensor type in the checked types of ``expr``'s sub-expressions
    (variables, constants, calls, ..., nested in tuple and function types too), e.g.
    ``{'int8', 'int32'}``.

    Only sub-expressions that type inference has typed count, as in 0.19: run
    ``relay.transform.InferType`` first (an untyped expression gives an empty set).

    Args:
        expr: a Relay expression.

    Returns:
        A set of dtype strings.
    """
    collector = _DtypeCollector()
    for node in post_order(expr):
        t = getattr(node, "_checked_type", None)
        if t is not None:
            collector.visit(t)
    return collector.dtypes


def check_constant(expr) -> bool:
    """Whether ``expr`` is a constant or a tuple (nested to any depth) of constants — the test
    0.19's constant folding applied to operator arguments.

    Args:
        expr: a Relay expression.

    Returns:
        True for ``Constant`` and tuples of them, False otherwise (a call of constants is not
        constant until folded).
    """
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Tuple):
            stack.extend(e.fields)
        elif not isinstance(e, Constant):
            return False
    return True

"""SpanCheck (tvm.relay 0.19's ``relay.SpanCheck``): a pass that fails when a node of a
function has no span (every node a parser or a frontend made should have one)."""

from __future__ import annotations

from ..errors import WellFormedError
from .pass_infra import FunctionPass, PassInfo


def span_check(func) -> None:
    """Raise :class:`WellFormedError` naming the first nodes of ``func`` without a span."""
    from ..ir.expr import Var
    from ..ir.functor import post_order
    from ..op.registry import Op

    missing = [n for n in post_order(func)
               if not isinstance(n, (Op, Var)) and getattr(n, "span", None) is None]
    if missing:
        kinds = ", ".join(type(n).__name__ for n in missing[:5])
        raise WellFormedError(f"SpanCheck: {len(missing)} nodes have no span (first: {kinds})")


def SpanCheck():  # noqa: N802 - Relay's name
    """The SpanCheck pass (opt level 0)."""
    def run(f, mod, ctx):
        span_check(f)
        return f

    return FunctionPass(run, PassInfo(0, "SpanCheck"))


__all__ = ["SpanCheck", "span_check"]

"""EliminateCommonSubexpr: share identical operator calls (opt level 3).

Relay's ``eliminate_common_subexpr.cc``: two calls of one operator with the same attributes and
the same (already shared) arguments compute the same value, so the later one is replaced by the
earlier; likewise two identical tuple-field accesses. Stateful operators (``random.*``) are never
merged; ``fskip(call)`` may exclude more. Arguments are compared by identity after rewriting,
so sharing propagates bottom-up in one pass; constants compare by value.
"""

from __future__ import annotations

from ..ir.expr import Constant, TupleGetItem
from ..op.registry import Op
from ._rewrite import Rewriter
from .pass_infra import FunctionPass, PassInfo


def _key(e):
    if type(e) is Constant:
        d = e.data
        if d.size <= 16:
            return ("const", d.dtype.str, d.shape, d.tobytes())
    return id(e)


class _CSE(Rewriter):
    def __init__(self, fskip=None):
        super().__init__()
        self.fskip = fskip
        self.table: dict = {}
        self.keep = []  # keep keyed nodes alive so ids are not reused

    def post_call(self, orig, new):
        if not isinstance(new.op, Op) or new.op.name.startswith("random."):
            return new
        if self.fskip is not None and self.fskip(new):
            return new
        # an operator call's type_args are its arguments' types (InferType fills them in), so
        # they add nothing to the key, and a rebuilt call without them is the same computation
        key = (new.op.name, new.attrs, tuple(_key(a) for a in new.args))
        try:
            hit = self.table.get(key)
        except TypeError:  # unhashable attribute values: do not merge
            return new
        if hit is not None:
            return hit
        self.table[key] = new
        self.keep.append(new)
        return new

    def post_tuple_getitem(self, orig, new):
        if type(new) is not TupleGetItem:
            return new
        key = ("getitem", id(new.tuple_value), new.index)
        hit = self.table.get(key)
        if hit is not None:
            return hit
        self.table[key] = new
        self.keep.append(new)
        return new


def eliminate_common_subexpr(expr, fskip=None):
    return _CSE(fskip).rewrite(expr)


def EliminateCommonSubexpr(fskip=None):  # noqa: N802 - Relay's name
    """Replace repeated identical operator calls by one shared call (opt level 3)."""

    def run(func, mod, ctx):
        return eliminate_common_subexpr(func, fskip)

    return FunctionPass(run, PassInfo(3, "EliminateCommonSubexpr", ("InferType",)))


__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]

"""``AnnotatedRegionSet``: the regions a program's ``compiler_begin`` / ``compiler_end``
annotations delimit (tvm.relay 0.19's ``relay.analysis.AnnotatedRegionSet``,
annotated_region_set.cc).

Each ``compiler_begin`` opens a region of its target; a node whose (not yet closed) arguments
lie in regions joins them, merging the regions of different arguments into one; a
``compiler_end`` closes a region on its argument and is one of its outputs. A region records
its ``target``, its ``args`` (the ``compiler_begin`` calls, in the order met), ``rets`` (the
``compiler_end`` calls) and ``nodes`` (everything inside, the annotations included).
MergeCompilerRegions and PartitionGraph work from these regions.
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import Call, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem
from ..ir.functor import children
from ..op.registry import Op


class AnnotatedRegion:
    """One region: ``id``, ``target``, ``args`` (begin calls), ``rets`` (end calls), ``nodes``."""

    def __init__(self, rid: int, target: str, func_name: str = "default"):
        self.id, self.target, self.func_name = rid, target, func_name
        self.args: list = []
        self.rets: list = []
        self.nodes: set = set()

    def __repr__(self):
        return (f"AnnotatedRegion(id={self.id}, target={self.target!r}, {len(self.args)} args, "
                f"{len(self.rets)} rets, {len(self.nodes)} nodes)")


def _pre_order_kinds():
    # 0.19's creator joins these to their arguments' regions before visiting the arguments
    return (Let, If, RefCreate, RefRead, RefWrite)


class AnnotatedRegionSet:
    """The regions of ``expr`` delimited by calls of ``region_begin_op`` / ``region_end_op``.

    Args:
        expr: an expression or function holding the annotations.
        region_begin_op: the begin operator (``relay.op.get("annotation.compiler_begin")``).
        region_end_op: the end operator (``relay.op.get("annotation.compiler_end")``).

    Raises:
        RelayError: an end annotation outside every region, or its target differs from the
            region's; a node whose arguments are partly inside regions and partly not.
    """

    def __init__(self, expr, region_begin_op, region_end_op, func_name: str = "default"):
        self.begin_op = _op_name(region_begin_op)
        self.end_op = _op_name(region_end_op)
        self.func_name = func_name
        self.regions: list = []
        self._next_id = 0
        self._build(expr)

    # ---- queries ------------------------------------------------------------------------------
    def __len__(self):
        return len(self.regions)

    def __iter__(self):
        return iter(self.regions)

    def get_region(self, expr):
        """The region holding ``expr``, or None."""
        for r in self.regions:
            if expr in r.nodes:
                return r
        return None

    # ---- construction -------------------------------------------------------------------------
    def make_region(self, target: str) -> AnnotatedRegion:
        r = AnnotatedRegion(self._next_id, target, self.func_name)
        self._next_id += 1
        self.regions.append(r)
        return r

    def merge_regions(self, src: AnnotatedRegion, dest: AnnotatedRegion) -> None:
        """Move ``src`` into ``dest``; an output of one that feeds an input of the other
        becomes internal."""
        if src is dest:
            return
        dest.nodes |= src.nodes
        dest.args.extend(src.args)
        dest.rets.extend(src.rets)
        internal = [b for b in dest.args if b.args[0] in src.nodes]
        for b in internal:
            end = b.args[0]
            dest.rets = [r for r in dest.rets if r is not end]
        dest.args = [b for b in dest.args if not any(b is i for i in internal)]
        self.regions = [r for r in self.regions if r is not src]

    def add_to_region(self, dest: AnnotatedRegion, expr) -> None:
        src = self.get_region(expr)
        if src is not None:
            self.merge_regions(src, dest)
        else:
            dest.nodes.add(expr)

    def _is(self, e, name) -> bool:
        return type(e) is Call and isinstance(e.op, Op) and e.op.name == name

    def _join_args(self, expr, args) -> None:
        open_args = [a for a in args if not self._is(a, self.end_op)]
        region = next((r for r in map(self.get_region, open_args) if r is not None), None)
        for a in open_args:
            r = self.get_region(a)  # afresh: an earlier merge may have moved it
            if (r is None) != (region is None):
                raise RelayError(f"AnnotatedRegionSet: the arguments of a "
                                 f"{type(expr).__name__} are partly inside annotated regions and "
                                 f"partly not (a compiler_begin is missing)")
            if region is not None and r is not region:
                self.merge_regions(r, region)
        if region is not None:
            self.add_to_region(region, expr)

    def _visit(self, e) -> None:
        t = type(e)
        if t is Call:
            is_begin, is_end = self._is(e, self.begin_op), self._is(e, self.end_op)
            if not (is_begin or is_end):
                self._join_args(e, e.args)
            elif is_begin:
                if len(e.args) != 1:
                    raise RelayError("AnnotatedRegionSet: a begin annotation takes one argument")
                r = self.make_region(e.attrs.compiler)
                r.nodes.add(e)
                r.args.append(e)
            else:
                r = self.get_region(e.args[0])
                if r is None:
                    raise RelayError(f"AnnotatedRegionSet: cannot find the region an end "
                                     f"annotation (compiler={e.attrs.compiler!r}) closes")
                if r.target != e.attrs.compiler:
                    raise RelayError(f"AnnotatedRegionSet: end annotation for "
                                     f"{e.attrs.compiler!r} closes a region of {r.target!r}")
                r.nodes.add(e)
                r.rets.append(e)
        elif t is Tuple:
            self._join_args(e, e.fields)
        elif t is TupleGetItem:
            self._join_args(e, [e.tuple_value])
        elif t is Let:
            self._join_args(e, [e.var, e.value, e.body])
        elif t is If:
            self._join_args(e, [e.cond, e.true_branch, e.false_branch])
        elif t in (RefCreate, RefRead):
            self._join_args(e, [e.value if t is RefCreate else e.ref])
        elif t is RefWrite:
            self._join_args(e, [e.ref])

    def _build(self, expr) -> None:
        pre = _pre_order_kinds()
        seen = set()
        stack = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if ready:
                self._visit(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            if type(node) in pre:
                self._visit(node)
            else:
                stack.append((node, True))
            for c in reversed(children(node)):
                if c not in seen:
                    stack.append((c, False))


def _op_name(op) -> str:
    if isinstance(op, str):
        return op
    name = getattr(op, "name", None)
    if not isinstance(name, str):
        raise RelayError(f"AnnotatedRegionSet: expected an operator, got {op!r}")
    return name


__all__ = ["AnnotatedRegion", "AnnotatedRegionSet"]

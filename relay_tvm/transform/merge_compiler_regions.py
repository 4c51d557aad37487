"""MergeCompilerRegions: join neighbouring regions of the same external compiler into one
(tvm.relay 0.19's ``relay.transform.MergeCompilerRegions``, merge_compiler_regions.cc; the
algorithm of the "improved graph partitioning" RFC).

Regions (:class:`relay_tvm.analysis.AnnotatedRegionSet`) are visited from the inputs on; a
region absorbs each parent region (one feeding one of its ``compiler_begin`` s) of the same
target, unless that would make the merged region depend on itself through a region of another
target: every region carries the set of regions it must stay apart from (parents of other
targets, and their own restrictions, inherited through control flow too). Afterwards, a
``compiler_begin(compiler_end(x))`` pair inside one region is removed.
"""

from __future__ import annotations

from ..analysis.annotated_regions import AnnotatedRegionSet
from ..ir.expr import Call, If
from ..ir.functor import Rewriter, children
from .annotate_target import BEGIN, END, is_annotation
from .pass_infra import FunctionPass, PassInfo


class _Merger:
    def __init__(self, regions: AnnotatedRegionSet):
        self.regions = regions
        self.merged: set = set()  # region ids done
        self.restrict: dict = {}  # region id -> ids of regions it must not merge with
        self.seen: set = set()

    def visit(self, expr) -> None:
        """Post-order over ``expr`` (each node once), handling every end annotation."""
        stack = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if ready:
                if is_annotation(node, END):
                    self.on_end(node)
                continue
            if node in self.seen:
                continue
            self.seen.add(node)
            stack.append((node, True))
            for c in reversed(children(node)):
                if c not in self.seen:
                    stack.append((c, False))

    def control_flow_regions(self, e, out: list) -> None:
        """The regions of an ``if``'s parts that restrict a region fed by it."""
        stack = [e]
        while stack:
            n = stack.pop()
            if type(n) is not If:
                continue
            for part in (n.false_branch, n.true_branch, n.cond):
                r = self.regions.get_region(part)
                if r is not None:
                    out.append(r)
                else:
                    stack.append(part)

    def on_end(self, end: Call) -> None:
        region = self.regions.get_region(end)
        if region is None or region.id in self.merged:
            return
        for begin in list(region.args):
            parent = self.regions.get_region(begin.args[0])
            if parent is not None and parent.id not in self.merged:
                self.visit(begin.args[0])
        mergeable, correlated = [], []
        for begin in region.args:
            parent = self.regions.get_region(begin.args[0])
            if parent is not None:
                if not any(parent is m for m in mergeable):
                    mergeable.append(parent)
                correlated.append(parent)
            else:
                self.control_flow_regions(begin.args[0], correlated)
        mine = self.restrict.setdefault(region.id, set())
        for parent in correlated:
            mine |= self.restrict.get(parent.id, set())
        for parent in mergeable:
            if parent.target != end.attrs.compiler:
                mine.add(parent.id)
                continue
            if parent.id in mine:
                continue
            self.regions.merge_regions(parent, region)
            for r in self.regions:
                rs = self.restrict.setdefault(r.id, set())
                if parent.id in rs:
                    rs.discard(parent.id)
                    rs.add(region.id)
        self.merged.add(region.id)


class _DropInternal(Rewriter):
    def __init__(self, regions):
        super().__init__()
        self.regions = regions

    def post_call(self, orig, new):
        if is_annotation(orig, BEGIN) and is_annotation(orig.args[0], END):
            r1 = self.regions.get_region(orig)
            if r1 is not None and r1 is self.regions.get_region(orig.args[0]):
                return new.args[0].args[0]
        return new


def merge_compiler_regions(expr):
    """MergeCompilerRegions on one expression or function (see the module docstring)."""
    from ..op.registry import get

    regions = AnnotatedRegionSet(expr, get(BEGIN), get(END))
    _Merger(regions).visit(expr)
    return _DropInternal(regions).rewrite(expr)


def MergeCompilerRegions():  # noqa: N802 - Relay's name
    """Merge adjacent regions of the same target made by AnnotateTarget (opt level 0)."""
    return FunctionPass(lambda f, m, c: merge_compiler_regions(f),
                        PassInfo(0, "MergeCompilerRegions", ("InferType",)))


__all__ = ["MergeCompilerRegions", "merge_compiler_regions"]

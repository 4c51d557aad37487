"""MergeComposite (tvm.relay 0.19's ``transform.MergeComposite``): wrap each match of a named
dataflow pattern into a function with attribute ``Composite`` = the name (and
``PartitionedFromPattern``), called where the match was. Patterns are applied in table order,
so earlier (larger) patterns win."""

from __future__ import annotations

from ..errors import RelayError
from .pass_infra import FunctionPass, PassInfo


def merge_composite(func, pattern_table):
    """``func`` with each pattern of ``pattern_table`` (``(name, pattern)`` or ``(name,
    pattern, check)`` entries) partitioned into composite functions."""
    from ..dataflow_pattern import partition

    body = func.body
    for entry in pattern_table:
        if len(entry) not in (2, 3):
            raise RelayError("MergeComposite: each pattern table entry is (name, pattern) or "
                             f"(name, pattern, check), got {len(entry)} items")
        name, pattern = entry[0], entry[1]
        check = entry[2] if len(entry) == 3 else None
        body = partition(pattern, body, {"Composite": name}, check)
    if body is func.body:
        return func
    from ..ir.expr import Function

    return Function(func.params, body, func.ret_type, func.type_params, func.attrs, func.span)


def MergeComposite(pattern_table):  # noqa: N802 - Relay's name
    """The MergeComposite pass (opt level 0) over every non-primitive function."""
    table = list(pattern_table)
    return FunctionPass(lambda f, m, c: merge_composite(f, table),
                        PassInfo(0, "MergeComposite", ("InferType",)))


__all__ = ["MergeComposite", "merge_composite"]

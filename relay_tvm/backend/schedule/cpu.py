"""CPU (LLVM) schedule rules, written with ``tvm.s_tir.Schedule``.

Rules are chosen by the anchor operator's ``schedule`` name, then by its fusion pattern kind.
"""

from __future__ import annotations

from . import generic

_BY_NAME: dict = {}


def register(name: str):
    def deco(fn):
        _BY_NAME[name] = fn
        return fn

    return deco


def select_rule(anchor):
    """``(rule function, rule name)`` for the anchor call, or None for the generic fallback."""
    if anchor is None:
        return None
    op = anchor.op
    if op.schedule and op.schedule in _BY_NAME:
        return _BY_NAME[op.schedule], op.schedule
    return None


__all__ = ["select_rule", "register"]

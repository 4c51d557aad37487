"""Schedules for lowered kernels, chosen in this order (as Relay's op strategy did, with
meta-schedule's database in front):

1. a tuning database (``tvm.s_tir.meta_schedule.Database``) holding a record for the kernel;
2. the target's schedule rule for the anchor operator's ``schedule`` name (``"conv2d"``,
   ``"dense"``, ...) or its fusion pattern kind (``cpu.py``);
3. the generic fallback (``generic.py``).

A rule that raises is skipped (with the reason kept for ``debug_schedule``) and the next one is
used, so a kernel always gets a correct schedule.
"""

from __future__ import annotations

from . import generic

LAST_ERRORS: list = []  # (kernel name, rule, error) of rules that failed, newest last (<= 100)


def _note(name, rule, err):
    LAST_ERRORS.append((name, rule, err))
    del LAST_ERRORS[:-100]


def _from_database(prim, target, database, name):
    if database is None:
        return None
    import tvm

    mod = tvm.IRModule({"main": prim})
    try:
        sch = database.query_schedule(mod, target, workload_name="main")
    except Exception:
        return None
    if sch is None:
        return None
    return sch.mod["main"]


def schedule_primfunc(prim, anchor, target, database=None, name: str = "", knobs=None):
    """Schedule ``prim`` (a PrimFunc straight from ``te.create_prim_func``).

    Args:
        prim: the PrimFunc.
        anchor: the anchor operator call of the primitive function (or None).
        target: ``tvm.target.Target``.
        database: optional tuning database.
        name: kernel name, for error reports.
        knobs: the template's decisions (``cpu.Knobs``); the analytic defaults when None.

    Returns:
        ``(scheduled PrimFunc, rule name, packs)``: ``packs`` maps kernel input indices to the
        :class:`relay_tvm.backend.lower.Pack` layouts the rule chose for them.
    """
    import tvm

    from .. import target as tgt_mod

    tuned = _from_database(prim, target, database, name)
    if tuned is not None:
        return tuned, "database", {}
    if tgt_mod.is_gpu(target):
        mod = tvm.IRModule({"main": prim})
        try:
            mod = generic.gpu_fallback(mod, target)
            return mod["main"], "dlight", {}
        except Exception as e:
            _note(name, "dlight", e)
            raise
    from . import cpu

    rule = cpu.select_rule(anchor)
    if rule is not None:
        sch = tvm.s_tir.Schedule(prim)
        try:
            rule_fn, rule_name = rule
            packs = rule_fn(sch, anchor, target, knobs if knobs is not None else cpu.Knobs())
            packs = packs or {}
            return sch.mod["main"], rule_name, packs
        except Exception as e:  # a template that does not fit this instance: fall back
            _note(name, rule[1], e)
    sch = tvm.s_tir.Schedule(prim)
    generic.cpu_fallback(sch)
    return sch.mod["main"], "generic", {}


__all__ = ["schedule_primfunc", "LAST_ERRORS"]

"""Schedules for lowered kernels, chosen in this order (as Relay's op strategy did, with
meta-schedule's database in front):

1. a tuning database (``tvm.s_tir.meta_schedule.Database``) holding a record for the kernel:
   its fastest record, which ``relay_tvm.tune`` makes sure includes the untuned schedule's
   time (so a slower tuned record loses); a record of a template (:data:`TEMPLATE_ANNOTATION`)
   re-runs the template with the record's knobs;
2. the target's schedule rule for the anchor operator's ``schedule`` name (``"conv2d"``,
   ``"dense"``, ...) or its fusion pattern kind (``cpu.py``);
3. the generic fallback (``generic.py``).

A rule that raises is skipped (with the reason kept for ``debug_schedule``) and the next one is
used, so a kernel always gets a correct schedule.
"""

from __future__ import annotations

import json

from . import generic

LAST_ERRORS: list = []  # (kernel name, rule, error) of rules that failed, newest last (<= 100)


def _note(name, rule, err):
    LAST_ERRORS.append((name, rule, err))
    del LAST_ERRORS[:-100]


# Root-block annotation of schedules made by a template (or the generic rule) during tuning:
# JSON ``{"rule": name, "knobs": {knob: value}}``. Replaying a trace does not re-run the template's
# Python (its packed weight layouts, the Packs), so applying such a record re-runs the template
# with these knobs fixed instead.
TEMPLATE_ANNOTATION = "relay_tvm.template"


def template_spec(rule: str, knobs: dict, untuned: bool = False) -> str:
    """The :data:`TEMPLATE_ANNOTATION` value of a schedule made by ``rule`` with ``knobs``."""
    spec = {"rule": rule, "knobs": {k: int(v) for k, v in sorted(knobs.items())}}
    if untuned:
        spec["untuned"] = True
    return json.dumps(spec, sort_keys=True)


def record_spec(record) -> dict | None:
    """The template annotation in a tuning record's trace (the last one when annotated more
    than once), or None (a meta_schedule schedule)."""
    spec = None
    for inst in record.trace.insts:
        if inst.kind.name == "Annotate" and inst.attrs and str(inst.attrs[0]) == \
                TEMPLATE_ANNOTATION:
            try:
                spec = json.loads(str(inst.inputs[1]))
            except (ValueError, IndexError):
                spec = None
    return spec


_UNCHECKED = None  # the Schedule subclass of new_schedule, made on first use


def new_schedule(prim):
    """A ``tvm.s_tir.Schedule`` of ``prim`` (a PrimFunc or IRModule) whose primitives skip TVM's
    Python argument type checker (``tvm.s_tir.schedule._type_checker``).

    TVM wraps every schedule primitive in a run-time check of its arguments against the type
    hints (``inspect.signature`` binding and ``typing`` introspection per call); the C++ side
    checks them again when it converts them. The templates make thousands of calls per model:
    the Python check was ~12% of ResNet-50's ``relay.build`` (2.4 of 20 CPU seconds profiled on
    a loaded 2-core Zen 1 VM), a schedule of a small kernel 2.5-3x slower to build. The
    subclass is a plain Python subclass of TVM's class (same traced schedule object, same
    methods, the unwrapped ones); a wrong argument still fails, in the C++ conversion."""
    global _UNCHECKED
    if _UNCHECKED is None:
        import tvm

        base = tvm.s_tir.Schedule
        methods = {name: f.__wrapped__ for name, f in vars(base).items()
                   if callable(f) and hasattr(f, "__wrapped__")}
        _UNCHECKED = type("UncheckedSchedule", (base,), {"__slots__": (), "__module__": __name__,
                                                          **methods})
    return _UNCHECKED(prim)


def untuned_schedule(prim, anchor, target, name: str = "", knobs=None):
    """The schedule a CPU kernel gets without a database: the target's template rule for the
    anchor (with ``knobs``, the analytic defaults when None), else the generic rule.

    Returns:
        ``(tvm.s_tir.Schedule, rule name, packs, cpu.Knobs or None)``.
    """
    from . import cpu

    rule = cpu.select_rule(anchor)
    if rule is not None:
        rule_fn, rule_name = rule
        sch = new_schedule(prim)
        k = knobs if knobs is not None else cpu.Knobs()
        try:
            packs = rule_fn(sch, anchor, target, k) or {}
            return sch, rule_name, packs, k
        except Exception as e:  # a template that does not fit this instance: fall back
            _note(name, rule_name, e)
    sch = new_schedule(prim)
    generic.cpu_fallback(sch)
    return sch, "generic", {}, None


# Why a database gave a kernel no schedule (``LoweredFunc.database_miss``): it has no record
# although tuning would have made one, or tuning skips such kernels (no reduction to tune:
# copies and elementwise kernels). Other values say why a record was found but not applied.
NO_RECORD = "no record"
NOT_TUNED = "not tuned (no reduction)"


def has_reduction(prim) -> bool:
    """Whether the (unscheduled) PrimFunc has a reduction block (convolution, matmul, pooling,
    softmax ...): the kernels tuning speeds up; copies and elementwise kernels are not tuned."""
    sch = new_schedule(prim)
    try:
        root = sch.get_sblock("root")
    except Exception:  # noqa: BLE001 - TVM's ScheduleError: a hand-written kernel (argwhere's)
        return False  # has no block to schedule, so nothing tuning could change either
    blocks = sch.get_child_blocks(root)
    return any("R" in generic.iter_kinds(sch, b) for b in blocks)


def _from_database(prim, anchor, target, database, name):
    """``((PrimFunc, rule, packs), "")`` of the best record for ``prim`` in ``database``, or
    ``(None, why)`` (:data:`NO_RECORD`, :data:`NOT_TUNED` or why the record was not applied;
    ``why`` is "" without a database).

    A record made by a template (annotated, see :data:`TEMPLATE_ANNOTATION`) is applied by
    re-running that template with the record's knobs, which also gives its weight packs; a
    record whose template no longer takes those knobs is skipped (noted in LAST_ERRORS)."""
    if database is None:
        return None, ""
    import tvm

    mod = tvm.IRModule({"main": prim})
    try:
        record = database.query_tuning_record(mod, target, workload_name="main")
    except Exception as e:
        _note(name, "database", e)
        return None, f"database lookup failed: {e}"
    if record is None:
        return None, NO_RECORD if has_reduction(prim) else NOT_TUNED
    other = _other_target(record.target, target)
    if other:
        _note(name, "database", f"record tuned for another target ({other})")
        _warn_other_target(other)
        return None, f"record tuned for another target ({other})"
    spec = record_spec(record)
    if spec is not None and not tgt_mod_is_gpu(target):
        from . import cpu

        # the untuned schedule's own record (tune_relay commits one per kernel) won the
        # measurement: named apart, so reports count only records chosen over it
        mark = ":untuned" if spec.get("untuned") else ""
        if spec.get("rule") == "generic":
            sch = new_schedule(prim)
            generic.cpu_fallback(sch)
            return (sch.mod["main"], "database:generic" + mark, {}), ""
        rule = cpu.select_rule(anchor)
        if rule is None or rule[1] != spec.get("rule"):
            why = (f"record of template {spec.get('rule')!r}, kernel's is "
                   f"{rule[1] if rule else None!r}")
            _note(name, "database", why)
            return None, why
        # the untuned schedule's record stands for "the template's defaults": today's (a
        # database tuned by an older relay_tvm keeps the defaults of then)
        fixed = {} if spec.get("untuned") else dict(spec.get("knobs", {}))
        knobs = cpu.Knobs(fixed=fixed)
        sch = new_schedule(prim)
        try:
            packs = rule[0](sch, anchor, target, knobs) or {}
        except Exception as e:
            _note(name, "database", e)
            return None, f"template {rule[1]} failed on the record's knobs: {e}"
        if fixed and knobs.chosen != fixed:
            why = f"template {rule[1]} now picks {knobs.chosen}, the record has {fixed}"
            _note(name, "database", why)
            return None, why
        return (sch.mod["main"], f"database:{rule[1]}{mark}", packs), ""
    try:
        sch = database.query_schedule(mod, target, workload_name="main")
    except Exception as e:
        _note(name, "database", e)
        return None, f"replaying the record failed: {e}"
    if sch is None:
        return None, NO_RECORD
    return (sch.mod["main"], "database", {}), ""


_CPU_ATTRS = ("mtriple", "mcpu", "mattr", "arch")


def _other_target(rec_target, target) -> str:
    """How a record's target differs from the build's in what decides the code (kind, triple,
    CPU, features, GPU arch), as ``"mcpu znver5, not haswell"``; empty when they agree (a
    record without a target counts as agreeing)."""
    if rec_target is None:
        return ""
    if rec_target.kind.name != target.kind.name:
        return f"kind {rec_target.kind.name}, not {target.kind.name}"
    for key in _CPU_ATTRS:
        a, b = rec_target.attrs.get(key), target.attrs.get(key)
        a = sorted(str(x) for x in a) if key == "mattr" and a is not None else a
        b = sorted(str(x) for x in b) if key == "mattr" and b is not None else b
        if a is not None and b is not None and str(a) != str(b):
            return f"{key} {a}, not {b}"
    return ""


_WARNED_TARGETS: set = set()


def _warn_other_target(why: str) -> None:
    """One warning per difference and build: a database tuned on another CPU is not applied
    (its tiles were sized and timed for that CPU's registers and caches)."""
    if why not in _WARNED_TARGETS:
        import warnings

        _WARNED_TARGETS.add(why)
        warnings.warn(f"tuning database: its records were tuned for another target ({why}); "
                      f"they are not applied, those kernels get their untuned schedules",
                      stacklevel=2)


def tgt_mod_is_gpu(target) -> bool:
    from .. import target as tgt_mod

    return tgt_mod.is_gpu(target)


def _as_database(value, what: str):
    """``value`` as a meta_schedule ``Database``: a work directory path is loaded, anything
    else that is not a ``Database`` is refused (it would otherwise build untuned silently)."""
    import os

    from tvm.s_tir.meta_schedule import Database

    from ...errors import TuningError

    if isinstance(value, Database):
        return value
    if isinstance(value, (str, os.PathLike)):
        from ...tune.workdir import load_database

        return load_database(os.fspath(value))
    raise TuningError(f"{what}: expected a tvm.s_tir.meta_schedule Database or the path of a "
                      f"tuning work directory (str or os.PathLike), got "
                      f"{type(value).__name__} {value!r:.80}")


def database_in_scope(database=None):
    """The tuning database a build applies: ``database`` when given, else the ``PassContext``
    config ``"relay.backend.tuning_database"``, else -- when the config
    ``"relay.backend.use_meta_schedule"`` is true, tvm.relay 0.19's idiom ``with database,
    PassContext(config={"relay.backend.use_meta_schedule": True})`` -- the meta_schedule
    ``Database`` of the enclosing ``with`` (a warning when there is none).

    ``database`` (and the config value) may also be a tuning work directory (``str`` or
    ``os.PathLike``, the ``--work-dir`` of ``relay-tvm tune``), opened with
    :func:`relay_tvm.tune.load_database`.

    Each call (one per build) lets the "tuned for another target" warning be given again.

    Raises:
        TuningError: the work directory does not exist or holds no database, or the value is
            neither a meta_schedule ``Database``, a path nor None.
    """
    _WARNED_TARGETS.clear()
    if database is not None:
        return _as_database(database, "build: database")
    from ...transform.pass_infra import PassContext, config_value

    config = PassContext.current().config
    database = config.get("relay.backend.tuning_database")
    if database is not None:
        return _as_database(database,
                            "PassContext config 'relay.backend.tuning_database'")
    if config_value(config, "relay.backend.use_meta_schedule", False):
        from tvm.s_tir.meta_schedule import Database

        database = Database.current()
        if database is None:
            import warnings

            warnings.warn("relay.backend.use_meta_schedule is set but no meta_schedule Database "
                          "is in scope (with database, PassContext(...)): building untuned",
                          stacklevel=3)
    return database


def schedule_primfunc(prim, anchor, target, database=None, name: str = "", knobs=None,
                      misses: dict | None = None):
    """Schedule ``prim`` (a PrimFunc straight from ``te.create_prim_func``).

    Args:
        prim: the PrimFunc.
        anchor: the anchor operator call of the primitive function (or None).
        target: ``tvm.target.Target``.
        database: optional tuning database.
        name: kernel name, for error reports.
        knobs: the template's decisions (``cpu.Knobs``); the analytic defaults when None.
        misses: when given and ``database`` gives the kernel no schedule, ``misses[name]`` is
            set to why (:data:`NO_RECORD`, :data:`NOT_TUNED`, or why its record was not
            applied), for the build's tuning report.

    Returns:
        ``(scheduled PrimFunc, rule name, packs)``: ``packs`` maps kernel input indices to the
        :class:`relay_tvm.backend.lower.Pack` layouts the rule chose for them. The rule name is
        ``"database"`` for a meta_schedule record, ``"database:<rule>"`` for a tuned template
        record and ``"database:<rule>:untuned"`` for the untuned schedule's record (the
        template defaults or the generic rule, measured fastest).
    """
    tuned, why = _from_database(prim, anchor, target, database, name)
    if tuned is not None:
        return tuned
    if why and misses is not None:
        misses[name] = why
    if tgt_mod_is_gpu(target):
        import tvm

        mod = tvm.IRModule({"main": prim})
        try:
            mod = generic.gpu_fallback(mod, target)
            return mod["main"], "dlight", {}
        except Exception as e:
            _note(name, "dlight", e)
            raise
    sch, rule_name, packs, _ = untuned_schedule(prim, anchor, target, name, knobs)
    return sch.mod["main"], rule_name, packs


__all__ = ["schedule_primfunc", "untuned_schedule", "database_in_scope", "record_spec",
           "template_spec", "has_reduction", "TEMPLATE_ANNOTATION", "LAST_ERRORS", "NO_RECORD",
           "NOT_TUNED"]

"""Design spaces: relay_tvm's CPU templates as meta_schedule ``ScheduleFn`` spaces.

A template (``relay_tvm.backend.schedule.cpu``) asks ``knobs.pick(name, candidates, default)``
for each decision (tile sizes, unroll and packing widths). Its knobs also fix Python-side
choices -- the packed weight layout (a ``Pack``) the graph prepares at build time -- which a
replayed trace cannot redo. So the space is a list of concrete schedules, one per knob
assignment: the analytic defaults first, then every other assignment when there are at most
``max_points``, else a seeded random sample of distinct ones. Each schedule carries its
assignment as a root-block annotation (``relay_tvm.template``); building with a record re-runs
the template with those knobs fixed (``backend.schedule._from_database``), which gives both the
schedule and its packs. The search strategy (evolutionary, with the cost model ranking
candidates) picks which assignments to measure.

Kernels without a template (or whose template does not fit) use meta_schedule's default space
for the target (its rules, without its weight-layout rewrite: ``tuner.default_space``); so do
template kernels once every knob assignment is measured.
"""

from __future__ import annotations

import itertools
import random


def knob_space(task, target):
    """The template rule and knob space of a task.

    Returns:
        ``(rule_name, [(knob, candidates, default)])`` or None when no template schedules the
        kernel (the generic rule would).
    """
    from ..backend.schedule import untuned_schedule

    anchor = task.anchor_call
    _, rule, _, knobs = untuned_schedule(task.mod["main"], anchor, target, task.name)
    if knobs is None:
        return None
    seen, space = set(), []
    for name, cands, default in knobs.space:
        if name not in seen:
            seen.add(name)
            space.append((name, list(cands), int(default)))
    return rule, space


def assignments(space, max_points: int = 48, seed: int = 0) -> list:
    """Knob assignments to try: the defaults first, then all others (at most ``max_points``
    in all; a seeded random sample of distinct ones when the product is larger)."""
    default = {n: d for n, _, d in space}
    names = [n for n, _, _ in space]
    total = 1
    for _, c, _ in space:
        total *= len(c)
    out = [default]
    if total <= max_points:
        for combo in itertools.product(*[c for _, c, _ in space]):
            a = dict(zip(names, combo))
            if a != default:
                out.append(a)
        return out
    rng = random.Random(seed)
    seen = {tuple(default[n] for n in names)}
    tries = 0
    while len(out) < max_points and tries < 50 * max_points:
        tries += 1
        combo = tuple(rng.choice(c) for _, c, _ in space)
        if combo not in seen:
            seen.add(combo)
            out.append(dict(zip(names, combo)))
    return out


def apply_template(sch, task, target, fixed: dict, untuned: bool = False):
    """Run the task's template on ``sch`` with ``fixed`` knobs and annotate the root block with
    the knobs it chose. Returns the chosen knobs; raises what the template raises."""
    from ..backend.schedule import TEMPLATE_ANNOTATION, cpu, template_spec

    anchor = task.anchor_call
    rule_fn, rule_name = cpu.select_rule(anchor)
    knobs = cpu.Knobs(fixed=fixed)
    rule_fn(sch, anchor, target, knobs)
    if untuned or knobs.chosen == fixed:
        sch.annotate(sch.get_sblock("root"), TEMPLATE_ANNOTATION,
                     template_spec(rule_name, knobs.chosen, untuned))
    else:  # the template did not consult some knob: the same as another assignment
        raise ValueError(f"knobs {fixed} give {knobs.chosen}")
    return knobs.chosen


def measured_knobs(database, task) -> list:
    """Knob assignments of ``task``'s template already measured in ``database``."""
    from ..backend.schedule import record_spec

    if not database.has_workload(task.mod):
        return []
    wkl = database.commit_workload(task.mod)
    out = []
    for rec in database.get_top_k(wkl, 1 << 30):
        spec = record_spec(rec)
        if spec is not None:
            out.append(spec.get("knobs", {}))
    return out


def template_space(task, target, database=None, max_points: int = 48, seed: int = 0):
    """The task's template as a meta_schedule ``ScheduleFn`` space.

    The points are the knob assignments not measured yet in ``database`` (the untuned defaults
    are measured separately, so they are never a point). The space generator applies no
    meta_schedule schedule rules, postprocessors or mutators: each point is a finished
    template schedule.

    Returns:
        ``(space, number of points)``, or None when no template schedules the task.
    """
    from tvm.s_tir.meta_schedule.space_generator import ScheduleFn

    found = knob_space(task, target)
    if found is None or not found[1]:
        return None
    _, space = found
    done = measured_knobs(database, task) if database is not None else []
    # a larger space is sampled afresh (another seed) once its sample is measured
    points = [p for p in assignments(space, max_points + len(done), seed + len(done))[1:]
              if p not in done][:max_points]

    def fn(sch):
        out = []
        for fixed in points:
            s = sch.copy()
            try:
                apply_template(s, task, target, fixed)
            except Exception:  # an assignment the instance does not allow: not a point
                continue
            out.append(s)
        return out

    return ScheduleFn(fn, sch_rules=[], postprocs=[], mutator_probs={}), len(points)


def untuned_candidate(task, target):
    """The schedule the untuned build gives ``task`` (template defaults or the generic rule),
    annotated so that a build applying its record re-creates it exactly.

    Returns:
        ``tvm.s_tir.Schedule`` of ``task.mod``.
    """
    import tvm

    from ..backend.schedule import TEMPLATE_ANNOTATION, generic, template_spec, untuned_schedule

    _, rule, _, knobs = untuned_schedule(task.mod["main"], task.anchor_call, target, task.name)
    sch = tvm.s_tir.Schedule(task.mod)
    if knobs is not None:
        apply_template(sch, task, target, dict(knobs.chosen), untuned=True)
    else:
        generic.cpu_fallback(sch)
        sch.annotate(sch.get_sblock("root"), TEMPLATE_ANNOTATION,
                     template_spec("generic", {}, untuned=True))
    return sch


__all__ = ["measured_knobs", "knob_space", "assignments", "template_space", "untuned_candidate",
           "apply_template"]

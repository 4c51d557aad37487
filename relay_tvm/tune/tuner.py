"""``tune_relay`` / ``compile_relay``: tuning a Relay model with ``tvm.s_tir.meta_schedule``.

The names and arguments are tvm.relay 0.19's ``meta_schedule.relay_integration``. The run:

1. extract the distinct kernels (:func:`extract_tasks`, as ``relay.build`` compiles them);
2. open the work directory (:class:`~relay_tvm.tune.workdir.WorkDir`): same model and target,
   or a :class:`~relay_tvm.errors.TuningError`; resuming counts the trials already done;
3. measure every task's untuned schedule (template defaults or the generic rule), the median of
   ``BASELINE_RUNS`` runs, and commit it to the database, so a build never picks a tuned record
   slower than it;
4. tune in two passes over the tasks, largest measured cost first (calls x untuned time from
   step 3; kernels whose untuned schedule did not run go last, by calls x FLOPs), in batches of
   ``num_trials_per_iter`` trials: first each CPU template's knob space
   (:mod:`relay_tvm.tune.space`; small, a few to 48 points), then, with what is left of each
   task's share, meta_schedule's default space for the target (the only space of kernels
   without a template), so a time budget is spent where templates have run out of points;
5. time again the untuned schedule of every task tuned in this run whose best record beats it,
   and keep the lower untuned time (a baseline inflated by load once let a slower record win);
   a task whose record beats it ``EARLY_RECHECK``-fold is timed again at once, so the gains
   printed while tuning are not measured against an inflated baseline.
"""

from __future__ import annotations

import math
import time
import warnings

from ..errors import RelayError, TuningError
from .measure import (
    RPCSettings,
    evaluator_config,
    in_process_builder,
    load_tensor_intrinsics,
    make_runner,
    remove_artifact,
)
from .progress import print_progress
from .workdir import WorkDir, check_work_dir, fingerprint, task_key


def _target(target):
    from ..backend.target import make_target

    try:
        return make_target(target)
    except RelayError as e:
        raise TuningError(f"tuning target {target!r}: {e}") from None
    except Exception as e:  # TVM's own target parser
        raise TuningError(f"tuning target {target!r} is not a target TVM knows: {e}") from None


def check_tunable_kind(target) -> None:
    """Reject a target kind ``tune_relay`` cannot tune (a GPU) before the target is completed:
    completing ``cuda`` asks for an ``-arch``, advice that would only lead to this error.

    Raises:
        TuningError: a target that is not ``llvm``.
    """
    import tvm

    from ..backend.target import parse_target_string

    if isinstance(target, tvm.target.Target):
        kind = target.kind.name
    elif isinstance(target, dict):
        kind = target.get("kind")
    elif isinstance(target, str):
        try:
            kind = parse_target_string(target)["kind"]
        except RelayError:
            return  # a malformed string: make_target says what is wrong with it
    else:
        return
    if kind != "llvm":
        gpu = kind in ("cuda", "rocm", "opencl", "vulkan", "metal", "nvptx", "webgpu")
        why = "GPU tuning is not supported yet" if gpu else f"{kind!r} is not one"
        raise TuningError(f"tuning target {target!r}: relay_tvm.tune measures CPU (llvm) "
                          f"targets; {why}")


def _check_local_runs(tgt, runner) -> None:
    """A local runner can only measure code for this machine's architecture."""
    import platform

    if not (isinstance(runner, str) and runner == "local"):
        return
    triple = str(tgt.attrs.get("mtriple", "") or "")
    arch = triple.split("-")[0].lower()
    host = platform.machine().lower()
    same = {"x86_64": {"x86_64", "amd64"}, "aarch64": {"aarch64", "arm64"}}.get(host, {host})
    if arch and arch not in same:
        raise TuningError(f"tuning target {tgt} builds {arch} code, which this {host} machine "
                          f"cannot run: measure it on a board over TVM RPC (runner="
                          f"RPCSettings(tracker_host, tracker_port, key), or relay-tvm tune "
                          f"--rpc-tracker HOST:PORT --rpc-key KEY)")


def tuning_target(tgt):
    """``tgt`` with ``num-cores`` set (meta_schedule's default CPU space needs it): the cores
    this process may run on."""
    import os

    import tvm

    if tgt.kind.name != "llvm" or "num-cores" in tgt.attrs:
        return tgt
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    conf = dict(tgt.export())
    conf["num-cores"] = cores
    return tvm.target.Target(conf)


def has_reduction(task) -> bool:
    """Whether the kernel has a reduction (convolution, matmul, pooling, softmax ...): the
    kernels tuning can speed up; copies and elementwise kernels keep the generic schedule
    (a build reports them as :data:`~relay_tvm.backend.schedule.NOT_TUNED`, not as missing)."""
    from ..backend.schedule import has_reduction as _has_reduction

    return _has_reduction(task.mod["main"])


def _static_tasks(tasks) -> list:
    """The tasks meta_schedule can measure: kernels of static shapes. A kernel over
    ``relay.Any()`` dimensions failed with a raw FFI TypeError converting its shape (fresh-user
    trial). Kernels whose shapes depend on data (after ``argwhere``) are left untuned with a
    warning; a model with no static kernel at all is a TuningError."""
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    static, dynamic = [], []
    for task in tasks:
        try:
            ArgInfo.from_prim_func(task.mod["main"])  # what measuring a task starts with
            static.append(task)
        except Exception:  # noqa: BLE001 - TVM's FFI TypeError / ValueError
            dynamic.append(task.name)
    if dynamic and not static:
        raise TuningError(
            f"tune_relay: every kernel has dynamic shapes ({', '.join(dynamic)}), and "
            f"meta_schedule tunes kernels of static shapes only: where the shapes come from "
            f"relay.Any() inputs, tune a copy of the model with static input shapes; shapes "
            f"that depend on data (argwhere) cannot be tuned")
    if dynamic:
        warnings.warn(f"tune_relay: kernels {dynamic} have shapes known only at run time and "
                      f"are not tuned (meta_schedule tunes static shapes only)", stacklevel=3)
    return static


def extract_tasks(mod, target, params=None, opt_level: int = 3) -> list:
    """The distinct kernels ``relay.build(mod, target, params)`` compiles at ``opt_level``.

    Args:
        mod: a Relay ``IRModule`` (or ``Function``).
        target: as for ``relay.build``.
        params: ``name -> array`` bound as constants (weights), as ``build`` binds them.
        opt_level: the ``PassContext`` opt level the build will use (fusion depends on it);
            the current context's config and required / disabled passes are kept.

    Returns:
        ``[KernelTask]`` (``name``, ``mod`` = ``IRModule({"main": PrimFunc})`` unscheduled,
        ``weight`` = calls in the model, ``anchor``), in first-call order; each also has
        tvm.relay 0.19's ``ExtractedTask`` names ``task_name``, ``target`` and ``dispatched``.

    Raises:
        TuningError: an unknown target.
    """
    from ..backend.tasks import extract_tasks as _extract

    tgt = _target(target)
    with _pass_context(opt_level):
        return _extract(mod, tgt, params)


def _pass_context(opt_level: int, config=None, disabled_pass=()):
    """A ``PassContext`` at ``opt_level`` that keeps the current one's config, required and
    disabled passes (``relay.AlterOpLayout.winograd``, ``disabled_pass=["FuseOps"]``, ...), so
    the tasks extracted, tuned and compiled are those ``relay.build`` compiles in that context;
    ``config`` entries and ``disabled_pass`` names are added to them."""
    from ..transform.pass_infra import PassContext, check_relay_config, derived_context

    cur = PassContext.current()
    check_relay_config(config or {})  # the current context's config was checked already
    return derived_context(opt_level, {**cur.config, **(config or {})},
                           required_pass=cur.required_pass,
                           disabled_pass=set(cur.disabled_pass) | set(disabled_pass or ()))


def _flops(task) -> float:
    try:
        from tvm.s_tir.analysis import estimate_tir_flops

        return float(estimate_tir_flops(task.mod))
    except Exception:
        return 1.0


def _measure_callback(state):
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

    @derived_object
    class Count(PyMeasureCallback):
        def apply(self, task_scheduler, task_id, measure_candidates, builder_results,
                  runner_results):
            for b, r in zip(builder_results, runner_results):
                state["measured"] += 1
                if b.error_msg is None and r.error_msg is None and r.run_secs:
                    secs = sum(float(s) for s in r.run_secs) / len(r.run_secs)
                    state["best"] = min(state["best"], secs)
                else:
                    state["errors"] += 1
                    state["last_error"] = (b.error_msg or r.error_msg or "")[:300]

    return Count()


_STOP: list = []  # request_stop() was called: end at the next batch boundary


def request_stop() -> None:
    """Ask a running :func:`tune_relay` to stop at the next batch boundary (the CLI calls it
    from its Ctrl-C handler): the work directory is saved and ``KeyboardInterrupt`` raised from
    Python code, never inside meta_schedule's C++ loop (an exception raised there by a signal
    handler can crash the process). Safe to call from a signal handler."""
    _STOP.append(True)


def _check_stop(wd) -> None:
    if _STOP:
        _STOP.clear()
        wd.save()
        raise KeyboardInterrupt("tune_relay: stop requested")


BASELINE_RUNS = 3  # the untuned time is the median of this many runs, so one noisy run
# (another process taking the core) does not set the bar every tuned record is compared with
EARLY_RECHECK = 4  # a record this many times faster than the untuned time: baseline timed again


def _run_untuned(runner, inp):
    """One run of a built candidate: its ``RunnerResult`` (``run_secs``, ``error_msg``)."""
    (fut,) = runner.run([inp])
    return fut.result()


def _baseline_secs(run_once, runs: int = BASELINE_RUNS):
    """Call ``run_once`` ``runs`` times; return ``(secs, None)`` with the ``run_secs`` of the
    median run (by mean time), or ``(None, message)`` at the first run that failed."""
    results = []
    for _ in range(runs):
        res = run_once()
        if res.error_msg is not None or not res.run_secs:
            return None, res.error_msg or "no time measured"
        secs = [float(s) for s in res.run_secs]
        results.append((sum(secs) / len(secs), secs))
    results.sort(key=lambda r: r[0])
    return results[(len(results) - 1) // 2][1], None


def _time_untuned(task, tgt, builder, runner):
    """Build and time ``task``'s untuned schedule: ``(schedule, arg_info, run_secs, None)``
    (the median of ``BASELINE_RUNS`` runs) or ``(None, None, None, why)``."""
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo
    from tvm.s_tir.meta_schedule.builder import BuilderInput
    from tvm.s_tir.meta_schedule.runner import RunnerInput

    from .space import untuned_candidate

    sch = untuned_candidate(task, tgt)
    args = ArgInfo.from_prim_func(sch.mod["main"])
    (built,) = builder.build([BuilderInput(sch.mod, tgt)])
    if built.error_msg is not None:
        return None, None, None, f"the untuned schedule does not build: {built.error_msg[:300]}"
    inp = RunnerInput(built.artifact_path, _device_type(tgt), args)
    try:
        secs, error = _baseline_secs(lambda inp=inp: _run_untuned(runner, inp))
    finally:
        remove_artifact(built.artifact_path)
    if secs is None:
        return None, None, None, f"the untuned schedule failed to run: {error[:300]}"
    return sch, args, secs, None


def _commit_untuned(db, task, tgt, sch, args, secs) -> None:
    from tvm.s_tir.meta_schedule.database import TuningRecord

    db.commit_tuning_record(TuningRecord(sch.trace, db.commit_workload(task.mod), secs, tgt,
                                         args))


def _measure_untuned(tasks, tgt, builder, runner, db, wd, progress, labels):
    """Build and run each task's untuned schedule; commit the records (``labels``: see
    :func:`task_labels`)."""
    for task in tasks:
        _check_stop(wd)
        st = wd.task_state(task_key(task))
        sch, args, secs, why = _time_untuned(task, tgt, builder, runner)
        if secs is None:
            warnings.warn(f"tuning {task.name}: {why}", stacklevel=3)
            continue
        _commit_untuned(db, task, tgt, sch, args, secs)
        st["baseline"] = True
        st["untuned_s"] = sum(secs) / len(secs)
        st["best_s"] = min(st.get("best_s", math.inf), st["untuned_s"])
        wd.save()
        if progress is not None:
            progress({"event": "untuned", **labels[task_key(task)], "ms": st["untuned_s"] * 1e3})


def _recheck_untuned(tasks, tgt, builder, runner, db, wd, progress, labels):
    """Time the untuned schedule again of each task in ``tasks`` whose best tuned record beats
    its untuned time, and commit the new time when it is lower.

    The untuned time was measured once, before the search, as the median of
    ``BASELINE_RUNS`` runs; a stretch of load on the machine then (another process on the
    core for all three runs: a fresh-user trial once saw 9.38 ms for a 0.0093 ms kernel) sets
    a bar any tuned record clears, and the build would pick a record slower than the untuned
    schedule. Timed again at the end, in the same conditions as the last tuned records, the
    lower of the two untuned times stands (the database keeps the fastest record of a
    workload). A ``"recheck"`` progress event per task re-timed (``ms``: the new time,
    ``was_ms``: the first)."""
    for task in tasks:
        _check_stop(wd)
        st = wd.task_state(task_key(task))
        old, best = st.get("untuned_s"), st.get("best_s")
        if not st.get("baseline") or old is None or best is None or best >= old:
            continue
        sch, args, secs, why = _time_untuned(task, tgt, builder, runner)
        if secs is None:  # it ran before the search: a failure now says the machine is off
            warnings.warn(f"tuning {task.name}: timing the untuned schedule again: {why}",
                          stacklevel=3)
            continue
        new = sum(secs) / len(secs)
        if new < old:
            _commit_untuned(db, task, tgt, sch, args, secs)
            st.setdefault("untuned_first_s", old)  # a second record of the untuned schedule
            st["untuned_s"] = new
            st["best_s"] = min(best, new)
        wd.save()
        if progress is not None:
            progress({"event": "recheck", **labels[task_key(task)], "ms": new * 1e3,
                      "was_ms": old * 1e3})


def _task_logger(work_dir: str, name: str, verbose: bool):
    """meta_schedule's per-task file logger in ``work_dir/logs``; its console output (a
    table per batch, DEBUG lines of the cost model) only when ``verbose``."""
    import logging

    from tvm.s_tir.meta_schedule.logging import get_loggers_from_work_dir

    # create_loggers sets the console handler's level from this logger's level
    logging.getLogger("tvm.s_tir.meta_schedule").setLevel(
        logging.INFO if verbose else logging.WARNING)
    return get_loggers_from_work_dir(work_dir, [name])[0]


def _device_type(tgt) -> str:
    return "cpu" if tgt.kind.name == "llvm" else tgt.kind.name


def _plan(tasks, max_trials_global, max_trials_per_task, wd=None):
    """Trials per task: an even share of the global budget (capped per task), the kernels that
    cost the model most time first: calls x measured untuned time where ``wd`` has it (a
    FLOP count misjudges kernels: a Winograd convolution counts fewer FLOPs than a direct one
    of the same layer but can run several times longer untuned), then the rest by calls x
    FLOPs."""
    def cost(t):
        secs = wd.task_state(task_key(t)).get("untuned_s") if wd is not None else None
        return (0, -t.weight * secs) if secs is not None else (1, -t.weight * _flops(t))

    order = sorted(tasks, key=cost)
    share = math.ceil(max_trials_global / max(1, len(tasks)))
    if max_trials_per_task is not None:
        share = min(share, max_trials_per_task)
    plan, left = [], max_trials_global
    for t in order:
        n = min(share, left)
        plan.append((t, n))
        left -= n
    return plan


def _check_int(name, v, allow_none=False):
    if v is None and allow_none:
        return
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TuningError(f"{name} must be an integer >= 0, got {v!r}")


def _check_budget(max_trials_global, max_trials_per_task, num_trials_per_iter,
                  time_budget_s) -> None:
    """Reject budgets ``tune_relay`` cannot use (:class:`TuningError`; the target's kind:
    :func:`check_tunable_kind`)."""
    _check_int("max_trials_global", max_trials_global)
    _check_int("max_trials_per_task", max_trials_per_task, allow_none=True)
    if not isinstance(num_trials_per_iter, int) or num_trials_per_iter < 1:
        raise TuningError(f"num_trials_per_iter must be an integer >= 1, got "
                          f"{num_trials_per_iter!r}")
    if time_budget_s is not None and not time_budget_s > 0:
        raise TuningError(f"time_budget_s must be > 0 seconds, got {time_budget_s!r}")


_STRATEGIES = ("evolutionary", "replay-trace", "replay-func")
_COST_MODELS = ("xgb", "random")


def _check_search(strategy, cost_model) -> None:
    """Before anything is measured: a strategy / cost model name meta_schedule knows (an
    unknown one failed after the untuned kernels were measured, in meta_schedule's own
    ValueError; "mlp" needs torch; fresh-user trial).

    Raises:
        TuningError: naming the option and the choices.
    """
    from tvm.s_tir.meta_schedule.cost_model import CostModel

    if not (strategy in _STRATEGIES or not isinstance(strategy, str)):
        raise TuningError(f"tune_relay: strategy={strategy!r} is not one of "
                          f"{', '.join(_STRATEGIES)} (or a meta_schedule SearchStrategy)")
    if isinstance(cost_model, CostModel):
        return
    if cost_model == "mlp":
        raise TuningError("tune_relay: cost_model='mlp' (meta_schedule's MLP model) needs "
                          "PyTorch, which relay_tvm does not install; use 'xgb' or 'random'")
    if cost_model not in _COST_MODELS:
        raise TuningError(f"tune_relay: cost_model={cost_model!r} is not one of "
                          f"{', '.join(_COST_MODELS)} (or a meta_schedule CostModel)")


def _search_strategy(strategy):
    """meta_schedule's search strategy for ``strategy`` (our evolutionary settings for
    ``"evolutionary"``; anything else as meta_schedule takes it)."""
    if strategy != "evolutionary":
        return strategy
    from tvm.s_tir.meta_schedule import SearchStrategy

    return SearchStrategy.create("evolutionary", population_size=64, init_measured_ratio=0.0,
                                 init_min_unmeasured=1, max_fail_count=3)


def _record_batch(st: dict, state: dict, done: int, wd) -> int:
    """Add one measured batch (``state``) to the task state ``st`` and save the manifest;
    returns the task's trials so far."""
    done += state["measured"]
    st["trials"] = done
    st["errors"] = st.get("errors", 0) + state["errors"]
    if state.get("last_error"):
        st["last_error"] = state["last_error"]
    st["best_s"] = min(st.get("best_s", math.inf), state["best"])
    wd.save()
    return done


def _name_tasks(tasks, wd) -> None:
    """Record each task's name and weight in the work dir's manifest (and save it)."""
    for t in tasks:
        st = wd.task_state(task_key(t))
        st["name"], st["weight"] = t.name, t.weight
    wd.save()


def task_shape(task) -> str:
    """The kernel's output shape as ``"1x8x28x28x16"`` (its last parameter), or ""."""
    try:
        p = task.mod["main"].params[-1]
        return "x".join(str(int(d)) for d in p.shape)
    except (AttributeError, TypeError, ValueError, IndexError):
        return ""


def task_inputs(task) -> str:
    """The kernel's input shapes (its parameters before the outputs: data, then weights) as
    ``"1x4x7x7, 8x4x3x3"``, or ""."""
    from ..backend.lower import flatten_type

    try:
        n_out = len(flatten_type(task.func.checked_type.ret_type)) if task.func else 1
        params = task.mod["main"].params[:-n_out]
        return ", ".join("x".join(str(int(d)) for d in p.shape) for p in params)
    except (AttributeError, TypeError, ValueError, IndexError):
        return ""


def task_labels(tasks) -> dict:
    """``task_key -> {"task": name, "shape": output shape}`` as progress events name each task,
    plus ``"inputs"`` (:func:`task_inputs`) for tasks that share name and output shape with
    another task (a convolution of other input channels), which would print alike."""
    labels = {task_key(t): {"task": t.name, "shape": task_shape(t)} for t in tasks}
    seen: dict = {}
    for t in tasks:
        lab = labels[task_key(t)]
        seen.setdefault((lab["task"], lab["shape"]), []).append(lab)
    for t in tasks:
        lab = labels[task_key(t)]
        if len(seen[lab["task"], lab["shape"]]) > 1:
            lab["inputs"] = task_inputs(t)
    return labels


def _report_skips(plan, wd, progress, labels) -> None:
    """A ``"skip"`` progress event per planned task (a resumed run with nothing left)."""
    if progress is None:
        return
    for i, (t, want) in enumerate(plan):
        progress({"event": "skip", "index": i, "tasks": len(plan), **labels[task_key(t)],
                  "trials": wd.task_state(task_key(t)).get("trials", 0), "planned": want})


def default_space(tgt):
    """meta_schedule's default design space for ``tgt`` without its ``RewriteLayout``
    postprocessor: that one changes a weight parameter's layout, which the graph (which feeds
    every kernel its weights in the layout the compute declares) would not follow."""
    from tvm.s_tir.meta_schedule.postproc import Postproc, RewriteLayout
    from tvm.s_tir.meta_schedule.schedule_rule import ApplyCustomRule, ScheduleRule
    from tvm.s_tir.meta_schedule.space_generator import PostOrderApply

    kind = tgt.kind.name
    postprocs = [p for p in Postproc.create(kind) if not isinstance(p, RewriteLayout)]
    # ApplyCustomRule looks up rules registered for a block's `schedule_rule` annotation; none
    # are registered for topi's pooling annotations, and it would print a C++ warning per block
    rules = [r for r in ScheduleRule.create(kind) if not isinstance(r, ApplyCustomRule)]
    return PostOrderApply(sch_rules=rules, postprocs=postprocs, mutator_probs=kind)


class _Search:
    """The measuring loop of :func:`tune_relay`: batches of one task at a time, in two phases.

    ``"template"`` searches the knob assignments of the task's CPU template until each is
    measured (``template_done``); ``"default"`` then spends the rest of the task's trials on
    meta_schedule's default space for the target (kernels without a template only get this
    one), until the share is measured, the space yields nothing new (``exhausted``) or the
    time budget is over (``stopped``). The manifest is saved after every batch."""

    def __init__(self, tasks, tgt, wd, db, builder, runner, cost_model, strategy, seed,
                 per_iter, max_space_points, verbose, progress, deadline):
        from tvm.s_tir.meta_schedule import MeasureCallback

        self.tasks, self.tgt, self.wd, self.db = tasks, tgt, wd, db
        self.labels = task_labels(tasks)
        self.builder, self.runner, self.cost_model = builder, runner, cost_model
        self.strategy, self.seed, self.per_iter = strategy, seed, per_iter
        self.max_space_points, self.verbose, self.progress = max_space_points, verbose, progress
        self.deadline = deadline
        self.callbacks = MeasureCallback.create("default")
        self.models = {}
        self.worked, self.measured, self.stopped = set(), 0, False

    def _emit(self, event, i, n, task, **kw):
        if self.progress is not None:
            self.progress({"event": event, "index": i, "tasks": n,
                           **self.labels[task_key(task)], **kw})

    def _model(self, key):
        from tvm.s_tir.meta_schedule import CostModel

        if isinstance(self.cost_model, CostModel):
            return self.cost_model
        if key not in self.models:  # one per task and space: their features differ
            self.models[key] = CostModel.create(self.cost_model, num_tuning_cores=1)
        return self.models[key]

    def task(self, i, n, task, want, phase):
        from .space import template_space

        st = self.wd.task_state(task_key(task))
        done = int(st.get("trials", 0))
        if done >= want or st.get("exhausted"):
            if phase == "default":  # finished by an earlier run ("skip") or this one's pass 1
                self._emit("task" if task_key(task) in self.worked else "skip", i, n, task,
                           trials=done, planned=want)
            return
        if phase == "template" and st.get("template_done"):
            return
        st.pop("stopped", None)
        while done < want:
            _check_stop(self.wd)
            if self.deadline is not None and time.monotonic() > self.deadline:
                st["stopped"], self.stopped = "time budget", True
                break
            self.worked.add(task_key(task))
            if phase == "template":
                templ = template_space(task, self.tgt, self.db, self.max_space_points,
                                       self.seed or 0)
                if templ is None or templ[1] == 0:  # no template, or every point measured
                    st["template_done"] = True
                    break
                space = templ[0]
            else:
                space = default_space(self.tgt)
            try:
                state = self._batch(task, space, min(self.per_iter, want - done), done,
                                    (task_key(task), phase))
            except Exception as e:  # noqa: BLE001 - TVM raises ValueError/RuntimeError/...
                if phase == "template":
                    raise
                # meta_schedule's own space generation fails on some kernels (TVM checks in
                # its schedule primitives); the task keeps what it has measured
                msg = f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:300]}"
                st["exhausted"], st["default_space_error"] = True, msg
                warnings.warn(f"tuning {task.name}: meta_schedule's default space failed "
                              f"({msg}); keeping the {done} trials measured", stacklevel=2)
                break
            done = _record_batch(st, state, done, self.wd)
            self.measured += state["measured"]
            untuned = st.get("untuned_s")
            if untuned is not None and st["best_s"] * EARLY_RECHECK < untuned \
                    and not st.get("rechecked_early"):
                # a record this much faster than the untuned schedule says more of a baseline
                # timed under load than of the search: timed again now, so the gains printed
                # from here on are not inflated by it (126x on a 7.8 us kernel whose baseline
                # read 7.5 ms; fresh-user trial)
                st["rechecked_early"] = True
                _recheck_untuned([task], self.tgt, self.builder, self.runner, self.db, self.wd,
                                 self.progress, self.labels)
            self._emit("batch", i, n, task, trials=done, planned=want,
                       best_ms=st["best_s"] * 1e3,
                       untuned_ms=st.get("untuned_s", math.nan) * 1e3,
                       gain=_gain(self.wd, self.tasks), space=phase)
            if state["measured"] == 0:  # the space has nothing new to offer
                st["template_done" if phase == "template" else "exhausted"] = True
                break
        self.wd.save()
        if phase == "default":
            self._emit("task", i, n, task, trials=done, planned=want)

    def _batch(self, task, space, n, done, model_key):
        from tvm.s_tir.meta_schedule import TuneContext, tune_tasks

        ctx = TuneContext(mod=task.mod, target=self.tgt, space_generator=space,
                          search_strategy=_search_strategy(self.strategy),
                          task_name=task.name,
                          rand_state=-1 if self.seed is None else self.seed + done,
                          num_threads=1,
                          logger=_task_logger(self.wd.path, task.name, self.verbose)).clone()
        state = {"measured": 0, "best": math.inf, "errors": 0}
        tune_tasks(tasks=[ctx], task_weights=[1.0], work_dir=self.wd.path,
                   max_trials_global=n, max_trials_per_task=n, num_trials_per_iter=n,
                   builder=self.builder, runner=self.runner, database=self.db,
                   cost_model=self._model(model_key),
                   measure_callbacks=[_measure_callback(state), *self.callbacks],
                   task_scheduler="round-robin")
        return state


def tune_relay(mod, params, target, work_dir: str, max_trials_global: int, *,
               max_trials_per_task: int | None = None, num_trials_per_iter: int = 64,
               runner="local", builder=None, cost_model="xgb", strategy="evolutionary",
               seed: int | None = None, time_budget_s: float | None = None,
               opt_level: int = 3, evaluator=None, max_space_points: int = 48,
               progress=print_progress, verbose: bool = False):
    """Tune the kernels of a Relay model; the result is a meta_schedule database in
    ``work_dir`` (tvm.relay 0.19's ``meta_schedule.relay_integration.tune_relay``).

    Args:
        mod: Relay ``IRModule`` with ``main``.
        params: ``name -> array`` (weights) bound as ``build`` binds them.
        target: as for ``relay.build`` (``"llvm"``, ``"llvm -mtriple=aarch64-linux-gnu"``, ...).
        work_dir: directory of the database (created; an existing one of the same model and
            target resumes).
        max_trials_global: measurements in all (the untuned measurement of each task not
            counted). 0 measures nothing (a warning) and returns the database as it is.
        max_trials_per_task: at most this many per task (default: an even share).
        num_trials_per_iter: candidates measured per search iteration (and between progress
            reports and manifest saves).
        runner: ``"local"``, an :class:`~relay_tvm.tune.measure.RPCSettings`, or a
            meta_schedule ``Runner``.
        builder: a meta_schedule ``Builder`` (default: builds in this process).
        cost_model: ``"xgb"``, ``"random"`` or a meta_schedule ``CostModel``.
        strategy: ``"evolutionary"`` or ``"replay-trace"`` (meta_schedule's names).
        seed: random seed of the search (None: random).
        time_budget_s: stop starting new batches after this many seconds.
        opt_level: the ``PassContext`` opt level the model will be built at.
        evaluator: meta_schedule ``EvaluatorConfig`` of each measurement.
        max_space_points: knob assignments per template space.
        progress: called with a dict per event (``"untuned"``, ``"batch"``, ``"task"``,
            ``"skip"``); the default prints ``[tune]`` lines on stderr
            (:func:`~relay_tvm.tune.progress.print_progress`, as ``relay-tvm tune`` does);
            None: silent.
        verbose: also print meta_schedule's own log (always written to ``work_dir/logs``).

    Returns:
        the ``tvm.s_tir.meta_schedule.Database`` (a ``JSONDatabase`` in ``work_dir``); pass it
        to :func:`compile_relay` or ``relay.build(..., database=db)``.

    Raises:
        TuningError: unknown target, negative budget, a work dir of another model or target, a
            corrupted database line, a work dir that cannot be created, an RPC tracker that is
            down or a key nobody serves, a
            local runner for a target of another architecture, an unknown ``strategy`` or
            ``cost_model`` (before anything is measured).
    """
    check_tunable_kind(target)
    tgt = _target(target)
    _check_budget(max_trials_global, max_trials_per_task, num_trials_per_iter,
                  time_budget_s)
    _check_search(strategy, cost_model)
    _check_local_runs(tgt, runner)
    check_work_dir(work_dir)  # before extracting the tasks, which takes a while
    t_start = time.monotonic()
    tasks = _static_tasks(
        [t for t in extract_tasks(mod, tgt, params, opt_level) if has_reduction(t)])
    wd = WorkDir(work_dir, fingerprint(tasks), str(tgt))
    # a build at another opt level compiles other kernels: build() warns naming both levels
    if wd.manifest.get("opt_level") != opt_level:
        wd.manifest["opt_level"] = opt_level
        wd.save()
    tgt = tuning_target(tgt)
    db = wd.database
    wd.forget_lost_tasks(tasks)
    _name_tasks(tasks, wd)
    if max_trials_global == 0 or max_trials_per_task == 0:
        warnings.warn("tune_relay: a budget of 0 trials: nothing measured, the database is "
                      "returned as it is", stacklevel=2)
        return db
    plan = _plan(tasks, max_trials_global, max_trials_per_task)
    todo = [t for t in tasks if not wd.task_state(task_key(t)).get("baseline")]
    left = [t for t, want in plan if int(wd.task_state(task_key(t)).get("trials", 0)) < want
            and not wd.task_state(task_key(t)).get("exhausted")]
    labels = task_labels(tasks)
    if not todo and not left:  # resumed after the last trial: measure nothing
        _report_skips(plan, wd, progress, labels)
        return db
    load_tensor_intrinsics(tgt)
    _STOP.clear()
    builder = builder if builder is not None else in_process_builder()
    runner_obj = make_runner(runner, evaluator or evaluator_config())
    try:
        _measure_untuned(todo, tgt, builder, runner_obj, db, wd, progress, labels)
        # the same shares, now in order of measured cost (a time budget may end the run
        # before the last task: the kernels that take the model longest go first)
        plan = _plan(tasks, max_trials_global, max_trials_per_task, wd)
        search = _Search(tasks, tgt, wd, db, builder, runner_obj, cost_model, strategy, seed,
                         num_trials_per_iter, max_space_points, verbose, progress,
                         None if time_budget_s is None else t_start + time_budget_s)
        # first every template's knobs (cheap, most of the gain), then meta_schedule's
        # default space with what is left of each task's share, largest tasks first
        for phase in ("template", "default"):
            for i, (task, want) in enumerate(plan):
                search.task(i, len(plan), task, want, phase)
        # the untuned schedules of the tasks a tuned record now beats, timed again (a baseline
        # inflated by load would let a slower record win)
        _recheck_untuned([t for t in tasks if task_key(t) in search.worked], tgt, builder,
                         runner_obj, db, wd, progress, labels)
        if search.stopped and search.measured == 0:
            warnings.warn(f"tune_relay: the time budget ({time_budget_s:g} s) ran out before "
                          f"any candidate was measured ({time.monotonic() - t_start:.0f} s went "
                          f"to extracting the kernels and timing their untuned schedules); "
                          f"give more time, or run again: the work dir resumes", stacklevel=2)
        elif search.stopped:
            short = [t for t, want in plan
                     if int(wd.task_state(task_key(t)).get("trials", 0)) < want
                     and not wd.task_state(task_key(t)).get("exhausted")]
            if short:  # the last line said only "tuned in N s: R records" (fresh-user trial)
                warnings.warn(
                    f"tune_relay: the time budget ({time_budget_s:g} s) ran out with "
                    f"{len(short)} of {len(plan)} tasks short of their share of trials "
                    f"({', '.join(t.name for t in short[:5])}"
                    f"{', ...' if len(short) > 5 else ''}); run again to go on: the work dir "
                    f"resumes", stacklevel=2)
    finally:
        if runner_obj is not runner:  # ours: stop its worker processes
            _shutdown(runner_obj)
    return db


def _shutdown(runner) -> None:
    """Stop a meta_schedule runner's worker pool (its workers outlive the process otherwise)."""
    pool = getattr(runner, "pool", None)
    if pool is not None:
        try:
            pool.shutdown(wait=False)
        except Exception as e:  # already down
            warnings.warn(f"tune_relay: stopping the runner's workers: {e}", stacklevel=2)


def _gain(wd, tasks) -> float:
    """Kernel-time speedup: sum of calls x untuned time over calls x best time, from the kernels
    timed alone while tuning (an estimate of the end-to-end gain, which can be smaller)."""
    before = after = 0.0
    for t in tasks:
        st = wd.task_state(task_key(t))
        u = st.get("untuned_s")
        if u is None:
            continue
        before += t.weight * u
        after += t.weight * min(u, st.get("best_s", u))
    return before / after if after > 0 else 1.0


def compile_relay(database, mod, target, params=None, opt_level: int = 3):
    """Build ``mod`` with the schedules of ``database`` (tvm.relay 0.19's ``compile_relay``).

    Args:
        database: a meta_schedule ``Database`` (from :func:`tune_relay`) or a work directory.
        mod, target, params: as for ``relay.build``.
        opt_level: the ``PassContext`` opt level (use the one tuned for).

    Returns:
        the factory module ``relay.build`` returns.
    """
    from ..backend.build_module import build

    # build() opens a work directory's path itself
    with _pass_context(opt_level):
        return build(mod, target=target, params=params, database=database)


__all__ = ["extract_tasks", "tune_relay", "compile_relay", "RPCSettings", "request_stop"]

"""The order ``tune_relay`` spends its budget in: the kernels that take the model longest
first, by calls x the untuned schedule's measured time (what the README promises: "largest
kernels first"), not by a FLOP estimate, which ranks a Winograd convolution low although it
can run longest."""

from __future__ import annotations

import pytest
from test_tune import FAST, _model

from relay_tvm import tune
from relay_tvm.tune.tuner import _flops, _plan, has_reduction
from relay_tvm.tune.workdir import task_key


class _WD:
    def __init__(self, states):
        self.states = states

    def task_state(self, key):
        return self.states.setdefault(key, {})


def test_plan_orders_by_measured_time_then_flops():
    mod, params = _model(16)
    tasks = [t for t in tune.extract_tasks(mod, "llvm", params) if has_reduction(t)]
    assert len(tasks) == 2  # the conv2d and the dense (what tune_relay tunes)
    by_flops = sorted(tasks, key=lambda t: -t.weight * _flops(t))
    assert [t for t, _ in _plan(tasks, 8, None)] == by_flops
    # measured: the task with fewer FLOPs took longer -> it goes first
    slow, fast = by_flops[1], by_flops[0]
    wd = _WD({task_key(slow): {"untuned_s": 0.030}, task_key(fast): {"untuned_s": 0.003}})
    plan = _plan(tasks, 8, None, wd)
    assert [t for t, _ in plan] == [slow, fast] and [n for _, n in plan] == [4, 4]
    # a task without a measurement goes after the measured ones
    wd = _WD({task_key(slow): {"untuned_s": 0.001}})
    assert [t for t, _ in _plan(tasks, 8, None, wd)] == [slow, fast]


@pytest.mark.slow
def test_time_budget_starts_with_the_slowest_kernel(tmp_path):
    mod, params = _model(16)
    events = []
    tune.tune_relay(mod, params, "llvm", str(tmp_path), 4, num_trials_per_iter=2, seed=0,
                    evaluator=FAST, time_budget_s=600, progress=events.append)
    untuned = {e["task"]: e["ms"] for e in events if e["event"] == "untuned"}
    assert len(untuned) == 2
    weights = {t.name: t.weight for t in tune.extract_tasks(mod, "llvm", params)}
    first = next(e["task"] for e in events if e["event"] == "batch")
    assert first == max(untuned, key=lambda n: weights.get(n, 1) * untuned[n])


def test_untuned_baseline_is_the_median_of_three_runs(tmp_path, monkeypatch):
    """One noisy run must not decide the baseline every tuned record is compared with: the
    untuned time is the median of ``BASELINE_RUNS`` runs, in the manifest and the database."""
    import json
    import types

    from relay_tvm.tune import tuner
    from relay_tvm.tune.workdir import MANIFEST

    assert tuner.BASELINE_RUNS == 3
    calls = []

    def run(runner, inp):
        ms = (5.0, 1.0, 9.0)[len(calls) % 3]
        calls.append(ms)
        return types.SimpleNamespace(run_secs=[ms * 1e-3, ms * 1e-3], error_msg=None)

    monkeypatch.setattr(tuner, "_run_untuned", run)
    mod, params = _model(8)
    with pytest.warns(UserWarning, match="ran out before any candidate was measured"):
        db = tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, time_budget_s=1e-3,
                             evaluator=FAST, progress=None)
    assert calls == [5.0, 1.0, 9.0] * 2  # two kernels, three runs each
    with open(tmp_path / MANIFEST) as f:
        states = list(json.load(f)["tasks"].values())
    assert [s["untuned_s"] for s in states] == [pytest.approx(5e-3)] * 2
    recs = db.get_all_tuning_records()
    assert [[float(s) for s in r.run_secs] for r in recs] == [[pytest.approx(5e-3)] * 2] * 2


def test_untuned_baseline_fails_at_the_first_failed_run():
    import types

    from relay_tvm.tune.tuner import _baseline_secs

    runs = iter([types.SimpleNamespace(run_secs=[1e-3], error_msg=None),
                 types.SimpleNamespace(run_secs=None, error_msg="segfault")])
    assert _baseline_secs(lambda: next(runs)) == (None, "segfault")
    runs = iter(types.SimpleNamespace(run_secs=[t], error_msg=None) for t in (3.0, 2.0, 7.0, 1.0))
    assert _baseline_secs(lambda: next(runs), runs=4) == ([2.0], None)


def _tune_with_untuned_times(tmp_path, monkeypatch, secs_of_call):
    """Tune the two-kernel model with the untuned schedule's n-th timing run (n from 1) taking
    ``secs_of_call(n)`` seconds; returns ``(db, events, runs, states, tasks)``: the database,
    the progress events, the number of untuned runs, the manifest's task states and the
    model's tasks."""
    import json
    import types

    from relay_tvm.tune import tuner
    from relay_tvm.tune.workdir import MANIFEST

    calls = []

    def run(runner, inp):
        calls.append(inp)
        return types.SimpleNamespace(run_secs=[secs_of_call(len(calls))], error_msg=None)

    monkeypatch.setattr(tuner, "_run_untuned", run)
    events = []
    mod, params = _model(8)
    db = tune.tune_relay(mod, params, "llvm", str(tmp_path), 4, num_trials_per_iter=2, seed=0,
                         evaluator=FAST, progress=events.append)
    with open(tmp_path / MANIFEST) as f:
        states = list(json.load(f)["tasks"].values())
    return db, events, len(calls), states, tune.extract_tasks(mod, "llvm", params)


def _assert_best_records(db, tasks, secs):
    for task in tasks:
        if has_reduction(task):
            (top,) = db.get_top_k(db.commit_workload(task.mod), 1)
            assert [float(s) for s in top.run_secs] == [pytest.approx(secs)]


def test_untuned_time_inflated_by_load_is_timed_again_at_the_end(tmp_path, monkeypatch):
    """The untuned schedule timed slow before the search (load on the machine for all of the
    median's runs: once 9.38 ms for a 0.0093 ms kernel) must not let a slower tuned record
    win: its time is taken again (as soon as a record beats it EARLY_RECHECK-fold), and the
    lower untuned time is the database's best record of the workload, which the build then
    picks."""
    from relay_tvm.tune import tuner

    runs = tuner.BASELINE_RUNS
    # three loaded runs per kernel, then the true time (1 ns: beats any real tuned record)
    db, events, calls, states, tasks = _tune_with_untuned_times(
        tmp_path, monkeypatch, lambda n: 1.0 if n <= 2 * runs else 1e-9)
    rechecks = [e for e in events if e["event"] == "recheck"]
    assert len(rechecks) == 2 and calls == 4 * runs
    # timed again at the first batch whose best beats the baseline EARLY_RECHECK-fold, before
    # that batch's line: no gain printed from the inflated baseline (126x on a 7.8 us kernel
    # whose baseline read 7.5 ms; fresh-user trial)
    for r in rechecks:
        batches = [k for k, e in enumerate(events)
                   if e["event"] == "batch" and e["task"] == r["task"]]
        assert events.index(r) < batches[0]
        assert all(events[k]["untuned_ms"] == pytest.approx(1e-6) for k in batches)
    assert all(e["was_ms"] == pytest.approx(1e3) and e["ms"] == pytest.approx(1e-6)
               for e in rechecks)
    assert [(s["untuned_s"], s["best_s"], s["untuned_first_s"]) for s in states] == [
        (pytest.approx(1e-9), pytest.approx(1e-9), pytest.approx(1.0))] * 2
    _assert_best_records(db, tasks, 1e-9)


def test_untuned_time_faster_at_both_rechecks_gives_three_records(tmp_path, monkeypatch):
    """CI once saw a task's untuned schedule timed faster at the early recheck and again at the
    end: each lower time is a record of its own, the manifest keeps the first time and the
    lowest, and the database's best record of the workload is the lowest time."""
    from relay_tvm.tune import tuner

    runs = tuner.BASELINE_RUNS
    # loaded (1 s) before the search, 1 ms at the early recheck (still far slower than any
    # tuned record), 1 ns at the end
    db, events, calls, states, tasks = _tune_with_untuned_times(
        tmp_path, monkeypatch,
        lambda n: 1.0 if n <= 2 * runs else 1e-3 if n <= 4 * runs else 1e-9)
    assert [(e["was_ms"], e["ms"]) for e in events if e["event"] == "recheck"] == [
        (pytest.approx(1e3), pytest.approx(1.0))] * 2 + [
        (pytest.approx(1.0), pytest.approx(1e-6))] * 2
    assert calls == 6 * runs
    assert [(s["untuned_s"], s["best_s"], s["untuned_first_s"]) for s in states] == [
        (pytest.approx(1e-9), pytest.approx(1e-9), pytest.approx(1.0))] * 2
    assert len(db) == sum(s["trials"] for s in states) + 3 * 2
    _assert_best_records(db, tasks, 1e-9)


def test_recheck_keeps_the_first_untuned_time_when_it_was_lower(monkeypatch):
    """Timed again slower (the machine loaded at the end instead): nothing is committed and the
    first time stands; tasks whose untuned schedule is still the best are not timed again."""
    from relay_tvm.tune import tuner

    timed, committed, events = [], [], []
    monkeypatch.setattr(tuner, "_time_untuned",
                        lambda task, *a: (timed.append(task) or ("sch", "args", [5e-3], None)))
    monkeypatch.setattr(tuner, "_commit_untuned", lambda *a: committed.append(a))
    monkeypatch.setattr(tuner, "task_key", lambda t: t)
    wd = _WD({"a": {"baseline": True, "untuned_s": 2e-3, "best_s": 1e-3},
              "b": {"baseline": True, "untuned_s": 2e-3, "best_s": 2e-3}})
    wd.save = lambda: None
    labels = {"a": {"task": "a"}, "b": {"task": "b"}}
    tuner._recheck_untuned(["a", "b"], None, None, None, None, wd, events.append, labels)
    assert timed == ["a"] and committed == []
    assert wd.states["a"] == {"baseline": True, "untuned_s": 2e-3, "best_s": 1e-3}
    assert events == [{"event": "recheck", "task": "a", "ms": 5.0, "was_ms": 2.0}]
    import io

    from relay_tvm.tune.progress import print_progress

    out = io.StringIO()
    print_progress(events[0], file=out)
    print_progress({**events[0], "ms": 0.5}, file=out)
    assert out.getvalue().splitlines() == [
        "[tune] a: untuned timed again 5.000 ms (was 2.000 ms; the first time stands)",
        "[tune] a: untuned timed again 0.500 ms (was 2.000 ms; the new time stands)"]

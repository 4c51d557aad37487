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

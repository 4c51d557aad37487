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

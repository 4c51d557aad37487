"""``tvm.meta_schedule.relay_integration`` of tvm.relay 0.19: ``extract_tasks``, ``tune_relay``
and ``compile_relay`` with 0.19's arguments, run by :mod:`relay_tvm.tune`.

Arguments at their 0.19 defaults are accepted; others that relay_tvm's tuner does not offer
(another ``task_scheduler``, ``space``, ``database`` kind, ``module_equality``, executors,
``backend="vm"``, ...) raise a :class:`~relay_tvm.errors.TuningError` naming them, rather than
being ignored. ``pass_config`` / ``disabled_pass`` apply as a ``PassContext`` would."""

from __future__ import annotations

from ...errors import TuningError

_DEFAULTS = {"builder": "local", "database": "json", "measure_callbacks": "default",
             "task_scheduler": "gradient", "space": "post-order-apply",
             "module_equality": "structural", "num_tuning_cores": "physical",
             "executor": None, "runtime": None, "instruments": None, "backend": "graph"}
# 0.19's default pass_config: both keys mean what relay_tvm does anyway
_DEFAULT_CONFIG = {"relay.backend.use_meta_schedule": True,
                   "relay.backend.tir_converter": "default"}


def _check(func: str, given: dict) -> None:
    odd = {k: v for k, v in given.items() if k in _DEFAULTS and v != _DEFAULTS[k]}
    unknown = sorted(k for k in given if k not in _DEFAULTS)
    if unknown:
        raise TuningError(f"meta_schedule.relay_integration.{func}: unexpected argument(s) "
                          f"{unknown}")
    if odd:
        raise TuningError(
            f"meta_schedule.relay_integration.{func}: relay_tvm's tuner does not offer "
            + ", ".join(f"{k}={v!r}" for k, v in sorted(odd.items()))
            + " (0.19 defaults: " + ", ".join(f"{k}={_DEFAULTS[k]!r}" for k in sorted(odd))
            + "); see relay_tvm.tune")


def _context(opt_level, pass_config, disabled_pass):
    from ...tune.tuner import _pass_context

    config = {k: v for k, v in dict(pass_config or {}).items() if k not in _DEFAULT_CONFIG}
    return _pass_context(opt_level, config, disabled_pass)


def extract_tasks(mod, target, params=None, *, opt_level=3, pass_config=None,
                  disabled_pass=None, **other):
    """0.19's ``extract_tasks``: :func:`relay_tvm.tune.extract_tasks` in a ``PassContext`` of
    ``opt_level``, ``pass_config`` and ``disabled_pass``."""
    from ... import tune

    _check("extract_tasks", other)
    with _context(opt_level, pass_config, disabled_pass):
        return tune.extract_tasks(mod, target, params, opt_level)


def tune_relay(mod, params, target, work_dir, max_trials_global, *, max_trials_per_task=None,
               num_trials_per_iter=64, runner="local", cost_model="xgb",
               strategy="evolutionary", seed=None, opt_level=3, disabled_pass=None, **other):
    """0.19's ``tune_relay``: :func:`relay_tvm.tune.tune_relay` (returns the database)."""
    from ... import tune

    _check("tune_relay", other)
    with _context(opt_level, None, disabled_pass):
        return tune.tune_relay(mod, params, target, work_dir, max_trials_global,
                               max_trials_per_task=max_trials_per_task,
                               num_trials_per_iter=num_trials_per_iter, runner=runner,
                               cost_model=cost_model, strategy=strategy, seed=seed,
                               opt_level=opt_level)


def compile_relay(database, mod, target, params=None, *, opt_level=3, pass_config=None,
                  disabled_pass=None, **other):
    """0.19's ``compile_relay``: :func:`relay_tvm.tune.compile_relay` (graph executor
    factory)."""
    from ... import tune

    _check("compile_relay", other)
    with _context(opt_level, pass_config, disabled_pass):
        return tune.compile_relay(database, mod, target, params, opt_level)


def is_meta_schedule_enabled() -> bool:
    """0.19's check of ``relay.backend.use_meta_schedule`` in the current ``PassContext``."""
    from ...transform.pass_infra import PassContext, config_value

    return config_value(PassContext.current().config, "relay.backend.use_meta_schedule", False)


__all__ = ["extract_tasks", "tune_relay", "compile_relay", "is_meta_schedule_enabled"]

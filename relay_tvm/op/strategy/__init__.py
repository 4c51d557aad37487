"""``tvm.relay.op.strategy`` of TVM 0.19, which relay_tvm does not have.

0.19 chose each operator's compute and schedule through an *op strategy*
(``relay.op.strategy.generic.conv2d_strategy``, ``x86.dense_strategy_cpu``, ``OpStrategy``,
``wrap_compute_*``, ``override_native_generic_func``) registered per target. relay_tvm has no
strategies to override: an operator's TE compute is registered with the operator
(``relay.op.register_compute``, the operator's module under ``relay_tvm/op``), and kernels are
scheduled by :mod:`relay_tvm.backend.schedule` (a tuning database, then the target's rule in
``relay_tvm/backend/schedule/cpu.py``, then the generic fallback in ``generic.py``). Any name
read from this module, and importing its submodules (``generic``, ``x86``, ``cuda``,
``arm_cpu``, ...), raises :class:`relay_tvm.errors.NotProvidedError` saying so.
"""

from __future__ import annotations

from ...errors import NotProvidedError

_INSTEAD = (
    "relay_tvm has no op strategies: an operator's TE compute is registered with the operator "
    "(relay.op.register_compute; the operator families in relay_tvm/op), and kernels are "
    "scheduled by relay_tvm.backend.schedule (a tuning database from relay_tvm.tune, then the "
    "target's rule in relay_tvm/backend/schedule/cpu.py, then the generic fallback in "
    "relay_tvm/backend/schedule/generic.py)")


def refuse(name: str) -> NotProvidedError:
    """The error for 0.19's ``tvm.relay.op.strategy`` name ``name``."""
    return NotProvidedError(f"tvm.relay.op.strategy.{name} (TVM 0.19's op strategy) is not "
                            f"provided: {_INSTEAD}")


def __getattr__(name):
    if name.startswith("__"):  # copy / pickle / inspect probes: the ordinary answer
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise refuse(name)

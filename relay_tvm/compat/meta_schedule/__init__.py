"""``tvm.meta_schedule`` (tvm.relay 0.19's path): TVM 0.27's ``tvm.s_tir.meta_schedule``, whose
names it hands out, plus :mod:`.relay_integration` (0.19's Relay entry points, run by
:mod:`relay_tvm.tune`). Installed only where TVM has no ``tvm.meta_schedule`` of its own."""

from __future__ import annotations

import importlib

from . import relay_integration  # noqa: F401  (ms.relay_integration after `import ... as ms`)


def __getattr__(name):
    ms = importlib.import_module("tvm.s_tir.meta_schedule")
    try:
        return getattr(ms, name)
    except AttributeError:
        try:  # submodules not imported by tvm.s_tir.meta_schedule itself
            return importlib.import_module(f"tvm.s_tir.meta_schedule.{name}")
        except ImportError:
            raise AttributeError(f"module 'tvm.meta_schedule' (TVM 0.27's "
                                 f"tvm.s_tir.meta_schedule) has no attribute {name!r}") from None

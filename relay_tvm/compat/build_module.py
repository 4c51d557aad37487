"""``tvm.relay.build_module`` of TVM 0.19: the names of :mod:`relay_tvm.backend.build_module`
(``build``, ``optimize``, ``bind_params_by_name``, ...) and ``create_executor``, which 0.19
defined here (:func:`relay_tvm.create_executor`)."""

from __future__ import annotations

from ..backend import build_module as _impl
from ..runtime.executor import create_executor


def __getattr__(name):
    return getattr(_impl, name)


def __dir__():
    return sorted(set(dir(_impl)) | {"create_executor"})


__all__ = [*_impl.__all__, "create_executor"]

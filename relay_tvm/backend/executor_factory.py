"""``tvm.relay.backend.executor_factory`` of TVM 0.19: the classes of what ``relay.build``
returns.

:class:`GraphExecutorFactoryModule` is relay_tvm's build result itself (``get_graph_json``,
``get_params``, ``get_lib``, ``get_executor_config``, ``export_library``, ``function_metadata``
(``{name: FunctionInfo}``), ``lib["default"](dev)``, and ``graph, lib, params =
relay.build(...)``), a subclass of
:class:`ExecutorFactoryModule`. ``AOTExecutorFactoryModule`` (the ahead-of-time executor's
result) is not provided: relay_tvm builds for the graph executor only, and reading the name
raises :class:`relay_tvm.errors.NotProvidedError`.
"""

from __future__ import annotations

from ..errors import not_provided_getattr
from .build_module import ExecutorFactoryModule, FunctionInfo, GraphExecutorFactoryModule

__getattr__ = not_provided_getattr(__name__, {"AOTExecutorFactoryModule": (
    "tvm.relay.backend.executor_factory.AOTExecutorFactoryModule is not provided: "
    "relay_tvm has no ahead-of-time (AOT) executor; relay.build returns a "
    "GraphExecutorFactoryModule (run it with lib['default'](dev) / "
    "tvm.contrib.graph_executor), or compile with relay.vm.compile for the VM")})


__all__ = ["ExecutorFactoryModule", "GraphExecutorFactoryModule", "FunctionInfo"]

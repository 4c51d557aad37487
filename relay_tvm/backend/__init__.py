"""The backend: lowering primitive functions to TIR, schedules per target, building the graph
executor's host program, memory planning, targets and parameter blobs.

``relay.build`` / ``relay.optimize`` are :func:`build` / :func:`optimize` here.
"""

from . import build_module, graph_executor_codegen, param_dict, te_compiler  # noqa: F401
from .build_module import GraphExecutorFactoryModule, build, optimize  # noqa: F401
from .executor_runtime import Executor, Runtime  # noqa: F401
from .param_dict import load_param_dict, save_param_dict  # noqa: F401
from .shape_func import register_index_failure
from .target import make_target  # noqa: F401
from .tasks import KernelTask, extract_tasks  # noqa: F401

register_index_failure()  # what compiled index checks call with a refused value

__all__ = ["build", "optimize", "GraphExecutorFactoryModule", "save_param_dict",
           "load_param_dict", "make_target", "extract_tasks", "KernelTask", "Executor", "Runtime"]


def __getattr__(name):
    """tvm.relay 0.19's ``relay.backend.vm`` / ``.interpreter`` / ``.executor`` / ``.runtime``
    as attributes, as 0.19 had them after ``import tvm.relay`` (their modules live elsewhere
    here: :data:`relay_tvm.compat.alias.MODULE_PATHS`); imported on first use."""
    import importlib

    from ..compat.alias import MODULE_PATHS

    target = MODULE_PATHS.get(f"backend.{name}")
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(target)

"""``tvm.contrib.debugger`` of TVM 0.19: the graph executor that runs and times each node
(:mod:`.debug_executor`) and its dump files (:mod:`.debug_result`)."""

from . import debug_executor, debug_result  # noqa: F401

__all__ = ["debug_executor", "debug_result"]

"""``tvm.runtime.container`` of TVM 0.19 (removed in 0.27), as relay_tvm's executors return
values: a tuple result is a Python ``tuple`` of tensors (``ADT`` names that class, so 0.19's
``isinstance(result, tvm.runtime.container.ADT)`` holds for tuple results), and
``tuple_object(fields)`` makes one."""

from __future__ import annotations

ADT = tuple


def tuple_object(fields=None) -> tuple:
    """A tuple value holding ``fields``."""
    return tuple(fields or ())

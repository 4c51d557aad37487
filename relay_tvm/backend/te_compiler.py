"""``tvm.relay.backend.te_compiler.get()`` — tvm.relay 0.19's process-wide compile engine — for
scripts and tests written against 0.19 that clear it between runs
(``relay.backend.te_compiler.get().clear()``).

relay_tvm keeps no process-wide kernel cache: each ``relay.build`` / ``relay.vm.compile`` lowers
with its own :class:`relay_tvm.backend.lower.LowerCache`, dropped when the build ends. So the
engine here holds nothing: ``clear()`` has nothing to drop and ``items()`` is empty.
"""

from __future__ import annotations


class TECompiler:
    """The (empty) process-wide compile engine."""

    def clear(self) -> None:
        """Drop cached kernels: there are none across builds in relay_tvm."""

    def items(self) -> list:
        """The cached ``(key, kernel)`` pairs: always empty here."""
        return []


_ENGINE = TECompiler()


def get() -> TECompiler:
    """The process-wide engine (tvm.relay.backend.te_compiler.get)."""
    return _ENGINE


__all__ = ["TECompiler", "get"]

"""Pattern tables of external compilers by name (tvm.relay 0.19's
``relay.op.contrib.register``): ``register_pattern_table("mycc", table_fn)`` stores
``table_fn()``, a list of ``(name, pattern)`` or ``(name, pattern, check)`` entries, for
``transform.MergeComposite(get_pattern_table("mycc"))``."""

from __future__ import annotations

from typing import Callable

from ...errors import RelayError

_PATTERN_TABLES: dict = {}


def register_pattern_table(compiler: str, table: Callable | None = None):
    """Register ``table()`` as the pattern table of ``compiler`` (a decorator when ``table``
    is None); returns ``table``. Registering a compiler again replaces its table, as 0.19 did.

    Raises:
        RelayError: ``compiler`` is not a string, or ``table`` is not callable.
    """
    if not isinstance(compiler, str):
        raise RelayError(f"register_pattern_table: compiler must be a name (str), got "
                         f"{type(compiler).__name__}")

    def register(t):
        if not callable(t):
            raise RelayError(f"register_pattern_table({compiler!r}): the table must be a "
                             f"function returning the pattern list, got {type(t).__name__}")
        _PATTERN_TABLES[compiler] = list(t())
        return t

    return register(table) if table is not None else register


def get_pattern_table(compiler: str):
    """The pattern table registered for ``compiler``, or None."""
    return _PATTERN_TABLES.get(compiler)


__all__ = ["register_pattern_table", "get_pattern_table"]

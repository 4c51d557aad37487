"""Peano naturals of the Prelude for tests of recursion and pattern matching (the module path
tvm.relay.testing.nat of tvm.relay 0.19): ``count`` a ``nat`` value, build one with
``make_nat_value`` / ``make_nat_expr``, and ``get_type`` of an ADT by name."""

from __future__ import annotations

from . import count, make_nat_expr, make_nat_value


def get_type(prelude, name: str) -> tuple:
    """``(global type var, *constructors)`` of the ADT ``name`` in ``prelude.mod``.

    Raises:
        RelayError: the module has no type of that name (from ``IRModule.get_global_type_var``).
    """
    tv = prelude.mod.get_global_type_var(name)
    return (tv, *prelude.mod.type_definitions[tv].constructors)


__all__ = ["count", "make_nat_expr", "make_nat_value", "get_type"]

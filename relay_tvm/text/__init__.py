"""The Relay text format (printer and parser). Placeholder printer until the full one lands."""

from __future__ import annotations


def astext(node, show_meta_data: bool = True) -> str:
    from ..ir.types import Type, type_str

    if isinstance(node, Type):
        return type_str(node)
    from ..typing.infer import short

    return short(node)

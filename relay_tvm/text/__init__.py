"""Relay's text format, version 0.0.5: the printer (:func:`astext`) and the parser
(:func:`parse`, :func:`parse_expr`, :func:`fromtext`).

``parse`` type-checks the module it reads (as 0.19's ``ParseModule`` did), so for a
type-checked ``mod``, ``parse(astext(mod))`` is structurally equal to ``mod``, and printing it
again gives the same text. See :mod:`relay_tvm.text.printer` for the layout and :mod:`relay_tvm.text.parser` for the
grammar and error reporting.
"""

from __future__ import annotations

from .parser import SourceName, fromtext, parse, parse_expr  # noqa: F401
from .printer import VERSION, astext  # noqa: F401

__all__ = ["astext", "parse", "parse_expr", "fromtext", "SourceName", "VERSION"]

from ..ir.base import register_printer

register_printer(astext)  # str(node) / node.astext() on every IR node print the text format

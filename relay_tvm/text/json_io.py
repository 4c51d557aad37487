"""``tvm.ir.save_json`` / ``load_json`` of Relay content (TVM 0.19 saved any node as JSON).

TVM 0.27's JSON writer serializes TVM objects only; relay_tvm's IR nodes are Python objects. The
JSON written here wraps the Relay text format with its ``#[metadata]`` section (constants as
base64 of their bytes, so values come back bit for bit)::

    {"relay_tvm_json": 1, "kind": "IRModule", "text": "#[version = \\"0.0.5\\"]\\ndef @main..."}

``kind`` is ``"IRModule"`` or ``"Expr"`` (an expression, function or operator, free variables
declared with ``free_var``), or ``"Span"`` (its fields, not text). Loading parses the text: the result is structurally equal
(:func:`relay_tvm.analysis.structural_equal`) to what was saved, not the same objects; spans
are not kept. Other JSON is not Relay's (:func:`is_relay_json`), and the compatibility layer
hands it to TVM's ``load_json``.
"""

from __future__ import annotations

import json

from ..errors import RelayError

KEY = "relay_tvm_json"
VERSION = 1


def save_json(node) -> str:
    """JSON text of a Relay ``IRModule`` or expression (see the module docstring).

    Raises:
        RelayError: ``node`` is a Relay type or another node the text format cannot hold alone.
    """
    from ..ir.base import Span
    from ..ir.expr import Expr
    from ..ir.module import IRModule
    from ..op.registry import Op
    from .printer import astext

    if isinstance(node, Span):  # not a node of the text format: its fields
        fields = {k: getattr(node, k) for k in ("line", "column", "end_line", "end_column")}
        name = None if node.source_name is None else str(node.source_name)
        return json.dumps({KEY: VERSION, "kind": "Span", "source_name": name, **fields})
    if isinstance(node, IRModule):
        kind = "IRModule"
    elif isinstance(node, (Expr, Op)):
        kind = "Expr"
    else:
        raise RelayError(f"save_json: saves a Relay IRModule or expression, got "
                         f"{type(node).__name__} (wrap an expression in a module, or save the "
                         f"module holding this node)")
    return json.dumps({KEY: VERSION, "kind": kind, "text": astext(node, show_meta_data=True)})


def is_relay_json(text) -> bool:
    """Whether ``text`` is JSON written by :func:`save_json`."""
    if not isinstance(text, str) or KEY not in text:
        return False
    try:
        d = json.loads(text)
    except ValueError:
        return False
    return isinstance(d, dict) and KEY in d


def load_json(text: str):
    """The ``IRModule`` or expression :func:`save_json` wrote.

    Raises:
        RelayError: not such JSON, or written by a newer relay_tvm.
        ParseError: the text inside does not parse.
    """
    from .parser import _parse_module, parse_expr

    if not is_relay_json(text):
        raise RelayError("load_json: not JSON written by relay_tvm's save_json")
    d = json.loads(text)
    if d[KEY] > VERSION:
        raise RelayError(f"load_json: format version {d[KEY]} is newer than this relay_tvm "
                         f"reads ({VERSION})")
    if d.get("kind") == "Span":
        from ..ir.base import Span

        return Span(d["source_name"], d["line"], column=d["column"], end_line=d["end_line"],
                    end_column=d["end_column"])
    if d.get("kind") == "IRModule":
        # as saved: 0.19's JSON kept the nodes as they were, missing annotations included
        return _parse_module(d["text"], "load_json", annotate=False)
    return parse_expr(d["text"], "load_json")


__all__ = ["save_json", "load_json", "is_relay_json"]

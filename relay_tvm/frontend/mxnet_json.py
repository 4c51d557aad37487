"""Parsing and validating MXNet symbol JSON (``Symbol.tojson()``, ``*-symbol.json``).

The format (nnvm's graph JSON, as MXNet 1.x writes it)::

    {"nodes": [{"op": "null" | <operator>, "name": str, "inputs": [[node, output, version], ...],
                "attrs": {str: str}}, ...],           # older files: "attr" / "param"
     "arg_nodes": [int, ...], "node_row_ptr": [...], "heads": [[node, output, version], ...],
     "attrs": {"mxnet_version": ["int", 10901]}}

Nodes come in topological order; an input refers to an earlier node. The same reader serves
legacy NNVM graph JSON (:mod:`relay_tvm.frontend.nnvm`), which shares the layout.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..errors import ConversionError


@dataclass
class GraphNode:
    """One node of a symbol graph: ``op`` is ``"null"`` for variables."""

    index: int
    op: str
    name: str
    inputs: list  # [(node index, output index)]
    attrs: dict = field(default_factory=dict)
    var_attrs: dict = field(default_factory=dict)  # __shape__, __dtype__, ... of variables
    # raw JSON of the bodies: fused ops' (_sg_mkldnn_*), control flow's (parse_subgraphs)
    subgraphs: list = field(default_factory=list)


@dataclass
class Graph:
    nodes: list
    heads: list  # [(node index, output index)]
    source: str = "<symbol json>"
    attrs: dict = field(default_factory=dict)


def read_json_text(symbol, what: str = "symbol") -> tuple[str, str]:
    """``symbol`` as JSON text (a path to a file, or the text itself): ``(text, source)``."""
    if isinstance(symbol, bytes):
        try:
            symbol = symbol.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConversionError(f"the {what} is not UTF-8 JSON text ({e}); expected the text "
                                  "of a -symbol.json file") from None
    if isinstance(symbol, os.PathLike) or (
        isinstance(symbol, str) and not symbol.lstrip().startswith(("{", "["))
    ):
        path = os.fspath(symbol)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path
        except OSError as e:
            raise ConversionError(
                f"cannot read the {what} file {path!r}: {e} (expected a path to a -symbol.json "
                "file or the JSON text)"
            ) from None
        except UnicodeDecodeError:
            raise ConversionError(
                f"the {what} file {path!r} is binary, not JSON text (a .params file?): expected "
                "a -symbol.json file (its weights go in arg_params / --params)"
            ) from None
    if isinstance(symbol, str):
        return symbol, "<symbol json>"
    raise ConversionError(f"{what}: expected a path or JSON text, got {type(symbol).__name__}")


def _entry(x, where: str, n_nodes: int, limit: int):
    if not isinstance(x, (list, tuple)) or len(x) < 1 or not all(isinstance(i, int) for i in x):
        raise ConversionError(f"{where}: expected [node, output(, version)], got {x!r}")
    nid = x[0]
    out = x[1] if len(x) > 1 else 0
    if not 0 <= nid < limit:
        raise ConversionError(
            f"{where}: refers to node {nid}, but only nodes 0..{limit - 1} may be used here "
            f"(graph of {n_nodes} nodes, inputs must come earlier)"
        )
    if out < 0:
        raise ConversionError(f"{where}: negative output index {out}")
    return nid, out


def parse_graph(symbol, what: str = "MXNet symbol") -> Graph:
    """Parse and validate symbol JSON given as a dict, JSON text or a path.

    Raises:
        ConversionError: the text is not JSON, or a field is missing or malformed (names the
            node and field).
    """
    source = "<symbol json>"
    if isinstance(symbol, dict):
        data = symbol
    else:
        text, source = read_json_text(symbol, what)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            # a download or copy cut short fails at its last character, or in a string that
            # the text ends in (json's "Unterminated string starting at", whose position is
            # the string's start): say so
            unterminated = e.msg.startswith("Unterminated string")
            cut = (" (the text is empty)" if not text.strip() else
                   " (the text ends there: a truncated file?)" if e.pos >= len(text.rstrip())
                   else " (the text ends inside it: a truncated file?)" if unterminated
                   else "")
            msg = e.msg[:-len(" at")] if e.msg.endswith(" at") else e.msg
            raise ConversionError(
                f"{source}: malformed {what} JSON: {msg} at line {e.lineno} column {e.colno}"
                f"{cut}"
            ) from None
    if not isinstance(data, dict):
        raise ConversionError(f"{source}: {what} JSON must be an object, got {type(data).__name__}")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list):
        raise ConversionError(f"{source}: {what} JSON has no \"nodes\" list")
    if not raw_nodes:
        raise ConversionError(f"{source}: {what} JSON has an empty \"nodes\" list (a graph "
                              f"needs at least one node)")
    n = len(raw_nodes)
    nodes = []
    for i, rn in enumerate(raw_nodes):
        where = f"{source}: node {i}"
        if not isinstance(rn, dict):
            raise ConversionError(f"{where}: expected an object, got {type(rn).__name__}")
        for key in ("op", "name"):
            if not isinstance(rn.get(key), str):
                raise ConversionError(f"{where}: missing or non-string {key!r} field")
        where = f"{source}: node {i} ({rn['name']!r}, {rn['op']})"
        inputs = rn.get("inputs", [])
        if not isinstance(inputs, list):
            raise ConversionError(f"{where}: \"inputs\" must be a list")
        ins = [_entry(x, f"{where} input {k}", n, i) for k, x in enumerate(inputs)]
        attrs = {}
        for key in ("param", "attr", "attrs"):  # oldest to newest layout; later ones win
            a = rn.get(key)
            if a is None:
                continue
            if not isinstance(a, dict):
                raise ConversionError(f"{where}: {key!r} must be an object of strings")
            attrs.update(a)
        var_attrs = {k: v for k, v in attrs.items() if k.startswith("__") and k.endswith("__")}
        op_attrs = {k: v for k, v in attrs.items() if k not in var_attrs}
        if rn["op"] == "null" and ins:
            raise ConversionError(f"{where}: a variable node cannot have inputs")
        subgraphs = rn.get("subgraphs") or []
        if not isinstance(subgraphs, list) or not all(isinstance(g, dict) for g in subgraphs):
            raise ConversionError(f"{where}: \"subgraphs\" must be a list of graph objects")
        nodes.append(GraphNode(i, rn["op"], rn["name"], ins, op_attrs, var_attrs, subgraphs))
    heads_raw = data.get("heads")
    if not isinstance(heads_raw, list) or not heads_raw:
        raise ConversionError(f"{source}: {what} JSON has no \"heads\" list (the outputs)")
    heads = [_entry(h, f"{source}: head {k}", n, n) for k, h in enumerate(heads_raw)]
    gattrs = data.get("attrs", {})
    return Graph(nodes, heads, source, gattrs if isinstance(gattrs, dict) else {})


def parse_subgraphs(node: GraphNode, source: str = "<symbol json>") -> list:
    """The bodies of a ``_cond`` / ``_foreach`` / ``_while_loop`` node as parsed :class:`Graph` s
    (same layout as the top-level graph).

    Raises:
        ConversionError: a body is malformed (names the node and the subgraph).
    """
    out = []
    for k, g in enumerate(node.subgraphs):
        sub = parse_graph(g, f"MXNet symbol (subgraph {k} of node {node.name!r})")
        sub.source = f"{source}: subgraph {k} of node {node.name!r}"
        out.append(sub)
    return out


__all__ = ["GraphNode", "Graph", "parse_graph", "parse_subgraphs", "read_json_text"]

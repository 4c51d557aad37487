"""AnnotateSpans (tvm.relay 0.19's ``transform.AnnotateSpans``, opt level 0): give every node
of a module a span in the module's own text — print it in Relay's text format, parse it back —
so errors found later point at a line of that text (source name ``GeneratedSource``)."""

from __future__ import annotations

from .pass_infra import ModulePass, PassInfo

SOURCE_NAME = "GeneratedSource"


def annotate_spans(mod):
    """``mod`` printed and parsed back: structurally equal, every node carrying a span."""
    from ..text import astext, parse

    return parse(astext(mod, show_meta_data=True), source_name=SOURCE_NAME)


def AnnotateSpans():  # noqa: N802 - Relay's name
    """The AnnotateSpans pass (see the module doc)."""
    return ModulePass(lambda mod, ctx: annotate_spans(mod), PassInfo(0, "AnnotateSpans"))


__all__ = ["AnnotateSpans", "annotate_spans"]

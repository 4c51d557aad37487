"""Pictures of Relay programs: Graphviz DOT text, rendered to SVG/PNG/PDF when Graphviz is there.

:func:`visualize` draws a module's functions as dataflow graphs: one box per operator call (its
name and the attributes that identify it), one ellipse per input, edges labelled with the type
of the value that flows along them (``1x64x56x56 float32``). With ``fused=True`` the module is
first fused by ``FuseOps`` (on a copy, at the current ``PassContext`` opt level) and every
primitive function — one kernel after lowering — is drawn as a boxed cluster named after the
kernel, holding the operators it fused. Control flow, closures, references and ADTs are drawn
as nodes of their own (``if``, ``match``, ``fn``, ``ref``, a constructor's name).

Rendering needs the ``dot`` program (Debian: ``apt-get install graphviz``); the ``graphviz``
Python package is used when installed, else ``dot`` is run directly. Without ``dot`` the DOT
text is written next to the requested path, with a warning.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings

from ..errors import RelayError
from ..ir import Expr
from ..ir.adt import Constructor, Match
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import children, post_order
from ..ir.module import IRModule
from ..ir.types import TensorType, TupleType
from ..op.registry import Op
from ..transform.fuse_ops import fused_function_name

RENDER_FORMATS = ("svg", "png", "pdf")

# attributes worth a line under an operator's name (the rest are in the text format)
_SHOWN_ATTRS = ("kernel_size", "strides", "padding", "dilation", "groups", "pool_size", "axis",
                "units", "newshape", "axes")


def _type_text(ty) -> str:
    if isinstance(ty, TensorType):
        dims = "x".join(str(d) for d in ty.shape) if len(ty.shape) else "scalar"
        return f"{dims} {ty.dtype}"
    if isinstance(ty, TupleType):
        return "(" + ", ".join(_type_text(f) for f in ty.fields) + ")"
    text = str(ty)
    return text if len(text) <= 48 else text[:45] + "..."


def _quote(text: str) -> str:
    """A DOT string literal; lines end with ``\\l``-free ``\\n`` (centred)."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{body}"'


def _attr_text(value) -> str:
    if isinstance(value, (list, tuple)):
        return "x".join(str(v) for v in value)
    return str(value)


def _is_default(key: str, value) -> bool:
    seq = value if isinstance(value, (list, tuple)) else [value]
    try:
        nums = [int(v) for v in seq]
    except (TypeError, ValueError):
        return False
    if key in ("strides", "dilation", "groups"):
        return all(v == 1 for v in nums)
    return key == "padding" and all(v == 0 for v in nums)


def _op_label(call: Call) -> str:
    lines = [call.op.name]
    attrs = call.attrs
    if attrs is not None:
        shown = []
        for key in _SHOWN_ATTRS:
            try:
                value = attrs[key] if key in attrs else None
            except (TypeError, KeyError):
                value = getattr(attrs, key, None)
            if value is None or _is_default(key, value):
                continue
            shown.append(f"{key} {_attr_text(value)}")
        if shown:
            lines.append(", ".join(shown))
    return "\n".join(lines)


class _Dot:
    """Accumulates DOT statements; nodes are ``n0``, ``n1``, ... and clusters ``cluster_0``, ..."""

    def __init__(self):
        self.lines: list = []
        self.edges: list = []
        self.nodes = 0
        self.clusters = 0

    def node(self, label: str, **style) -> str:
        name = f"n{self.nodes}"
        self.nodes += 1
        extra = "".join(f", {k}={_quote(str(v))}" for k, v in style.items())
        self.lines.append(f"  {name} [label={_quote(label)}{extra}];")
        return name

    def edge(self, src: str, dst: str, label: str = "", **style) -> None:
        attrs = [f"label={_quote(label)}"] if label else []
        attrs += [f"{k}={_quote(str(v))}" for k, v in style.items()]
        self.edges.append(f"  {src} -> {dst}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")

    def open_cluster(self, label: str, **style) -> None:
        self.lines.append(f"  subgraph cluster_{self.clusters} {{")
        self.clusters += 1
        self.lines.append(f"  label={_quote(label)};")
        for k, v in style.items():
            self.lines.append(f"  {k}={_quote(str(v))};")

    def close_cluster(self) -> None:
        self.lines.append("  }")

    def text(self) -> str:
        head = ["digraph relay {", "  rankdir=TB;", '  graph [fontname="Helvetica", fontsize=10];',
                '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];',
                '  edge [fontname="Helvetica", fontsize=8];']
        return "\n".join(head + self.lines + self.edges + ["}"]) + "\n"


def _typed(e):
    return getattr(e, "_checked_type", None)


class _Drawer:
    """Draws expressions; ``port[id(e)]`` is the DOT node that produces ``e``'s value."""

    def __init__(self, dot: _Dot, let_values: dict):
        self.dot = dot
        self.port: dict = {}
        self.let_values = let_values
        self.pending: list = []  # nested non-primitive functions: (Function, its node)

    def kids(self, e) -> tuple:
        t = type(e)
        if t is Var and e in self.let_values:
            return (self.let_values[e],)  # a let-bound variable is its value
        if t is Let:
            return (e.value, e.body)
        if t is Call and isinstance(e.op, (Op, Function, GlobalVar, Constructor)):
            # operators, globals and constructors label the call's box; a fused group or a
            # closure called in place is drawn at the call
            return tuple(e.args)
        if t is Function:
            return ()  # drawn in a cluster of its own, after the enclosing body
        return children(e)

    def edge_from(self, e, dst: str, label: str | None = None) -> None:
        ty = _typed(e)
        text = _type_text(ty) if ty is not None else ""
        if label:
            text = f"{label}: {text}" if text else label
        self.dot.edge(self.port[id(e)], dst, text)

    def draw(self, body) -> str:
        # post_order's memo lives for one call; here it must span the whole picture (a fused
        # group's body is drawn from inside the enclosing walk, and a closure's body refers to
        # nodes drawn already), so the walk is this explicit stack memoized on ``port``.
        stack = [(body, False)]
        while stack:
            e, ready = stack.pop()
            if id(e) in self.port:
                continue
            if ready:
                self.port[id(e)] = self.visit(e)
                continue
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(self.kids(e)) if id(c) not in self.port)
        return self.port[id(body)]

    def visit(self, e) -> str:  # noqa: C901 - one case per expression kind
        dot = self.dot
        t = type(e)
        if t is Var:
            if e in self.let_values:
                return self.port[id(self.let_values[e])]
            ty = _typed(e)
            label = f"%{e.name_hint}" + (f"\n{_type_text(ty)}" if ty is not None else "")
            return dot.node(label, shape="ellipse", style="solid")
        if t is Let:
            return self.port[id(e.body)]
        if t is Constant:
            arr = e.data
            if arr.ndim == 0:  # a scalar shows its value (float32 printed to 6 digits)
                v = arr.item()
                label = f"const {v:.6g}" if isinstance(v, float) else f"const {v!r}"
            else:
                label = f"const\n{_type_text(_typed(e))}"
            return dot.node(label, shape="box", style="dashed")
        if t is GlobalVar:
            return dot.node(f"@{e.name_hint}", shape="ellipse", style="solid")
        if t is Constructor:
            return dot.node(e.name_hint, shape="ellipse", style="solid")
        if t is Call:
            return self.visit_call(e)
        if t is Function:
            node = dot.node("fn(" + ", ".join(f"%{p.name_hint}" for p in e.params) + ")",
                            shape="box", style="solid")
            self.pending.append((e, node))
            return node
        label, inputs = _SIMPLE[t](e)
        node = dot.node(label, shape="box", style="solid")
        for name, child in inputs:
            self.edge_from(child, node, name)
        return node

    def visit_call(self, e: Call) -> str:
        dot = self.dot
        callee = e.op
        if isinstance(callee, Function) and callee.is_primitive:
            return self.draw_group(e)
        if isinstance(callee, Op):
            node = dot.node(_op_label(e), shape="box", style="rounded,filled",
                            fillcolor="#e8eef7")
        elif isinstance(callee, GlobalVar):
            node = dot.node(f"call @{callee.name_hint}", shape="box", style="solid")
        elif isinstance(callee, Constructor):
            node = dot.node(callee.name_hint, shape="box", style="solid")
        else:
            node = dot.node("call", shape="box", style="solid")
            if isinstance(callee, Function):
                self.port[id(callee)] = self.visit(callee)
            self.edge_from(callee, node, "callee")
        for a in e.args:
            self.edge_from(a, node)
        return node

    def draw_group(self, call: Call) -> str:
        """A primitive function (one kernel) as a cluster; its parameters are the arguments."""
        fn = call.op
        name = fn.get_attr("func_name") or fused_function_name(fn.body)
        self.dot.open_cluster(str(name), style="rounded", color="#1f5fbf", fontcolor="#1f5fbf")
        for p, a in zip(fn.params, call.args, strict=True):
            self.port[id(p)] = self.port[id(a)]
        out = self.draw(fn.body)
        self.dot.close_cluster()
        return out

    def finish(self) -> None:
        """Draws the nested closures met so far (and the ones inside them)."""
        while self.pending:
            fn, node = self.pending.pop(0)
            self.dot.open_cluster("fn", style="dashed", color="#888888")
            out = self.draw(fn.body)
            self.dot.close_cluster()
            self.dot.edge(out, node, "body", style="dashed")


_SIMPLE = {
    Tuple: lambda e: ("tuple", [(f"{i}", f) for i, f in enumerate(e.fields)]),
    TupleGetItem: lambda e: (f".{e.index}", [("", e.tuple_value)]),
    If: lambda e: ("if", [("cond", e.cond), ("then", e.true_branch),
                          ("else", e.false_branch)]),
    Match: lambda e: ("match", [("data", e.data)] +
                      [(f"clause {i}", c.rhs) for i, c in enumerate(e.clauses)]),
    RefCreate: lambda e: ("ref", [("", e.value)]),
    RefRead: lambda e: ("!ref", [("", e.ref)]),
    RefWrite: lambda e: ("ref :=", [("ref", e.ref), ("value", e.value)]),
}


def _as_module(mod_or_expr) -> IRModule:
    if isinstance(mod_or_expr, IRModule):
        return mod_or_expr
    if isinstance(mod_or_expr, Expr) and not isinstance(mod_or_expr, Op):
        return IRModule.from_expr(mod_or_expr)
    raise RelayError(f"visualize: expected an IRModule or a Relay expression, got "
                     f"{type(mod_or_expr).__name__}")


def _let_values(fn) -> dict:
    return {e.var: e.value for e in post_order(fn) if type(e) is Let}


def to_dot(mod_or_expr, *, fused: bool = True) -> str:
    """The DOT text :func:`visualize` draws (no file written)."""
    from ..transform import FuseOps, InferType

    mod = InferType()(_as_module(mod_or_expr))
    if fused:
        mod = FuseOps()(mod)
    dot = _Dot()
    functions = sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint != "main")
    for gv, fn in functions:
        boxed = len(functions) > 1
        if not isinstance(fn, Function):  # e.g. an external, compiled function: no Relay body
            dot.node(f"@{gv.name_hint}\n({type(fn).__name__}, not drawn)", shape="box",
                     style="dashed")
            continue
        if boxed:
            dot.open_cluster(f"def @{gv.name_hint}", style="solid", color="#444444")
        drawer = _Drawer(dot, _let_values(fn))
        drawer.draw(fn.body)
        drawer.finish()
        sink = dot.node(f"@{gv.name_hint} result", shape="plaintext", style="solid")
        drawer.edge_from(fn.body, sink)
        if boxed:
            dot.close_cluster()
    return dot.text()


def render_dot(text: str, path: str) -> str:
    """Writes DOT ``text`` to ``path``; a ``.svg``/``.png``/``.pdf`` path is rendered with
    Graphviz's ``dot``.

    Returns:
        the path written: ``path``, or ``path`` with the suffix ``.dot`` when ``dot`` is not
        installed (a ``RuntimeWarning`` says so).

    Raises:
        RelayError: an unknown suffix, or ``dot`` failed.
    """
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext in ("dot", "gv"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path
    if ext not in RENDER_FORMATS:
        raise RelayError(f"visualize: cannot tell the picture format from {path!r}; expected a "
                         f"path ending in .svg, .png, .pdf (rendered) or .dot/.gv (DOT text)")
    if shutil.which("dot") is None:
        dot_path = os.path.splitext(path)[0] + ".dot"
        with open(dot_path, "w", encoding="utf-8") as f:
            f.write(text)
        warnings.warn(f"visualize: Graphviz's 'dot' program is not installed, so {path} was not "
                      f"rendered; wrote the DOT text to {dot_path} (apt-get install graphviz, "
                      f"then: dot -T{ext} {dot_path} -o {path})", RuntimeWarning, stacklevel=3)
        return dot_path
    data = _run_dot(text, ext)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _run_dot(text: str, fmt: str) -> bytes:
    try:
        import graphviz
    except ImportError:
        graphviz = None
    try:
        if graphviz is not None:
            return graphviz.Source(text).pipe(format=fmt)
        return subprocess.run(["dot", f"-T{fmt}"], input=text.encode(), capture_output=True,
                              check=True).stdout
    except Exception as e:  # graphviz.ExecutableNotFound / CalledProcessError / OSError
        raise RelayError(f"visualize: Graphviz's dot failed to render {fmt}: {e}") from e


def visualize(mod_or_expr, path: str | None = None, *, fused: bool = True) -> str:
    """A picture of a Relay program as Graphviz DOT text, rendered to a file when ``path`` is
    given.

    Operators are boxes (name and identifying attributes: kernel size, strides, padding, axis,
    ...), inputs are ellipses with their types, and every edge carries the type of the value on
    it (``1x64x56x56 float32``). With ``fused`` the program is drawn after ``FuseOps`` (run on a
    copy at the current ``PassContext`` opt level, as ``relay.build`` fuses; apply
    ``SimplifyInference`` first to see batch-norm fused the way ``build`` fuses it), each fused
    group — one kernel — boxed as a cluster labelled with its kernel name. Every function of a
    module is drawn (each in a box of its own when there are several).

    Args:
        mod_or_expr: an ``IRModule``, a ``Function`` or an expression (taken as ``main``); it is
            type-checked first.
        path: where to write the picture: ``.svg``, ``.png`` or ``.pdf`` (rendered by Graphviz's
            ``dot``) or ``.dot``/``.gv`` (the text). Without ``dot`` installed, a picture path
            gets the DOT text at the same name ending in ``.dot`` and a ``RuntimeWarning``.
        fused: draw the fused program with its groups boxed (default), or the program as given.

    Returns:
        the DOT text (``str``).

    Raises:
        TypeInferenceError: the program does not type-check.
        RelayError: not a module or expression; an unknown file suffix; ``dot`` failed.
    """
    text = to_dot(mod_or_expr, fused=fused)
    if path is not None:
        render_dot(text, os.fspath(path))
    return text


__all__ = ["visualize", "to_dot", "render_dot", "RENDER_FORMATS"]

"""Building blocks of the MXNet converters: resolving Relay constructors, scalar constants."""

from __future__ import annotations

import importlib

import numpy as np

from ..errors import ConversionError
from ..ir.expr import TupleGetItem, const
from .common import infer_dtype, infer_shape_any


def R(path: str):
    """The Relay constructor ``path`` (``"nn.conv2d"``, ``"reshape"``, ``"image.resize2d"``).

    Resolved at conversion time, so converters can be written against tvm.relay 0.19's names.

    Raises:
        ConversionError: relay_tvm has no such operator constructor.
    """
    mod = importlib.import_module("relay_tvm.op")
    obj = mod
    for part in path.split("."):
        nxt = getattr(obj, part, None)
        if nxt is None and obj is mod:
            try:
                nxt = importlib.import_module(f"relay_tvm.op.{part}")
            except ImportError:
                nxt = None
        if nxt is None:
            raise ConversionError(f"the Relay operator constructor relay.{path} is not available")
        obj = nxt
    return obj


class Ctx:
    """What a converter knows besides its inputs and attributes: the node, and shape/dtype
    queries of already-built expressions."""

    def __init__(self, node_name: str, op_name: str, frontend: str = "MXNet", node=None,
                 convert_subgraph=None, input_nodes=(), options=None):
        self.node_name = node_name
        self.op_name = op_name
        self.frontend = frontend
        self.node = node  # the GraphNode (its subgraphs), when converting a parsed graph
        self.input_nodes = list(input_nodes)  # the GraphNode of each input
        self._convert_subgraph = convert_subgraph
        self._subgraphs = None
        self.options = dict(options or {})  # conversion options of from_mxnet

    @property
    def subgraphs(self) -> list:
        """The node's bodies (control flow) as parsed graphs."""
        if self._subgraphs is None:
            from .mxnet_json import parse_subgraphs

            self._subgraphs = parse_subgraphs(self.node) if self.node is not None else []
        return self._subgraphs

    def convert_subgraph(self, k: int, args: list) -> list:
        """Convert subgraph ``k`` of this node with its variables (in order) bound to ``args``;
        returns the expressions of its heads.

        Raises:
            ConversionError: the node has no such subgraph, or the number of arguments differs
                from the subgraph's variables.
        """
        subs = self.subgraphs
        if not 0 <= k < len(subs) or self._convert_subgraph is None:
            raise self.error(f"expected a subgraph {k}, the node has {len(subs)}")
        return self._convert_subgraph(subs[k], list(args), self)

    def shape(self, e) -> tuple:
        """The shape of ``e``: ints, with ``relay.Any()`` (an AnyDim) where an input's
        dimension is dynamic; a converter that needs that dimension's value fails with a
        ConversionError naming the node."""
        return infer_shape_any(e)

    def dtype(self, e) -> str:
        return infer_dtype(e)

    def error(self, msg: str) -> ConversionError:
        return ConversionError(f"{self.op_name} node {self.node_name!r}: {msg}")

    def expect(self, e, shape, what: str, attrs=None) -> None:
        """Check that a parameter variable ``e`` has the ``shape`` this node needs.

        Args:
            attrs: ``{axis: "attribute=value"}`` for the axes of ``shape`` that come from the
                node's attributes (FullyConnected's ``num_hidden``), not from the input shape:
                a mismatch on those axes alone says the weight does not match the attributes
                (the graph converter's "wrong input shape?" hint is only for the others).

        Raises:
            ConversionError: naming the parameter, the node, and both shapes.
        """
        from ..ir.expr import Var

        ann = getattr(e, "type_annotation", None) if isinstance(e, Var) else None
        if ann is None or not hasattr(ann, "shape"):
            return
        got = tuple(int(d) for d in ann.shape)
        shape = tuple(int(d) for d in shape)
        if got == shape:
            return
        differ = [i for i in range(len(shape)) if i >= len(got) or got[i] != shape[i]]
        if attrs and len(got) == len(shape) and all(i in attrs for i in differ):
            named = ", ".join(dict.fromkeys(attrs[i] for i in differ))
            raise ConversionError(
                f"parameter {e.name_hint!r} ({what} of {self.op_name} node {self.node_name!r}) "
                f"has shape {got}, but the layer's attributes ({named}) need {shape}: the "
                f"weight does not match the layer (parameters of another model?)")
        raise ConversionError(
            f"parameter {e.name_hint!r} ({what} of {self.op_name} node {self.node_name!r}) "
            f"has shape {got}, but the graph needs {shape}")

    def scalar(self, value, like) -> object:
        """A scalar constant of ``like``'s dtype."""
        dt = self.dtype(like)
        return const(np.array(value).astype(dt), dt)


def outputs_of(tuple_expr, n: int) -> list:
    """The ``n`` fields of a tuple-valued expression (a TupleWrapper or a tuple expression)."""
    if hasattr(tuple_expr, "astuple"):
        tuple_expr = tuple_expr.astuple()
    if isinstance(tuple_expr, (list, tuple)):
        return list(tuple_expr)
    return [TupleGetItem(tuple_expr, i) for i in range(n)]


def first(x):
    """Field 0 of an operator with several outputs (batch_norm, ...), or ``x``."""
    if hasattr(x, "astuple"):
        return x[0]
    if isinstance(x, (list, tuple)):
        return x[0]
    from ..ir.types import TupleType
    from .common import type_of

    if isinstance(type_of(x), TupleType):
        return TupleGetItem(x, 0)
    return x


__all__ = ["R", "Ctx", "outputs_of", "first"]

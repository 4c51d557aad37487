"""Base classes shared by every IR node: spans, nodes, and the dtype vocabulary."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import RelayError, UntypedError


@dataclass(frozen=True, slots=True, init=False)
class Span:
    """A source location: where a node came from (a text file, an MXNet node, ...).

    ``Span(source_name, line, column)``, or with five values tvm.relay 0.19's order
    ``Span(source_name, line, end_line, column, end_column)``; keywords name any of them.

    Args:
        source_name: file name, or a model node name such as ``"resnet_conv0 (node 12)"``.
        line, column: 1-based position of the start; 0 when unknown.
        end_line, end_column: position of the end; 0 when unknown.

    Raises:
        RelayError: two or four positional values after ``source_name`` (ambiguous).
    """

    source_name: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __init__(self, source_name, line=0, *rest, column=0, end_line=0, end_column=0):
        if len(rest) == 3:  # 0.19's positional order
            end_line, column, end_column = rest
        elif len(rest) == 1:
            column = rest[0]
        elif rest:
            raise RelayError(f"Span takes (source_name, line, column) or (source_name, line, "
                             f"end_line, column, end_column), got {2 + len(rest)} values")
        for k, v in (("source_name", source_name), ("line", line), ("column", column),
                     ("end_line", end_line), ("end_column", end_column)):
            object.__setattr__(self, k, v)

    def same_as(self, other) -> bool:
        """Whether ``other`` is this very span (TVM's ``same_as``: identity)."""
        return self is other

    def __str__(self) -> str:
        if self.line:
            return f"{self.source_name}:{self.line}:{self.column}"
        return self.source_name


# The text printer, registered by relay_tvm.text (it lives a layer above the IR):
# ``printer(node, show_meta_data=...) -> str``.
_PRINTER = None


def register_printer(printer) -> None:
    """Make ``printer(node, show_meta_data=...)`` the printer of ``astext``/``str`` on IR nodes."""
    global _PRINTER
    _PRINTER = printer


class Node:
    """Root of all IR objects (expressions, types, patterns, type definitions)."""

    __slots__ = ()

    def astext(self, show_meta_data: bool = True, show_types: bool = False,
               show_spans: bool = False, annotate=None) -> str:
        """The Relay text format of this node: ``relay.astext(node, ...)`` with the same
        keywords (see :func:`relay_tvm.text.printer.astext`).

        Args:
            show_meta_data: include the ``#[metadata]`` section (non-scalar constants).
            show_types: add ``/* ty=... */`` comments with the inferred types.
            show_spans: add ``span=...`` to those comments.
            annotate: optional ``f(expr) -> str | None`` added to each bound expression's
                comment.

        Raises:
            RelayError: no printer is registered (``relay_tvm.text`` was never imported).
        """
        if _PRINTER is None:
            raise RelayError("astext: no text printer registered; import relay_tvm.text")
        return _PRINTER(self, show_meta_data=show_meta_data, show_types=show_types,
                        show_spans=show_spans, annotate=annotate)

    def same_as(self, other) -> bool:
        """Whether ``other`` is this very object (TVM's reference equality)."""
        return self is other

    def __str__(self) -> str:
        if _PRINTER is None:
            return object.__repr__(self)
        try:
            return _PRINTER(self, show_meta_data=False)
        except Exception:  # printing must never hide the real error being reported
            return object.__repr__(self)

    __repr__ = __str__


# Type inference seals a node with the epoch current when it typed it; a change to what decides
# types from outside the program (an operator's type relation, replaced by register_op_attr or
# TempOpAttr) starts a new epoch, which unseals every node at once: the next inference types
# them again with the new relation, as TVM 0.19's InferType re-typed every function.
_SEAL_EPOCH = [1]


def seal_epoch() -> int:
    """The current sealing epoch (a node is sealed when its ``_type_sealed`` equals it)."""
    return _SEAL_EPOCH[0]


def new_seal_epoch() -> None:
    """Unseal every typed node: the next type inference walks them again."""
    _SEAL_EPOCH[0] += 1


def is_sealed(e) -> bool:
    """Whether type inference may take ``e``'s type as it is (see relay_tvm.typing.infer)."""
    return getattr(e, "_type_sealed", 0) == _SEAL_EPOCH[0]


class RelayExpr(Node):
    """Base of Relay expressions.

    Expressions compare by identity: two ``var("x")`` are different variables. Whole-program
    comparison is :func:`relay_tvm.analysis.structural_equal`. After type inference each expression
    carries its type in :attr:`checked_type` (the one field inference fills in, as in Relay).
    """

    # ``_type_sealed``: set by type inference on a node whose type follows from the node alone
    # (see relay_tvm.typing.infer), so that a later inference may reuse it without re-walking it:
    # the epoch it was sealed in (0: not sealed; sealed while it is the current epoch).
    __slots__ = ("_checked_type", "_type_sealed")

    @property
    def checked_type(self):
        """The type assigned by type inference.

        Raises:
            UntypedError: type inference has not run on this expression.
        """
        t = getattr(self, "_checked_type", None)
        if t is None:
            raise UntypedError(
                "the type checker has not populated checked_type for this node; "
                "run relay_tvm.transform.InferType() first"
            )
        return t

    @property
    def type_annotation_or_none(self):
        return None

    def _set_checked_type(self, ty, sealed: bool = False) -> None:
        object.__setattr__(self, "_checked_type", ty)
        object.__setattr__(self, "_type_sealed", _SEAL_EPOCH[0] if sealed else 0)

    # Operator sugar (``x + y``, ``x < 1``, ``x.astype(...)``), as tvm.relay.Expr had it, is
    # attached by relay_tvm.op (op/_sugar.py): the operators live a layer above the IR.

    def __call__(self, *args):
        from .expr import Call

        return Call(self, list(args))


_VALID_DTYPES: set = set()  # dtype strings already checked (type construction is hot)
_DTYPE_RE = re.compile(r"^(?:(?:float|int|uint)(?:8|16|32|64)|bfloat16|bool|handle)(?:x\d+)?$")


def check_dtype(dtype, what: str = "dtype") -> str:
    """Validate a dtype string such as ``"float32"``, ``"int8"``, ``"bool"``; returns it
    (``"uint1"``, TVM's other name of the 1-bit boolean, as ``"bool"``; the width-less
    ``"float"`` / ``"int"`` / ``"uint"`` as their 32-bit types, as TVM read them).

    Raises:
        RelayError: the string is not a dtype Relay knows.
    """
    if type(dtype) is str and dtype in _VALID_DTYPES:  # the common case, checked once
        return dtype
    if hasattr(dtype, "name") and not isinstance(dtype, str):  # numpy dtype objects
        dtype = dtype.name
    dtype = str(dtype)
    if dtype.startswith("uint1") and _DTYPE_RE.match("bool" + dtype[5:]):
        return "bool" + dtype[5:]  # TVM's bool is the 1-bit unsigned integer (0.19 wrote both)
    m = re.match(r"(float|int|uint)((?:x\d+)?)$", dtype)
    if m:  # TVM's width-less names: "float" is float32, "int" int32 (String2DLDataType)
        return f"{m.group(1)}32{m.group(2)}"
    if not _DTYPE_RE.match(dtype):
        raise RelayError(
            f"{what}: {dtype!r} is not a dtype (expected e.g. float32, float16, int8, int64, bool)"
        )
    if len(_VALID_DTYPES) < 1024:
        _VALID_DTYPES.add(dtype)
    return dtype


__all__ = ["Span", "Node", "RelayExpr", "check_dtype"]

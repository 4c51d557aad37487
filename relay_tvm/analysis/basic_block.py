"""``check_basic_block_normal_form`` (tvm.relay.analysis): is a program in basic-block normal form?

A *block* is a function body, a branch of an ``if`` or the body of a ``match`` clause (a
``let`` body continues its block). In basic-block normal form an expression that more than one
block uses is ``let``-bound in a block enclosing them all, so that it is evaluated once and
its place is unambiguous; the program then refers to it through the ``let``'s variable. Shared
sub-expressions within one block are fine (they are dataflow). Variables bound by ``let``,
function parameters and pattern variables, constants, operators, global variables and
constructors may be used anywhere. Semantics of tvm.relay 0.19's
``src/relay/analysis/basic_block_normal_form.cc``; the transformation that establishes the form is
:func:`relay_tvm.transform.ToBasicBlockNormalForm`.
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.adt import Match, pattern_vars
from ..ir.expr import Constant, Function, GlobalVar, If, Let, Var
from ..ir.functor import children


class NotBasicBlockNormalFormError(RelayError):
    """An expression is used from several blocks without being let-bound."""


def scope_opening_children(e) -> set:
    """The child indices of ``e`` that open a new scope (a basic block): a function's body, an
    if's branches, a match's clause bodies."""
    t = type(e)
    if t is Function:
        return {len(e.params)}
    if t is If:
        return {1, 2}
    if t is Match:
        return set(range(1, 1 + len(e.clauses)))
    return set()


def _bound_vars(e):
    t = type(e)
    if t is Let:
        return [e.var]
    if t is Function:
        return list(e.params)
    if t is Match:
        return [v for c in e.clauses for v in pattern_vars(c.lhs)]
    return []


def check_basic_block_normal_form(expr) -> bool:
    """Check that ``expr`` is in basic-block normal form (see the module docstring).

    Args:
        expr: a Relay expression or function.

    Returns:
        True.

    Raises:
        NotBasicBlockNormalFormError: (a ``RelayError``, hence a ``tvm.error.TVMError``) naming
            the first expression used from more than one block.
    """
    from ..ir.adt import Constructor
    from ..op.registry import Op

    exempt_types = (Constant, GlobalVar, Op, Constructor)
    bound: set = set()
    used_in: dict = {}  # id(node) -> (node, first block id)
    next_block = [1]
    stack = [(expr, 0)]
    visited: set = set()
    while stack:
        node, block = stack.pop()
        for v in _bound_vars(node):
            bound.add(v)
        key = (id(node), block)
        if key in visited:
            continue
        visited.add(key)
        new_blocks = scope_opening_children(node)
        for i, child in enumerate(children(node)):
            if i in new_blocks:
                cb = next_block[0]
                next_block[0] += 1
            else:
                cb = block
            stack.append((child, cb))
        if node is expr or isinstance(node, exempt_types):
            continue
        prev = used_in.get(id(node))
        if prev is None:
            used_in[id(node)] = (node, block)
        elif prev[1] != block:
            used_in[id(node)] = (node, None)
    for node, block in used_in.values():
        if block is None and not (isinstance(node, Var) and node in bound):
            try:  # str() prints with the text printer registered on the IR
                shown = str(node).strip().splitlines()[-1][:120]
            except Exception:  # noqa: BLE001 - the message is best effort
                shown = type(node).__name__
            raise NotBasicBlockNormalFormError(
                f"expression used from more than one block without a let binding: {shown}; "
                "bind it with a let in a block enclosing all its uses (ToBasicBlockNormalForm "
                "does this)")
    return True


__all__ = ["check_basic_block_normal_form", "NotBasicBlockNormalFormError"]

"""Loops as recursion (tvm.relay.loops): ``while_loop`` builds a recursive function that runs
the loop body while a condition holds.
"""

from __future__ import annotations

from .errors import RelayError
from .ir.expr import Function, If, Let, Tuple, Var


def _type_of(e):
    if isinstance(e, Var) and e.type_annotation is not None:
        return e.type_annotation
    from .typing.infer import infer_expr

    return infer_expr(e).checked_type


def while_loop(cond, loop_vars, loop_bodies):
    """A loop over the state ``loop_vars``: the result is a function ``loop(*state)`` returning
    the tuple of final state values.

    Each iteration tests ``cond(*state)`` (a boolean scalar expression); while it holds, the
    state becomes ``loop_bodies(*state)`` (a list with one new value per state variable);
    when it fails the state is returned as a tuple. The function is bound by a ``let`` to a
    variable ``while_loop`` that it calls recursively, so the expression returned is
    ``let %while_loop = fn (...) {...}; %while_loop``; call it on the initial values.

    Args:
        cond: ``(*state vars) -> Expr`` of type ``bool`` (shape ``()``).
        loop_vars: the initial state expressions (their types give the state variables').
        loop_bodies: ``(*state vars) -> list of Expr``, the next state.

    Raises:
        RelayError: ``loop_bodies`` returns a different number of values than there are
            state variables.
    """
    loop = Var("while_loop")
    state = []
    for i, v in enumerate(loop_vars):
        name = v.name_hint if isinstance(v, Var) else f"arg{i}"
        state.append(Var(name, _type_of(v)))
    nxt = list(loop_bodies(*state))
    if len(nxt) != len(state):
        raise RelayError(f"while_loop: loop_bodies returned {len(nxt)} values for "
                         f"{len(state)} loop variables")
    body = If(cond(*state), loop(*nxt), Tuple(state))
    return Let(loop, Function(state, body), loop)


__all__ = ["while_loop"]

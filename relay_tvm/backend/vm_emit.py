"""Helpers of the VM compiler (:mod:`relay_tvm.backend.vm_codegen`): the instruction list
format and its assembly into a Relax ``ExecBuilder``, the traversal order of expressions, tail
positions, and the checks that keep dynamic shapes out.

Instructions are tuples: ``(_CALL, function name, operands, destination register or None)``,
``(_IF, condition register, false offset)``, ``(_GOTO, offset)``, ``(_RET, register)``,
``(_FAIL, condition register)`` (a match test, patched into an ``_IF`` to the next clause) and
``(_LOOP,)`` (a jump back to the function's first instruction, for self tail calls).
"""

from __future__ import annotations

from ..errors import BuildError
from ..ir.adt import Constructor, Match
from ..ir.expr import (
    Call,
    Function,
    GlobalVar,
    If,
    Let,
    Var,
)
from ..ir.functor import children, post_order
from ..ir.types import TensorType, TupleType

# _FAIL: If(cond, to the next match clause); _LOOP: Goto(the function's first instruction)
_CALL, _IF, _GOTO, _RET, _FAIL, _LOOP = range(6)
_DIRECT_OPS = (GlobalVar, Var, Function, Constructor)


def _children(e) -> tuple:
    """The sub-expressions evaluated in ``e``'s own scope: ``If`` arms, ``Match`` clauses and
    nested functions are compiled in scopes of their own, binders are not values, and a call's
    callee is evaluated only when it is a computed function value (e.g. ``@compose(f, g)(x)``),
    not a direct global, variable, function, constructor or operator."""
    from ..op.registry import Op

    if type(e) is Function:
        return ()  # a closure: its body is compiled as a function of its own
    direct = type(e) is Call and isinstance(e.op, _DIRECT_OPS + (Op,))
    return children(e, binders=False, branches=False, callee=not direct)


def _post_order(expr, memo) -> list:
    return post_order(expr, _children, skip=memo.keys())


def _where(node) -> str:
    span = getattr(node, "span", None)
    return f" at {span}" if span is not None else ""


def _nbytes(t) -> int:
    from .memory_plan import tensor_bytes

    return tensor_bytes(t)


def _tail_positions(body) -> set:
    """ids of the expressions whose value is the function's result (through ``let`` bodies,
    ``if`` branches and ``match`` clauses)."""
    out, stack = set(), [body]
    while stack:
        e = stack.pop()
        out.add(id(e))
        t = type(e)
        if t is Let:
            stack.append(e.body)
        elif t is If:
            stack.extend((e.true_branch, e.false_branch))
        elif t is Match:
            stack.extend(c.rhs for c in e.clauses)
    return out


def _check_static_result(fn, node, fname):
    """A kernel whose result shape is only known at run time (``Any``) is out of reach."""
    stack = [node.checked_type]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, TensorType) and not all(isinstance(d, int) for d in t.shape):
            body = fn.body
            what = getattr(getattr(body, "op", None), "name", None) or "a fused kernel"
            raise BuildError(f"VM compiler: {what} in @{fname} produces a dynamic shape "
                             f"{t.shape}{_where(node)}; dynamic shapes are not supported yet",
                             node.span)


def _check_static(fname, p):
    """Dynamic shapes (``Any``) in the parameters of a function are out of the VM's reach."""
    stack = [p.checked_type]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, TensorType) and not all(isinstance(d, int) for d in t.shape):
            raise BuildError(f"VM compiler: @{fname} parameter %{p.name_hint} has a dynamic "
                             f"shape {t.shape}; dynamic shapes are not supported yet")


def _emit(ib, code):
    import tvm

    def arg(a):
        kind = a[0]
        if kind == "f":
            return ib.f(a[1])
        if kind == "r":
            return ib.r(a[1])
        if kind == "c":
            return ib.convert_constant(a[1])
        if kind == "i":
            return ib.convert_constant(a[1])
        if kind == "imm":
            return ib.imm(a[1])
        if kind == "state":
            return ib.vm_state()
        if kind == "shape":
            return a[1]
        if kind == "dt":
            return tvm.DataType(a[1])
        if kind == "str":
            return ib.convert_constant(a[1])
        raise AssertionError(a)

    for pc, ins in enumerate(code):
        if ins[0] == _LOOP:
            ib.emit_goto(-pc)
        elif ins[0] == _CALL:
            _, name, args, dst = ins
            ib.emit_call(name, args=[arg(a) for a in args],
                         dst=ib.r(dst) if dst is not None else None)
        elif ins[0] == _IF:
            ib.emit_if(ib.r(ins[1]), ins[2])
        elif ins[0] == _GOTO:
            ib.emit_goto(ins[1])
        elif ins[0] == _RET:
            ib.emit_ret(ib.r(ins[1]))

"""Helpers of the VM compiler (:mod:`relay_tvm.backend.vm_codegen`): the instruction list
format and its assembly into a Relax ``ExecBuilder``, the traversal order of expressions and tail
positions.

Instructions are tuples: ``(_CALL, function name, operands, destination register or None)``,
``(_IF, condition register, false offset)``, ``(_GOTO, offset)``, ``(_RET, register)``,
``(_FAIL, condition register)`` (a match test, patched into an ``_IF`` to the next clause) and
``(_LOOP,)`` (a jump back to the function's first instruction, for self tail calls).
"""

from __future__ import annotations

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


def _reads(ins) -> list:
    if ins[0] == _CALL:
        return [a[1] for a in ins[2] if a[0] == "r"]
    if ins[0] in (_IF, _RET, _FAIL):
        return [ins[1]]
    return []


_ALLOCS = ("vm.builtin.alloc_storage", "vm.builtin.alloc_tensor")


def insert_kills(code, n_fixed: int) -> list:
    """``code`` with ``vm.builtin.null_value`` written into each register that holds a tensor
    or storage the function allocated, after its last read, so that a dead tensor's storage
    goes back to the VM's pooled allocator at once (values copied elsewhere or returned stay
    referenced there). Without it every intermediate stays alive until the function returns,
    and a network's working set is the sum of all its activations, not the few live ones:
    ResNet-18 on the VM went from 1.17x to 1.04-1.08x the graph executor's time (2 threads).

    The last read is the textual one: jumps are forward except ``_LOOP`` (a self tail call back
    to the first instruction), before which every register but the first ``n_fixed``
    (parameters, rewritten by the tail call, and captured values, which are not) is written
    again before it is read; those are never killed. A kill after a branch's last read runs on
    that path only; a path that skips it keeps the value until the function returns."""
    last, storage = {}, set()
    for pc, ins in enumerate(code):
        for r in _reads(ins):
            last[r] = pc
        if ins[0] == _CALL and ins[1] in _ALLOCS and ins[3] is not None:
            storage.add(ins[3])
    kills = {}
    for r, pc in last.items():
        if r in storage and r >= n_fixed and code[pc][0] in (_CALL, _IF):
            kills.setdefault(pc, []).append(r)
    if not kills:
        return code
    out, new_pc = [], []
    for pc, ins in enumerate(code):
        new_pc.append(len(out))
        out.append(ins)
        for r in sorted(kills.get(pc, ())):
            out.append((_CALL, "vm.builtin.null_value", [], r))
    new_pc.append(len(out))
    for pc, ins in enumerate(code):
        if ins[0] in (_IF, _GOTO):
            at = new_pc[pc]
            off = ins[-1]
            out[at] = (*ins[:-1], new_pc[pc + off] - at)
    return out


def call_depth(codes: dict):
    """The deepest nesting of VM function calls the functions ``codes`` (``name -> instruction
    list``) can make, or None when it is unbounded: a cycle in the call graph (recursion that
    is not a self tail call, which is a jump) or a call of a closure
    (``vm.builtin.invoke_closure``, whose callee is not known here). The runtime runs a program
    of bounded depth on the caller's thread and others on a thread with a big stack (see
    :class:`relay_tvm.runtime.vm.VirtualMachine`)."""
    callees = {}
    for name, code in codes.items():
        out = set()
        for ins in code:
            if ins[0] != _CALL:
                continue
            if ins[1] == "vm.builtin.invoke_closure":
                return None
            if ins[1] in codes:
                out.add(ins[1])
        callees[name] = out
    depth: dict = {}
    on_path: set = set()
    for root in codes:
        if root in depth:
            continue
        stack = [(root, iter(sorted(callees[root])))]
        on_path.add(root)
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                on_path.discard(name)
                depth[name] = 1 + max((depth[c] for c in callees[name]), default=0)
            elif nxt in on_path:
                return None
            elif nxt not in depth:
                on_path.add(nxt)
                stack.append((nxt, iter(sorted(callees[nxt]))))
    return max(depth.values(), default=0)


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

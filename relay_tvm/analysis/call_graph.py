"""``CallGraph`` (tvm.relay.analysis.CallGraph): which global functions of a module refer to
which. An edge goes from a function to a global function for every reference to it in the body
(each call site counts; a global function passed as a value counts too)."""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import Call, GlobalVar
from ..ir.functor import children


def _references(func) -> list:
    """The GlobalVars ``func`` refers to, one entry per reference (iterative walk; a shared
    sub-expression is walked once, as it is evaluated once)."""
    out, seen, stack = [], set(), [func]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        kids = list(children(e))
        if type(e) is Call and type(e.op) is GlobalVar:
            out.append(e.op)
            kids = list(e.args)
        elif type(e) is GlobalVar:
            out.append(e)
        stack.extend(kids)
    return out


class CallGraph:
    """The call graph of ``module``.

    Args:
        module: an :class:`~relay_tvm.IRModule`.

    Functions are named by ``GlobalVar`` or by name in every method.
    """

    def __init__(self, module):
        self.module = module
        self._callees = {gv: _references(f) for gv, f in module.functions.items()}

    def _gv(self, var) -> GlobalVar:
        gv = self.module.get_global_var(var) if isinstance(var, str) else var
        if gv not in self._callees:
            raise RelayError(f"CallGraph: @{gv.name_hint} is not a function of the module")
        return gv

    def global_call_count(self, var) -> int:
        """How many references to global functions the function ``var`` makes."""
        return len(self._callees[self._gv(var)])

    def ref_count(self, var) -> int:
        """How many references to ``var`` the module's functions make (itself included)."""
        gv = self._gv(var)
        return sum(c.count(gv) for c in self._callees.values())

    def is_recursive(self, var) -> bool:
        """Whether ``var`` can reach itself through references."""
        gv = self._gv(var)
        stack, seen = list(self._callees[gv]), set()
        while stack:
            g = stack.pop()
            if g is gv:
                return True
            if g in seen or g not in self._callees:
                continue
            seen.add(g)
            stack.extend(self._callees[g])
        return False

    def print_var(self, var) -> str:
        """The node of ``var``: its reference count and the functions it refers to."""
        gv = self._gv(var)
        lines = [f"Call graph node: {gv.name_hint} at: {id(gv):#x},  #refs = {self.ref_count(gv)}"]
        lines += [f"  call site: <{i}> calls {c.name_hint}"
                  for i, c in enumerate(self._callees[gv])]
        return "\n".join(lines) + "\n"

    def __str__(self):
        return "".join(self.print_var(gv) for gv in self._callees)


__all__ = ["CallGraph"]

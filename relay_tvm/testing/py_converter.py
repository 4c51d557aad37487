"""Relay to Python (tvm.relay.testing.py_converter): ``to_python`` writes a Relay program as
Python source, ``run_as_python`` runs it.

Each global function becomes a Python function, a Relay closure a nested ``def`` (closures
capture as Python closures do), ``let`` an assignment, ``if`` and ``match`` Python ``if``
chains, references :class:`~relay_tvm.runtime.interpreter.RefValue` cells and ADT values
:class:`~relay_tvm.runtime.interpreter.ConstructorValue`. Operator calls run the operators'
NumPy reference kernels (those of the reference interpreter; tvm.relay 0.19 compiled each
operator with TVM instead: the values are the same up to floating-point rounding).

Values returned by ``run_as_python``: tensors as ``tvm.runtime.Tensor`` (``tvm.nd.NDArray``),
tuples as Python tuples (``tvm.runtime.container.ADT``), ADT values and references with
their tensors converted likewise, functions as Python callables taking NumPy arrays or
tvm tensors.

The translation walks dataflow and ``let`` chains iteratively; it recurses only into nested
scopes (function bodies, branches, clauses), so the Python nesting follows the program's.
"""

from __future__ import annotations

import numpy as np

from ..errors import RelayError
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
from ..ir.module import IRModule
from ..op.registry import Op
from ..runtime.interpreter import ConstructorValue, RefValue, _match


class _Gen:
    def __init__(self, mod):
        self.mod = mod
        self.lines: list = []
        self.consts: list = []  # objects the generated code refers to as _k[i]
        self.names: dict = {}  # Var -> Python name
        self.gnames = {gv: f"_g{i}_{_ident(gv.name_hint)}" for i, gv in
                       enumerate(mod.get_global_vars())}
        self.tmp = 0

    def ref(self, obj) -> str:
        self.consts.append(obj)
        return f"_k[{len(self.consts) - 1}]"

    def fresh(self, hint="t") -> str:
        self.tmp += 1
        return f"{hint}{self.tmp}"

    def bind(self, v: Var) -> str:
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = f"v{len(self.names)}_{_ident(v.name_hint)}"
        return name

    def emit(self, ind: int, line: str) -> None:
        self.lines.append("    " * ind + line)

    def function(self, name: str, func: Function, ind: int) -> None:
        params = [self.bind(p) for p in func.params]
        self.emit(ind, f"def {name}({', '.join(params)}):")
        res = self.block(func.body, ind + 1, {})
        self.emit(ind + 1, f"return {res}")

    def block(self, root, ind: int, outer: dict) -> str:
        """Emit the statements computing ``root`` at indentation ``ind``; return the Python
        expression of its value. ``outer`` maps nodes computed in enclosing scopes."""
        memo = dict(outer)
        work = [(0, root)]
        while work:
            state, e = work.pop()
            if e in memo:
                continue
            t = type(e)
            if state == 0:
                kids = self._dataflow_children(e)
                if t is Let:
                    if type(e.value) is Function:  # a local function may call itself
                        self.bind(e.var)
                    work.append((2, e))
                    work.append((0, e.value))
                    continue
                work.append((1, e))
                work.extend((0, k) for k in reversed(kids))
                continue
            if state == 2:  # let: value done, bind it, then the body
                self.emit(ind, f"{self.bind(e.var)} = {memo[e.value]}")
                work.append((3, e))
                work.append((0, e.body))
                continue
            if state == 3:
                memo[e] = memo[e.body]
                continue
            memo[e] = self.node(e, ind, memo)
        return memo[root]

    @staticmethod
    def _dataflow_children(e) -> list:
        t = type(e)
        if t is Call:
            return ([] if isinstance(e.op, (Op, Constructor)) else [e.op]) + list(e.args)
        if t is Tuple:
            return list(e.fields)
        if t is TupleGetItem:
            return [e.tuple_value]
        if t is RefCreate:
            return [e.value]
        if t is RefRead:
            return [e.ref]
        if t is RefWrite:
            return [e.ref, e.value]
        if t is If:
            return [e.cond]
        if t is Match:
            return [e.data]
        return []

    def node(self, e, ind: int, memo: dict) -> str:
        t = type(e)
        if t is Var:
            if e not in self.names:
                raise RelayError(f"to_python: free variable %{e.name_hint}")
            return self.names[e]
        if t is Constant:
            return self.ref(e.data)
        if t is GlobalVar:
            return self.gnames[e]
        if t is Constructor:
            return f"(lambda *a: _CV({self.ref(e)}, a))"
        if t is Op:
            raise RelayError(f"to_python: operator {e.name} used as a value (not called)")
        out = self.fresh()
        if t is Call:
            args = ", ".join(memo[a] for a in e.args)
            if isinstance(e.op, Op):
                self.emit(ind, f"{out} = _op({self.ref(e)}, [{args}])")
            elif isinstance(e.op, Constructor):
                self.emit(ind, f"{out} = _CV({self.ref(e.op)}, [{args}])")
            else:
                self.emit(ind, f"{out} = {memo[e.op]}({args})")
        elif t is Tuple:
            self.emit(ind, f"{out} = ({''.join(memo[f] + ', ' for f in e.fields)})")
        elif t is TupleGetItem:
            self.emit(ind, f"{out} = {memo[e.tuple_value]}[{e.index}]")
        elif t is RefCreate:
            self.emit(ind, f"{out} = _Ref({memo[e.value]})")
        elif t is RefRead:
            self.emit(ind, f"{out} = {memo[e.ref]}.value")
        elif t is RefWrite:
            self.emit(ind, f"{memo[e.ref]}.value = {memo[e.value]}")
            self.emit(ind, f"{out} = ()")
        elif t is If:
            self.emit(ind, f"if bool(_np.asarray({memo[e.cond]})):")
            self.emit(ind + 1, f"{out} = {self.block(e.true_branch, ind + 1, memo)}")
            self.emit(ind, "else:")
            self.emit(ind + 1, f"{out} = {self.block(e.false_branch, ind + 1, memo)}")
        elif t is Match:
            binds = self.fresh("b")
            for i, c in enumerate(e.clauses):
                self.emit(ind, f"{'if' if i == 0 else 'elif'} ({binds} := _bind({self.ref(c.lhs)}, "
                               f"{memo[e.data]})) is not None:")
                from ..ir.adt import pattern_vars

                for v in pattern_vars(c.lhs):
                    self.emit(ind + 1, f"{self.bind(v)} = {binds}[{self.ref(v)}]")
                self.emit(ind + 1, f"{out} = {self.block(c.rhs, ind + 1, memo)}")
            self.emit(ind, "else:")
            self.emit(ind + 1, "raise _NoMatch(" + repr("no match clause applies") + ")")
        elif t is Function:
            self.function(out, e, ind)
        else:
            raise RelayError(f"to_python: unsupported expression {t.__name__}")
        return out


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)[:40]


def _bind(pattern, value):
    """The variable bindings when ``value`` matches ``pattern``, else None."""
    binds: dict = {}
    return binds if _match(pattern, value, binds) else None


def _run_op(call, args):
    from ..runtime.interpreter import Interpreter

    return Interpreter.call_op(None, call.op, list(args), call)


_ENTRY = "__relay_to_python_entry"


def _module_for(expr, mod):
    from ..transform import InferType

    if hasattr(expr, "astuple"):  # a TupleWrapper (e.g. split's result)
        expr = expr.astuple()
    mod = IRModule() if mod is None else mod.copy()
    mod[_ENTRY] = Function([], expr)
    return InferType()(mod)


def to_python(expr, mod=None, target="llvm"):
    """Python source for ``expr`` (a Relay expression, with the functions and types of ``mod``)
    and the objects it refers to.

    Returns:
        ``(source, namespace)``: ``exec(source, namespace)`` defines ``_main()``, which computes
        the value of ``expr`` (NumPy arrays for tensors). ``target`` is accepted for
        tvm.relay's signature; operators run their NumPy reference kernels.

    Raises:
        RelayError: a free variable, or an operator used as a value.
    """
    del target
    mod = _module_for(expr, mod)
    gen = _Gen(mod)
    for gv in mod.get_global_vars():
        if gv.name_hint != _ENTRY:
            gen.function(gen.gnames[gv], mod[gv], 0)
    gen.function("_main", mod[_ENTRY], 0)
    ns = {"_k": gen.consts, "_np": np, "_CV": ConstructorValue, "_Ref": RefValue,
          "_bind": _bind, "_op": _run_op, "_NoMatch": _NoMatch}
    return "\n".join(gen.lines) + "\n", ns


class _NoMatch(RelayError):
    """No clause of a ``match`` applies to the value (an incomplete match at run time)."""


def _to_tvm(v):
    """Run-time values as tvm.relay returned them: tensors as tvm tensors, recursively; a
    function takes NumPy arrays or tvm tensors."""
    import tvm

    from ..runtime.interpreter import to_value

    if isinstance(v, (np.ndarray, np.generic)):
        return tvm.runtime.tensor(np.array(v, order="C"))
    if isinstance(v, tuple):
        return tuple(_to_tvm(x) for x in v)
    if isinstance(v, ConstructorValue):
        return ConstructorValue(v.constructor, [_to_tvm(f) for f in v.fields])
    if isinstance(v, RefValue):
        v.value = _to_tvm(v.value)
        return v
    if callable(v):
        return lambda *args: _to_tvm(v(*(to_value(a) for a in args)))
    return v


def run_as_python(expr, mod=None, target="llvm"):
    """Evaluate ``expr`` by running the Python that :func:`to_python` writes for it.

    Args:
        expr: a Relay expression without free variables.
        mod: an :class:`IRModule` with the global functions and types ``expr`` uses.
        target: accepted for tvm.relay's signature (operators run NumPy reference kernels).

    Returns:
        the value (see the module docstring for how values are represented).
    """
    source, ns = to_python(expr, mod, target)
    exec(compile(source, "<relay to_python>", "exec"), ns)  # noqa: S102 - generated here
    return _to_tvm(ns["_main"]())


__all__ = ["to_python", "run_as_python"]

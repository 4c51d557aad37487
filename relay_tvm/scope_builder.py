"""ScopeBuilder: build nested lets and if/else in Python, as tvm.relay.ScopeBuilder did.

Example::

    sb = ScopeBuilder()
    x = sb.let("x", relay.const(1.0))
    with sb.if_scope(cond):
        sb.ret(x)
    with sb.else_scope():
        sb.ret(relay.const(2.0))
    body = sb.get()
"""

from __future__ import annotations

from .errors import RelayError
from .ir.expr import If, Let, Var


class _Scope:
    def __init__(self, builder, enter, exit_):
        self._enter, self._exit = enter, exit_

    def __enter__(self):
        self._enter()
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self._exit()
        return False


class ScopeBuilder:
    """Accumulate ``let`` bindings and branches; ``get()`` returns the nested expression."""

    def __init__(self):
        self._bindings = [[]]
        self._ret_values = [None]
        self._pending_if = None

    def let(self, var, value):
        """Bind ``value`` to ``var`` (a Var, a name, or a ``(name, type)`` pair); returns the Var."""
        if isinstance(var, str):
            var = Var(var)
        elif isinstance(var, (tuple, list)):
            if len(var) != 2:
                raise RelayError("ScopeBuilder.let: expected (name, type)")
            var = Var(var[0], var[1])
        self._bindings[-1].append((var, value))
        return var

    def _enter(self):
        self._bindings.append([])
        self._ret_values.append(None)

    def _exit(self):
        bindings = self._bindings.pop()
        ret = self._ret_values.pop()
        if ret is None:
            raise RelayError("ScopeBuilder: a scope ended without ret()")
        return _nest(bindings, ret)

    def if_scope(self, cond):
        def exit_():
            self._pending_if = (cond, self._exit(), None)

        return _Scope(self, self._enter, exit_)

    def else_scope(self):
        if self._pending_if is None:
            raise RelayError("ScopeBuilder: else_scope() without a preceding if_scope()")

        def exit_():
            cond, t, _ = self._pending_if
            f = self._exit()
            self._pending_if = None
            self._bindings[-1].append((None, If(cond, t, f)))

        return _Scope(self, self._enter, exit_)

    def type_of(self, expr):
        from .typing.infer import InferTypeLocal

        return InferTypeLocal(expr)

    def ret(self, value):
        if self._ret_values[-1] is not None:
            raise RelayError("ScopeBuilder: ret() called twice in one scope")
        self._ret_values[-1] = value

    def get(self):
        """The built expression."""
        if len(self._bindings) != 1:
            raise RelayError("ScopeBuilder: get() inside an open scope")
        bindings = self._bindings[-1]
        ret = self._ret_values[-1]
        if ret is None:
            if bindings and bindings[-1][0] is None:
                ret = bindings.pop()[1]
            else:
                raise RelayError("ScopeBuilder: get() before ret()")
        return _nest(bindings, ret)


def _nest(bindings, ret):
    body = ret
    for var, value in reversed(bindings):
        if var is None:
            # an if/else whose value is discarded: bind it to a fresh variable
            var = Var("_")
        body = Let(var, value, body)
    return body


__all__ = ["ScopeBuilder"]

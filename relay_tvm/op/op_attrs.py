"""Per-operator attributes users set and override (tvm.relay 0.19's ``register_op_attr`` and
the ``register_alter_op_layout`` / ``register_convert_op_layout`` / ``register_legalize``
hooks).

The passes look the hooks up by key:

- ``"FTVMAlterOpLayout"``: ``f(attrs, inputs, tinfos, out_type) -> Expr | None`` replaces a
  call in :func:`~relay_tvm.transform.AlterOpLayout` (``None``: keep it).
- ``"FTVMConvertOpLayout"``: ``f(attrs, inputs, tinfos, desired_layouts) -> Expr | None``
  replaces a call in :func:`~relay_tvm.transform.ConvertLayout`.
- ``"FTVMLegalize"``: ``f(attrs, inputs, types) -> Expr | None`` replaces a call in
  :func:`~relay_tvm.transform.Legalize`.

``attrs`` is the call's :class:`Attrs`, ``inputs`` the (already rewritten) argument
expressions, ``tinfos`` / ``types`` the arguments' checked :class:`TensorType`\\ s (with
``.shape`` and ``.dtype``, as 0.19's ``te`` placeholders had), ``out_type`` the call's type.
A hook that returns ``None`` leaves the call to the built-in rule.
"""

from __future__ import annotations

import contextlib
from typing import Callable

from ..errors import RelayError

_ATTRS: dict = {}  # (op name, key) -> (value, level)

HOOK_KEYS = ("FTVMAlterOpLayout", "FTVMConvertOpLayout", "FTVMLegalize")


def _check_op(op_name: str) -> str:
    from .registry import is_registered

    if not isinstance(op_name, str):
        op_name = getattr(op_name, "name", op_name)
    if not is_registered(op_name):
        raise RelayError(f"register_op_attr: no operator named {op_name!r}")
    return op_name


def register_op_attr(op_name: str, attr_key: str, value=None, level: int = 10):
    """Set attribute ``attr_key`` of operator ``op_name`` to ``value`` (a decorator when
    ``value`` is None). A value already set at a higher ``level`` is kept, one at the same
    level is an error (0.19's rule); ``level`` > 100 overrides."""
    op_name = _check_op(op_name)

    def register(v):
        old = _ATTRS.get((op_name, attr_key))
        if old is not None and old[1] >= level and level <= 100:
            if old[1] == level:
                raise RelayError(f"attribute {attr_key} of {op_name} is already registered at "
                                 f"level {level}")
            return v
        _ATTRS[(op_name, attr_key)] = (v, level)
        return v

    return register(value) if value is not None else register


def get_op_attr(op_name: str, attr_key: str):
    """The value set for ``attr_key`` of ``op_name``, or None."""
    entry = _ATTRS.get((op_name, attr_key))
    return entry[0] if entry else None


def reset_op_attr(op_name: str, attr_key: str) -> None:
    """Remove ``attr_key`` of ``op_name`` (0.19's ``Op.reset_attr``)."""
    _ATTRS.pop((_check_op(op_name), attr_key), None)


@contextlib.contextmanager
def temp_op_attr(op_name: str, attr_key: str, attr_value):
    """Set ``attr_key`` of ``op_name`` to ``attr_value`` inside the ``with`` block and restore
    the previous value after (tvm.relay.testing's ``TempOpAttr``)."""
    op_name = _check_op(op_name)
    old = _ATTRS.get((op_name, attr_key))
    _ATTRS[(op_name, attr_key)] = (attr_value, 10**6)
    try:
        yield
    finally:
        if old is None:
            _ATTRS.pop((op_name, attr_key), None)
        else:
            _ATTRS[(op_name, attr_key)] = old


class TempOpAttr:
    """``with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", f):`` (tvm.relay.testing)."""

    def __init__(self, op_name: str, attr_key: str, attr_value):
        self._cm = temp_op_attr(op_name, attr_key, attr_value)

    def __enter__(self):
        self._cm.__enter__()
        return self

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _hook_register(key: str):
    def register(op_name: str, fn: Callable | None = None, level: int = 10):
        return register_op_attr(op_name, key, fn, level)

    return register


register_alter_op_layout = _hook_register("FTVMAlterOpLayout")
register_alter_op_layout.__doc__ = "Set the AlterOpLayout hook of an operator (see module doc)."
register_convert_op_layout = _hook_register("FTVMConvertOpLayout")
register_convert_op_layout.__doc__ = "Set the ConvertLayout hook of an operator (module doc)."
register_legalize = _hook_register("FTVMLegalize")
register_legalize.__doc__ = "Set the Legalize hook of an operator (see module doc)."


def register_infer_correct_layout(op_name: str, fn: Callable | None = None, level: int = 10):
    """tvm.relay 0.19's ``register_infer_correct_layout``: refused.

    relay_tvm's layout passes carry layouts through operators with their own rules (see
    :mod:`relay_tvm.transform.layout`) and would never call an ``FInferCorrectLayout``
    function, so registering one raises instead of being ignored. Change how an operator is
    rewritten with :func:`register_convert_op_layout` / :func:`register_alter_op_layout`.

    Raises:
        RelayError: always, naming the operator.
    """
    raise RelayError(f"register_infer_correct_layout({op_name!r}): relay_tvm's layout passes do "
                     "not call FInferCorrectLayout functions (they have their own propagation "
                     "rules); use register_convert_op_layout / register_alter_op_layout to change "
                     "how an operator is rewritten")


def apply_hook(key: str, call, orig, *extra):
    """Run the ``key`` hook of ``call``'s operator, if any, on the rewritten ``call`` whose
    original (typed) form is ``orig``; returns the replacement or None."""
    from ..ir.expr import Call
    from .registry import Op

    if type(call) is not Call or not isinstance(call.op, Op):
        return None
    fn = get_op_attr(call.op.name, key)
    if fn is None:
        return None
    types = [a.checked_type for a in orig.args]
    if key in ("FTVMLegalize", "FTVMQnnLegalize", "FTVMQnnCanonicalize"):
        out = fn(call.attrs, list(call.args), types + [orig.checked_type])
    elif key == "FTVMAlterOpLayout":
        out = fn(call.attrs, list(call.args), types, orig.checked_type)
    else:
        out = fn(call.attrs, list(call.args), types, *extra)
    if out is None or out is call:
        return None
    from ..ir.base import RelayExpr

    if not isinstance(out, RelayExpr):
        raise RelayError(f"the {key} hook of {call.op.name} returned {type(out).__name__}, "
                         "not a Relay expression or None")
    return out


__all__ = ["register_op_attr", "get_op_attr", "reset_op_attr", "temp_op_attr", "TempOpAttr",
           "register_alter_op_layout", "register_convert_op_layout", "register_legalize"]

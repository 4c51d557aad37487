"""LazyGradientInit: stop materializing the zero- and one-filled tensors that gradient programs
start their accumulators with (tvm.relay.transform.LazyGradientInit).

Relay's pass wraps tensors in a ``GradCell`` ADT (``Raw`` / ``One`` / ``Zero``) so that a zero
tensor is never allocated; relay_tvm reaches the same end with algebraic identities on the
(partially evaluated) program, which keeps it a plain dataflow program the graph executor can
compile:

- ``add(zeros, b)`` / ``add(b, zeros)`` -> ``b`` and ``subtract(b, zeros)`` -> ``b``,
- ``multiply(ones, b)`` / ``multiply(b, ones)`` -> ``b``,
- ``collapse_sum_like(g, x)``, ``broadcast_to_like(g, x)``, ``reshape_like(g, x)`` -> ``g``,

each only when ``b`` / ``g`` already has the result's type (no broadcasting is skipped). Here
``zeros`` is ``zeros``/``zeros_like`` or a variable bound to one (likewise ``ones``). IEEE
arithmetic keeps these exact (``x + 0 = x``, ``x * 1 = x``, NaN included) up to the sign of a zero.
Run ``DeadCodeElimination`` after it to drop the unused fills.
"""

from __future__ import annotations

from ..ir.expr import Call, Let
from ..ir.functor import ExprMutator, post_order
from .pass_infra import ModulePass, PassInfo

_ZERO = ("zeros", "zeros_like")
_ONE = ("ones", "ones_like")
_LIKE = ("collapse_sum_like", "broadcast_to_like", "reshape_like")


def _op_name(e):
    return getattr(getattr(e, "op", None), "name", None) if type(e) is Call else None


class _Lazy(ExprMutator):
    def __init__(self, fill):
        super().__init__()
        self.fill = fill  # node (call or let-bound var) -> "zero" / "one"

    def visit_call(self, e):
        new = super().visit_call(e)
        name = _op_name(e)
        if name is None or len(e.args) != 2:
            return new
        a, b = e.args
        try:
            out_t = e.checked_type
        except Exception:  # noqa: BLE001
            return new
        na, nb = new.args

        def keeps(orig):
            return getattr(orig, "_checked_type", None) == out_t

        if name == "add":
            if self.fill.get(a) == "zero" and keeps(b):
                return nb
            if self.fill.get(b) == "zero" and keeps(a):
                return na
        elif name == "subtract":
            if self.fill.get(b) == "zero" and keeps(a):
                return na
        elif name == "multiply":
            if self.fill.get(a) == "one" and keeps(b):
                return nb
            if self.fill.get(b) == "one" and keeps(a):
                return na
        elif name in _LIKE and keeps(a):
            return na
        return new


def lazy_gradient_init(func):
    """The rewrite of the module docstring on the type-checked function ``func``."""
    fill = {}
    for e in post_order(func):
        name = _op_name(e)
        if name in _ZERO:
            fill[e] = "zero"
        elif name in _ONE:
            fill[e] = "one"
        elif type(e) is Let and e.value in fill:
            fill[e.var] = fill[e.value]
    if not fill:
        return func
    return _Lazy(fill).visit(func)


def LazyGradientInit():  # noqa: N802 - Relay's name
    """Remove additions of zero fills and multiplications by one fills (opt level 2); see the
    module docstring. The module is type-checked first."""

    def run(mod, ctx):
        from ..typing.infer import infer_module

        mod = infer_module(mod)
        out = mod.copy()
        for gv, f in mod.functions.items():
            if not f.is_primitive:
                out[gv] = lazy_gradient_init(f)
        return out

    return ModulePass(run, PassInfo(2, "LazyGradientInit"))


__all__ = ["LazyGradientInit", "lazy_gradient_init"]

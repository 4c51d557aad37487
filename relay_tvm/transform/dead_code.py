"""DeadCodeElimination: drop ``let`` bindings whose variable is never used (opt level 1).

Relay's ``dead_code.cc``: a binding is removed when its variable is unused and evaluating its
value has no side effect (no reference write, no call of an unknown function, see
:func:`relay_tvm.transform.normal_forms.has_effect`); with ``ignore_impurity=True`` effects are
ignored. With ``inline_once=True`` a side-effect-free binding used exactly once is inlined at its
use. Removal repeats until nothing changes, since dropping one binding can make another dead.
"""

from __future__ import annotations

from ..ir.expr import Function, Let, Var
from ._rewrite import Rewriter, post_order
from .normal_forms import EffectAnalysis
from .pass_infra import FunctionPass, PassInfo


def count_uses(expr) -> dict:
    """``Var -> number of distinct nodes using it`` (binding occurrences excluded)."""
    uses: dict = {}
    for n in post_order(expr):
        t = type(n)
        if t is Let:
            kids = (n.value, n.body)
        elif t is Function:
            kids = (n.body,)
        else:
            from ..ir.functor import children

            kids = children(n)
        for c in kids:
            if type(c) is Var:
                uses[c] = uses.get(c, 0) + 1
    return uses


class _DCE(Rewriter):
    has_let_hook = True

    def __init__(self, uses, inline_once, ignore_impurity):
        super().__init__()
        self.uses = uses
        self.inline_once = inline_once
        self.ignore_impurity = ignore_impurity
        self.effect = EffectAnalysis()

    def _pure(self, value) -> bool:
        return self.ignore_impurity or not self.effect(value)

    def after_let_value(self, let, new_value):
        if (self.inline_once and self.uses.get(let.var, 0) == 1 and self._pure(new_value)
                and not isinstance(new_value, Function)):
            self.memo[let.var] = new_value

    def post_let(self, orig, new):
        if type(new) is not Let:
            return new
        n = self.uses.get(orig.var, 0)
        if n == 0 and self._pure(new.value):
            return new.body
        if self.memo.get(orig.var) is not orig.var:
            return new.body  # inlined at its single use
        return new


def dead_code_elimination(func, inline_once=False, ignore_impurity=False):
    for _ in range(64):
        out = _DCE(count_uses(func), inline_once, ignore_impurity).rewrite(func)
        if out is func:
            break
        func = out
    return func


def DeadCodeElimination(inline_once: bool = False, ignore_impurity: bool = False):  # noqa: N802
    """Remove unused side-effect-free ``let`` bindings (opt level 1)."""

    def run(func, mod, ctx):
        return dead_code_elimination(func, inline_once, ignore_impurity)

    return FunctionPass(run, PassInfo(1, "DeadCodeElimination"))


__all__ = ["DeadCodeElimination", "dead_code_elimination", "count_uses"]

"""Automatic differentiation as a source-to-source transformation (``relay.transform.gradient``,
``relay.transform.FirstOrderGradient``).

The Relay paper (Roesch et al., MAPL 2018, section 4.2) defines reverse-mode AD on the whole
language by a program transformation; tvm.relay 0.19 exposes it as ``gradient(expr, mod, mode)``.
Two modes:

- ``"higher_order"`` (:mod:`._ad_higher_order`): works on every construct (``let``, ``if``,
  closures, local and global recursion, references, tuples, parametric ADTs); the result keeps
  backpropagators in closures and references, so it runs on the interpreter or the VM.
- ``"first_order"`` (:mod:`._ad_first_order`): dataflow programs only (operator calls, tuples,
  ``let``); the result is a plain dataflow program the graph executor compiles.

The per-operator rules are each operator's ``gradient`` in the registry (``FPrimalGradient``).
"""

from __future__ import annotations

from ..errors import GradientError
from ..ir.expr import Function, GlobalVar
from . import _ad_rules  # noqa: F401  (registers the rules written here)
from ._ad_common import infer
from ._ad_first_order import first_order_gradient
from ._ad_higher_order import higher_order_gradient
from .pass_infra import ModulePass, PassInfo

MODES = ("higher_order", "first_order")


def _typed(func: Function, mod):
    if getattr(func, "_checked_type", None) is not None:
        return func
    return infer(func, mod)


def gradient(expr, mod=None, mode: str = "higher_order") -> Function:
    """Reverse-mode automatic differentiation of a function (tvm.relay.transform.gradient).

    For ``fn(x1, ..., xn) -> t`` the result is ``fn(x1, ..., xn) -> (t, (dx1, ..., dxn))`` where
    ``dxi`` (the type of ``xi``) is the gradient of the sum of all elements of ``t`` (of every
    tensor in ``t`` when it is a tuple) with respect to ``xi``. Broadcast operands get gradients
    summed back to their own shape (``collapse_sum_like`` in the rules). Gradients flow through
    floating-point values only: a parameter that is not floating point (a condition, a
    counter, an index) gets a zero gradient. tvm.relay 0.19 applied the rules to integer
    tensors too (``x * x`` of an int32 ``x`` had the gradient ``2 * x``); here integers are
    constants of the differentiation.

    Args:
        expr: a :class:`Function` (type-checked, or type-checkable on its own / against ``mod``)
            or a :class:`GlobalVar` of ``mod``. Parameters are tensors or tuples of tensors;
            the result is a tensor or a (nested) tuple of tensors.
        mod: the module holding the globals ``expr`` calls. ``higher_order`` adds
            ``@name_grad`` for each global it reaches (their transformed versions) to it.
        mode: ``"higher_order"`` (whole language; backpropagators in closures and references)
            or ``"first_order"`` (dataflow only; no closures or references in the result).

    Returns:
        The transformed :class:`Function`, type-checked.

    Raises:
        GradientError: an unknown mode; ``expr`` is not a function; an operator without a
            gradient rule (``nn.conv3d``, ``nn.max_pool3d`` ...; ``_ad_rules`` lists them) on the path
            of the gradient (the message names it); ``first_order`` meeting control flow,
            closures or references.
    """
    if mode not in MODES:
        raise GradientError(f"gradient: unknown mode {mode!r}; expected one of {MODES}")
    if isinstance(expr, GlobalVar):
        if mod is None:
            raise GradientError(f"gradient: @{expr.name_hint} given without the module holding "
                                f"it (pass mod=)")
        expr = mod[expr]
    if not isinstance(expr, Function):
        raise GradientError(f"gradient: expected a Function or a GlobalVar, got "
                            f"{type(expr).__name__}")
    func = _typed(expr, mod)
    if mode == "first_order":
        out = first_order_gradient(func)
    else:
        out = higher_order_gradient(func, mod)
    return infer(out, mod)


def FirstOrderGradient():  # noqa: N802 - Relay's name
    """A module pass replacing every (non-primitive) global function by its first-order gradient
    (tvm.relay.transform.FirstOrderGradient); functions are differentiated independently.

    Raises:
        GradientError: as :func:`gradient` with ``mode="first_order"``.
    """

    def run(mod, ctx):
        from ..typing.infer import infer_module

        mod = infer_module(mod)
        out = mod.copy()
        for gv, f in mod.functions.items():
            if not f.is_primitive:
                out[gv] = first_order_gradient(f)
        return infer_module(out)

    return ModulePass(run, PassInfo(0, "FirstOrderGradient"))


__all__ = ["gradient", "FirstOrderGradient"]

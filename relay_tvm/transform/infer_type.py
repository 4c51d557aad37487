"""The InferType pass."""

from __future__ import annotations

from ..typing.infer import InferTypeLocal, infer_module
from .pass_infra import Pass, PassInfo


class _InferType(Pass):
    def __init__(self):
        super().__init__(PassInfo(0, "InferType"))

    def transform_module(self, mod, ctx):
        return infer_module(mod)


def InferType() -> Pass:  # noqa: N802 - Relay's name
    """Type inference over a whole module (opt level 0). Fills in ``checked_type`` of every
    expression, and, as tvm.relay 0.19's pass did, the inferred type of every variable bound
    without an annotation and the return type of every function without one (the functions
    are rebuilt; the module passed in is unchanged); raises
    :class:`relay_tvm.errors.TypeInferenceError` on a type error."""
    return _InferType()


__all__ = ["InferType", "InferTypeLocal"]

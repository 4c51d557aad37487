"""Legalize (tvm.relay 0.19's ``transform.Legalize``, opt level 1): replace each call whose
operator has an ``"FTVMLegalize"`` hook (``relay.op.register_legalize``) by what the hook
returns. relay_tvm's own operators need no legalization (every one has a compute for every
target), so the pass only runs user hooks; a hook returning ``None`` keeps the call.
"""

from __future__ import annotations

from ._rewrite import Rewriter
from .pass_infra import FunctionPass, PassInfo


class _Legalize(Rewriter):
    def __init__(self, key):
        super().__init__()
        self.key = key

    def post_call(self, orig, new):
        from ..op.op_attrs import apply_hook

        out = apply_hook(self.key, new, orig)
        return new if out is None else out


def legalize(func, mod=None, key="FTVMLegalize"):
    """``func`` (type-checked) with the ``key`` hooks of its operators applied."""
    return _Legalize(key).rewrite(func)


def Legalize(legalize_map_attr_name="FTVMLegalize"):  # noqa: N802 - Relay's name
    """The Legalize pass (opt level 1): runs the operators' legalize hooks."""
    return FunctionPass(lambda f, m, c: legalize(f, m, legalize_map_attr_name),
                        PassInfo(1, "Legalize", ("InferType",)))


__all__ = ["Legalize", "legalize"]

"""The default optimization pipeline ``relay.build`` runs (Relay's ``build_module.cc`` order)."""

from __future__ import annotations

from .pass_infra import PassContext, Sequential, get_pass

# Relay's order; each pass runs when the PassContext's opt_level reaches the pass's own level.
DEFAULT_PASS_ORDER = (
    "SimplifyInference",
    "EliminateCommonSubexpr",
    "FoldConstant",
    "FoldScaleAxis",
    "SimplifyExpr",
    "CanonicalizeOps",
    "FlattenAtrousConv",
    "AlterOpLayout",
    "FastMath",  # opt level 4: runs when asked for (required_pass=["FastMath"]) or at 4
    "FoldConstant",
    "FuseOps",
)


def default_pipeline(opt_level: int | None = None, fuse: bool = True) -> Sequential:
    """The passes ``relay.build`` / ``relay.optimize`` run, in Relay's order: SimplifyInference,
    EliminateCommonSubexpr, FoldConstant, FoldScaleAxis, SimplifyExpr, CanonicalizeOps,
    FlattenAtrousConv, AlterOpLayout, FastMath (opt level 4), FoldConstant, FuseOps (then
    InferType).

    Args:
        opt_level: unused for construction (each pass checks the current
            :class:`PassContext`'s ``opt_level`` when the Sequential runs); kept for the
            backend's call signature. ``None`` means the current context's level.
        fuse: include FuseOps at the end (``relay.optimize`` leaves it out when asked to).

    Returns:
        a :class:`Sequential` to call on a module inside a ``PassContext``.
    """
    if opt_level is None:
        opt_level = PassContext.current().opt_level
    from ..qnn.transform import qnn_lowering

    passes = [_QnnFirst(qnn_lowering())]  # qnn ops to integer Relay code, at every level
    names = [n for n in DEFAULT_PASS_ORDER if fuse or n != "FuseOps"]
    passes += [get_pass(name)() for name in names]
    passes.append(get_pass("InferType")())
    return Sequential(passes, opt_level=0, name="default_pipeline")


class _QnnFirst:
    """Runs the qnn lowering only on modules that call a qnn operator (0.19's build ran
    ``qnn.transform.Legalize`` and ``CanonicalizeOps`` first, whatever the opt level)."""

    name = "QnnLowering"  # qnn.transform.Legalize + CanonicalizeOps

    def __init__(self, seq):
        self.seq = seq
        self.info = seq.info

    def __call__(self, mod):
        from ..qnn.transform import has_qnn

        if any(has_qnn(f) for f in mod.functions.values() if hasattr(f, "body")):
            return self.seq(mod)
        return mod


__all__ = ["default_pipeline", "DEFAULT_PASS_ORDER"]

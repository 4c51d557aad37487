"""What a model costs: operator counts, multiply-accumulates, parameters, kernels after fusion
and the memory the graph executor plans (``relay-tvm show --stats``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import BuildError


@dataclass
class ModelStats:
    """Statistics of one model (see :func:`model_stats`).

    Attributes:
        op_counts: ``operator name -> number of calls`` in the program as given (every function).
        macs: multiply-accumulates of the convolutions, transposed convolutions, dense and
            batch-matmul calls (``relay.analysis.get_total_mac_number``), one inference.
        num_params: scalars in the weights: the arrays of ``params`` plus the constants of the
            program.
        param_bytes: bytes of those weights.
        num_kernel_calls: kernels the compiled graph runs per inference (fused groups, plus any
            run-time layout packing), from lowering at ``opt_level``.
        num_kernels: distinct kernels compiled (structurally equal groups share one).
        planned_bytes: bytes the static memory plan allocates for the operators' outputs
            (storage shared between values whose lifetimes do not overlap).
        intermediate_bytes: bytes of all operator outputs without sharing.
        num_storages: storage buffers of the plan.
        note: why the compiled-graph figures are missing (a program the graph executor cannot
            run, e.g. control flow), else ``""``.
    """

    op_counts: dict = field(default_factory=dict)
    macs: int = 0
    num_params: int = 0
    param_bytes: int = 0
    num_kernel_calls: int | None = None
    num_kernels: int | None = None
    planned_bytes: int | None = None
    intermediate_bytes: int | None = None
    num_storages: int | None = None
    note: str = ""

    def format(self) -> str:
        """A human-readable table."""
        lines = ["operators (calls):"]
        width = max((len(k) for k in self.op_counts), default=0)
        for name, n in sorted(self.op_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {name:<{width}}  {n}")
        lines.append(f"operator calls        {sum(self.op_counts.values())}")
        lines.append(f"MACs                  {self.macs:,} ({self.macs / 1e9:.3f} GMAC)")
        lines.append(f"parameters            {self.num_params:,} ({_mib(self.param_bytes)})")
        if self.num_kernel_calls is None:
            lines.append(f"kernels / memory      not available: {self.note}")
        else:
            lines.append(f"kernels after fusion  {self.num_kernel_calls} calls of "
                         f"{self.num_kernels} distinct kernels")
            lines.append(f"planned memory        {_mib(self.planned_bytes)} in "
                         f"{self.num_storages} buffers (all intermediates: "
                         f"{_mib(self.intermediate_bytes)})")
        return "\n".join(lines)


def _mib(n: int) -> str:
    return f"{n:,} bytes = {n / 2**20:.2f} MiB"


def _constants(mod):
    from ..ir.expr import Constant
    from ..ir.functor import post_order

    seen: set = set()
    for fn in mod.functions.values():
        for node in post_order(fn, skip=seen):
            seen.add(id(node))
            if type(node) is Constant:
                yield node.data


def model_stats(mod, params=None, target=None, opt_level: int = 3) -> ModelStats:
    """Statistics of a Relay model: what it computes and what the compiled graph needs.

    Operator counts and MACs are of the program as given; kernels and memory come from running
    ``relay.build``'s passes at ``opt_level`` and lowering the fused program (no machine code
    is generated) and the graph executor's static memory plan
    (:mod:`relay_tvm.backend.memory_plan`).

    Args:
        mod: ``IRModule`` (or ``Function``) with static shapes.
        params: ``name -> array`` of weights, bound as ``build`` binds them (counted as
            parameters).
        target: the target to plan for (``"llvm"`` when None); packed layouts depend on it.
        opt_level: the ``PassContext`` opt level of the build (fusion from 1).

    Returns:
        :class:`ModelStats`; the kernel and memory figures are None, with ``note`` saying why,
        for a program the graph executor cannot run (control flow, closures, dynamic shapes).

    Raises:
        TypeInferenceError: the program does not type-check.
    """
    from ..analysis import get_total_mac_number, list_op_freqs
    from ..backend.build_module import _as_module
    from ..backend.build_module import optimize_module as optimize
    from ..backend.graph_codegen import build_graph
    from ..backend.lower import LowerCache
    from ..backend.target import make_target
    from ..transform import InferType, PassContext

    mod = InferType()(_as_module(mod))
    weights = [np.asarray(v.numpy() if hasattr(v, "numpy") else v)
               for v in (params or {}).values()]
    weights += list(_constants(mod))
    stats = ModelStats(op_counts=list_op_freqs(mod), macs=int(get_total_mac_number(mod)),
                       num_params=int(sum(w.size for w in weights)),
                       param_bytes=int(sum(w.nbytes for w in weights)))
    tgt = make_target(target or "llvm")
    try:
        with PassContext(opt_level=opt_level):
            opt = optimize(mod, tgt, params)
            cache = LowerCache(tgt)
            prog = build_graph(opt["main"], cache)
    except BuildError as e:
        stats.note = str(e).splitlines()[0]
        return stats
    stats.num_kernel_calls = sum(1 for n in prog.nodes if n.op == "tvm_op")
    stats.num_kernels = len(cache.funcs)
    plan = prog.plan.summary()
    stats.planned_bytes = plan["planned_bytes"]
    stats.intermediate_bytes = plan["intermediate_bytes"]
    stats.num_storages = plan["num_storages"]
    return stats


__all__ = ["ModelStats", "model_stats"]

"""tvm.relay 0.19's ``relay.backend.graph_executor_codegen``: the graph executor's code
generator on its own, for scripts that drove the build steps by hand.

``GraphExecutorCodegen(mod, target).codegen(ir_module, func)`` takes an optimized (fused,
type-checked) ``main`` and returns ``(graph_json, lowered_funcs, params)``: the graph
executor's JSON, ``{target: tvm.IRModule}`` of the lowered kernels (TIR), and the constants
lifted to parameters. Compiling the kernels is ``tvm.compile`` (0.19's
``relay.backend._backend.build`` is not provided); :func:`relay_tvm.build` does all steps.
"""

from __future__ import annotations

from ..errors import BuildError
from ..ir.expr import Function


class GraphExecutorCodegen:
    """The graph executor's code generator for one target.

    Args:
        mod: unused (0.19 took the runtime module here); may be None.
        target: the target (string, dict or ``tvm.target.Target``; a ``{device: target}``
            dict of one entry).
    """

    def __init__(self, mod, target):
        from .target import make_target

        self.target = make_target(target)
        self._json = None

    def codegen(self, ir_module, func: Function):
        """Lower ``func`` (a fused, type-checked ``main`` of ``ir_module``).

        Returns:
            ``(graph_json, {target: tvm.IRModule of kernels}, {name: tvm tensor})``.

        Raises:
            BuildError: ``func`` is not a function the graph executor can run.
        """
        import tvm

        from .graph_codegen import build_graph, graph_json
        from .lower import LowerCache

        if not isinstance(func, Function):
            raise BuildError(f"GraphExecutorCodegen.codegen expects a relay Function, got "
                             f"{type(func).__name__}")
        cache = LowerCache(self.target)
        prog = build_graph(func, cache)
        self._json = graph_json(prog)
        params = {k: tvm.runtime.tensor(v) for k, v in prog.params.items()}
        return self._json, {self.target: cache.ir_module()}, params

    def get_graph_json(self) -> str:
        """The JSON of the last :meth:`codegen`."""
        if self._json is None:
            raise BuildError("GraphExecutorCodegen: call codegen first")
        return self._json

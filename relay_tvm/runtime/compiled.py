"""The compiled executors of ``relay.create_executor``: ``kind="graph"`` (``relay.build`` then
:class:`GraphModule`) and ``kind="vm"`` (:func:`relay_tvm.vm.compile` then the
:class:`VirtualMachine`). This is the glue above the backend (which compiles) and the runtime
wrappers (which run)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError, RelayError
from .executor import Executor, order_args


def _to_tensor_arg(v, where: str = "argument"):
    import tvm

    if isinstance(v, np.ndarray) or hasattr(v, "numpy"):
        return v
    if isinstance(v, (bool, int, float, np.generic)):
        return np.asarray(v)
    if isinstance(v, tvm.runtime.Tensor):
        return v
    raise InputError(f"{where}: expected a NumPy array or a tvm tensor, got "
                     f"{type(v).__name__}")


class GraphExecutor(Executor):
    """Compiles the function with ``relay.build`` and runs it with :class:`GraphModule`.

    Args:
        mod: the module.
        device: ``tvm.runtime.Device`` (CPU when None).
        target: the target (host LLVM by default).
        params: constants bound to ``main``'s parameters by name.
    """

    def __init__(self, mod, device=None, target="llvm", params=None):
        super().__init__(mod, device, target, params)

    def _make_executor(self, expr=None):
        import tvm

        from ..backend.build_module import build
        from .graph_executor import GraphModule
        from .pyargs import python_arg

        mod, immediate = self._main_module(self.mod, expr)
        params = self._main_params(mod)
        lib = build(mod, target=self.target, params=params)
        dev = self.device if self.device is not None else tvm.cpu(0)
        gm = GraphModule(lib["default"](dev))
        free_names = list(gm._meta["input_names"])

        def run(*args, **kwargs):
            args = order_args(free_names, args, kwargs)
            for i, a in enumerate(args):
                where = f"argument {i} (%{free_names[i]})"  # as the interpreter names it
                a = python_arg(a, gm._input_types[i][1], where)
                gm._set_one(i, _to_tensor_arg(a, where), where)
            gm.run()
            return gm.get_outputs_structured()

        if immediate:
            return run()
        return run


class VMExecutor(Executor):
    """Compiles with :func:`relay_tvm.vm.compile` and runs on the :class:`VirtualMachine`
    (the whole language but dynamic shapes: control flow, recursion, closures, ADTs and
    ``match``, references, polymorphic functions)."""

    def __init__(self, mod, device=None, target="llvm", params=None):
        super().__init__(mod, device, target, params)

    def _make_executor(self, expr=None):
        from ..vm import compile as vm_compile
        from .vm import VirtualMachine

        mod, immediate = self._main_module(self.mod, expr)
        params = self._main_params(mod)
        exe = vm_compile(mod, target=self.target, params=params)
        vm = VirtualMachine(exe, self.device)

        def run(*args, **kwargs):
            return vm.invoke("main", *args, **kwargs)

        if immediate:
            return run()
        return run


def make_compiled_executor(kind, mod, device, target, params):
    """The executor for ``create_executor(kind, ...)``: ``graph`` (and ``aot``) compile
    dataflow programs for the graph executor, ``vm`` compiles for the virtual machine."""
    if kind in ("graph", "aot"):
        return GraphExecutor(mod, device, target, params)
    if kind == "vm":
        return VMExecutor(mod, device, target, params)
    raise RelayError(f"unknown compiled executor kind {kind!r}")


__all__ = ["GraphExecutor", "VMExecutor", "make_compiled_executor"]

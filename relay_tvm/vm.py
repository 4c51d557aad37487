"""``relay.vm``: compile programs with control flow for the virtual machine (tvm.relay.vm).

``compile(mod, target, target_host, params)`` returns a :class:`relay_tvm.runtime.vm.Executable`;
run it with :class:`relay_tvm.runtime.vm.VirtualMachine`. What the VM compiler supports is listed
in :mod:`relay_tvm.backend.vm_codegen`: the whole language (global and local functions,
closures, recursion, let, if, tuples, ADTs and match, references, polymorphic functions) and
dynamic shapes (``relay.Any()`` dimensions, the ``dyn.*`` operators; see
:mod:`relay_tvm.backend.shape_func`).
"""

from __future__ import annotations

import json

from .errors import BuildError
from .runtime.compiled import VMExecutor  # noqa: F401  (0.19's relay.vm.VMExecutor)
from .runtime.profiler_vm import VirtualMachineProfiler  # noqa: F401  (tvm.runtime.profiler_vm)
from .runtime.vm import Executable, VirtualMachine, load_executable  # noqa: F401


def _signature(ty, name):
    """A parameter's type as JSON for argument checks: tensors and tuples are checked
    exactly; ADT values, references and functions by kind."""
    from .ir.types import FuncType, RefType, TensorType, TupleType, TypeCall

    if isinstance(ty, TensorType):
        # -1: a dimension known only at run time (Any, or a symbolic one)
        return [name, "tensor", [int(d) if isinstance(d, int) else -1 for d in ty.shape],
                ty.dtype]
    if isinstance(ty, TupleType):
        return [name, "tuple", [_signature(f, f"{name}.{i}") for i, f in enumerate(ty.fields)],
                ""]
    if isinstance(ty, TypeCall):
        return [name, "adt", [], getattr(ty.func, "name_hint", str(ty.func))]
    if isinstance(ty, RefType):
        return [name, "ref", [], ""]
    if isinstance(ty, FuncType):
        return [name, "func", [], ""]
    return [name, "any", [], str(ty)]


def _constructors(mod) -> dict:
    """``tag -> [type name, constructor name]`` of every ADT of ``mod``."""
    out = {}
    for gtv, data in mod.type_definitions.items():
        for c in data.constructors:
            out[str(c.tag)] = [getattr(gtv, "name_hint", str(gtv)), c.name_hint]
    return out


def _dynamic_to_static(mod):
    """``transform.DynamicToStatic`` when ``mod`` calls a ``dyn.*`` operator (as tvm.relay's VM
    compiler ran it): a constant shape argument gives a static, fusable kernel."""
    from .backend.build_module import _as_module
    from .transform._rewrite import called_ops

    mod = _as_module(mod)
    if not any(o.startswith("dyn.") for f in mod.functions.values() for o in called_ops(f)):
        return mod
    from .transform.dynamic_to_static import dynamic_to_static

    return dynamic_to_static(mod)


def compile(mod, target=None, target_host=None, params=None, database=None):  # noqa: A001
    """Compile ``mod`` (its ``main`` and every global function it calls) for the VM.

    Args:
        mod: ``IRModule`` (or a ``Function``, taken as ``main``).
        target: as for ``relay.build`` (the target in scope, else host LLVM).
        target_host: host target for device targets.
        params: ``name -> array`` bound to ``main``'s parameters.
        database: optional tuning database.

    Raises:
        BuildError: an unsupported construct, or a kernel that does not compile.
    """
    from .backend import dynamic_parallel
    from .backend.build_module import run_passes
    from .backend.isa import target_isa
    from .backend.link import KernelCodegen
    from .backend.schedule import database_in_scope
    from .backend.target import make_target
    from .backend.vm_codegen import VMCompiler

    tgt = make_target(target, target_host)
    database = database_in_scope(database)
    mod = _dynamic_to_static(mod)
    opt = run_passes(mod, params, who="vm.compile")
    comp = VMCompiler(opt, tgt, "vm", database)
    # the kernels lowered so far compile on another thread while the rest are lowered
    with KernelCodegen(comp.cache.funcs, tgt, dynamic_parallel.pipeline(tgt)) as codegen:
        ib, funcs = comp.compile()
        meta = {"signatures": {name: [_signature(p.checked_type, p.name_hint) for p in params]
                               for name, (params,) in funcs.items()},
                "constructors": _constructors(opt),
                # nesting of VM calls (None: recursion or closure calls); the runtime runs a
                # program of small bounded depth on the caller's thread (see runtime.vm)
                "call_depth": comp.call_depth,
                "stats": comp.stats,
                # what the kernels need of the CPU: checked when a .tar is loaded (a .so
                # carries it in its seal)
                "isa": target_isa(tgt)}
        with ib.function("__relay_vm_meta", num_inputs=0):
            ib.emit_call("vm.builtin.copy", args=[ib.convert_constant(json.dumps(meta))],
                         dst=ib.r(0))
            ib.emit_ret(ib.r(0))
        with ib.function("__relay_vm_consts", num_inputs=0):  # the pool's own tensors
            ib.emit_call("vm.builtin.make_tuple",
                         args=[ib.convert_constant(c) for c in comp.constants], dst=ib.r(0))
            ib.emit_ret(ib.r(0))
        try:
            lib = codegen.link(ib)
        except Exception as e:
            raise BuildError(f"VM compile: compiling the kernels for {tgt} failed: {e}") from e
    kernels = {f.name: f for f in comp.cache.funcs}
    if database is not None:  # as relay.build: a database that applies to nothing is said
        # (at the VM's default opt level 2 a database tuned at 3 matched no kernel silently;
        # fresh-user trial)
        from .backend.build_module import _warn_if_no_record_matched

        _warn_if_no_record_matched(kernels, database, who="vm.compile")
    ctors = {c.tag: c for data in opt.type_definitions.values() for c in data.constructors}
    return Executable(lib, meta, tgt, ctors, kernels, relay_mod=opt)


class VMCompiler:
    """tvm.relay 0.19's step-wise VM compiler: ``set_params``, ``lower(mod, target)`` (compile),
    ``codegen()`` (nothing left to do), ``get_exec()``, and ``optimize(mod, target, params)``
    giving the optimized module and the parameters."""

    def __init__(self):
        self._params: dict = {}
        self._exec = None

    def set_params(self, params: dict) -> None:
        self._params = dict(params or {})

    def get_params(self) -> dict:
        return dict(self._params)

    def lower(self, mod, target=None, target_host=None):
        self._exec = compile(mod, target, target_host, self._params or None)

    def codegen(self):
        if self._exec is None:
            raise BuildError("VMCompiler.codegen: call lower(mod, target) first")

    def get_exec(self):
        if self._exec is None:
            raise BuildError("VMCompiler.get_exec: call lower(mod, target) first")
        return self._exec

    def optimize(self, mod, target=None, target_host=None, params=None):
        from .backend.build_module import run_passes

        if params is not None:
            self.set_params(params)
        return (run_passes(mod, self._params or None, who="VMCompiler.optimize"),
                self.get_params())


__all__ = [
    "compile", "VirtualMachine", "Executable", "load_executable", "VMCompiler", "VMExecutor",
    "VirtualMachineProfiler",
]

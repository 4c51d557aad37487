"""Linking the kernels with the VM host program into one executable, the kernels' code
generation spread over the usable cores.

``relay.build`` and ``relay.vm.compile`` lower every primitive function to a TIR ``PrimFunc``;
TVM compiles them (its TIR pipeline, then LLVM) and links them with the host program
(``tvm.relax.vm_build``'s ``VMLink``). TVM compiles one IRModule on one thread, which made code
generation two thirds of ResNet-50's ``relay.build`` (4.1 of 6.8 s on a 2-core Zen 1 VM).
For CPU targets the kernels are split into one IRModule per worker thread (longest first onto
the least loaded thread, each kernel's cost estimated by the length of its printed TIR, which
tracks its compile time within ~30% on ResNet-50's kernels) and compiled concurrently: TVM's
compiler releases the GIL, each thread enters the caller's ``PassContext`` (its config, e.g.
``tirx.disable_vectorize``), and the modules are linked as imports of the first one, where the
VM and ``export_library`` find them as they find a single module's kernels. ResNet-50 on the
2-core VM: code generation 4.0 -> 2.4 s.

``RELAY_TVM_BUILD_THREADS=N`` sets the number of threads (1: one module on the calling thread,
as TVM does); the default is the usable cores (``relay_tvm._threads.usable_cores``). Device
targets (CUDA), the C target and system libraries are compiled as one module.
"""

from __future__ import annotations

import os
import threading

from ..errors import BuildError

ENV = "RELAY_TVM_BUILD_THREADS"


def build_threads() -> int:
    """Threads the kernels' code generation may use: ``RELAY_TVM_BUILD_THREADS``, else the
    usable cores.

    Raises:
        BuildError: ``RELAY_TVM_BUILD_THREADS`` is not a positive whole number.
    """
    from .._threads import usable_cores

    text = os.environ.get(ENV, "").strip()
    if not text:
        return usable_cores()
    if not text.isdigit() or int(text) < 1:
        raise BuildError(f"{ENV}={text!r}: expected a positive whole number of threads "
                         f"(1: compile the kernels on the calling thread)")
    return int(text)


def split(tir_mod, parts: int) -> list:
    """``tir_mod``'s functions in at most ``parts`` IRModules of about equal compile time
    (longest-processing-time first on the printed TIR's length); the module attributes are
    kept on each."""
    import tvm

    items = [(len(str(func)), gv.name_hint, gv, func) for gv, func in tir_mod.functions.items()]
    items.sort(key=lambda t: (-t[0], t[1]))
    bins = [[0, {}] for _ in range(max(1, min(parts, len(items))))]
    for cost, _, gv, func in items:
        b = min(bins, key=lambda x: x[0])
        b[0] += cost
        b[1][gv] = func
    return [tvm.IRModule(funcs, attrs=tir_mod.attrs) for _, funcs in bins if funcs]


def _parallel_ok(tir_mod, tgt) -> bool:
    """CPU code (LLVM) of a shared library: not device code, not a system library (whose
    kernels register themselves under one prefix)."""
    if tgt.kind.name != "llvm":
        return False
    return tir_mod.attrs is None or "system_lib_prefix" not in tir_mod.attrs


def build_kernels(tir_mod, tgt, pipeline, threads: int | None = None):
    """The compiled kernels of ``tir_mod`` for ``tgt`` (``tvm.tirx.build`` with ``pipeline``):
    one runtime module, the others (when split over threads) imported into it.

    Raises:
        whatever ``tvm.tirx.build`` raised, from the first module that failed.
    """
    import tvm
    from tvm.relax.vm_build import _auto_attach_system_lib_prefix

    tir_mod = _auto_attach_system_lib_prefix(tir_mod, tgt, None)
    threads = build_threads() if threads is None else threads
    if threads <= 1 or len(tir_mod.functions) < 2 or not _parallel_ok(tir_mod, tgt):
        return tvm.tirx.build(tir_mod, target=tgt, pipeline=pipeline)
    mods = split(tir_mod, threads)
    ctx = tvm.transform.PassContext.current()
    libs, errors = [None] * len(mods), [None] * len(mods)

    def work(i):
        try:
            with ctx:
                libs[i] = tvm.tirx.build(mods[i], target=tgt, pipeline=pipeline)
        except BaseException as e:  # re-raised on the calling thread
            errors[i] = e

    workers = [threading.Thread(target=work, args=(i,), name=f"relay_tvm-codegen-{i}")
               for i in range(1, len(mods))]
    for w in workers:
        w.start()
    work(0)
    for w in workers:
        w.join()
    for e in errors:
        if e is not None:
            raise e
    lib = libs[0]
    for other in libs[1:]:
        lib.import_module(other)
    return lib


def vm_link(builder, tgt, tir_mod, pipeline):
    """The VM executable of ``builder``'s host program and the kernels of ``tir_mod`` (None:
    no kernels), as ``tvm.relax.vm_build._vmlink`` makes it, the kernels compiled by
    :func:`build_kernels`."""
    from tvm.relax.vm_build import VMExecutable, _ffi_api

    lib = None
    if tir_mod is not None and len(tir_mod.functions):
        lib = build_kernels(tir_mod, tgt, pipeline)
    return VMExecutable(_ffi_api.VMLink(builder, tgt, lib, [], {}))


__all__ = ["ENV", "build_threads", "build_kernels", "split", "vm_link"]

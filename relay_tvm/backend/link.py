"""Linking the kernels with the VM host program into one executable, the kernels' code
generation spread over the usable cores and overlapped with the lowering.

``relay.build`` and ``relay.vm.compile`` lower every primitive function to a TIR ``PrimFunc``;
TVM compiles them (its TIR pipeline, then LLVM) and links them with the host program
(``tvm.relax.vm_build``'s ``VMLink``). TVM compiles one IRModule on one thread, which made code
generation two thirds of ResNet-50's ``relay.build`` (4.1 of 6.8 s on a 2-core Zen 1 VM).
For CPU targets, :class:`KernelCodegen` compiles the kernels lowered so far on a worker thread
while the calling thread lowers the rest, then all build threads compile the remaining
kernels, costliest first, in modules that shrink towards the end (each kernel's cost estimated
by the length of its printed TIR, which tracks its compile time within ~30% on ResNet-50's
kernels), so that the threads finish together: TVM's compiler releases the GIL, each thread
enters the caller's ``PassContext`` (its config and instruments), and the modules are linked
as imports of the costliest one, where the VM and ``export_library`` find them as they find a
single module's kernels.

``RELAY_TVM_BUILD_THREADS=N`` sets the number of threads (1: one module on the calling thread,
after the lowering, as TVM does); the default is the usable cores
(``relay_tvm._threads.usable_cores``). Device targets (CUDA), the C target and system libraries
are compiled as one module.
"""

from __future__ import annotations

import os
import threading

from ..errors import BuildError
from .lower import kernel_module

ENV = "RELAY_TVM_BUILD_THREADS"
# The most kernels the worker compiles as one batch while the lowering runs. Without a bound,
# a lowering faster than the worker's first compile left it one batch of nearly every kernel,
# compiled on one thread while the calling thread had nothing left to split: ResNet-50's
# code-generation phase on a 2-core Zen 1 VM used 1.06 cores (6.55 s wall, 6.94 s CPU) once
# the schedules were built faster, 1.9-1.95 with batches of at most 2, 4 or 8 kernels.
BATCH_MAX = 8
# The most estimated cost (characters of printed TIR, :func:`cost`) of one module: a batch the
# worker takes while the lowering runs, or one of the modules the rest is split into (queued
# costliest first, so the threads finish together). Eight of ResNet-50's kernels, three
# Winograd ones among them (52,000 characters), kept the worker busy 1.1 s after the lowering
# had ended, while the calling thread compiled the rest alone and then waited 0.4 s for it.
# Each module costs ~20 ms more to compile and generate code for than its kernels do apart,
# so smaller is not better: on a 2-core Zen 1 VM the idle core-seconds of ResNet-50's build
# and first module were 1.15-1.47 without a cost bound, 0.84-0.94 at 16,000, 0.61-0.70 at
# 24,000, 0.95-0.98 at 32,000; at 24,000 MobileNet-1.0 0.78 -> 0.65, Inception-v3 1.8 -> 1.05.
MODULE_COST = 24000
# The least estimated cost of one of compile()'s modules (but for the last): ~0.2 s of work.
MIN_JOB_COST = 8000


def cost(func) -> int:
    """Estimated compile time of a kernel: the length of its printed TIR, which tracks the
    time of TVM's TIR passes and LLVM within ~30% on ResNet-50's kernels."""
    return len(str(func))


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


def _parallel_ok(tir_mod, tgt) -> bool:
    """CPU code (LLVM) of a shared library: not device code, not a system library (whose
    kernels register themselves under one prefix), and no pass instruments in the current
    ``PassContext``: a worker thread enters that context (TVM's contexts are per thread), and
    entering and leaving it calls the instruments' ``enter_pass_ctx`` / ``exit_pass_ctx``
    (clearing a ``PassTimingInstrument``'s profile), while their ``run_before_pass`` /
    ``run_after_pass`` would run on several threads at once; tvm.relay 0.19 compiled on one."""
    import tvm

    if tgt.kind.name != "llvm":
        return False
    if len(tvm.transform.PassContext.current().instruments):
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
    return KernelCodegen([], tgt, pipeline, threads).compile(tir_mod)


class KernelCodegen:
    """Code generation overlapped with lowering: while the calling thread lowers and schedules
    the primitive functions (Python, ``LowerCache``), a worker thread compiles the kernels
    lowered so far, in batches of at most :data:`BATCH_MAX` kernels and :data:`MODULE_COST`,
    again and again; :meth:`link` has every build thread (the worker, the calling one, more
    up to the thread count) compile the rest (:meth:`compile`) and links the executable.
    ResNet-50 on a 2-core Zen 1 VM: the 1.0 s of lowering hides about as much code
    generation.

    Use as a context manager around the lowering (an exception stops the worker)::

        with KernelCodegen(cache.funcs, target, pipeline) as cg:
            ...                                  # lower: cache.funcs grows
            exe = cg.link(builder)

    Args:
        funcs: the list the lowering appends ``LoweredFunc``s to (read, never written).
        tgt: the target.
        pipeline: the TIR pipeline for ``tvm.tirx.build``.
        threads: build threads (default :func:`build_threads`); 1, device targets, the C target
            and system libraries compile everything in :meth:`link`, as one module.
    """

    def __init__(self, funcs: list, tgt, pipeline, threads: int | None = None):
        import tvm
        from tvm.relax.vm_build import _auto_attach_system_lib_prefix

        self._funcs, self._tgt, self._pipeline = funcs, tgt, pipeline
        self._threads = build_threads() if threads is None else threads
        probe = _auto_attach_system_lib_prefix(tvm.IRModule({}), tgt, None)
        self._background = self._threads > 1 and _parallel_ok(probe, tgt)
        self._ctx = tvm.transform.PassContext.current()
        self._lock = threading.Lock()
        self._taken = 0
        self._costs: dict = {}  # id(LoweredFunc) -> cost, of kernels looked at by _take
        self._done = threading.Event()  # lowering finished: the rest is in self._rest
        self._rest: list = []  # [(cost, GlobalVar, PrimFunc)] left for compile(), costliest first
        self._rest_cost = 0
        self._attrs = None
        self._libs: list = []
        self._errors: list = []
        self._workers: list = []

    def __enter__(self):
        if self._background:
            self._start(1)
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._join()
        return False

    def _start(self, n):
        for _ in range(n):
            w = threading.Thread(target=self._work, name="relay_tvm-codegen")
            self._workers.append(w)
            w.start()

    def _join(self):
        for w in self._workers:
            w.join()
        self._workers = []

    def _take(self, budget: int | None = None) -> tuple:
        """``(cost, kernels)``: the kernels lowered since the last take, with ``budget`` at most
        :data:`BATCH_MAX` of them costing at most about ``budget`` (at least one)."""
        with self._lock:
            new = self._funcs[self._taken:]
            if budget is None:
                self._taken += len(new)
                return None, new
            batch, total = [], 0
            for f in new[:BATCH_MAX]:
                c = self._costs.get(id(f)) or self._costs.setdefault(id(f), cost(f.prim_func))
                if batch and total + c > budget:
                    break
                batch.append(f)
                total += c
            self._taken += len(batch)
            return total, batch

    def _queue(self, tir_mod):
        """Leave the kernels of ``tir_mod`` to :meth:`_next_job`, costliest first."""
        rest = sorted(((cost(f), gv.name_hint, gv, f) for gv, f in tir_mod.functions.items()),
                      key=lambda t: (-t[0], t[1]))
        with self._lock:
            self._attrs = tir_mod.attrs
            self._rest = [(c, gv, f) for c, _, gv, f in rest]
            self._rest_cost = sum(t[0] for t in self._rest)

    def _next_job(self):
        """``(cost, IRModule)``: the next kernels of :meth:`compile`'s rest, costliest first, as
        many as cost at most ``1 / (2 * threads)`` of what is left (guided self-scheduling:
        large modules first, the last ones small, so the threads finish together; at least one
        kernel, and at most :data:`MODULE_COST` or down to :data:`MIN_JOB_COST`); None when
        none is left."""
        import tvm

        with self._lock:
            if not self._rest:
                return None
            share = min(MODULE_COST, max(MIN_JOB_COST, self._rest_cost // (2 * self._threads)))
            funcs, total = {}, 0
            while self._rest and (not funcs or total + self._rest[0][0] <= share):
                c, gv, func = self._rest.pop(0)
                funcs[gv] = func
                total += c
            self._rest_cost -= total
        return total, tvm.IRModule(funcs, attrs=self._attrs)

    def _work(self):
        """Compile the rest's modules (:meth:`_next_job`), else the kernels lowered since the
        last batch, until the lowering has finished and nothing is left."""
        import tvm

        try:
            with self._ctx:
                while not self._errors:
                    job = self._next_job()
                    if job is not None:
                        c, mod = job
                    else:
                        if self._done.is_set():
                            return
                        c, batch = self._take(MODULE_COST)
                        if not batch:
                            self._done.wait(0.005)
                            continue
                        mod = kernel_module(batch)
                    lib = tvm.tirx.build(mod, target=self._tgt, pipeline=self._pipeline)
                    with self._lock:
                        self._libs.append((c, lib))
        except BaseException as e:  # re-raised by link()
            self._errors.append(e)

    def compile(self, tir_mod) -> object:
        """Compile the kernels of ``tir_mod`` (None: none) on every build thread (the calling
        one, the worker when it runs, more up to the thread count) in modules of
        :meth:`_next_job`, after the batches the worker took, and return one runtime module
        with the others imported, the costliest first (None when there was nothing): the
        order in which :func:`generate_machine_code` takes them, so that the threads finish
        together there too (longest processing time first).

        Raises:
            whatever ``tvm.tirx.build`` raised for a kernel.
        """
        if tir_mod is not None:
            self._queue(tir_mod)
        self._done.set()
        self._start(min(len(self._rest), self._threads - len(self._workers)) - 1)
        self._work()  # the calling thread takes modules too
        self._join()
        if self._errors:
            raise self._errors[0]
        if not self._libs:
            return None
        libs = [lib for _, lib in sorted(self._libs, key=lambda t: -t[0])]
        for other in libs[1:]:
            libs[0].import_module(other)
        return libs[0]

    def link(self, builder, params=None, extra=None):
        """The VM executable of ``builder``'s host program with every kernel lowered so far,
        and the PrimFuncs of ``extra`` (``name -> PrimFunc``), holding ``params``
        (``name -> tvm Tensor``) in a ``const_loader`` module.

        Raises:
            whatever ``tvm.tirx.build`` raised for a kernel.
        """
        from tvm.relax.vm_build import VMExecutable, _ffi_api

        _, rest = self._take()
        mod = kernel_module(rest)
        for name, func in (extra or {}).items():
            mod[name] = func
        if self._background:  # (also with nothing left: the worker's modules are linked)
            lib = self.compile(mod if len(mod.functions) else None)
        else:
            lib = build_kernels(mod, self._tgt, self._pipeline, 1) if len(mod.functions) \
                else None
        return VMExecutable(_ffi_api.VMLink(builder, self._tgt, lib, [], params or {}))


__all__ = ["ENV", "build_threads", "build_kernels", "cost", "KernelCodegen", "module_tree",
           "generate_machine_code"]


def module_tree(lib) -> list:
    """Every runtime module under ``lib`` (a relax ``Executable`` or a runtime module): the
    module itself, then its imports, depth first in import order, each once."""
    mod = getattr(lib, "mod", lib)
    out, seen, stack = [], set(), [mod]
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        out.append(m)
        stack.extend(reversed(list(m.imports)))
    return out


def _llvm_modules(lib) -> list:
    """The LLVM modules under ``lib`` (imports included), each once."""
    return [m for m in module_tree(lib) if m.kind == "llvm"]


def generate_machine_code(lib, threads: int | None = None) -> int:
    """Generate the machine code of the LLVM kernel modules under ``lib`` on up to
    ``threads`` threads (default :func:`build_threads`) before a VM runs it; returns the
    number of LLVM modules (0 for a library loaded from a file). A module whose code exists
    already costs a function lookup.

    ``relay.build`` leaves each kernel module as optimized LLVM IR; TVM generates its machine
    code (LLVM's back end: instruction selection, register allocation) when the module is
    first asked for a function, one module after the other on the calling thread, or writes
    object files when the library is exported. The first ``GraphModule`` / ``VirtualMachine``
    of an in-process build paid for all of it on one thread: ResNet-50 2.8 s on a 2-core Zen 1
    VM (against 4.5 s for ``relay.build``). Here each module's code is generated on a thread of
    its own (TVM releases the GIL; each module has its own LLVM context and lock), by asking
    it for a function it does not have. Libraries loaded from files (compiled already) have no
    LLVM module and cost nothing; ``RELAY_TVM_BUILD_THREADS=1`` keeps one thread."""
    from concurrent.futures import ThreadPoolExecutor

    mods = _llvm_modules(lib)
    threads = min(len(mods), threads or build_threads())
    if threads <= 1:
        return len(mods)

    def generate(m):
        try:  # any name but LLVMModuleNode's special ones starts the JIT; none is found
            m.get_function("__relay_tvm_generate_code__")
        except AttributeError:
            pass

    try:
        with ThreadPoolExecutor(threads, thread_name_prefix="relay_tvm-jit") as pool:
            list(pool.map(generate, mods))
    except Exception as e:
        raise BuildError(f"generating the kernels' machine code failed: {e}") from e
    return len(mods)

"""Linking the kernels with the VM host program into one executable, the kernels' code
generation spread over the usable cores and overlapped with the lowering.

``relay.build`` and ``relay.vm.compile`` lower every primitive function to a TIR ``PrimFunc``;
TVM compiles them (its TIR pipeline, then LLVM) and links them with the host program
(``tvm.relax.vm_build``'s ``VMLink``). TVM compiles one IRModule on one thread, which made code
generation two thirds of ResNet-50's ``relay.build`` (4.1 of 6.8 s on a 2-core Zen 1 VM).
For CPU targets, :class:`KernelCodegen` compiles the kernels lowered so far on a worker thread
while the calling thread lowers the rest, then splits the remaining kernels into modules
(longest first onto the least loaded, each kernel's cost estimated by the length of its printed
TIR, which tracks its compile time within ~30% on ResNet-50's kernels) that all build threads
compile: TVM's compiler releases the GIL, each thread enters the caller's ``PassContext`` (its
config and instruments), and the modules are linked as imports of the first one, where the VM
and ``export_library`` find them as they find a single module's kernels.

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
    return KernelCodegen([], tgt, pipeline, threads).compile(split(tir_mod, threads))


class KernelCodegen:
    """Code generation overlapped with lowering: while the calling thread lowers and schedules
    the primitive functions (Python, ``LowerCache``), a worker thread compiles the kernels
    lowered so far, in batches of at most :data:`BATCH_MAX`, again and again; :meth:`link`
    splits the rest into modules that every build thread (the worker, the calling one, more up to the thread count) takes
    from one queue, and links the executable. ResNet-50 on a 2-core Zen 1 VM: the 1.0 s of
    lowering hides about as much code generation.

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
        import queue

        import tvm
        from tvm.relax.vm_build import _auto_attach_system_lib_prefix

        self._funcs, self._tgt, self._pipeline = funcs, tgt, pipeline
        self._threads = build_threads() if threads is None else threads
        probe = _auto_attach_system_lib_prefix(tvm.IRModule({}), tgt, None)
        self._background = self._threads > 1 and _parallel_ok(probe, tgt)
        self._ctx = tvm.transform.PassContext.current()
        self._lock = threading.Lock()
        self._taken = 0
        self._done = threading.Event()  # lowering finished: the rest is in the queue
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
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

    def _take(self, limit: int | None = None) -> list:
        with self._lock:
            batch = self._funcs[self._taken:][:limit]
            self._taken += len(batch)
            return batch

    def _work(self):
        """Compile queued modules, else the kernels lowered since the last batch, until the
        lowering has finished and the queue is empty."""
        import queue

        import tvm

        try:
            with self._ctx:
                while not self._errors:
                    try:
                        mod = self._jobs.get_nowait()
                    except queue.Empty:
                        if self._done.is_set():
                            return
                        batch = self._take(BATCH_MAX)
                        if not batch:
                            self._done.wait(0.005)
                            continue
                        mod = kernel_module(batch)
                    lib = tvm.tirx.build(mod, target=self._tgt, pipeline=self._pipeline)
                    with self._lock:
                        self._libs.append(lib)
        except BaseException as e:  # re-raised by link()
            self._errors.append(e)

    def compile(self, mods) -> object:
        """Compile the IRModules ``mods`` on every build thread (the calling one, the worker
        when it runs, more up to the thread count), after the batches the worker took, and
        return one runtime module with the others imported (None when there was nothing).

        Raises:
            whatever ``tvm.tirx.build`` raised for a kernel.
        """
        for mod in mods:
            self._jobs.put(mod)
        self._done.set()
        self._start(min(len(mods), self._threads - len(self._workers)) - 1)
        self._work()  # the calling thread takes modules too
        self._join()
        if self._errors:
            raise self._errors[0]
        if not self._libs:
            return None
        lib = self._libs[0]
        for other in self._libs[1:]:
            lib.import_module(other)
        return lib

    def link(self, builder, params=None):
        """The VM executable of ``builder``'s host program with every kernel lowered so far.

        Raises:
            whatever ``tvm.tirx.build`` raised for a kernel.
        """
        from tvm.relax.vm_build import VMExecutable, _ffi_api

        rest = self._take()
        if not self._background:
            lib = build_kernels(kernel_module(rest), self._tgt, self._pipeline, 1) \
                if rest else None
        else:
            lib = self.compile(split(kernel_module(rest), 2 * self._threads) if rest else [])
        return VMExecutable(_ffi_api.VMLink(builder, self._tgt, lib, [], params or {}))


__all__ = ["ENV", "build_threads", "build_kernels", "split", "KernelCodegen", "module_tree",
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

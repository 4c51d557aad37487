"""Dynamic sharing of a parallel loop's iterations between the threads of TVM's thread pool.

TVM's runtime runs a ``parallel`` loop of ``E`` iterations as one task per thread, each task a
fixed contiguous ``E / threads`` share (``codegen_cpu``'s static split). When one thread starts
late (a worker waking up) or runs slower (another process or the hypervisor taking its core),
the kernel waits for it with the other core idle. This pass rewrites each outermost parallel
loop so that the threads share its iterations at run time, in ``K`` chunks of consecutive
iterations:

- the task that runs the loop's first iteration takes chunks from the front, every other
  task from the back, until they meet; with two threads each takes one contiguous range, as
  with the static split (the next kernel finds its data in the same core's cache when its
  split matches), but the ranges' boundary moves to where the two threads meet;
- each take is ``max(1, R // threads)`` of the ``R`` chunks left (guided self-scheduling): a
  thread that starts in time takes its share in a few large pieces and the pieces shrink to
  single chunks towards the end, where a late or slowed thread's work moves to the other;
- the two cursors are guarded by a ``pthread_mutex_t`` in the kernel's stack frame (TIR's CPU
  code generator has no atomic operations): one lock and unlock per take, about ``log2 K``
  takes in all (two threads in step) instead of ``K``. Each take moves the mutex's and the cursors'
  cache lines between the cores (320-380 ns a round trip in the slow state of the 2-vCPU VMs,
  RESULTS.md). Zen 1, 2 threads, ``bench_ab`` (31 rounds, one process) against one chunk a
  take with 8 chunks per thread, quiet machine: MobileNet-1.0 0.4-1.7% faster (three runs),
  ResNet-18 0-0.4%, ResNet-50 0.6-1.0%, MobileNetV2 0.5-1.1%; with a busy process beside
  it (noisy, 2-3x slower runs) ResNet-18 1.9-4.1% and ResNet-50 1.3-3.3% faster,
  MobileNet-1.0 0.3% (best) and 5% (median) slower. Against TVM's static split (quiet):
  MobileNet-1.0 within 1%, ResNet-18 1.4-1.7% faster.

Applied by :func:`pipeline` to LLVM CPU kernels (not to the C target, whose code has no
prototype for the lock functions) of libraries built for two or more threads
(:func:`relay_tvm._threads.module_threads` when building: ``K`` is about 16 per thread, so a
library built for ``n`` threads gives at most ``16n`` threads work per loop).
``RELAY_TVM_STATIC_PARALLEL=1`` turns it off (for A/B).
"""

from __future__ import annotations

import os

_MUTEX_WORDS = 16  # int32 words for a pthread_mutex_t (40 bytes on x86-64, 48 on AArch64)
_LO, _HI = _MUTEX_WORDS, _MUTEX_WORDS + 1  # the cursors' words after the mutex
_SYNC_WORDS = _MUTEX_WORDS + 16  # cursors on their own cache line
_CHUNKS_PER_THREAD = 16
_MIN_ITERATIONS = 4  # fewer iterations keep the static split


def chunking(extent: int, threads: int) -> tuple:
    """``(chunks, per_chunk)``: a parallel loop of ``extent`` iterations shared by ``threads``
    threads runs in ``chunks`` chunks of ``per_chunk`` consecutive iterations (the last one
    shorter): about ``_CHUNKS_PER_THREAD`` per thread, at most one per iteration."""
    want = max(1, min(extent, _CHUNKS_PER_THREAD * max(1, threads)))
    per = -(-extent // want)
    return -(-extent // per), per


def take_divisor(threads: int) -> int:
    """A take is ``max(1, R // take_divisor(threads))`` of the ``R`` chunks left."""
    return max(1, threads)


def takes(chunks: int, threads: int, order) -> list:
    """The takes ``(task, first chunk, count)`` of a loop of ``chunks`` chunks when the tasks
    grab in ``order`` (a sequence of task indices, 0 the front task, repeated as needed): the
    kernel's protocol in Python, for tests and for reading the doc's claims."""
    lo, hi, out, k = 0, chunks, [], 0
    while lo < hi:
        task = order[k % len(order)]
        k += 1
        piece = max(1, (hi - lo) // take_divisor(threads))
        if task == 0:
            out.append((task, lo, piece))
            lo += piece
        else:
            hi -= piece
            out.append((task, hi, piece))
    return out


def _rewrite_loop(loop, threads: int):
    from tvm import tirx

    extent = int(loop.extent)
    k, g = chunking(extent, threads)
    dt = str(loop.extent.ty)
    i32 = "int32"
    sync = tirx.decl_buffer((_SYNC_WORDS,), i32, name="par_sync")
    mutex = tirx.address_of(tirx.BufferLoad(sync, [tirx.const(0, i32)]))
    lo = tirx.BufferLoad(sync, [tirx.const(_LO, i32)])
    hi = tirx.BufferLoad(sync, [tirx.const(_HI, i32)])

    def store(buf, idx, value):
        return tirx.BufferStore(buf, value, [tirx.const(idx, i32)])

    t = tirx.Var("par_task", i32)
    front = t == 0  # the task running the loop's first iteration takes chunks from the front
    # par_chunk: [first chunk of the take, chunks taken]; the first -1 when the work is gone
    cur = tirx.decl_buffer((2,), i32, name="par_chunk")
    c, cn = (tirx.BufferLoad(cur, [tirx.const(i, i32)]) for i in (0, 1))
    piece = tirx.Max(tirx.const(1, i32),
                     tirx.floordiv(hi - lo, tirx.const(take_divisor(threads), i32)))

    def grab():
        """Under the lock: par_chunk = the next take from this task's end, or -1."""
        take = tirx.IfThenElse(
            front, tirx.SeqStmt([store(cur, 0, lo), store(cur, 1, piece),
                                 store(sync, _LO, lo + piece)]),
            tirx.SeqStmt([store(cur, 1, piece), store(sync, _HI, hi - piece), store(cur, 0, hi)]))
        return tirx.SeqStmt([
            tirx.Evaluate(tirx.call_extern(i32, "pthread_mutex_lock", mutex)),
            tirx.IfThenElse(lo < hi, take, store(cur, 0, tirx.const(-1, i32))),
            tirx.Evaluate(tirx.call_extern(i32, "pthread_mutex_unlock", mutex)),
        ])

    def cast(e):
        return tirx.Cast(dt, e) if dt != i32 else e

    begin = cast(c) * tirx.const(g, dt)
    run = tirx.For(loop.loop_var, begin,
                   tirx.Min(cast(cn) * tirx.const(g, dt), tirx.const(extent, dt) - begin),
                   tirx.ForKind.SERIAL, loop.body)
    body = tirx.SeqStmt([
        tirx.AllocBuffer(cur),
        # racy early exit (plain loads) for the iterations after the work is gone
        tirx.IfThenElse(lo < hi, tirx.SeqStmt([
            grab(), tirx.While(c >= 0, tirx.SeqStmt([run, grab()]))]), None),
    ])
    par = tirx.For(t, tirx.const(0, i32), tirx.const(k, i32), tirx.ForKind.PARALLEL, body)
    init = [store(sync, i, tirx.const(0, i32)) for i in range(_SYNC_WORDS)]
    init[_HI] = store(sync, _HI, tirx.const(k, i32))
    return tirx.SeqStmt([tirx.AllocBuffer(sync), *init, par])


def rewrite(func, threads: int):
    """``func`` with each outermost parallel loop of a constant extent of at least
    ``_MIN_ITERATIONS`` shared dynamically (see the module doc)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop):
        if loop.kind != tirx.ForKind.PARALLEL or not isinstance(loop.extent, tirx.IntImm) \
                or int(loop.extent) < _MIN_ITERATIONS:
            return loop
        if not (isinstance(loop.min, tirx.IntImm) and int(loop.min) == 0):
            return loop
        return _rewrite_loop(loop, threads)

    body = tvm_ffi.structural_map(func.body, [(tirx.For, on_for)])
    if body.same_as(func.body):
        return func
    return func.with_body(body)


def enabled() -> bool:
    """False when ``RELAY_TVM_STATIC_PARALLEL`` is ``1`` or ``true``: TVM's static loops."""
    return os.environ.get("RELAY_TVM_STATIC_PARALLEL", "") not in ("1", "true")


PIPELINE = "relay_tvm_cpu"
UNCHECKED = PIPELINE + "_unchecked"  # PIPELINE without the kernels' argument checks

# Passes of TVM's ``s_tir`` pipeline that :data:`PIPELINE` leaves out: optimizations that
# change next to nothing in our CPU kernels. RenormalizeSplitPattern rewrites index expressions
# ``floordiv(floormod(...))`` into ``floormod(floordiv(...))``: without it MobileNet-1.0's
# machine code is the same, ResNet-18's differs by one instruction in two Winograd kernels,
# ResNet-50's outputs are bit for bit the same. HoistIfThenElse moves loop-invariant ``if``
# statements out of loops (and simplifies again): leaving it out as well changes no compute
# function of ResNet-18/50, MobileNet-1.0, MobileNetV2, SqueezeNet or Inception-v3. They took
# 0.28 and 0.26 of the 2.0 CPU seconds of TIR passes over ResNet-50's 29 kernels (a 2-core
# Zen 1 VM, TVM 0.27's PassTimingInstrument, one kernel at a time).
SKIPPED_PASSES = ("s_tir.RenormalizeSplitPattern", "s_tir.HoistIfThenElse")


def _without_skipped(base, mod):
    """``base(mod)`` with :data:`SKIPPED_PASSES` added to the current PassContext's disabled
    passes (TVM's ``Sequential`` skips a disabled pass by name). With pass instruments in the
    context it runs as it is: entering a context calls the instruments' ``enter_pass_ctx``,
    which would clear a ``PassTimingInstrument``'s profile. The context keeps TVM's options
    (``tirx.*``), not the ``relay.*`` ones."""
    import tvm

    from ..transform.pass_infra import derived_tvm_context

    cur = tvm.transform.PassContext.current()
    if len(cur.instruments):
        return base(mod)
    with derived_tvm_context(cur, disabled_pass=SKIPPED_PASSES):
        return base(mod)


def _factory(checks: bool = True):
    import tvm

    from .._threads import module_threads

    base, fin_host, fin_dev = tvm.tirx.get_tir_pipeline("s_tir")
    threads = module_threads()  # read per build: the factory runs in each tirx.build

    from . import argument_checks, prefetch

    share, fetch = enabled() and threads >= 2, prefetch.enabled()

    def one(f):
        if not isinstance(f, tvm.tirx.PrimFunc):
            return f
        if fetch:
            f = prefetch.insert(f)
        if not checks:
            f = argument_checks.drop(f)
        return rewrite(f, threads) if share else f

    def run(mod):
        mod = _without_skipped(base, mod)
        funcs = {gv: one(f) for gv, f in mod.functions.items()}
        return tvm.IRModule(funcs, attrs=mod.attrs)

    return run, fin_host, fin_dev


def pipeline(target, argument_checks: bool = True) -> str:
    """The name of the TIR pipeline to build kernels for ``target`` with: for LLVM CPU targets
    (registered on first use) TVM's ``s_tir`` without :data:`SKIPPED_PASSES`, followed by
    :func:`.prefetch.insert` (unless ``RELAY_TVM_NO_PREFETCH``), without the packed
    functions' argument checks when ``argument_checks`` is False
    (:func:`.argument_checks.drop`: for kernels only the library's own checked host program
    calls), and :func:`rewrite` (for two or more threads, unless
    ``RELAY_TVM_STATIC_PARALLEL``); else, or with all three off, ``"default"``."""
    import functools

    from .._threads import module_threads
    from . import prefetch

    if target.kind.name != "llvm" or (argument_checks and not (
            (enabled() and module_threads() >= 2) or prefetch.enabled())):
        return "default"
    from tvm.tirx import compilation_pipeline as cp

    name = PIPELINE if argument_checks else UNCHECKED
    if name not in cp.PIPELINE_MAP:
        cp.register_tir_pipeline(name, functools.partial(_factory, argument_checks))
    return name

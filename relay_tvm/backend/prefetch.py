"""Software prefetch of the coming weights in the reductions of convolution kernels.

The batched GEMM of the Winograd template (:mod:`.schedule.winograd`) reads its packed weight
``(alpha, alpha, O/k, C, k)`` one ``C x k`` slice per output-channel block: the slice is
streamed from memory by the first register tile of tiles that uses it and then re-read from L1
by the others. In a network whose weights do not stay in the last-level cache (ResNet-50: about
100 MB) every slice comes from DRAM, and its first tile waits for it: one AMD Zen 4 core ran
ResNet-50's 256-channel 14x14 Winograd layers 0.33-0.38 ms (35%) slower inside the network than
timed alone, the weight (4 MB) being the difference. The direct NCHWc template
(:mod:`.schedule.cpu_nchwc`) has the same pattern on small planes: one output-channel block's
weights for every tile of the plane, then the next block's.

The schedule annotates the reduction loop with :data:`KEY` = the prefetch distance in elements
(Winograd: ``PREFETCH_SLICES`` slices; direct: the next output-channel block, for tiles of one
block only). This pass (run after TVM's lowering, on LLVM CPU kernels, in
:func:`.dynamic_parallel.pipeline`) puts in that loop's body, just before the statement that
first loads a weight vector, one ``llvm.prefetch`` (read, locality 2) of the weight element that
distance further on: while a slice's register tiles run, the lines of the slice to come are
requested, one per reduction step. The weight is the first vector load of a
buffer the loop does not store to (a prefetch of the accumulators would take their address and
keep them out of registers). A prefetch of an address past the end of the buffer (the last
slices') does not fault. The schedules ask for it only where it was measured to pay
(``PREFETCH_MAX_TILES``, ``cpu_nchwc._DIRECT_PREFETCH_*``). ``RELAY_TVM_NO_PREFETCH=1`` turns
the pass off (for A/B).
"""

from __future__ import annotations

import os

KEY = "relay_tvm.prefetch_stride"


def enabled() -> bool:
    """False when ``RELAY_TVM_NO_PREFETCH`` is ``1`` or ``true``."""
    return os.environ.get("RELAY_TVM_NO_PREFETCH", "") not in ("1", "true")


def _stored_buffers(stmt) -> list:
    """The buffers (variables) stored to under ``stmt``."""
    import tvm_ffi
    from tvm import tirx

    found = []

    def on_any(v, vis):
        if isinstance(v, tirx.BufferStore) and not any(v.buffer.same_as(b) for b in found):
            found.append(v.buffer)
        vis.default_visit(v)

    tvm_ffi.structural_visit(stmt, on_any)
    return found


def _vector_loads(stmt, skip=()):
    """The vector (``Ramp``-indexed) loads under ``stmt``, in order, but for those of the
    buffers in ``skip``."""
    import tvm_ffi
    from tvm import tirx
    from tvm.ir.expr import TensorLoad  # what tirx.BufferLoad builds

    found = []

    def on_any(v, vis):
        if isinstance(v, TensorLoad) and len(v.indices) == 1 \
                and isinstance(v.indices[0], tirx.Ramp):
            if not any(v.source.same_as(b) for b in skip):
                found.append(v)
            return
        vis.default_visit(v)

    tvm_ffi.structural_visit(stmt, on_any)
    return found


def insert(func):
    """``func`` with a prefetch in each loop annotated with :data:`KEY`, just before the
    statement of its body that first loads a weight vector (after the ``let`` bindings of the
    address it uses)."""
    import tvm_ffi
    from tvm import tirx

    def prefetch(load, stride):
        base = load.indices[0].base
        ahead = tirx.BufferLoad(load.source, [base + tirx.const(int(stride), base.ty)])
        return tirx.Evaluate(tirx.call_intrin("void", "tirx.prefetch", tirx.address_of(ahead),
                                              tirx.const(0, "int32"), tirx.const(2, "int32"),
                                              tirx.const(1, "int32")))

    def on_for(loop):
        ann = loop.annotations or {}
        stride = ann.get(KEY)
        if stride is None:
            return loop
        stmts = list(loop.body.seq) if isinstance(loop.body, tirx.SeqStmt) else [loop.body]
        # the weight is read-only in the loop; a buffer it stores to holds accumulators
        # (a prefetch of those would take their address and keep them out of registers:
        # a 128->512 1x1 layer on 28x28 ran 55x slower on Zen 1 so)
        written = _stored_buffers(loop.body)
        for i, st in enumerate(stmts):
            loads = _vector_loads(st, written)
            if loads:
                stmts.insert(i, prefetch(loads[0], int(stride)))
                return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind,
                                tirx.SeqStmt(stmts), loop.thread_binding, {})
        return loop

    body = tvm_ffi.structural_map(func.body, [(tirx.For, on_for)])
    return func if body.same_as(func.body) else func.with_body(body)

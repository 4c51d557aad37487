"""Software prefetch of a coming weight slice in the Winograd GEMM's reduction.

The batched GEMM of the Winograd template (:mod:`.schedule.winograd`) reads its packed weight
``(alpha, alpha, O/k, C, k)`` one ``C x k`` slice per output-channel block: the slice is
streamed from memory by the first register tile of tiles that uses it and then re-read from L1
by the others. In a network whose weights do not stay in the last-level cache (ResNet-50: about
100 MB) every slice comes from DRAM, and its first tile waits for it: one AMD Zen 4 core ran
ResNet-50's 256-channel 14x14 Winograd layers 0.33-0.38 ms (35%) slower inside the network than
timed alone, the weight (4 MB) being the difference.

The schedule annotates the GEMM's reduction loop with :data:`KEY` = the prefetch distance in
elements (``PREFETCH_SLICES`` slices); this pass (run after TVM's lowering, on LLVM CPU
kernels, in :func:`.dynamic_parallel.pipeline`) puts in that loop's body, just before the
statement that first loads a weight vector, one ``llvm.prefetch`` (read, locality 2) of the
weight element that distance further on: while a slice's register tiles run, the lines of the
slice after next are requested, one per reduction step. A prefetch of an address past the end
of the buffer (the last slices') does not fault. The schedule asks for it only on planes of few
tiles (``PREFETCH_MAX_TILES``), where it was measured to pay. ``RELAY_TVM_NO_PREFETCH=1``
turns the pass off (for A/B).
"""

from __future__ import annotations

import os

KEY = "relay_tvm.prefetch_stride"


def enabled() -> bool:
    """False when ``RELAY_TVM_NO_PREFETCH`` is ``1`` or ``true``."""
    return os.environ.get("RELAY_TVM_NO_PREFETCH", "") not in ("1", "true")


def _first_vector_load(stmt):
    """The first vector (``Ramp``-indexed) load under ``stmt``, or None."""
    import tvm_ffi
    from tvm import tirx
    from tvm.ir.expr import TensorLoad  # what tirx.BufferLoad builds

    found = []

    def on_any(v, vis):
        if found:
            return
        if isinstance(v, TensorLoad) and len(v.indices) == 1 \
                and isinstance(v.indices[0], tirx.Ramp):
            found.append(v)
            return
        vis.default_visit(v)

    tvm_ffi.structural_visit(stmt, on_any)
    return found[0] if found else None


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
        stride = loop.annotations.get(KEY) if loop.annotations else None
        if stride is None:
            return loop
        stmts = list(loop.body.seq) if isinstance(loop.body, tirx.SeqStmt) else [loop.body]
        for i, st in enumerate(stmts):
            load = _first_vector_load(st)
            if load is not None:
                stmts.insert(i, prefetch(load, stride))
                return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind,
                                tirx.SeqStmt(stmts), loop.thread_binding, {})
        return loop

    body = tvm_ffi.structural_map(func.body, [(tirx.For, on_for)])
    return func if body.same_as(func.body) else func.with_body(body)

"""Generic schedules: what every kernel gets when no better rule applies.

CPU: producers that are injective are inlined into their consumers (what fusion is for), then
each remaining block's outer spatial loops are fused and run in parallel (when the nest has
:data:`MIN_PARALLEL_WORK` iterations or more) and its innermost spatial loop is vectorized when
its extent allows. GPU: TVM's dlight default rules
(``tvm.s_tir.dlight.gpu``: Matmul, GEMV, Reduction, GeneralReduction, Fallback).

Every schedule step is tried and skipped when TVM refuses it (a ``ScheduleError`` leaves the
schedule unchanged), so the generic rule never fails a build; it only gets slower.
"""

from __future__ import annotations


def _try(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception:  # tvm.s_tir.ScheduleError and TVMError: the step does not apply
        return None


def iter_kinds(sch, block) -> list:
    """``"S"`` (spatial) / ``"R"`` (reduction) / ``"O"`` per block iteration variable."""
    b = sch.get(block)
    out = []
    for iv in b.iter_vars:
        k = int(iv.iter_type)
        out.append("S" if k == 0 else "R" if k == 2 else "O")
    return out


def loop_extent(sch, loop):
    ext = sch.get(loop).extent
    # IntImm only: a Cast also has a ``value`` (its operand), a symbolic one
    return int(ext) if type(ext).__name__ == "IntImm" else None


# Inlining substitutes a producer's expression at every place its consumer reads it, and
# TVM's LowerIntrin then expands some intrinsics into formulas that use their argument several
# times (LLVM's numerically stable tanh reads it 4 times: a select on its sign and two
# exponentials). Neither step shares subexpressions, so a fused chain of K such operators
# becomes an expression tree of ~4^K nodes: 7 levels of tanh(x)*1.5 took 9.6 s in LowerIntrin
# alone, fast_tanh (its argument read ~10 times in topi's rational polynomial) 5 levels more
# than two minutes. A producer whose inlining would make a consumer's expanded expression larger
# than this stays a stage of its own (its values written once to an intermediate buffer of the
# kernel, then read), which keeps the build linear in the chain's length.
MAX_INLINED_EXPR_NODES = 2048
# How many times TVM's lowering of an intrinsic (llvm.FLowerIntrinsic / default.FLegalize,
# src/target/llvm/intrin_rule_llvm.cc and src/target/intrin_rule.cc) reads its argument.
_INTRINSIC_ARG_USES = {"tirx.tanh": 4, "tirx.atanh": 2, "tirx.sinh": 2, "tirx.cosh": 2,
                       "tirx.asinh": 2, "tirx.acosh": 2, "tirx.isfinite": 2, "tirx.isinf": 2,
                       "tirx.sigmoid": 1, "tirx.atan": 2, "tirx.asin": 3, "tirx.acos": 3,
                       "tirx.tan": 2, "tirx.erf": 2}


def expanded_size(expr, load_sizes=None, limit: int = 1 << 30) -> int:
    """The number of nodes of ``expr`` as a tree after intrinsic expansion: what later passes
    and LLVM's code generator visit. A read of a buffer in ``load_sizes`` (buffer -> size)
    counts as that many nodes (the expression inlining would put there). Counting stops once
    it passes ``limit``."""
    load_sizes = load_sizes or {}

    def size(e, budget):
        if budget <= 0:
            return 1
        kind = type(e).__name__
        if kind in ("TensorLoad", "BufferLoad"):
            n = load_sizes.get(e.source) if load_sizes else None  # buffers hash by handle
            if n is not None:
                return n
            return 1 + sum(size(i, budget) for i in e.indices)
        if kind == "Call":
            name = getattr(e.op, "name", "")
            inner = sum(size(a, budget) for a in e.args if hasattr(a, "ty"))
            return 1 + _INTRINSIC_ARG_USES.get(name, 1) * inner
        if kind == "Select":
            kids = (e.condition, e.true_value, e.false_value)
        elif kind in ("Cast", "Not", "Broadcast"):
            kids = (e.value,) if kind != "Not" else (e.a,)
        elif kind == "Let":
            kids = (e.value, e.body)
        elif hasattr(e, "a") and hasattr(e, "b"):
            kids = (e.a, e.b)
        else:
            return 1
        total = 1
        for k in kids:
            total += size(k, budget - total)
        return total

    return size(expr, limit)


def _store_value(sch, block):
    body = sch.get(block).body
    return body.value if type(body).__name__ == "BufferStore" else None


def inline_too_large(sch, block, limit: int = MAX_INLINED_EXPR_NODES) -> bool:
    """Whether inlining ``block`` would give one of its consumers an expression of more than
    ``limit`` nodes after intrinsic expansion (see :data:`MAX_INLINED_EXPR_NODES`)."""
    value = _store_value(sch, block)
    writes = sch.get(block).writes
    if value is None or len(writes) != 1:
        return False
    buf = getattr(writes[0], "buffer", None) or writes[0].source
    n = expanded_size(value, limit=limit)
    for c in sch.get_consumers(block):
        cv = _store_value(sch, c)
        if cv is not None and expanded_size(cv, {buf: n}, limit) > limit:
            return True
    return False


def inlining_stays_small(sch, limit: int = MAX_INLINED_EXPR_NODES) -> bool:
    """Whether inlining every block into its consumers keeps every expression within
    ``limit`` nodes: one pass in block order (producers first), each block's value sized with
    its reads of earlier blocks' buffers counted as those blocks' sizes so far. An upper
    bound of what :func:`inline_too_large` checks step by step, so when it holds (nearly
    every kernel) the steps need no check."""
    sizes = {}
    for b in sch.get_child_blocks(sch.get_sblock("root")):
        value = _store_value(sch, b)
        writes = sch.get(b).writes
        if value is None or len(writes) != 1:
            continue
        n = expanded_size(value, sizes, limit)
        if n > limit:
            return False
        sizes[getattr(writes[0], "buffer", None) or writes[0].source] = n
    return True


def inline_producers(sch) -> None:
    """Inline every non-output block that can be inlined (injective producers such as padding,
    broadcasts, casts).

    Each round tries every block once, in order (inlining a block leaves the others' handles
    and the set of output blocks as they were), and rounds repeat while one inlined something
    (a block refused before its consumer changed is tried again): a chain of ``K`` elementwise
    blocks takes one round, not ``K`` restarts that each listed every block (a fused group of
    ~420 blocks spent 5 s in those lists)."""
    if not _has_root(sch):
        return
    root = sch.get_sblock("root")
    outputs = {sch.get(b).name_hint for b in sch.get_output_blocks(root)}
    guard = not inlining_stays_small(sch)
    changed = True
    while changed:
        changed = False
        for b in sch.get_child_blocks(root):
            if sch.get(b).name_hint in outputs:
                continue
            if "R" in iter_kinds(sch, b):
                continue
            if guard and inline_too_large(sch, b):
                continue
            if _try(sch.compute_inline, b) is not None or _inlined(sch, b):
                changed = True


def _has_root(sch) -> bool:
    try:
        sch.get_sblock("root")
        return True
    except Exception:
        return False


def _inlined(sch, block) -> bool:
    try:
        sch.get(block)
        return False
    except Exception:
        return True


def touches_bool(sch, block) -> bool:
    """Whether the block reads or writes a bool buffer (TVM 0.27's vectorizer mishandles
    them: int8 vectors stored into bool buffers)."""
    b = sch.get(block)
    for r in list(b.reads) + list(b.writes):
        buf = getattr(r, "buffer", None) or getattr(r, "source", None)
        if buf is not None and str(buf.dtype) == "bool":
            return True
    return False


# A loop nest of fewer iterations than this runs on the calling thread: its work (a few
# microseconds: a 32K-element elementwise kernel takes 3-6 us on one Zen 3 core) is not worth
# waking the worker threads and joining them, which a first-order gradient would pay hundreds
# of times per run (its BatchNorm gradients are chains of per-channel kernels of 64-512
# elements, elementwise ones of 8-32K: ResNet-18 batch 8 at 32x32 went from 915 parallel
# regions per step to 129), and which costs far more when another process holds a core.
MIN_PARALLEL_WORK = 1 << 16


def nest_work(sch, block) -> int | None:
    """The number of iterations of ``block``'s loop nest (None when an extent is symbolic)."""
    work = 1
    for lp in sch.get_loops(block):
        ext = loop_extent(sch, lp)
        if ext is None:
            return None
        work *= ext
    return work


def parallel_vectorize(sch, block, max_parallel_extent: int = 1 << 14, vector_bytes: int = 64,
                       dtype_bytes: int = 4, min_parallel_work: int = MIN_PARALLEL_WORK) -> None:
    """Parallelize the leading spatial loops of ``block`` (fused) and vectorize its innermost
    loop when it is spatial (split by the vector width when longer). A nest of fewer than
    ``min_parallel_work`` iterations stays serial (see :data:`MIN_PARALLEL_WORK`)."""
    loops = sch.get_loops(block)
    if not loops:
        return
    work = nest_work(sch, block)
    serial = work is not None and work < min_parallel_work
    kinds = iter_kinds(sch, block)
    # loops map 1:1 to iter vars right after create_prim_func; rely on that only when counts match
    if len(kinds) != len(loops):
        return
    lead = []
    for lp, k in zip(loops, kinds):
        if k != "S":
            break
        lead.append(lp)
    # Vectorize the innermost loop when the whole nest is spatial.
    if len(lead) == len(loops) and len(loops) >= 1 and not touches_bool(sch, block):
        inner = loops[-1]
        ext = loop_extent(sch, inner)
        lanes = max(1, vector_bytes // dtype_bytes)
        if ext is not None and ext > 1:
            if ext > lanes and ext % lanes == 0:
                outer, vin = sch.split(inner, factors=[None, lanes])
                _try(sch.vectorize, vin)
                loops = sch.get_loops(block)
                lead = list(loops[:-1])
            elif ext <= lanes:
                _try(sch.vectorize, inner)
                lead = lead[:-1]
            else:
                lead = lead[:-1]
    if not lead or serial:
        return
    # Fuse as many leading spatial loops as give a useful amount of parallel work.
    take, total = [], 1
    for lp in lead:
        ext = loop_extent(sch, lp)
        if ext is None:
            break
        take.append(lp)
        total *= ext
        if total >= max_parallel_extent:
            break
    if not take:
        return
    fused = take[0] if len(take) == 1 else _try(sch.fuse, *take)
    if fused is not None:
        _try(sch.parallel, fused)


def cpu_fallback(sch) -> None:
    """The generic CPU schedule of a whole PrimFunc (in place)."""
    if not _has_root(sch):  # an extern kernel (topi.argsort/topk): nothing to schedule
        return
    inline_producers(sch)
    root = sch.get_sblock("root")
    for b in sch.get_child_blocks(root):
        if _inlined(sch, b):
            continue
        parallel_vectorize(sch, b, dtype_bytes=_dtype_bytes(sch, b))


def _dtype_bytes(sch, block) -> int:
    import tvm

    b = sch.get(block)
    if not b.writes:
        return 4
    w = b.writes[0]
    buf = getattr(w, "buffer", None) or getattr(w, "source", None)
    if buf is None or not hasattr(buf, "dtype"):
        return 4
    dt = tvm.DataType(str(buf.dtype))
    return max(1, dt.bits * dt.lanes // 8)


def is_gpu_target(target) -> bool:
    return "gpu" in target.keys


def gpu_fallback(mod, target):
    """dlight's default GPU rules over an IRModule (returns the scheduled module).

    A cross-thread reduction needs a combiner TVM recognises (``max`` from the lowest finite
    value, ``+``, ...); the NaN-propagating IEEE ``max``/``min`` reducers of ``op._ieee`` are not
    among them, and dlight's GeneralReduction rule does not check. A schedule whose cross-thread
    reduction cannot be lowered is replaced by dlight's Fallback (each thread reduces serially).
    """
    import tvm
    from tvm.s_tir import dlight as dl

    pristine = tvm.ir.load_json(tvm.ir.save_json(mod))  # dlight may rewrite ``mod`` in place
    with target:
        out = dl.ApplyDefaultSchedule(
            dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(),
            dl.gpu.Fallback(),
        )(mod)
        try:
            tvm.s_tir.transform.LowerCrossThreadReduction()(out)
        except Exception:  # noqa: BLE001 - an unrecognised combiner: serial reductions
            out = gpu_serial(pristine, target)
    return out


def gpu_serial(mod, target, threads: int = 256):
    """A GPU schedule without cross-thread reductions: injective producers inlined, then each
    remaining block's leading spatial loops fused and bound to ``blockIdx.x``/``threadIdx.x``;
    its reduction loops run serially inside the thread (pooling windows, small reductions)."""
    import tvm

    sch = tvm.s_tir.Schedule(mod)
    sch.work_on("main")
    inline_producers(sch)
    root = sch.get_sblock("root")
    threads = min(threads, int(target.attrs.get("max_num_threads", threads)))
    for b in sch.get_child_blocks(root):
        loops = sch.get_loops(b)
        kinds = iter_kinds(sch, b)
        lead = [lp for lp, _ in zip(loops, kinds)]
        if len(kinds) == len(loops):
            lead = []
            for lp, k in zip(loops, kinds):
                if k != "S":
                    break
                lead.append(lp)
        if not lead:  # a reduction to a scalar: one thread
            lead = [sch.add_unit_loop(b)]
        fused = lead[0] if len(lead) == 1 else sch.fuse(*lead)
        bx, tx = sch.split(fused, factors=[None, threads])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
    return sch.mod


__all__ = ["cpu_fallback", "gpu_fallback", "inline_producers", "inline_too_large", "parallel_vectorize",
           "iter_kinds"]

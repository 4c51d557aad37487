"""A small analytic model of a CPU target, and the register-tile choice made from it.

The CPU templates (``cpu.py``) all compute an output tile of ``m`` unrolled rows/columns times
``v`` SIMD vectors in registers: each reduction step broadcasts ``m`` scalars of one operand,
loads ``v`` vectors of the other and issues ``m * v`` FMAs into ``m * v`` accumulators. Such a
micro-kernel runs at peak when

- its registers fit: ``m * v`` accumulators + ``v`` loaded vectors + 1 broadcast <= the vector
  register file (16 ymm on AVX2, 32 zmm with AVX-512, 32 q on NEON), else LLVM spills; with
  ``m == 1`` each loaded vector feeds one FMA, which takes it as a memory operand, so only the
  accumulators and the broadcast need registers;
- there are enough independent accumulators to hide the FMA latency: ``m * v >= latency x
  pipes`` (4 cycles x 2 pipes on Haswell..Zen 4 and Skylake-SP);
- the loads keep up: ``m + v`` loads feed ``m * v`` FMAs, so a larger ``m * v / (m + v)`` leaves
  the load ports idle more often.

:func:`register_tile` picks ``(m, v)`` by these rules among the candidates a layer allows (the
extents they must divide). The features come from the target (``mcpu``/``mattr``/``mtriple``),
not from a CPU's marketing name, and the cache sizes from the host when the target is the host.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

# AVX2 cores whose vector units are 128 bits wide (Zen 1, the Bulldozer family, Jaguar)
_HALF_WIDTH_AVX2_CPUS = ("znver1", "bdver", "btver2")


@dataclass(frozen=True)
class CPUFeatures:
    """What the templates need to know about a CPU target.

    Attributes:
        arch: ``"x86"`` or ``"arm"``.
        vector_bits: SIMD width in bits (128 SSE/NEON, 256 AVX2, 512 AVX-512).
        vector_registers: architectural SIMD registers (16 below AVX-512 on x86, 32 otherwise).
        fma_latency: cycles from an FMA's issue to its result.
        fma_pipes: FMAs issued per cycle.
        l1d_bytes: L1 data cache per core.
        l2_bytes: L2 cache per core.
        load_ports: vector loads issued per cycle: 2 on AVX-512 cores (Skylake-SP, Zen 4
            and 5), NEON cores and Zen 1; 1.5 on other 256-bit x86, the rate measured on
            Zen 3 with broadcasts among the loads (one core, 2026-12-07: a 13-position x 1-vector tile,
            14 loads per 13 FMAs, ran at 56% of peak, 4 x 2 at 94%; two loads a cycle would
            predict 93% for the first).
        split_512: 512-bit instructions run as two 256-bit halves (Zen 4), so one 512-bit FMA
            issues per cycle however the tile is shaped; the NCHWc template then prefers one
            output-channel block per tile (see :func:`.cpu_nchwc._plan`).
        dot_lanes: int32 lanes of the uint8 x int8 dot product ``vpdpbusd``: 16 with
            AVX512-VNNI, 8 with AVX-VNNI only, 0 without (:mod:`.cpu_int`).
        overlapped_reads: the NCHWc template's re-reads of a layer's input (one per channel
            group) stream in while the FMAs run, so a plan costs the larger of its compute and
            its reads (a roofline) rather than their sum (:func:`.cpu_nchwc._plan`). Set for
            256-bit x86, where the sum overrated the reads: on Zen 3 (one core, 2026-12-07)
            it chose two channel blocks x 2 positions with the reduction in passes for
            MobileNet's and ResNet-50's 1x1 layers, and one block x 4-5 positions in one pass
            ran 1.11-1.14x faster alone (512->512 on 14x14: 80.8 -> 91.7 GFLOP/s, 91% of the
            core's peak); whole networks up to 1.08x faster. AVX-512 targets keep the sum,
            with which their tiles were measured (Zen 4 and 5), until measured otherwise,
            and so do AVX2 cores with 128-bit vector units (Zen 1: its knob sweep found the
            sum's plan best; the roofline is not measured there).
    """

    arch: str
    vector_bits: int
    vector_registers: int
    fma_latency: int
    fma_pipes: int
    l1d_bytes: int
    l2_bytes: int
    load_ports: float = 2
    split_512: bool = False
    dot_lanes: int = 0
    overlapped_reads: bool = False

    def lanes(self, dtype_bits: int = 32) -> int:
        return max(1, self.vector_bits // dtype_bits)

    def l2_bytes_per_cycle(self) -> int:
        """Bytes per cycle one core's L2 refills its L1 with: one cache line (64 B) per cycle
        on cores with 512-bit vector loads (Skylake-SP, Zen 4 and 5), half a line on 256-bit
        x86 cores (Haswell..Zen 3) and the NEON cores the ARM model stands for (32 B)."""
        return max(32, self.vector_bits // 8)


def _host_cache(level: int, default: int) -> int:
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(base)):
            d = os.path.join(base, entry)
            with open(os.path.join(d, "level"), encoding="ascii") as f:
                lv = int(f.read())
            with open(os.path.join(d, "type"), encoding="ascii") as f:
                kind = f.read().strip()
            if lv != level or kind == "Instruction":
                continue
            with open(os.path.join(d, "size"), encoding="ascii") as f:
                text = f.read().strip().upper()
            mult = {"K": 1 << 10, "M": 1 << 20}.get(text[-1], 1)
            return int(text.rstrip("KM")) * mult
    except (OSError, ValueError):
        pass
    return default


def has_feature(target, feature: str) -> bool:
    """Whether LLVM says ``target`` has the CPU ``feature`` (``"avx2"``, ``"avx512vnni"``, ...);
    False for a target LLVM does not know."""
    import tvm

    try:
        return bool(tvm.target.codegen.target_has_features(feature, target))
    except Exception:  # a target LLVM does not know
        return False


def cpu_features(target) -> CPUFeatures:
    """The :class:`CPUFeatures` of an LLVM ``tvm.target.Target``."""
    attrs = target.attrs
    mcpu = str(attrs.get("mcpu", ""))
    triple = str(attrs.get("mtriple", ""))
    if triple.startswith(("aarch64", "arm")):
        return CPUFeatures("arm", 128, 32, 4, 2, 64 << 10, 512 << 10)
    if has_feature(target, "avx512f"):  # LLVM's answer for mcpu and mattr together
        feats = CPUFeatures("x86", 512, 32, 4, 2, 32 << 10, 1 << 20,
                            split_512=mcpu.startswith("znver4"))
    elif mcpu.startswith(_HALF_WIDTH_AVX2_CPUS):
        # 256-bit operations as two 128-bit halves (one 256-bit FMA a cycle): the sum of
        # compute and reads and two loads a cycle, as measured there (the knob sweep of
        # ResNet-50's residual 1x1 layer on Zen 1, 2026-12-07, found the sum's plan best)
        feats = CPUFeatures("x86", 256, 16, 4, 2, 32 << 10, 256 << 10)
    else:
        feats = CPUFeatures("x86", 256, 16, 4, 2, 32 << 10, 256 << 10, load_ports=1.5,
                            overlapped_reads=True)
    from ..target import host_cpu

    if mcpu == host_cpu()[0]:
        feats = dataclasses.replace(feats, l1d_bytes=_host_cache(1, feats.l1d_bytes),
                                    l2_bytes=_host_cache(2, feats.l2_bytes))
    lanes = next((n for f, n in (("avx512vnni", 16), ("avxvnni", 8)) if has_feature(target, f)), 0)
    if lanes:
        feats = dataclasses.replace(feats, dot_lanes=lanes)
    return feats


def register_tile(feats: CPUFeatures, m_choices, v_choices) -> tuple:
    """``(m, v)``: rows/columns unrolled x vectors of the micro-kernel tile (see the module doc).

    Args:
        feats: the target's features.
        m_choices: allowed values of ``m`` (those dividing the unrolled extent).
        v_choices: allowed values of ``v`` (vectors that divide the vectorized extent).

    Returns:
        The feasible pair with the most latency-hiding accumulators (up to latency x pipes),
        then the most FMAs per load, then the most accumulators; ``(1, 1)`` when nothing fits.
    """
    need = feats.fma_latency * feats.fma_pipes
    best, best_key = (1, 1), None
    for v in v_choices:
        for m in m_choices:
            if m < 1 or v < 1 or tile_registers(m, v) > feats.vector_registers:
                continue
            acc = m * v
            key = (min(acc, need), acc / (m + v), acc)
            if best_key is None or key > best_key:
                best, best_key = (m, v), key
    return best


def tile_registers(m: int, v: int) -> int:
    """Vector registers an ``m x v`` tile needs (see the module doc)."""
    return m * v + (v if m > 1 else 0) + 1


def tile_cycles(feats: CPUFeatures, m: int, v: int) -> float:
    """Cycles of one reduction step of an ``m x v`` tile: the slowest of FMA issue (``m * v``
    FMAs on ``fma_pipes``), the FMA latency (each accumulator's chain advances once a step)
    and the ``m + v`` loads on ``load_ports``."""
    return max(m * v / feats.fma_pipes, float(feats.fma_latency), (m + v) / feats.load_ports)


def row_tile(feats: CPUFeatures, extent: int, v_choices, m_max: int = 16,
             conditional: bool = False, stream: float | None = None) -> tuple:
    """``(m, v, cost)``: the register tile for a row of ``extent`` outputs that ``m`` need not
    divide (the last ``extent % m`` outputs form one narrower tail tile).

    ``cost`` is the model's cycles per output vector and reduction step: the row's
    ``extent // m`` full tiles and its tail at :func:`tile_cycles`, divided by ``extent * v``.
    The cheapest feasible pair wins (ties: no tail, then more FMAs per load, then the smaller
    ``m``), so a row of a prime length (7, 13, 17, 109) gets a full-size tile and one tail
    instead of one-column tiles.

    ``conditional``: the broadcast operand is a conditional load (a padded input read through
    its padding): it cannot be a memory operand, so each of the ``m`` broadcasts holds a
    register of its own (on Zen 5, the 3-channel stride-2 stem with 28 accumulators ran 3-5x
    slower than with 14; on AVX2 the best tile was the largest within this bound).

    ``stream``: bytes per cycle at which the ``v`` weight vectors of each reduction step arrive
    when they do not stay in L1 (each tile, the tail included, loads them again): a tile takes
    at least ``v * vector_bytes / stream`` cycles a step. A narrow tail pays that for few
    outputs, so a row of 7 prefers one 7 x 2 tile to a 5 x 4 tile and a 2 x 4 tail (on Zen 5,
    ResNet-18's 7x7-plane 3x3 layers ran 1.7-2.2x faster so).
    """
    best, best_key = (1, 1, float("inf")), None
    for v in v_choices:
        for m in range(1, min(extent, m_max) + 1):
            if v < 1 or tile_registers(m, v) + (m if conditional else 0) > \
                    feats.vector_registers:
                continue
            tail = extent % m
            floor = v * feats.vector_bits / 8 / stream if stream else 0.0
            cyc = (extent // m) * max(tile_cycles(feats, m, v), floor)
            if tail:
                cyc += max(tile_cycles(feats, tail, v), floor)
            cost = cyc / (extent * v)
            key = (round(cost, 6), bool(tail), -(m * v) / (m + v), m)
            if best_key is None or key < best_key:
                best, best_key = (m, v, cost), key
    return best


def divisors(n: int, limit: int) -> list:
    """Divisors of ``n`` up to ``limit``, ascending."""
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


__all__ = ["CPUFeatures", "cpu_features", "register_tile", "tile_registers", "tile_cycles",
           "row_tile", "divisors"]

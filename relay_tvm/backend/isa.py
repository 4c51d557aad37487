"""The instruction set a compiled library needs, and the check that the running machine has it.

A library compiled for ``llvm -mcpu=skylake-avx512`` holds AVX-512 instructions; run on a CPU
without them, the process dies of SIGILL in the first kernel. :func:`target_isa` records what an
LLVM target requires (its architecture from ``mtriple`` and the instruction-set extensions LLVM
enables for its ``mcpu``/``mattr``); exported libraries carry that record (see
:mod:`relay_tvm.backend.library_file`), and :func:`check_isa` compares it with the host
(``platform.machine()`` and the flags in ``/proc/cpuinfo``) before any kernel runs.

Only instruction-set extensions are compared (tuning flags such as ``fast-gather`` are not
instructions). LLVM names them differently from the kernel's ``/proc/cpuinfo``; ``_X86`` and
``_ARM`` map one to the other. Where the host flags cannot be read (no ``/proc/cpuinfo``, or
an emulator showing another architecture's), only the architecture is compared.
"""

from __future__ import annotations

import functools

# LLVM feature name -> /proc/cpuinfo flag (x86_64)
_X86 = {
    "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "sse4a": "sse4a",
    "avx": "avx", "avx2": "avx2", "fma": "fma", "f16c": "f16c", "bmi": "bmi1", "bmi2": "bmi2",
    "lzcnt": "abm", "popcnt": "popcnt", "movbe": "movbe", "aes": "aes", "pclmul": "pclmulqdq",
    "vaes": "vaes", "vpclmulqdq": "vpclmulqdq", "gfni": "gfni", "sha": "sha_ni", "adx": "adx",
    "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512cd": "avx512cd",
    "avx512dq": "avx512dq", "avx512vl": "avx512vl", "avx512vnni": "avx512_vnni",
    "avx512bf16": "avx512_bf16", "avx512fp16": "avx512_fp16", "avx512vbmi": "avx512vbmi",
    "avx512vbmi2": "avx512_vbmi2", "avx512ifma": "avx512ifma",
    "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
    "avxvnni": "avx_vnni", "amx-tile": "amx_tile", "amx-int8": "amx_int8",
    "amx-bf16": "amx_bf16",
}
# LLVM feature name -> /proc/cpuinfo "Features" entry (aarch64)
_ARM = {
    "neon": "asimd", "sve": "sve", "sve2": "sve2", "dotprod": "asimddp", "fullfp16": "fphp",
    "i8mm": "i8mm", "bf16": "bf16", "fp16fml": "asimdfhm", "sme": "sme",
}
_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


def _arch(name: str) -> str:
    name = name.lower()
    return _ARCH_ALIASES.get(name, name)


def target_isa(target) -> dict | None:
    """What an LLVM target's code needs: ``{"arch", "features", "target"}`` (``features``: the
    LLVM names of the instruction-set extensions enabled, sorted), or None for other targets.

    Args:
        target: a ``tvm.target.Target`` (kind ``llvm`` is recorded; others give None).
    """
    if target is None or target.kind.name != "llvm":
        return None
    import tvm

    triple = str(target.attrs.get("mtriple", "")) or tvm.target.codegen.llvm_get_system_triple()
    arch = _arch(triple.split("-")[0])
    table = _X86 if arch == "x86_64" else _ARM if arch == "aarch64" else {}
    try:
        enabled = set(tvm.target.codegen.llvm_get_cpu_features(target))
    except Exception:  # noqa: BLE001 - an LLVM without the query: record the arch only
        enabled = set()
    return {"arch": arch, "features": sorted(f for f in enabled if f in table),
            "target": _describe(target)}


def _describe(target) -> str:
    """The target as its command-line form of what decides the instructions (``llvm
    -mcpu=skylake-avx512``), for messages: ``str(target)`` is TVM's whole JSON, which a
    refused library's message printed in full (fresh-user trial)."""
    parts = [target.kind.name]
    for key in ("mtriple", "mcpu", "mattr"):
        v = target.attrs.get(key)
        if v:
            parts.append(f"-{key}={','.join(str(x) for x in v) if key == 'mattr' else v}")
    return " ".join(parts)


@functools.lru_cache(maxsize=1)
def cpu_info() -> dict:
    """The first processor's fields of ``/proc/cpuinfo`` (``{"model name": ..., "flags": ...}``
    on x86, ``"Features"`` on AArch64), or ``{}`` where it cannot be read."""
    info: dict = {}
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if info:
                        break
                    continue
                name, _, value = line.partition(":")
                info.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    return info


@functools.lru_cache(maxsize=1)
def host_isa() -> tuple:
    """``(arch, flags)`` of this machine: ``platform.machine()`` normalized (``x86_64``,
    ``aarch64``) and the set of ``/proc/cpuinfo`` flags, or None where they cannot be read."""
    import platform

    arch = _arch(platform.machine())
    key = "flags" if arch == "x86_64" else "features" if arch == "aarch64" else None
    value = next((v for k, v in cpu_info().items() if k.lower() == key), None)
    return arch, None if value is None else set(value.split())


def missing_features(isa: dict, host: tuple | None = None) -> tuple:
    """``(arch_mismatch, missing)``: whether the architecture differs from the host's, and the
    LLVM names of the recorded features the host lacks (empty when its flags are unknown)."""
    arch, flags = host if host is not None else host_isa()
    if isa.get("arch") and isa["arch"] != arch:
        return True, []
    table = _X86 if arch == "x86_64" else _ARM if arch == "aarch64" else {}
    if flags is None or not table:
        return False, []
    return False, [f for f in isa.get("features", []) if f in table and table[f] not in flags]


def check_isa(isa: dict | None, who: str, what: str, host: tuple | None = None) -> None:
    """Refuse to run code compiled for instructions this machine lacks (it would die of SIGILL).

    Args:
        isa: the record of :func:`target_isa` (None: nothing recorded, nothing checked).
        who: the caller, for the message (``"load_module"``).
        what: the library, for the message (its path).
        host: ``(arch, flags)`` to compare with (default: :func:`host_isa`).

    Raises:
        BuildError: another architecture, or features missing on this CPU; the message names
            them and how to rebuild.
    """
    if not isa:
        return
    from ..errors import BuildError

    arch, _ = host if host is not None else host_isa()
    wrong_arch, missing = missing_features(isa, host)
    built = f" (target {isa['target']})" if isa.get("target") else ""
    if wrong_arch:
        raise BuildError(f"{who}: {what} was compiled for {isa['arch']}{built}, and this "
                         f"machine is {arch}; run it on an {isa['arch']} machine, or rebuild "
                         f"with target 'llvm' here")
    if missing:
        raise BuildError(
            f"{who}: {what} was compiled for CPU features this machine lacks: "
            f"{', '.join(missing)}{built}; running it would die of an illegal "
            f"instruction (SIGILL). Rebuild it for this CPU: target 'llvm' or "
            f"'llvm -mcpu=native' (the host CPU), or a CPU this one covers (e.g. "
            f"'llvm -mcpu=haswell' for AVX2)")


__all__ = ["target_isa", "host_isa", "cpu_info", "missing_features", "check_isa"]

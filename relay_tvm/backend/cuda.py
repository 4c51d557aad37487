"""CUDA code generation details: the GPU architecture a build is for, and compiling the
generated kernels with ``nvcc``.

A CUDA target without ``-arch`` takes the architecture of this machine's GPU; on a machine
without one it is built for :data:`DEFAULT_ARCH` (``sm_50``, what TVM 0.19 and 0.27 assume) with
one ``UserWarning`` that names it and how to choose another (``-arch=sm_xx``). Every way of
making such a target does the same (``relay.build(mod, "cuda")``, ``tvm.target.Target("cuda")``,
``tvm.target.cuda()``, a ``{"kind": "cuda"}`` dict), and the target a build records
(``lib.target.attrs["arch"]``) names the architecture chosen. TVM 0.27 ships a CUDA build's kernels as CUDA C++ source that its CUDA runtime compiles
when the module is loaded on the GPU machine (NVRTC by default, or ``nvcc``); a build on a
machine without a GPU cannot embed SASS. :func:`compile_fatbin` runs the same compilation here,
so a build is checked for its architecture before it is shipped.
"""

from __future__ import annotations

import shutil
import struct

from ..errors import BuildError, InputError

_FATBIN_MAGIC = 0xBA55ED50


def local_arch() -> str | None:
    """``"sm_XY"`` of this machine's first CUDA GPU, or None (no GPU or no CUDA runtime)."""
    import tvm

    try:
        dev = tvm.cuda(0)
        if not dev.exist:
            return None
        return "sm_" + str(dev.compute_version).replace(".", "")
    except Exception:  # noqa: BLE001 - TVM without its CUDA runtime
        return None


# The architecture of a CUDA target without -arch on a machine without a GPU: TVM's own default
# (0.19's too), the oldest GPU TVM generates code for. TVM's CUDA runtime compiles a loaded
# module's kernels for the GPU it loads them on; compiling them here for sm_50 itself
# (compile_fatbin(source, "sm_50")) needs a CUDA toolkit older than 13 (CUDA 13 starts at sm_75).
DEFAULT_ARCH = "sm_50"


def _user_stacklevel() -> int:
    """``stacklevel`` of the first frame outside relay_tvm and tvm: a warning names the line of
    the caller's code, whichever entry point led here."""
    import os
    import sys

    pkgs = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                 for m in (sys.modules["relay_tvm"], sys.modules.get("tvm")) if m is not None)
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkgs):
        frame, level = frame.f_back, level + 1
    return level


def default_arch(text) -> str:
    """The ``arch`` of a CUDA target ``text`` that names none: the local GPU's, else
    :data:`DEFAULT_ARCH` with a ``UserWarning`` naming it and the ``-arch`` option."""
    arch = local_arch()
    if arch is not None:
        return arch
    import warnings

    warnings.warn(
        f"target {text!r}: no -arch given and no CUDA GPU on this machine to read it from; "
        f"building for {DEFAULT_ARCH} (TVM's default). Name the GPU you deploy to with "
        f"-arch=sm_xx, e.g. 'cuda -arch=sm_80' (A100) or 'cuda -arch=sm_90' (H100/H200), or "
        f"tvm.target.cuda(arch='sm_80')", UserWarning, stacklevel=_user_stacklevel())
    return DEFAULT_ARCH


def complete_cuda(d: dict, text) -> dict:
    """The ``arch`` of a CUDA target dict: given (checked), else the local GPU's, else
    :data:`DEFAULT_ARCH` with a warning (:func:`default_arch`); and
    ``max_shared_memory_per_block`` unless given: 48 KB, what every CUDA GPU gives a block
    without opting in to more (TVM's schedules fell back to the same value with a log line on
    every build)."""
    if d.get("kind") != "cuda":
        return d
    d = {"max_shared_memory_per_block": 48 << 10, **d}
    if "arch" in d:
        _arch_number(d["arch"], f"target {text!r}")  # 'sm_xx', 'sm_999': refused here
        return d
    return {**d, "arch": default_arch(text)}


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


# Compute capabilities of NVIDIA GPUs that CUDA toolkits have compiled for (Kepler sm_30 to
# Blackwell sm_121; sm_101 is CUDA 12.8/12.9's name of CUDA 13's sm_110). One toolkit takes a
# window of them (`nvcc --list-gpu-arch`: CUDA 13 starts at sm_75); the target only records the
# arch and the GPU machine's compiler builds for it, so any real one is accepted here.
KNOWN_ARCHS = (30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100,
               101, 103, 110, 120, 121)


def _arch_number(arch: str, where: str = "target cuda") -> str:
    """The ``XY`` of ``"sm_XY"`` (with its ``a``/``f`` suffix), checked against the GPUs that
    exist: TVM 0.27 takes any string (``sm_999``) and only the CUDA compiler, on the GPU
    machine when the module is loaded, would refuse it.

    Raises:
        InputError: (a BuildError) not ``sm_`` + digits, a compute capability no GPU has, or a
            suffix the architecture lacks (``a``: sm_90 on, ``f``: sm_100 on).
    """
    digits = str(arch)[3:] if str(arch).startswith("sm_") else ""
    number = digits[:-1] if digits[-1:] in ("a", "f") else digits
    if not number.isdigit():
        raise InputError(f"{where}: -arch={arch!r} is not an architecture like 'sm_80' "
                         f"(sm_ and the GPU's compute capability, 8.0 -> sm_80)")
    known = ", ".join(f"sm_{k}" for k in KNOWN_ARCHS)
    if int(number) not in KNOWN_ARCHS:
        raise InputError(f"{where}: -arch={arch!r} is not the architecture of an NVIDIA GPU; "
                         f"expected sm_XY of a known compute capability: {known} (e.g. sm_80 "
                         f"for A100, sm_90 for H100/H200), optionally with the suffix 'a' "
                         f"(sm_90a on) or 'f' (sm_100f on)")
    suffix = digits[len(number):]
    if (suffix == "a" and int(number) < 90) or (suffix == "f" and int(number) < 100):
        first = "sm_90a" if suffix == "a" else "sm_100f"
        raise InputError(f"{where}: -arch={arch!r}: the suffix {suffix!r} exists from "
                         f"{first} on; did you mean 'sm_{number}'?")
    return digits


def cuda_source(lib) -> str:
    """The CUDA C++ source of a CUDA build (``relay.build`` or ``relay.vm.compile`` result, or
    the TVM module): the kernels TVM generated for the target's ``arch``."""
    mod = getattr(lib, "lib", lib)
    mod = getattr(mod, "mod", mod)
    todo = [mod]
    while todo:
        m = todo.pop()
        if m.kind == "cuda":
            return str(m.inspect_source(""))
        todo.extend(m.imports)
    raise BuildError("cuda_source: the module holds no CUDA kernels (was it built for 'cuda'?)")


def compile_fatbin(source: str, arch: str) -> bytes:
    """``nvcc --fatbin`` of ``source`` for ``arch`` (``"sm_80"``): SASS for that architecture
    plus its PTX (which newer GPUs JIT-compile). The same compilation TVM's CUDA runtime does
    when it loads the module on the GPU machine (``tvm_callback_cuda_compile``), done here.

    Raises:
        BuildError: ``nvcc`` is missing, or it rejects the source.
    """
    if nvcc_path() is None:
        raise BuildError("compile_fatbin: nvcc is not on the PATH (install the CUDA toolkit)")
    from tvm.support import nvcc

    n = _arch_number(arch, "compile_fatbin")
    digits = n.rstrip("af")
    gencode = ["-gencode", f"arch=compute_{n},code=sm_{n}",
               "-gencode", f"arch=compute_{digits},code=compute_{digits}"]
    import tvm

    try:
        with tvm.target.Target({"kind": "cuda", "arch": f"sm_{n}"}):
            return bytes(nvcc.compile_cuda(source, target_format="fatbin", arch=gencode,
                                           compiler="nvcc"))
    except Exception as e:  # noqa: BLE001 - nvcc's message is in e
        raise BuildError(f"compile_fatbin: nvcc failed for {arch}: {e}") from e


def prefer_nvcc_at_load() -> None:
    """TVM's CUDA runtime compiles a module's kernels when it loads it, with NVRTC by default,
    which needs NVIDIA's Python bindings (``cuda-python``); where ``nvcc`` is on the PATH and the
    user chose nothing (``TVM_CUDA_COMPILE_MODE``), use ``nvcc`` instead."""
    import os

    if nvcc_path() is not None and "TVM_CUDA_COMPILE_MODE" not in os.environ:
        try:
            import cuda.bindings  # noqa: F401 - NVRTC available: keep TVM's default
        except ImportError:
            os.environ["TVM_CUDA_COMPILE_MODE"] = "nvcc"


def fatbin_entries(blob: bytes) -> list:
    """``[(kind, sm)]`` of a CUDA fatbin's images: kind ``"sass"`` (an ELF cubin) or ``"ptx"``,
    ``sm`` the architecture number (80 for sm_80).

    Raises:
        ValueError: ``blob`` is not a fatbin.
    """
    if len(blob) < 16 or struct.unpack_from("<I", blob, 0)[0] != _FATBIN_MAGIC:
        raise ValueError("not a CUDA fatbin (bad magic)")
    hsize = struct.unpack_from("<H", blob, 6)[0]
    total = struct.unpack_from("<Q", blob, 8)[0]
    out, p = [], hsize
    while p < hsize + total:
        kind, ehsize = struct.unpack_from("<H", blob, p)[0], struct.unpack_from("<I", blob, p + 4)[0]
        size = struct.unpack_from("<Q", blob, p + 8)[0]
        sm = struct.unpack_from("<I", blob, p + 28)[0]
        out.append(({1: "ptx", 2: "sass"}.get(kind, str(kind)), sm))
        p += ehsize + size
    return out


__all__ = ["DEFAULT_ARCH", "compile_fatbin", "complete_cuda", "cuda_source", "default_arch",
           "fatbin_entries", "local_arch", "nvcc_path", "prefer_nvcc_at_load"]

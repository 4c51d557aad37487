"""CUDA code generation details: the GPU architecture a build is for, and compiling the
generated kernels with ``nvcc``.

TVM 0.27 turns a CUDA target without ``-arch`` into ``sm_50`` when it finds no GPU (with a
warning); relay_tvm takes the architecture from the target or the local GPU and refuses to
guess. TVM 0.27 ships a CUDA build's kernels as CUDA C++ source that its CUDA runtime compiles
when the module is loaded on the GPU machine (NVRTC by default, or ``nvcc``); a build on a
machine without a GPU cannot embed SASS. :func:`compile_fatbin` runs the same compilation here,
so a build is checked for its architecture before it is shipped.
"""

from __future__ import annotations

import shutil
import struct

from ..errors import BuildError

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


def complete_cuda(d: dict, text) -> dict:
    """The ``arch`` of a CUDA target dict: given, else the local GPU's, else a BuildError."""
    if d.get("kind") != "cuda":
        return d
    if "arch" in d:
        _arch_number(d["arch"])  # a clear error for e.g. 'sm_xx'
        return d
    arch = local_arch()
    if arch is None:
        raise BuildError(
            f"target {text!r}: no -arch given and no CUDA GPU on this machine to read it from "
            f"(TVM would assume sm_50); name the GPU you deploy to, e.g. 'cuda -arch=sm_80' "
            f"(A100) or 'cuda -arch=sm_90' (H100/H200)")
    return {**d, "arch": arch}


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


def _arch_number(arch: str) -> str:
    digits = str(arch)[3:] if str(arch).startswith("sm_") else ""
    if not digits or not digits.rstrip("af").isdigit():
        raise BuildError(f"target cuda: -arch={arch!r} is not an architecture like 'sm_80'")
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

    n = _arch_number(arch)
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


__all__ = ["compile_fatbin", "complete_cuda", "cuda_source", "fatbin_entries", "local_arch",
           "nvcc_path", "prefer_nvcc_at_load"]

"""Exported library files: the CRC-32 seal written after an exported ELF library and the checks
the loaders run before ``dlopen`` (a damaged or truncated file would crash the process there)."""

from __future__ import annotations

_SEAL = b"relay_tvm-crc32\x01"  # + payload length (8 bytes, little-endian) + CRC-32 (4 bytes)
# the instruction-set record (JSON, see relay_tvm.backend.isa) sits just before the seal, inside
# the checksummed payload: <json> + _ISA + <json length, 4 bytes little-endian>
_ISA = b"relay_tvm-isa\x01"


def _crc32_of(path: str, length: int) -> int:
    import zlib

    crc, left = 0, length
    with open(path, "rb") as f:
        while left:
            chunk = f.read(min(left, 1 << 24))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return crc


def seal_library(path: str, isa: dict | None = None) -> None:
    """Append a CRC-32 of the exported library ``path`` after its last byte (the dynamic loader
    ignores bytes past the ELF image), so that :func:`check_shared_library` refuses a damaged
    copy before ``dlopen`` runs its code: a single flipped byte used to crash the process.
    ``isa`` (:func:`relay_tvm.backend.isa.target_isa` of the target) is written before the
    checksum, so that the loader can refuse code this CPU cannot run (SIGILL otherwise).
    Other files (a ``.tar`` of objects) are left as they are."""
    import json
    import os
    import struct

    with open(path, "rb") as f:
        head = f.read(18)
    if len(head) < 18 or head[:4] != b"\x7fELF" or head[16] != 3:  # only ELF shared objects
        return
    if isa:
        record = json.dumps(isa, sort_keys=True).encode()
        with open(path, "ab") as f:
            f.write(record + _ISA + struct.pack("<I", len(record)))
    length = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(_SEAL + struct.pack("<QI", length, _crc32_of(path, length)))


def check_shared_library(path: str, who: str) -> None:
    """Refuse a damaged exported library before ``dlopen`` sees it: one whose CRC-32 (written by
    :func:`seal_library` at export) does not match, or an ELF file cut short (the loader maps
    the missing pages and the process dies of SIGBUS): its section header table, which the
    linker writes at the end, must lie inside the file. Files without the checksum (exported
    by older versions, or by TVM itself) get only the second check; other formats are left to
    TVM's loader. A library whose seal records its target's instruction set is refused when this
    machine lacks some of it (see :func:`relay_tvm.backend.isa.check_isa`).

    Raises:
        BuildError: the checksum differs, the file ends before its section headers, or the
            library needs another architecture or CPU features this machine lacks.
    """
    import os
    import struct

    from ..errors import BuildError

    size = os.path.getsize(path)
    tail = len(_SEAL) + 12
    if size >= tail:
        with open(path, "rb") as f:
            f.seek(size - tail)
            trailer = f.read(tail)
        if trailer.startswith(_SEAL):
            length, crc = struct.unpack("<QI", trailer[len(_SEAL):])
            if length != size - tail or _crc32_of(path, length) != crc:
                raise BuildError(f"{who}: {path!r} is damaged (its CRC-32 checksum from export "
                                 f"does not match: a changed or truncated copy); export it "
                                 f"again")
            from .isa import check_isa

            check_isa(read_isa(path, length), who, repr(path))
    _check_archive_machine(path, who)
    with open(path, "rb") as f:
        head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:  # only 64-bit ELF is checked
        return
    end = "<" if head[5] == 1 else ">"
    shoff = struct.unpack_from(end + "Q", head, 0x28)[0]
    shentsize, shnum = struct.unpack_from(end + "HH", head, 0x3A)
    if shoff + shentsize * shnum > size:
        raise BuildError(f"{who}: {path!r} is cut short ({size} bytes, but its section headers "
                         f"end at byte {shoff + shentsize * shnum}); export it again")


# ELF e_machine -> the architecture name of relay_tvm.backend.isa.host_isa
_ELF_MACHINES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv"}


def _elf_arch(head: bytes) -> str | None:
    """The architecture (:func:`relay_tvm.backend.isa.host_isa`'s names: ``"x86_64"``,
    ``"aarch64"``, ...) of the ELF file whose first 20 bytes are ``head``; None if not ELF."""
    import struct

    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    machine = struct.unpack_from("<H" if head[5] == 1 else ">H", head, 18)[0]
    return _ELF_MACHINES.get(machine, f"ELF machine {machine}")


def library_arch(path: str) -> str | None:
    """The architecture an exported ELF library was compiled for (``"aarch64"`` for a
    ``llvm -mtriple=aarch64-linux-gnu`` build), read from its ELF header without loading it;
    None for other files (a ``.tar`` of objects, Mach-O, PE)."""
    with open(path, "rb") as f:
        return _elf_arch(f.read(20))


def holds_vm_executable(path: str) -> bool:
    """Whether the exported library ``path`` is a relay_tvm VM executable (``relay.vm.compile``
    + ``export_library``): its bytecode names the ``__relay_vm_meta`` function. Read from the
    file without loading it, so it also tells for a library of another architecture."""
    import mmap

    with open(path, "rb") as f:
        try:
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(b"__relay_vm_meta") >= 0
        except ValueError:  # an empty file
            return False


def _check_archive_machine(path: str, who: str) -> None:
    """Refuse a ``.tar`` of object files (``export_library("x.tar")``) compiled for another
    architecture: loading links them with this machine's compiler, which failed with a page of
    linker errors ("Relocations in generic ELF (EM: 183)", fresh-user trial).

    Raises:
        BuildError: an object file's ELF machine is not this machine's architecture.
    """
    import tarfile

    from .isa import check_isa, host_isa

    try:
        if not tarfile.is_tarfile(path):
            return
        with tarfile.open(path) as tar:
            for member in tar:
                if not (member.isfile() and member.name.endswith(".o")):
                    continue
                arch = _elf_arch(tar.extractfile(member).read(20))
                if arch is None:
                    continue
                if host_isa()[0] in _ELF_MACHINES.values():  # an architecture it can name
                    check_isa({"arch": arch}, who, f"{path!r} (its {member.name})")
                return
    except (OSError, tarfile.TarError):
        return  # not an archive this check can read: TVM's loader reports it


#: What ``export_library`` writes and ``relay.runtime.load_module`` /
#: ``relay.vm.load_executable`` load back: a shared library (TVM's loader picks the loader by
#: the suffix; ``.o`` files and other names do not load as a module).
LOADABLE_SUFFIXES = (".so", ".dylib", ".dll")
#: What a graph library (``relay.build(...).export_library``) may also be written as: TVM's
#: gzipped tar of object files, which ``tvm.runtime.load_module`` links into a shared library
#: with the host compiler when it loads it (tvm.relay 0.19's quick-start tutorial exported
#: ``deploy_lib.tar``).
ARCHIVE_SUFFIXES = (".tar",)


def check_export_path(path, who: str, archive: bool = False) -> None:
    """Refuse an export path whose suffix the loaders cannot load back.

    Args:
        path: the file to write.
        who: the caller, for messages.
        archive: also accept :data:`ARCHIVE_SUFFIXES` (a tar of object files).

    Raises:
        InputError: ``path`` does not end in one of :data:`LOADABLE_SUFFIXES` (or, with
            ``archive``, :data:`ARCHIVE_SUFFIXES`).
    """
    import os

    from ..errors import InputError

    accepted = LOADABLE_SUFFIXES + (ARCHIVE_SUFFIXES if archive else ())
    suffix = os.path.splitext(os.fspath(path))[1]
    if suffix not in accepted:
        kinds = "a shared library" + (", or a .tar of object files" if archive else "")
        raise InputError(f"{who}: {os.fspath(path)!r} has suffix {suffix or '(none)'!r}, which "
                         f"load_module cannot load back; use one of "
                         f"{', '.join(accepted)} ({kinds})")


def is_archive(path) -> bool:
    """Whether ``path`` is named like a tar of object files (:data:`ARCHIVE_SUFFIXES`)."""
    import os

    return os.path.splitext(os.fspath(path))[1] in ARCHIVE_SUFFIXES


def looks_like_library(path: str) -> bool:
    """Whether ``path`` starts like a file ``tvm.runtime.load_module`` loads: an ELF, Mach-O
    or PE shared library, or a tar of object files (``export_library(..."x.tar")``)."""
    with open(path, "rb") as f:
        head = f.read(264)
    if head[:4] == b"\x7fELF" or head[:2] == b"MZ":
        return True
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return True
    if head[:2] == b"\x1f\x8b":  # TVM's export_library("x.tar") writes a gzipped tar
        import tarfile

        return tarfile.is_tarfile(path)
    return head[257:262] == b"ustar"


def read_isa(path: str, length: int) -> dict | None:
    """The instruction-set record :func:`seal_library` wrote before the seal of ``path`` whose
    checksummed payload is ``length`` bytes long (None when there is none)."""
    import json
    import struct

    tail = len(_ISA) + 4
    if length < tail:
        return None
    with open(path, "rb") as f:
        f.seek(length - tail)
        trailer = f.read(tail)
        if not trailer.startswith(_ISA):
            return None
        (n,) = struct.unpack("<I", trailer[len(_ISA):])
        if n > length - tail:
            return None
        f.seek(length - tail - n)
        try:
            return json.loads(f.read(n))
        except ValueError:
            return None


__all__ = ["seal_library", "check_shared_library", "read_isa", "looks_like_library",
           "library_arch", "check_export_path", "is_archive"]

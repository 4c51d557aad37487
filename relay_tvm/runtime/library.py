"""Loading an exported library: the checks before ``dlopen``, TVM's loader, and telling a graph
library (``relay.build(...).export_library``, ``relay-tvm compile``) from a VM executable
(``relay.vm.compile(...).export_library``, ``relay-tvm compile --executor vm``).

Both kinds are TVM Relax VM executables underneath: a graph library's host program has a
``__relay_meta`` function (graph JSON, input names, parameters), a VM executable's a
``__relay_vm_meta`` function (signatures, constructors). Anything else that TVM loads (a library
built by TVM Relax itself, a kernel-only library) is neither.
"""

from __future__ import annotations

import re

from .._stderr import without_scope_log
from ..backend.library_file import check_shared_library, looks_like_library
from ..errors import BuildError


def copy_loaded(source: str, path: str, kwargs: dict, who: str) -> None:
    """``export_library`` of a library loaded from the file ``source``: TVM cannot serialize a
    loaded shared library again ("does not support SaveToBytes"), and the file already is that
    library (kernels, host program, constants, ISA record), so it is copied to ``path``.

    Raises:
        InputError: linker options (``cc``, ``fcompile``, ...) were given: a copy is not linked
            again; rebuild (``relay.build`` / ``relay.vm.compile``) to link otherwise.
        BuildError: ``source`` is gone, or ``path`` cannot be written.
    """
    import os
    import shutil

    from ..errors import InputError

    if kwargs:
        raise InputError(f"{who}: a loaded library is written as a copy of the file it was "
                         f"loaded from ({source!r}), which is not linked again, so "
                         f"{sorted(kwargs)} cannot apply; rebuild the model to link it otherwise")
    from ..backend.library_file import is_archive

    if is_archive(source) != is_archive(path):
        kinds = {True: "a .tar of object files", False: "a shared library"}
        have, want = kinds[is_archive(source)], kinds[is_archive(path)]
        raise InputError(f"{who}: this library was loaded from {source!r}, {have}, and is "
                         f"written as a copy of that file, so {str(path)!r} must be {have} "
                         f"too; rebuild the model to write {want}")
    if not os.path.exists(source):
        raise BuildError(f"{who}: the file this library was loaded from, {source!r}, is gone; "
                         f"TVM cannot write a loaded library again, so load it from a copy")
    if os.path.abspath(source) == os.path.abspath(str(path)):
        return
    try:
        shutil.copyfile(source, path)
    except OSError as e:
        raise BuildError(f"{who}: writing {str(path)!r} failed: {e}") from e


def load_library(path: str, who: str):
    """``tvm.runtime.load_module(path)`` after the checks that keep a wrong or damaged file
    from crashing the process, with TVM's scope log dropped.

    Args:
        path: the exported file.
        who: the caller, for messages (``"load_module"``).

    Raises:
        BuildError: no such file, not a shared library, damaged, built for another machine, or
            TVM cannot load it (device kernels without that device's runtime, ...).
    """
    import os

    import tvm

    if not os.path.exists(path):
        raise BuildError(f"{who}: no such file {path!r}")
    if os.path.isdir(path) or not looks_like_library(path):
        raise BuildError(f"{who}: {path!r} is not a relay_tvm library (expected a shared "
                         f"library written by export_library or `relay-tvm compile`)")
    check_shared_library(path, who)
    from ..backend.cuda import prefer_nvcc_at_load

    prefer_nvcc_at_load()
    try:
        with without_scope_log():
            # TVM's own loader (relay_tvm's compat layer wraps tvm.runtime.load_module in
            # the same _load_fresh)
            tvm_load = getattr(tvm.runtime.load_module, "__wrapped__", tvm.runtime.load_module)
            lib = _load_fresh(path, tvm_load)
    except Exception as e:
        m = re.search(r"created using \{?(\w+)\}? but a loader", str(e))
        if m:
            raise BuildError(
                f"{who}: {path!r} holds {m.group(1)} kernels, and this machine's TVM "
                f"runtime cannot load them (no {m.group(1)} support here: it needs the device "
                f"and TVM's {m.group(1)} runtime). Run it where the device is, or compile for "
                f"this machine (target 'llvm')") from e
        raise BuildError(f"{who}: cannot load {path!r}: {e}") from e
    from ..backend.library_file import is_archive

    if is_archive(path):  # no seal to hold the instruction set: the metadata has it
        from ..backend.isa import check_isa

        check_isa(_recorded_isa(lib), who, repr(path))
    return lib


def _recorded_isa(lib) -> dict | None:
    """The instruction-set record (``"isa"``) of a relay_tvm library's metadata (bytecode: it
    runs no kernel), or None (not ours, or built before the record existed)."""
    import json

    _, meta = _meta_function(lib)
    return None if meta is None else json.loads(meta()).get("isa")


# the file each path named when this process loaded it by that name: (device, inode, size,
# mtime); the dynamic loader answers that name with that library for as long as it is loaded
_BY_NAME: dict = {}


def _identity(path: str) -> tuple:
    import os

    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _load_fresh(path: str, load):
    """``load(path)``, unless this process loaded another file by the name ``path`` before:
    the dynamic loader hands back the library it has under that name, so a model re-exported
    to the same path ran the old code (fresh-user trial: the second of two models exported to
    one path gave the first one's outputs). Such a file is loaded from a private copy (unlinked
    after loading; the mapping stays)."""
    import os
    import shutil
    import tempfile

    key = os.path.realpath(path)
    ident = _identity(path)
    first = _BY_NAME.setdefault(key, ident)
    if first == ident:
        return load(path)
    fd, copy = tempfile.mkstemp(suffix=os.path.splitext(path)[1] or ".so",
                                prefix="relay_tvm_reload_")
    os.close(fd)
    try:
        shutil.copyfile(path, copy)
        return load(copy)
    finally:
        os.unlink(copy)


def _meta_function(lib):
    """``(kind, meta)``: what a loaded module is (``"graph"``, ``"vm"`` or ``"other"``, see the
    module doc) and its metadata function (``__relay_meta`` / ``__relay_vm_meta``: bytecode
    returning JSON), None for ``"other"``."""
    if not lib.implements_function("vm_load_executable"):
        return "other", None
    import tvm
    from tvm import relax

    try:
        vm = relax.VirtualMachine(lib, tvm.cpu(0))
    except Exception:  # noqa: BLE001 - TVM cannot instantiate it: not one of ours
        return "other", None
    for name, kind in (("__relay_meta", "graph"), ("__relay_vm_meta", "vm")):
        try:
            return kind, vm[name]
        except Exception:  # noqa: BLE001 - TVM raises a plain error for a missing function
            continue
    return "other", None


def library_kind(lib) -> str:
    """``"graph"``, ``"vm"`` or ``"other"``: what a loaded module is (see the module doc)."""
    return _meta_function(lib)[0]


def load_compiled(path: str, who: str = "load_compiled"):
    """Load an exported relay_tvm library of either kind.

    Returns:
        ``("graph", LoadedFactory)`` (``m["default"](dev)`` gives a ``GraphModule``) or
        ``("vm", Executable)`` (run it on a ``relay.vm.VirtualMachine``).

    Raises:
        BuildError: as :func:`load_library`, or the file is a library relay_tvm did not write
            (one TVM Relax built, say).
    """
    lib = load_library(path, who)
    kind = library_kind(lib)
    if kind == "graph":
        from .graph_executor import LoadedFactory

        return kind, LoadedFactory(lib, path)
    if kind == "vm":
        from .vm import executable_of

        return kind, executable_of(lib, path, who)
    raise BuildError(not_ours(path, lib, who))


def not_ours(path: str, lib, who: str) -> str:
    """The message for a library TVM loads that relay_tvm did not write."""
    if lib.implements_function("vm_load_executable"):
        return (f"{who}: {path!r} is a TVM Relax VM executable that relay_tvm did not write "
                f"(no __relay_meta or __relay_vm_meta function: built by tvm.compile of a "
                f"Relax module?); run it with tvm.relax.VirtualMachine, or export the model "
                f"with `relay-tvm compile` / relay.build / relay.vm.compile")
    return (f"{who}: {path!r} is a TVM module but not a relay_tvm library (no executor "
            f"program: kernels only?); export the model with `relay-tvm compile`, relay.build "
            f"or relay.vm.compile")


__all__ = ["load_compiled", "load_library", "library_kind", "without_scope_log", "copy_loaded"]

"""Late-bound constants of a VM executable (tvm.relay 0.19's ``Executable.move_late_bound_consts``
and friends): large tensor constants leave the executable, so that its library holds code only,
and are given back at load time from a file or a map.

The executable is TVM 0.27's Relax ``VMExecutable``, whose constant pool has no API to edit
it; its serialized form does (header, function table, memory scopes, constant pool, code: see
TVM's ``src/runtime/vm/executable.cc``). A constant moved out is replaced in the pool by a
zero-size marker tensor of shape ``(0, MARK, index)``; the executable's own description (the
``__relay_vm_meta`` JSON string, also a pool constant) lists the names of the moved constants
(``const_<index>``, 0.19's names) with their shapes and dtypes, so that a VirtualMachine refuses to run an executable
whose constants were not loaded back, without scanning the pool.
"""

from __future__ import annotations

import json
import struct

from ..errors import BuildError, InputError

_MARK = 0x5EA1ED  # second dimension of a placeholder: no kernel constant is (0, 6201837, i)
_INT, _FLOAT, _DTYPE, _STR, _SHAPE, _TENSOR = 1, 3, 5, 65, 69, 70  # tvm-ffi type indices
_MAGIC_V2 = 0xD225DE2F4214151E


class _Reader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def take(self, fmt: str):
        vals = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def string(self) -> bytes:
        n = self.take("Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s


def _pool(code: bytes):
    """``(start, spans)``: where the constant pool starts and, per constant, ``(kind, begin,
    end, info)``; ``info`` is the tensor's ``(shape, nbytes)`` or a string's bytes."""
    r = _Reader(code)
    magic = r.take("Q")
    r.string()  # version
    for _ in range(r.take("Q")):  # function table
        r.take("i")
        r.string()
        r.take("qqqq")
        for _ in range(r.take("Q")):
            r.string()
    if magic == _MAGIC_V2:
        for _ in range(r.take("Q")):  # memory scopes
            r.take("q")
            r.string()
    start = r.pos
    spans = []
    for _ in range(r.take("Q")):
        begin = r.pos
        kind = r.take("i")
        info = None
        if kind == _TENSOR:
            r.take("QQii")  # magic, reserved, device
            ndim = r.take("i")
            r.take("BBH")
            shape = tuple(r.take(f"{ndim}q")) if ndim > 1 else (
                (r.take("q"),) if ndim == 1 else ())
            nbytes = r.take("q")
            r.pos += nbytes
            info = (shape, nbytes)
        elif kind == _SHAPE:
            n = r.take("Q")
            r.pos += 8 * n
        elif kind == _STR:
            info = r.string()
        elif kind in (_INT, _FLOAT):
            r.pos += 8
        elif kind == _DTYPE:
            r.pos += 4
        else:
            raise BuildError(f"late-bound constants: constant pool entry of unknown kind {kind} "
                             f"(an executable of another TVM version?)")
        spans.append((kind, begin, r.pos, info))
    return start, spans


def _tensor_bytes(arr) -> bytes:
    """One pool entry holding ``arr`` (a NumPy array), in TVM's DLTensor serialization."""
    from tvm import DataType

    dt = DataType(str(arr.dtype))
    shape = arr.shape
    head = struct.pack("<iQQiii", _TENSOR, 0xDD5E40F096B4A13F, 0, 1, 0, len(shape))
    head += struct.pack("<BBH", dt.type_code, dt.bits, dt.lanes)
    head += struct.pack(f"<{len(shape)}q", *shape) if shape else b""
    data = arr.tobytes()
    return head + struct.pack("<q", len(data)) + data


def _str_bytes(s: bytes) -> bytes:
    return struct.pack("<iQ", _STR, len(s)) + s


def _code_of(mod) -> bytes:
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "code.bin")
        mod.write_to_file(path, "")
        with open(path, "rb") as f:
            return f.read()


def _rebuild(mod, code: bytes):
    """A new VM executable module from ``code`` with ``mod``'s kernels imported."""
    import tvm_ffi

    new = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")(
        bytearray(code))
    for lib in mod.imports:
        new.import_module(lib)
    return new


def _edit(mod, change):
    """Rewrite the pool of VM module ``mod``: ``change(index, kind, entry_bytes, info, meta)``
    returns the new bytes of an entry (or None to keep it); the meta JSON is edited in place.
    Returns ``(new module, meta)``."""
    code = _code_of(mod)
    start, spans = _pool(code)
    meta_i = next((i for i, (k, _, _, info) in enumerate(spans)
                   if k == _STR and info.startswith(b'{"signatures"')), None)
    if meta_i is None:
        raise BuildError("late-bound constants: not a relay_tvm VM executable (no description)")
    meta = json.loads(spans[meta_i][3])
    parts = [code[:spans[0][1]] if spans else code[:start + 8]]
    for i, (kind, b, e, info) in enumerate(spans):
        new = None if i == meta_i else change(i, kind, code[b:e], info, meta)
        parts.append(code[b:e] if new is None else new)
    parts[1 + meta_i] = _str_bytes(json.dumps(meta).encode())
    tail = spans[-1][2] if spans else start + 8
    parts.append(code[tail:])
    return _rebuild(mod, b"".join(parts)), meta


def take_out(mod, byte_limit: int):
    """Move the tensor constants of ``byte_limit`` bytes or more out of VM module ``mod``.

    Returns:
        ``(new module, meta, {"const_<index>": numpy array})``.

    Raises:
        BuildError: constants were already moved out and not loaded back.
    """
    import numpy as np
    from tvm import DataType

    byte_limit = int(byte_limit)
    moved = {}

    def change(i, kind, raw, info, meta):
        if meta.get("late_bound") and not moved:
            raise BuildError(f"move_late_bound_consts: constants {meta['late_bound']} were "
                             "moved out already; load them back first")
        if kind != _TENSOR or info[1] < byte_limit or _is_mark(info[0]):
            return None
        code, bits, lanes = _Reader(raw, 4 + 28).take("BBH")
        dtype = str(DataType(f"{_dtype_name(code)}{bits}" + (f"x{lanes}" if lanes > 1 else "")))
        shape, nbytes = info
        name = f"const_{i}"
        moved[name] = np.frombuffer(raw[len(raw) - nbytes:], dtype=dtype).reshape(shape).copy()
        meta.setdefault("late_bound", {})[name] = [list(shape), dtype]
        return _tensor_bytes(np.zeros((0, _MARK, i), dtype=dtype))

    new, meta = _edit(mod, change)
    return new, meta, moved


def pool_tensors(mod) -> list:
    """The tensor constants in the pool of VM module ``mod``, in pool order, as
    ``(index, shape, dtype, value)``: ``value`` is the NumPy array, or None for a constant
    moved out (late-bound; its shape and dtype are those recorded when it was moved)."""
    import numpy as np
    from tvm import DataType

    code = _code_of(mod)
    _, spans = _pool(code)
    meta = next((json.loads(info) for k, _, _, info in spans
                 if k == _STR and info.startswith(b'{"signatures"')), {})
    out = []
    for i, (kind, b, e, info) in enumerate(spans):
        if kind != _TENSOR:
            continue
        if _is_mark(info[0]):
            shape, dtype = meta.get("late_bound", {}).get(f"const_{i}", [None, None])
            out.append((i, tuple(shape) if shape is not None else None, dtype, None))
            continue
        raw = code[b:e]
        tcode, bits, lanes = _Reader(raw, 4 + 28).take("BBH")
        shape, nbytes = info
        data = raw[len(raw) - nbytes:]
        if _dtype_name(tcode) == "bool":
            dtype, value = "bool", np.frombuffer(data, dtype="uint8").astype(bool)
        else:
            dtype = str(DataType(f"{_dtype_name(tcode)}{bits}"
                                 + (f"x{lanes}" if lanes > 1 else "")))
            value = np.frombuffer(data, dtype=dtype)
        out.append((i, tuple(shape), dtype, value.reshape(shape).copy()))
    return out


def _dtype_name(code: int) -> str:
    names = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}
    if code not in names:
        raise BuildError(f"late-bound constants: tensor dtype code {code} is not handled")
    return names[code]


def _is_mark(shape) -> bool:
    return len(shape) == 3 and shape[0] == 0 and shape[1] == _MARK


def put_back(mod, values: dict, who: str):
    """Give VM module ``mod`` back its late-bound constants from ``values`` (name -> array).

    Returns ``(new module, meta)``, or ``(mod, None)`` when ``mod`` has none to load (as in
    0.19, loading into an executable without late-bound constants does nothing).

    Raises:
        InputError: a late-bound constant is missing from ``values``, has another shape or
            dtype than the one moved out, or ``values`` holds names the executable lacks.
    """
    import numpy as np

    names = None

    def change(i, kind, raw, info, meta):
        nonlocal names
        if names is None:
            names = dict(meta.get("late_bound", {}))
            meta.pop("late_bound", None)
        if kind != _TENSOR or not _is_mark(info[0]):
            return None
        name = f"const_{i}"
        if name not in values:
            raise InputError(f"{who}: no value for late-bound constant {name!r}; given "
                             f"{sorted(values)}")
        v = values[name]
        v = np.ascontiguousarray(v.numpy() if hasattr(v, "numpy") else v)
        shape, dtype = names[name]
        if tuple(v.shape) != tuple(shape) or str(v.dtype) != dtype:
            raise InputError(f"{who}: late-bound constant {name!r} is {tuple(shape)} {dtype}, "
                             f"the value given is {tuple(v.shape)} {v.dtype}")
        return _tensor_bytes(v)

    from .vm import _meta_of

    if not _meta_of(mod, who).get("late_bound"):
        return mod, None
    new, meta = _edit(mod, change)
    extra = sorted(set(values) - set(names or ()))
    if extra:
        raise InputError(f"{who}: {extra} are not late-bound constants of this executable "
                         f"(it has {sorted(names or ())})")
    return new, meta


#: id(loaded module) -> (module, Executable): 0.19 loaded constants into a loaded module in place
#: (``load_module(p)["load_late_bound_consts"](path)``) and then ran ``VirtualMachine(module)``;
#: a TVM 0.27 module cannot be changed in place, so the executable that received them is kept
#: here for that module object (which it holds, so the id stays its own).
_LOADED: dict = {}


def executable_for(mod):
    """The :class:`~relay_tvm.runtime.vm.Executable` of loaded VM module ``mod`` (the one that
    received its late-bound constants, when they were loaded through the module)."""
    hit = _LOADED.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    from .vm import Executable

    return Executable(mod)


def module_function(mod, name: str):
    """``mod[name]`` for 0.19's functions of a loaded VM executable module, else None."""
    if name not in ("load_late_bound_consts", "load_late_bound_consts_from_map"):
        return None

    def load(arg):
        exe = executable_for(mod)
        getattr(exe, name)(arg)
        _LOADED[id(mod)] = (mod, exe)

    return load

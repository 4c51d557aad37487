"""Reading (and writing) MXNet's NDArray binary format with NumPy alone.

MXNet 1.x ``mx.nd.save`` / ``HybridBlock.export`` / ``Module.save_checkpoint`` write a ``.params``
file as (all integers little-endian)::

    uint64 magic = 0x112 (kMXAPINDArrayListMagic)    uint64 reserved = 0
    uint64 count, then ``count`` NDArrays
    uint64 count, then ``count`` names, each uint64 length + UTF-8 bytes (0 names: a list)

and one dense NDArray as::

    uint32 magic  (0xF993FAC9: V2, legacy shapes; 0xF993FACA: V3, NumPy shapes)
    int32  storage type (0 = dense; row_sparse and csr are not supported here)
    int32  ndim, then ndim int64 dims       (V2: ndim 0 is an empty "none" array)
    int32  device type, int32 device id     (ignored: arrays load on the host)
    int32  type flag (0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64,
                      7 bool, 8 int16, 9 uint16, 10 uint32, 11 uint64, 12 bfloat16)
    the elements, row-major

Files of MXNet < 0.9 (no NDArray magic: uint32 ndim then uint32 dims) are read as well. The
semantics follow ``NDArray::Save`` / ``NDArray::Load`` in MXNet 1.9.1 (src/ndarray/ndarray.cc).

Every malformation (wrong magic, truncation, unknown dtype, trailing garbage) raises
:class:`relay_tvm.errors.ConversionError` naming the file, the array index and the byte offset.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from ..errors import ConversionError

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

_TYPE_FLAGS = {
    0: np.float32,
    1: np.float64,
    2: np.float16,
    3: np.uint8,
    4: np.int32,
    5: np.int8,
    6: np.int64,
    7: np.bool_,
    8: np.int16,
    9: np.uint16,
    10: np.uint32,
    11: np.uint64,
    12: "bfloat16",
}
_FLAG_OF = {np.dtype(v): k for k, v in _TYPE_FLAGS.items() if v != "bfloat16"}
_MAX_NDIM = 32


class _Reader:
    def __init__(self, data: bytes, source: str):
        self.data = data
        self.pos = 0
        self.source = source
        self.where = "header"

    def fail(self, msg: str):
        raise ConversionError(
            f"{self.source}: {msg} (while reading {self.where}, at byte {self.pos} of "
            f"{len(self.data)}); the file is not a valid MXNet NDArray file or is truncated/corrupt"
        )

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            self.fail(f"unexpected end of file reading {what} ({n} bytes needed, "
                      f"{len(self.data) - self.pos} left)")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt: str, what: str):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size, what))[0]


def _read_ndarray(r: _Reader) -> np.ndarray | None:
    start = r.pos
    magic = r.unpack("<I", "the array magic")
    if magic in (V2_MAGIC, V3_MAGIC):
        stype = r.unpack("<i", "the storage type")
        if stype != 0:
            r.fail(f"storage type {stype} (sparse: 1 row_sparse, 2 csr) is not supported; "
                   "save dense arrays (arr.tostype('default'))")
        ndim = r.unpack("<i", "ndim")
        if ndim < -1 or ndim > _MAX_NDIM:
            r.fail(f"ndim {ndim} is out of range")
        if ndim == -1:  # V3 unknown shape: a "none" array, no more data
            return None
        shape = struct.unpack(f"<{ndim}q", r.take(8 * ndim, "the shape")) if ndim else ()
        if ndim == 0 and magic == V2_MAGIC:
            # Legacy shapes: ndim 0 is a "none" array with nothing after it. MXNet 1.9 writes
            # 0-d arrays with V2 magic too (and then cannot read them back); tell them apart by
            # whether a plausible context follows.
            if r.pos + 12 > len(r.data):
                return None
            dev_type, _, flag = struct.unpack("<iii", r.data[r.pos:r.pos + 12])
            if not (1 <= dev_type <= 6 and flag in _TYPE_FLAGS):
                return None
    elif magic == V1_MAGIC:
        ndim = r.unpack("<I", "ndim")
        if ndim > _MAX_NDIM:
            r.fail(f"ndim {ndim} is out of range")
        shape = struct.unpack(f"<{ndim}q", r.take(8 * ndim, "the shape")) if ndim else ()
        if ndim == 0:
            return None
    else:
        # MXNet < 0.9: the word read is ndim, followed by uint32 dims, no storage type.
        ndim = magic
        if ndim > _MAX_NDIM:
            r.pos = start
            r.fail(f"bad array magic 0x{magic:08X} (expected 0x{V2_MAGIC:08X} or 0x{V3_MAGIC:08X})")
        shape = struct.unpack(f"<{ndim}I", r.take(4 * ndim, "the shape")) if ndim else ()
        if ndim == 0:
            return None
    if any(d < 0 for d in shape):
        r.fail(f"negative dimension in shape {tuple(shape)}")
    r.unpack("<i", "the device type")
    r.unpack("<i", "the device id")
    flag = r.unpack("<i", "the dtype flag")
    if flag not in _TYPE_FLAGS:
        r.fail(f"unknown dtype flag {flag} (known: {sorted(_TYPE_FLAGS)})")
    dt = _TYPE_FLAGS[flag]
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if dt == "bfloat16":
        raw = np.frombuffer(r.take(2 * count, "the bfloat16 data"), dtype="<u2")
        arr = (raw.astype(np.uint32) << 16).view(np.float32)
    else:
        dtype = np.dtype(dt).newbyteorder("<")
        what = f"the data of shape {tuple(shape)} {np.dtype(dt).name}"
        raw = r.take(dtype.itemsize * count, what)
        arr = np.frombuffer(raw, dtype=dtype).astype(np.dtype(dt))
    return arr.reshape(shape).copy()


def load_ndarray_bytes(data: bytes, source: str = "<bytes>"):
    """Parse the bytes of an MXNet NDArray file.

    Returns:
        a ``dict`` name -> ``np.ndarray`` when the file holds names, else a ``list`` of arrays.

    Raises:
        ConversionError: the bytes are not a complete, valid NDArray file.
    """
    r = _Reader(bytes(data), source)
    magic = r.unpack("<Q", "the file magic")
    if magic != LIST_MAGIC:
        r.pos = 0
        r.fail(f"bad file magic 0x{magic:X} (expected 0x{LIST_MAGIC:X}, MXNet's NDArray list)")
    r.unpack("<Q", "the reserved word")
    n = r.unpack("<Q", "the array count")
    if n > len(r.data):
        r.fail(f"array count {n} is larger than the file")
    arrays = []
    for i in range(n):
        r.where = f"array {i} of {n}"
        arrays.append(_read_ndarray(r))
    r.where = "the names"
    nn = r.unpack("<Q", "the name count")
    if nn not in (0, n):
        r.fail(f"{nn} names for {n} arrays")
    names = []
    for i in range(nn):
        r.where = f"name {i} of {nn}"
        ln = r.unpack("<Q", "a name length")
        raw = r.take(ln, "a name")
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            r.fail(f"name {i} is not UTF-8: {raw[:40]!r}")
    if r.pos != len(r.data):
        r.where = "the end"
        r.fail(f"{len(r.data) - r.pos} unexpected trailing bytes")
    if not names:
        return arrays
    out = {}
    for name, arr in zip(names, arrays):
        if name in out:
            raise ConversionError(f"{source}: parameter {name!r} appears twice")
        out[name] = arr
    return out


def load_ndarray_file(path) -> dict | list:
    """Read an MXNet ``.params`` / ``.nd`` file (see the module doc for the format).

    Raises:
        ConversionError: the file is missing, unreadable, truncated or corrupt.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConversionError(f"cannot read MXNet parameter file {path!r}: {e}") from None
    return load_ndarray_bytes(data, path)


def split_arg_aux(params: dict, source: str = "<params>") -> tuple[dict, dict]:
    """Split a ``{"arg:name": a, "aux:name": b}`` dict into ``(arg_params, aux_params)``.

    Names without a prefix (as ``mx.nd.save`` of a plain dict writes them, or Gluon's
    ``save_parameters``) count as arguments.

    Raises:
        ConversionError: an entry is a "none" array.
    """
    arg, aux = {}, {}
    for k, v in params.items():
        if v is None:
            raise ConversionError(f"{source}: parameter {k!r} is an empty (none) NDArray")
        if k.startswith("arg:"):
            arg[k[4:]] = v
        elif k.startswith("aux:"):
            aux[k[4:]] = v
        else:
            arg[k] = v
    return arg, aux


def save_ndarray_file(path, arrays) -> None:
    """Write ``arrays`` (a dict name -> array, or a list) in MXNet's V2 format, as ``mx.nd.save``.

    Raises:
        ConversionError: an array has a dtype MXNet cannot store.
    """
    items = list(arrays.items()) if isinstance(arrays, dict) else [(None, a) for a in arrays]
    out = [struct.pack("<QQQ", LIST_MAGIC, 0, len(items))]
    for name, a in items:
        a = np.ascontiguousarray(a)
        flag = _FLAG_OF.get(a.dtype)
        if flag is None:
            raise ConversionError(f"cannot save {name!r}: dtype {a.dtype} has no MXNet type flag")
        out.append(struct.pack("<Iii", V2_MAGIC if a.ndim else V3_MAGIC, 0, a.ndim))
        out.append(struct.pack(f"<{a.ndim}q", *a.shape))
        out.append(struct.pack("<iii", 1, 0, flag))
        out.append(a.astype(a.dtype.newbyteorder("<")).tobytes())
    if isinstance(arrays, dict):
        out.append(struct.pack("<Q", len(items)))
        for name, _ in items:
            b = name.encode("utf-8")
            out.append(struct.pack("<Q", len(b)) + b)
    else:
        out.append(struct.pack("<Q", 0))
    with open(os.fspath(path), "wb") as f:
        f.write(b"".join(out))


__all__ = ["load_ndarray_file", "load_ndarray_bytes", "split_arg_aux", "save_ndarray_file"]

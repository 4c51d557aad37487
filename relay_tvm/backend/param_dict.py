"""``relay.save_param_dict`` / ``relay.load_param_dict``: parameters as one binary blob.

The format (all integers little-endian; no pickle, nothing executable)::

    magic    8 bytes   b"RLYPARAM"
    version  u32       1
    count    u64       number of entries
    entry * count:
      name     u32 length, then UTF-8 bytes
      dtype    u32 length, then ASCII bytes (a TVM/NumPy dtype name: float32, float16, int8,
               bool, ...)
      ndim     u32
      shape    i64 * ndim
      nbytes   u64
      data     nbytes bytes, C order, little-endian elements (bool: one byte per element)

A blob that is truncated, has a bad magic, version or dtype, or whose sizes disagree raises
:class:`relay_tvm.errors.ConversionError` naming the entry and the offset.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import ConversionError, RelayError

MAGIC = b"RLYPARAM"
VERSION = 1


def _to_numpy(name, v) -> np.ndarray:
    if isinstance(v, np.ndarray):
        arr = v
    elif hasattr(v, "numpy"):
        arr = v.numpy()
    else:
        raise RelayError(f"save_param_dict: parameter {name!r} must be a NumPy array or a tvm "
                         f"Tensor, got {type(v).__name__}")
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise RelayError(f"save_param_dict: parameter {name!r} has unsupported dtype {arr.dtype}")
    return np.array(arr, order="C")


def _dtype_name(arr) -> str:
    return "bool" if arr.dtype == np.bool_ else arr.dtype.name


def save_param_dict(params: dict) -> bytearray:
    """Serialize ``name -> array`` (NumPy arrays or tvm Tensors) to bytes in TVM's NDArray-list
    format (what ``tvm.runtime.save_param_dict`` and tvm.relay 0.19 write, so TVM reads ours and
    we read theirs).

    Raises:
        RelayError: a name is not a string or a value is not a numeric array.
    """
    import tvm

    tensors = {}
    for name, v in params.items():
        if not isinstance(name, str):
            raise RelayError(f"save_param_dict: names must be strings, got {name!r}")
        tensors[name] = tvm.runtime.tensor(_to_numpy(name, v))
    return bytearray(bytes(tvm.runtime.save_param_dict(tensors)))


def save_param_dict_v1(params: dict) -> bytearray:
    """The earlier relay_tvm format (``RLYPARAM``, see the module docstring); still read."""
    out = bytearray(MAGIC)
    out += struct.pack("<IQ", VERSION, len(params))
    for name, v in params.items():
        if not isinstance(name, str):
            raise RelayError(f"save_param_dict: names must be strings, got {name!r}")
        arr = _to_numpy(name, v)
        le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        nb = name.encode("utf-8")
        dt = _dtype_name(arr).encode("ascii")
        out += struct.pack("<I", len(nb)) + nb
        out += struct.pack("<I", len(dt)) + dt
        out += struct.pack("<I", arr.ndim)
        out += struct.pack(f"<{arr.ndim}q", *arr.shape)
        data = le.tobytes()
        out += struct.pack("<Q", len(data))
        out += data
    return out


class _Reader:
    def __init__(self, blob):
        self.b = memoryview(bytes(blob))
        self.pos = 0

    def take(self, n: int, what: str):
        if n < 0 or self.pos + n > len(self.b):
            raise ConversionError(
                f"load_param_dict: truncated blob: needs {n} bytes for {what} at offset "
                f"{self.pos}, only {len(self.b) - self.pos} left")
        v = self.b[self.pos:self.pos + n]
        self.pos += n
        return v

    def unpack(self, fmt: str, what: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))


def load_param_dict(blob, as_numpy: bool = False) -> dict:
    """Deserialize bytes written by :func:`save_param_dict`.

    Args:
        blob: ``bytes`` / ``bytearray``.
        as_numpy: return NumPy arrays instead of ``tvm.runtime.Tensor`` s (on CPU).

    Returns:
        ``name -> tvm.runtime.Tensor`` (or ``np.ndarray``), in saved order.

    Raises:
        ConversionError: not a parameter blob, truncated, or inconsistent.
    """
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise ConversionError(f"load_param_dict: expected bytes, got {type(blob).__name__}")
    if bytes(blob[:len(MAGIC)]) != MAGIC:  # TVM's format (ours since the v1 format)
        if len(blob) >= 8 and struct.unpack("<Q", bytes(blob[:8]))[0] != TVM_LIST_MAGIC:
            raise ConversionError(
                f"load_param_dict: not a parameter blob (magic {bytes(blob[:8])!r}; expected "
                f"TVM's NDArray-list magic or relay_tvm's {MAGIC!r})")
        out = load_tvm_param_bytes(bytes(blob), "load_param_dict")
        if as_numpy:
            return out
        import tvm

        return {k: tvm.runtime.tensor(v) for k, v in out.items()}
    r = _Reader(blob)
    magic = bytes(r.take(len(MAGIC), "the magic number"))
    if magic != MAGIC:
        raise ConversionError(f"load_param_dict: not a relay_tvm parameter blob (magic {magic!r}, "
                              f"expected {MAGIC!r})")
    version, count = r.unpack("<IQ", "the header")
    if version != VERSION:
        raise ConversionError(f"load_param_dict: unsupported format version {version} "
                              f"(this reader knows {VERSION})")
    out = {}
    for k in range(count):
        (n,) = r.unpack("<I", f"the name length of entry {k}")
        try:
            name = bytes(r.take(n, f"the name of entry {k}")).decode("utf-8")
        except UnicodeDecodeError:
            raise ConversionError(
                f"load_param_dict: entry {k} has a name that is not UTF-8") from None
        (n,) = r.unpack("<I", f"the dtype length of {name!r}")
        dt = bytes(r.take(n, f"the dtype of {name!r}")).decode("ascii", "replace")
        try:
            dtype = np.dtype(dt)
        except TypeError:
            raise ConversionError(
                f"load_param_dict: parameter {name!r} has unknown dtype {dt!r}") from None
        (ndim,) = r.unpack("<I", f"the rank of {name!r}")
        if ndim > 64:
            raise ConversionError(f"load_param_dict: parameter {name!r} has rank {ndim} (> 64)")
        shape = r.unpack(f"<{ndim}q", f"the shape of {name!r}")
        if any(d < 0 for d in shape):
            raise ConversionError(f"load_param_dict: parameter {name!r} has a negative dimension "
                                  f"in shape {shape}")
        (nbytes,) = r.unpack("<Q", f"the data size of {name!r}")
        expect = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if nbytes != expect:
            raise ConversionError(f"load_param_dict: parameter {name!r}: {nbytes} data bytes for "
                                  f"shape {shape} of {dt} (expected {expect})")
        data = r.take(nbytes, f"the data of {name!r}")
        arr = np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
        if name in out:
            raise ConversionError(f"load_param_dict: parameter {name!r} appears twice")
        out[name] = arr
    if r.pos != len(r.b):
        raise ConversionError(f"load_param_dict: {len(r.b) - r.pos} trailing bytes after "
                              f"{count} entries")
    if as_numpy:
        return out
    import tvm

    return {k: tvm.runtime.tensor(v) for k, v in out.items()}


# ---- TVM's NDArray-list format (tvm.runtime.save_param_dict, nnvm's and 0.19's files) ----

TVM_LIST_MAGIC = 0xF7E58D4F05049CB7
TVM_ARRAY_MAGIC = 0xDD5E40F096B4A13F
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


def load_tvm_param_bytes(data: bytes, source: str = "<params>") -> dict:
    """Read TVM's parameter bytes (``tvm.runtime.save_param_dict``, ``tvm.relay.save_param_dict``
    of TVM <= 0.19, ``nnvm.compiler.save_param_dict``) as ``name -> numpy array``.

    Raises:
        ConversionError: the bytes are truncated or malformed (names the array and offset).
    """
    pos = 0

    def take(n, what):
        nonlocal pos
        if pos + n > len(data):
            raise ConversionError(f"{source}: truncated parameter file reading {what} at byte "
                                  f"{pos} of {len(data)}")
        b = data[pos:pos + n]
        pos += n
        return b

    def u64(what):
        return struct.unpack("<Q", take(8, what))[0]

    if u64("the magic") != TVM_LIST_MAGIC:
        raise ConversionError(f"{source}: not a TVM parameter file (bad magic)")
    u64("the reserved word")
    n = u64("the name count")
    if n > len(data):
        raise ConversionError(f"{source}: name count {n} is larger than the file")
    names = [take(u64("a name length"), "a name").decode("utf-8", "replace") for _ in range(n)]
    if u64("the array count") != n:
        raise ConversionError(f"{source}: the name and array counts differ")
    out = {}
    for name in names:
        if u64(f"the magic of {name!r}") != TVM_ARRAY_MAGIC:
            raise ConversionError(f"{source}: array {name!r} has a bad magic")
        take(8 + 8, f"the header of {name!r}")
        ndim = struct.unpack("<i", take(4, f"the ndim of {name!r}"))[0]
        code, bits, lanes = struct.unpack("<BBH", take(4, f"the dtype of {name!r}"))
        if code not in _DL_CODES or lanes != 1 or ndim < 0 or ndim > 32:
            raise ConversionError(f"{source}: array {name!r} has an unsupported dtype/ndim "
                                  f"(code {code}, bits {bits}, lanes {lanes}, ndim {ndim})")
        shape = struct.unpack(f"<{ndim}q", take(8 * ndim, f"the shape of {name!r}"))
        size = u64(f"the byte size of {name!r}")
        raw = take(size, f"the data of {name!r}")
        if code == 4:
            arr = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            dt = np.dtype(bool) if code == 6 or bits == 1 else np.dtype(f"{_DL_CODES[code]}{bits}")
            if size != dt.itemsize * int(np.prod(shape)):
                raise ConversionError(f"{source}: array {name!r}: {size} bytes for shape {shape}")
            arr = np.frombuffer(raw, dt.newbyteorder("<")).astype(dt)
        out[name] = arr.reshape(shape).copy()
    if pos != len(data):
        raise ConversionError(f"{source}: {len(data) - pos} unexpected trailing bytes")
    return out



__all__ = ["save_param_dict", "save_param_dict_v1", "load_param_dict", "load_tvm_param_bytes",
           "MAGIC", "VERSION"]

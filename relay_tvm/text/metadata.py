"""The ``#[metadata]`` section of the text format: constants that do not print inline.

Format (JSON, one constant per line so that diffs stay readable)::

    #[metadata]
    {
      "relay.Constant": [
        {"dtype": "float32", "shape": [2, 2], "data": "AACAPwAAAEAAAEBAAACAQA=="},
        ...
      ]
    }

``data`` is the base64 of the array's raw bytes in C order, little-endian, so values (NaN
payloads, -0.0, subnormals) come back bit for bit. ``meta[relay.Constant][i]`` in the program
refers to entry ``i``.

A module whose global functions carry relay_tvm's internal attributes (keys starting with
``relay_tvm.``, e.g. ``relay_tvm.bound_params`` that ``relay.quantize.quantize`` sets; they are
bookkeeping, not program, so the definitions do not print them) keeps them under
``"relay_tvm.function_attrs"``: ``{"main": {"relay_tvm.bound_params": "..."}}`` (string values).

TVM 0.19's own metadata section (``astext(show_meta_data=True)``: TVM's node JSON, ``root`` /
``nodes`` / ``b64ndarrays``, the arrays in TVM's tensor serialization) is read too.
"""

from __future__ import annotations

import base64
import json

import numpy as np

from ..errors import RelayError
from ..ir.base import check_dtype

KEY = "relay.Constant"
FUNCTION_ATTRS = "relay_tvm.function_attrs"


def _dtype_name(dt) -> str:
    return "bool" if dt == np.bool_ else dt.name


def encode_metadata(constants, function_attrs=None) -> str:
    """The JSON text of the metadata section for a list of :class:`Constant` s, and
    ``function_attrs`` (``{global name: {internal attribute: string}}``) when given."""
    rows = []
    for c in constants:
        a = np.array(c.data, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        le = a.astype(a.dtype.newbyteorder("<"), copy=False)
        entry = {
            "dtype": _dtype_name(a.dtype),
            "shape": list(a.shape),
            "data": base64.b64encode(le.tobytes()).decode("ascii"),
        }
        rows.append("    " + json.dumps(entry))
    tail = ""
    if function_attrs:
        tail = ',\n  "' + FUNCTION_ATTRS + '": ' + json.dumps(function_attrs, sort_keys=True)
    return '{\n  "' + KEY + '": [\n' + ",\n".join(rows) + "\n  ]" + tail + "\n}"


def decode_metadata(text: str) -> dict:
    """Parse a metadata section into ``{"relay.Constant": [np.ndarray, ...]}``.

    Raises:
        RelayError: the JSON is malformed or an entry's bytes disagree with its dtype and shape.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise RelayError(f"metadata section is not valid JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(doc, dict):
        raise RelayError("metadata section must be a JSON object")
    if "root" in doc and "nodes" in doc:
        return _decode_tvm_json(doc)
    out = {}
    for key, entries in doc.items():
        if key != KEY:
            out[key] = entries
            continue
        arrays = []
        for i, e in enumerate(entries):
            try:
                dtype = check_dtype(e["dtype"])
                shape = tuple(int(d) for d in e["shape"])
                raw = base64.b64decode(e["data"], validate=True)
            except (KeyError, TypeError, ValueError) as err:
                raise RelayError(f"metadata {KEY}[{i}] is malformed: {err}") from None
            np_dtype = np.dtype(dtype).newbyteorder("<")
            n = int(np.prod(shape, dtype=np.int64)) if shape else 1
            if len(raw) != n * np_dtype.itemsize:
                raise RelayError(
                    f"metadata {KEY}[{i}]: {len(raw)} bytes of data, expected {n * np_dtype.itemsize}"
                    f" for shape {list(shape)} and dtype {dtype}"
                )
            arr = np.frombuffer(raw, dtype=np_dtype).reshape(shape).astype(np.dtype(dtype))
            arrays.append(arr)
        out[KEY] = arrays
    return out


_TVM_TENSOR_MAGIC = 0xDD5E40F096B4A13F
# DLPack type codes (dlpack.h): kDLInt, kDLUInt, kDLFloat, kDLBfloat
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat"}


def _tvm_tensor(raw: bytes, where: str) -> np.ndarray:
    """An array from TVM's tensor serialization (``SaveDLTensor``): magic, reserved word,
    device, ndim, DLDataType (code, bits, lanes), the shape as int64s, the data's byte size
    and the little-endian bytes."""
    import struct

    try:
        magic, _, _, _, ndim = struct.unpack_from("<QQiii", raw, 0)
        code, bits, lanes = struct.unpack_from("<BBH", raw, 28)
        shape = struct.unpack_from(f"<{ndim}q", raw, 32)
        (nbytes,) = struct.unpack_from("<q", raw, 32 + 8 * ndim)
    except struct.error:
        raise RelayError(f"metadata {where}: truncated tensor") from None
    if magic != _TVM_TENSOR_MAGIC:
        raise RelayError(f"metadata {where}: not a TVM tensor (magic {magic:#x})")
    kind = _DL_CODES.get(code)
    if kind is None or lanes != 1:
        raise RelayError(f"metadata {where}: unsupported tensor dtype (code {code}, "
                         f"{bits} bits, {lanes} lanes)")
    dtype = "bool" if (kind, bits) == ("uint", 1) else f"{kind}{bits}"
    np_dtype = np.dtype(check_dtype(dtype)).newbyteorder("<")
    start = 40 + 8 * ndim
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if nbytes != n * np_dtype.itemsize or len(raw) != start + nbytes:
        raise RelayError(f"metadata {where}: {len(raw) - start} bytes of data, expected "
                         f"{n * np_dtype.itemsize} for shape {list(shape)} and dtype {dtype}")
    return np.frombuffer(raw, np_dtype, count=n, offset=start).reshape(shape).astype(
        np.dtype(dtype))


def _decode_tvm_json(doc: dict) -> dict:
    """TVM 0.19's metadata: ``root`` is a Map node ``{"relay.Constant": Array of Constant
    nodes}``; a Constant node's ``data`` attribute indexes ``b64ndarrays``."""
    try:
        nodes = doc["nodes"]
        root = nodes[int(doc["root"])]
        blobs = doc.get("b64ndarrays", [])
        out = {}
        for key, idx in zip(root.get("keys", []), root.get("data", [])):
            items = nodes[idx].get("data", [])
            if key != KEY:
                out[key] = items  # other kinds: the parser names them where they are used
                continue
            arrays = []
            for i, item in enumerate(items):
                node = nodes[item]
                if node.get("type_key") != "relay.Constant":
                    raise RelayError(f"metadata {KEY}[{i}] is a {node.get('type_key')!r} node")
                k = int(node["attrs"]["data"])
                raw = base64.b64decode(blobs[k], validate=True)
                arrays.append(_tvm_tensor(raw, f"{KEY}[{i}]"))
            out[KEY] = arrays
        return out
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise RelayError(f"metadata section: malformed TVM node JSON ({type(e).__name__}: "
                         f"{e})") from None


__all__ = ["encode_metadata", "decode_metadata", "KEY"]

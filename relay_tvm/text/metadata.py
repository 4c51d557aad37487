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
"""

from __future__ import annotations

import base64
import json

import numpy as np

from ..errors import RelayError
from ..ir.base import check_dtype

KEY = "relay.Constant"


def _dtype_name(dt) -> str:
    return "bool" if dt == np.bool_ else dt.name


def encode_metadata(constants) -> str:
    """The JSON text of the metadata section for a list of :class:`Constant` s."""
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
    return '{\n  "' + KEY + '": [\n' + ",\n".join(rows) + "\n  ]\n}"


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


__all__ = ["encode_metadata", "decode_metadata", "KEY"]

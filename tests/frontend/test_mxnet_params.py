"""The MXNet NDArray binary reader (no MXNet needed) and its errors; round trips with mx.nd."""

import struct

import numpy as np
import pytest

from relay_tvm.errors import ConversionError
from relay_tvm.frontend.mxnet_params import (
    load_ndarray_bytes,
    load_ndarray_file,
    save_ndarray_file,
    split_arg_aux,
)

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64"]


def _arrays():
    rng = np.random.default_rng(0)
    out = {}
    for i, dt in enumerate(DTYPES):
        shape = [(2, 3), (4,), (1, 2, 3, 2), (5, 1), (3,), (2, 2), (7,)][i]
        out[f"arg:w_{dt}"] = (rng.uniform(-100, 100, shape)).astype(dt)
    out["aux:running_mean"] = np.arange(3, dtype="float32")
    return out


def test_own_writer_roundtrip(tmp_path):
    arrs = _arrays()
    path = tmp_path / "x.params"
    save_ndarray_file(path, arrs)
    got = load_ndarray_file(path)
    assert list(got) == list(arrs)
    for k in arrs:
        assert got[k].dtype == arrs[k].dtype
        np.testing.assert_array_equal(got[k], arrs[k])
    arg, aux = split_arg_aux(got)
    assert set(aux) == {"running_mean"} and "w_float32" in arg


def test_list_file(tmp_path):
    path = tmp_path / "l.nd"
    save_ndarray_file(path, [np.ones((2, 2), "float32"), np.zeros(3, "int64")])
    got = load_ndarray_file(path)
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_array_equal(got[1], np.zeros(3, "int64"))


def _valid_bytes(tmp_path):
    path = tmp_path / "v.params"
    save_ndarray_file(path, {"arg:a": np.arange(6, dtype="float32").reshape(2, 3),
                             "aux:b": np.ones(2, "float32")})
    return path.read_bytes()


def test_truncated_everywhere(tmp_path):
    data = _valid_bytes(tmp_path)
    for cut in range(0, len(data), 3):
        with pytest.raises(ConversionError, match="not a valid MXNet NDArray file"):
            load_ndarray_bytes(data[:cut], "cut.params")


def test_truncated_file_names_file(tmp_path):
    data = _valid_bytes(tmp_path)
    p = tmp_path / "trunc.params"
    p.write_bytes(data[:40])
    with pytest.raises(ConversionError, match=r"trunc\.params.*array 0 of 2"):
        load_ndarray_file(p)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda b: b"\x00" * 8 + b[8:], "bad file magic"),
        (lambda b: b[:24] + struct.pack("<I", 0x12345678) + b[28:], "bad array magic"),
        (lambda b: b + b"\x00\x01", "trailing bytes"),
        (lambda b: b[:28] + struct.pack("<i", 2) + b[32:], "storage type 2"),
        (lambda b: b[:32] + struct.pack("<i", 99) + b[36:], "ndim 99"),
    ],
)
def test_corrupt(tmp_path, mutate, match):
    data = mutate(_valid_bytes(tmp_path))
    with pytest.raises(ConversionError, match=match):
        load_ndarray_bytes(data, "bad.params")


def test_bad_dtype_flag(tmp_path):
    data = bytearray(_valid_bytes(tmp_path))
    # array 0: header 24 bytes, magic 4, stype 4, ndim 4, dims 16, dev 8, then the type flag
    off = 24 + 4 + 4 + 4 + 16 + 8
    assert struct.unpack("<i", data[off:off + 4])[0] == 0
    data[off:off + 4] = struct.pack("<i", 42)
    with pytest.raises(ConversionError, match="unknown dtype flag 42"):
        load_ndarray_bytes(bytes(data), "bad.params")


def test_missing_file(tmp_path):
    with pytest.raises(ConversionError, match="cannot read MXNet parameter file"):
        load_ndarray_file(tmp_path / "nope.params")


@pytest.mark.mxnet
def test_read_mx_nd_save(tmp_path):
    mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 writes the reference files")
    arrs = _arrays()
    path = str(tmp_path / "mx.params")
    mx.nd.save(path, {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrs.items()})
    got = load_ndarray_file(path)
    for k, v in arrs.items():
        assert got[k].dtype == v.dtype, k
        np.testing.assert_array_equal(got[k], v)
    lpath = str(tmp_path / "mx_list.nd")
    mx.nd.save(lpath, [mx.nd.array(arrs["arg:w_float32"])])
    np.testing.assert_array_equal(load_ndarray_file(lpath)[0], arrs["arg:w_float32"])


@pytest.mark.mxnet
def test_mxnet_reads_ours(tmp_path):
    mx = pytest.importorskip("mxnet", reason="MXNet 1.9.1 reads the file back")
    arrs = _arrays()
    path = str(tmp_path / "ours.params")
    save_ndarray_file(path, arrs)
    got = mx.nd.load(path)
    for k, v in arrs.items():
        np.testing.assert_array_equal(got[k].asnumpy(), v)

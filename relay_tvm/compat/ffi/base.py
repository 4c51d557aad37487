"""``tvm._ffi.base`` of TVM 0.19: ``TVMError`` (``RuntimeError`` on 0.27, see
:mod:`relay_tvm.errors`) and ``py_str``."""

TVMError = RuntimeError


def py_str(x) -> str:
    """Bytes (UTF-8) or str as str."""
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else str(x)

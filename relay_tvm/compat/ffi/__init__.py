"""``tvm._ffi`` of TVM 0.19 (0.27 moved it to the ``tvm_ffi`` package): the names Relay-era
scripts used — ``get_global_func``, ``register_func``, ``register_object`` and
``tvm._ffi.base`` (``TVMError``, ``py_str``)."""

import tvm_ffi

from . import base  # noqa: F401

get_global_func = tvm_ffi.get_global_func
register_object = tvm_ffi.register_object


def register_func(func_name, f=None, override=False):
    """Register a global function (a decorator when ``f`` is None)."""
    return tvm_ffi.register_global_func(func_name, f, override=override)

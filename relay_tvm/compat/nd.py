"""``tvm.nd`` of TVM 0.19 (removed in 0.27): NumPy data to device tensors.

``tvm.nd.array(a, device)`` is ``tvm.runtime.tensor``; ``tvm.nd.empty(shape, dtype, device)``
is ``tvm.runtime.empty``; ``tvm.nd.NDArray`` stands for ``tvm.runtime.Tensor`` (building one
builds a Tensor, its attributes are Tensor's) and ``isinstance(x, tvm.nd.NDArray)`` also holds
for the tensors the reference interpreter puts in ADT fields
(:class:`relay_tvm.runtime.interpreter.HostArray`: NumPy arrays with ``numpy()``) and for a
``relay.Constant``'s ``data``, which 0.19 gave as NDArrays.
"""

from __future__ import annotations

import numpy as np
import tvm.runtime


def _tensor_kinds():
    from ..ir.expr import _ConstData
    from ..runtime.interpreter import HostArray

    return (tvm.runtime.Tensor, HostArray, _ConstData)


class _NDArrayMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _tensor_kinds())

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, _tensor_kinds())

    def __call__(cls, *args, **kwargs):
        return tvm.runtime.Tensor(*args, **kwargs)

    def __getattr__(cls, name):
        return getattr(tvm.runtime.Tensor, name)


class NDArray(metaclass=_NDArrayMeta):
    """``tvm.nd.NDArray`` of TVM 0.19: see the module docstring."""


def array(arr, device=None, mem_scope=None):
    """A device tensor holding a copy of ``arr`` (NumPy array, scalar, list or tensor); on
    ``device`` (default CPU 0)."""
    if isinstance(arr, NDArray):
        arr = arr.numpy()
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr)
    return tvm.runtime.tensor(arr, device if device is not None else tvm.cpu(0), mem_scope)


def empty(shape, dtype="float32", device=None, mem_scope=None):
    """An uninitialized tensor of ``shape`` and ``dtype`` on ``device`` (default CPU 0)."""
    return tvm.runtime.empty(shape, dtype, device if device is not None else tvm.cpu(0),
                             mem_scope)


def cpu(dev_id=0):
    return tvm.cpu(dev_id)


def cuda(dev_id=0):
    return tvm.cuda(dev_id)

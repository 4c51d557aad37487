"""``tvm.nd`` of TVM 0.19 (removed in 0.27): NumPy data to device tensors.

``tvm.nd.array(a, device)`` is ``tvm.runtime.tensor``; ``tvm.nd.empty(shape, dtype, device)``
is ``tvm.runtime.empty``; ``tvm.nd.NDArray`` is ``tvm.runtime.Tensor``.
"""

from __future__ import annotations

import numpy as np
import tvm.runtime

NDArray = tvm.runtime.Tensor


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

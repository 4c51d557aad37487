"""Python numbers and lists as tensor arguments of the executors (``evaluate()(3)``,
``evaluate()([[1., 2.], [3., 4.]])``).

tvm.relay 0.19 accepted Python scalars and nested lists of numbers where a tensor was expected
(its interpreter made a constant of them, its graph executor copied them into the input tensor
of the parameter's dtype). Python numbers have no dtype of their own, so they take the
parameter's dtype; values that dtype cannot hold (a fraction for an integer parameter, an
integer out of its range, a finite float beyond a float dtype's range) are refused rather than
truncated, wrapped or made infinite. NumPy scalars and arrays have a dtype: they are not
converted here (the executors refuse a dtype other than the parameter's).

tvm Tensors as the kernels read them (:func:`plain_tensor` copies a strided tensor or a view
at a byte offset; :func:`check_plain_layout` refuses one where no copy is wanted,
``set_input_zero_copy``): the rule of both executors, in one place.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..transform.bind_params import list_to_array  # noqa: F401 - the executors' and bind's rule


def python_arg(value, dtype: str, where: str):
    """An executor argument for a tensor parameter of ``dtype``: a NumPy scalar as a 0-d array
    of its own dtype (``numpy.float64`` is a Python ``float`` but keeps its dtype), a Python
    number or list by :func:`list_to_array`, anything else unchanged (the executor checks it).

    Raises:
        InputError: as :func:`list_to_array`.
    """
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, (bool, int, float, list)):
        return list_to_array(value, dtype, where)
    return value


def _at_zero_offset(value):
    """``value`` itself when its data starts at its pointer (byte offset 0), else a copy that
    does (TVM's ``vm.builtin.ensure_zero_offset``)."""
    import tvm

    return tvm.get_global_func("vm.builtin.ensure_zero_offset")(value)


def check_plain_layout(value, where: str) -> None:
    """``value`` (a tvm Tensor) must be compact, with no byte offset, 64-byte aligned: the
    kernels read its data pointer as the first element, in row-major order, with aligned
    vector loads. A graph library's ``main`` refuses strides and offsets too (its layout-check
    kernels, ``backend/argument_checks.py``), but only when it runs and in TVM's words; this
    says so at ``set_input_zero_copy``, as an InputError, and checks the alignment, which
    nothing else does.

    Raises:
        InputError: strided, a view at a byte offset (``Tensor._create_view``), or data not
            aligned to 64 bytes (a NumPy array shared through DLPack).
    """
    if not value.is_contiguous():
        raise InputError(f"{where}: tensor with strides {tuple(value.strides)} is not compact "
                         f"(row-major); use set_input, which copies")
    if not _at_zero_offset(value).same_as(value):
        raise InputError(f"{where}: tensor is a view at a byte offset into another tensor; "
                         f"use set_input, which copies")
    if value.data_ptr() % 64:  # the kernels assume TVM's alignment (vector loads fault)
        raise InputError(f"{where}: tensor data at address {value.data_ptr():#x} is not "
                         f"aligned to 64 bytes (TVM's allocations are); use set_input, which "
                         f"copies")


def plain_tensor(value, where: str):
    """A tvm Tensor as a kernel reads it: ``value`` itself when it is compact (row-major) at
    byte offset 0, else a compact copy of it on its device (a view made by
    ``_create_view(relative_byte_offset=...)``, a strided tensor from DLPack). TVM's kernels
    index from the data pointer with the buffer's own compact strides; a graph library's
    kernels do not check (``backend/argument_checks``) and the VM's refuse with TVM's error.

    Raises:
        InputError: a strided tensor on a device other than the host (TVM copies compact
            tensors only; NumPy reads the host's through DLPack).
    """
    if not value.is_contiguous():
        if value.device.dlpack_device_type() != 1:
            raise InputError(f"{where}: a strided tensor on {value.device}; give a compact one")
        from .interpreter import host_tensor

        return host_tensor(np.ascontiguousarray(np.from_dlpack(value)), value.device)
    return _at_zero_offset(value)


__all__ = ["check_plain_layout", "list_to_array", "plain_tensor", "python_arg"]

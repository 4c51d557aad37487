"""Python lists as tensor arguments of the executors (``evaluate()([[1., 2.], [3., 4.]])``).

tvm.relay 0.19 accepted nested lists of numbers where a tensor was expected (its interpreter made
a constant of them, its graph executor copied them into the input tensor of the parameter's
dtype). Python numbers have no dtype of their own, so, as for Python scalars, a list takes the
parameter's dtype; values that dtype cannot hold (a fraction for an integer parameter, an
integer out of its range) are refused rather than truncated or wrapped.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def list_to_array(value, dtype: str, where: str) -> np.ndarray:
    """``value`` (a nested list of Python numbers) as a NumPy array of ``dtype``.

    Args:
        value: a list (nested for more dimensions; rows of equal length).
        dtype: the parameter's dtype (e.g. ``"float32"``).
        where: the argument, for messages (``"argument 0 (%x)"``).

    Raises:
        InputError: ragged rows, elements that are not numbers, or values ``dtype`` cannot
            hold exactly (fractions for an integer dtype, integers out of range).
    """
    try:
        arr = np.array(value)
    except ValueError as e:  # ragged rows
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor, or a list of "
                         f"numbers with rows of equal length ({e})") from None
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor (a list converts "
                         f"only when it holds numbers; this one holds {arr.dtype} elements)")
    out = arr.astype(dtype)
    if np.dtype(dtype).kind in "biu" and arr.dtype.kind in "biuf":
        if not np.array_equal(out.astype(arr.dtype), arr):
            raise InputError(f"{where}: the list's values do not fit dtype {dtype} exactly "
                             f"(fractions or out-of-range integers); pass a NumPy array of "
                             f"dtype {dtype}")
    return out


__all__ = ["list_to_array"]

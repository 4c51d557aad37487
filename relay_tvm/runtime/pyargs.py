"""Python numbers and lists as tensor arguments of the executors (``evaluate()(3)``,
``evaluate()([[1., 2.], [3., 4.]])``).

tvm.relay 0.19 accepted Python scalars and nested lists of numbers where a tensor was expected
(its interpreter made a constant of them, its graph executor copied them into the input tensor
of the parameter's dtype). Python numbers have no dtype of their own, so they take the
parameter's dtype; values that dtype cannot hold (a fraction for an integer parameter, an
integer out of its range, a finite float beyond a float dtype's range) are refused rather than
truncated, wrapped or made infinite. NumPy scalars and arrays have a dtype: they are not
converted here (the executors refuse a dtype other than the parameter's).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def list_to_array(value, dtype: str, where: str) -> np.ndarray:
    """``value`` (a Python number, or a nested list of them) as a NumPy array of ``dtype``.

    Args:
        value: a Python ``bool`` / ``int`` / ``float``, or a list (nested for more
            dimensions; rows of equal length).
        dtype: the parameter's dtype (e.g. ``"float32"``).
        where: the argument, for messages (``"argument 0 (%x)"``).

    Raises:
        InputError: ragged rows, elements that are not numbers, booleans for a dtype other
            than ``bool``, or values ``dtype`` cannot hold exactly (fractions for an integer
            dtype, integers out of range, finite values beyond a float dtype's range).
    """
    listed = isinstance(value, list)
    what = "the list's values do" if listed else f"the value {value!r} does"
    try:
        arr = np.array(value)
    except ValueError as e:  # ragged rows
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor, or a list of "
                         f"numbers with rows of equal length ({e})") from None
    if arr.dtype.kind == "O" and isinstance(value, int):  # an integer beyond 64 bits
        raise InputError(f"{where}: {what} not fit dtype {dtype} (out-of-range integer)")
    if arr.dtype.kind == "b" and np.dtype(dtype).kind != "b":
        which = "the list's values are" if listed else f"{value!r} is"
        raise InputError(f"{where}: {which} boolean, the parameter is {dtype} (a Python bool "
                         f"is not taken for a number); pass a number or a NumPy array of dtype "
                         f"{dtype}")
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor (a list converts "
                         f"only when it holds numbers; this one holds {arr.dtype} elements)")
    kind = np.dtype(dtype).kind
    with np.errstate(all="ignore"):
        out = arr.astype(dtype)
        if kind in "biu":
            fits = np.array_equal(out.astype(arr.dtype), arr)
        elif kind in "fc":
            fits = bool(np.all(np.isfinite(out) | ~np.isfinite(arr)))
        else:
            fits = True
    if not fits:
        why = "fractions or out-of-range integers" if kind in "biu" else "beyond its range"
        raise InputError(f"{where}: {what} not fit dtype {dtype} exactly ({why}); pass a "
                         f"NumPy array of dtype {dtype}")
    return out


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


__all__ = ["list_to_array", "python_arg"]

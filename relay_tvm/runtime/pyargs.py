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


__all__ = ["list_to_array", "python_arg"]

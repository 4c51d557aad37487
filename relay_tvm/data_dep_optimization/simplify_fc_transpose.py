"""``convert(func, params)``: ``nn.dense(x, transpose(w, [1, 0]))`` becomes
``nn.dense(x, w.T)`` and ``params`` gets ``w.T`` (the transposed array) in place of ``w``
(tvm.relay 0.19's ``relay.data_dep_optimization.simplify_fc_transpose``)."""

from __future__ import annotations

import numpy as np

from ..errors import RelayError


def _array(v):
    return v.numpy() if hasattr(v, "numpy") else np.asarray(v)


def convert(func, params: dict):
    """Pre-transpose the weights of ``dense(x, transpose(w, [1, 0]))``.

    Args:
        func: a ``Function`` whose weights are parameters.
        params: ``name -> array`` (NumPy or ``tvm.nd`` arrays); changed in place: each
            converted ``w`` is replaced by ``w.T``.

    Returns:
        ``(new_func, params)``.

    Raises:
        RelayError: a converted weight has no value in ``params``.
    """
    from ..ir.module import IRModule
    from ..transform import InferType, PassContext
    from ..transform.simplify_fc_transpose import SimplifyFCTranspose, search_fc_transpose

    names = search_fc_transpose(func)
    for name in names:
        if name not in params:
            raise RelayError(f"simplify_fc_transpose.convert: no value for weight {name!r} in "
                             f"params")
        value = params.pop(name)
        t = np.ascontiguousarray(_array(value).T)
        if isinstance(value, np.ndarray):
            params[name + ".T"] = t
        else:  # a TVM tensor in, a TVM tensor out
            import tvm

            params[name + ".T"] = tvm.runtime.tensor(t)
    mod = InferType()(IRModule.from_expr(func))
    with PassContext(opt_level=3):
        mod = SimplifyFCTranspose(names)(mod)
    return InferType()(mod)["main"], params

"""Test helpers and model workloads (tvm.relay.testing).

Each workload module has ``get_workload(batch_size=1, ...) -> (mod, params)``: a type-checked
:class:`IRModule` whose ``main`` takes ``data`` and the parameters, and a dict of seeded
Xavier-initialized NumPy parameter values: :mod:`.mlp`, :mod:`.resnet`, :mod:`.mobilenet`,
:mod:`.vgg`, :mod:`.squeezenet`, :mod:`.dcgan`, :mod:`.lstm`.
"""

from __future__ import annotations

import numpy as np

from . import dcgan, init, layers, lstm, mlp, mobilenet, resnet, squeezenet, vgg  # noqa: F401
from .init import Xavier, create_workload  # noqa: F401
from .grad import check_grad  # noqa: F401
from .train import lenet_loss, mlp_loss, synthetic_classification, train_sgd  # noqa: F401
from ..transform.gradient import gradient  # noqa: F401


def run_infer_type(expr):
    """``expr`` type-checked: a function comes back from a module's ``main``; another expression
    is type-checked in place and returned."""
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..transform import InferType

    if isinstance(expr, Function):
        return InferType()(IRModule.from_expr(expr))["main"]
    from ..typing.infer import infer_expr

    return infer_expr(expr)


def run_opt_pass(expr, opt_pass, opt_level=3):
    """Run ``opt_pass`` (one pass or a list) on a function under ``PassContext(opt_level)``;
    returns the new ``main``."""
    from ..ir.module import IRModule
    from ..transform import InferType, PassContext, Sequential

    passes = opt_pass if isinstance(opt_pass, (list, tuple)) else [opt_pass]
    mod = IRModule.from_expr(expr)
    with PassContext(opt_level=opt_level):
        mod = Sequential([InferType(), *passes, InferType()])(mod)
    return mod["main"]


def rand(shape, dtype="float32", seed=None):
    """A random array of ``shape``: uniform in [0, 1) for floats, small integers otherwise."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random(shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    return rng.integers(0, 10, size=shape).astype(dtype)


__all__ = ["run_infer_type", "run_opt_pass", "rand", "create_workload", "Xavier", "check_grad",
           "gradient", "train_sgd", "mlp_loss", "lenet_loss", "synthetic_classification"]

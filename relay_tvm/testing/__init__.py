"""Test helpers and model workloads (tvm.relay.testing).

Each workload module has ``get_workload(batch_size=1, ...) -> (mod, params)``: a type-checked
:class:`IRModule` whose ``main`` takes ``data`` and the parameters, and a dict of seeded
Xavier-initialized parameter values as ``tvm.runtime.Tensor`` (0.19's NDArrays; ``.numpy()``
gives the array): :mod:`.mlp`, :mod:`.resnet`, :mod:`.mobilenet`, :mod:`.vgg`,
:mod:`.squeezenet`, :mod:`.dcgan`, :mod:`.lstm`, :mod:`.inception_v3`, :mod:`.synthetic`.
"""

from __future__ import annotations

import numpy as np

from ..prelude import Prelude  # noqa: F401  (tvm.relay.testing re-exported it)
from ..transform.gradient import gradient  # noqa: F401
from . import (  # noqa: F401  # noqa: F401
    dcgan,
    densenet,
    dqn,
    inception_v3,
    init,
    layers,
    lstm,
    mlp,
    mobilenet,
    resnet,
    resnet_3d,
    squeezenet,
    synthetic,
    vgg,
)
from .grad import check_grad  # noqa: F401
from .init import Xavier, create_workload  # noqa: F401
from .py_converter import run_as_python, to_python  # noqa: F401
from .train import lenet_loss, mlp_loss, synthetic_classification, train_sgd  # noqa: F401


def run_infer_type(expr, mod=None):
    """``expr`` type-checked: a function comes back from a module's ``main``; another expression
    is type-checked in place (with the globals of ``mod``, if given) and returned."""
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..transform import InferType

    if isinstance(expr, Function) and mod is None:
        return InferType()(IRModule.from_expr(expr))["main"]
    from ..typing.infer import infer_expr

    return infer_expr(expr, mod) if mod is not None else infer_expr(expr)


def run_opt_pass(expr, opt_pass, import_prelude=False, opt_level=None):
    """Run ``opt_pass`` (one pass or a list) on ``expr`` in a fresh module (tvm.relay.testing's
    helper): the result is the new ``main`` when ``expr`` is a function, its body otherwise.

    Args:
        import_prelude: add the Prelude's types and functions to the module first.
        opt_level: run under ``PassContext(opt_level)``; the current context when None.
    """
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..transform import InferType, PassContext

    passes = opt_pass if isinstance(opt_pass, (list, tuple)) else [opt_pass]
    mod = IRModule.from_expr(expr)
    if import_prelude:
        from ..prelude import Prelude

        Prelude(mod)
    def run(mod):
        # called directly, each pass runs whatever its opt level (as in tvm.relay)
        for p in [InferType(), *passes, InferType()]:
            mod = p(mod)
        return mod

    if opt_level is None:
        mod = run(mod)
    else:
        with PassContext(opt_level=opt_level):
            mod = run(mod)
    entry = mod["main"]
    return entry if isinstance(expr, Function) else entry.body


def _np_randn_from_type(t, scale=1, mean=0):
    """A standard-normal NumPy array of tensor type ``t``'s shape and dtype, times ``scale``
    plus ``mean`` (tvm.relay.testing's helper for gradient checks)."""
    shape = tuple(int(d) for d in t.shape)
    return np.asarray(mean + scale * np.random.randn(*shape)).astype(t.dtype)


def rand(*args, seed=None):
    """A random array: ``rand(shape, dtype="float32")`` gives a NumPy array (uniform in [0, 1)
    for floats, small integers otherwise); tvm.relay 0.19's ``rand(dtype, *shape)`` gives a
    ``tvm.runtime.Tensor`` of standard-normal values."""
    if args and isinstance(args[0], str):
        import tvm

        dtype, shape = args[0], args[1:]
        rng = np.random.default_rng(seed)
        return tvm.runtime.tensor(rng.standard_normal(shape).astype(dtype))
    shape = args[0]
    dtype = args[1] if len(args) > 1 else "float32"
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.random(shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    return rng.integers(0, 10, size=shape).astype(dtype)


def count_ops(expr) -> dict:
    """``operator name -> number of calls`` in ``expr`` (primitive functions included)."""
    from ..analysis import post_order_visit
    from ..ir.expr import Call
    from ..op.registry import Op

    counts: dict = {}

    def visit(node):
        if type(node) is Call and isinstance(node.op, Op):
            counts[node.op.name] = counts.get(node.op.name, 0) + 1

    post_order_visit(expr, visit)
    return counts


def count(prelude, value) -> int:
    """The integer a Prelude ``nat`` value (``s(s(z))`` evaluated) stands for."""
    n = 0
    while True:
        tag = getattr(value, "constructor", None) or getattr(value, "tag", None)
        fields = getattr(value, "fields", ())
        if tag is None or not fields:
            return n
        n += 1
        value = fields[0]


def make_nat_expr(prelude, n: int):
    """The expression ``s(s(...z()))`` with ``n`` applications of ``s``."""
    from ..ir.expr import Call

    out = Call(prelude.z, [])
    for _ in range(n):
        out = Call(prelude.s, [out])
    return out


def make_nat_value(prelude, n: int):
    """The evaluated ``nat`` value of ``n`` (as the interpreter returns it)."""
    from ..runtime.interpreter import ConstructorValue

    val = ConstructorValue(prelude.z, [])
    for _ in range(n):
        val = ConstructorValue(prelude.s, [val])
    return val


def enabled_targets():
    """``[(target string, device)]`` of the targets this machine can run (tvm.relay.testing
    re-exported ``tvm.testing.enabled_targets``; TVM's ``TVM_TEST_TARGETS`` selects them)."""
    import tvm.testing

    return tvm.testing.enabled_targets()


from . import nat, temp_op_attr  # noqa: E402,F401  (nat uses count & co. above)

__all__ = ["run_infer_type", "run_opt_pass", "rand", "create_workload", "Xavier", "check_grad",
           "gradient", "train_sgd", "mlp_loss", "lenet_loss", "synthetic_classification",
           "count_ops", "count", "make_nat_expr", "make_nat_value", "temp_op_attr", "run_as_python",
           "to_python", "inception_v3", "synthetic", "enabled_targets"]

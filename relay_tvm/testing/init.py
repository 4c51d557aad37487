"""Seeded parameter initializers for the test workloads (after tvm.relay.testing.init).

``Xavier`` draws weights uniformly from ``[-s, s]`` with ``s = sqrt(magnitude / fan)``, fan the
average of fan-in and fan-out (Glorot & Bengio 2010; MXNet's ``Xavier`` defaults), or the
window size alone for a name containing ``depthwise`` (0.19's rule). As in
tvm.relay 0.19, the parameter's name chooses by its ending: ``...weight`` Xavier, ``...bias``,
``...beta`` and ``...mean`` (``bn_mean``, ``moving_mean``) zeros, ``...gamma`` and ``...var``
(``bn_var``, ``moving_var``) ones; any other name is an error (0.19: ``ValueError``).
"""

from __future__ import annotations

import numpy as np


class Xavier:
    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3.0, seed=0):
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)
        self.rng = np.random.default_rng(seed)

    def __call__(self, name: str, shape, dtype="float32") -> np.ndarray:
        """The value of parameter ``name``: a new array of ``shape`` / ``dtype``; given an
        array instead of a shape (0.19's ``Initializer(desc, arr)``), fills it in place too."""
        if isinstance(shape, np.ndarray):
            arr = shape
            arr[...] = self(name, arr.shape, arr.dtype)
            return arr
        shape = tuple(int(d) for d in shape)
        if name.endswith(("bias", "beta", "mean")):
            return np.zeros(shape, dtype)
        if name.endswith(("gamma", "var")):
            return np.ones(shape, dtype)
        if not name.endswith("weight"):
            from ..errors import InputError

            raise InputError(
                f"Xavier: no initialization pattern for parameter {name!r}: its name must end in "
                "'weight' (Xavier), 'bias' / 'beta' / 'mean' (zeros) or 'gamma' / 'var' (ones), "
                "as in tvm.relay.testing; pass create_workload an initializer of your own")
        if len(shape) < 2:
            return self.rng.uniform(-0.1, 0.1, size=shape).astype(dtype)
        hw = int(np.prod(shape[2:])) if len(shape) > 2 else 1
        fan_in, fan_out = shape[1] * hw, shape[0] * hw
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        if "depthwise" in name:
            # 0.19's rule for a name with "depthwise" in it: the window size alone (each output
            # channel sees one input channel). tvm.relay.testing.mobilenet's depthwise weights
            # are named "<block>_weight", which it does not reach, in 0.19 as here.
            factor = hw
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            return self.rng.uniform(-scale, scale, size=shape).astype(dtype)
        return self.rng.normal(0, scale, size=shape).astype(dtype)


def create_workload(net, initializer=None, seed=0):
    """``(mod, params)`` for a function ``net``: the module is type-checked; every parameter but
    ``data`` gets a value from ``initializer`` (a seeded :class:`Xavier` by default), called
    ``initializer(name, shape, dtype) -> array``, or, as tvm.relay 0.19 called it,
    ``initializer(name, array)`` on a zero array that it fills in place (an initializer that
    takes exactly two arguments is called so).

    Returns:
        ``(IRModule, dict name -> tvm.runtime.Tensor)`` on the CPU: tvm.relay 0.19 gave NDArrays
        (``tvm.nd.NDArray`` is ``tvm.runtime.Tensor`` here; ``.numpy()`` gives the values).
        ``relay.build``, ``relay.vm.compile``, the executors and ``relay.const`` take them as
        they take NumPy arrays.
    """
    import tvm

    from ..ir.module import IRModule
    from ..transform import InferType

    mod = InferType()(IRModule.from_expr(net))
    init = initializer or Xavier(seed=seed)
    in_place = _fills_in_place(init)
    params = {}
    for p in mod["main"].params:
        if p.name_hint == "data":
            continue
        t = p.checked_type
        if in_place:
            value = np.zeros(t.concrete_shape, t.dtype)
            init(p.name_hint, value)
        else:
            value = init(p.name_hint, t.concrete_shape, t.dtype)
        params[p.name_hint] = tvm.runtime.tensor(value, tvm.cpu(0))
    return mod, params


def _fills_in_place(init) -> bool:
    """Whether ``init`` follows tvm.relay 0.19's protocol ``init(name, array)`` (it fills a zero
    array in place) rather than ours, ``init(name, shape, dtype) -> array``."""
    import inspect

    try:
        sig = inspect.signature(init)
    except (TypeError, ValueError):
        return False
    try:
        sig.bind("w", (1,), "float32")
    except TypeError:
        return True
    return False


__all__ = ["Xavier", "create_workload"]

"""Helpers of the MXNet frontend tests: running a converted module, random Gluon weights."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay


def run_mod(mod, params, inputs: dict, kind="debug", opt_level=3):
    """Run ``mod['main']`` on ``inputs`` (by name) with the interpreter (``"debug"``), the VM
    (``"vm"``) or the graph executor (``"graph"``); returns a list of NumPy outputs."""
    names = [p.name_hint for p in mod["main"].params if p.name_hint not in params]
    args = [inputs[n] for n in names]
    if kind == "debug":
        f = relay.create_executor("debug", mod=mod, params=params).evaluate()
    elif kind == "vm":
        with relay.transform.PassContext(opt_level=opt_level):
            f = relay.create_executor("vm", mod=mod, params=params, target="llvm").evaluate()
    else:
        with relay.transform.PassContext(opt_level=opt_level):
            f = relay.create_executor("graph", mod=mod, params=params, target="llvm").evaluate()
    out = f(*args)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in outs]


def randomize_block(net, seed=0):
    """Give every parameter of a Gluon block random values (BatchNorm variances positive), so
    outputs are of order one and differences show."""
    rng = np.random.default_rng(seed)
    import mxnet as mx

    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith(("running_var", "gamma")):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("running_mean", "beta", "bias")):
            v = rng.uniform(-0.2, 0.2, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            v = rng.uniform(-1, 1, shape) * np.sqrt(3.0 / max(fan_in, 1))
        p.set_data(mx.nd.array(v.astype(np.float32)))


def assert_close(actual, expected, rtol=1e-4, atol=None):
    expected = np.asarray(expected)
    if atol is None:
        atol = rtol * max(float(np.abs(expected).max()) if expected.size else 0.0, 1e-6)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)

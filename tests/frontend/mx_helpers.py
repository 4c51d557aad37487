"""Helpers of the MXNet frontend tests: running a converted module, random Gluon weights."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay


def runner(mod, params, kind="debug", opt_level=3):
    """``mod['main']`` compiled once for the interpreter (``"debug"``), the VM (``"vm"``) or
    the graph executor (``"graph"``): a function of ``{input name: array}`` returning the list
    of NumPy outputs."""
    names = [p.name_hint for p in mod["main"].params if p.name_hint not in params]
    if kind == "debug":
        f = relay.create_executor("debug", mod=mod, params=params).evaluate()
    elif kind == "vm":
        with relay.transform.PassContext(opt_level=opt_level):
            f = relay.create_executor("vm", mod=mod, params=params, target="llvm").evaluate()
    else:
        with relay.transform.PassContext(opt_level=opt_level):
            f = relay.create_executor("graph", mod=mod, params=params, target="llvm").evaluate()

    def run(inputs: dict) -> list:
        out = f(*[inputs[n] for n in names])
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        return [np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in outs]

    return run


def run_mod(mod, params, inputs: dict, kind="debug", opt_level=3):
    """Run ``mod['main']`` on ``inputs`` (by name) with the interpreter (``"debug"``), the VM
    (``"vm"``) or the graph executor (``"graph"``); returns a list of NumPy outputs."""
    return runner(mod, params, kind, opt_level)(inputs)


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


_WORKER_CODE = r"""
import os, pickle, sys
import mxnet as mx
inp, out = sys.stdin.buffer, sys.stdout.buffer
sys.stdout = sys.stderr  # MXNet's messages must not mix with the replies
while True:
    try:
        sym_json, feed = pickle.load(inp)
    except EOFError:
        break
    try:
        sym = mx.sym.load_json(sym_json)
        ex = sym.bind(mx.cpu(), {k: mx.nd.array(v, dtype=v.dtype) for k, v in feed.items()})
        reply = [o.asnumpy() for o in ex.forward()]
    except Exception as e:  # reported to the test
        reply = RuntimeError(f"MXNet failed: {e}")
    pickle.dump(reply, out)
    out.flush()
"""


class MXNetOneDNN:
    """MXNet forward passes in a worker process with oneDNN (MKLDNN) on, MXNet's default CPU
    build. The test process runs MXNet with MKLDNN off (``conftest.py``), and MXNet 1.9.1's
    native CPU ``RNN`` then fails its own input/output count checks for ``lstm`` and for
    ``state_outputs=True``; the oneDNN kernel is the reference for the RNN tests."""

    def __init__(self):
        import os
        import subprocess
        import sys

        env = dict(os.environ, MXNET_MKLDNN_ENABLED="1")
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER_CODE], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def forward(self, sym, feed: dict) -> list:
        """Outputs of ``sym`` (a Symbol or its JSON) bound to ``feed`` (name -> NumPy)."""
        import pickle

        text = sym if isinstance(sym, str) else sym.tojson()
        pickle.dump((text, {k: np.asarray(v) for k, v in feed.items()}), self.proc.stdin)
        self.proc.stdin.flush()
        reply = pickle.load(self.proc.stdout)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)

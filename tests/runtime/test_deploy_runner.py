"""relay_tvm.runtime.deploy (the self-contained runner for exported libraries) on the host."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.runtime.deploy import DeployError, ExportedGraph


def test_scalar_input_stays_a_scalar(tmp_path):
    # np.ascontiguousarray turns a 0-d array into shape (1,); the runner passed that to the
    # library, which expects a scalar
    x = relay.var("x", shape=(3,))
    s = relay.var("s", shape=())
    mod = relay.IRModule.from_expr(relay.Function([x, s], relay.multiply(x, s)))
    path = str(tmp_path / "lib.so")
    relay.build(mod, target="llvm").export_library(path)
    g = ExportedGraph(path)
    out, _ = g.run({"x": np.array([1, 2, 3], "float32"), "s": np.array(2.5, "float32")})
    np.testing.assert_array_equal(out[0], np.array([2.5, 5.0, 7.5], "float32"))
    with pytest.raises(DeployError, match="'s': expected \\(\\) float32, got \\(1,\\)"):
        g.run({"x": np.array([1, 2, 3], "float32"), "s": np.array([2.5], "float32")})

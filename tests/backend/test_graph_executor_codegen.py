"""relay.backend.graph_executor_codegen.GraphExecutorCodegen (0.19's codegen step on its own)
and target errors that are ValueErrors too (0.19 raised ValueError for an unknown option)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.backend.graph_executor_codegen import GraphExecutorCodegen
from relay_tvm.errors import BuildError, InputError


def test_codegen_returns_graph_kernels_and_params():
    x = relay.var("x", shape=(2, 3))
    c = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x + c)))
    opt, _ = relay.optimize(mod, "llvm")
    gjson, lowered, params = GraphExecutorCodegen(None, "llvm").codegen(opt, opt["main"])
    graph = json.loads(gjson)
    ops = [n["op"] for n in graph["nodes"]]
    assert ops.count("null") == 1 + len(params)  # the input and the lifted constant
    kernels = [n for n in graph["nodes"] if n["op"] == "tvm_op"]
    assert len(kernels) == 1  # add and relu fused
    ((target, kmod),) = lowered.items()
    assert target.kind.name == "llvm"
    name = kernels[0]["attrs"]["func_name"]
    assert name in [gv.name_hint for gv in kmod.get_global_vars()]
    (pv,) = params.values()
    np.testing.assert_array_equal(pv.numpy(), np.arange(6, dtype="float32").reshape(2, 3))
    with pytest.raises(BuildError, match="expects a relay Function"):
        GraphExecutorCodegen(None, "llvm").codegen(opt, x)


def test_rejected_target_option_is_a_value_error():
    with pytest.raises(ValueError, match="runtime"):
        tvm.target.Target("c -runtime=c")
    with pytest.raises(InputError):
        relay.backend.make_target("llvm -no-such-option=1")

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


def test_refusal_of_a_while_loop_names_the_let_expression_it_calls():
    # relay_tvm.loops.while_loop is `(let %loop = fn ...; %loop)(...)`: a call of a Let
    from relay_tvm.loops import while_loop

    a = relay.var("a", shape=(4,))
    k = relay.var("k", shape=(), dtype="int32")
    loop = while_loop(lambda i, g: relay.less(i, k),
                      [relay.var("i", shape=(), dtype="int32"), relay.var("g", shape=(4,))],
                      lambda i, g: [i + relay.const(1, "int32"), g * a])
    out = relay.TupleGetItem(loop(relay.const(0, "int32"), a), 1)
    mod = relay.IRModule.from_expr(relay.Function([a, k], out))
    with pytest.raises(BuildError, match=r"got a call of a Let expression \(a local function, "
                                         r"such as a while loop\) \(use the VM"):
        relay.build(mod, target="llvm")

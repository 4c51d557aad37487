"""Inline: calls of Inline=1 global functions replaced by their bodies, through several levels;
external-compiler functions kept as local functions; inlined functions dropped when unused."""

from __future__ import annotations

import numpy as np

import relay_tvm as relay


def _chain_module(compiler=None):
    mod = relay.IRModule()
    a = relay.var("a", shape=(2,))
    leaf = relay.Function([a], relay.multiply(a, a)).with_attr("Inline", 1)
    if compiler:
        leaf = leaf.with_attr("Compiler", compiler)
    g_leaf = relay.GlobalVar("leaf")
    mod[g_leaf] = leaf
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    g_mid = relay.GlobalVar("mid")
    mod[g_mid] = relay.Function([x, y], relay.add(x, g_leaf(y))).with_attr("Inline", 1)
    p, q = relay.var("p", shape=(2,)), relay.var("q", shape=(2,))
    mod["main"] = relay.Function([p, q], relay.subtract(g_mid(p, q), p))
    return mod


def _run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


def test_inline_two_levels_substitutes_arguments_and_drops_the_callees():
    mod = _chain_module()
    out = relay.transform.Inline()(mod)
    assert [gv.name_hint for gv in out.get_global_vars()] == ["main"]
    p, q = relay.var("p", shape=(2,)), relay.var("q", shape=(2,))
    expected = relay.Function([p, q], relay.subtract(relay.add(p, relay.multiply(q, q)), p))
    relay.analysis.assert_graph_equal(out["main"], expected)
    pv, qv = np.array([1.0, 2.0], "float32"), np.array([3.0, -4.0], "float32")
    np.testing.assert_allclose(_run(out, pv, qv), _run(mod, pv, qv))
    np.testing.assert_allclose(_run(out, pv, qv), qv * qv)


def test_external_compiler_function_stays_a_local_function():
    out = relay.transform.Inline()(_chain_module(compiler="ccompiler"))
    assert [gv.name_hint for gv in out.get_global_vars()] == ["main"]
    calls = [n for n in relay.ir.functor.post_order(out["main"])
             if isinstance(n, relay.Call) and isinstance(n.op, relay.Function)]
    assert len(calls) == 1 and calls[0].op.get_attr("Compiler") == "ccompiler"


def test_inline_keeps_an_uncalled_inline_function():
    mod = relay.IRModule()
    x = relay.var("x", shape=(2,))
    mod["helper"] = relay.Function([x], relay.negative(x)).with_attr("Inline", 1)
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], relay.exp(y))
    out = relay.transform.Inline()(mod)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["helper", "main"]

"""0.19's ``relay.build(relay.quantize.quantize(mod, params), params=params)``: the params the
quantizer bound are accepted again when they are the same values (and refused when they
differ); the quantized module is typed."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm.errors import BuildError


def _model():
    x = relay.var("data", shape=(1, 4, 8, 8))
    w = relay.var("weight", shape=(4, 4, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1)))
    return relay.IRModule.from_expr(relay.Function([x, w], y * relay.sigmoid(y)))


def test_build_accepts_the_params_quantize_bound():
    rng = np.random.default_rng(2)
    wv = rng.uniform(-1, 1, (4, 4, 3, 3)).astype("float32")
    xv = rng.uniform(-1, 1, (1, 4, 8, 8)).astype("float32")
    params = {"weight": wv}
    with relay.quantize.qconfig(skip_conv_layers=[], calibrate_mode="global_scale",
                                global_scale=8.0):
        qmod = relay.quantize.quantize(_model(), params)
    # typed: every call has its checked type
    assert qmod["main"].body.checked_type.shape == (1, 4, 8, 8)
    assert [p.name_hint for p in qmod["main"].params] == ["data"]
    lib = relay.build(qmod, "llvm", params=params)
    m = relay.runtime.graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    m.set_input("data", xv)
    m.run()
    got = m.get_output(0).numpy()
    ref = relay.create_executor("debug", mod=qmod).evaluate()(xv).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # the float model's result, to within the int8 quantization error
    y = relay.create_executor("debug", mod=_model()).evaluate()(xv, wv).numpy()
    assert np.abs(got - y).max() < 0.25

    with pytest.raises(BuildError, match="different value"):
        relay.build(qmod, "llvm", params={"weight": wv + 1})
    with pytest.raises(BuildError, match="not parameters of main"):
        relay.build(qmod, "llvm", params={"bias": wv})


def test_quantized_module_round_trips_through_text_and_keeps_the_bound_params():
    """New-user trials: the quantized main's relay_tvm.bound_params attribute (what lets
    relay.build skip the params quantize bound) was printed in main's definition, first as a
    dict the parser read back as a string, then as JSON. It is relay_tvm's bookkeeping, not the
    program: the definition leaves it out, the #[metadata] section keeps it, so the module read
    back still builds with (or without) the same params, gives the same output, and still
    refuses different values."""
    rng = np.random.default_rng(3)
    params = {"weight": rng.uniform(-1, 1, (4, 4, 3, 3)).astype("float32")}
    with relay.quantize.qconfig(calibrate_mode="global_scale", global_scale=8.0):
        qmod = relay.quantize.quantize(_model(), params)
    text = qmod.astext()
    program, meta = text.split("#[metadata]")
    assert "bound_params" not in program and "relay_tvm.bound_params" in meta
    again = relay.fromtext(text)
    assert tvm.ir.structural_equal(again, qmod)
    assert again["main"].attrs["relay_tvm.bound_params"] == qmod["main"].attrs[
        "relay_tvm.bound_params"]
    xv = rng.uniform(-1, 1, (1, 4, 8, 8)).astype("float32")
    outs = []
    for mod, kw in ((qmod, {"params": params}), (again, {"params": params}), (again, {})):
        m = relay.runtime.graph_executor.GraphModule(
            relay.build(mod, "llvm", **kw)["default"](tvm.cpu(0)))
        m.set_input("data", xv)
        m.run()
        outs.append(m.get_output(0).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])
    assert np.abs(outs[0]).max() > 0
    with pytest.raises(BuildError, match="bound into main already .* different value"):
        relay.build(again, "llvm", params={"weight": params["weight"] + 1})


def test_metadata_function_attrs_are_checked():
    """The #[metadata] section's relay_tvm.function_attrs must name defined functions and map
    relay_tvm.* keys to strings; anything else is a parse error that says so."""
    from relay_tvm.errors import ParseError

    base = ('#[version = "0.0.5"]\ndef @main(%x: float32) -> float32 { %x }\n\n#[metadata]\n'
            '{"relay.Constant": [], "relay_tvm.function_attrs": ')
    ok = relay.fromtext(base + '{"main": {"relay_tvm.note": "kept"}}}')
    assert ok["main"].attrs["relay_tvm.note"] == "kept"
    assert "relay_tvm.note" not in ok.astext().split("#[metadata]")[0]
    with pytest.raises(ParseError, match="names @other, which the text does not define"):
        relay.fromtext(base + '{"other": {"relay_tvm.note": "x"}}}')
    with pytest.raises(ParseError, match="must map global function names"):
        relay.fromtext(base + '{"main": {"Primitive": 1}}}')


def test_structural_mismatch_says_where():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    # the first real difference; %x and %y, bound at the same place, are not one
    with pytest.raises(relay.RelayError, match=r"--- first difference ---\nlhs:\n    exp\(%x\)\n"
                                               r"rhs:\n    log\(%y\)$"):
        tvm.ir.assert_structural_equal(relay.Function([x], relay.exp(x)),
                                       relay.Function([y], relay.log(y)))
    # a difference outside expressions (the module's functions) falls back to a text diff
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    with pytest.raises(relay.RelayError, match=r"where the texts differ ---\n"):
        tvm.ir.assert_structural_equal(mod, relay.IRModule())

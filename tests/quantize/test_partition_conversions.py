"""qconfig(partition_conversions=...): the quantized module split into input quantization,
integer core and output dequantization computes what the unsplit one does, and
"fully_integral" refuses a core or ends that are not integer-only / conversions-only."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.analysis import all_dtypes
from relay_tvm.errors import NotFullyIntegralError, RelayError
from relay_tvm.quantize._partition_conversions import CONVERSION_OPS
from relay_tvm.transform._rewrite import called_ops

_CONV = '''
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), float32],
          %w2: Tensor[(4, 4, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, %w2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3])
}'''


def _params(rng):
    return {k: rng.uniform(-0.2, 0.2, (4, 4, 3, 3)).astype("float32") for k in ("w1", "w2")}


def _quantize(mode, params, skip=()):
    with relay.quantize.qconfig(skip_conv_layers=list(skip), partition_conversions=mode):
        return relay.quantize.quantize(relay.parse(_CONV), params)


def _run(mod, x):
    return relay.create_executor("debug", mod=mod).evaluate()(x).numpy()


@pytest.mark.parametrize("mode", ["enabled", "fully_integral"])
def test_partitioned_module_computes_the_same_values(mode):
    rng = np.random.default_rng(4)
    params = _params(rng)
    plain = _quantize("disabled", params)
    parts = _quantize(mode, params)
    names = {gv.name_hint for gv in parts.get_global_vars()}
    assert names == {"main", "quantize_inputs", "quantized_main", "dequantize_outputs"}
    assert len(plain.get_global_vars()) == 1
    for end in ("quantize_inputs", "dequantize_outputs"):
        assert called_ops(parts[end]) <= CONVERSION_OPS
    assert not any(d.startswith("float") for d in all_dtypes(parts["quantized_main"]))
    x = rng.uniform(-1, 1, (1, 4, 8, 8)).astype("float32")
    got = _run(parts, x)
    np.testing.assert_array_equal(got, _run(plain, x))
    # and both are the float program within the quantization error of two 8-bit layers
    f = relay.create_executor("debug", mod=relay.parse(_CONV)).evaluate()
    ref = f(x, params["w1"], params["w2"]).numpy()
    assert np.abs(got - ref).max() < 0.1 * np.abs(ref).max()


def test_fully_integral_refuses_a_float_layer_and_enabled_keeps_it():
    rng = np.random.default_rng(5)
    params = _params(rng)
    with pytest.raises(NotFullyIntegralError, match="fully_integral") as err:
        _quantize("fully_integral", params, skip=[1])
    assert isinstance(err.value, AssertionError)  # what 0.19 raised
    # a float layer inside the core: the message names its operator and the knob (a fresh-user
    # trial got only "uses float32")
    with pytest.raises(NotFullyIntegralError, match=r"uses float32 \(in nn.conv2d, .*"
                                                    r"skip_conv_layers=\[0\]"):
        _quantize("fully_integral", params, skip=[0])
    parts = _quantize("enabled", params, skip=[1])
    plain = _quantize("disabled", params, skip=[1])
    x = rng.uniform(-1, 1, (1, 4, 8, 8)).astype("float32")
    np.testing.assert_array_equal(_run(parts, x), _run(plain, x))
    # the float convolution is in the output part, after the integer core
    assert "nn.conv2d" in called_ops(parts["dequantize_outputs"])


def test_partition_conversions_choices_are_checked():
    with pytest.raises(RelayError, match="partition_conversions"):
        relay.quantize.qconfig(partition_conversions="yes")


def _graph(mod, x, **build_kw):
    import tvm

    lib = relay.build(mod, target="llvm", **build_kw)
    g = relay.runtime.GraphModule(lib["default"](tvm.cpu()))
    g.set_input("x", x)
    g.run()
    return g.get_output(0).numpy()


def test_relay_build_runs_the_partitioned_module_as_the_vm_does():
    """relay.build refused the partitioned module (main calls the global functions
    @quantize_inputs, @quantized_main, @dequantize_outputs; new-user trial): build inlines
    them, and the graph executor gives the VM's values and the unpartitioned module's."""
    rng = np.random.default_rng(6)
    params = _params(rng)
    parts = _quantize("enabled", params)
    plain = _quantize("disabled", params)
    x = rng.uniform(-1, 1, (1, 4, 8, 8)).astype("float32")
    got = _graph(parts, x)
    vm = relay.create_executor("vm", mod=parts, target="llvm").evaluate()(x).numpy()
    np.testing.assert_array_equal(got, vm)
    np.testing.assert_array_equal(got, _graph(plain, x))
    np.testing.assert_array_equal(got, _run(plain, x))
    assert np.abs(got).max() > 0.1  # not a vacuous all-zero output
    # the 0.19 idiom with the params quantize bound, and create_executor("graph")
    np.testing.assert_array_equal(_graph(parts, x, params=params), got)
    graph = relay.create_executor("graph", mod=parts, target="llvm").evaluate()
    np.testing.assert_array_equal(graph(x).numpy(), got)
    # the module itself is unchanged (build works on a copy)
    names = {gv.name_hint for gv in parts.get_global_vars()}
    assert names == {"main", "quantize_inputs", "quantized_main", "dequantize_outputs"}


def test_printed_main_keeps_the_bound_params_bookkeeping_out():
    """quantize records the params it bound in main's attribute relay_tvm.bound_params (for
    relay.build(qmod, params=params)); printing main or the module showed it. It stays on the
    function and out of the program text; a module's #[metadata] section keeps it, so a text
    round trip is structurally equal and still has it."""
    rng = np.random.default_rng(7)
    params = _params(rng)
    for mode in ("enabled", "disabled"):
        qmod = _quantize(mode, params)
        assert qmod["main"].get_attr("relay_tvm.bound_params") is not None
        for text in (str(qmod["main"]), qmod.astext().split("#[metadata]")[0],
                     relay.astext(qmod["main"])):
            assert "bound_params" not in text and "relay_tvm." not in text, text
        assert str(qmod["main"]).startswith('#[version = "0.0.5"]\nfn (%x: Tensor[(1, 4, 8, 8), '
                                            'float32]) -> Tensor[(1, 4, 8, 8), float32] {\n')
        assert "def @main(%x: Tensor[(1, 4, 8, 8), float32]) -> Tensor[(1, 4, 8, 8), " \
               "float32] {\n" in qmod.astext()
        back = relay.parse(qmod.astext())
        assert relay.analysis.structural_equal(back, qmod)
        assert back["main"].get_attr("relay_tvm.bound_params") == \
            qmod["main"].get_attr("relay_tvm.bound_params")
    # other function attributes are still printed
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], x).with_attr("Composite", "c").with_attr("relay_tvm.k", "1")
    assert 'Composite="c"' in str(f) and "relay_tvm.k" not in str(f)

"""Symbol JSON parsing, the unsupported-operator report, parameter errors and spans — on
hand-written symbol JSON, without MXNet."""

import json

import numpy as np
import pytest
from mx_helpers import run_mod

import relay_tvm as relay
from relay_tvm.errors import ConversionError, OpNotImplemented
from relay_tvm.frontend.mxnet_params import save_ndarray_file


def _var(name):
    return {"op": "null", "name": name, "inputs": []}


def _graph(nodes, heads=None):
    return {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
            "heads": heads or [[len(nodes) - 1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}


def _conv_fc():
    return _graph([
        _var("data"), _var("conv_weight"), _var("conv_bias"),
        {"op": "Convolution", "name": "conv", "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
         "attrs": {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)"}},
        {"op": "Activation", "name": "relu", "inputs": [[3, 0, 0]], "attrs": {"act_type": "relu"}},
        _var("fc_weight"), _var("fc_bias"),
        {"op": "FullyConnected", "name": "fc", "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]],
         "attrs": {"num_hidden": "3"}},
    ])


def _conv_fc_params(rng):
    return {"arg:conv_weight": rng.standard_normal((4, 2, 3, 3)).astype("float32"),
            "arg:conv_bias": rng.standard_normal(4).astype("float32"),
            "arg:fc_weight": rng.standard_normal((3, 4 * 5 * 5)).astype("float32"),
            "arg:fc_bias": rng.standard_normal(3).astype("float32")}


def _numpy_conv_fc(x, p):
    w, b = p["arg:conv_weight"], p["arg:conv_bias"]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((x.shape[0], 4, 5, 5), "float64")
    for i in range(5):
        for j in range(5):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i + 3, j:j + 3], w)
    out = np.maximum(out + b[None, :, None, None], 0)
    return out.reshape(x.shape[0], -1) @ p["arg:fc_weight"].T + p["arg:fc_bias"]


@pytest.mark.parametrize("as_path", [True, False])
def test_files_without_mxnet(tmp_path, as_path):
    rng = np.random.default_rng(0)
    params = _conv_fc_params(rng)
    sym_path = tmp_path / "m-symbol.json"
    sym_path.write_text(json.dumps(_conv_fc()))
    par_path = tmp_path / "m-0000.params"
    save_ndarray_file(par_path, params)
    sym = str(sym_path) if as_path else sym_path.read_text()
    mod, p = relay.frontend.from_mxnet(sym, shape={"data": (2, 2, 5, 5)},
                                       arg_params=str(par_path))
    assert set(p) == {"conv_weight", "conv_bias", "fc_weight", "fc_bias"}
    x = rng.standard_normal((2, 2, 5, 5)).astype("float32")
    got = run_mod(mod, p, {"data": x})[0]
    np.testing.assert_allclose(got, _numpy_conv_fc(x, params), rtol=1e-4, atol=1e-4)


def test_spans_carry_node_names():
    mod, _ = relay.frontend.from_mxnet(json.dumps(_conv_fc()), shape={
        "data": (1, 2, 5, 5), "conv_weight": (4, 2, 3, 3), "conv_bias": (4,),
        "fc_weight": (3, 100), "fc_bias": (3,)})
    names = set()
    relay.analysis.post_order_visit(
        mod["main"].body, lambda e: names.add(e.span.source_name) if getattr(e, "span", None)
        else None)
    assert {"conv", "relu", "fc"} <= names
    body = mod["main"].body
    assert body.span.source_name == "fc"
    for p in mod["main"].params:
        assert p.span.source_name == p.name_hint


def test_unsupported_operators_listed_with_counts():
    g = _graph([
        _var("data"),
        {"op": "_contrib_quantized_ring_buffer", "name": "q0", "inputs": [[0, 0, 0]]},
        {"op": "_foo_op", "name": "f0", "inputs": [[1, 0, 0]]},
        {"op": "_contrib_quantized_ring_buffer", "name": "q1", "inputs": [[2, 0, 0]]},
        {"op": "relu", "name": "r", "inputs": [[3, 0, 0]]},
        {"op": "_bar_op", "name": "b0", "inputs": [[4, 0, 0]]},
    ])
    with pytest.raises(OpNotImplemented,
                       match=r"_contrib_quantized_ring_buffer \(2: nodes 'q0', 'q1'\).*"
                             r"_foo_op \(1: node 'f0'\).*_bar_op \(1: node 'b0'\)"):
        relay.frontend.from_mxnet(g, shape={"data": (1, 2)})


@pytest.mark.parametrize("text, match", [
    ("{not json", "malformed MXNet symbol JSON"),
    ('{"nodes": [{"op": "null"', r"malformed MXNet symbol JSON: Expecting ',' delimiter at line 1 "
     r"column 25 \(the text ends there: a truncated file\?\)$"),
    # json's own message ends in "starting at" (new-user trial: "starting at at line 808")
    ('{"nodes": [{"op": "null", "name": "fc1_wei',
     r"malformed MXNet symbol JSON: Unterminated string starting at line 1 column 35 \(the "
     r"text ends inside it: a truncated file\?\)$"),
    ("[1, 2]", "must be an object"),
    ('{"heads": [[0, 0, 0]]}', 'no "nodes" list'),
    ('{"nodes": {}, "heads": [[0, 0, 0]]}', 'no "nodes" list'),
    ('{"nodes": [], "heads": []}', r'has an empty "nodes" list \(a graph needs at least one'),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}]}', 'no "heads" list'),
    ('{"nodes": [{"op": "null", "inputs": []}], "heads": [[0,0,0]]}',
     "missing or non-string 'name'"),
    ('{"nodes": [{"op": "relu", "name": "r", "inputs": [[3, 0, 0]]}], "heads": [[0,0,0]]}',
     r"node 0 \('r', relu\) input 0: refers to node 3"),
    ('{"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[5,0,0]]}',
     "head 0: refers to node 5"),
])
def test_malformed_json(text, match):
    with pytest.raises(ConversionError, match=match):
        relay.frontend.from_mxnet(text, shape={"x": (1,)})


def test_missing_symbol_file(tmp_path):
    with pytest.raises(ConversionError, match="cannot read the MXNet symbol file"):
        relay.frontend.from_mxnet(str(tmp_path / "none-symbol.json"), shape={"data": (1,)})


def test_binary_file_as_symbol(tmp_path):
    """A .params file (binary) given as the symbol: a ConversionError naming it, for a path and
    for bytes (was a UnicodeDecodeError from the JSON reader)."""
    f = tmp_path / "m-0000.params"
    f.write_bytes(b"\x12\x01\x00\x00\x00\x00\x00\x00\x89\xff" * 8)
    with pytest.raises(ConversionError, match=r"m-0000.params' is binary, not JSON text"):
        relay.frontend.from_mxnet(str(f), shape={"data": (1,)})
    with pytest.raises(ConversionError, match="is not UTF-8 JSON text"):
        relay.frontend.from_mxnet(f.read_bytes(), shape={"data": (1,)})


def test_missing_parameter(tmp_path):
    params = _conv_fc_params(np.random.default_rng(0))
    del params["arg:fc_bias"]
    with pytest.raises(ConversionError, match=r"variable 'fc_bias' \(node 6\) has no value"):
        relay.frontend.from_mxnet(_conv_fc(), shape={"data": (1, 2, 5, 5)}, arg_params=params)


@pytest.mark.parametrize("name, shape, match", [
    ("arg:conv_weight", (4, 3, 3, 3), r"parameter 'conv_weight' \(the weight of Convolution node "
                                      r"'conv'\) has shape \(4, 3, 3, 3\), but the graph needs "
                                      r"\(4, 2, 3, 3\)"),
    # from the layer's attributes, not the input shape: said so
    ("arg:conv_bias", (5,), r"parameter 'conv_bias'.*attributes \(num_filter=4\) need \(4,\)"),
    ("arg:fc_weight", (3, 99), r"parameter 'fc_weight'.*FullyConnected node 'fc'.*\(3, 100\)"),
])
def test_parameter_shape_mismatch(name, shape, match):
    params = _conv_fc_params(np.random.default_rng(0))
    params[name] = np.zeros(shape, "float32")
    with pytest.raises(ConversionError, match=match):
        relay.frontend.from_mxnet(_conv_fc(), shape={"data": (1, 2, 5, 5)}, arg_params=params)


def test_corrupt_params_file(tmp_path):
    path = tmp_path / "m-0000.params"
    save_ndarray_file(path, _conv_fc_params(np.random.default_rng(0)))
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(ConversionError, match="m-0000.params.*truncated"):
        relay.frontend.from_mxnet(_conv_fc(), shape={"data": (1, 2, 5, 5)},
                                  arg_params=str(path))


def test_bad_attribute_names_node():
    g = _graph([_var("data"), {"op": "Pooling", "name": "pool7", "inputs": [[0, 0, 0]],
                               "attrs": {"kernel": "(two, 2)", "pool_type": "max"}}])
    with pytest.raises(ConversionError, match=r"Pooling node 'pool7': attribute kernel="):
        relay.frontend.from_mxnet(g, shape={"data": (1, 1, 4, 4)})


def test_unknown_shape_name():
    with pytest.raises(ConversionError, match=r"shape given for 'date', but the graph has no "
                       r"input of that name; did you mean 'data'\?"):
        relay.frontend.from_mxnet(_conv_fc(), shape={"date": (1, 2, 5, 5)})


def test_dtype_per_input():
    g = _graph([_var("a"), _var("b"), {"op": "Cast", "name": "c", "inputs": [[1, 0, 0]],
                                       "attrs": {"dtype": "float32"}},
                {"op": "elemwise_add", "name": "add", "inputs": [[0, 0, 0], [2, 0, 0]]}])
    mod, _ = relay.frontend.from_mxnet(g, shape={"a": (2,), "b": (2,)},
                                       dtype={"a": "float32", "b": "int32"})
    a, b = mod["main"].params
    assert a.type_annotation.dtype == "float32" and b.type_annotation.dtype == "int32"
    got = run_mod(mod, {}, {"a": np.array([0.5, 1.5], "float32"), "b": np.array([1, 2], "int32")})
    np.testing.assert_array_equal(got[0], [1.5, 3.5])


def test_legacy_attr_layout_and_reshape_codes():
    # MXNet < 1.0 wrote "param"/"attr" instead of "attrs"
    g = _graph([_var("x"), {"op": "Reshape", "name": "r", "inputs": [[0, 0]],
                            "param": {"shape": "(-3, -2)"}}])
    mod, _ = relay.frontend.from_mxnet(g, shape={"x": (2, 3, 4)})
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    np.testing.assert_array_equal(run_mod(mod, {}, {"x": x})[0], x.reshape(6, 4))


@pytest.mark.parametrize("n", [1, 3, 6])
def test_ring_buffer(n):
    # TVM 0.5's streaming op (not in stock MXNet): keep the newest entries of buffer ++ data
    g = _graph([_var("data"), _var("buf"), {"op": "ring_buffer", "name": "rb",
                                             "inputs": [[0, 0, 0], [1, 0, 0]],
                                             "attrs": {"axis": "1"}}])
    mod, _ = relay.frontend.from_mxnet(g, shape={"data": (2, n, 3), "buf": (2, 4, 3)})
    rng = np.random.default_rng(0)
    d, b = rng.standard_normal((2, n, 3)), rng.standard_normal((2, 4, 3))
    got = run_mod(mod, {}, {"data": d.astype("float32"), "buf": b.astype("float32")})[0]
    np.testing.assert_allclose(got, np.concatenate([b, d], 1)[:, -4:], rtol=1e-6)


def test_operator_list_covered():
    """Every operator name of the last Relay-era importer converts, or is a listed exclusion
    (two quantized ops)."""
    import pathlib

    from relay_tvm.frontend.mxnet import CONVERTERS, EXCLUDED

    names = (pathlib.Path(__file__).parent / "mxnet_operator_names.txt").read_text().split()
    assert [n for n in names if n not in CONVERTERS and n not in EXCLUDED] == []
    assert len([n for n in names if n in EXCLUDED]) == 2  # 2 quantized ops


def test_deep_graph_imports_linearly():
    """A 10,000-node chain (scalar ops query their input's dtype on the way) converts without
    recursion and without re-inferring the whole prefix at each node."""
    n = 10000
    nodes = [_var("x")]
    for i in range(n):
        op = "relu" if i % 2 else "_plus_scalar"
        nodes.append({"op": op, "name": f"n{i}", "inputs": [[i, 0, 0]],
                      "attrs": {"scalar": "1.0"} if op != "relu" else {}})
    mod, _ = relay.frontend.from_mxnet(_graph(nodes), shape={"x": (2,)})
    assert mod["main"].body.span.source_name == f"n{n - 1}"
    got = run_mod(mod, {}, {"x": np.array([-1e9, 0.5], "float32")})[0]
    np.testing.assert_allclose(got, [n // 2 - 1, 0.5 + n // 2])  # the first +1 meets relu


def test_wrong_input_rank_names_the_failing_node():
    # the error surfaces when a later node asks for a type; it must name the convolution
    with pytest.raises(ConversionError, match=r"node 'conv' \(found while converting") as info:
        relay.frontend.from_mxnet(json.dumps(_conv_fc()), shape={"data": (2, 2, 5)})
    assert "nn.conv2d: data must be 4-d" in str(info.value)


def test_convolution_num_group_must_divide_the_channels():
    # 16 input channels, num_group=3: named as such (not as a weight of 16 // 3 channels)
    sym = {"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "w", "inputs": []},
        {"op": "Convolution", "name": "conv", "inputs": [[0, 0, 0], [1, 0, 0]],
         "attrs": {"kernel": "(1, 1)", "num_filter": "30", "num_group": "3", "no_bias": "True"}},
    ], "arg_nodes": [0, 1], "heads": [[2, 0, 0]]}
    with pytest.raises(ConversionError, match=r"num_group=3 must be >= 1 and divide both the 16 "
                                              r"input channels"):
        relay.frontend.from_mxnet(json.dumps(sym), shape={"data": (1, 16, 4, 4)})


def test_missing_input_shape_says_to_pass_shape():
    """From the new-user trial: from_mxnet(sym) without shape= said only "could not infer the
    type of %data"; it now says which inputs have no shape and what to pass."""
    import mxnet as mx
    d = mx.sym.var("data")
    for sym in (mx.sym.relu(d), mx.sym.FullyConnected(d, num_hidden=3, name="fc")):
        with pytest.raises(ConversionError, match=r"input\(s\) \['data'.*have no shape: pass "
                                                  r"shape=\{'data': \(...\)\}"):
            relay.frontend.from_mxnet(sym)

"""MXNet's quantized operators and MKLDNN-quantized Gluon networks against MXNet 1.9.1.

MXNet computes the references in a separate process with MKLDNN on (see
``mx_quantized_ref.py``); relay_tvm converts the exported symbol JSON and parameters.
Per-operator results must be bit-exact. Whole networks: the first layers are bit-exact, then
rare one-quantum differences (MKLDNN rounds float32 products half to even; a value that lands
within float32 error of a rounding boundary can go either way) propagate; the tolerance on the
float logits is 5% of their largest magnitude, with the same argmax.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from mx_helpers import run_mod

import relay_tvm as relay
from relay_tvm.errors import ConversionError

pytest.importorskip("mxnet", reason="MXNet 1.9.1 is the reference for the quantized importer")
pytestmark = pytest.mark.mxnet

HERE = os.path.dirname(__file__)


def _make_refs(out_dir, *flags):
    env = dict(os.environ, MXNET_MKLDNN_ENABLED="1")
    res = subprocess.run([sys.executable, os.path.join(HERE, "mx_quantized_ref.py"),
                          str(out_dir), *flags], env=env, capture_output=True, text=True,
                         timeout=1200)
    assert res.returncode == 0, res.stderr[-3000:]
    return str(out_dir)


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    return _make_refs(tmp_path_factory.mktemp("mxq"))


def _load(d, name):
    z = np.load(os.path.join(d, f"{name}.npz"))
    ins = {k[3:]: z[k] for k in z.files if k.startswith("in:")}
    params = {k[4:]: z[k] for k in z.files if k.startswith("arg:")}
    n = len([k for k in z.files if k.startswith("out:")])
    return ins, params, [z[f"out:{i}"] for i in range(n)], z


def _convert(d, name, ins, params):
    return relay.frontend.from_mxnet(
        os.path.join(d, f"{name}-symbol.json"), shape={k: v.shape for k, v in ins.items()},
        dtype={k: str(v.dtype) for k, v in ins.items()}, arg_params=params or None)


OPS = ["quantize_v2_auto", "quantize_v2_int8", "quantize_v1", "dequantize_int8", "requantize",
       "quantized_act_flatten", "quantized_pooling", "quantized_elemwise_add",
       "quantized_concat", "quantized_conv", "quantized_fully_connected"]


@pytest.mark.parametrize("name", OPS)
def test_quantized_operator_bit_exact(refs, name):
    ins, params, outs, _ = _load(refs, name)
    mod, p = _convert(refs, name, ins, params)
    got = run_mod(mod, p, ins)
    assert len(got) == len(outs)
    for i, (g, o) in enumerate(zip(got, outs)):
        assert g.dtype == o.dtype and g.shape == o.shape, (name, i, g.dtype, o.dtype)
        np.testing.assert_array_equal(g, o, err_msg=f"{name} output {i}")


def test_quantized_operators_compiled(refs):
    # the compiled path of a few converted graphs equals MXNet too
    for name in ("quantize_v2_int8", "quantized_concat", "quantized_conv"):
        ins, params, outs, _ = _load(refs, name)
        mod, p = _convert(refs, name, ins, params)
        got = run_mod(mod, p, ins, kind="graph")
        for g, o in zip(got, outs):
            np.testing.assert_array_equal(g, o, err_msg=name)


def _check_net(d, name, compiled):
    ins, _, outs, _ = _load(d, name)
    mod, params = relay.frontend.from_mxnet(
        os.path.join(d, f"{name}-symbol.json"), shape={"data": ins["data"].shape},
        arg_params=os.path.join(d, f"{name}-0000.params"))
    ref = outs[0]
    (got,) = run_mod(mod, params, ins)
    tol = 0.05 * np.abs(ref).max()
    assert np.abs(got - ref).max() <= tol, (np.abs(got - ref).max(), tol)
    assert got.reshape(got.shape[0], -1).argmax(1).tolist() == \
        ref.reshape(ref.shape[0], -1).argmax(1).tolist()
    if compiled:
        (gc,) = run_mod(mod, params, ins, kind="graph")
        np.testing.assert_array_equal(gc, got)  # the compiled integer code is exact
    return mod


def test_small_quantized_net(refs):
    mod = _check_net(refs, "small_net", compiled=True)
    text = str(mod)
    assert "qnn.conv2d" in text and "qnn.dense" in text and "qnn.quantize" in text


def test_quantized_resnet18_32px(refs):
    # resnet18_v1 (random weights), quantize_net with naive calibration, 1x3x32x32; the
    # compiled path is checked on the small net here (and on ResNet-18 in the sweep)
    _check_net(refs, "resnet18_v1_32", compiled=False)


def test_mkldnn_fused_float_subgraphs(refs):
    # MKLDNN's float fusion: _sg_mkldnn_conv (BN, ReLU, sum) and _sg_mkldnn_fully_connected
    text = open(os.path.join(refs, "small_net_fused_float-symbol.json")).read()
    assert "_sg_mkldnn_conv" in text and "with_sum" in text
    ins, _, outs, _ = _load(refs, "small_net_fused_float")
    mod, params = relay.frontend.from_mxnet(
        os.path.join(refs, "small_net_fused_float-symbol.json"),
        shape={"data": ins["data"].shape},
        arg_params=os.path.join(refs, "small_net_fused_float-0000.params"))
    (got,) = run_mod(mod, params, ins)
    np.testing.assert_allclose(got, outs[0], rtol=1e-4, atol=1e-4 * np.abs(outs[0]).max())


@pytest.mark.sweep
def test_quantized_resnet18_224px(tmp_path):
    d = _make_refs(tmp_path, "--sweep")
    _check_net(d, "resnet18_v1_224", compiled=True)


def test_uncalibrated_quantize_is_refused():
    import json

    graph = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                       {"op": "_contrib_quantize_v2", "name": "q", "inputs": [[0, 0, 0]],
                        "attrs": {"out_type": "int8"}}],
             "arg_nodes": [0], "heads": [[1, 0, 0]]}
    with pytest.raises(ConversionError, match="min_calib_range"):
        relay.frontend.from_mxnet(json.dumps(graph), shape={"data": (2, 3)})

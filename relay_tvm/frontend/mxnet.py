"""The MXNet frontend: ``from_mxnet`` converts an MXNet model to a Relay module.

It accepts an ``mx.sym.Symbol``, a Gluon ``HybridBlock`` (parameters are taken from the block), or
exported files read WITHOUT MXNet: the symbol as a ``-symbol.json`` path or JSON text, and the
parameters as a ``.params`` path (both its ``arg:`` and ``aux:`` entries) or dicts of arrays.
Operator semantics follow MXNet 1.9.1. Every converted expression carries the MXNet node name
in its span.
"""

from __future__ import annotations

import os

from ..errors import ConversionError
from ._mx_nn import NN_CONVERTERS
from ._mx_shape import SHAPE_CONVERTERS
from ._mx_tensor import TENSOR_CONVERTERS
from ._mx_util import outputs_of
from .common import report_unsupported, to_numpy
from .graph_converter import _dtype_of, convert_graph
from .mxnet_json import parse_graph
from .mxnet_params import load_ndarray_file, split_arg_aux

CONVERTERS = {**TENSOR_CONVERTERS, **SHAPE_CONVERTERS, **NN_CONVERTERS}

# Operators of the last Relay-era importer that are deliberately left out (a later issue).
EXCLUDED = {
    **{n: "detection/vision contrib op" for n in (
        "_contrib_MultiBoxDetection", "_contrib_MultiBoxPrior", "_contrib_MultiProposal",
        "_contrib_Proposal", "_contrib_ROIAlign", "_contrib_box_decode", "_contrib_box_nms",
        "ROIPooling", "Correlation", "_contrib_DeformableConvolution")},
    **{n: "quantized op" for n in (
        "_contrib_quantize_v2", "_contrib_dequantize", "_contrib_quantized_act",
        "_contrib_quantized_batch_norm", "_contrib_quantized_concat",
        "_contrib_quantized_flatten", "_contrib_quantized_pooling",
        "_contrib_quantized_ring_buffer", "_sg_mkldnn_conv", "_sg_mkldnn_fully_connected")},
    "RNN": "recurrent layers are not supported yet",
    "_cond": "control flow is not supported yet",
}


def _is_mx_symbol(obj) -> bool:
    return type(obj).__module__.startswith("mxnet") and hasattr(obj, "tojson")


def _is_gluon_block(obj) -> bool:
    return hasattr(obj, "collect_params") and any(
        c.__module__.startswith("mxnet.gluon") for c in type(obj).__mro__)


def _block_to_symbol(block, shape, dtype):
    """Trace a Gluon HybridBlock into a symbol; return (json, params) with its parameters."""
    import mxnet as mx

    if not shape:
        raise ConversionError("from_mxnet(HybridBlock): pass shape={input name: shape}")
    names = list(shape)
    try:
        block.collect_params()[next(iter(block.collect_params()))].data()
    except StopIteration:
        pass
    except Exception:  # deferred initialization: run once to materialize the parameters
        args = [mx.nd.zeros(shape[n], dtype=_dtype_of(dtype, n)) for n in names]
        block(*args)
    syms = [mx.sym.var(n) for n in names]
    out = block(*syms)
    if isinstance(out, (list, tuple)):
        out = mx.sym.Group(list(out))
    params = {}
    for k, p in block.collect_params().items():
        params[p.name if hasattr(p, "name") else k] = p.data().asnumpy()
    return out.tojson(), params


def _load_params(value, what):
    """``arg_params`` / ``aux_params`` as a dict name -> np.ndarray (a path loads both kinds)."""
    if value is None:
        return {}
    if isinstance(value, (str, os.PathLike)):
        arg, aux = split_arg_aux(load_ndarray_file(value), os.fspath(value))
        return {**arg, **aux}
    if not isinstance(value, dict):
        raise ConversionError(f"{what}: expected a dict of arrays or a .params path, "
                              f"got {type(value).__name__}")
    out = {}
    for k, v in value.items():
        name = k[4:] if isinstance(k, str) and k[:4] in ("arg:", "aux:") else k
        out[name] = to_numpy(v, name)
    return out


def from_mxnet(symbol, shape=None, dtype="float32", arg_params=None, aux_params=None):
    """Convert an MXNet model to a Relay module.

    Args:
        symbol: an ``mx.sym.Symbol``; a Gluon ``HybridBlock`` (hybridized or not; its parameters
            are used and ``arg_params``/``aux_params`` are ignored); a path to a
            ``-symbol.json`` file; the symbol JSON text; or the parsed JSON dict.
        shape: ``{input name: shape}`` of the data inputs (NCHW image data, say
            ``{"data": (1, 3, 224, 224)}``). Every variable that is not a parameter needs one.
        dtype: the input dtype, or ``{input name: dtype}`` (default ``"float32"``).
        arg_params: ``{name: array}`` (MXNet NDArray, NumPy, tvm Tensor; ``arg:`` prefixes are
            dropped) or a path to a ``.params`` file, whose ``arg:`` and ``aux:`` entries are
            both used.
        aux_params: the same for auxiliary states (BatchNorm moving mean/var).

    Returns:
        ``(mod, params)``: an :class:`IRModule` whose ``main`` takes the inputs then the
        parameters (named as in MXNet), typed; and ``{name: array}`` of the parameters it uses.

    Raises:
        UnsupportedOperatorError: the graph uses operators without converter (all are listed
            with their counts, before anything is converted).
        ConversionError: malformed JSON, a missing parameter, a parameter whose shape does not
            match the graph, a corrupt ``.params`` file, a bad attribute (names the node or
            parameter).
    """
    shape = dict(shape or {})
    if _is_mx_symbol(symbol):
        graph_src = symbol.tojson()
    elif _is_gluon_block(symbol) and not isinstance(symbol, (str, dict, bytes)):
        graph_src, block_params = _block_to_symbol(symbol, shape, dtype)
        arg_params, aux_params = block_params, None
    else:
        graph_src = symbol
    graph = parse_graph(graph_src, "MXNet symbol")
    from .nnvm import CONVERTERS as NNVM_CONVERTERS

    report_unsupported(
        [n.op for n in graph.nodes if n.op != "null"], CONVERTERS, "MXNet", EXCLUDED,
        (NNVM_CONVERTERS, "This looks like an NNVM graph: use relay.frontend.from_nnvm "
         "(relay-tvm --format nnvm)"))
    params_given = arg_params is not None or aux_params is not None
    params = {**_load_params(arg_params, "arg_params"), **_load_params(aux_params, "aux_params")}
    mod, used = convert_graph(graph, shape, dtype, params, params_given, CONVERTERS, "MXNet")
    return mod, used


__all__ = ["from_mxnet", "CONVERTERS", "EXCLUDED", "convert_graph", "outputs_of"]

"""The MXNet frontend: ``from_mxnet`` converts an MXNet model to a Relay module.

It accepts an ``mx.sym.Symbol``, a Gluon ``HybridBlock`` (parameters are taken from the block), or
exported files read WITHOUT MXNet: the symbol as a ``-symbol.json`` path or JSON text, and the
parameters as a ``.params`` path (both its ``arg:`` and ``aux:`` entries) or dicts of arrays.
Operator semantics follow MXNet 1.9.1. Every converted expression carries the MXNet node name
in its span.
"""

from __future__ import annotations

import os


from ..errors import ConversionError, RelayError, UnsupportedOperatorError
from ..ir.base import Span, check_dtype
from ..ir.expr import Function, Tuple, Var
from ..ir.module import IRModule
from ..ir.types import TensorType
from ._mx_nn import NN_CONVERTERS
from ._mx_quantized import QUANTIZED_CONVERTERS
from ._mx_shape import SHAPE_CONVERTERS
from ._mx_tensor import TENSOR_CONVERTERS
from ._mx_util import Ctx, outputs_of
from ._mx_vision import VISION_CONVERTERS
from .common import StrAttrs, as_param, report_unsupported, set_spans, to_numpy
from .mxnet_json import parse_graph
from .mxnet_params import load_ndarray_file, split_arg_aux

CONVERTERS = {**TENSOR_CONVERTERS, **SHAPE_CONVERTERS, **NN_CONVERTERS, **QUANTIZED_CONVERTERS,
              **VISION_CONVERTERS}

# Operators of the last Relay-era importer that are deliberately left out (a later issue).
EXCLUDED = {
    **{n: "quantized op" for n in (
        "_contrib_quantized_batch_norm", "_contrib_quantized_ring_buffer")},
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


def _dtype_of(dtype, name):
    if isinstance(dtype, dict):
        return dtype.get(name, "float32")
    return dtype


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


def _var_shape_attr(node):
    s = node.var_attrs.get("__shape__")
    if not s:
        return None
    try:
        shp = StrAttrs({"s": s}, "null", node.name).get_tuple("s")
    except ConversionError:
        return None
    return shp if shp and all(d > 0 for d in shp) else None


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


def convert_graph(graph, shape, dtype, params, params_given, converters, frontend,
                  attr_hook=None):
    """Convert a parsed symbol graph (shared by the MXNet and NNVM frontends)."""
    var_names = [n.name for n in graph.nodes if n.op == "null"]
    unknown = [k for k in shape if k not in var_names]
    if unknown:
        raise ConversionError(
            f"shape given for {unknown}, but the graph has no such input (its variables: "
            f"{var_names[:20]}{' ...' if len(var_names) > 20 else ''})")
    if isinstance(dtype, dict):
        bad = [k for k in dtype if k not in var_names]
        if bad:
            raise ConversionError(f"dtype given for {bad}, but the graph has no such input")
    table = {}
    inputs, param_vars, used = [], [], {}
    for node in graph.nodes:
        if node.op != "null":
            continue
        span = Span(node.name)
        if node.name in shape:
            try:
                shp = tuple(int(d) for d in shape[node.name])
            except (TypeError, ValueError):
                raise ConversionError(
                    f"shape of input {node.name!r}: expected a tuple of ints, got "
                    f"{shape[node.name]!r}") from None
            dt = check_dtype(_dtype_of(dtype, node.name), f"dtype of input {node.name!r}")
            v = Var(node.name, TensorType(shp, dt), span)
            inputs.append(v)
        elif node.name in params:
            arr = params[node.name]
            dt = check_dtype(arr.dtype, f"dtype of parameter {node.name!r}")
            v = Var(node.name, TensorType(arr.shape, dt), span)
            param_vars.append(v)
            used[node.name] = as_param(arr)
        elif params_given:
            raise ConversionError(
                f"{frontend} variable {node.name!r} (node {node.index}) has no value in the "
                f"parameters and no shape in shape=...: a parameter is missing, or an input "
                f"needs its shape")
        else:
            shp = _var_shape_attr(node)
            ann = None
            if shp is not None:
                ann = TensorType(shp, check_dtype(_dtype_of(dtype, node.name)))
            v = Var(node.name, ann, span)
            inputs.append(v)
        table[node.index] = [v]
    for node in graph.nodes:
        if node.op == "null":
            continue
        ins = []
        for nid, out in node.inputs:
            outs = table[nid]
            if out >= len(outs):
                raise ConversionError(
                    f"{node.op} node {node.name!r}: input refers to output {out} of node "
                    f"{graph.nodes[nid].name!r}, which has {len(outs)} output(s)")
            ins.append(outs[out])
        attrs = StrAttrs(node.attrs, node.op, node.name)
        ctx = Ctx(node.name, node.op, frontend)
        ctx.node, ctx.params = node, params  # the quantized converters read both
        try:
            res = converters[node.op](ins, attrs, ctx)
        except (ConversionError, UnsupportedOperatorError):
            raise
        except RelayError as e:
            failed = getattr(getattr(e, "span", None), "source_name", None)
            if failed and failed != node.name:
                # the error surfaced here but belongs to an earlier node (types are inferred lazily)
                where = (f"node {failed!r} (found while converting {node.op} node {node.name!r}, "
                         f"node {node.index})")
            else:
                where = f"{node.op} node {node.name!r} (node {node.index})"
            raise ConversionError(f"{where}: {e}") from e
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
            raise ConversionError(
                f"{node.op} node {node.name!r} (node {node.index}): cannot convert with "
                f"attributes {node.attrs}: {type(e).__name__}: {e}") from e
        outs = list(res) if isinstance(res, (list, tuple)) else [res]
        outs = [o for x in outs for o in ([x] if not hasattr(x, "astuple") else [x.astuple()])]
        set_spans(outs, Span(node.name))
        table[node.index] = outs
    heads = []
    for nid, out in graph.heads:
        outs = table[nid]
        if out >= len(outs):
            raise ConversionError(f"head refers to output {out} of node "
                                  f"{graph.nodes[nid].name!r}, which has {len(outs)}")
        heads.append(outs[out])
    body = heads[0] if len(heads) == 1 else Tuple(heads)
    func = Function(inputs + param_vars, body)
    mod = IRModule.from_expr(func)
    try:
        from ..typing.infer import infer_module

        mod = infer_module(mod)
    except RelayError as e:
        raise ConversionError(
            f"the converted {frontend} graph does not type-check (a parameter shape may not "
            f"match the graph): {e}") from e
    return mod, used


__all__ = ["from_mxnet", "CONVERTERS", "EXCLUDED", "convert_graph", "outputs_of"]

"""The graph converter shared by the MXNet and NNVM frontends: a parsed symbol graph
(:mod:`relay_tvm.frontend.mxnet_json`) becomes a typed Relay module, node by node through a
table of converters (``op name -> converter(inputs, attrs, ctx)``).

Variables become inputs (a shape in ``shape=`` or a ``__shape__`` attribute) or parameters (a
value in ``params``); every converted expression carries its node's name as its span, and an
error names the node (and the earlier node it belongs to when types are inferred late).
"""

from __future__ import annotations

import numbers

from ..errors import (
    ConversionError,
    InputShapeError,
    RelayError,
    UnknownInputError,
    UnsupportedOperatorError,
    close_names,
)
from ..ir.base import Span, check_dtype
from ..ir.expr import Function, Tuple, Var
from ..ir.module import IRModule
from ..ir.types import AnyDim, TensorType
from ._mx_util import Ctx
from .common import StrAttrs, as_param, set_spans


def _dtype_of(dtype, name):
    if isinstance(dtype, dict):
        return dtype.get(name, "float32")
    return dtype


def _var_shape_attr(node):
    s = node.var_attrs.get("__shape__")
    if not s:
        return None
    try:
        shp = StrAttrs({"s": s}, "null", node.name).get_tuple("s")
    except ConversionError:
        return None
    return shp if shp and all(d > 0 for d in shp) else None


def _input_shape(name: str, given) -> tuple:
    """The shape given for input ``name``: non-negative ints, or relay.Any() for a dimension
    known only at run time (the VM).

    Raises:
        ConversionError: anything else, a float, bool or string included (``int()`` truncated
            3.9 to 3 and took True as 1; fresh-user trial).
    """
    seq = given.tolist() if hasattr(given, "tolist") and hasattr(given, "ndim") else given
    dims = tuple(seq) if isinstance(seq, (tuple, list)) else None
    if dims is None or not all(
            isinstance(d, AnyDim) or (isinstance(d, numbers.Integral) and not isinstance(d, bool)
                                      and int(d) >= 0)
            for d in dims):
        raise ConversionError(f"shape of input {name!r}: expected a tuple of non-negative ints "
                              f"(or relay.Any() for a dynamic dimension), got {given!r}")
    return tuple(d if isinstance(d, AnyDim) else int(d) for d in dims)


def convert_graph(graph, shape, dtype, params, params_given, converters, frontend,
                  attr_hook=None, options=None):
    """Convert a parsed symbol graph (shared by the MXNet and NNVM frontends)."""
    var_names = [n.name for n in graph.nodes if n.op == "null"]
    unknown = [k for k in shape if k not in var_names]
    if unknown:
        raise UnknownInputError(_no_such_input("shape", unknown, var_names, params))
    if isinstance(dtype, dict):
        bad = [k for k in dtype if k not in var_names]
        if bad:
            raise UnknownInputError(_no_such_input("dtype", bad, var_names, params))
    table = {}
    inputs, param_vars, used, missing = [], [], {}, {}
    for node in graph.nodes:
        if node.op != "null":
            continue
        span = Span(node.name)
        if node.name in shape:
            shp = _input_shape(node.name, shape[node.name])
            dt = check_dtype(_dtype_of(dtype, node.name), f"dtype of input {node.name!r}")
            v = Var(node.name, TensorType(shp, dt), span)
            inputs.append(v)
        elif node.name in params:
            arr = params[node.name]
            dt = check_dtype(arr.dtype, f"dtype of parameter {node.name!r}")
            if isinstance(dtype, dict) and node.name in dtype and check_dtype(
                    dtype[node.name], f"dtype of {node.name!r}") != dt:
                # (a new-user trial: the dtype given was ignored, the array's kept)
                raise ConversionError(
                    f"dtype={{{node.name!r}: {dtype[node.name]!r}}} names a parameter whose "
                    f"array is {dt}: the parameters keep the dtype of their arrays, and "
                    f"relay_tvm does not cast them; cast the array (arr.astype(...)) or leave "
                    f"{node.name!r} out of dtype")
            v = Var(node.name, TensorType(arr.shape, dt), span)
            param_vars.append(v)
            used[node.name] = as_param(arr)
        elif params_given:
            # an error only if the outputs use it (SoftmaxOutput's label does not)
            v = Var(node.name, None, span)
            missing[v] = node
            inputs.append(v)
        else:
            shp = _var_shape_attr(node)
            ann = None
            if shp is not None:
                ann = TensorType(shp, check_dtype(_dtype_of(dtype, node.name)))
            v = Var(node.name, ann, span)
            inputs.append(v)
        table[node.index] = [v]
    try:
        heads = _convert_nodes(graph, table, converters, frontend, options or {}, params)
    except ConversionError as e:
        explained = _explained(e, inputs, shape, params, var_names, dtype, frontend)
        if explained is not None:
            raise explained from e
        raise
    body = heads[0] if len(heads) == 1 else Tuple(heads)
    kept, inputs, used = _keep_used(body, graph, table, inputs, used, missing, frontend,
                                    params)
    _warn_extra_params(params, var_names, frontend)
    func = Function(kept, body)
    mod = IRModule.from_expr(func)
    try:
        from ..typing.infer import infer_module

        mod = infer_module(mod)
    except RelayError as e:
        # the shapeless inputs are the cause only where inference stopped at an unknown type:
        # a too-small input (conv output height 0) named the weights, whose shapes the
        # operators infer, and "missing parameters" (new-user trial)
        unknown = "cannot infer" in str(e)
        hint = _shapeless_hint(inputs) if unknown else \
            _param_dtype_hint(e, params, var_names, shape, dtype, frontend)
        # an operator refusing a dtype is no shape problem (int32 data into an operator of
        # float tensors said "a parameter shape may not match": fresh-user trial)
        cause = ("an input's or parameter's dtype may not be one the graph's operators take"
                 if " dtype " in str(e) else
                 "an input or parameter has no shape" if unknown else
                 "an input or parameter shape may not fit the graph")
        raise ConversionError(
            f"the converted {frontend} graph does not type-check ({cause}): {e}"
            + (f"\n{hint}" if hint else "")) from e
    return mod, used


def _explained(err, inputs, shape, params, var_names, dtype, frontend):
    """A converter's ``err`` with a hint at its likely cause (an :class:`InputShapeError`
    where an operator refused the shape given for an input), or None where there is none."""
    refused = _refused_input_shape(err, shape)
    if refused is not None:
        dims = tuple(shape[refused])
        return InputShapeError(
            f"{err}\nhint: {dims} is the shape given for input {refused!r} "
            f"(shape={{{refused!r}: {dims}}}); the operator above takes another rank or size "
            f"there: check that shape", refused)
    hint = _conversion_hint(err, inputs, shape) or \
        _param_dtype_hint(err, params, var_names, shape, dtype, frontend)
    return ConversionError(f"{err}\n{hint}") if hint else None


def _refused_input_shape(err, shape):
    """The input whose given shape (``shape``) an operator refused in ``err`` (its first line
    says "got shape" of exactly that shape: a wrong rank, "data must be 4-d NCHW, got shape
    (1, 3, 224)", read as a broken model in a fresh-user trial), or None."""
    first = str(err).splitlines()[0]
    for name, dims in (shape or {}).items():
        if f"got shape {tuple(dims)}" in first:
            return name
    return None


def _conversion_hint(err, inputs, shape) -> str:
    """What likely caused a converter's error about types or shapes, or "": inputs without a
    shape, or a weight of another shape than the graph needs."""
    if "could not infer the type" in str(err) and _shapeless_hint(inputs):
        return _shapeless_hint(inputs)
    if "but the graph needs" in str(err) and shape:
        # the needed shape follows from the inputs' shapes: a wrong input shape (a missing
        # batch axis) shows up as a weight "of the wrong shape"; so do another model's
        # weights (the hint blamed the input shape alone; fresh-user trial)
        given = {k: tuple(v) for k, v in shape.items()}
        return (f"hint: the shape the graph needs follows from the input shape(s) given, "
                f"shape={given}: either an input shape is wrong (e.g. a missing batch axis: "
                f"(N, C, H, W) for NCHW layers) or the weights are not this graph's (another "
                f"model's .params)")
    return ""


def _param_dtype_hint(err, params, var_names, shape, dtype, frontend) -> str:
    """For an operator's dtype mismatch: the parameters whose arrays are not of the dtype the
    graph's inputs default to (a float64 weight, NumPy's default, surfaced as "data dtype
    float32 and weight dtype float64 differ" naming no parameter: fresh-user trial), or ""."""
    odd = {n: str(params[n].dtype) for n in var_names if n in params and n not in shape
           and str(params[n].dtype).startswith("float")  # (a quantized model's int8 are not)
           and str(params[n].dtype) != _dtype_of(dtype, n)}
    if " dtype " not in str(err) or not odd:
        return ""
    listed = ", ".join(f"{n!r} is {d}" for n, d in list(odd.items())[:4])
    cast = "MXNet's bind casts them, " if frontend == "MXNet" else ""
    return (f"hint: parameter(s) of another dtype than the graph's "
            f"({_dtype_of(dtype, next(iter(odd)))}): {listed}{', ...' if len(odd) > 4 else ''}; "
            f"{cast}relay_tvm does not cast silently: pass arrays of the graph's dtype "
            f"(arr.astype(...))")


def _no_such_input(what, unknown, var_names, params) -> str:
    """The message for a ``shape=``/``dtype=`` key no graph variable has: the graph's data
    inputs (its variables the parameters do not provide: the weights are no candidates) and,
    for a typo, the closest of them."""
    data = [v for v in var_names if v not in params]
    given = ", ".join(repr(k) for k in unknown)
    close = [c for k in unknown for c in close_names(k, data)]
    hint = f"; did you mean {', '.join(repr(c) for c in dict.fromkeys(close))}?" if close else ""
    if not data:
        listed = (f"all of its {len(var_names)} variables are given by the parameters, so it "
                  f"has no data input")
    else:
        names = f"{', '.join(repr(v) for v in data[:20])}{', ...' if len(data) > 20 else ''}"
        listed = (f"its data inputs: {names}" if params else
                  f"no parameters were given, so every variable is an input: {names}")
    name = "that name" if len(unknown) == 1 else "those names"
    return f"{what} given for {given}, but the graph has no input of {name}{hint} ({listed})"


def _listed(names, n: int = 3) -> str:
    names = sorted(names)
    return ", ".join(repr(k) for k in names[:n]) + (", ..." if len(names) > n else "")


def _warn_extra_params(params, var_names, frontend) -> None:
    """Warn (at the caller of ``from_mxnet``) about parameters no graph variable has: MXNet's
    own loader refuses them unless ``allow_extra=True``; most likely the weights of a larger
    model (ResNet-34's for ResNet-18)."""
    extra = set(params) - set(var_names)
    if extra:
        import warnings

        warnings.warn(f"{frontend} import: the parameters hold {len(extra)} parameters the "
                      f"graph does not use ({_listed(extra)}): are they for another (larger) "
                      f"model? They are left out", stacklevel=4)


def _reachable_vars(graph) -> set:
    """Indices of the variable nodes the graph's heads depend on: MXNet's ``list_arguments()``
    and ``list_auxiliary_states()`` (a variable no output reaches is no argument)."""
    seen, stack = set(), [nid for nid, _ in graph.heads]
    while stack:
        nid = stack.pop()
        if nid in seen:
            continue
        seen.add(nid)
        stack.extend(i for i, _ in graph.nodes[nid].inputs)
    return {i for i in seen if graph.nodes[i].op == "null"}


def _keep_used(body, graph, table, inputs, used, missing, frontend, params=None):
    """The parameters of ``main`` and the parameter values it binds: every variable the graph's
    outputs depend on, in the graph's node order (MXNet's ``list_arguments()`` order, with the
    auxiliary states where they occur), whether the converted ``body`` reads it or not. An input
    used only for its shape (``slice_like``'s ``shape_like``, ``Crop``'s second input,
    ``reshape_like``'s ``rhs``, whose shapes were resolved at import) stays a parameter, so
    every input MXNet takes can be fed (tvm.relay 0.19 kept those, as its ``*_like`` operators
    read them). A variable the body does not read and whose type is unknown (no value, no shape:
    a loss layer's label, SoftmaxOutput's, left without shape=) is left out, as 0.19 left it out.
    A variable in ``missing`` (no value, no shape) is an error only when the body reads it.

    Returns:
        ``(kept variables, the kept ones of inputs, {name: value} of the kept parameters)``.
    """
    from ..ir.free import free_vars

    needed = set(free_vars(body))
    needed_missing = [v for v in missing if v in needed]
    if needed_missing and params and not used:
        weights = len(needed_missing)
        raise ConversionError(
            f"the parameters hold none of the graph's {weights} weights (they have "
            f"{_listed(params)}; the graph needs {_listed(missing[v].name for v in needed_missing)}"
            f"): are they for another model?")
    for v, node in missing.items():
        if v in needed:
            raise ConversionError(
                f"{frontend} variable {node.name!r} (node {node.index}) has no value in the "
                f"parameters and no shape in shape=...: a parameter is missing, or an input "
                f"needs its shape")
    reachable = _reachable_vars(graph)
    order = [(n, table[n.index][0]) for n in graph.nodes if n.op == "null"]
    kept = [v for node, v in order
            if v in needed or (node.index in reachable and v.type_annotation is not None)]
    kept_set = set(kept)
    names = {v.name_hint for v in kept}
    return (kept, [v for v in inputs if v in kept_set],
            {k: a for k, a in used.items() if k in names})


def _shapeless_hint(inputs) -> str:
    """A hint naming the graph inputs that got no shape (from ``shape=`` or the graph's own
    ``__shape__`` attribute), or ''."""
    shapeless = [v.name_hint for v in inputs if v.type_annotation is None]
    if not shapeless:
        return ""
    # the data inputs first: the example names one of them, not a weight whose values were
    # not given (new-user trial: shape={'c_weight': ...} for a missing 'data2')
    weight = ("_weight", "_bias", "_gamma", "_beta", "_mean", "_var", "_moving_mean",
              "_moving_var")
    shapeless.sort(key=lambda n: n.endswith(weight))
    return (f"hint: input(s) {shapeless} have no shape: pass shape={{{shapeless[0]!r}: (...)}} "
            f"for each data input (and the weights as arg_params / aux_params)")


def _convert_nodes(graph, table, converters, frontend, options, params):
    """Convert the operator nodes of ``graph`` in order; ``table`` maps the index of each variable
    node to ``[expr]`` and receives the outputs of every node. Returns the heads' expressions.
    A converter reaches its node's subgraphs through ``ctx.convert_subgraph``."""

    def convert_subgraph(sub, args, ctx):
        var_nodes = [n for n in sub.nodes if n.op == "null"]
        if len(var_nodes) != len(args):
            raise ctx.error(f"its subgraph has {len(var_nodes)} inputs "
                            f"{[n.name for n in var_nodes]}, but {len(args)} are given")
        sub_table = {n.index: [a] for n, a in zip(var_nodes, args)}
        return _convert_nodes(sub, sub_table, converters, frontend, options, params)

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
        ctx = Ctx(node.name, node.op, frontend, node, convert_subgraph,
                  [graph.nodes[nid] for nid, _ in node.inputs], options)
        ctx.params = params  # the quantized converters read it
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
    return heads


__all__ = ["convert_graph"]

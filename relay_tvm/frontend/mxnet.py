"""The MXNet frontend: ``from_mxnet`` converts an MXNet model to a Relay module.

It accepts an ``mx.sym.Symbol``, a Gluon ``HybridBlock`` (parameters are taken from the block), or
exported files read WITHOUT MXNet: the symbol as a ``-symbol.json`` path or JSON text, and the
parameters as a ``.params`` path (both its ``arg:`` and ``aux:`` entries) or dicts of arrays.
Operator semantics follow MXNet 1.9.1. Every converted expression carries the MXNet node name
in its span.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping

from ..errors import ConversionError
from ._mx_control import CONTROL_CONVERTERS
from ._mx_math import MATH_CONVERTERS
from ._mx_nn import NN_CONVERTERS
from ._mx_quantized import QUANTIZED_CONVERTERS
from ._mx_rnn import RNN_CONVERTERS
from ._mx_shape import SHAPE_CONVERTERS
from ._mx_tensor import TENSOR_CONVERTERS
from ._mx_util import outputs_of
from ._mx_vision import VISION_CONVERTERS
from .common import report_unsupported, to_numpy
from .graph_converter import _dtype_of, convert_graph
from .mxnet_json import parse_graph, parse_subgraphs
from .mxnet_params import load_ndarray_file, split_arg_aux

CONVERTERS = {**TENSOR_CONVERTERS, **SHAPE_CONVERTERS, **NN_CONVERTERS, **QUANTIZED_CONVERTERS,
              **VISION_CONVERTERS, **CONTROL_CONVERTERS, **RNN_CONVERTERS, **MATH_CONVERTERS}

# Operators of the last Relay-era importer that are deliberately left out (a later issue).
EXCLUDED = {
    **{n: "quantized op" for n in (
        "_contrib_quantized_batch_norm", "_contrib_quantized_ring_buffer")},
}


def _is_mx_symbol(obj) -> bool:
    return type(obj).__module__.startswith("mxnet") and hasattr(obj, "tojson")


def _is_gluon_block(obj) -> bool:
    return hasattr(obj, "collect_params") and any(
        c.__module__.startswith("mxnet.gluon") for c in type(obj).__mro__)


def _concrete_shape(dims):
    """``dims`` with every dimension that is not an integer (``relay.Any()``, a symbolic
    var) replaced by 1, for running a Gluon block once to finish deferred initialization."""
    return tuple(int(d) if isinstance(d, numbers.Integral) else 1 for d in dims)


def _uninitialized(block) -> tuple:
    """``(deferred, missing)``: names of the block's parameters whose initialization waits for a
    first run (``initialize()`` was called, a shape is unknown), and of those never initialized
    (no ``initialize()``, no loaded parameters)."""
    from mxnet.gluon.parameter import DeferredInitializationError

    deferred, missing = [], []
    for name, p in block.collect_params().items():
        try:
            p.data()
        except DeferredInitializationError:
            deferred.append(name)
        except RuntimeError:  # MXNet's "Parameter '...' has not been initialized"
            missing.append(name)
    return deferred, missing


def _shape_dict(shape) -> dict:
    """``shape=`` as ``{input name: tuple}``: each shape may be any sequence (a list, a tuple, a
    NumPy array); the dimensions are checked where the inputs are made."""
    if shape is None:
        return {}
    if not isinstance(shape, Mapping):
        raise ConversionError(f"from_mxnet: shape must be a dict {{input name: shape}}, e.g. "
                              f"{{'data': (1, 3, 224, 224)}}; got {type(shape).__name__} "
                              f"{shape!r}")
    out = {}
    for name, dims in shape.items():
        try:
            if isinstance(dims, (str, bytes)):
                raise TypeError
            out[name] = tuple(dims)
        except TypeError:
            raise ConversionError(f"shape of input {name!r}: expected a tuple or list of ints "
                                  f"(or relay.Any() for a dynamic dimension), got "
                                  f"{dims!r}") from None
    return out


def _mx_reason(e) -> str:
    """The line of an MXNet error that says why (its messages start with a C++ "Traceback"
    and file line; the reason is the ``MXNetError: ...`` / ``Check failed`` line), else the
    first line, else the exception's type."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    for ln in lines:
        if ln.startswith(("MXNetError:", "Check failed")) or "Error:" in ln:
            return ln
    skip = ("Traceback", "File ", "[bt]", "Stack trace")
    rest = [ln for ln in lines if not ln.startswith(skip)]
    return (rest or lines)[0]


def _trace_error(block, names, e, numpy_mode=False) -> ConversionError:
    """The ConversionError for a block that could not be traced with one symbol per name of
    ``shape`` (MXNet's TypeError "hybrid_forward() takes 3 positional arguments but 4 were
    given", or its errors for NumPy-mode blocks, came through raw; fresh-user trial).
    ``numpy_mode``: whether it was traced under NumPy semantics."""
    first = _mx_reason(e)
    hint = ("shape= must name the block's inputs, one per argument of its forward(), in that "
            "order")
    export = ("; or export it (block.hybridize(); block(x); block.export(prefix)) where it "
              "runs and convert prefix-symbol.json with prefix-0000.params")
    if "legacy operator" in first or "numpy operator" in first:
        legacy_op = "legacy operator" in first
        if numpy_mode and legacy_op:
            hint = ("it was traced under MXNet's NumPy semantics (npx.set_np() is active, or its "
                    "parameters are mx.np arrays) and calls a legacy operator (F.relu, "
                    "F.FullyConnected, mx.nd / mx.sym names), which takes no mx.np arrays: call "
                    "mx.npx.reset_np() before from_mxnet for a legacy block, or use mx.np / "
                    "mx.npx operators throughout" + export)
        elif numpy_mode:
            hint = ("it was traced under MXNet's NumPy semantics and feeds legacy arrays (mx.nd) "
                    "to mx.np / npx operators: use mx.np arrays throughout" + export)
        else:
            hint = ("it looks like a NumPy-mode block (mx.np / npx operators or parameters) "
                    "traced without NumPy semantics: call mx.npx.set_np() before from_mxnet, as "
                    "running it in MXNet needs" + export)
    return ConversionError(f"from_mxnet(HybridBlock {type(block).__name__}): tracing it with the "
                           f"inputs {names} failed: {type(e).__name__}: {first}\n  hint: {hint}")


def _is_numpy_block(block) -> bool:
    """Whether ``block`` is a NumPy-mode block: MXNet's NumPy semantics are active
    (``npx.set_np()``), or its parameters are ``mx.np.ndarray`` (made under them)."""
    import mxnet as mx

    if mx.util.is_np_array():
        return True
    for p in block.collect_params().values():
        try:
            return isinstance(p.data(), mx.np.ndarray)
        except Exception:  # noqa: BLE001 - not initialized yet: decided by the mode alone
            return False
    return False


def _flatten_outputs(out, where="output"):
    """``(symbols, structure)`` of what a block's forward returned: the leaf symbols in order
    and the nesting as nested lists of output indices (a leaf with several outputs, say an
    unindexed ``split``, is a list of its indices, as MXNet's ``Group`` flattens it).

    Raises:
        ConversionError: a leaf that is not a symbol, named by its position (``output[1][0]``).
    """
    import mxnet as mx

    symbols, count = [], 0

    def leaf(sym, path):
        nonlocal count
        if not isinstance(sym, mx.sym.Symbol):
            raise ConversionError(
                f"from_mxnet(HybridBlock): {path} of the block's forward is a "
                f"{type(sym).__name__} ({sym!r:.60}), expected a symbol (an MXNet array in "
                f"forward) or a tuple / list of them")
        if hasattr(sym, "as_nd_ndarray"):  # NumPy-mode symbol: Group takes legacy ones
            sym = sym.as_nd_ndarray()
        k = len(sym.list_outputs())
        symbols.append(sym)
        idx = list(range(count, count + k))
        count += k
        return idx[0] if k == 1 else idx

    def walk(x, path):  # nesting is shallow (a forward's return value): recursion is fine
        if isinstance(x, (list, tuple)):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(x)]
        return leaf(x, path)

    return symbols, walk(out, where)


def _nest_outputs(mod, structure):
    """``mod`` with ``main``'s flat tuple of outputs regrouped as ``structure`` (nested lists of
    output indices): ``(a, (b, c))`` from a block comes back as a nested Relay tuple."""
    from ..ir.expr import Function, Tuple
    from ..ir.module import IRModule
    from ..typing.infer import infer_module

    main = mod["main"]
    flat = list(main.body.fields) if isinstance(main.body, Tuple) else [main.body]

    def build(s):
        return Tuple([build(v) for v in s]) if isinstance(s, list) else flat[s]

    return infer_module(IRModule.from_expr(Function(main.params, build(structure))))


def _block_to_symbol(block, shape, dtype):
    """Trace a Gluon HybridBlock into a symbol: ``(json, params, structure)``, ``structure``
    the nesting of its outputs (see :func:`_flatten_outputs`; None for one output).

    A NumPy-mode block (``npx.set_np()`` active, or parameters made under it) is traced with
    ``mx.np`` symbols under NumPy semantics, as MXNet's ``block.export`` does."""
    import contextlib

    import mxnet as mx

    saved = _param_state(block)
    try:
        with contextlib.ExitStack() as scope:
            if _is_numpy_block(block):
                scope.enter_context(mx.util.np_shape(True))  # entered first: exits last
                scope.enter_context(mx.util.np_array(True))
            return _trace_block(block, shape, dtype, mx.util.is_np_array())
    except ConversionError:
        # a failed first run (a NumPy-mode block run without NumPy semantics) leaves some
        # parameters materialized, the weight a legacy array and the bias an mx.np one, and
        # the block failing ever after under either mode: put them back as they were
        _restore_param_state(block, saved)
        raise


def _param_state(block) -> list:
    """``[(parameter, fields)]``: a shallow copy of the attributes of every parameter of
    ``block``, taken before anything reads them (MXNet 1.9.1's ``gluon.Parameter`` keeps its
    data, shape, contexts and deferred initializer there; reading a deferred parameter whose
    shape is known, or a first run, materializes it as an array of the mode then active)."""
    return [(p, dict(vars(p))) for p in block.collect_params().values()]


def _restore_param_state(block, saved) -> None:
    """Undo a failed first run: the parameters' fields, and the graphs the block and its
    children cached from that run (traced under the other mode, with its shapes)."""
    for p, fields in saved:
        vars(p).clear()
        vars(p).update(fields)
    block.apply(lambda b: b._clear_cached_op() if hasattr(b, "_clear_cached_op") else None)


def _trace_block(block, shape, dtype, numpy_mode):
    import mxnet as mx

    if not shape:
        raise ConversionError("from_mxnet(HybridBlock): pass shape={input name: shape}")
    names = list(shape)
    deferred, missing = _uninitialized(block)
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ConversionError(
            f"from_mxnet(HybridBlock): the block's parameters are not initialized "
            f"({', '.join(missing[:3])}{more}): call block.initialize() (random weights) or "
            f"load trained ones (block.load_parameters(path), or pretrained=True for a model-zoo "
            f"network) before converting")
    if deferred:  # deferred initialization: run once to materialize the parameters
        # MXNet needs concrete shapes for this pass; dynamic (Any/symbolic) dims take a
        # stand-in of 1 here only, and the conversion below keeps them dynamic.
        zeros = mx.np.zeros if numpy_mode else mx.nd.zeros
        args = [zeros(_concrete_shape(shape[n]), dtype=_dtype_of(dtype, n)) for n in names]
        try:
            block(*args)
        except TypeError as e:
            raise _trace_error(block, names, e, numpy_mode) from e
        except (mx.base.MXNetError, ValueError) as e:
            stand_in = {n: _concrete_shape(shape[n]) for n in names}
            how = "" if all(stand_in[n] == tuple(shape[n]) for n in names) else \
                " (dynamic dimensions as 1)"
            raise ConversionError(
                f"from_mxnet(HybridBlock): the block's parameters are not initialized yet and "
                f"running it once at {stand_in}{how} to initialize them "
                f"failed: {_mx_reason(e)}\n  hint: run the block once on a real input "
                f"before converting (with dtype= other than the parameters' float32, cast the "
                f"block first: block.cast(dtype))") from e
    syms = [mx.sym.var(n) for n in names]
    if numpy_mode:
        syms = [v.as_np_ndarray() for v in syms]
    try:
        out = block(*syms)
    except (TypeError, ValueError, mx.base.MXNetError) as e:
        raise _trace_error(block, names, e, numpy_mode) from e
    structure = None
    if isinstance(out, (list, tuple)):
        leaves, structure = _flatten_outputs(out)
        if not leaves:
            raise ConversionError(f"from_mxnet(HybridBlock {type(block).__name__}): its forward "
                                  f"returned {out!r}, no outputs; expected at least one array")
        out = mx.sym.Group(leaves)
    else:
        leaves, _ = _flatten_outputs(out)
        out = leaves[0]
    params = {}
    for k, p in block.collect_params().items():
        params[p.name if hasattr(p, "name") else k] = p.data().asnumpy()
    return _infer_unknown_fill_shapes(out, shape), params, structure


_FILL_OPS = ("_zeros", "_ones", "_full", "zeros", "ones", "full")


def _infer_unknown_fill_shapes(sym, shape) -> str:
    """The symbol's JSON with the 0 ("inferred") dimensions of its fill nodes replaced by the
    sizes MXNet's shape inference gives them: Gluon's recurrent cells start from
    ``F.zeros(shape=(0, hidden))``, where 0 means "take the batch from the graph" (read as a
    size-0 tensor, a cell's unroll did not convert; fresh-user trial). Only with static input
    shapes; MXNet's inference failing leaves the graph as it is."""
    import json

    text = sym.tojson()
    graph = json.loads(text)

    def has_zero(shape_attr) -> bool:  # "(0, 20)" -> True
        return "0" in str(shape_attr).replace(" ", "").strip("()[]").split(",")

    fills = [n for n in graph["nodes"]
             if n["op"] in _FILL_OPS and has_zero(n.get("attrs", {}).get("shape", ""))]
    static = all(isinstance(d, numbers.Integral) for k in shape for d in shape[k])
    if not fills or not static:
        return text
    try:
        internals = sym.get_internals()
        _, out_shapes, _ = internals.infer_shape(
            **{k: tuple(int(d) for d in v) for k, v in shape.items()})
    except Exception:  # noqa: BLE001 - MXNet could not infer: convert as written
        return text
    inferred = dict(zip(internals.list_outputs(), out_shapes or []))
    for n in fills:
        got = inferred.get(n["name"] + "_output")
        if got and all(d > 0 for d in got):
            n["attrs"]["shape"] = str(tuple(got))
    return json.dumps(graph)


def _load_params(value, what):
    """``arg_params`` / ``aux_params`` as a dict name -> np.ndarray (a path loads both kinds)."""
    if value is None:
        return {}
    if isinstance(value, (str, os.PathLike)):
        arrays = load_ndarray_file(value)
        if not isinstance(arrays, dict) and not arrays:  # HybridBlock.export of no parameters
            return {}
        if not isinstance(arrays, dict):  # mx.nd.save of a list: nothing to match by name
            raise ConversionError(
                f"{what}: {os.fspath(value)!r} holds {len(arrays)} arrays without names "
                f"(mx.nd.save of a list); parameters are matched to the graph by name: save a "
                f"dict {{'arg:name': array, 'aux:name': array}} (what Module.save_checkpoint "
                f"and HybridBlock.export write)")
        arg, aux = split_arg_aux(arrays, os.fspath(value))
        return {**arg, **aux}
    if not isinstance(value, dict):
        raise ConversionError(f"{what}: expected a dict of arrays or a .params path, "
                              f"got {type(value).__name__}")
    out = {}
    for k, v in value.items():
        name = k[4:] if isinstance(k, str) and k[:4] in ("arg:", "aux:") else k
        out[name] = to_numpy(v, name)
    return out


def find_params_file(symbol_path):
    """The ``.params`` file that goes with an exported ``PREFIX-symbol.json``: the one
    ``PREFIX-*.params`` next to it (``HybridBlock.export`` and ``Module.save_checkpoint`` write
    ``PREFIX-NNNN.params``, NNNN the epoch). Shared by :func:`from_mxnet` and the
    ``relay-tvm`` command.

    Args:
        symbol_path: path of the symbol file (str or ``os.PathLike``).

    Returns:
        the path of the parameter file, or None when the name does not end in
        ``-symbol.json`` or no such file exists.

    Raises:
        ConversionError: several match (several epochs): which one is meant is ambiguous; the
            message names the files found.
    """
    import glob

    path = os.fspath(symbol_path)
    if not path.endswith("-symbol.json"):
        return None
    prefix = path[: -len("-symbol.json")]
    found = sorted(glob.glob(glob.escape(prefix) + "-*.params"))
    if len(found) > 1:
        names = ", ".join(os.path.basename(f) for f in found)
        raise ConversionError(
            f"{path!r}: {len(found)} parameter files are next to it ({names}), one per saved "
            f"epoch: which one to use is ambiguous; pass it, e.g. arg_params={found[-1]!r} "
            f"(relay-tvm: --params {found[-1]})")
    return found[0] if found else None


def _is_symbol_path(symbol) -> bool:
    """Whether ``symbol`` names a file (a path, not JSON text)."""
    if isinstance(symbol, os.PathLike):
        return True
    return isinstance(symbol, str) and not symbol.lstrip().startswith(("{", "[")) \
        and os.path.isfile(symbol)


def _operator_names(graph) -> list:
    """``(operator, node name)`` of every node, in the bodies of control-flow nodes too."""
    out, stack = [], [graph]
    while stack:
        g = stack.pop()
        for n in g.nodes:
            if n.op != "null":
                out.append((n.op, n.name))
            if n.op in CONTROL_CONVERTERS:
                stack.extend(reversed(parse_subgraphs(n, g.source)))
    return out


def from_mxnet(symbol, shape=None, dtype="float32", arg_params=None, aux_params=None, *,
               unroll_foreach=False):
    """Convert an MXNet model to a Relay module.

    Args:
        symbol: an ``mx.sym.Symbol``; a Gluon ``HybridBlock`` (hybridized or not; its parameters
            are used and ``arg_params``/``aux_params`` are ignored); a path to a
            ``-symbol.json`` file (without ``arg_params``/``aux_params``, the
            ``PREFIX-NNNN.params`` next to ``PREFIX-symbol.json`` is loaded, as the
            ``relay-tvm`` command does; see :func:`find_params_file`); the symbol JSON text; or
            the parsed JSON dict.
        shape: ``{input name: shape}`` of the data inputs (NCHW image data, say
            ``{"data": (1, 3, 224, 224)}``; a list or NumPy array is a shape too). Every
            variable that is not a parameter needs one.
        dtype: the input dtype, or ``{input name: dtype}`` (default ``"float32"``).
        arg_params: ``{name: array}`` (MXNet NDArray, NumPy, tvm Tensor; ``arg:`` prefixes are
            dropped) or a path to a ``.params`` file, whose ``arg:`` and ``aux:`` entries are
            both used.
        aux_params: the same for auxiliary states (BatchNorm moving mean/var).
        unroll_foreach: convert each ``_foreach`` (its sequence length is static) into
            straight-line dataflow, one copy of the body per step, which the graph executor
            runs; by default it becomes a Relay loop (a recursive local function) for the VM
            and the interpreter.

    Control flow (``_cond``, ``_foreach``, ``_while_loop``) becomes Relay ``If`` and recursive
    local functions, run by ``relay.vm`` and the interpreter (see
    :mod:`relay_tvm.frontend._mx_control`, including ``while_loop``'s padding); the fused
    ``RNN`` operator is unrolled over its static sequence length into dataflow (see
    :mod:`relay_tvm.frontend._mx_rnn`).

    Returns:
        ``(mod, params)``: an :class:`IRModule` whose ``main`` takes every variable of the
        graph (named as in MXNet) in the graph's order, MXNet's ``list_arguments()`` order with
        the auxiliary states where they occur, also those used only for their shape
        (``slice_like``'s ``shape_like``, ``Crop``'s second input, ``reshape_like``'s ``rhs``),
        typed (an unused variable of unknown shape, such as a loss layer's label without
        ``shape=``, is left out); and ``{name: array}`` of its parameters that have values.

    Raises:
        UnsupportedOperatorError: the graph uses operators without converter (all are listed
            with their counts, before anything is converted).
        ConversionError: malformed JSON, a missing parameter, a parameter whose shape does not
            match the graph, a corrupt ``.params`` file, a bad attribute (names the node or
            parameter); several ``PREFIX-NNNN.params`` next to a symbol path (names them);
            types that cannot be inferred without parameters (says they were missing);
            ``shape`` that is not a dict of shapes; a Gluon block whose parameters
            were never initialized (neither ``initialize()`` nor loaded).
    """
    shape = _shape_dict(shape)
    structure = None
    if _is_mx_symbol(symbol):
        graph_src = symbol.tojson()
    elif _is_gluon_block(symbol) and not isinstance(symbol, (str, dict, bytes)):
        graph_src, block_params, structure = _block_to_symbol(symbol, shape, dtype)
        arg_params, aux_params = block_params, None
    else:
        graph_src = symbol
    guessed = None  # the .params file found next to a symbol file (None: none looked for/found)
    looked = arg_params is None and aux_params is None and _is_symbol_path(symbol)
    if looked:
        guessed = find_params_file(symbol)
        arg_params = guessed
    graph = parse_graph(graph_src, "MXNet symbol")
    from .nnvm import CONVERTERS as NNVM_CONVERTERS

    report_unsupported(
        _operator_names(graph), CONVERTERS, "MXNet", EXCLUDED,
        (NNVM_CONVERTERS, "This looks like an NNVM graph: use relay.frontend.from_nnvm "
         "(relay-tvm --format nnvm)"))
    params_given = arg_params is not None or aux_params is not None
    params = {**_load_params(arg_params, "arg_params"), **_load_params(aux_params, "aux_params")}
    try:
        mod, used = convert_graph(graph, shape, dtype, params, params_given, CONVERTERS,
                                  "MXNet", options={"unroll_foreach": bool(unroll_foreach)})
    except ConversionError as e:
        if params_given or "infer" not in str(e):  # a concrete type error: the weights'
            raise  # shapes were inferred, so their absence is not the cause
        # no weights at all: every weight is an input of unknown shape, and inference fails at
        # the first operator that cannot deduce it; say that the parameters were missing
        where = ""
        if looked:
            prefix = os.fspath(symbol)[: -len("-symbol.json")] if os.fspath(symbol).endswith(
                "-symbol.json") else None
            where = (f" and no {os.path.basename(prefix)}-NNNN.params file is next to "
                     f"{os.fspath(symbol)!r}" if prefix is not None else
                     f" (parameter files are looked for next to PREFIX-symbol.json only, "
                     f"not {os.fspath(symbol)!r})")
        raise ConversionError(
            f"{e}\nthe parameters are missing: no arg_params / aux_params were given{where}, "
            f"so the weights became inputs whose shapes could not be inferred; pass "
            f"arg_params=PATH.params (or dicts of arrays)") from e
    if looked and guessed is None:
        weights = [v.name_hint for v in mod["main"].params if v.name_hint not in (shape or {})]
        if weights:
            import warnings

            warnings.warn(
                f"from_mxnet({os.fspath(symbol)!r}): no arg_params / aux_params given and no "
                f"PREFIX-NNNN.params file next to it, so the weights are inputs of main "
                f"({len(weights)}: {', '.join(weights[:4])}{', ...' if len(weights) > 4 else ''}"
                f"); pass arg_params=PATH.params to bind them", stacklevel=2)
    if structure is not None and any(isinstance(v, list) for v in structure):
        mod = _nest_outputs(mod, structure)
    return mod, used


__all__ = ["from_mxnet", "find_params_file", "CONVERTERS", "EXCLUDED", "convert_graph",
           "outputs_of"]

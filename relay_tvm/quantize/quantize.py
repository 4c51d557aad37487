"""Automatic quantization (tvm.relay 0.19's ``relay.quantize.quantize``): partition, annotate,
calibrate, realize.

``quantize(mod, params, dataset)`` first runs :func:`prerequisite_optimize` (bind ``params``,
SimplifyInference, FoldConstant, FoldScaleAxis, CanonicalizeOps, FoldConstant: batch norms
become a multiply/add folded into the weights), then

1. :func:`partition` ends each low-precision section with ``stop_fusion(cast_hint(x, int8))``;
2. :func:`annotate` inserts ``simulated_quantize`` where values enter integer arithmetic;
3. calibration (:func:`~._calibrate.calibrate`) sets their scales and clip bounds;
4. :func:`realize` (unless ``do_simulation``) rewrites the program into integer operators:
   ``conv2d(int8, int8) -> int32``, shifts/fixed-point multiplications, clips and casts.

The result is a plain Relay module (no qnn operators) that ``relay.build`` compiles.
"""

from __future__ import annotations

import numpy as np

from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Call, Constant, Function
from ..transform import (
    CanonicalizeOps,
    FoldConstant,
    FoldScaleAxis,
    InferType,
    PassContext,
    Sequential,
    SimplifyInference,
    function_pass,
    module_pass,
)
from . import _annotate, _partition, _realize  # noqa: F401  (register the rules)
from ._calibrate import calibrate
from ._forward import forward_rewrite
from .qconfig import current_qconfig, quantize_context


@function_pass(opt_level=1, name="QuantizePartition")
def _partition_pass(func, mod, ctx):
    return forward_rewrite(func, _partition.ATTR)


@function_pass(opt_level=1, name="QuantizeAnnotate")
def _annotate_pass(func, mod, ctx):
    out = forward_rewrite(func, _annotate.ATTR, fmulti_ref=_annotate.multi_ref)
    params = list(out.params)
    known = set(params)
    params += [v for v in free_vars(out.body) if v not in known]
    return Function(params, out.body, None, out.type_params, out.attrs, out.span)


@function_pass(opt_level=1, name="QuantizeRealize")
def _realize_pass(func, mod, ctx):
    return forward_rewrite(func, _realize.ATTR)


def partition():
    """The partition pass (``QuantizePartition``): see the module docstring."""
    return _partition_pass


def annotate():
    """The annotation pass (``QuantizeAnnotate``): rewrites a float32 program into one that
    simulates quantization with ``simulated_quantize`` calls whose scale and clip variables
    become parameters of ``main``."""
    return _annotate_pass


def realize():
    """The realize pass (``QuantizeRealize``): rewrites the calibrated simulation into integer
    arithmetic (see :mod:`._realize`)."""
    return _realize_pass


def _bind_params(func, params):
    """``params`` bound into ``func`` by name, each checked against its parameter's annotation
    (dtype and shape: a weight of another shape was bound silently and changed the model's
    output shape; fresh-user trial)."""
    from ..transform.bind_params import bind_params_by_name

    names = {p.name_hint for p in func.params}
    unknown = [k for k in params if k not in names]
    if unknown:  # a misspelt name left its weight a variable ("needs a constant weight")
        raise RelayError(f"quantize: params {unknown} are not parameters of main "
                         f"(parameters: {sorted(names)})")
    for k, v in params.items():
        arr = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            # no scale represents inf, and NaN was quantized silently
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise RelayError(
                f"quantize: parameter {k!r} holds non-finite values ({arr[tuple(bad)]} at "
                f"index {tuple(int(i) for i in bad)}): no quantization scale represents them")
    return bind_params_by_name(func, params, record=False)  # quantize records them itself


def _check_finite_weights(func) -> None:
    """Refuse a constant weight (of a layer quantize rewrites) holding NaN or inf: one given
    in the program rather than in ``params`` was quantized to finite garbage (second fresh-user
    trial)."""
    from ..analysis import post_order_visit

    def visit(e):
        if type(e) is not Call or getattr(e.op, "name", "") not in _WEIGHTED:
            return
        w = e.args[1] if len(e.args) > 1 else None
        if type(w) is Constant and w.data.dtype.kind == "f" and not np.isfinite(w.data).all():
            bad = np.argwhere(~np.isfinite(w.data))[0]
            raise RelayError(
                f"quantize: the weight of {e.op.name} (a constant of shape {w.data.shape}) holds "
                f"non-finite values ({w.data[tuple(bad)]} at index "
                f"{tuple(int(i) for i in bad)}): no quantization scale represents them")

    post_order_visit(func.body, visit)


# the operators whose second argument is a weight that quantize rewrites into integers
_WEIGHTED = {"nn.conv2d", "nn.dense", "nn.conv2d_transpose", "nn.batch_matmul"}


def prerequisite_optimize(mod, params=None):
    """Bind ``params`` into ``main`` and run SimplifyInference, FoldConstant, FoldScaleAxis,
    CanonicalizeOps, FoldConstant (what quantization expects to find)."""
    if params:
        mod = mod.copy()
        mod["main"] = _bind_params(mod["main"], params)
    seq = Sequential([SimplifyInference(), FoldConstant(), FoldScaleAxis(), CanonicalizeOps(),
                      FoldConstant()])
    with PassContext(opt_level=3):
        return seq(InferType()(mod))


def quantize(mod, params=None, dataset=None):
    """Quantize ``mod`` under the current :func:`~.qconfig.qconfig`.

    Args:
        mod: an ``IRModule`` whose ``main`` is a float32 dataflow function (NCHW conv2d).
        params: ``name -> array`` of the weights, bound into ``main`` as constants.
        dataset: iterable of ``{input name: array}`` for "kl_divergence"/"percentile"
            calibration.

    Returns:
        The quantized, typed ``IRModule`` (integer arithmetic; float32 inputs and outputs), or,
        with ``do_simulation=True``, the calibrated float32 simulation. ``main`` records the
        bound ``params`` so that ``relay.build(qmod, params=params)`` (0.19's idiom) accepts
        them again when they are the same values.

    Raises:
        RelayError: a calibration that needs a dataset got none; a weight is not constant.
        NotFullyIntegralError: ``partition_conversions="fully_integral"`` and the quantized
            program keeps float operators (see :func:`~.qconfig.qconfig`).
    """
    if isinstance(mod, Function):
        from ..ir.module import IRModule

        mod = IRModule.from_expr(mod)
    mod = prerequisite_optimize(mod, params)
    _check_finite_weights(mod["main"])
    cal = module_pass(calibrate(dataset), opt_level=1, name="QuantizeCalibrate")
    passes = [partition(), annotate(), cal, InferType()]
    if not current_qconfig().do_simulation:
        passes.append(realize())
    passes.append(InferType())
    passes.append(FoldConstant())
    passes.append(InferType())  # the result is typed, as 0.19's (its passes re-infer types)
    with PassContext(opt_level=3):
        with quantize_context() as qctx:
            mod = Sequential(passes)(InferType()(mod))
    cfg = current_qconfig()
    counted = cfg.debug_enabled_ops is None or "nn.conv2d" in cfg.debug_enabled_ops
    beyond = sorted(i for i in cfg.skip_conv_layers or () if not 0 <= i < qctx._conv2d_counter)
    if beyond and counted:  # accepted unsaid before (fresh-user trial)
        import warnings

        warnings.warn(f"quantize: skip_conv_layers {beyond} name no conv2d layer: the model has "
                      f"{qctx._conv2d_counter} (indices from 0, in program order)", stacklevel=2)
    if cfg.partition_conversions != "disabled" and not cfg.do_simulation:
        from ._partition_conversions import partition_conversions

        dtypes = {cfg.dtype_input, cfg.dtype_weight, cfg.dtype_activation}
        if str(cfg.dtype_input).startswith("uint"):  # its signed twin holds the other inputs
            dtypes.add(str(cfg.dtype_input)[1:])
        if dtypes <= {"int8", "uint8", "int32"}:
            # realize widens 8-bit convolution operands to int16 (exact; the x86 kernels
            # multiply them in pairs): still the 8-bit values, in an integer core
            dtypes.add("int16")
        mod = partition_conversions(mod, dtypes, cfg.partition_conversions == "fully_integral")
    if params:
        # relay.build(qmod, params=params), the 0.19 idiom, then knows these are bound already
        from ..transform.bind_params import record_bound_params

        mod = mod.shallow_copy()
        mod["main"] = record_bound_params(mod["main"], params)
    return mod

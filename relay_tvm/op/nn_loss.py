"""Losses (tvm.relay.nn): ``nn.cross_entropy``, ``nn.cross_entropy_with_logits``,
``nn.nll_loss``.

Relay's definitions: ``cross_entropy(p, t) = -sum(log(p) * t) / batch``,
``cross_entropy_with_logits(p, t) = -sum(p * t) / batch`` (``p`` already log-probabilities),
``nll_loss`` as PyTorch's NLLLoss with class weights and ``ignore_index``. All kOpaque. TE
computes: topi.sum / topi.log, ``topi.nn.nll_loss``.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import shape_str, tensor_args
from ._nn_common import check_float, dims_match
from .registry import OpPattern, make_call, register_op


def _ce_rel(op):
    def rel(types, attrs):
        ts = tensor_args(types, ("predictions", "targets"), op)
        if ts is None:
            return None
        p, t = ts
        check_float(p, op, "predictions")
        if len(p.shape) != len(t.shape) or not all(dims_match(a, b) for a, b in zip(p.shape, t.shape)):
            raise TypeInferenceError(
                f"{op}: predictions shape {shape_str(p.shape)} and targets shape "
                f"{shape_str(t.shape)} differ"
            )
        if p.dtype != t.dtype:
            raise TypeInferenceError(f"{op}: predictions dtype {p.dtype} and targets dtype {t.dtype} "
                                     f"differ")
        if p.ndim < 1:
            raise TypeInferenceError(f"{op}: predictions must have a batch axis, got a scalar")
        return TensorType((), p.dtype)

    return rel


def _ce_ref(logits):
    def ref(args, attrs, out_type):
        p, t = (a.astype("float64") for a in args)
        v = p if logits else np.log(p)
        return np.asarray(-(v * t).sum() / p.shape[0], dtype=out_type.dtype)

    return ref


def _ce_compute(logits):
    def compute(attrs, inputs, out_type):
        from tvm import topi

        p, t = inputs
        v = p if logits else topi.log(p)
        total = topi.sum(topi.multiply(v, t))
        return topi.divide(topi.negative(total), topi.cast(p.shape[0], p.dtype))

    return compute


for _name, _logits in (("cross_entropy", False), ("cross_entropy_with_logits", True)):
    register_op(
        f"nn.{_name}",
        num_inputs=2,
        arguments=("predictions", "targets"),
        rel=_ce_rel(f"nn.{_name}"),
        ref=_ce_ref(_logits),
        compute=_ce_compute(_logits),
        pattern=OpPattern.OPAQUE,
        doc=("-sum(predictions * targets) / batch" if _logits
             else "-sum(log(predictions) * targets) / batch") + " (a scalar).",
        level=10,
    )


def cross_entropy(predictions, targets):
    """Cross entropy (tvm.relay.nn.cross_entropy): ``-sum(log(predictions) * targets) / N``
    for probabilities ``predictions`` and ``targets`` of one shape ``(N, ...)``; a scalar."""
    return make_call("nn.cross_entropy", [predictions, targets])


def cross_entropy_with_logits(predictions, targets):
    """Cross entropy on log-probabilities (tvm.relay.nn.cross_entropy_with_logits):
    ``-sum(predictions * targets) / N``; a scalar."""
    return make_call("nn.cross_entropy_with_logits", [predictions, targets])


def _nll_rel(types, attrs):
    op = "nn.nll_loss"
    ts = tensor_args(types, ("predictions", "targets", "weights"), op)
    if ts is None:
        return None
    p, t, w = ts
    check_float(p, op, "predictions")
    shapes = (f"predictions shape {shape_str(p.shape)}, targets shape {shape_str(t.shape)}, "
              f"weights shape {shape_str(w.shape)}")
    if p.ndim < 2 or t.ndim != p.ndim - 1 or not dims_match(t.shape[0], p.shape[0]) or not all(
            dims_match(a, b) for a, b in zip(t.shape[1:], p.shape[2:])):
        raise TypeInferenceError(f"{op}: expects predictions (N, C, d...) and targets (N, d...); "
                                 f"{shapes}")
    if w.ndim != 1 or not dims_match(w.shape[0], p.shape[1]):
        raise TypeInferenceError(f"{op}: weights must be (C,); {shapes}")
    if not t.dtype.startswith(("int", "uint")):
        raise TypeInferenceError(f"{op}: targets must have an integer dtype, got {t.dtype}")
    if w.dtype != p.dtype:
        raise TypeInferenceError(f"{op}: weights dtype {w.dtype} and predictions dtype {p.dtype} "
                                 f"differ")
    if attrs.reduction not in ("mean", "sum", "none"):
        raise TypeInferenceError(f"{op}: reduction {attrs.reduction!r} is not mean, sum or none")
    return TensorType(t.shape if attrs.reduction == "none" else (), p.dtype)


def _nll_ref(args, attrs, out_type):
    p, t, w = args
    keep = t != attrs.ignore_index
    tc = np.where(keep, t, 0).astype("int64")
    picked = np.take_along_axis(p.astype("float64"), tc[:, None], axis=1)[:, 0]
    wt = np.where(keep, w.astype("float64")[tc], 0.0)
    loss = -picked * wt
    if attrs.reduction == "none":
        return loss.astype(out_type.dtype)
    if attrs.reduction == "sum":
        return np.asarray(loss.sum(), dtype=out_type.dtype)
    return np.asarray(loss.sum() / wt.sum(), dtype=out_type.dtype)


def _nn_nll_loss_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.nll_loss(
        *inputs, attrs.reduction, attrs.ignore_index
    )


register_op(
    "nn.nll_loss",
    num_inputs=3,
    arguments=("predictions", "targets", "weights"),
    attrs=("relay.attrs.NLLLossAttrs", [F("reduction", "str", "mean"),
                                        F("ignore_index", "int", -100)]),
    rel=_nll_rel,
    ref=_nll_ref,
    compute=_nn_nll_loss_compute,
    pattern=OpPattern.OPAQUE,
    doc="Negative log likelihood loss with class weights and ignore_index (topi.nn.nll_loss).",
    level=10,
)


def nll_loss(predictions, targets, weights, reduction="mean", ignore_index=-100):
    """Negative log likelihood loss (tvm.relay.nn.nll_loss).

    Args:
        predictions: ``(N, C, d...)`` log-probabilities.
        targets: ``(N, d...)`` integer class indices.
        weights: ``(C,)`` class weights.
        reduction: ``"mean"`` (weighted mean, a scalar), ``"sum"`` (a scalar) or ``"none"``
            (``targets``' shape).
        ignore_index: a target value that contributes nothing.
    """
    return make_call("nn.nll_loss", [predictions, targets, weights], reduction=reduction,
                     ignore_index=ignore_index)


__all__ = ["cross_entropy", "cross_entropy_with_logits", "nll_loss"]

"""Float32 accumulation of half-precision kernels (float16, bfloat16).

A float16 running sum loses about one bit per doubling of its length: averaging 64 x 64 values
of about 3 in float16 was 17.8% off, a K = 4096 dense 3.8%, and a (1, 1000) softmax summed to
1.024. NumPy's half loops (and the reference interpreter) accumulate in float32 and round once,
as ``sum``/``prod``/``mean``/``variance`` already did here (``relay_tvm.op.reduce._widened``).
This module does the same for every other operator built on a reduction, in one place: the
lowering calls :func:`call_compute` instead of the operator's compute.

- **Products** (dense, matmul, batch_matmul, convolutions): their computes take the
  accumulator from the output dtype, as topi casts each operand to ``out_dtype`` inside the
  reduction (the int8 -> int32 path), so the compute is asked for a float32 result; half
  operands stay half in memory and the schedule templates see the same kernel as an int8 one.
- **Widened** (average pools, softmax, normalizations, losses, ...): the compute runs on
  float32 copies of the half inputs (casts that the schedule inlines).

Either way the float32 result is cast back to the half dtype once. Kernels without a half type
are untouched (float32 kernels are the same TIR as before).
"""

from __future__ import annotations

import dataclasses

from ..ir.types import TensorType, TupleType

HALF = ("float16", "bfloat16")
WIDE = "float32"

# computes whose accumulator is the output dtype (topi: ``te.sum(a.astype(out) * b.astype(out))``)
PRODUCTS = frozenset({
    "nn.dense", "nn.matmul", "nn.batch_matmul",
    "nn.conv1d", "nn.conv2d", "nn.conv3d",
    "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose",
    "nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc",
    "nn.contrib_conv2d_winograd_without_weight_transform",
    "nn.conv2d_backward_weight", "nn.contrib_dense_pack",
})

# computes run on float32 copies of their half inputs
WIDENED = frozenset({
    "nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d", "nn.avg_pool2d_grad",
    "nn.global_avg_pool1d", "nn.global_avg_pool2d", "nn.global_avg_pool3d",
    "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool3d",
    "nn.softmax", "nn.log_softmax", "nn.fast_softmax",
    "nn.l2_normalize", "nn.lrn", "nn.batch_norm", "nn.layer_norm", "nn.group_norm",
    "nn.instance_norm",
    "nn.cross_entropy", "nn.cross_entropy_with_logits", "nn.nll_loss",
    "nn.contrib_conv2d_winograd_weight_transform", "nn.deformable_conv2d", "nn.correlation",
    "collapse_sum_like", "collapse_sum_to", "vision.roi_align",
})


def _half_fields(out_type) -> list:
    """The tensor types of ``out_type`` (a tensor or a flat tuple of tensors)."""
    return list(out_type.fields) if isinstance(out_type, TupleType) else [out_type]


def _widen_type(out_type):
    """``out_type`` with every half-precision tensor made float32."""
    def wide(t):
        if isinstance(t, TensorType) and str(t.dtype) in HALF:
            return dataclasses.replace(t, dtype=WIDE)
        return t

    if isinstance(out_type, TupleType):
        return dataclasses.replace(out_type, fields=tuple(wide(f) for f in out_type.fields))
    return wide(out_type)


def _narrow(out, out_type):
    """The compute's result ``out`` (a tensor or list of tensors) cast back to the half dtypes
    of ``out_type`` where ``out`` is float32."""
    from tvm import topi

    def back(t, ty):
        if isinstance(ty, TensorType) and str(ty.dtype) in HALF and str(t.dtype) != ty.dtype:
            return topi.cast(t, ty.dtype)
        return t

    if isinstance(out_type, TupleType):
        return [back(t, ty) for t, ty in zip(out, out_type.fields)]
    if isinstance(out, (list, tuple)):
        return [back(out[0], out_type), *out[1:]]
    return back(out, out_type)


def accumulates_wide(op_name: str, inputs, out_type) -> bool:
    """Whether the call of ``op_name`` on TE ``inputs`` with result ``out_type`` is computed in
    float32 (see the module docstring)."""
    if op_name in PRODUCTS:
        return any(isinstance(t, TensorType) and str(t.dtype) in HALF
                   for t in _half_fields(out_type))
    if op_name in WIDENED:
        return any(str(t.dtype) in HALF for t in inputs)
    return False


def call_compute(op, attrs, inputs, out_type):
    """``op.compute(attrs, inputs, out_type)``, accumulating in float32 where the operator
    reduces over half-precision values; the result has ``out_type``'s dtypes.

    Args:
        op: the operator (``relay_tvm.op.registry.Op``) with a TE compute.
        attrs: the call's attributes.
        inputs: the flattened TE input tensors.
        out_type: the call's result type (a ``TensorType`` or ``TupleType`` of them).

    Returns:
        what ``op.compute`` returns (a TE tensor or a list of them).
    """
    if not accumulates_wide(op.name, inputs, out_type):
        return op.compute(attrs, inputs, out_type)
    from tvm import topi

    if op.name in WIDENED:
        inputs = [topi.cast(t, WIDE) if str(t.dtype) in HALF else t for t in inputs]
    return _narrow(op.compute(attrs, inputs, _widen_type(out_type)), out_type)


__all__ = ["call_compute", "accumulates_wide", "PRODUCTS", "WIDENED", "HALF"]

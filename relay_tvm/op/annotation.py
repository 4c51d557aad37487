"""``relay.op.annotation``: operators that only guide compilation (tvm.relay 0.19).

- ``annotation.stop_fusion(data)``: the identity; :func:`~relay_tvm.transform.FuseOps` never
  fuses its argument with its consumers (the argument ends a fused kernel) and then drops the
  call. ``data`` may be a tuple of tensors (as in 0.19, whose SplitArgs wraps a concatenate's
  input tuple): then each field ends its kernel. Automatic quantization uses it to keep int8 tensors as the values passed between
  kernels.
- ``annotation.cast_hint(data, dtype)``: the identity, with the hint that the value may be
  stored as ``dtype``; :mod:`relay_tvm.quantize`'s realize step turns it into a ``cast``.

- ``annotation.compiler_begin(data, compiler)`` / ``annotation.compiler_end(data, compiler)``:
  the edges where a region of the program offloaded to an external compiler (BYOC) starts and
  ends; placed by :func:`~relay_tvm.transform.AnnotateTarget`, grouped by
  :func:`~relay_tvm.transform.MergeCompilerRegions`, read by
  :class:`~relay_tvm.analysis.AnnotatedRegionSet`. They have no kernel: a program still holding
  them cannot be built or interpreted (external code generation is not part of relay_tvm).

All keep the shape and dtype of ``data``.
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import IncompleteType, TensorType, TupleType, type_str
from ._common import identity_rel
from .registry import OpPattern, make_call, register_gradient, register_op


def _identity_ref(args, attrs, out_type):
    return args[0].copy()


def _stop_fusion_ref(args, attrs, out_type):
    # a tuple value is immutable: the identity hands it on
    return args[0].copy() if hasattr(args[0], "copy") else args[0]


def _tensor_or_tuple(t) -> bool:
    if isinstance(t, TensorType):
        return True
    return isinstance(t, TupleType) and all(_tensor_or_tuple(f) for f in t.fields)


def _stop_fusion_rel(types, attrs):
    """The identity on a tensor or a tuple of tensors (0.19's IdentityRel: SplitArgs wraps a
    whole tuple of concatenate inputs)."""
    t = types[0]
    if isinstance(t, IncompleteType) or (isinstance(t, TupleType) and any(
            isinstance(f, IncompleteType) for f in t.fields)):
        return None
    if not _tensor_or_tuple(t):
        raise TypeInferenceError(f"annotation.stop_fusion: data must be a tensor or a tuple of "
                                 f"tensors, got {type_str(t)}")
    return t


def _identity_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.identity(inputs[0])


register_op(
    "annotation.stop_fusion",
    num_inputs=1,
    arguments=("data",),
    rel=_stop_fusion_rel,
    ref=_stop_fusion_ref,
    compute=_identity_compute,
    pattern=OpPattern.OPAQUE,
    doc="The identity; FuseOps ends a fused kernel at its argument and removes the call.",
    level=10,
)

register_op(
    "annotation.cast_hint",
    batch_rows=True,
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.CastHintAttrs", [F("dtype", "dtype")]),
    rel=identity_rel("annotation.cast_hint"),
    ref=_identity_ref,
    compute=_identity_compute,
    pattern=OpPattern.ELEMWISE,
    doc="The identity with a hint that the value may be stored as ``dtype`` (quantization).",
    level=10,
)


def stop_fusion(data):
    """Mark ``data`` as the end of a fused kernel (same shape and dtype; the identity).

    Args:
        data: a tensor expression, or a tuple of tensors (each field then ends a kernel).

    Returns:
        The call ``annotation.stop_fusion(data)``.

    Raises:
        TypeInferenceError: (at type inference) ``data`` is neither a tensor nor a tuple of
            tensors.
    """
    return make_call("annotation.stop_fusion", [data])


def cast_hint(data, dtype):
    """Hint that ``data`` may be stored as ``dtype`` (the identity until quantization's realize
    step turns it into a ``cast``).

    Args:
        data: a tensor expression.
        dtype: the storage dtype hinted, e.g. ``"int8"``.

    Returns:
        The call ``annotation.cast_hint(data, dtype=dtype)``.
    """
    return make_call("annotation.cast_hint", [data], dtype=dtype)


def _checkpoint_rel(types, attrs):
    """A tensor or a tuple of tensors, unchanged (Relay's checkpoint took either)."""
    from ..ir.types import TupleType
    from ._common import tensor_args, tuple_or_tensors

    t = types[0]
    if isinstance(t, TupleType):
        fields = tuple_or_tensors(t, "annotation.checkpoint")
        return None if fields is None else TupleType(list(fields))
    ts = tensor_args([t], ("data",), "annotation.checkpoint")
    return None if ts is None else ts[0]


def _checkpoint_ref(args, attrs, out_type):
    a = args[0]
    return tuple(x.copy() for x in a) if isinstance(a, (tuple, list)) else a.copy()


def _checkpoint_compute(attrs, inputs, out_type):
    from tvm import topi

    from ..ir.types import TupleType

    if isinstance(out_type, TupleType):
        return [topi.identity(t) for t in inputs]
    return topi.identity(inputs[0])


register_op(
    "annotation.checkpoint",
    num_inputs=1,
    arguments=("data",),
    rel=_checkpoint_rel,
    ref=_checkpoint_ref,
    compute=_checkpoint_compute,
    pattern=OpPattern.OPAQUE,
    doc="The identity; marks a value reverse-mode differentiation may recompute.",
    level=10,
)
for _name in ("annotation.stop_fusion", "annotation.checkpoint", "annotation.cast_hint"):
    register_gradient(_name, lambda orig, g: [g])  # the identity's gradient


def checkpoint(data):
    """``data`` unchanged, marked for recomputation in gradients (``annotation.checkpoint``).

    Args:
        data: a tensor or a tuple of tensors.
    """
    return make_call("annotation.checkpoint", [data])


def _any_identity_rel(types, attrs):
    """The output has the input's type, whatever it is (tensor, tuple, reference, ...)."""
    from ..ir.types import IncompleteType

    return None if isinstance(types[0], IncompleteType) else types[0]


for _name in ("annotation.compiler_begin", "annotation.compiler_end"):
    register_op(
        _name,
        num_inputs=1,
        arguments=("data",),
        attrs=("relay.attrs.CompilerAttrs", [F("compiler", "str")]),
        rel=_any_identity_rel,
        pattern=OpPattern.OPAQUE,
        doc="The edge of a region offloaded to the external compiler named by ``compiler``.",
        level=10,
    )


def compiler_begin(data, compiler: str):
    """Mark ``data`` as an input of a region for the external compiler ``compiler``.

    Args:
        data: the value entering the region (any type).
        compiler: the external compiler's name (``"dnnl"``, ``"default"`` for TVM itself).

    Returns:
        The call ``annotation.compiler_begin(data, compiler=compiler)``, of ``data``'s type.
    """
    return make_call("annotation.compiler_begin", [data], compiler=compiler)


def compiler_end(data, compiler: str):
    """Mark ``data`` as an output of a region for the external compiler ``compiler``.

    Args:
        data: the value leaving the region (any type).
        compiler: the external compiler's name.

    Returns:
        The call ``annotation.compiler_end(data, compiler=compiler)``, of ``data``'s type.
    """
    return make_call("annotation.compiler_end", [data], compiler=compiler)


__all__ = ["stop_fusion", "cast_hint", "checkpoint", "compiler_begin", "compiler_end"]

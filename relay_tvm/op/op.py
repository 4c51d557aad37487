"""``tvm.relay.op.op`` of 0.19: the operator registry and the per-operator registration
functions under one module path (:mod:`.registry`, :mod:`.op_attrs`)."""

from .debug import debug  # noqa: F401,E402
from .op_attrs import (  # noqa: F401
    get_op_attr,
    register_alter_op_layout,
    register_convert_op_layout,
    register_infer_correct_layout,
    register_legalize,
    register_op_attr,
    reset_op_attr,
)
from .registry import (  # noqa: F401
    Op,
    OpPattern,
    get,
    is_registered,
    list_op_names,
    register,
    register_broadcast_schedule,
    register_compute,
    register_gradient,
    register_injective_schedule,
    register_op,
    register_pattern,
    register_reduce_schedule,
    register_schedule,
    register_shape_func,
    register_stateful,
    register_strategy,
)


def register_mixed_precision_conversion(op_name, func=None, level=10):
    """tvm.relay 0.19's ``register_mixed_precision_conversion``: see
    :func:`relay_tvm.transform.mixed_precision.register_mixed_precision_conversion`."""
    from ..transform.mixed_precision import register_mixed_precision_conversion as convert

    return convert(op_name, func, level)


FQ2I_KEY = "FTVMFakeQuantizationToInteger"
FQ2I_OPTIONAL_KEY = "FTVMOptionalFakeQuantizationToInteger"


def register_fake_quantization_to_integer(op_name, func=None, level=10):
    """Register ``op_name``'s rule for FakeQuantizationToInteger (tvm.relay 0.19's function of
    that name; attribute ``FTVMFakeQuantizationToInteger``); a decorator when ``func`` is None.

    ``func(expr, type_map) -> [new_expr, affine_type]``: ``expr`` is the call with its
    arguments already in integer form, ``type_map`` maps each such argument (and ``expr``
    itself: the region's final quantize) to its
    :class:`~relay_tvm.ir.affine_type.TensorAffineType` / ``TupleAffineType``, with
    ``x_real = (x_int - zero_point) * scale``. The pass then treats ``op_name`` as part of
    fake-quantized regions and uses ``func`` in place of its built-in rule. relay_tvm's
    built-in rules (the operators of :data:`relay_tvm.transform.fake_quantization_to_integer.
    SUPPORTED`) hold level 10: overriding one takes a higher ``level``.

    Raises:
        RelayError: no operator named ``op_name``, or a rule already registered at ``level``.
    """
    return register_op_attr(op_name, FQ2I_KEY, func, level)


def register_optional_fake_quantization_to_integer(op_name, func=None, level=10):
    """As :func:`register_fake_quantization_to_integer` (attribute
    ``FTVMOptionalFakeQuantizationToInteger``), but the rule is used only when the pass's
    ``optional_qnn_ops`` names ``op_name`` (0.19's optional rules; ``nn.softmax`` has a
    built-in one at level 10)."""
    return register_op_attr(op_name, FQ2I_OPTIONAL_KEY, func, level)


def register_external_compiler(op_name, fexternal=None, level=10):
    """tvm.relay 0.19's ``register_external_compiler`` is not provided.

    Raises:
        NotProvidedError: always, naming the BYOC steps relay_tvm does provide
            (``target.<compiler>`` predicates and AnnotateTarget).
    """
    from ..errors import NotProvidedError
    from .op_attrs import EXTERNAL_COMPILER_REFUSAL

    raise NotProvidedError(f"tvm.relay.op.register_external_compiler({op_name!r}) is not "
                           f"provided: {EXTERNAL_COMPILER_REFUSAL}")


_STRATEGY_CLASSES = ("OpStrategy", "OpImplementation", "OpSpecialization")


def __getattr__(name):
    """0.19's op-strategy classes: refused with what to use instead."""
    if name in _STRATEGY_CLASSES:
        from ..errors import NotProvidedError
        from .registry import _NO_STRATEGY

        raise NotProvidedError(f"tvm.relay.op.op.{name}: {_NO_STRATEGY}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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


_STRATEGY_CLASSES = ("OpStrategy", "OpImplementation", "OpSpecialization")


def __getattr__(name):
    """0.19's op-strategy classes: refused with what to use instead."""
    if name in _STRATEGY_CLASSES:
        from ..errors import NotProvidedError
        from .registry import _NO_STRATEGY

        raise NotProvidedError(f"tvm.relay.op.op.{name}: {_NO_STRATEGY}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""``tvm.relay.op.op`` of 0.19: the operator registry and the per-operator registration
functions under one module path (:mod:`.registry`, :mod:`.op_attrs`)."""

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
    register_compute,
    register_gradient,
    register_op,
    register_pattern,
    register_stateful,
)

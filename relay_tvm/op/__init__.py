"""Relay operators: the registry and every operator family.

``relay.op.get(name)`` returns the registered :class:`Op`; the constructor functions
(``relay.add``, ``relay.nn.conv2d``, ...) build calls with checked attributes.
"""

# importing the operator families registers their operators
from ..ir.expr import const  # noqa: F401,E402  (tvm.relay.op.const)
from . import (  # noqa: F401
    _make,  # relay.op._make: positional operator constructors (0.19)
    _sugar,
    algorithm,
    annotation,  # relay.op.annotation: stop_fusion, cast_hint, compiler_begin/end
    contrib,  # relay.op.contrib: BYOC pattern tables (the vendors' modules refused)
    dyn,  # the dyn.* operators
    image,
    indexing,
    nn,
    nn_contrib,  # nn.contrib_conv2d_NCHWc (AlterOpLayout's blocked convolution)
    op,  # tvm.relay.op.op
    random,  # relay.random: Threefry keys, bits, uniform, normal
    reduce,
    shape_ops,
    signal,  # stft
    strategy,  # relay.op.strategy: 0.19's op strategies, refused with what to use instead
    tensor,
    transform,
    transform_extra,
    transform_grad,  # gradients of the shape operators
    transform_sparse,  # sparse_to_dense, matrix_set_diag, sliding_window, ...
    vision,
)
from . import reduce as _reduce
from . import tensor as _tensor
from . import transform as _transform
from ._common import TupleWrapper  # noqa: F401
from .algorithm import *  # noqa: F401,F403
from .argwhere import argwhere  # noqa: F401
from .debug import debug  # noqa: F401,E402
from .device_copy import device_copy  # noqa: F401,E402
from .indexing import *  # noqa: F401,F403
from .op import (  # noqa: F401
    register_external_compiler,
    register_fake_quantization_to_integer,
    register_optional_fake_quantization_to_integer,
)
from .op_attrs import (  # noqa: F401
    register_alter_op_layout,
    register_convert_op_layout,
    register_infer_correct_layout,
    register_legalize,
    register_op_attr,
)
from .reduce import *  # noqa: F401,F403
from .registry import (  # noqa: F401
    Op,
    OpPattern,
    get,
    is_registered,
    list_op_names,
    make_call,
    register_broadcast_schedule,
    register_compute,
    register_gradient,
    register_injective_schedule,
    register_op,
    register_pattern,
    register_reduce_schedule,
    register_ref,
    register_rel,
    register_schedule,
    register_shape_func,
    register_stateful,
    register_strategy,
)
from .shape_ops import *  # noqa: F401,F403
from .signal import *  # noqa: F401,F403
from .tensor import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403
from .transform_extra import *  # noqa: F401,F403
from .transform_sparse import *  # noqa: F401,F403
from .unique import unique  # noqa: F401,E402

_sugar.attach()  # x + y, x < 1, -x, x.astype(...) on expressions

__all__ = [
    *_tensor.__all__,
    *_transform.__all__,
    *_reduce.__all__,
    *algorithm.__all__,
    "argwhere",
    "device_copy",
    *indexing.__all__,
    *shape_ops.__all__,
    *signal.__all__,
    *transform_extra.__all__,
    *transform_sparse.__all__,
    "unique",
    "TupleWrapper",
    "get",
    "Op",
    "OpPattern",
    "register_op",
    "is_registered",
    "list_op_names",
]
_HELPERS = (
    "tensor_args", "infer_reshape", "reduce_axes", "reduce_rel", "REDUCE_ATTRS", "slice_plan",
    "parse_layout",
)
__all__ = [n for n in __all__ if n not in _HELPERS]


from .op import register_mixed_precision_conversion  # noqa: F401,E402

# 0.19's positional constructors of the namespaced operators: relay.op.nn._make.conv2d(...)
for _ns in (nn, image, vision, random, dyn, annotation):
    _short = _ns.__name__.rsplit(".", 1)[-1]
    _ns._make = _make.Namespace(_short, f"relay.op.{_short}")
del _ns, _short

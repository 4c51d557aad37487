"""Relay operators: the registry and every operator family.

``relay.op.get(name)`` returns the registered :class:`Op`; the constructor functions
(``relay.add``, ``relay.nn.conv2d``, ...) build calls with checked attributes.
"""

from . import nn, reduce, tensor, transform  # noqa: F401  (registers the operators)
from . import image  # noqa: F401,E402
from . import vision  # noqa: F401,E402
from .reduce import *  # noqa: F401,F403
from .registry import (  # noqa: F401
    Op,
    OpPattern,
    get,
    is_registered,
    list_op_names,
    make_call,
    register_compute,
    register_gradient,
    register_op,
    register_pattern,
    register_ref,
    register_rel,
)
from .tensor import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403
from . import algorithm, indexing, shape_ops, transform_extra  # noqa: F401,E402  (registers)
from .algorithm import *  # noqa: F401,F403,E402
from .indexing import *  # noqa: F401,F403,E402
from .shape_ops import *  # noqa: F401,F403,E402
from .transform_extra import *  # noqa: F401,F403,E402
from ._common import TupleWrapper  # noqa: F401,E402
from . import op  # noqa: F401,E402  (tvm.relay.op.op)
from .debug import debug  # noqa: F401,E402
from . import annotation  # noqa: F401,E402  (relay.annotation)
from ..ir.expr import const  # noqa: F401,E402  (tvm.relay.op.const)
from .op_attrs import (  # noqa: F401,E402
    register_alter_op_layout,
    register_convert_op_layout,
    register_legalize,
    register_op_attr,
)

from . import reduce as _reduce, tensor as _tensor, transform as _transform  # noqa: E402

__all__ = [
    *_tensor.__all__,
    *_transform.__all__,
    *_reduce.__all__,
    *algorithm.__all__,
    *indexing.__all__,
    *shape_ops.__all__,
    *transform_extra.__all__,
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

"""Relay's IR: expressions, types, ADTs, attributes, modules and functors."""

from .adt import *  # noqa: F401,F403
from .affine_type import TensorAffineType, TupleAffineType  # noqa: F401
from .attrs import AttrField, Attrs, AttrsSchema, DictAttrs  # noqa: F401
from .base import Node, RelayExpr, Span, check_dtype  # noqa: F401
from .expr import *  # noqa: F401,F403
from .functor import *  # noqa: F401,F403
from .module import IRModule  # noqa: F401
from .types import *  # noqa: F401,F403

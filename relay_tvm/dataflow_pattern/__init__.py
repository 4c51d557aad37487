"""Relay's dataflow pattern language (tvm.relay.dataflow_pattern): describe a shape of
expression with patterns, then match it, rewrite its occurrences with callbacks, or partition
them into functions.

    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pattern = is_op("nn.relu")(is_op("nn.bias_add")(conv, wildcard()) | conv)
    pattern.match(expr)                      # bool, at the root
    partition(pattern, expr)                 # each match -> call of a function
    rewrite(MyCallback(), expr)              # each match -> callback(pre, post, node_map)

See :mod:`.patterns` (the nodes) and :mod:`.matcher` (the semantics).
"""

from .matcher import DFPatternCallback, match, partition, rewrite  # noqa: F401
from .patterns import (  # noqa: F401
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_expr,
    is_if,
    is_let,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)

"""The partition step (``QuantizePartition``, tvm.relay 0.19's ``_partition.py``): end each
low-precision section with ``stop_fusion(cast_hint(x, dtype_input))`` so that fused kernels
exchange ``dtype_input`` (int8) tensors.

A :class:`QPartitionExpr` marks a value computed inside a section (from a conv2d on); a rule
either carries it through (relu, clip, max_pool2d, bias add, batch-norm multiply) or ends the
section at its arguments (residual add, global_avg_pool2d, any operator without a rule).
"""

from __future__ import annotations

from ..analysis import free_vars
from ..ir.expr import Call, Constant
from ..op.annotation import cast_hint, stop_fusion
from ..op.op_attrs import register_op_attr
from ._forward import TempExpr
from .qconfig import current_qconfig

ATTR = "FQPartitionRewrite"


def register_partition_function(op_name, frewrite=None, level=10):
    """Register ``frewrite(ref_call, new_args, ctx)`` as the partition rule of ``op_name``
    (a decorator when ``frewrite`` is None)."""
    return register_op_attr(op_name, ATTR, frewrite, level)


class QPartitionExpr(TempExpr):
    """A value inside a low-precision section; realized as
    ``stop_fusion(cast_hint(expr, dtype_input))``."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    def realize(self):
        return stop_fusion(cast_hint(self.expr, current_qconfig().dtype_input))


def partition_expr_check(expr):
    """``(True, inner)`` for a :class:`QPartitionExpr`, else ``(False, expr)``."""
    if isinstance(expr, QPartitionExpr):
        return True, expr.expr
    return False, expr


def is_constant(e) -> bool:
    """Whether ``e`` depends on no variable (Relay's ``check_constant``)."""
    return type(e) is Constant or (not isinstance(e, TempExpr) and not free_vars(e))


def forward_op(ref_call, args):
    """``ref_call``'s operator and attributes applied to ``args``."""
    return Call(ref_call.op, args, ref_call.attrs, ref_call.type_args, ref_call.span)


@register_partition_function("nn.conv2d")
def _conv2d(ref_call, new_args, ctx):
    data_cond, data = partition_expr_check(new_args[0])
    _, kernel = partition_expr_check(new_args[1])
    if data_cond:
        data = new_args[0].realize()
    return QPartitionExpr(forward_op(ref_call, [data, kernel]))


def identity_partition_function(ref_call, new_args, ctx):
    cond, expr = partition_expr_check(new_args[0])
    if cond:
        return QPartitionExpr(forward_op(ref_call, [expr]))
    return None


for _name in ("clip", "nn.relu", "nn.max_pool2d"):
    register_partition_function(_name, identity_partition_function)


@register_partition_function("add")
def _add(ref_call, new_args, ctx):
    lhs_cond, lhs = partition_expr_check(new_args[0])
    rhs_cond, rhs = partition_expr_check(new_args[1])
    if lhs_cond and rhs_cond:  # both sides in sections (first residual connection of ResNet)
        return QPartitionExpr(forward_op(ref_call, [new_args[0].realize(),
                                                    new_args[1].realize()]))
    if rhs_cond:  # residual connection: the section ends at the right side
        return forward_op(ref_call, [lhs, new_args[1].realize()])
    if lhs_cond:
        if is_constant(rhs):  # bias add (or batch-norm shift): stays in the section
            return QPartitionExpr(forward_op(ref_call, [lhs, rhs]))
        return forward_op(ref_call, [new_args[0].realize(), rhs])
    return None


@register_partition_function("multiply")
def _multiply(ref_call, new_args, ctx):
    lhs_cond, lhs = partition_expr_check(new_args[0])
    rhs_cond, rhs = partition_expr_check(new_args[1])
    if lhs_cond:  # batch-norm scale
        return QPartitionExpr(forward_op(ref_call, [new_args[0].realize(), rhs]))
    if rhs_cond:
        return QPartitionExpr(forward_op(ref_call, [lhs, new_args[1].realize()]))
    return None


@register_partition_function("nn.global_avg_pool2d")
def _global_avg_pool2d(ref_call, new_args, ctx):
    cond, expr = partition_expr_check(new_args[0])
    expr = new_args[0].realize() if cond else QPartitionExpr(new_args[0]).realize()
    return forward_op(ref_call, [expr])

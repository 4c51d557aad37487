"""The annotate step (``QuantizeAnnotate``, tvm.relay 0.19's ``_annotate.py``): insert
``simulated_quantize`` calls where values enter integer arithmetic.

A :class:`QAnnotateExpr` carries the :class:`QAnnotateKind` of a value: INPUT (quantized to
``dtype_input``), ACTIVATION (an integer accumulator, ``dtype_activation``). Rules quantize the
data of conv2d/dense/batch_matmul to INPUT and their weights to WEIGHT, produce ACTIVATION,
carry kinds through relu/clip/reshape/pooling, and unify the two sides of add/multiply. Each
``simulated_quantize`` gets three fresh float32 scalar variables (``dom_scale``, ``clip_min``,
``clip_max``) that become parameters of the function and are set by calibration.
"""

from __future__ import annotations

from ..ir.expr import Call, Tuple, var
from ..op.op_attrs import register_op_attr
from ..op.registry import get
from ._forward import TempExpr, realize_deep
from ._op import OP_NAME, simulated_quantize
from ._partition import forward_op, is_constant
from .qconfig import QAnnotateKind, current_qconfig, quantize_context

ATTR = "FQAnnotateRewrite"
INPUT, WEIGHT, ACTIVATION = QAnnotateKind.INPUT, QAnnotateKind.WEIGHT, QAnnotateKind.ACTIVATION


class QAnnotateExpr(TempExpr):
    """A value with an annotation kind; realized as the value itself."""

    __slots__ = ("expr", "kind")

    def __init__(self, expr, kind):
        self.expr = expr
        self.kind = QAnnotateKind(int(kind))

    def realize(self):
        return self.expr


def _get_expr_kind(anno):
    if isinstance(anno, QAnnotateExpr):
        return anno.expr, anno.kind
    return anno, None


def register_annotate_function(op_name, frewrite=None, level=10):
    """Register ``frewrite(ref_call, new_args, ctx)`` as the annotate rule of ``op_name`` (a
    decorator when ``frewrite`` is None). The rule returns a :class:`QAnnotateExpr`, an
    expression, or None (the call is kept on its arguments as they are). Operators outside
    ``debug_enabled_ops`` are kept as they are, in float (their arguments' annotations dropped;
    realization leaves them in float too)."""

    def default_rewrite(ref_call, new_args, ctx):
        # in float on its arguments' values (inside a tuple too: concatenate's fields)
        return forward_op(ref_call, [realize_deep(x) for x in new_args])

    def _register(func):
        def frewrite_with_guard(ref_call, new_args, ctx):
            if not current_qconfig().guard(ref_call):
                return default_rewrite(ref_call, new_args, ctx)
            return func(ref_call, new_args, ctx)

        register_op_attr(op_name, ATTR, frewrite_with_guard, level)
        return func

    return _register(frewrite) if frewrite is not None else _register


_NONNEG_PASS = ("nn.max_pool2d", "nn.max_pool1d", "nn.avg_pool2d", "nn.global_avg_pool2d",
                "annotation.stop_fusion", "annotation.cast_hint", "reshape", "nn.batch_flatten",
                "transpose", "strided_slice", OP_NAME)


def is_nonnegative(e) -> bool:
    """Whether ``e`` is >= 0 by construction: a relu, or a clip with ``a_min >= 0``, seen
    through pooling, stop_fusion/cast_hint, reshapes and simulated_quantize."""
    while isinstance(e, Call) and hasattr(e.op, "name"):
        name = e.op.name
        if name == "nn.relu" or (name == "clip" and float(e.attrs.a_min) >= 0):
            return True
        if name not in _NONNEG_PASS:
            return False
        e = e.args[0]
    return False


def attach_simulated_quantize(data, kind, sign=True, rounding="round"):
    """``simulated_quantize(data, dom_scale, clip_min, clip_max, kind, sign, rounding)`` with
    fresh scalar variables, made once per ``(data, kind, sign, rounding)`` in an annotation run
    (``data`` itself when it is already such a call). With an unsigned ``dtype_input`` (a
    relay_tvm extension, see :func:`~.qconfig.qconfig`) an INPUT field that
    :func:`is_nonnegative` gets ``sign=False``: ``[0, 2**nbit_input - 1]``."""
    op = get(OP_NAME)
    if (int(kind) == INPUT and sign and current_qconfig().dtype_input.startswith("u")
            and is_nonnegative(data)):
        sign = False
    if isinstance(data, Call) and data.op is op:
        a = data.attrs
        if a.kind == int(kind) and a.sign == sign and a.rounding == rounding:
            return data
    qctx = quantize_context()
    key = (data, int(kind), sign, rounding)
    node = qctx.qnode_map.get(key)
    if node is None:
        node = simulated_quantize(data, var("dom_scale"), var("clip_min"), var("clip_max"),
                                  kind, sign, rounding)
        qctx.qnode_map[key] = node
    return node


def _anchor_rewrite(ref_call, new_args, ctx):
    """conv2d / conv1d / dense: data to INPUT, weight to WEIGHT, result ACTIVATION."""
    if quantize_context().check_to_skip(ref_call):
        return None
    lhs, lhs_kind = _get_expr_kind(new_args[0])
    rhs, _ = _get_expr_kind(new_args[1])
    if lhs_kind is None or lhs_kind == ACTIVATION:
        lhs = attach_simulated_quantize(lhs, INPUT)
    rhs = attach_simulated_quantize(rhs, WEIGHT)
    return QAnnotateExpr(forward_op(ref_call, [lhs, rhs]), ACTIVATION)


register_annotate_function("nn.conv2d", _anchor_rewrite)
register_annotate_function("nn.conv1d", _anchor_rewrite)


@register_annotate_function("nn.dense")
def _dense(ref_call, new_args, ctx):
    if current_qconfig().skip_dense_layer:
        return None
    return _anchor_rewrite(ref_call, new_args, ctx)


def _const_or_input(e):
    return attach_simulated_quantize(e, WEIGHT if is_constant(e) else INPUT)


@register_annotate_function("multiply")
def _multiply(ref_call, new_args, ctx):
    if quantize_context().check_to_skip(ref_call):
        return None
    lhs, lk = _get_expr_kind(new_args[0])
    rhs, rk = _get_expr_kind(new_args[1])
    if lk is None and rk is None:
        return None
    if lk in (ACTIVATION, INPUT) and rk is None:
        if lk == ACTIVATION:
            lhs = attach_simulated_quantize(lhs, INPUT)
        return QAnnotateExpr(forward_op(ref_call, [lhs, _const_or_input(rhs)]), ACTIVATION)
    if rk in (ACTIVATION, INPUT) and lk is None:
        if rk == ACTIVATION:
            rhs = attach_simulated_quantize(rhs, INPUT)
        return QAnnotateExpr(forward_op(ref_call, [_const_or_input(lhs), rhs]), ACTIVATION)
    return None  # both annotated: left in float (0.19 raised here)


@register_annotate_function("add")
def _add(ref_call, new_args, ctx):
    if quantize_context().check_to_skip(ref_call):
        return None
    lhs, lk = _get_expr_kind(new_args[0])
    rhs, rk = _get_expr_kind(new_args[1])
    if lk is None and rk is None:
        return None
    if lk is None:
        lhs = attach_simulated_quantize(lhs, INPUT)
    elif rk is None:
        rhs = _const_or_input(rhs)
    elif lk == ACTIVATION and rk == ACTIVATION:
        rhs = attach_simulated_quantize(rhs, INPUT)
    return QAnnotateExpr(forward_op(ref_call, [lhs, rhs]), ACTIVATION)


def identity_rewrite(ref_call, new_args, ctx):
    """Carry the kind of the only argument through (relu, clip, reshape, ...)."""
    if quantize_context().check_to_skip(ref_call):
        return None
    x, kind = _get_expr_kind(new_args[0])
    if kind is None:
        return None
    return QAnnotateExpr(forward_op(ref_call, [x]), kind)


for _name in ("reshape", "clip", "nn.relu", "strided_slice", "nn.avg_pool2d", "nn.batch_flatten",
              "transpose", "annotation.stop_fusion"):
    register_annotate_function(_name, identity_rewrite)


def pool_rewrite(ref_call, new_args, ctx):
    """max pooling: an ACTIVATION argument is quantized to INPUT first; result INPUT."""
    if quantize_context().check_to_skip(ref_call):
        return None
    x, kind = _get_expr_kind(new_args[0])
    if kind is None:
        return None
    if kind == ACTIVATION:
        x = attach_simulated_quantize(x, INPUT)
    return QAnnotateExpr(forward_op(ref_call, [x]), INPUT)


register_annotate_function("nn.max_pool2d", pool_rewrite)
register_annotate_function("nn.max_pool1d", pool_rewrite)


@register_annotate_function("annotation.cast_hint")
def _cast_hint(ref_call, new_args, ctx):
    x, kind = _get_expr_kind(new_args[0])
    if quantize_context().check_to_skip(ref_call):
        return x
    if kind is None:
        return new_args[0]
    if kind == ACTIVATION:
        x = attach_simulated_quantize(x, INPUT)
    return QAnnotateExpr(forward_op(ref_call, [x]), INPUT)


@register_annotate_function("concatenate")
def _concatenate(ref_call, new_args, ctx):
    if quantize_context().check_to_skip(ref_call):
        return None
    tup = new_args[0]
    if type(tup) is not Tuple:
        return None
    pairs = [_get_expr_kind(x) for x in tup.fields]
    if all(k is None for _, k in pairs):
        return None
    fields = [e if k is not None else attach_simulated_quantize(e, ACTIVATION) for e, k in pairs]
    return QAnnotateExpr(forward_op(ref_call, [Tuple(fields, tup.span)]), ACTIVATION)


@register_annotate_function("nn.global_avg_pool2d")
def _global_avg_pool2d(ref_call, new_args, ctx):
    if quantize_context().check_to_skip(ref_call):
        return None
    x, kind = _get_expr_kind(new_args[0])
    if kind is None:
        return None
    quantize_context().stop_quantize()  # the classifier after the pooling stays in float
    return forward_op(ref_call, [new_args[0].realize()])


@register_annotate_function("nn.batch_matmul")
def _batch_matmul(ref_call, new_args, ctx):
    if quantize_context().check_to_skip(ref_call):
        return None
    out = []
    for a in new_args[:2]:
        e, k = _get_expr_kind(a)
        if k is None or k == ACTIVATION:
            e = _const_or_input(e)
        out.append(e)
    return QAnnotateExpr(forward_op(ref_call, out), ACTIVATION)


def multi_ref(e):
    """A value used more than once is quantized to INPUT once, for all its users."""
    if isinstance(e, QAnnotateExpr):
        return QAnnotateExpr(attach_simulated_quantize(e.expr, INPUT), INPUT)
    return e

"""FoldScaleAxis: fold per-channel scaling into the weights of convolutions and dense layers
(opt level 3), after Relay's ``fold_scale_axis.cc`` (tvm.relay 0.19).

**Backward** (:func:`BackwardFoldScaleAxis`): ``y * s``, with ``s`` a per-channel scale of ``y``
(one value per output channel, size 1 on the other axes, or a scalar), where ``y`` is computed
from ``nn.conv2d`` / ``nn.conv3d`` / ``nn.dense`` through any chain of

- ``nn.relu`` / ``nn.leaky_relu`` (only for a constant ``s >= 0``: ``relu(x) * s ==
  relu(x * s)`` needs it),
- ``add`` / ``subtract`` of a per-channel bias (which is scaled too), or of two such chains
  with the same channel axes (both are scaled),
- ``nn.bias_add`` on the channel axis,

each intermediate result used once: the multiply disappears and the weights become
``W * s`` along their output-channel axes (``O``, and ``o`` in a blocked ``OIHW{i}i{o}o``
kernel).

**Forward** (:func:`ForwardFoldScaleAxis`): ``x * s`` with ``s`` per-channel on ``x``, where every
use of ``x * s`` reaches the data input of a convolution or dense layer through the same kind of
chain (a bias ``b`` becomes ``b / s``, so a constant ``s`` with a zero does not pass a bias): the
weights become ``W * s`` along their input-channel axes (output-channel axes for a depthwise
convolution).

Convolutions fold when they are plain (``groups == 1``) or depthwise, in any layout with a ``C``
axis (NCHW, NHWC, NCDHW, ...) or blocked on both data and kernel (``NCHW{c}c`` with
``OIHW{i}i{o}o``). ``s`` need not be a constant unless it passes a ``relu``; then a variable or a
negative scale blocks the fold. Scales are checked with the shapes of the inferred types: a
scale that is not per-channel on the convolution's channel axes is left alone.

:func:`FoldScaleAxis` runs backward folding, then forward folding, then constant folding, so
batch-norm scales vanish into constant weights. Unlike 0.19, where FoldScaleAxis is a
Sequential of opt-level-3 passes that does nothing when called under the default opt level 2,
calling the pass object always runs it; the default pipeline enables it at opt level 3 as 0.19.
Dense layers take the scale on their last axis (0.19 took axis 1, which is the last one only for
2-D data).
"""

from __future__ import annotations

from ..ir.expr import Call
from ..ir.functor import rebuild
from ..op.registry import make_call
from ._rewrite import Rewriter, called_ops, children, node_uses, op_name, post_order
from ._scale_axis import (
    Message,
    conv_axes,
    expand_to_axes,
    intersect,
    is_constant_with_zero,
    is_nonnegative_constant,
    match_broadcast,
    normalize_axis,
    reshape_or_expand,
    reshape_to_axes,
    static,
    tensor_type,
)
from .pass_infra import FunctionPass, PassInfo

_RELU = ("nn.relu", "nn.leaky_relu")
_ADD = ("add", "subtract")
_CONV = ("nn.conv2d", "nn.conv3d")
_CONSUMERS = frozenset((*_CONV, "nn.dense"))


def _ndim(e):
    t = tensor_type(e)
    return None if t is None else len(t.shape)


def _weight_takes_scale(call) -> bool:
    """Whether a scale of ``call``'s output dtype can multiply its weight: the weight has that
    dtype (an int8 weight of an int32 convolution cannot hold an int32 scale)."""
    tw, to = tensor_type(call.args[1]), tensor_type(call)
    return tw is not None and to is not None and tw.dtype == to.dtype


# ---------------------------------------------------------------- forward folding

def _forward_wishes(call, out: Message | None):
    """What ``call`` lets its arguments carry: one message (or None) per argument."""
    name = op_name(call)
    n = len(call.args)
    if name in _RELU:
        return [None if out is None else Message(out.axes, True)]
    if name in _ADD:
        tl, tr = tensor_type(call.args[0]), tensor_type(call.args[1])
        if out is not None and tl is not None and tr is not None:
            if match_broadcast(tl, tr, out.axes)[0]:
                return [out, None]
            if match_broadcast(tr, tl, out.axes)[0]:
                return [None, out]
        return [None, None]
    if name in _CONSUMERS and not _weight_takes_scale(call):
        return [None] * n
    if name in _CONV:
        ax = conv_axes(call, output=False)
        return [None if ax is None else Message(ax.axes), None]
    if name == "nn.dense":
        nd = _ndim(call.args[0])
        return [None if not nd else Message((nd - 1,)), None]
    return [None] * n


def _forward_messages(func) -> dict:
    """Per node, the axes along which every one of its uses accepts a scale (demand flows from
    the consumers back to the producers; any other use, a ``let``, a tuple, a function body or an
    unknown operator, refuses)."""
    msgs: dict = {}
    for node in reversed(post_order(func)):
        if type(node) is Call and op_name(node) is not None:
            wishes, targets = _forward_wishes(node, msgs.get(node)), node.args
        else:
            targets = children(node)
            wishes = [None] * len(targets)
        for child, m in zip(targets, wishes):
            msgs[child] = intersect(msgs[child], m) if child in msgs else m
    return msgs


class _Scaled:
    """A value whose true result is ``value`` scaled by ``scale`` along ``axes``."""

    __slots__ = ("value", "axes", "scale")

    def __init__(self, value, axes, scale):
        self.value, self.axes, self.scale = value, axes, scale


class _Forward(Rewriter):
    """Bottom-up: a multiply that all its uses want scaled is recorded as ``_Scaled``; relus and
    bias adds carry it; a convolution or dense layer absorbs it into its weight. ``memo`` keeps
    the unfolded (correct) form of every node for the uses that do not absorb."""

    def __init__(self, msgs):
        super().__init__()
        self.msgs = msgs
        self.scaled: dict = {}

    def post_call(self, orig, new):
        name = op_name(orig)
        if name is None:
            return new
        if name == "multiply":
            self._produce(orig, new)
        elif name in _RELU:
            s = self.scaled.get(orig.args[0])
            if s is not None:
                self.scaled[orig] = _Scaled(rebuild(new, [new.op, s.value]), s.axes, s.scale)
        elif name in _ADD:
            self._carry_bias(orig, new)
        elif name in _CONSUMERS:
            return self._absorb(orig, new, name)
        return new

    def _produce(self, orig, new):
        m = self.msgs.get(orig)
        if m is None:
            return
        tl, tr = tensor_type(orig.args[0]), tensor_type(orig.args[1])
        if tl is None or tr is None:
            return
        for i in (0, 1):
            ok, scale = match_broadcast((tl, tr)[i], (tr, tl)[i], m.axes, new.args[1 - i])
            if ok and (not m.positive or is_nonnegative_constant(scale)):
                self.scaled[orig] = _Scaled(new.args[i], m.axes, scale)
                return

    def _carry_bias(self, orig, new):
        for i in (0, 1):
            s = self.scaled.get(orig.args[i])
            if s is None:
                continue
            # (x * s) + b == (x + b / s) * s, for s without zeros (0.19 divides by any s)
            if is_constant_with_zero(s.scale):
                return
            shape = tensor_type(orig.args[i]).shape
            div = reshape_or_expand(s.scale, shape, s.axes)
            if div is None:
                return
            args = list(new.args)
            args[i] = s.value
            args[1 - i] = make_call("divide", [new.args[1 - i], div])
            self.scaled[orig] = _Scaled(rebuild(new, [new.op, *args]), s.axes, s.scale)
            return

    def _absorb(self, orig, new, name):
        s = self.scaled.get(orig.args[0])
        if s is None or orig.args[1] in self.scaled:
            return new
        weight = new.args[1]
        if name == "nn.dense":
            if s.axes != (_ndim(orig.args[0]) - 1,):
                return new
            wscale = s.scale
        else:
            ax = conv_axes(orig, output=False)
            if ax is None or ax.axes != s.axes:
                return new
            kax = ax.kernel_axes()
            if ax.blocked:
                wscale = reshape_to_axes(s.scale, tensor_type(orig.args[1]).shape, kax)
            else:
                wscale = expand_to_axes(s.scale, len(tensor_type(orig.args[1]).shape), kax)
            if wscale is None:
                return new
        return rebuild(new, [new.op, s.value, make_call("multiply", [weight, wscale])])


def forward_fold_scale_axis(func, mod=None):
    """Fold scales into the data side of convolutions and dense layers (see the module doc);
    ``func`` must be typed. Returns ``func`` itself when nothing folds."""
    if not _CONSUMERS.intersection(_called(func)) or "multiply" not in _called(func):
        return func
    msgs = _forward_messages(func)
    if not any(m is not None for m in msgs.values()):
        return func
    return _typed(_Forward(msgs).rewrite(func), func, mod)


# ---------------------------------------------------------------- backward folding

def _backward_message(call, ins, branch: dict):
    """The axes along which ``call``'s result may carry a scale to be pushed into it, from its
    arguments' messages ``ins``; ``branch`` records which side of an add takes the scale."""
    name = op_name(call)
    if name in _RELU:
        return None if ins[0] is None else Message(ins[0].axes, True)
    if name in _ADD:
        tl, tr = tensor_type(call.args[0]), tensor_type(call.args[1])
        if tl is None or tr is None:
            return None
        for side, m, (a, b) in (("lhs", ins[0], (tl, tr)), ("rhs", ins[1], (tr, tl))):
            if m is not None and match_broadcast(a, b, m.axes)[0]:
                # the other side is multiplied by the scale reshaped to this side's rank
                if len(m.axes) > 1 and any(static(a.shape[x]) is None for x in m.axes):
                    return None
                branch[call] = side
                return m
        if (ins[0] is not None and ins[1] is not None and ins[0].axes == ins[1].axes
                and tuple(tl.shape) == tuple(tr.shape)):
            branch[call] = "both"
            return Message(ins[0].axes, ins[0].positive or ins[1].positive)
        return None
    if name in _CONSUMERS and not _weight_takes_scale(call):
        return None
    if name in _CONV:
        ax = conv_axes(call, output=True)
        return None if ax is None else Message(ax.axes)
    if name == "nn.bias_add":
        m, nd = ins[0], _ndim(call)
        if m is not None and nd and len(m.axes) == 1 and \
                normalize_axis(call.attrs.axis, nd) == m.axes[0]:
            return m
        return None
    if name == "nn.dense":
        nd = _ndim(call)
        return Message((nd - 1,)) if nd else None
    return None


_BACKWARD_OPS = frozenset((*_RELU, *_ADD, *_CONV, "nn.bias_add", "nn.dense"))


def _backward_plan(func):
    """Messages (children first; only results with a single use may take a scale), then, parents
    first, which multiplies fold and the scale each node of their chains must apply."""
    uses = node_uses(func)
    order = post_order(func)
    msgs, branch = {}, {}
    for node in order:
        if type(node) is Call and op_name(node) in _BACKWARD_OPS and uses.get(node, 0) == 1:
            m = _backward_message(node, [msgs.get(a) for a in node.args], branch)
            if m is not None:
                msgs[node] = m
    if not msgs:
        return None
    pending, folded = {}, {}
    for node in reversed(order):
        if type(node) is not Call:
            continue
        name = op_name(node)
        if name == "multiply":
            _plan_multiply(node, msgs, pending, folded)
            continue
        got = pending.get(node)
        if got is None:
            continue
        if name in _RELU or name == "nn.bias_add":
            pending[node.args[0]] = got
        elif name in _ADD:
            side = branch[node]
            if side in ("lhs", "both"):
                pending[node.args[0]] = got
            if side in ("rhs", "both"):
                pending[node.args[1]] = got
    return pending, folded, branch


def _plan_multiply(node, msgs, pending, folded):
    tl, tr = tensor_type(node.args[0]), tensor_type(node.args[1])
    if tl is None or tr is None:
        return
    for i in (0, 1):
        m = msgs.get(node.args[i])
        if m is None:
            continue
        # the scale is the multiply's other operand as it stands (0.19 does not rewrite it)
        ok, scale = match_broadcast((tl, tr)[i], (tr, tl)[i], m.axes, node.args[1 - i])
        if ok and (not m.positive or is_nonnegative_constant(scale)):
            pending[node.args[i]] = (m, scale)
            folded[node] = i
            return


class _Backward(Rewriter):
    def __init__(self, pending, folded, branch):
        super().__init__()
        self.pending, self.folded, self.branch = pending, folded, branch

    def post_call(self, orig, new):
        i = self.folded.get(orig)
        if i is not None:
            return new.args[i]  # already carries the scale
        got = self.pending.get(orig)
        if got is None:
            return new
        m, scale = got
        name = op_name(orig)
        if name in _RELU:
            return new
        if name in _ADD:
            side = self.branch[orig]
            if side == "both":
                return new
            k = 0 if side == "lhs" else 1
            factor = reshape_or_expand(scale, tensor_type(orig.args[k]).shape, m.axes)
            args = list(new.args)
            args[1 - k] = make_call("multiply", [new.args[1 - k], factor])
            return rebuild(new, [new.op, *args])
        if name == "nn.bias_add":
            return rebuild(new, [new.op, new.args[0], make_call("multiply", [new.args[1], scale])])
        if name == "nn.dense":
            wscale = expand_to_axes(scale, 2, (0,))
        else:
            ax = conv_axes(orig, output=True)
            wshape = tensor_type(orig.args[1]).shape
            if ax.blocked:
                wscale = reshape_to_axes(scale, wshape, ax.out_kernel_axes())
            else:
                wscale = expand_to_axes(scale, len(wshape), ax.out_kernel_axes())
        return rebuild(new, [new.op, new.args[0], make_call("multiply", [new.args[1], wscale])])


def backward_fold_scale_axis(func, mod=None):
    """Fold scales of convolution / dense results into their weights (see the module doc);
    ``func`` must be typed. Returns ``func`` itself when nothing folds."""
    if not _CONSUMERS.intersection(_called(func)) or "multiply" not in _called(func):
        return func
    plan = _backward_plan(func)
    if plan is None or not plan[1]:
        return func
    return _typed(_Backward(*plan).rewrite(func), func, mod)


# ---------------------------------------------------------------- passes

def _called(func):
    return called_ops(func)


def _typed(out, func, mod):
    if out is func:
        return func
    from ..typing.infer import infer_expr

    infer_expr(out, mod)
    return out


def fold_scale_axis(func, mod=None):
    """Backward folding, forward folding, then constant folding when anything folded."""
    out = forward_fold_scale_axis(backward_fold_scale_axis(func, mod), mod)
    if out is func:
        return func
    from .fold_constant import fold_constant_expr

    return fold_constant_expr(out, mod)


def FoldScaleAxis():  # noqa: N802 - Relay's name
    """Fold per-channel scales into conv2d / conv3d / dense weights, backward then forward, and
    fold the constants this leaves (opt level 3; tvm.relay 0.19's FoldScaleAxis)."""
    return FunctionPass(lambda f, m, c: fold_scale_axis(f, m),
                        PassInfo(3, "FoldScaleAxis", ("InferType",)))


def BackwardFoldScaleAxis():  # noqa: N802 - Relay's name
    """Fold a multiply after a convolution / dense layer into its weights (opt level 3); the
    weight products are left for FoldConstant."""
    return FunctionPass(lambda f, m, c: backward_fold_scale_axis(f, m),
                        PassInfo(3, "BackwardFoldScaleAxis", ("InferType",)))


def ForwardFoldScaleAxis():  # noqa: N802 - Relay's name
    """Fold a multiply before a convolution / dense layer into its weights (opt level 3); the
    weight products are left for FoldConstant."""
    return FunctionPass(lambda f, m, c: forward_fold_scale_axis(f, m),
                        PassInfo(3, "ForwardFoldScaleAxis", ("InferType",)))


__all__ = ["FoldScaleAxis", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "fold_scale_axis",
           "forward_fold_scale_axis", "backward_fold_scale_axis"]

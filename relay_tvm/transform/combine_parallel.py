"""CombineParallelConv2D, CombineParallelDense and CombineParallelBatchMatmul (opt level 4):
several convolutions (dense layers, batch matmuls) that read the same input with compatible
attributes become one, on weights concatenated along the output channels, and each branch
takes its slice of the result.

After Relay's ``combine_parallel_op.cc``, ``combine_parallel_conv2d.cc`` and
``combine_parallel_dense.cc`` / ``combine_parallel_batch_matmul.cc``. The dense variant has Relay's two forms: ``to_batch=True`` (the
default) stacks the branches into one ``nn.batch_matmul`` (2-D inputs, weights of one shape),
then ``split`` + ``squeeze``; ``to_batch=False`` concatenates the weights along the units and
slices with ``strided_slice(..., slice_mode="size")``, as convolutions do along their channel
axis. A group is combined when it has at least ``min_num_branches`` members. Convolutions:
``groups == 1``, layouts without blocking (NCHW, NHWC, ...), the same strides, padding,
dilation, layouts, output dtype and kernel shape apart from the output channels.

As in Relay, the elementwise and broadcast operators that follow every branch alike (``add``
of a bias, ``multiply`` by a scale, ``relu``) are applied once to the combined value, their
other arguments stacked or concatenated along the channel (units) axis. Unlike Relay, a level
is not combined when that would change its meaning (an operator with axis or shape attributes
other than the flat dense form's ``expand_dims``, arguments joined along a last axis that is
not the units axis, a convolution's output rank changing), nor followed through a value that
has other users; a scalar argument joins the batch as ``(1, 1)`` (Relay stacked scalars into a
vector, which broadcast over the units).
"""

from __future__ import annotations

from .. import op as _mk
from ..ir.expr import Call, Tuple, TupleGetItem
from ..op.registry import Op, OpPattern
from ._rewrite import Rewriter, children, op_name, post_order
from .pass_infra import FunctionPass, PassInfo

# Relay's ParallelOpCombiner: each dense / conv2d starts a branch that goes on through its only
# consumer while that consumer is an elementwise or broadcast operator. Level by level, while
# every branch of a group has the same operator with the same attributes there (the branch's
# value in the same argument position, the other arguments of compatible types), the level is
# applied once to the combined value. The branches' values at the last combined level are then
# slices of it.

_FLAT = ("flat", "bmm")  # joined along the last (units) axis, sliced per branch
_AXIS_FIELDS = frozenset({"axis", "axes", "shape", "newshape", "num_newaxis", "indices",
                          "repeats"})


def _ttype(e):
    t = getattr(e, "_checked_type", None)
    if t is None or not hasattr(t, "shape") or not all(isinstance(d, int) for d in t.shape):
        return None
    return t


def _consumers(func):
    users: dict = {}
    for n in post_order(func):
        for c in children(n):
            users.setdefault(c, []).append(n)
    return users


def _branch(dense, users):
    out = [dense]
    while True:
        nxt = users.get(out[-1], ())
        if len(nxt) != 1:
            return out
        c = nxt[0]
        if type(c) is not Call or not isinstance(c.op, Op) or c.op.pattern > OpPattern.BROADCAST:
            return out
        if sum(a is out[-1] for a in c.args) != 1 or _ttype(c) is None:
            return out
        out.append(c)


def _conv_key(n):
    a = n.attrs
    w = _ttype(n.args[1])
    out_layout = a.out_layout or a.data_layout
    layouts = (a.data_layout, a.kernel_layout, out_layout)
    if a.groups != 1 or any(not str(lay).isupper() or len(lay) != 4 for lay in layouts):
        return None  # blocked layouts (NCHW16c, ...) are left alone
    o = a.kernel_layout.index("O")
    rest = tuple(d for i, d in enumerate(w.shape) if i != o)
    return (tuple(a.strides), tuple(a.padding), tuple(a.dilation), a.data_layout,
            a.kernel_layout, a.out_layout, a.out_dtype, rest)


def _groups(func, mode, min_branches, users):
    by_input: dict = {}
    want = {"conv": "nn.conv2d", "bmm": "nn.batch_matmul"}.get(mode, "nn.dense")
    for n in post_order(func):
        if op_name(n) != want:
            continue
        x, w, y = _ttype(n.args[0]), _ttype(n.args[1]), _ttype(n)
        if x is None or w is None or y is None:
            continue
        if mode == "conv":
            key = _conv_key(n)
            if key is None:
                continue
        elif mode == "bmm":
            a = n.attrs
            if a.transpose_a or not a.transpose_b or len(w.shape) != 3 or len(x.shape) != 3:
                continue  # Relay combined only x (B, M, K) by w (B, N, K)
            key = (a.out_dtype, w.dtype, w.shape[0], w.shape[2])
        elif len(w.shape) != 2:
            continue
        elif mode == "batch":
            if len(x.shape) != 2:  # stacked into a 3-D batch_matmul
                continue
            key = (n.attrs.out_dtype, tuple(w.shape))
        else:
            key = (n.attrs.out_dtype, w.shape[1])
        by_input.setdefault((n.args[0], key), []).append(n)
    return [[_branch(d, users) for d in g] for g in by_input.values() if len(g) >= min_branches]


def _channel_axis(call) -> int:
    """The axis of a convolution's output that holds its channels."""
    a = call.attrs
    return (a.out_layout or a.data_layout).index("C")


def _level_ok(branches, i, pidx, mode, axis):
    """Whether level ``i`` of every branch can be applied once to the combined value; ``pidx``
    is the position of the branch's value among the arguments at that level, ``axis`` the
    channel (units) axis of the branch's value."""
    first = branches[0][i]
    fields = set(first.attrs.keys()) if first.attrs is not None else set()
    if fields & _AXIS_FIELDS and (mode not in _FLAT or first.op.name != "expand_dims"):
        return False  # axes / shapes written for one branch's value, not the combined one
    parent_rank = len(_ttype(branches[0][i - 1]).shape)
    out_rank = len(_ttype(first).shape)
    if mode not in _FLAT and out_rank != parent_rank:
        return False
    if mode in _FLAT and len(first.args) > 1 \
            and _units_axis(first, axis, parent_rank) != out_rank - 1:
        return False  # the other arguments are joined along their last axis
    for b in branches:
        c = b[i]
        if c.op is not first.op or len(c.args) != len(first.args) or c.args[pidx] is not b[i - 1]:
            return False
        if c.attrs != first.attrs:
            return False
        for j, (a, a0) in enumerate(zip(c.args, first.args)):
            if j == pidx:
                continue
            ta, t0 = _ttype(a), _ttype(a0)
            if ta is None or t0 is None or ta.dtype != t0.dtype or len(ta.shape) != len(t0.shape):
                return False
            if mode == "batch":
                if tuple(ta.shape) != tuple(t0.shape) or len(ta.shape) > parent_rank:
                    return False
            elif mode == "conv":
                ac = axis - out_rank + len(ta.shape)  # the argument's channel axis
                if ac < 0 or ta.shape[ac] != _ttype(c).shape[axis] or any(
                        x != y for k, (x, y) in enumerate(zip(ta.shape, t0.shape)) if k != ac):
                    return False
            elif len(ta.shape) > out_rank or tuple(ta.shape[:-1]) != tuple(t0.shape[:-1]):
                return False
    return True


def _units_axis(call, axis, parent_rank):
    """Where the units axis (``axis`` of the branch's value, of rank ``parent_rank``) is in
    the value of ``call``."""
    if call.op.name == "expand_dims":
        a = int(call.attrs.axis)
        a = a if a >= 0 else a + parent_rank + 1
        return axis + int(call.attrs.num_newaxis) if a <= axis else axis
    return axis + len(_ttype(call).shape) - parent_rank  # broadcasting pads on the left


def _out_channels(call) -> int:
    """A branch's channels (units): the weight's extent along its output axis."""
    w = _ttype(call.args[1]).shape
    name = op_name(call)
    if name == "nn.conv2d":
        return w[call.attrs.kernel_layout.index("O")]
    return w[1] if name == "nn.batch_matmul" else w[0]


class _Combiner(Rewriter):
    def __init__(self, groups, mode):
        super().__init__()
        self.mode = mode
        self.ends = {}
        self.plans = []
        for g in groups:
            depth, axes = self._plan(g)
            gi = len(self.plans)
            self.plans.append((g, depth, axes))
            for k, b in enumerate(g):
                self.ends[b[depth]] = (gi, k)
        self.built: dict = {}

    def _plan(self, g):
        """The last level combined, and each level's channel (units) axis."""
        if self.mode == "conv":
            axes = [_channel_axis(g[0][0])]
        else:
            axes = [len(_ttype(g[0][0]).shape) - 1]
        depth = min(len(b) for b in g)
        for i in range(1, depth):
            pidx = next(j for j, a in enumerate(g[0][i].args) if a is g[0][i - 1])
            if not _level_ok(g, i, pidx, self.mode, axes[-1]):
                return i - 1, axes
            if self.mode == "conv":
                axes.append(axes[-1])
                continue
            ax = _units_axis(g[0][i], axes[-1], len(_ttype(g[0][i - 1]).shape))
            if self.mode in _FLAT and any(
                    _ttype(b[i]).shape[ax] != _ttype(b[0]).shape[-1] for b in g):
                return i - 1, axes
            axes.append(ax)
        return depth - 1, axes

    def _combined(self, gi):
        g, depth, axes = self.plans[gi]
        rw = self.rewrite
        data = rw(g[0][0].args[0])
        weights = [rw(b[0].args[1]) for b in g]
        first = g[0][0]
        out_dtype = first.attrs.out_dtype
        if self.mode == "batch":
            x = _mk.stack(Tuple([data] * len(g)), axis=0)
            w = _mk.stack(Tuple(weights), axis=0)
            val = _mk.nn.batch_matmul(x, w, out_dtype=out_dtype, transpose_a=False,
                                      transpose_b=True)
        elif self.mode == "conv":
            fields = dict(first.attrs.items())
            fields["channels"] = sum(_out_channels(b[0]) for b in g)
            w = _mk.concatenate(Tuple(weights), axis=first.attrs.kernel_layout.index("O"))
            val = Call(first.op, [data, w], first.op.make_attrs(**fields), span=first.span)
        elif self.mode == "bmm":
            val = _mk.nn.batch_matmul(data, _mk.concatenate(Tuple(weights), axis=1),
                                      out_dtype=out_dtype, transpose_a=False, transpose_b=True)
        else:
            units = sum(_ttype(b[0].args[1]).shape[0] for b in g)
            val = _mk.nn.dense(data, _mk.concatenate(Tuple(weights), axis=0), units=units,
                               out_dtype=out_dtype)
        for i in range(1, depth + 1):
            first = g[0][i]
            pidx = next(j for j, a in enumerate(first.args) if a is g[0][i - 1])
            args = []
            for j in range(len(first.args)):
                if j == pidx:
                    args.append(val)
                    continue
                parts = [self._arg_part(b, i, j) for b in g]
                if self.mode == "batch":
                    args.append(_mk.stack(Tuple(parts), axis=0))
                elif self.mode == "conv":
                    nd = len(_ttype(first.args[j]).shape)
                    ac = axes[i] - len(_ttype(first).shape) + nd
                    args.append(_mk.concatenate(Tuple(parts), axis=ac))
                elif self.mode == "bmm":  # Relay's axis for batch_matmul
                    args.append(_mk.concatenate(Tuple(parts), axis=-1))
                else:
                    nd = len(_ttype(first.args[j]).shape)
                    args.append(_mk.concatenate(Tuple(parts), axis=max(nd - 1, 0)))
            val = Call(first.op, args, first.attrs, span=first.span)
        return val

    def _arg_part(self, b, i, j):
        arg = self.rewrite(b[i].args[j])
        nd = len(_ttype(b[i].args[j]).shape)
        if self.mode == "conv":
            return arg
        if self.mode == "batch":
            if nd == 0:  # (1, 1): broadcasts over the rows and units of one branch
                return _mk.expand_dims(arg, 0, 2)
            return _mk.expand_dims(arg, 0, 1) if nd == 1 else arg
        units = _ttype(b[0]).shape[-1]
        if nd == 0:
            return _mk.repeat(_mk.expand_dims(arg, -1, 1), units, 0)
        if units > 1 and _ttype(b[i].args[j]).shape[-1] == 1:
            return _mk.repeat(arg, units, nd - 1)
        return arg

    def post_call(self, orig, new):
        m = self.ends.get(orig)
        if m is None:
            return new
        gi, k = m
        val = self.built.get(gi)
        if val is None:
            val = self.built[gi] = self._combined(gi)
            if self.mode == "batch":
                val = self.built[gi] = _mk.split(val, len(self.plans[gi][0]), axis=0).astuple()
        if self.mode == "batch":
            return _mk.squeeze(TupleGetItem(val, k), [0])
        g, depth, axes = self.plans[gi]
        axis = axes[depth]
        # Relay's slices: every axis up to the channel one for convolutions, all for dense
        rank = axis + 1 if self.mode == "conv" else len(_ttype(orig).shape)
        start = sum(_out_channels(b[0]) for b in g[:k])
        begin, end = [0] * rank, [-1] * rank
        begin[axis], end[axis] = start, _out_channels(g[k][0])
        return _mk.strided_slice(val, begin=begin, end=end, strides=[1] * rank,
                                 slice_mode="size")


def combine_parallel(func, mode, min_branches):
    """Combine the parallel branches of ``func``; ``mode``: ``"conv"`` (nn.conv2d), ``"batch"``
    or ``"flat"`` (nn.dense to one batch_matmul / one dense), ``"bmm"`` (nn.batch_matmul)."""
    groups = _groups(func, mode, min_branches, _consumers(func))
    if not groups:
        return func
    return _Combiner(groups, mode).rewrite(func)


def CombineParallelConv2D(min_num_branches: int = 3):  # noqa: N802 - Relay's name
    """Combine ``>= min_num_branches`` parallel conv2d on one input (opt level 4)."""
    return FunctionPass(lambda f, m, c: combine_parallel(f, "conv", min_num_branches),
                        PassInfo(4, "CombineParallelConv2D", ("InferType",)))


def CombineParallelDense(min_num_branches: int = 3, to_batch: bool = True):  # noqa: N802
    """Combine ``>= min_num_branches`` parallel dense layers on one input (opt level 4):
    ``to_batch=True`` (tvm.relay's default) into one ``nn.batch_matmul`` of the stacked
    input and weights (2-D input, every weight of one ``(units, K)`` shape), then
    ``split`` + ``squeeze``; ``to_batch=False`` into one ``nn.dense`` on the weights
    concatenated along the units, then a ``strided_slice`` per branch."""
    op = "batch" if to_batch else "flat"
    return FunctionPass(lambda f, m, c: combine_parallel(f, op, min_num_branches),
                        PassInfo(4, "CombineParallelDense", ("InferType",)))


def CombineParallelBatchMatmul(min_num_branches: int = 3):  # noqa: N802 - Relay's name
    """Combine ``>= min_num_branches`` parallel ``nn.batch_matmul(x, w_i)`` (``transpose_b``
    form, weights ``(B, N_i, K)``) into one on the weights concatenated along ``N``, then a
    ``strided_slice`` per branch (opt level 4)."""
    return FunctionPass(lambda f, m, c: combine_parallel(f, "bmm", min_num_branches),
                        PassInfo(4, "CombineParallelBatchMatmul", ("InferType",)))


def BatchingOps():  # noqa: N802 - Relay's name
    """tvm.relay 0.19's ``BatchingOps``: :func:`CombineParallelConv2D`,
    :func:`CombineParallelDense` and :func:`CombineParallelBatchMatmul` in sequence (each with
    its default branch count and opt level 4)."""
    from .pass_infra import Sequential

    return Sequential([CombineParallelConv2D(), CombineParallelDense(),
                       CombineParallelBatchMatmul()], name="BatchingOps")


__all__ = ["BatchingOps", "CombineParallelBatchMatmul", "CombineParallelConv2D",
           "CombineParallelDense"]

"""CombineParallelConv2D and CombineParallelDense (opt level 4): several convolutions (dense
layers) that read the same input with the same attributes become one, on weights concatenated
along the output channels, followed by a ``split`` that hands each branch its slice.

After Relay's ``combine_parallel_conv2d.cc`` / ``combine_parallel_dense.cc``. The dense variant
has Relay's two forms: ``to_batch=True`` (the default) stacks the branches into one
``nn.batch_matmul`` (2-D inputs, weights of one shape), ``to_batch=False`` concatenates the
weights along the units. A group is combined when it has at least ``min_num_branches``
members. Only NCHW/OIHW convolutions with ``groups == 1``.

For dense, as in Relay, the elementwise and broadcast operators that follow every branch alike
(``add`` of a bias, ``multiply`` by a scale, ``relu``, ``expand_dims``) are applied once to the
combined value, their other arguments stacked or concatenated; each branch then takes its
slice (``split`` + ``squeeze`` of the batch, or ``strided_slice(..., slice_mode="size")`` along
the units). Unlike Relay, a level is not combined when that would change its meaning (an
operator with axis or shape attributes on a stacked batch, scalars stacked into a vector, a
units axis that broadcasting moved), nor followed through a value that has other users.
For convolutions the operators after each branch stay per branch.
"""

from __future__ import annotations

from .. import op as _mk
from ..ir.expr import Call, Tuple, TupleGetItem
from ..op.registry import Op, OpPattern, make_call
from ._rewrite import Rewriter, children, op_name, post_order
from .pass_infra import FunctionPass, PassInfo


def _shape(e):
    t = getattr(e, "_checked_type", None)
    if t is None or not all(isinstance(d, int) for d in getattr(t, "shape", (None,))):
        return None
    return tuple(t.shape)


def _conv_key(call):
    a = call.attrs
    w = _shape(call.args[1])
    if (w is None or a.groups != 1 or a.data_layout != "NCHW" or a.kernel_layout != "OIHW"
            or a.out_layout):
        return None
    return ("conv", a.strides, a.padding, a.dilation, a.out_dtype, w[1:])


def _dense_key(call):
    w = _shape(call.args[1])
    if w is None:
        return None
    return ("dense", call.attrs.out_dtype, w[1:])


def _batch_key(call):
    """``to_batch``: a 2-D input and weights of one shape (they are stacked)."""
    w, x = _shape(call.args[1]), _shape(call.args[0])
    if w is None or x is None or len(x) != 2:
        return None
    return ("batch", call.attrs.out_dtype, w)


_KEYS = {"nn.conv2d": _conv_key, "nn.dense": _dense_key, "batch": _batch_key}


def _groups(func, op, min_branches):
    by_input: dict = {}
    for n in post_order(func):
        if op_name(n) != ("nn.dense" if op == "batch" else op):
            continue
        key = _KEYS[op](n)
        if key is None:
            continue
        by_input.setdefault((n.args[0], key), []).append(n)
    return [g for g in by_input.values() if len(g) >= min_branches]


class _Combine(Rewriter):
    def __init__(self, groups, op):
        super().__init__()
        self.op = op
        self.member = {}
        for gi, g in enumerate(groups):
            for k, call in enumerate(g):
                self.member[call] = (gi, k)
        self.groups = groups
        self.built: dict = {}

    def _build(self, gi, data):
        g = self.groups[gi]
        weights = [self.rewrite(c.args[1]) for c in g]
        if self.op == "batch":  # (n, B, K) x (n, U, K)^T -> (n, B, U), one slice per branch
            x = make_call("stack", [make_call_tuple([data] * len(g))], axis=0)
            w = make_call("stack", [make_call_tuple(weights)], axis=0)
            out = make_call("nn.batch_matmul", [x, w], span=g[0].span,
                            out_dtype=g[0].attrs.out_dtype, transpose_a=False, transpose_b=True)
            return make_call("split", [out], indices_or_sections=len(g), axis=0)
        outs = [_shape(c.args[1])[0] for c in g]
        w = make_call("concatenate", [make_call_tuple(weights)], axis=0)
        first = g[0]
        if self.op == "nn.conv2d":
            fields = dict(first.attrs.items())
            fields["channels"] = sum(outs)
            combined = make_call("nn.conv2d", [data, w], span=first.span, **fields)
            axis = 1
        else:
            combined = make_call("nn.dense", [data, w], span=first.span, units=sum(outs),
                                 out_dtype=first.attrs.out_dtype)
            axis = -1
        points, acc = [], 0
        for o in outs[:-1]:
            acc += o
            points.append(acc)
        return make_call("split", [combined], indices_or_sections=tuple(points), axis=axis)

    def post_call(self, orig, new):
        m = self.member.get(orig)
        if m is None:
            return new
        gi, k = m
        split = self.built.get(gi)
        if split is None:
            split = self.built[gi] = self._build(gi, new.args[0])
        if self.op == "batch":
            return make_call("squeeze", [TupleGetItem(split, k)], axis=(0,), span=orig.span)
        return TupleGetItem(split, k, orig.span)


def make_call_tuple(fields):
    from ..ir.expr import Tuple

    return Tuple(fields)


def combine_parallel(func, op, min_num_branches):
    if op != "nn.conv2d":
        return _combine_dense(func, op == "batch", min_num_branches)
    groups = _groups(func, op, min_num_branches)
    if not groups:
        return func
    return _Combine(groups, op).rewrite(func)


# ---- dense: the branches' elementwise / broadcast operators join the combined call --------------
#
# Relay's ParallelOpCombiner: each dense starts a branch that goes on through its only consumer
# while that consumer is an elementwise or broadcast operator. Level by level, while every branch
# of a group has the same operator with the same attributes there (the branch's value in the
# same argument position, the other arguments of compatible types), the level is applied once to
# the combined value, its other arguments stacked (to_batch) or concatenated along the units
# (to_batch=False). The branches' values at the last combined level are then slices of it.

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


def _dense_groups(func, to_batch, min_branches, users):
    by_input: dict = {}
    for n in post_order(func):
        if op_name(n) != "nn.dense":
            continue
        x, w, y = _ttype(n.args[0]), _ttype(n.args[1]), _ttype(n)
        if x is None or w is None or y is None or len(w.shape) != 2:
            continue
        if to_batch:
            if len(x.shape) != 2:  # stacked into a 3-D batch_matmul
                continue
            key = (n.attrs.out_dtype, tuple(w.shape))
        else:
            key = (n.attrs.out_dtype, w.shape[1])
        by_input.setdefault((n.args[0], key), []).append(n)
    return [[_branch(d, users) for d in g] for g in by_input.values() if len(g) >= min_branches]


def _level_ok(branches, i, pidx, to_batch, axis):
    """Whether level ``i`` of every branch can be applied once to the combined value; ``pidx``
    is the position of the branch's value among the arguments at that level."""
    first = branches[0][i]
    fields = set(first.attrs.keys()) if first.attrs is not None else set()
    if fields & _AXIS_FIELDS and (to_batch or first.op.name != "expand_dims"):
        return False  # axes / shapes written for one branch's value, not the combined one
    parent_rank = len(_ttype(branches[0][i - 1]).shape)
    out_rank = len(_ttype(first).shape)
    if to_batch and out_rank != parent_rank:
        return False
    if not to_batch and len(first.args) > 1 and _units_axis(first, axis, parent_rank) != out_rank - 1:
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
            if to_batch:
                if tuple(ta.shape) != tuple(t0.shape) or len(ta.shape) > parent_rank:
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


class _DenseCombine(Rewriter):
    def __init__(self, groups, to_batch):
        super().__init__()
        self.to_batch = to_batch
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
        """The last level combined, and each level's units axis (to_batch=False)."""
        axes = [len(_ttype(g[0][0]).shape) - 1]
        depth = min(len(b) for b in g)
        for i in range(1, depth):
            pidx = next(j for j, a in enumerate(g[0][i].args) if a is g[0][i - 1])
            if not _level_ok(g, i, pidx, self.to_batch, axes[-1]):
                return i - 1, axes
            ax = _units_axis(g[0][i], axes[-1], len(_ttype(g[0][i - 1]).shape))
            if not self.to_batch and any(
                    _ttype(b[i]).shape[ax] != _ttype(b[0]).shape[-1] for b in g):
                return i - 1, axes
            axes.append(ax)
        return depth - 1, axes

    def _combined(self, gi):
        g, depth, axes = self.plans[gi]
        rw = self.rewrite
        data = rw(g[0][0].args[0])
        weights = [rw(b[0].args[1]) for b in g]
        out_dtype = g[0][0].attrs.out_dtype
        if self.to_batch:
            x = _mk.stack(Tuple([data] * len(g)), axis=0)
            w = _mk.stack(Tuple(weights), axis=0)
            val = _mk.nn.batch_matmul(x, w, out_dtype=out_dtype, transpose_a=False,
                                      transpose_b=True)
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
                if self.to_batch:
                    args.append(_mk.stack(Tuple(parts), axis=0))
                else:
                    nd = len(_ttype(first.args[j]).shape)
                    args.append(_mk.concatenate(Tuple(parts), axis=max(nd - 1, 0)))
            val = Call(first.op, args, first.attrs, span=first.span)
        return val

    def _arg_part(self, b, i, j):
        arg = self.rewrite(b[i].args[j])
        nd = len(_ttype(b[i].args[j]).shape)
        if self.to_batch:
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
            if self.to_batch:
                val = self.built[gi] = _mk.split(val, len(self.plans[gi][0]), axis=0).astuple()
        if self.to_batch:
            return _mk.squeeze(TupleGetItem(val, k), [0])
        g, depth, axes = self.plans[gi]
        axis = axes[depth]
        rank = len(_ttype(orig).shape)
        start = sum(_ttype(b[0].args[1]).shape[0] for b in g[:k])
        begin, end = [0] * rank, [-1] * rank
        begin[axis], end[axis] = start, _ttype(g[k][0].args[1]).shape[0]
        return _mk.strided_slice(val, begin=begin, end=end, strides=[1] * rank,
                                 slice_mode="size")


def _combine_dense(func, to_batch, min_branches):
    groups = _dense_groups(func, to_batch, min_branches, _consumers(func))
    if not groups:
        return func
    return _DenseCombine(groups, to_batch).rewrite(func)


def CombineParallelConv2D(min_num_branches: int = 3):  # noqa: N802 - Relay's name
    """Combine ``>= min_num_branches`` parallel conv2d on one input (opt level 4)."""
    return FunctionPass(lambda f, m, c: combine_parallel(f, "nn.conv2d", min_num_branches),
                        PassInfo(4, "CombineParallelConv2D", ("InferType",)))


def CombineParallelDense(min_num_branches: int = 3, to_batch: bool = True):  # noqa: N802
    """Combine ``>= min_num_branches`` parallel dense layers on one input (opt level 4):
    ``to_batch=True`` (tvm.relay's default) into one ``nn.batch_matmul`` of the stacked
    input and weights (2-D input, every weight of one ``(units, K)`` shape), then
    ``split`` + ``squeeze``; ``to_batch=False`` into one ``nn.dense`` on the weights
    concatenated along the units, then ``split``."""
    op = "batch" if to_batch else "nn.dense"
    return FunctionPass(lambda f, m, c: combine_parallel(f, op, min_num_branches),
                        PassInfo(4, "CombineParallelDense", ("InferType",)))


__all__ = ["CombineParallelConv2D", "CombineParallelDense"]

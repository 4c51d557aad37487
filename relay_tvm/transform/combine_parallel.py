"""CombineParallelConv2D and CombineParallelDense (opt level 4): several convolutions (dense
layers) that read the same input with the same attributes become one, on weights concatenated
along the output channels, followed by a ``split`` that hands each branch its slice.

After Relay's ``combine_parallel_conv2d.cc`` / ``combine_parallel_dense.cc``. The dense variant
has Relay's two forms: ``to_batch=True`` (the default) stacks the branches into one
``nn.batch_matmul`` (2-D inputs, weights of one shape), ``to_batch=False`` concatenates the
weights along the units. A group is combined when it has at least ``min_num_branches``
members. Only NCHW/OIHW convolutions with ``groups == 1``. The elementwise operators after
each branch stay per branch (Relay also folded them into the combined call).
"""

from __future__ import annotations

from ..ir.expr import TupleGetItem
from ..op.registry import make_call
from ._rewrite import Rewriter, op_name, post_order
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
    groups = _groups(func, op, min_num_branches)
    if not groups:
        return func
    return _Combine(groups, op).rewrite(func)


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

"""Depthwise-pointwise fusion: a depthwise convolution's kernel merged into the 1x1 convolution
that consumes it, for CPU targets (part of FuseOps, after the partition).

MobileNet-style blocks are a depthwise 3x3 convolution (and its bias, activation) feeding a
1x1 convolution. Fused by Relay's rules they are two kernels, and the depthwise one writes its
whole output plane to memory that the 1x1 kernel then reads back: that storage was last
written a whole run earlier, so each depthwise kernel pays for bringing cold lines in before
writing them (on two Zen 4 vCPUs MobileNet-1.0's 13 depthwise kernels took 0.24 ms alone and
0.57 ms inside the model's sequence, RESULTS.md 2026-12-07). Merged, one kernel computes, per
chunk of output rows, the depthwise rows of every channel into a small scratch buffer that the
1x1 convolution consumes while it is in L1/L2 (the schedule:
:func:`..backend.schedule.cpu_nchwc.schedule_depthwise_pointwise`).

The rewrite takes ``Call(fn_pw, [Call(fn_dw, a...), b...])`` where

- ``fn_dw``'s body is ``nn.contrib_depthwise_conv2d_NCHWc`` followed only by elementwise /
  broadcast operators (bias, activation), float32, one tensor out, and the call has no other
  user;
- ``fn_pw``'s anchor is ``nn.contrib_conv2d_NCHWc`` with a 1x1 kernel, unit strides and
  dilation, no padding, one group, float32, whose data is ``fn_pw``'s first parameter, used
  once;
- the plane has at least ``min_rows`` rows (the merged kernel runs its rows in parallel, all
  output channels of a row in one task: the depthwise rows must not be computed twice);

and makes it ``Call(fn, [a..., b...])`` with ``fn``'s body the 1x1 body over the depthwise body
(``Primitive=1``). Config ``relay.FuseOps.depthwise_pointwise`` (default True) turns it off.
"""

from __future__ import annotations

from ..ir.attrs import DictAttrs
from ..ir.expr import Call, Function, Var
from ..ir.functor import Rewriter, substitute
from ..ir.types import FuncType, TensorType
from ..op.registry import Op, OpPattern
from ..typing.infer import _closed, adopt_type
from ._rewrite import is_primitive, node_uses, post_order
from ._rewrite import type_of as _ty

OP_PW = "nn.contrib_conv2d_NCHWc"
OP_DW = "nn.contrib_depthwise_conv2d_NCHWc"
CONFIG = "relay.FuseOps.depthwise_pointwise"
# The fewest output rows of a merged pair: the merged kernel's parallel tasks are its rows
# (each computes the depthwise rows of every channel once), so smaller planes keep two kernels.
MIN_ROWS = 8
_TAIL_PATTERNS = (int(OpPattern.ELEMWISE), int(OpPattern.BROADCAST))


def _ints(v) -> tuple:
    return tuple(int(x) for x in v) if v is not None else ()


def _calls(fn: Function) -> list:
    return [n for n in post_order(fn.body) if type(n) is Call]


def _depthwise_fn(fn) -> bool:
    """``fn`` is a float32 depthwise NCHWc convolution followed by elementwise / broadcast
    operators that keep its shape."""
    calls = _calls(fn)
    if not calls or not all(isinstance(c.op, Op) for c in calls):
        return False
    dw = calls[0]
    if dw.op.name != OP_DW or any(int(c.op.pattern) not in _TAIL_PATTERNS for c in calls[1:]):
        return False
    ty, dty = _ty(fn.body), _ty(dw)
    return isinstance(ty, TensorType) and isinstance(dty, TensorType) and \
        ty.dtype == "float32" and tuple(ty.shape) == tuple(dty.shape) and \
        all(getattr(_ty(a), "dtype", None) == "float32" for a in dw.args)


def _pointwise_fn(fn):
    """The 1x1 NCHWc convolution call of ``fn`` (the only call not elementwise / broadcast)
    reading ``fn``'s first parameter (used only there), or None."""
    calls = _calls(fn)
    convs = [c for c in calls if isinstance(c.op, Op) and c.op.name == OP_PW]
    if len(convs) != 1 or any(isinstance(c.op, Op) and c is not convs[0]
                              and int(c.op.pattern) not in _TAIL_PATTERNS for c in calls):
        return None
    conv = convs[0]
    a = conv.attrs
    data, weight = conv.args
    if data is not fn.params[0] or not isinstance(_ty(weight), TensorType):
        return None
    wshape = tuple(_ty(weight).shape)
    if len(wshape) != 6 or wshape[2:4] != (1, 1) or set(_ints(a.strides)) != {1} \
            or set(_ints(a.padding)) != {0} or set(_ints(a.dilation)) != {1} \
            or int(a.groups) != 1:
        return None
    if any(getattr(_ty(x), "dtype", None) != "float32" for x in (data, weight, conv)):
        return None
    return conv if node_uses(fn.body).get(fn.params[0], 0) == 1 else None


def _merged(dw_call: Call, pw_call: Call, typed: Call) -> Call:
    """The call of the merged function (of the type of ``typed``, the original 1x1 call)."""
    fn_dw, fn_pw = dw_call.op, pw_call.op
    params, binds = [], {}
    for p in list(fn_dw.params) + list(fn_pw.params[1:]):
        q = Var(f"p{len(params)}", p.type_annotation)
        q._set_checked_type(p.type_annotation)
        params.append(q)
        binds[p] = q
    dw_body = substitute(fn_dw.body, {p: binds[p] for p in fn_dw.params})
    body = substitute(fn_pw.body, {**{p: binds[p] for p in fn_pw.params[1:]},
                                   fn_pw.params[0]: dw_body})
    ret = fn_pw.body.checked_type
    fn = Function(params, body, ret, (), DictAttrs({"Primitive": 1}), fn_pw.span)
    fn._set_checked_type(FuncType([p.type_annotation for p in params], ret), _closed(fn))
    return adopt_type(Call(fn, list(dw_call.args) + list(pw_call.args[1:]), None, (),
                           pw_call.span), typed)


class _Merge(Rewriter):
    def __init__(self, pairs: dict):
        super().__init__()
        self.pairs = pairs  # pw call -> dw call (originals)

    def post(self, orig, new):
        dw = self.pairs.get(orig)
        if dw is None:
            return new
        return _merged(self.memo[dw], new, orig)


def fuse_depthwise_pointwise(func: Function, min_rows: int) -> Function:
    """``func`` (a fused function: calls of primitive functions) with each depthwise kernel
    that feeds only a 1x1 convolution kernel merged into it (see the module doc); ``func``
    itself when there is none."""
    nodes = post_order(func.body)
    uses = node_uses(func.body)
    pairs = {}
    for n in nodes:
        if type(n) is not Call or not is_primitive(n.op) or not n.args:
            continue
        src = n.args[0]
        if type(src) is not Call or not is_primitive(src.op) or uses.get(src, 0) != 1:
            continue
        if _pointwise_fn(n.op) is None or not _depthwise_fn(src.op):
            continue
        shape = _ty(src.op.body).shape
        if len(shape) != 5 or not isinstance(shape[2], int) or shape[2] < min_rows:
            continue
        pairs[n] = src
    if not pairs:
        return func
    body = _Merge(pairs).rewrite(func.body)
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs, func.span)


__all__ = ["fuse_depthwise_pointwise", "CONFIG", "MIN_ROWS"]

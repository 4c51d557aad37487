"""Model statistics (tvm.relay.analysis): ``count_layers``, ``get_total_mac_number``,
``detect_feature`` / ``Feature`` and ``extract_fused_functions``."""

from __future__ import annotations

import enum

import numpy as np

from ..ir.adt import Constructor, Match
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import children
from ..ir.module import IRModule


def _post_order(expr):
    from ..transform._rewrite import post_order

    return post_order(expr, enter_primitive=True)


def _roots(expr):
    if isinstance(expr, IRModule):
        return list(expr.functions.values())
    return [expr]


def count_layers(expr, valid_ops) -> int:
    """The number of ``valid_ops`` calls on the deepest chain of the program (parallel
    branches count once, as in Relay's ``count_layers``).

    Args:
        expr: an expression, function or module.
        valid_ops: operator names (``["nn.conv2d", "nn.dense"]``).
    """
    from ..op.registry import Op

    valid = set(valid_ops)
    depth: dict = {}
    best = 0
    for root in _roots(expr):
        for n in _post_order(root):
            d = max((depth.get(c, 0) for c in children(n)), default=0)
            if type(n) is Call and isinstance(n.op, Op) and n.op.name in valid:
                d += 1
            depth[n] = d
            best = max(best, d)
    return best


def _shape(e):
    return tuple(int(d) for d in e.checked_type.shape)


def _macs(call) -> int:
    name = call.op.name
    a = call.attrs
    if name == "nn.conv2d":
        out = _shape(call)
        w = _shape(call.args[1])
        kl = a.kernel_layout
        i = w[kl.index("I")]
        kh, kw = w[kl.index("H")], w[kl.index("W")]
        return int(np.prod(out)) * i * kh * kw
    if name == "nn.conv2d_transpose":
        data = _shape(call.args[0])
        w = _shape(call.args[1])
        return int(np.prod(data)) * int(np.prod(w)) // w[0]
    if name in ("nn.dense", "nn.matmul"):
        out = _shape(call)
        return int(np.prod(out)) * _shape(call.args[0])[-1]
    if name == "nn.batch_matmul":
        out = _shape(call)
        return int(np.prod(out)) * _shape(call.args[0])[-1]
    return 0


def get_total_mac_number(expr) -> int:
    """Multiply-accumulate count of the convolutions, transposed convolutions, dense and batch
    matmul calls of a typed program (``relay.analysis.get_total_mac_number``)."""
    from ..op.registry import Op

    total = 0
    for root in _roots(expr):
        for n in _post_order(root):
            if type(n) is Call and isinstance(n.op, Op):
                total += _macs(n)
    return total


class Feature(enum.IntEnum):
    """Language features a program uses (``relay.analysis.Feature``)."""

    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15  # a node used more than once (sharing)
    fLetRec = 16  # a let whose value refers to its own variable


_KIND = {
    Var: Feature.fVar, GlobalVar: Feature.fGlobalVar, Constant: Feature.fConstant,
    Tuple: Feature.fTuple, TupleGetItem: Feature.fTupleGetItem, Function: Feature.fFunction,
    Call: Feature.fCall, Let: Feature.fLet, If: Feature.fIf, RefCreate: Feature.fRefCreate,
    RefRead: Feature.fRefRead, RefWrite: Feature.fRefWrite, Constructor: Feature.fConstructor,
    Match: Feature.fMatch,
}


def detect_feature(a, b=None) -> set:
    """The set of :class:`Feature` s used by an expression and/or a module (Relay's
    ``detect_feature(expr_or_mod, mod=None)``)."""
    from ..op.registry import Op

    roots = []
    for x in (a, b):
        if x is not None:
            roots.extend(_roots(x))
    feats: set = set()
    for root in roots:
        uses: dict = {}  # sharing is counted within each function, as 0.19 did
        for n in _post_order(root):
            if isinstance(n, Op):
                feats.add(Feature.fOp)
            else:
                feats.add(_KIND.get(type(n), Feature.fCall))
            kids = children(n)
            if type(n) is Let:
                kids = (n.value, n.body)
                from ..analysis.free import free_vars

                if isinstance(n.value, Function) and n.var in free_vars(n.value):
                    feats.add(Feature.fLetRec)
            elif type(n) is Function:
                kids = (n.body,)
            for c in kids:
                if type(c) in (Var, GlobalVar, Constant, Constructor) or isinstance(c, Op):
                    continue
                uses[c] = uses.get(c, 0) + 1
                if uses[c] > 1:
                    feats.add(Feature.fGraph)
    return feats


def extract_fused_functions(mod: IRModule) -> dict:
    """The primitive functions FuseOps makes of ``mod`` (after SimplifyInference, at fusion
    level 3), keyed by their structural hash (``relay.analysis.extract_fused_functions``)."""
    from ..transform import FuseOps, InferType, PassContext, Sequential, SimplifyInference
    from ..transform.pass_infra import derived_context
    from .structural import structural_hash

    with derived_context(3, PassContext.current().config):
        fused = Sequential([InferType(), SimplifyInference(), FuseOps(fuse_opt_level=3)])(mod)
    out = {}
    for f in fused.functions.values():
        for n in _post_order(f):
            if type(n) is Function and n.is_primitive:
                out.setdefault(structural_hash(n), n)
    return out


__all__ = [
    "count_layers",
    "get_total_mac_number",
    "detect_feature",
    "Feature",
    "extract_fused_functions",
]

"""FuseOps: group operators into primitive functions, one per kernel (Relay's fuse_ops.cc).

The algorithm is Relay's:

1. **Indexed forward graph.** Every dataflow node of a function (calls, tuples, tuple fields,
   variables, constants) gets an index in post-DFS order and a list of output edges, each
   labelled with a pattern kind: the consumer operator's pattern, except that a broadcast
   operator whose output shape equals the argument's shape is an elementwise edge. Nodes used by
   something fusion cannot see through (the function result, ``let``, ``if``, references,
   calls of non-operators) are *extern*.
2. **Post-dominator tree.** In reverse post-DFS order each node's parent is the least common
   ancestor, in the tree built so far, of its consumers; the tree node records the strongest
   (largest) pattern on the way.
3. **Partition** (three phases, union-find over groups). A node is fused into the group of its
   post-dominator when every node on every path between them satisfies the phase's rule:
   phase 0 fuses ``kOutEWiseFusable`` anchors (conv2d, dense) with elementwise/broadcast
   successors, and ``<= kBroadcast`` nodes into injective / reduction / anchor groups; phase 1
   fuses injective ops and tuples; phase 2 fuses injective ops into an intermediate tuple that
   was itself fused into its consumer. A group never grows beyond ``relay.FuseOps.max_depth``
   nodes (default 256).
4. **Rewrite.** Each group becomes ``Call(fn(p0, p1, ...) { ... }, args)`` with attribute
   ``Primitive=1``, as in tvm.relay; :func:`fused_function_name` gives its kernel name
   (``fused_nn_conv2d_add_nn_relu``: Relay's kernel naming, the operators in post order,
   truncated past 80 characters with a hash).

Scalar constants fuse (they are elementwise); other constants stay outside as arguments. Every
step is iterative: 100,000-node chains are fine. With ``fuse_opt_level == 0`` each operator is its
own primitive function.

Source of the semantics: TVM v0.19 ``src/relay/transforms/fuse_ops.cc`` and
``src/relay/analysis/graph_partitioner.cc``.
"""

from __future__ import annotations

import hashlib

from ..errors import RelayError
from ..ir.adt import Constructor
from ..ir.attrs import DictAttrs
from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.functor import children
from ..ir.types import AnyDim, FuncType, TensorType, TupleType, dim_equal
from ..op.registry import Op, OpPattern
from ..typing.infer import _closed, adopt_type
from ._rewrite import Rewriter, is_primitive, post_order, rebuild
from ._rewrite import type_of as _ctype
from .fuse_depthwise import CONFIG as FUSE_DW_CONFIG
from .fuse_depthwise import MIN_ROWS as DEPTHWISE_POINTWISE_MIN_ROWS
from .fuse_depthwise import fuse_depthwise_pointwise
from .pass_infra import Pass, PassContext, PassInfo, config_value

kElemWise = int(OpPattern.ELEMWISE)
kBroadcast = int(OpPattern.BROADCAST)
kInjective = int(OpPattern.INJECTIVE)
kCommReduce = int(OpPattern.COMM_REDUCE)
kOutEWiseFusable = int(OpPattern.OUT_ELEMWISE_FUSABLE)
kTuple = int(OpPattern.TUPLE)
kOpaque = int(OpPattern.OPAQUE)

DEFAULT_MAX_DEPTH = 256
MAX_FUNC_NAME_LENGTH = 80
_RESHAPE_OPS = frozenset(
    {"reshape", "squeeze", "expand_dims", "contrib_reverse_reshape", "reshape_like"}
)
_SIMPLE_CONST_DTYPES = frozenset({"int32", "int64", "float32", "float64", "bool"})


def _same_shape(a, b) -> bool:
    if a is b:  # one type object (relation results are shared): no need to compare dimensions
        return isinstance(a, TensorType)
    return (
        isinstance(a, TensorType) and isinstance(b, TensorType) and len(a.shape) == len(b.shape)
        and all(dim_equal(x, y) for x, y in zip(a.shape, b.shape))
    )


class IndexedForwardGraph:
    """The dataflow graph of one function body, nodes in post-DFS order.

    Attributes:
        nodes: the expressions, by index.
        index: ``node -> index``.
        outputs: per node, a list of ``(consumer index, edge pattern)``.
        pattern: per node, its own pattern kind.
        extern_ref: per node, whether something outside the dataflow uses it.
        fenced_tuple: whether some ``annotation.stop_fusion`` wraps a ``Tuple`` node (see
            :func:`_fence_fields`).
    """

    def __init__(self, body):
        nodes = [n for n in post_order(body) if not isinstance(n, Op)]
        self.nodes = nodes
        self.index = index = {n: i for i, n in enumerate(nodes)}
        n = len(nodes)
        self.outputs = outputs = [[] for _ in range(n)]
        self.pattern = pattern = [kOpaque] * n
        self.extern_ref = extern = [False] * n
        self.fenced_tuple = False

        def update(child, parent, pat):
            ci = index.get(child)
            if ci is None:  # an Op
                return
            if parent is None:
                extern[ci] = True
            else:
                outputs[ci].append((parent, pat))

        op_patterns: dict = {}
        for i, e in enumerate(nodes):
            t = type(e)
            if t is Call:
                op = e.op
                if isinstance(op, Op):
                    if op.name == "annotation.stop_fusion":  # its argument ends a kernel
                        if type(e.args[0]) is Tuple:
                            self.fenced_tuple = True
                        pattern[i] = kOpaque
                        update(e.args[0], None, kOpaque)
                        continue
                    op_pat = op_patterns.get(op)
                    if op_pat is None:
                        op_pat = op_patterns[op] = int(op.pattern)
                else:
                    op_pat = kOpaque
                    update(op, i, kOpaque)
                pattern[i] = op_pat
                rtype = getattr(e, "_checked_type", None)
                for a in e.args:
                    edge = op_pat
                    if edge == kBroadcast and _same_shape(rtype, getattr(a, "_checked_type", None)):
                        edge = kElemWise
                    ai = index.get(a)
                    if ai is not None:  # update(a, i, edge), inlined: the hottest loop here
                        outputs[ai].append((i, edge))
            else:
                self._non_call(i, e, t, update)
        if nodes:
            extern[index[body]] = True

    def _non_call(self, i, e, t, update):
        """The pattern and edges of a node that is not a call."""
        if t is Tuple:
            self.pattern[i] = kTuple
            for f in e.fields:
                if isinstance(_ctype(f), TensorType):
                    update(f, i, kInjective)
                else:
                    update(f, None, kOpaque)
        elif t is TupleGetItem:
            tt = _ctype(e.tuple_value)
            if isinstance(tt, TupleType) and all(isinstance(f, TensorType) for f in tt.fields):
                self.pattern[i] = kInjective
                update(e.tuple_value, i, kInjective)
            else:
                update(e.tuple_value, None, kOpaque)
        elif t is Constant:
            tt = e.tensor_type
            if not tt.shape and tt.dtype in _SIMPLE_CONST_DTYPES:
                self.pattern[i] = kElemWise
        elif t is Function:
            if not e.is_primitive:
                for c in children(e):
                    update(c, None, kOpaque)
        elif t in (Var, GlobalVar, Constructor):
            pass
        else:  # Let, If, Match, references: opaque uses
            for c in children(e):
                update(c, None, kOpaque)


class DominatorTree:
    """Post-dominator tree of an :class:`IndexedForwardGraph` (arrays indexed like its nodes)."""

    def __init__(self, graph: IndexedForwardGraph):
        n = len(graph.nodes)
        self.parent = parent = [-1] * n
        self.depth = depth = [0] * n
        self.pattern = tpat = [kOpaque] * n
        for i in range(n - 1, -1, -1):
            if graph.extern_ref[i]:
                depth[i] = 1
                continue
            outs = graph.outputs[i]
            if not outs:
                depth[i] = 1
                continue
            pat = kElemWise
            p = outs[0][0]
            pat = max(pat, outs[0][1])
            for j, epat in outs[1:]:
                # least common ancestor of p and j, combining the patterns climbed over
                a, b = p, j
                while a != b:
                    if a < 0 or b < 0:
                        a = -1
                        break
                    if depth[a] < depth[b]:
                        pat = max(pat, tpat[b])
                        b = parent[b]
                    elif depth[b] < depth[a]:
                        pat = max(pat, tpat[a])
                        a = parent[a]
                    else:
                        pat = max(pat, tpat[a], tpat[b])
                        a = parent[a]
                        b = parent[b]
                p = a
                pat = max(pat, epat)
                if p < 0:
                    break
            parent[i] = p
            depth[i] = depth[p] + 1 if p >= 0 else 1
            tpat[i] = pat


class GraphPartitioner:
    """Relay's partitioner: union-find groups over graph nodes, fused in three phases."""

    def __init__(self, graph: IndexedForwardGraph, opt_level: int, max_depth: int,
                 max_function_args: int = 0):
        self.graph = graph
        self.opt_level = opt_level
        self.max_depth = max_depth
        n = len(graph.nodes)
        self.gparent = list(range(n))
        self.gpattern = list(graph.pattern)
        self.gnum = [1] * n
        self.ganchor = [i if graph.pattern[i] == kOutEWiseFusable else -1 for i in range(n)]
        # the target's limit on kernel arguments (0: none), as 0.19 counted them: a tensor is one
        # argument, plus its rank + number of Any dimensions when its shape is dynamic
        self.max_args = max_function_args
        self.gargs = [self._own_args(e) for e in graph.nodes] if max_function_args > 0 else None
        self.postponed: dict = {}  # node -> [children whose fusion waits until it is visited]
        self.postpone_node = -1

    def find(self, g: int) -> int:
        gp = self.gparent
        root = g
        while gp[root] != root:
            root = gp[root]
        while gp[g] != root:
            gp[g], g = root, gp[g]
        return root

    def partition(self) -> list:
        """The root group of every node."""
        if self.opt_level > 0:
            tree = DominatorTree(self.graph)
            for phase in range(3):
                self._run_fuse(tree, phase)
        return [self.find(i) for i in range(len(self.graph.nodes))]

    # -- path checks, iterative versions of Relay's recursive helpers --
    def _check_path(self, src: int, sink: int, fcond) -> bool:
        outputs = self.graph.outputs
        visited = set()
        stack = [j for j, _ in outputs[src]]
        while stack:
            v = stack.pop()
            if v in visited:
                continue
            visited.add(v)
            if not fcond(self.gpattern[self.find(v)], v == sink):
                return False
            if v != sink:
                stack.extend(j for j, _ in outputs[v])
        return True

    def _nodes_between(self, src: int, sink: int) -> list:
        """``src`` and every node reachable from it before ``sink``."""
        outputs = self.graph.outputs
        visited = {src}
        order = [src]
        stack = [j for j, _ in outputs[src]]
        while stack:
            v = stack.pop()
            if v == sink or v in visited:
                continue
            visited.add(v)
            order.append(v)
            stack.extend(j for j, _ in outputs[v])
        return order

    def _merge(self, child: int, parent: int) -> None:
        child, parent = self.find(child), self.find(parent)
        if child == parent:
            return
        self.gnum[parent] += self.gnum[child]
        self.gparent[child] = parent
        # the pattern changes only when an anchor (conv2d, dense, ...) joins, as in Relay
        if self.gargs is not None:
            self.gargs[parent] += self.gargs[child]
        if self.ganchor[child] >= 0:
            self.ganchor[parent] = self.ganchor[child]
            self.gpattern[parent] = max(self.gpattern[child], self.gpattern[parent])

    # -- the argument limit (0.19's CountArgs_ / CountArgsLimit_ / CountFusedArgs) --
    @staticmethod
    def _extra_args(t, with_strides: bool = True) -> int:
        if not isinstance(t, TensorType):
            return 0
        anys = sum(1 for d in t.shape if isinstance(d, AnyDim))
        return anys + len(t.shape) if with_strides and anys else anys

    def _own_args(self, e) -> int:
        t = type(e)
        if t is Var:
            return 1 + self._extra_args(_ctype(e))
        ins = e.args if t is Call else e.fields if t is Tuple else ()
        return sum(1 + self._extra_args(_ctype(a)) for a in ins
                   if type(a) in (Var, TupleGetItem))

    def _count_args(self, src: int, update_postpone: bool = True) -> int:
        e = self.graph.nodes[src]
        total = self.gargs[src]
        seen = {self.find(src)}
        ins = e.args if type(e) is Call else e.fields if type(e) is Tuple else ()
        index = self.graph.index
        for a in ins:
            if type(a) is Var or a not in index:
                continue
            ai = index[a]
            prev = self.find(ai)
            if prev in seen:
                continue
            seen.add(prev)
            if self.gargs[prev] > 0:
                total += self.gargs[prev]
            elif update_postpone:
                self.postpone_node = src  # counted when src itself is visited
            else:
                total += self._count_args(ai, update_postpone)
        return total

    def _args_limit(self, child: int) -> int:
        outs = 0
        for j, _ in self.graph.outputs[child]:
            outs += 1
            o = self.graph.nodes[j]
            if type(o) is Call:
                outs += self._extra_args(_ctype(o), False)
        return self.max_args - outs if self.max_args > outs else 0

    def _fused_args(self, child: int) -> int:
        return max((self._count_args(j) for j, _ in self.graph.outputs[child]), default=0)

    def _run_postponed(self, nid: int, tree) -> None:
        """The fusions that waited for the arguments of node ``nid`` to be known."""
        self.postpone_node = -1
        for src in self.postponed.pop(nid, ()):
            if self._count_args(nid, False) <= self._args_limit(nid):
                sink = tree.parent[src]
                if self.ganchor[sink] >= 0:  # Relay reads the sink's own record
                    continue
                self._commit(src, sink)

    def _too_many_args(self, nid: int) -> bool:
        # Relay refuses first on the group size, then on the arguments; here the size check
        # (the costly one, without side effects) comes later
        limit = self._args_limit(nid)
        return limit > 0 and self._fused_args(nid) > limit

    def _commit(self, src: int, sink: int) -> None:
        if self.postpone_node >= 0:
            self.postponed.setdefault(self.postpone_node, []).append(src)
            return
        target = self.find(sink)
        for v in self._nodes_between(src, sink):
            self._merge(v, target)
            target = self.find(target)

    def _count_with_new_child(self, child: int, dom_parent: int) -> int:
        total = self.gnum[self.find(dom_parent)]
        for v in self._nodes_between(child, dom_parent):
            total += self.gnum[v]
        return total

    def _run_fuse(self, tree: DominatorTree, phase: int) -> None:
        n = len(self.graph.nodes)

        def upto_injective(kind, is_sink):
            return kind <= kInjective

        def upto_broadcast(kind, is_sink):
            return kind <= kBroadcast

        def into_anchor(kind, is_sink):
            if not is_sink:
                return kind <= kInjective
            return kind <= kBroadcast or kind in (kCommReduce, kInjective, kOutEWiseFusable)

        for nid in range(n):
            if self.max_args > 0:
                self._run_postponed(nid, tree)
            # Relay reads the node's own group record here, not its root's.
            gpat = self.gpattern[nid]
            if gpat == kOpaque:
                continue
            dparent = tree.parent[nid]
            if dparent < 0:
                continue
            if self.max_args > 0 and self._too_many_args(nid):
                continue
            # Relay checks the group size first; every condition here is free of side effects,
            # so the walk that counts the group's nodes runs last, only for a possible fusion
            if phase == 2:
                if gpat > kInjective:
                    continue
                dom_root = self.find(dparent)
                if self.gpattern[dom_root] == kTuple:
                    continue
                if self.gpattern[dparent] == kTuple and self.gpattern[dom_root] <= kInjective:
                    if (self._count_with_new_child(nid, dparent) <= self.max_depth
                            and self._check_path(nid, dparent, upto_injective)):
                        self._commit(nid, dparent)
                continue
            if self.find(nid) == self.find(dparent):
                continue
            if self.gpattern[dparent] == kTuple:  # do not fuse into a tuple (yet)
                continue
            if gpat == kOutEWiseFusable:
                if phase != 0 or tree.pattern[nid] != kElemWise:
                    continue
                cond = upto_broadcast
            elif gpat <= kBroadcast:
                dpat = tree.pattern[nid]
                if not (dpat <= kInjective or dpat == kCommReduce):
                    continue
                cond = into_anchor
            elif gpat in (kInjective, kTuple):
                if phase != 1:
                    continue
                cond = upto_injective
            else:
                continue
            if (self._count_with_new_child(nid, dparent) <= self.max_depth
                    and self._check_path(nid, dparent, cond)):
                self._commit(nid, dparent)


def fused_function_name(body) -> str:
    """Relay's kernel name for a fused function body: ``fused_`` + the operator names in post
    order, dots as underscores; past 80 characters, truncated with a hash of the full name."""
    return _name_of_calls([n for n in post_order(body) if type(n) is Call])


def _name_of_calls(calls) -> str:
    names = ["fused"]
    for n in calls:
        if isinstance(n.op, Op):
            names.append(n.op.name.replace(".", "_"))
    name = "_".join(names)
    if len(name) > MAX_FUNC_NAME_LENGTH:
        digest = hashlib.sha1(name.encode()).hexdigest()[:16]
        name = f"{name[:MAX_FUNC_NAME_LENGTH]}_{digest}_"
    return name


class _GroupInfo:
    __slots__ = ("params", "arguments", "by_arg")

    def __init__(self):
        self.params = []
        self.arguments = []
        self.by_arg = {}

    def param_for(self, new_arg, ty):
        p = self.by_arg.get(new_arg)
        if p is None:
            p = Var(f"p{len(self.params)}", ty)
            if ty is not None:
                p._set_checked_type(ty)  # a parameter's type is its annotation
            self.params.append(p)
            self.arguments.append(new_arg)
            self.by_arg[new_arg] = p
        return p


def _make_function(info: _GroupInfo, body, span):
    calls = [n for n in post_order(body) if type(n) is Call]
    # only Primitive: tvm.relay 0.19's fused functions carry no name (before/expected tests
    # compare them structurally); fused_function_name(fn.body) gives the kernel name
    attrs = {"Primitive": 1 if calls else 0}
    if calls and all(isinstance(c.op, Op) and c.op.name in _RESHAPE_OPS for c in calls):
        attrs["relay.reshape_only"] = 1
    # the return type is the body's, as 0.19's FuseOps annotated it (and as InferType fills in
    # a hand-written function's)
    body_type = _ctype(body)
    fn = Function(info.params, body, body_type, (), DictAttrs(attrs), span)
    if body_type is not None:
        # the types inference would give: (parameter annotations) -> body type, and the call
        # returns the body's type (see adopt_type)
        fn._set_checked_type(FuncType([p.type_annotation for p in info.params], body_type),
                             _closed(fn))
    return adopt_type(Call(fn, info.arguments, None, (), span), body)


class _FenceFields(Rewriter):
    """``stop_fusion((a, b, ...))`` -> ``(stop_fusion(a), stop_fusion(b), ...)``, every node
    keeping its type (stop_fusion is the identity)."""

    def post(self, orig, new):
        if type(new) is Call and isinstance(new.op, Op) \
                and new.op.name == "annotation.stop_fusion" and type(new.args[0]) is Tuple:
            tup = new.args[0]
            fields = [adopt_type(Call(new.op, [f], new.attrs, (), new.span), f)
                      for f in tup.fields]
            return adopt_type(Tuple(fields, tup.span), orig)
        return adopt_type(new, orig)


def _fence_fields(func: Function) -> Function:
    """Wrap each field of a tuple wrapped in ``annotation.stop_fusion`` instead (0.19's
    SplitArgs wraps a concatenate's input tuple): each field then ends its kernel, while the
    tuple itself still fuses into its consumer, which then takes the fields as tensors."""
    return _FenceFields().rewrite(func)


def fuse_function_body(func: Function, fuse_opt_level: int, max_depth: int,
                       link_params: bool = False, max_function_args: int = 0) -> Function:
    """Fuse the operators of one (typed) function; see the module docstring. With
    ``link_params`` a constant argument of a group goes into its primitive function instead of
    becoming a parameter (0.19's ``relay.FuseOps.link_params``); ``max_function_args > 0``
    keeps every group's kernel within that many arguments (outputs included)."""
    graph = IndexedForwardGraph(func)
    if graph.fenced_tuple:
        func = _fence_fields(func)
        graph = IndexedForwardGraph(func)
    groups = GraphPartitioner(graph, fuse_opt_level, max_depth, max_function_args).partition()
    index = graph.index
    ginfo: dict = {}
    new: dict = {}

    def group(e):
        return groups[index[e]]

    def new_args(args, g):
        info = ginfo.get(g)
        out = []
        for a in args:
            na = new.get(a, a)
            if a in index and group(a) != g:
                if link_params and type(na) is Constant:
                    out.append(na)
                    continue
                if info is None:
                    info = ginfo[g] = _GroupInfo()
                out.append(info.param_for(na, _ctype(a)))
            else:
                out.append(na)
        return out

    def is_root(e, g):
        # the union-find root of a group is its sink-most node (Relay's root_ref)
        return index[e] == g

    # a group of only Tuple/TupleGetItem nodes computes nothing: it stays unfused (a function
    # of it would be Primitive=0, which no backend runs)
    kernels = {group(e) for e in graph.nodes if type(e) is Call and isinstance(e.op, Op)}

    # Every node built here has the type of the node it replaces, with children of the same
    # types (parameters are annotated with their arguments' types): it adopts that type, so the
    # inference after fusion does not walk the program again (see typing.infer.adopt_type).
    for e in graph.nodes:
        t = type(e)
        if t is Call and isinstance(e.op, Op):
            if e.op.name == "annotation.stop_fusion":  # dropped: the argument ended its kernel
                new[e] = new.get(e.args[0], e.args[0])
                continue
            g = group(e)
            nc = adopt_type(Call(e.op, new_args(e.args, g), e.attrs, e.type_args, e.span), e)
            if is_root(e, g):
                nc = _make_function(ginfo.setdefault(g, _GroupInfo()), nc, e.span)
            new[e] = nc
        elif t is Tuple:
            g = group(e)
            if is_root(e, g) or g not in kernels:
                new[e] = adopt_type(rebuild(e, [new.get(f, f) for f in e.fields]), e)
            else:
                new[e] = adopt_type(Tuple(new_args(e.fields, g), e.span), e)
        elif t is TupleGetItem and index.get(e.tuple_value) is not None:
            g = group(e)
            if g not in kernels or (is_root(e, g) and group(e.tuple_value) != g):
                new[e] = adopt_type(rebuild(e, [new[e.tuple_value]]), e)
                continue
            node = adopt_type(TupleGetItem(new_args([e.tuple_value], g)[0], e.index, e.span), e)
            if is_root(e, g):
                node = _make_function(ginfo.setdefault(g, _GroupInfo()), node, e.span)
            new[e] = node
        elif is_primitive(e) or t in (Var, GlobalVar, Constant, Constructor):
            new[e] = e
        else:
            new[e] = adopt_type(
                rebuild(e, [c if isinstance(c, Op) else new[c] for c in children(e)]), e)
    return new[func]


def _max_depth(ctx: PassContext) -> int:
    return config_value(ctx.config, "relay.FuseOps.max_depth", DEFAULT_MAX_DEPTH)


def _target_max_function_args() -> int:
    """``max_function_args`` of the current ``tvm.target.Target`` (Metal 31, OpenCL 128; 0 for
    none, as for llvm and cuda), which 0.19's FuseOps respected."""
    import tvm

    target = tvm.target.Target.current(allow_none=True)
    if target is None:
        return 0
    return int(target.attrs.get("max_function_args", 0))


def _depthwise_pointwise_rows(ctx: PassContext) -> int:
    """The fewest output rows for which a depthwise kernel merges into the 1x1 kernel after it
    (:mod:`.fuse_depthwise`), 0 for none: CPU targets (the current target, the host's when
    none is set) only, unless ``relay.FuseOps.depthwise_pointwise`` is False."""
    if not config_value(ctx.config, FUSE_DW_CONFIG, True):
        return 0
    from .winograd_choice import target_features

    return 0 if target_features() is None else DEPTHWISE_POINTWISE_MIN_ROWS


class _FuseOps(Pass):
    def __init__(self, fuse_opt_level: int):
        super().__init__(PassInfo(0, "FuseOps", ("InferType",)))
        self.fuse_opt_level = fuse_opt_level

    def transform_module(self, mod, ctx):
        from ..typing.infer import infer_module

        level = self.fuse_opt_level if self.fuse_opt_level >= 0 else ctx.opt_level
        depth = _max_depth(ctx)
        link = config_value(ctx.config, "relay.FuseOps.link_params", False)
        max_args = _target_max_function_args()
        dw_rows = _depthwise_pointwise_rows(ctx) if level >= 1 else 0
        out = mod.copy()
        changed = False
        for gv, f in mod.functions.items():
            if f.is_primitive:
                continue
            nf = fuse_function_body(f, level, depth, bool(link), max_args)
            if dw_rows:
                nf = fuse_depthwise_pointwise(nf, dw_rows)
            if nf is not f:
                out[gv] = nf
                changed = True
        return infer_module(out) if changed else mod


def FuseOps(fuse_opt_level: int = -1) -> Pass:  # noqa: N802 - Relay's name
    """Fuse operators into primitive functions (opt level 0; fusing happens from level 1).

    Args:
        fuse_opt_level: ``-1`` takes the :class:`PassContext`'s ``opt_level``; ``0`` puts each
            operator in its own primitive function; ``>= 1`` fuses.

    The largest group has ``PassContext.config["relay.FuseOps.max_depth"]`` nodes (default 256).
    With ``config["relay.FuseOps.link_params"] = True`` constants are embedded in the primitive
    functions that use them rather than passed as arguments. Under a ``tvm.target.Target``
    with ``max_function_args`` (Metal, OpenCL) no kernel gets more arguments than that, as
    0.19 counted them (each tensor one, a dynamic shape adds its rank and its ``Any`` count).
    Each primitive function has the attribute ``Primitive=1`` (its kernel name:
    :func:`fused_function_name` of its body). Under a CPU target (the host's when no target
    is current), from level 1, a depthwise NCHWc convolution kernel feeding only a 1x1 NCHWc
    convolution kernel is merged into it (:mod:`.fuse_depthwise`; not in 0.19; config
    ``relay.FuseOps.depthwise_pointwise=False`` keeps them apart).
    The result is type-checked.
    """
    if isinstance(fuse_opt_level, bool) or not isinstance(fuse_opt_level, int) \
            or not -1 <= fuse_opt_level <= 4:
        raise RelayError(f"FuseOps: fuse_opt_level must be an int in -1..4 (-1: the "
                         f"PassContext's opt_level), got {fuse_opt_level!r}")
    return _FuseOps(fuse_opt_level)


__all__ = [
    "FuseOps",
    "IndexedForwardGraph",
    "DominatorTree",
    "GraphPartitioner",
    "fuse_function_body",
    "fused_function_name",
]

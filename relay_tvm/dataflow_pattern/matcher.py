"""Matching, rewriting and partitioning with dataflow patterns (semantics of tvm.relay 0.19's
``dataflow_matcher.cc``, written anew).

- **match**: a pattern node that matched an expression stays bound to it for the rest of the
  match (so a pattern used twice needs the same expression twice); ``add``/``multiply`` calls
  also match with swapped arguments, and ``(a * b) / c`` patterns match ``a * (b / c)``
  (and the reverse); type patterns type-check the expression first when needed.
- **grouping** (for rewrite and partition): expression nodes are tried from the output back;
  a match becomes a group when none of its inner nodes is used outside it (unless the group's
  root post-dominates that use) and none is in an earlier group. The group's inputs are the
  expressions matched by its leaf patterns (wildcards, variables; not operators, functions or
  constants matched by constant patterns) plus the arguments of ``CallPattern(op, None)`` /
  fields of ``TuplePattern(None)``.
- **rewrite**: each callback's groups are replaced by ``callback(pre, post, node_map)``,
  bottom-up; the callbacks run again until the program stops changing (at most 100 rounds).
- **partition**: each group becomes a call of a function (parameters ``FunctionVar_g_i``,
  attribute ``PartitionedFromPattern`` naming the operators, plus ``attrs``) on its inputs.

Traversals of the program are iterative; recursion is over the pattern only (patterns are
small).
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.base import RelayExpr
from ..ir.expr import Call, Constant, Function, If, Let, Tuple, TupleGetItem, Var
from ..ir.functor import children, post_order
from ..op.registry import Op
from .patterns import (
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
)

PARTITION_ATTR = "PartitionedFromPattern"


class _Graph:
    """The expression as a dataflow graph: post-order, users, and the post-dominator tree."""

    def __init__(self, expr):
        self.nodes = post_order(expr)
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        self.users = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            for c in children(n):
                self.users[id(c)].append(n)
        # immediate post-dominator: the lowest common ancestor of a node's users
        self.idom: dict = {}
        self.depth: dict = {}
        for n in reversed(self.nodes):
            us = self.users[id(n)]
            if not us:
                self.idom[id(n)], self.depth[id(n)] = None, 0
                continue
            cur = us[0]
            for u in us[1:]:
                cur = self._lca(cur, u)
                if cur is None:
                    break
            self.idom[id(n)] = cur
            self.depth[id(n)] = self.depth[id(cur)] + 1 if cur is not None else 0
        self.dom_children: dict = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            d = self.idom[id(n)]
            if d is not None:
                self.dom_children[id(d)].append(n)

    def _lca(self, a, b):
        while a is not None and b is not None and a is not b:
            if self.depth[id(a)] >= self.depth[id(b)]:
                a = self.idom[id(a)]
            else:
                b = self.idom[id(b)]
        return a if a is b else None

    def dominates(self, a, b) -> bool:
        """Whether ``a`` post-dominates ``b`` (every use path from ``b`` passes ``a``)."""
        while b is not None:
            if b is a:
                return True
            b = self.idom.get(id(b))
        return False


def _value(v):
    if hasattr(v, "value") and not isinstance(v, (list, tuple, dict)):
        v = v.value
    if isinstance(v, (list, tuple)) or type(v).__name__ in ("Array", "Shape"):
        return tuple(_value(x) for x in v)
    return v


def _attr_eq(want, have) -> bool:
    a, b = _value(want), _value(have)
    if a == b:
        return True
    try:
        from ..analysis.structural import structural_equal

        return bool(structural_equal(want, have))
    except Exception:  # noqa: BLE001 - values of kinds structural_equal does not compare
        return False


def _type_of(expr, mod=None):
    try:
        return expr.checked_type
    except RelayError:
        from ..typing.infer import infer_expr

        return infer_expr(expr, mod).checked_type


class _Matcher:
    def __init__(self, graph: _Graph | None = None, mod=None):
        self.graph = graph
        self.mod = mod
        self.memo: dict = {}  # pattern -> [expr]
        self.order: list = []
        self.memoize = True

    def match(self, pattern, expr) -> bool:
        self.memo.clear()
        self.order.clear()
        self.memoize = True
        return self.visit(pattern, expr)

    def _clear(self, watermark):
        for p in self.order[watermark:]:
            self.memo.pop(p, None)
        del self.order[watermark:]

    def visit(self, p, e) -> bool:
        if self.memoize and p in self.memo:
            return self.memo[p][0] is e
        watermark = len(self.order)
        ok = self._dispatch(p, e)
        if ok:
            self.memo.setdefault(p, []).append(e)
            self.order.append(p)
        else:
            self._clear(watermark)
        return ok

    def _dispatch(self, p, e) -> bool:
        t = type(p)
        if t is WildcardPattern:
            return p.pattern is None or self.visit(p.pattern, e)
        if t is ExprPattern:
            if isinstance(p.expr, Op) or isinstance(e, Op):
                return p.expr is e
            if p.expr is e:
                return True
            from ..analysis.structural import structural_equal

            return structural_equal(p.expr, e)
        if t is VarPattern:
            return type(e) is Var and (not p.name_hint or e.name_hint == p.name_hint)
        if t is ConstantPattern:
            return type(e) is Constant
        if t is CallPattern:
            return self._call(p, e)
        if t is AltPattern:
            return self.visit(p.left, e) or self.visit(p.right, e)
        if t is TuplePattern:
            return type(e) is Tuple and self._seq(p.fields, e.fields)
        if t is TupleGetItemPattern:
            return (type(e) is TupleGetItem and p.index in (-1, e.index)
                    and self.visit(p.tuple, e.tuple_value))
        if t is FunctionPattern:
            return (type(e) is Function and self._seq(p.params, e.params)
                    and self.visit(p.body, e.body))
        if t is IfPattern:
            return (type(e) is If and self.visit(p.cond, e.cond)
                    and self.visit(p.true_branch, e.true_branch)
                    and self.visit(p.false_branch, e.false_branch))
        if t is LetPattern:
            return (type(e) is Let and self.visit(p.var, e.var) and self.visit(p.value, e.value)
                    and self.visit(p.body, e.body))
        if t is AttrPattern:
            return self.visit(p.pattern, e) and self._attrs(p.attrs, e)
        if t in (TypePattern, DataTypePattern, ShapePattern):
            return self._typed(p, e)
        if t is DominatorPattern:
            return self._dominator(p, e)
        raise RelayError(f"dataflow pattern: unknown pattern kind {t.__name__}")

    def _seq(self, pats, exprs) -> bool:
        if pats is None:
            return True
        return len(pats) == len(exprs) and all(self.visit(p, x) for p, x in zip(pats, exprs))

    def _typed(self, p, e) -> bool:
        ty = _type_of(e, self.mod)
        if type(p) is TypePattern:
            from ..analysis.structural import structural_equal

            ok = structural_equal(p.type, ty)
        else:
            if not hasattr(ty, "dtype") or not hasattr(ty, "shape"):
                return False
            if type(p) is DataTypePattern:
                ok = str(ty.dtype) == p.dtype
            else:
                ok = len(ty.shape) == len(p.shape) and all(
                    _attr_eq(a, b) for a, b in zip(p.shape, ty.shape))
        return ok and self.visit(p.pattern, e)

    def _attrs(self, attrs: dict, e) -> bool:
        if isinstance(e, Op):
            for k, v in attrs.items():
                have = e.get_attr(k)
                if have is None or not _attr_eq(v, have):
                    return False
            return True
        if type(e) is Call:
            fields = dict(e.attrs.items()) if e.attrs is not None else {}
            return all(k in fields and _attr_eq(v, fields[k]) for k, v in attrs.items())
        if type(e) is Function:
            fields = dict(e.attrs.items()) if e.attrs is not None else {}
            return all(k in fields and _attr_eq(v, fields[k]) for k, v in attrs.items())
        return False

    def _call(self, p, e) -> bool:
        watermark = len(self.order)
        if type(e) is not Call:
            return False
        if self.visit(p.op, e.op):
            wm2 = len(self.order)
            if self._args(p.args, e.args, wm2):
                return True
            name = _op_name(p)
            if name in ("add", "multiply") and self._args(p.args[::-1], e.args, wm2):
                return True
            return False
        self._clear(watermark)
        # (a * b) / c  ~  a * (b / c)  and  (a / b) * c  ~  (a * c) / b
        name = _op_name(p)
        enames = [_expr_op_name(a) for a in e.args]
        if name == "divide" and isinstance(p.args[0], CallPattern) and \
                _op_name(p.args[0]) == "multiply" and _expr_op_name(e) == "multiply" and \
                "divide" in enames:
            mul_p = p.args[0]
            for i in (0, 1):
                div = CallPattern(p.op, [mul_p.args[i], p.args[1]])
                if self.visit(CallPattern(mul_p.op, [mul_p.args[1 - i], div]), e):
                    return True
                self._clear(watermark)
            return False
        if name == "multiply":
            for i in (0, 1):
                a = p.args[i]
                if isinstance(a, CallPattern) and _op_name(a) == "divide" and \
                        _expr_op_name(e) == "divide" and "multiply" in enames:
                    mul = CallPattern(p.op, [a.args[0], p.args[1 - i]])
                    return self.visit(CallPattern(a.op, [mul, a.args[1]]), e)
        return False

    def _args(self, pats, exprs, watermark) -> bool:
        ok = self._seq(pats, exprs)
        if not ok:
            self._clear(watermark)
        return ok

    # -- dominator patterns: child, reached from parent through path nodes only ----------------
    def _dominator(self, p, e) -> bool:
        if self.graph is None or id(e) not in self.graph.index:
            self.graph = _Graph(e)
        if not self.visit(p.child, e):
            return False
        ok = self._path(p, e)
        self.memoize = True
        return ok and self._dominates_parent(p, e)

    def _path(self, p, e) -> bool:
        # every input of e (not the callee, not a leaf of a call) matches parent, or matches
        # path and satisfies the same condition in turn; each such node has some input
        stack, seen = [e], {id(e)}
        while stack:
            node = stack.pop()
            counted = 0
            for inp in children(node):
                if type(node) is Call and (inp is node.op or type(inp) in (Constant, Var)):
                    continue
                counted += 1
                self.memoize = True
                if self.visit(p.parent, inp):
                    continue
                self.memoize = False
                if not self.visit(p.path, inp):
                    return False
                if id(inp) not in seen:
                    seen.add(id(inp))
                    stack.append(inp)
            if not counted:
                return False
        return True

    def _dominates_parent(self, p, e) -> bool:
        stack, seen = [e], set()
        while stack:
            cur = stack.pop()
            for n in self.graph.dom_children.get(id(cur), ()):
                if id(n) in seen:
                    continue
                seen.add(id(n))
                if self.visit(p.parent, n):
                    return True
                stack.append(n)
        return False


def _op_name(p):
    if isinstance(p, CallPattern) and type(p.op) is ExprPattern and isinstance(p.op.expr, Op):
        return p.op.expr.name
    return None


def _expr_op_name(e):
    if type(e) is Call and isinstance(e.op, Op):
        return e.op.name
    return None


def _check_input(expr, where: str, expected: str = "a relay.Expr"):
    """``expr`` if it is a Relay expression, else a RelayError naming ``where`` (the function
    and argument) and saying what to pass instead (``mod["main"]`` for an IRModule)."""
    if isinstance(expr, RelayExpr):
        return expr
    from ..ir.module import IRModule

    if isinstance(expr, IRModule):
        got = ('IRModule (it takes an expression, not a module: pass mod["main"], or each '
               "function of the module, and put the result back)")
    else:
        got = f"{type(expr).__name__} {expr!r:.80}"
    raise RelayError(f"{where}: expected {expected}, got {got}")


def _check_pattern(pattern, where: str):
    if not isinstance(pattern, DFPattern):
        raise RelayError(f"{where}: expected a DFPattern (is_op(...), wildcard(), ...), got "
                         f"{type(pattern).__name__} {pattern!r:.80}")
    return pattern


def match(pattern: DFPattern, expr) -> bool:
    """Whether ``expr`` matches ``pattern`` at its root."""
    _check_pattern(pattern, "match: pattern")
    return _Matcher().match(pattern, _check_input(expr, "match: expr"))


# ---- grouping ---------------------------------------------------------------------------------

def _pattern_nodes(pattern) -> list:
    out, seen, stack = [], set(), [(pattern, False)]
    while stack:
        p, ready = stack.pop()
        if ready:
            out.append(p)
            continue
        if id(p) in seen:
            continue
        seen.add(id(p))
        stack.append((p, True))
        for c in reversed(p.children()):
            stack.append((c, False))
    return out


class _Group:
    __slots__ = ("root", "node_map", "args", "function", "name", "_inner")


def _embed_const(matcher, e, p) -> bool:
    if type(e) is not Constant:
        return False
    if type(p) is ConstantPattern:
        return True
    if type(p) is ExprPattern:
        return type(p.expr) is Constant
    if type(p) is AltPattern:
        side = p.left if _Matcher().match(p.left, e) else p.right
        return _embed_const(matcher, e, side)
    return False


_NAME_OF = {Tuple: "Tuple_", Function: "Function", Let: "Let_", If: "If_"}


def _extract(root, inputs: dict):
    """``root`` with the ``inputs`` (id -> Var) substituted, the replaced nodes, and the name."""
    from ..transform._rewrite import rebuild

    nodes = post_order(root, lambda n: () if id(n) in inputs else children(n))
    memo, name = {}, []
    for n in nodes:
        if id(n) in inputs:
            memo[id(n)] = inputs[id(n)]
            continue
        memo[id(n)] = rebuild(n, [memo[id(c)] for c in children(n)])
        t = type(n)
        if t is Call:
            name.append(n.op.name + "_" if isinstance(n.op, Op) else "Call_")
        elif t is TupleGetItem:
            name.append(f"TupleGetItem{n.index}_")
        elif t in _NAME_OF:
            name.append(_NAME_OF[t])
        elif t.__name__ == "Match":
            name.append("Match_")
    inner = [n for n in nodes if id(n) not in inputs]
    return memo[id(root)], inner, "".join(name)


def group_matches(pattern, expr, mod=None):
    """The groups of ``pattern`` in ``expr``: ``(groups, gid_of)`` with ``gid_of`` mapping the
    id of every node inside a group to the group's index."""
    graph = _Graph(expr)
    matcher = _Matcher(graph, mod)
    pnodes = _pattern_nodes(pattern)
    groups: list = []
    gid_of: dict = {}
    pre_partitioned: set = set()
    graph_number = 0
    for node in reversed(graph.nodes):
        if id(node) in gid_of:
            continue
        if type(node) is Function and node.attrs is not None and \
                PARTITION_ATTR in dict(node.attrs.items()):
            pre_partitioned.add(id(node))
            pre_partitioned.update(id(n) for n in post_order(node.body))
        if id(node) in pre_partitioned or not matcher.match(pattern, node):
            continue
        group = _make_group(matcher, graph, pnodes, node, graph_number, gid_of)
        graph_number += 1
        if group is not None:
            groups.append(group)
            gid = len(groups) - 1
            for n in group._inner:
                gid_of[id(n)] = gid
    return groups, gid_of


def _make_group(matcher, graph, pnodes, root, graph_number, gid_of):
    node_map = {p: list(v) for p, v in matcher.memo.items()}
    fuzzy = set()
    for p in pnodes:
        if type(p) is DominatorPattern:
            for q in (p.parent, p.path):
                fuzzy.update(id(x) for x in node_map.get(q, ()))
        if type(p) is FunctionPattern:
            for f in node_map.get(p, ()):
                fuzzy.update(id(x) for x in post_order(f.body))
    inputs: dict = {}
    args, params = [], []

    def make_input(x, p):
        if id(x) in fuzzy or isinstance(x, Op) or type(x) is Function or \
                _embed_const(matcher, x, p) or id(x) in inputs:
            return
        v = Var(f"FunctionVar_{graph_number}_{len(params)}")
        inputs[id(x)] = v
        args.append(x)
        params.append(v)

    for p in pnodes:
        matches = node_map.get(p, ())
        if type(p) is TuplePattern and p.fields is None:
            for m in matches:
                for x in m.fields:
                    make_input(x, p)
        elif type(p) is CallPattern and p.args is None:
            for m in matches:
                for x in m.args:
                    make_input(x, p)
        elif not p.children():
            for m in matches:
                make_input(m, p)
    body, inner, name = _extract(root, inputs)
    inner_ids = {id(n) for n in inner}
    for n in inner:
        if isinstance(n, Op) or type(n) in (Function, Constant):
            continue
        if id(n) in gid_of:
            return None
        if n is root:
            continue
        for u in graph.users.get(id(n), ()):
            if id(u) not in inner_ids and not graph.dominates(root, u):
                return None
    g = _Group()
    g.root, g.node_map, g.args, g.name = root, node_map, args, name
    g.function = Function(params, body)
    g._inner = inner
    return g


def _apply(expr, groups, gid_of, replace):
    """Rebuild ``expr`` bottom-up; each group's root becomes ``replace(pre, post, group, memo)``."""
    from ..transform._rewrite import rebuild

    memo: dict = {}
    for n in post_order(expr):
        new = rebuild(n, [memo[id(c)] for c in children(n)])
        gid = gid_of.get(id(n))
        if gid is not None and groups[gid].root is n:
            new = replace(n, new, groups[gid], memo)
        memo[id(n)] = new
    return memo[id(expr)]


# ---- rewrite and partition --------------------------------------------------------------------

class DFPatternCallback:
    """A rewrite: subclasses set ``self.pattern`` and define ``callback(pre, post, node_map)``
    returning the replacement of a match (``node_map``: pattern -> [matched expressions, after
    rewriting below]).

    Args:
        require_type: type-check the program before matching (for type patterns / callbacks
            that read ``checked_type``).
        rewrite_once: stop applying this callback after the first round that changed the
            program.
    """

    def __init__(self, require_type: bool = False, rewrite_once: bool = False):
        self.pattern = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def rewrite(self, expr, mod=None):
        return rewrite(self, expr, mod)

    def callback(self, pre, post, node_map):
        raise NotImplementedError(f"{type(self).__name__}.callback")


def _infer(expr, mod):
    from ..typing.infer import infer_expr

    return infer_expr(expr, mod)


def rewrite(callbacks, expr, mod=None):
    """Apply the callbacks' rewrites to ``expr`` until it stops changing (tvm.relay's
    ``rewrite``).

    Raises:
        RelayError: ``expr`` is not a Relay expression (an IRModule: rewrite ``mod["main"]``),
            a callback without a pattern or returning something else than a Relay expression
            (or None), or 100 rounds without a fixpoint (callbacks undoing each other).
    """
    from ..analysis.structural import structural_equal

    _check_input(expr, "rewrite: expr")

    cbs = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]
    for cb in cbs:
        if not isinstance(getattr(cb, "pattern", None), DFPattern):
            raise RelayError(f"rewrite: callback {type(cb).__name__} has no pattern "
                             "(set self.pattern)")
    post, rounds, done = expr, 0, set()
    while True:
        last = post
        for cb in cbs:
            if id(cb) in done:
                continue
            before = post
            if cb.require_type:
                post = _infer(post, mod)
            groups, gid_of = group_matches(cb.pattern, post, mod)
            if groups:
                def replace(pre, new, g, memo, cb=cb):
                    node_map = {p: [memo.get(id(x), x) for x in v]
                                for p, v in g.node_map.items()}
                    out = cb.callback(pre, new, node_map)
                    if out is None:
                        return new
                    return _check_input(out, f"rewrite: {type(cb).__name__}.callback's "
                                             "result", "a relay.Expr (or None: keep the match)")

                post = _apply(post, groups, gid_of, replace)
            rounds += 1
            if cb.rewrite_once and not structural_equal(before, post, map_free_vars=True):
                done.add(id(cb))
        if structural_equal(last, post, map_free_vars=True):
            return post
        if rounds >= 100:
            raise RelayError("rewrite: 100 rounds without a fixpoint; do two callbacks undo "
                             "each other?")


def partition(pattern, expr, attrs=None, check=None):
    """Replace each match of ``pattern`` in ``expr`` by a call of a function holding it
    (attribute ``PartitionedFromPattern`` = the matched operators' names joined by ``_``, and
    ``attrs``); ``check(pre)`` may veto a match."""
    _check_pattern(pattern, "partition: pattern")
    _check_input(expr, "partition: expr")
    if isinstance(pattern, FunctionPattern):
        return expr
    groups, gid_of = group_matches(pattern, expr)
    if not groups:
        return expr

    def replace(pre, new, g, memo):
        if check is not None and not check(pre):
            return new
        func = g.function.with_attr(PARTITION_ATTR, g.name)
        for k, v in (attrs or {}).items():
            func = func.with_attr(k, v)
        return Call(func, [memo[id(a)] for a in g.args])

    return _apply(expr, groups, gid_of, replace)

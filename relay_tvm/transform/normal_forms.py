"""Normal forms: ToANormalForm, ToBasicBlockNormalForm, ToGraphNormalForm (opt level 1).

- **A-normal form** (Relay's ``to_a_normal_form.cc``): every compound expression (call, tuple,
  tuple field, if, match, reference operation, non-primitive function) is bound by a ``let``
  and used through its variable, so evaluation order is explicit. Constants, variables and
  primitive functions stay in place (relay_tvm keeps the callee of a fused kernel call inline,
  which is what the backends want).
- **Basic-block normal form** (``to_basic_block_normal_form.cc``): only expressions shared across
  blocks (used from more than one branch / function body / match clause, or from a block other
  than their own) are let-bound; the rest stays as dataflow.
- **Graph normal form** (``to_graph_normal_form.cc``): the inverse: each ``let`` whose value has
  no side effect is dissolved, its variable replaced by the value (shared as a graph). Unlike
  0.19, which dissolved every ``let``, a binding stays when its value (or a part of it) writes,
  reads or creates a reference, calls a function that is not a primitive operator (a closure or
  global may have effects) or calls a stateful operator: the executors evaluate a shared node
  again in each function body that uses it, so an inlined ``ref(0f)`` would give a fresh cell at
  each call, a moved ``ref_read`` could see a later write, and a dropped or duplicated call
  would lose or repeat its effects.

Each shared expression is placed in the innermost scope that encloses all its uses (Relay's
dependency-graph scoping), computed by least common ancestor over a scope tree. All traversals
are iterative.
"""

from __future__ import annotations

from ..analysis.basic_block import scope_opening_children
from ..ir.adt import Match
from ..ir.expr import (
    Call,
    Function,
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
from ._rewrite import Rewriter, is_primitive, rebuild
from .pass_infra import FunctionPass, PassInfo

_COMPOUND = (Call, Tuple, TupleGetItem, If, Match, RefCreate, RefRead, RefWrite, Function)


def _compound(e) -> bool:
    return type(e) in _COMPOUND and not is_primitive(e)


def _events(root):
    """Post-order of ``root`` with a ('bind', let) event right after each let's value."""
    out = []
    seen = set()
    stack = [(root, 0)]
    while stack:
        node, state = stack.pop()
        if state == 1:
            out.append(("node", node))
            continue
        if state == 2:
            out.append(("bind", node))
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, 1))
        if is_primitive(node):
            continue
        if type(node) is Let:
            stack.append((node.body, 0))
            stack.append((node, 2))
            stack.append((node.value, 0))
            continue
        for c in reversed(children(node)):
            if c not in seen:
                stack.append((c, 0))
    return out


class _Scopes:
    def __init__(self):
        self.parent = [-1]
        self.depth = [0]

    def new(self, parent: int) -> int:
        self.parent.append(parent)
        self.depth.append(self.depth[parent] + 1)
        return len(self.parent) - 1

    def lca(self, a: int, b: int) -> int:
        while a != b:
            if self.depth[a] >= self.depth[b]:
                a = self.parent[a]
            else:
                b = self.parent[b]
        return a


def _scopes_of(func: Function, order: list):
    """Where each node of ``func`` must be bound: ``(scope, multi, opened)`` with ``scope`` the
    innermost scope that holds every use of a node (the lowest common ancestor of its uses'
    scopes), ``multi`` the nodes used from more than one scope, and ``opened`` the scope that
    child ``i`` of node ``n`` opens, as ``(n, i) -> scope id`` (``order``: the nodes, children
    before parents)."""
    scopes = _Scopes()
    scope = {func.body: 0}
    first_req: dict = {func.body: 0}
    multi: set = set()
    opened: dict = {}  # (node, child index) -> scope id
    for n in reversed(order):
        if is_primitive(n) or n is func:
            continue
        s = scope.get(n, 0)
        kids = children(n)
        opens = scope_opening_children(n)
        for i, c in enumerate(kids):
            if type(n) is Function and i < len(n.params):
                continue
            if type(n) is Let and i == 0:
                continue
            req = scopes.new(s) if i in opens else s
            if i in opens:
                opened[(n, i)] = req
            if c in scope:
                if req != first_req[c]:
                    multi.add(c)
                scope[c] = scopes.lca(scope[c], req)
            else:
                scope[c] = req
                first_req[c] = req
    return scope, multi, opened


def to_normal_form(func: Function, mode: str) -> Function:
    """``mode`` is ``"anf"`` (bind every compound expression) or ``"bbnf"`` (bind only what is
    shared across blocks, plus the existing lets)."""
    events = _events(func)
    order = [n for kind, n in events if kind == "node"]
    scope, multi, opened = _scopes_of(func, order)
    # the root function's body is scope 0
    opened[(func, len(func.params))] = 0
    bindings: dict = {}
    atom: dict = {}  # node -> what users refer to
    let_value_var = {}
    for kind, n in events:
        if kind == "bind" and _compound(n.value):
            let_value_var.setdefault(n.value, n.var)

    def chain(sid, result):
        body = result
        for v, val, span in reversed(bindings.pop(sid, [])):
            body = Let(v, val, body, span)
        return body

    def mapped(n, i, c):
        sid = opened.get((n, i))
        if sid is not None:
            return chain(sid, atom[c])
        return atom.get(c, c)

    for kind, n in events:
        if kind == "bind":
            if not _compound(n.value) or let_value_var.get(n.value) is not n.var:
                bindings.setdefault(scope.get(n, 0), []).append((n.var, atom[n.value], n.span))
            continue
        if n is func:
            continue
        if not _compound(n):
            if type(n) is Let:
                atom[n] = atom[n.body]
            else:
                atom[n] = n
            continue
        kids = children(n)
        new = rebuild(n, [mapped(n, i, c) for i, c in enumerate(kids)])
        bind = mode == "anf" or n in let_value_var or n in multi
        if not bind:
            atom[n] = new
            continue
        v = let_value_var.get(n)
        if v is None:
            v = Var(f"x{len(atom)}", None)
        bindings.setdefault(scope.get(n, 0), []).append((v, new, n.span))
        atom[n] = v
    body = chain(0, atom.get(func.body, func.body))
    if body is func.body:
        return func
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs, func.span)


def _anf(func, mod, ctx):
    return to_normal_form(func, "anf")


def _bbnf(func, mod, ctx):
    return to_normal_form(func, "bbnf")


def ToANormalForm():  # noqa: N802 - Relay's name
    """Bind every compound expression with a ``let`` (opt level 1); see the module docstring."""
    return FunctionPass(_anf, PassInfo(1, "ToANormalForm"))


def ToBasicBlockNormalForm():  # noqa: N802 - Relay's name
    """Let-bind only the expressions shared across basic blocks (opt level 1)."""
    return FunctionPass(_bbnf, PassInfo(1, "ToBasicBlockNormalForm"))


def ToANormalFormExpr(expr):  # noqa: N802 - Relay's name
    """A-normal form of a bare expression (wrapped in a function while converting)."""
    if isinstance(expr, Function):
        return to_normal_form(expr, "anf")
    from ..analysis.free import free_vars

    return to_normal_form(Function(free_vars(expr), expr), "anf").body


# ---- graph normal form ---------------------------------------------------------------------------


def _stateful_op(op) -> bool:
    """Whether a call of operator ``op`` may have an effect of its own: one marked
    ``TOpIsStateful`` (``nn.dropout``, as in 0.19), ``debug`` (it runs a callback) and the
    memory / VM operators (they allocate or release storage)."""
    name = op.name
    if name == "debug" or name.startswith(("memory.", "vm.")):
        return True
    return bool(op.get_attr("TOpIsStateful"))


class EffectAnalysis:
    """Memoized :func:`has_effect` over many (shared) expressions: linear in total size.

    With ``ordered=True`` it also counts what must be evaluated exactly once and in its place:
    creating a reference (each evaluation allocates a new cell, so the value cannot be
    duplicated or shared into a function body evaluated at each call), reading one (its value
    depends on the writes before it) and calling a stateful operator."""

    def __init__(self, ordered: bool = False):
        self.cache: dict = {}
        self.ordered = ordered

    def __call__(self, expr) -> bool:
        from ..ir.adt import Constructor
        from ..op.registry import Op

        cache = self.cache
        if expr in cache:
            return cache[expr]
        ordered = self.ordered
        stack = [(expr, False)]
        while stack:
            e, ready = stack.pop()
            if e in cache:
                continue
            t = type(e)
            if t is Function:  # building a closure has no effect
                cache[e] = False
                continue
            kids = children(e)
            if not ready:
                stack.append((e, True))
                stack.extend((c, False) for c in kids if c not in cache)
                continue
            if t is Call:
                op = e.op
                if isinstance(op, Op):
                    eff = ordered and _stateful_op(op)
                else:
                    eff = not (isinstance(op, Constructor) or is_primitive(op))
            else:
                eff = t is RefWrite or (ordered and t in (RefCreate, RefRead))
            cache[e] = eff or any(cache[c] for c in kids)
        return cache[expr]


def has_effect(expr) -> bool:
    """Whether evaluating ``expr`` may have a side effect: it writes a reference or calls
    something other than an operator, a constructor or a primitive function (function bodies
    are not entered: building a closure has no effect)."""
    return EffectAnalysis()(expr)


class _ToGNF(Rewriter):
    has_let_hook = True

    def __init__(self):
        super().__init__()
        self.effect = EffectAnalysis(ordered=True)

    def after_let_value(self, let, new_value):
        if self._inlinable(let, new_value):
            self.memo[let.var] = new_value

    def _inlinable(self, let, value):
        if self.effect(value):
            return False
        if type(value) is Function:  # a local recursive function keeps its let
            from ..analysis.free import free_vars

            if let.var in free_vars(value):
                return False
        return True

    def post_let(self, orig, new):
        if type(new) is not Let:
            return new
        if self.memo.get(orig.var) is not orig.var:
            return new.body
        if new.body is new.var and type(new.value) is not Function:
            return new.value  # `let %v = e; %v` is `e`, evaluated once in the same place
        return new


def _gnf(func, mod, ctx):
    return _ToGNF().rewrite(func)


def ToGraphNormalForm():  # noqa: N802 - Relay's name
    """Dissolve the ``let`` s whose values have no side effect (opt level 1): a binding whose
    value creates, reads or writes a reference, or calls a closure, a global or a stateful
    operator, stays (see the module docstring)."""
    return FunctionPass(_gnf, PassInfo(1, "ToGraphNormalForm"))


__all__ = [
    "ToANormalForm",
    "ToANormalFormExpr",
    "ToBasicBlockNormalForm",
    "ToGraphNormalForm",
    "to_normal_form",
    "has_effect",
]

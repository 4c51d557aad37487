"""``recast``: run chosen operators at another dtype by casting around them (tvm.relay 0.19's
``relay.transform.recast``, python/tvm/relay/transform/recast.py).

Every call of a chosen operator gets its inputs cast to ``dtype`` (each field of a
``concatenate``'s tuple), its ``out_dtype`` attribute, where it has one, set to ``out_dtype``,
and its result cast back to the dtype it had, so the rest of the program is unchanged. This is
for measuring an operator at another precision (benchmarks, tuning), not a numerically careful
conversion: a float -> int8 recast truncates every value (see ``ToMixedPrecision`` for that).
"""

from __future__ import annotations

from ..analysis.model_stats import count_layers
from ..errors import RelayError
from ..ir.expr import Call, Function, Tuple
from ..ir.functor import ExprMutator, children
from ..ir.module import IRModule
from ..op.registry import Op, make_call


def _chain_depths(expr, valid) -> dict:
    """For each call, the number of chosen-operator calls above it on the path by which a
    depth-first walk from the output (callee first, arguments in order) first reaches it."""
    depth = {}
    stack = [(expr, 0)]
    while stack:
        node, d = stack.pop()
        if node in depth:
            continue
        depth[node] = d
        inner = d + 1 if _is_valid(node, valid) else d
        for c in reversed(children(node)):
            if c not in depth:
                stack.append((c, inner))
    return depth


def _is_valid(node, valid) -> bool:
    return type(node) is Call and isinstance(node.op, Op) and node.op.name in valid


class _Recast(ExprMutator):
    def __init__(self, root, dtype, out_dtype, valid, skip, mod):
        super().__init__()
        self.dtype, self.out_dtype, self.valid, self.mod = dtype, out_dtype, valid, mod
        self.depth = _chain_depths(root, valid)
        self.layers = count_layers(root, valid)
        self.skip = {s + self.layers if s < 0 else s for s in skip}
        self.root = root
        self.typed = False

    def _cast(self, e):
        return make_call("cast", [e], dtype=self.dtype)

    def _orig_dtype(self, call) -> str:
        if not self.typed:
            from ..typing.infer import infer_expr

            infer_expr(self.root, self.mod)
            self.typed = True
        return call.checked_type.dtype

    def visit_call(self, e):
        new = super().visit_call(e)
        if not _is_valid(e, self.valid) or self.layers - self.depth[e] - 1 in self.skip:
            return new
        args = list(new.args)
        if e.op.name == "concatenate":
            if len(args) != 1 or type(args[0]) is not Tuple:
                return new
            args = [Tuple([self._cast(f) for f in args[0].fields])]
        else:
            args = [self._cast(a) for a in args]
        attrs = e.attrs
        orig = None
        if attrs is not None and "out_dtype" in attrs.keys():
            fields = dict(attrs.items())
            orig = fields["out_dtype"] or None
            fields["out_dtype"] = self.out_dtype
            attrs = e.op.make_attrs(**fields)
        if orig is None:
            orig = self._orig_dtype(e)
        call = Call(new.op, args, attrs, new.type_args, new.span)
        return make_call("cast", [call], dtype=orig)


def recast(expr, dtype: str, out_dtype: str, ops=None, skip_layers=None, mod=None):
    """Cast the inputs of chosen operators to ``dtype`` and their results back.

    Args:
        expr: a ``Function``, an expression, or an ``IRModule`` (its ``main`` is recast and a
            new module returned).
        dtype: the dtype the chosen operators' inputs are cast to (e.g. ``"int8"``).
        out_dtype: the value given to their ``out_dtype`` attribute, where they have one
            (e.g. ``"int32"`` for an int8 convolution's accumulator).
        ops: operator names to recast (default ``["nn.conv2d"]``).
        skip_layers: layers left unchanged, numbered 0, 1, ... from the input side along the
            longest chain of chosen operators (negative numbers count from the output side,
            -1 being the last layer).
        mod: a module defining the globals ``expr`` refers to (for type inference).

    Returns:
        The same kind of object as ``expr``, each recast call wrapped in a ``cast`` back to its
        original dtype (from its ``out_dtype`` attribute, else from type inference).

    Raises:
        RelayError: ``expr`` is not an expression or module, or an operator name is unknown.
        TypeInferenceError: the program does not type-check.
    """
    from ..op import registry

    as_module = isinstance(expr, IRModule)
    if as_module:
        mod, expr = expr, expr["main"]
    ops = ["nn.conv2d"] if ops is None else list(ops)
    for name in ops:
        if not registry.is_registered(name):
            raise RelayError(f"recast: no operator named {name!r}")
    out = _Recast(expr, dtype, out_dtype, frozenset(ops), list(skip_layers or ()), mod).visit(expr)
    if as_module:
        if not isinstance(out, Function):
            raise RelayError("recast: the module's main is not a function")
        return IRModule.from_expr(out)
    return out


__all__ = ["recast"]

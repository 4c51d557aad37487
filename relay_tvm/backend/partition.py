"""The simplest fusion: every operator call becomes its own primitive function.

This is what FuseOps does at ``fuse_opt_level=0`` (Relay's behaviour at opt level 0); the backend
uses it when the FuseOps pass is not available, and on anything FuseOps leaves unfused (an
operator called directly from ``main``). Scalar constant arguments move into the primitive
function, so the kernel sees them as immediates; a tuple-expression argument (``concatenate``'s
input) moves in too, its fields becoming parameters.
"""

from __future__ import annotations

from ..errors import BuildError
from ..ir.attrs import DictAttrs
from ..ir.expr import Call, Constant, Function, Let, Tuple, TupleGetItem, Var
from ..ir.functor import dataflow_children
from ..ir.functor import post_order as _post_order
from ..ir.types import TensorType, TupleType


def post_order(expr) -> list:
    """The nodes of a dataflow program in post-order (each once), iteratively."""
    return _post_order(expr, dataflow_children)


def _is_scalar_const(e) -> bool:
    return isinstance(e, Constant) and e.data.ndim == 0


def _param_for(arg, name: str) -> Var:
    return Var(name, arg.checked_type)


def make_primitive(call: Call, new_args: list) -> Call:
    """``op(args)`` → ``(fn(params) {op(params)} with Primitive=1)(args)``."""
    params, outer_args, inner_args = [], [], []
    for a in new_args:
        if _is_scalar_const(a):
            inner_args.append(a)
        elif isinstance(a, Tuple):
            fields = []
            for f in a.fields:
                if _is_scalar_const(f):
                    fields.append(f)
                    continue
                p = _param_for(f, f"p{len(params)}")
                params.append(p)
                outer_args.append(f)
                fields.append(p)
            inner_args.append(Tuple(fields, a.span))
        else:
            p = _param_for(a, f"p{len(params)}")
            params.append(p)
            outer_args.append(a)
            inner_args.append(p)
    body = Call(call.op, inner_args, call.attrs, call.type_args, call.span)
    func = Function(params, body, call.checked_type, (), DictAttrs({"Primitive": 1}), call.span)
    return Call(func, outer_args, None, (), call.span)


def _callee(op) -> str:
    """What a call that the graph executor cannot compile calls, in words."""
    from ..ir.adt import Constructor
    from ..ir.expr import GlobalVar

    if isinstance(op, Let):  # e.g. relay_tvm.loops.while_loop's `(let %loop = fn ...; %loop)`
        return "a Let expression (a local function, such as a while loop)"
    if isinstance(op, GlobalVar):
        return f"the global function @{op.name_hint} (a non-primitive function)"
    if isinstance(op, Var):
        return f"the variable %{op.name_hint} (a closure)"
    if isinstance(op, Function):
        return "a non-primitive function (a closure)"
    if isinstance(op, Constructor):
        return f"the constructor {op.name_hint} (an ADT value)"
    return f"a {type(op).__name__} expression"


def partition_each_op(main: Function) -> Function:
    """Wrap every operator call of ``main`` (a typed dataflow function) in its own primitive
    function; calls of primitive functions are kept. Iterative, so deep programs are fine.

    Raises:
        BuildError: the program uses control flow, references, ADTs or closures.
    """
    from ..op.registry import Op

    memo: dict = {}
    for node in post_order(main.body):
        t = type(node)
        if t is Call:
            args = [memo[id(a)] for a in node.args]
            if isinstance(node.op, Op):
                if node.op.compute is None:
                    raise BuildError(
                        f"operator {node.op.name} has no TE compute registered, so it cannot be "
                        f"compiled; use the 'debug' executor", node.span
                    )
                new = make_primitive(node, args)
            elif isinstance(node.op, Function) and node.op.is_primitive:
                new = node if all(x is y for x, y in zip(args, node.args)) else Call(
                    node.op, args, node.attrs, node.type_args, node.span)
            else:
                raise BuildError(
                    "the graph executor compiles dataflow programs: calls of operators and "
                    f"primitive functions; got a call of {_callee(node.op)} (use the VM or "
                    "the debug executor)", node.span)
        elif t is Tuple:
            fields = [memo[id(f)] for f in node.fields]
            same = all(x is y for x, y in zip(fields, node.fields))
            new = node if same else Tuple(fields, node.span)
        elif t is TupleGetItem:
            v = memo[id(node.tuple_value)]
            new = node if v is node.tuple_value else TupleGetItem(v, node.index, node.span)
        elif t is Let:
            v, b = memo[id(node.value)], memo[id(node.body)]
            new = node if (v is node.value and b is node.body) else Let(node.var, v, b, node.span)
        elif t in (Var, Constant):
            new = node
        else:
            raise BuildError(
                f"the graph executor compiles dataflow programs; {t.__name__} is not supported "
                f"(use the VM or the debug executor)", getattr(node, "span", None))
        if new is not node and hasattr(node, "_checked_type"):
            try:
                new._set_checked_type(node.checked_type)
            except Exception:
                pass
        memo[id(node)] = new
    body = memo[id(main.body)]
    if body is main.body:
        return main
    return Function(main.params, body, main.ret_type, main.type_params, main.attrs, main.span)


def check_static(ty, where: str) -> None:
    """Raise BuildError unless ``ty`` is a tensor or (nested) tuple of static-shaped tensors."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, TensorType):
            if not all(isinstance(d, int) for d in t.shape):
                raise BuildError(
                    f"{where}: shape {t.shape} is not static; the graph executor needs static "
                    f"shapes (use the VM for dynamic shapes)")
        else:
            raise BuildError(f"{where}: type {t} is not a tensor or tuple of tensors")


__all__ = ["partition_each_op", "make_primitive", "post_order", "check_static"]

"""FoldConstant: evaluate the parts of a program that depend only on constants (opt level 2).

Relay's ``fold_constant.cc``: an operator call whose arguments are all constants (or tuples of
constants) is evaluated, here with the operator's NumPy reference kernel, exactly as the
reference interpreter would, and replaced by the resulting constant (a tuple of constants for
a tuple-typed result). ``let`` bindings of constants are inlined, a field of a tuple of
constants is that constant, and ``if`` with a constant condition keeps one branch.
``shape_of`` / ``ndarray_size`` of a tensor whose shape is static fold even when the tensor is
not constant; with a dynamic (``Any``) dimension they do not. Nothing that involves references
(``ref``, ``ref_read``, ``ref_write``) or calls of functions is folded, so side effects stay.
Primitive functions are left as they are.

As in 0.19, a call without arguments (``zeros((4, 5))``) is not folded (the constant would only
take room in the binary), nor a stateful operator (``nn.dropout``, or one a user marked with
``TOpIsStateful``), nor an operator that only describes a computation: memory / VM / device
annotations and the QNN operators, which 0.19 marked ``TNonComputational``. The QNN operators
fold only with ``FoldConstant(fold_qnn=True)`` (their reference kernels give the values that
0.19 computed from their canonical integer form).
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, If, Let, Tuple
from ..ir.types import TensorType, TupleType
from ..op.registry import Op
from ._rewrite import Rewriter, has_type, remember
from .pass_infra import FunctionPass, PassInfo

# Operators never folded: their value is not a function of their arguments alone, or they only
# describe a computation for later passes.
_SKIP_PREFIXES = ("random.", "annotation.", "on_device", "device_copy", "memory.", "vm.",
                  "call_lowered")
# QNN operators that 0.19 did not mark TNonComputational: they fold like any other operator.
_QNN_COMPUTATIONAL = frozenset({"qnn.avg_pool2d", "qnn.simulated_quantize",
                                "qnn.simulated_dequantize"})


def _foldable(op, fold_qnn: bool) -> bool:
    """Whether a call of ``op`` with constant arguments may be replaced by its value."""
    name = op.name
    if name.startswith(_SKIP_PREFIXES) or op.ref_impl is None:
        return False
    if op.get_attr("TOpIsStateful"):  # (nn.dropout): folding would freeze one draw
        return False
    if name.startswith("qnn.") and name not in _QNN_COMPUTATIONAL:
        return fold_qnn
    return not op.get_attr("TNonComputational")


def _is_const(e) -> bool:
    if type(e) is Constant:
        return True
    return type(e) is Tuple and all(_is_const(f) for f in e.fields)


def _value(e, copy: bool = False):
    """The value of a constant (tuple): a read-only view of its data, or a copy."""
    if type(e) is Constant:
        return np.array(e.data) if copy else np.asarray(e.data)
    return tuple(_value(f, copy) for f in e.fields)


def _to_expr(v, ty, span):
    if isinstance(ty, TupleType):
        return Tuple([_to_expr(x, t, span) for x, t in zip(v, ty.fields)], span)
    arr = np.asarray(v)
    if isinstance(ty, TensorType) and arr.dtype.name != ty.dtype:
        arr = arr.astype("bool" if ty.dtype == "bool" else ty.dtype)
    # the kernel's own result, or a view of its read-only inputs: held as is, not copied
    return Constant.adopt(arr, span)


def _static_shape(t) -> tuple | None:
    if isinstance(t, TensorType) and all(isinstance(d, int) for d in t.shape):
        return tuple(t.shape)
    return None


class _Fold(Rewriter):
    def __init__(self, fold_qnn: bool = False):
        super().__init__()
        self.fold_qnn = fold_qnn

    def post_call(self, orig, new):
        op = new.op
        if not isinstance(op, Op) or not new.args or not has_type(orig):
            return new
        if op.name in ("shape_of", "ndarray_size"):
            shape = _static_shape(getattr(orig.args[0], "_checked_type", None))
            if shape is None:
                return new  # a dynamic input: the shape is known only at run time
            dtype = new.attrs.dtype
            val = np.array(shape, dtype) if op.name == "shape_of" else np.array(np.prod(shape), dtype)
            return Constant(val, orig.span)
        if not all(_is_const(a) for a in new.args) or not _foldable(op, self.fold_qnn):
            return new
        out_type = orig.checked_type
        if isinstance(out_type, TensorType) and _static_shape(out_type) is None:
            return new
        try:  # the inputs as read-only views (a copy of each cost 2-3% of ResNet-50's build)
            res = op.ref_impl([_value(a) for a in new.args], new.attrs, out_type)
        except ValueError as e:  # a reference kernel that writes into its input: give copies
            if "read-only" not in str(e):
                raise
            res = op.ref_impl([_value(a, copy=True) for a in new.args], new.attrs, out_type)
        return _to_expr(res, out_type, orig.span)

    def post_tuple_getitem(self, orig, new):
        t = new.tuple_value
        if type(t) is Tuple:
            return t.fields[new.index]
        return new

    has_let_hook = True

    def after_let_value(self, let, new_value):
        if _is_const(new_value):
            self.memo[let.var] = new_value

    def post_let(self, orig, new):
        if type(new) is Let and _is_const(new.value):
            return new.body  # its uses already see the constant
        return new

    def post_if(self, orig, new):
        c = new.cond if type(new) is If else None
        if type(c) is Constant and c.data.ndim == 0:
            return new.true_branch if bool(c.data) else new.false_branch
        return new


def fold_constant_expr(expr, mod=None, fold_qnn: bool = False):
    """Fold the constant parts of a typed expression (``relay.transform.FoldConstantExpr``);
    ``fold_qnn`` also folds QNN operators.

    A folded ``let`` exposes new constants to its body, so folding repeats (a few rounds) until
    nothing changes; new nodes are re-typed between rounds."""
    from ..typing.infer import infer_expr

    for _ in range(8):
        out = _Fold(fold_qnn).rewrite(expr)
        if out is expr:
            break
        expr = out
        if not _needs_more(expr, fold_qnn):
            break
        infer_expr(expr, mod)
    return expr


def _needs_more(expr, fold_qnn: bool) -> bool:
    """Whether a call still has only constant arguments (or a let binds a constant)."""
    from ._rewrite import post_order

    for n in post_order(expr):
        t = type(n)
        if t is Let and _is_const(n.value):
            return True
        if t is Call and isinstance(n.op, Op) and n.args and all(_is_const(a) for a in n.args):
            if _foldable(n.op, fold_qnn):
                return True
    return False


FoldConstantExpr = fold_constant_expr


def _fold(func, mod, fold_qnn):
    # Relay's pipeline folds twice; a function the first run left as it was (nothing folds: a
    # fixpoint) would be walked again for nothing when the passes between changed nothing
    key = (id(func), fold_qnn)
    hit = _FIXPOINTS.get(key)
    if hit is not None and hit is func:
        return func
    out = fold_constant_expr(func, mod, fold_qnn)
    if out is func:
        remember(_FIXPOINTS, key, func)  # holding func keeps its id from being reused
    return out


_FIXPOINTS: dict = {}  # (id, fold_qnn) -> function that FoldConstant returned unchanged


def FoldConstant(fold_qnn: bool = False):  # noqa: N802 - Relay's name
    """Evaluate constant subexpressions (opt level 2); see the module docstring.

    Args:
        fold_qnn: also fold QNN operators (``qnn.quantize``, ``qnn.conv2d``, ...) whose
            arguments are constants; 0.19's default leaves them for QNN-aware passes.
    """
    fold_qnn = bool(fold_qnn)
    return FunctionPass(lambda f, m, c: _fold(f, m, fold_qnn), PassInfo(2, "FoldConstant", ("InferType",)))


__all__ = ["FoldConstant", "FoldConstantExpr", "fold_constant_expr"]

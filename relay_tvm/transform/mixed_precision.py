"""ToMixedPrecision: run a float32 program's operators in float16 where that is safe
(tvm.relay.transform.ToMixedPrecision; the op lists and rules follow Relay 0.19's
python/tvm/relay/transform/mixed_precision.py and to_mixed_precision.cc).

Each operator is in one category:

- ``ALWAYS`` (convolutions, dense, batch_matmul): floating-point arguments are cast to the mixed
  type and the operator runs there, accumulating in the mixed type too (``out_dtype``, as
  0.19's default lists did);
- ``FOLLOW`` (elementwise, data movement, pooling but averaging, ...): runs in the mixed type
  when every argument is a variable, a constant (both can be cast) or already in the mixed type
  (non-float arguments count as well), otherwise in float32;
- ``NEVER`` (exp, softmax, sums and means, ...: results much larger than the inputs, or long
  accumulations): arguments are cast back to float32.

A ``clip`` whose bounds the mixed type cannot represent stays float32. Operators in no list
follow their arguments (``missing_op_mode``: 0 raises, 1 warns, 2 is silent).
:func:`register_mixed_precision_conversion` takes 0.19's per-operator function
``f(call, mixed) -> [category, accumulation dtype, output dtype]``: ``[ALWAYS, "float32",
mixed]`` accumulates in float32 and casts the result. Casts are cached both ways (casting a
cast back gives the original value), so no ``cast(cast(x))`` pairs appear.
Function parameters keep their types; results of ``if`` branches and nested functions are cast
back to their original types; the main result is in the mixed type unless the PassContext option
``relay.ToMixedPrecision.keep_orig_output_dtype`` is true.
"""

from __future__ import annotations

import warnings

from ..errors import RelayError
from ..ir.expr import Call, Constant, Function, If, Let, Tuple, TupleGetItem, Var
from ..ir.functor import _METHOD, ExprFunctor
from ..ir.types import TensorType, TupleType
from .pass_infra import ModulePass, PassContext, PassInfo, config_value

MIXED_PRECISION_ALWAYS, MIXED_PRECISION_FOLLOW, MIXED_PRECISION_NEVER = 0, 1, 2

DEFAULT_ALWAYS_LIST = [
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.dense", "nn.batch_matmul", "nn.matmul",
]
DEFAULT_FOLLOW_LIST = [
    "nn.pad", "nn.batch_flatten", "concatenate", "zeros", "split", "squeeze", "transpose",
    "expand_dims", "reshape", "broadcast_to_like", "broadcast_to", "strided_slice", "take",
    "where", "tile", "scatter_elements", "scatter_nd", "full", "nn.depth_to_space", "less",
    "greater", "less_equal", "greater_equal", "copy", "cast", "cast_like", "add", "subtract",
    "multiply", "divide", "nn.bias_add", "nn.batch_norm", "sqrt", "shape_of", "max", "min",
    "maximum", "minimum", "argmax", "argmin", "nn.relu", "nn.leaky_relu", "nn.prelu",
    "nn.dropout", "sigmoid", "tanh", "fast_tanh", "fast_exp", "fast_erf", "clip",
    "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
    "nn.avg_pool3d", "nn.global_max_pool2d", "nn.adaptive_max_pool1d", "nn.adaptive_max_pool2d",
    "nn.adaptive_max_pool3d", "image.resize2d", "layout_transform",
]
DEFAULT_NEVER_LIST = [
    "exp", "power", "nn.cross_entropy", "nn.cross_entropy_with_logits", "nn.softmax",
    "nn.log_softmax", "nn.l2_normalize", "erf", "arange", "nn.global_avg_pool2d",
    "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool3d", "sum", "mean",
    "variance", "nn.layer_norm",
]
_CATEGORY = {}
for _cat, _names in ((MIXED_PRECISION_ALWAYS, DEFAULT_ALWAYS_LIST),
                     (MIXED_PRECISION_FOLLOW, DEFAULT_FOLLOW_LIST),
                     (MIXED_PRECISION_NEVER, DEFAULT_NEVER_LIST)):
    for _n in _names:
        _CATEGORY[_n] = _cat


CONVERSION_KEY = "FTVMMixedPrecisionConversionType"


def register_mixed_precision_conversion(op_name: str, func=None, level: int = 10):
    """How ``op_name`` converts (tvm.relay 0.19's ``relay.op.register_mixed_precision_conversion``).

    Args:
        op_name: the operator.
        func: ``func(call, mixed_dtype) -> [category, accumulation dtype, output dtype]``
            (0.19's form: e.g. ``[MIXED_PRECISION_ALWAYS, "float32", "float16"]`` accumulates a
            convolution in float32 and casts its result to float16), or just a category
            (``MIXED_PRECISION_ALWAYS`` / ``FOLLOW`` / ``NEVER``; accumulation and output in
            the mixed type). None: a decorator.
        level: the priority of a function registered (0.19's rule; > 10 overrides).

    Raises:
        RelayError: a category that is not 0, 1 or 2.
    """
    if func is None:
        return lambda f: register_mixed_precision_conversion(op_name, f, level)
    if isinstance(func, int):
        if func not in (0, 1, 2):
            raise RelayError(f"register_mixed_precision_conversion: category {func!r} is not "
                             f"0 (always), 1 (follow) or 2 (never)")
        _CATEGORY[op_name] = func
        return func
    from ..op.op_attrs import register_op_attr

    return register_op_attr(op_name, CONVERSION_KEY, func, level)


# operators whose ``out_dtype`` is the accumulation dtype (Relay's GetNewAttrs), and those whose
# ``dtype`` is their output dtype (InitOpAttrs)
_OUT_DTYPE_OPS = frozenset({
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.contrib_conv2d_winograd_without_weight_transform",
    "nn.contrib_conv2d_winograd_nnpack_weight_transform", "nn.deformable_conv2d",
    "nn.contrib_conv3d_winograd_without_weight_transform", "nn.dense", "nn.batch_matmul"})
_DTYPE_OPS = frozenset({"zeros", "ones", "full"})
_FLOAT16_MAX, _BFLOAT16_MAX = 65504.0, 3.3895313892515355e38


def _retype(t, src, dst):
    """``t`` with every ``src`` tensor made ``dst``."""
    if isinstance(t, TensorType):
        return TensorType(t.shape, dst) if t.dtype == src else t
    if isinstance(t, TupleType):
        return TupleType([_retype(f, src, dst) for f in t.fields])
    return t


class _Mixed(ExprFunctor):
    def __init__(self, mixed, missing_op_mode):
        super().__init__()
        self.mixed, self.missing = mixed, missing_op_mode
        self.types = {}  # new node -> its type
        self.casts = {}
        self.missing_ops = set()

    # children first for every kind but Let (visit_let walks let chains itself)
    _children_first = frozenset(k for k in _METHOD if k is not Let)

    def ret(self, node, ty):
        self.types[node] = ty
        return node

    def cast(self, e, ty):
        """``e`` converted to type ``ty`` (tensors and tuples of tensors)."""
        have = self.types.get(e, ty)
        if have == ty:
            return e
        if isinstance(ty, TensorType) and isinstance(have, TensorType):
            key = (e, ty.dtype)
            out = self.casts.get(key)
            if out is None:
                from ..op.transform import cast

                out = self.ret(cast(e, ty.dtype), ty)
                self.casts[key] = out
                # casting the cast back gives the original (no cast pairs, as Relay's cache)
                self.casts[(out, have.dtype)] = e
            return out
        if isinstance(ty, TupleType) and isinstance(have, TupleType):
            fields = e.fields if isinstance(e, Tuple) else [
                self.ret(TupleGetItem(e, i), f) for i, f in enumerate(have.fields)]
            return self.ret(Tuple([self.cast(f, t) for f, t in zip(fields, ty.fields)]), ty)
        return e

    def visit_var(self, e):
        return self.ret(e, e.checked_type)

    def visit_global_var(self, e):
        return e

    def visit_constant(self, e):
        return self.ret(e, e.checked_type)

    def visit_op(self, e):
        return e

    def visit_constructor(self, e):
        return e

    def visit_tuple(self, e):
        fields = [self.visit(f) for f in e.fields]
        return self.ret(Tuple(fields, e.span), TupleType([self.types.get(f) for f in fields]))

    def visit_tuple_getitem(self, e):
        t = self.visit(e.tuple_value)
        ty = self.types.get(t)
        fty = ty.fields[e.index] if isinstance(ty, TupleType) else e.checked_type
        return self.ret(TupleGetItem(t, e.index, e.span), fty)

    def visit_let(self, e):
        """A let chain, iteratively; each variable is rebound with its value's new type."""
        chain = []
        while isinstance(e, Let):
            value = self.visit(e.value)
            ty = self.types.get(value, e.var.checked_type)
            var = self.ret(Var(e.var.name_hint, ty, e.var.span), ty)
            self.memo_map[e.var] = var
            chain.append((var, value, e.span))
            e = e.body
        body = self.visit(e)
        ty = self.types.get(body)
        for var, value, span in reversed(chain):
            body = self.ret(Let(var, value, body, span), ty)
        return body

    def visit_if(self, e):
        cond = self.visit(e.cond)
        t = self.cast(self.visit(e.true_branch), e.checked_type)
        f = self.cast(self.visit(e.false_branch), e.checked_type)
        return self.ret(If(cond, t, f, e.span), e.checked_type)

    def visit_function(self, e):
        body = self.cast(self.visit(e.body), e.body.checked_type)
        return self.ret(Function(e.params, body, e.ret_type, e.type_params, e.attrs, e.span),
                        e.checked_type)

    def visit_call(self, e):
        from ..op.registry import Op

        args = [self.visit(a) for a in e.args]
        op = e.op
        if not isinstance(op, Op):
            callee = self.visit(op)
            ft = getattr(op, "_checked_type", None)
            if ft is not None and hasattr(ft, "arg_types"):
                args = [self.cast(a, t) for a, t in zip(args, ft.arg_types)]
            return self.ret(Call(callee, args, e.attrs, e.type_args, e.span), e.checked_type)
        cat, accum, out = self.descriptor(e)
        fp32, mixed = "float32", self.mixed
        if cat == MIXED_PRECISION_FOLLOW:
            # variables and constants can always be cast; other floats must already be mixed
            ok = all(type(a) in (Var, Constant) or self._all_dtype(self.types.get(a), mixed)
                     for a in args)
            cat = MIXED_PRECISION_ALWAYS if ok else MIXED_PRECISION_NEVER
        attrs = e.attrs
        if cat == MIXED_PRECISION_ALWAYS and self._attrs_fit(op.name, attrs):
            args = [self.cast(a, _retype(o.checked_type, fp32, mixed))
                    for a, o in zip(args, e.args)]
            attrs = self._accumulate(op.name, attrs, accum)
            call = Call(op, args, attrs, (), e.span)
            self.ret(call, self._out_type(call, e))
            return self.cast(call, _retype(self.types[call], accum, out)) if accum != out \
                else call
        args = [self.cast(a, o.checked_type) for a, o in zip(args, e.args)]
        return self.ret(Call(op, args, attrs, (), e.span), e.checked_type)

    def descriptor(self, e):
        """``(category, accumulation dtype, output dtype)`` of a call (Relay's
        FTVMMixedPrecisionConversionType; an operator in no list follows its arguments)."""
        from ..op.op_attrs import get_op_attr

        name = e.op.name
        func = get_op_attr(name, CONVERSION_KEY)
        if func is not None:
            d = list(func(e, self.mixed))
            if len(d) != 3 or int(d[0]) not in (0, 1, 2):
                raise RelayError(f"ToMixedPrecision: the conversion function of {name} returned "
                                 f"{d!r}; expected [category 0/1/2, accumulation dtype, output "
                                 f"dtype]")
            return int(d[0]), str(d[1]), str(d[2])
        cat = _CATEGORY.get(name)
        if cat is None:
            if self.missing == 0:
                raise RelayError(f"ToMixedPrecision: operator {name} is in no list (always / "
                                 f"follow / never); register it with "
                                 f"register_mixed_precision_conversion")
            self.missing_ops.add(name)
            cat = MIXED_PRECISION_FOLLOW
        return cat, self.mixed, self.mixed

    def _attrs_fit(self, name, attrs) -> bool:
        """A clip whose bounds the mixed type cannot hold stays float32."""
        if name != "clip" or attrs is None:
            return True
        bound = {"float16": _FLOAT16_MAX, "bfloat16": _BFLOAT16_MAX}.get(self.mixed)
        return bound is None or (attrs.a_min >= -bound and attrs.a_max <= bound)

    @staticmethod
    def _accumulate(name, attrs, accum):
        if attrs is None:
            return attrs
        key = "out_dtype" if name in _OUT_DTYPE_OPS else "dtype" if name in _DTYPE_OPS else None
        if key is None or key not in attrs:
            return attrs
        cur = attrs[key] or ""
        if cur == "" or cur.startswith(("float", "bfloat")):
            return attrs.with_fields(**{key: accum})
        return attrs

    def _out_type(self, call, orig):
        """The type of a rebuilt call, from its operator's relation on the new argument types."""
        rel = getattr(call.op, "type_rel", None)
        types = [self.types.get(a) for a in call.args]
        if rel is not None and all(t is not None for t in types):
            res = rel(types, call.attrs)
            if isinstance(res, tuple):
                res = res[0]
            if res is not None:
                return res
        return _retype(orig.checked_type, "float32", self.mixed)

    @staticmethod
    def _has_dtype(t, dtype):
        if isinstance(t, TensorType):
            return t.dtype == dtype
        if isinstance(t, TupleType):
            return any(_Mixed._has_dtype(f, dtype) for f in t.fields)
        return False

    @staticmethod
    def _all_dtype(t, dtype):
        if isinstance(t, TensorType):
            return t.dtype == dtype or not t.dtype.startswith("float")
        if isinstance(t, TupleType):
            return all(_Mixed._all_dtype(f, dtype) for f in t.fields)
        return False


def to_mixed_precision(func: Function, mixed="float16", missing_op_mode=1, keep_output=False):
    """The conversion of the module docstring on the typed function ``func``."""
    conv = _Mixed(mixed, missing_op_mode)
    body = conv.visit(func.body)
    if keep_output:
        body = conv.cast(body, func.body.checked_type)
    if conv.missing_ops and missing_op_mode == 1:
        warnings.warn(f"ToMixedPrecision: operators in no list stay float32: "
                      f"{sorted(conv.missing_ops)}", stacklevel=3)
    return Function(func.params, body, None, func.type_params, func.attrs, func.span)


def ToMixedPrecision(mixed_precision_type="float16", missing_op_mode=1):  # noqa: N802
    """Rewrite float32 computation to ``mixed_precision_type`` where safe (opt level 0); see the
    module docstring.

    Args:
        mixed_precision_type: ``"float16"`` (or ``"bfloat16"``).
        missing_op_mode: 0: an operator in no list raises; 1: warns; 2: silent.

    Raises:
        RelayError: ``missing_op_mode=0`` and an operator is in no list; a bad mode.
    """
    if missing_op_mode not in (0, 1, 2):
        raise RelayError(f"ToMixedPrecision: missing_op_mode {missing_op_mode!r} is not 0, 1 "
                         f"or 2")

    def run(mod, ctx):
        from ..typing.infer import infer_module

        keep = config_value(PassContext.current().config or {},
                            "relay.ToMixedPrecision.keep_orig_output_dtype", False)
        mod = infer_module(mod)
        out = mod.copy()
        for gv, f in mod.functions.items():
            if not f.is_primitive:
                out[gv] = to_mixed_precision(f, mixed_precision_type, missing_op_mode, keep)
        return infer_module(out)

    return ModulePass(run, PassInfo(0, "ToMixedPrecision"))


__all__ = ["ToMixedPrecision", "to_mixed_precision", "register_mixed_precision_conversion",
           "MIXED_PRECISION_ALWAYS", "MIXED_PRECISION_FOLLOW", "MIXED_PRECISION_NEVER",
           "DEFAULT_ALWAYS_LIST", "DEFAULT_FOLLOW_LIST", "DEFAULT_NEVER_LIST"]

"""``qconfig(partition_conversions="enabled" | "fully_integral")``: a quantized module split
into its input quantization, its integer core and its output dequantization (tvm.relay 0.19's
``relay.quantize._partition_conversions``, re-implemented).

The result has four functions: ``@quantize_inputs`` (the parameters through the conversion
operators up to the first other operator that reads them; returns a tuple, one field per
core parameter), ``@quantized_main`` (the rest, up to the last expressions of a quantized
dtype), ``@dequantize_outputs`` (what follows them) and ``@main`` (the three called in turn,
taking the original parameters). "fully_integral" then requires the two ends to hold only
conversion operators and the core only the quantized dtypes; otherwise it raises
:class:`~relay_tvm.errors.NotFullyIntegralError`.
"""

from __future__ import annotations

from ..analysis.dtypes import all_dtypes
from ..errors import NotFullyIntegralError, RelayError
from ..ir.expr import Call, Constant, Function, GlobalVar, Let, Tuple, TupleGetItem, Var
from ..ir.free import free_vars
from ..ir.types import TensorType
from ..transform._rewrite import Rewriter, op_name, post_order
from ..transform.infer_type import InferType

#: the operators of quantizing / dequantizing a tensor (0.19's list)
CONVERSION_OPS = frozenset({"add", "multiply", "right_shift", "clip", "round", "cast"})


def _conversion_params(func):
    """``node -> frozenset of parameters`` for each node built from parameters and constants
    by conversion operators only (a parameter itself included)."""
    params = set(func.params)
    out = {}
    for n in post_order(func.body):
        if type(n) is Var and n in params:
            out[n] = frozenset([n])
        elif type(n) is Call and op_name(n) in CONVERSION_OPS:
            got = frozenset()
            for a in n.args:
                if isinstance(a, Constant):
                    continue
                if a not in out:
                    break
                got |= out[a]
            else:
                out[n] = got
    return out


class _PrefixCut(Rewriter):
    """Arguments of non-conversion calls that are conversion chains of one parameter become
    parameters of the core; their expressions go to ``@quantize_inputs``."""

    def __init__(self, conv):
        super().__init__()
        self.conv = conv
        self.cut = {}  # original argument -> the core's parameter

    def post_call(self, orig, new):
        if op_name(orig) in CONVERSION_OPS:
            return new
        args = list(new.args)
        changed = False
        for i, a in enumerate(orig.args):
            ps = self.conv.get(a)
            if ps is None or len(ps) != 1:
                continue
            if a not in self.cut:
                self.cut[a] = Var(next(iter(ps)).name_hint, a.checked_type)
            args[i] = self.cut[a]
            changed = True
        if not changed:
            return new
        return Call(new.op, args, new.attrs, new.type_args, span=new.span)


def _suffix_cut(body, quantized):
    """The outermost expressions of a quantized tensor dtype, walking down from ``body``."""
    cuts, seen, stack = [], set(), [body]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        t = getattr(e, "_checked_type", None)
        if isinstance(t, TensorType) and t.dtype in quantized:
            cuts.append(e)
            continue
        if type(e) is Call:
            stack.extend(a for a in e.args if not isinstance(a, Constant))
        elif type(e) is Tuple:
            stack.extend(e.fields)
        elif type(e) is TupleGetItem:
            stack.append(e.tuple_value)
    return cuts


def _only_conversions(func) -> bool:
    return all(op_name(n) in CONVERSION_OPS for n in post_order(func.body) if type(n) is Call)


def partition_conversions(mod, quantized_dtypes, ensure_fully_integral):
    """Split ``mod["main"]`` (a typed, quantized dataflow function) as the module doc says.

    Args:
        mod: the quantized module (one function, ``main``).
        quantized_dtypes: the dtypes the integer core may use (qconfig's ``dtype_input``,
            ``dtype_weight``, ``dtype_activation``).
        ensure_fully_integral: raise when the ends hold other than conversion operators or
            the core other dtypes.

    Returns:
        The typed four-function module.

    Raises:
        NotFullyIntegralError: ``ensure_fully_integral`` and the program is not.
        RelayError: ``mod`` has more than one function, or ``main`` is not dataflow.
    """
    from ..ir.module import IRModule

    if len(mod.functions) != 1:
        raise RelayError(f"partition_conversions: expected a module of one function, got "
                         f"{len(mod.functions)}")
    func = InferType()(mod)["main"]
    if any(isinstance(n, (Let, Function, GlobalVar)) for n in post_order(func.body)):
        raise RelayError("partition_conversions: main must be a dataflow function "
                         "(no let, closures or global calls)")
    quantized = set(quantized_dtypes)

    # prefix: the input conversions
    cutter = _PrefixCut(_conversion_params(func))
    mid_body = cutter.rewrite(func.body)
    mid_params = free_vars(mid_body)
    by_var = {v: a for a, v in cutter.cut.items()}
    pre_fields = [by_var.get(v, v) for v in mid_params]
    pre_func = Function(list(func.params), Tuple(pre_fields))

    # suffix: the output dequantization
    mid_func = InferType()(IRModule.from_expr(Function(mid_params, mid_body)))["main"]
    cuts = _suffix_cut(mid_func.body, quantized)
    if len(cuts) == 1 and cuts[0] is not mid_func.body:
        inp = Var("input", cuts[0].checked_type)
        post_body = _Replace(cuts[0], inp).rewrite(mid_func.body)
        post_func = Function([inp], post_body)
        core = Function(list(mid_func.params), cuts[0])
    else:  # nothing after the core to split off (or several quantized outputs)
        inp = Var("input", mid_func.body.checked_type)
        post_func = Function([inp], inp)
        core = mid_func

    parts = IRModule({GlobalVar("quantize_inputs"): pre_func,
                      GlobalVar("quantized_main"): core,
                      GlobalVar("dequantize_outputs"): post_func})
    parts = InferType()(parts)
    if ensure_fully_integral:
        if not _only_conversions(parts["quantize_inputs"]):
            raise NotFullyIntegralError(
                "partition_conversions='fully_integral': the input quantization holds other "
                "operators than " + ", ".join(sorted(CONVERSION_OPS)))
        extra = all_dtypes(parts["quantized_main"]) - quantized
        if extra:
            ops = []  # the operators computing in those dtypes, in program order
            for n in post_order(parts["quantized_main"].body):
                t = getattr(n, "_checked_type", None)
                if isinstance(n, Call) and isinstance(t, TensorType) and t.dtype in extra \
                        and op_name(n) not in ops:
                    ops.append(op_name(n))
            where = f" (in {', '.join(str(o) for o in ops[:6])})" if ops else ""
            floats = {d for d in extra if d.startswith(("float", "bfloat"))}
            from .qconfig import current_qconfig

            skip = current_qconfig().skip_conv_layers
            # the likely cause: a float layer (skipped), or integer rescaling in a wider dtype
            # (the hint named skip_conv_layers whatever the dtypes were; fresh-user trial)
            if floats and skip:
                why = (f"a layer left in float (qconfig's skip_conv_layers={list(skip)}; "
                       f"[0], the default, skips the first convolution) keeps it from being "
                       f"integral")
            elif floats:
                why = "those operators stay in float in this quantization"
            else:
                why = (f"its integer arithmetic (rescaling) computes in "
                       f"{', '.join(sorted(extra))}")
            raise NotFullyIntegralError(
                f"partition_conversions='fully_integral': the quantized core uses "
                f"{', '.join(sorted(extra))}{where} besides {', '.join(sorted(quantized))}; "
                f"{why}")
        if not _only_conversions(parts["dequantize_outputs"]):
            raise NotFullyIntegralError(
                "partition_conversions='fully_integral': the output dequantization holds "
                "other operators than " + ", ".join(sorted(CONVERSION_OPS)))

    main_params = [Var(p.name_hint, p.type_annotation) for p in func.params]
    qin = Var("quantized_inputs")
    qout = Var("quantized_outputs")
    deq = Var("dequantized_outputs")
    n_in = len(pre_fields)
    body = Let(qin, Call(parts.get_global_var("quantize_inputs"), main_params),
               Let(qout, Call(parts.get_global_var("quantized_main"),
                              [TupleGetItem(qin, i) for i in range(n_in)]),
                   Let(deq, Call(parts.get_global_var("dequantize_outputs"), [qout]), deq)))
    main = Function(main_params, body)
    if func.attrs:
        for k, v in func.attrs.items():
            main = main.with_attr(k, v)
    parts["main"] = main
    return InferType()(parts)


class _Replace(Rewriter):
    def __init__(self, old, new):
        super().__init__()
        self.memo[old] = new


__all__ = ["partition_conversions", "CONVERSION_OPS"]

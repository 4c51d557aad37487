"""AnnotateTarget: mark the operators an external compiler takes (BYOC, tvm.relay 0.19's
``relay.transform.AnnotateTarget``, annotate_target.cc).

An operator goes to the first of the given targets whose predicate accepts the call: the
operator attribute ``"target.<name>"`` (set with ``tvm.ir.register_op_attr`` or
``relay.op.register_op_attr``; ``f(call) -> bool``, the call type-checked), or, for a call of a
composite function (``Composite="<name>.<pattern>"``, from MergeComposite), the prefix of its
composite name. Anything else goes to ``"default"`` (TVM itself).

Every operator call is then wrapped: each argument computed by an annotated node passes through
``compiler_end(arg, <producer's target>)`` and then ``compiler_begin(..., <this call's target>)``
(one pair per use, so a value used twice gets two), and the function's result ends with a
``compiler_end``. With ``include_non_call_ops`` (the default) tuples, projections and reference
operations are annotated like calls, taking their arguments' common target (``"default"`` when
they differ); otherwise they only close the regions of their arguments. Running the pass again
keeps the existing non-default annotations. The regions are grouped by
:func:`MergeCompilerRegions` and read by :class:`relay_tvm.analysis.AnnotatedRegionSet`.
"""

from __future__ import annotations

from ..errors import RelayError
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
from ..ir.functor import Rewriter
from ..op.registry import Op, make_call
from .pass_infra import FunctionPass, PassInfo, Sequential

DEFAULT = "default"
BEGIN, END = "annotation.compiler_begin", "annotation.compiler_end"


def is_annotation(e, name: str) -> bool:
    return type(e) is Call and isinstance(e.op, Op) and e.op.name == name


def target_predicate(op_name: str, target: str):
    """The ``"target.<target>"`` predicate of operator ``op_name``, or None."""
    from ..op.op_attrs import get_op_attr

    return get_op_attr(op_name, "target." + target)


class _Annotator(Rewriter):
    def __init__(self, targets, include_non_call_ops: bool):
        super().__init__()
        self.targets = list(targets)
        self.all_kinds = include_non_call_ops
        self.target_of = {}  # rewritten node -> the target it runs on

    def _ann(self, name, e, target, like):
        out = make_call(name, [e], compiler=target)
        t = getattr(like, "_checked_type", None)
        if t is not None:
            object.__setattr__(out, "_checked_type", t)
        return out

    def annotate_args(self, args, target: str = ""):
        """Close each argument's region and open ``target``'s (or, when not given, the
        arguments' common target); returns ``(target, new arguments)``."""
        common = ""
        begins, ends = [], []
        for arg in args:
            arg_target = DEFAULT
            if is_annotation(arg, BEGIN):
                # annotated by an earlier run: keep a non-default begin, redo a default one
                if arg.attrs.compiler != DEFAULT:
                    begins.append(arg)
                else:
                    ends.append(arg.args[0])
                if is_annotation(arg.args[0], END):
                    arg_target = arg.args[0].attrs.compiler
            elif arg in self.target_of:
                arg_target = self.target_of[arg]
                if type(arg) is Call and not arg.args:
                    ends.append(arg)  # zeros/ones-like calls without inputs stay inputs
                else:
                    ends.append(self._ann(END, arg, arg_target, arg))
            else:
                ends.append(arg)  # a variable or constant: an input
            if common == "":
                common = arg_target
            elif common != arg_target:
                common = DEFAULT
        chosen = target or common
        if common == "":
            return chosen, list(args)
        begins.extend(self._ann(BEGIN, e, chosen, e) for e in ends)
        return chosen, begins

    def close(self, e):
        """``e`` with its region closed (a result leaving annotated code)."""
        if e in self.target_of:
            t = type(e)
            if t in (RefWrite, RefCreate, RefRead, TupleGetItem) or \
                    (t is Call and e.args) or (t is Tuple and e.fields):
                target = self.target_of[e]
                e = self._ann(END, e, target, e)
                self.target_of[e] = target
        elif is_annotation(e, END) and e.attrs.compiler == DEFAULT:
            inner = e.args[0]
            target = self.target_of.get(inner, "")
            e = self._ann(END, inner, target, inner)
            self.target_of[e] = target
        return e

    def supported(self, orig) -> str:
        op = orig.op
        if isinstance(op, Op):
            for t in self.targets:
                pred = target_predicate(op.name, t)
                if pred is not None and pred(orig):
                    return t
        elif type(op) is Function:
            comp = op.get_attr("Composite")
            if isinstance(comp, str) and "." in comp and comp.split(".", 1)[0] in self.targets:
                return comp.split(".", 1)[0]
        return DEFAULT

    def post(self, orig, new):
        t = type(new)
        if t is Call:
            return self.post_call(orig, new)
        if t is Function:
            if orig.get_attr("Composite") is not None:
                return orig  # composite functions are not entered
            body = self.close(new.body)
            if body is new.body:
                return new
            return Function(new.params, body, new.ret_type, new.type_params, new.attrs, new.span)
        if t is Let:
            body = self.close(new.body)
            value = new.value
            if type(value) is not Function:
                value = self.annotate_args([value])[1][0]
            return Let(new.var, value, body, new.span)
        if t is If:
            return If(self.close(new.cond), self.close(new.true_branch),
                      self.close(new.false_branch), new.span)
        if t in (Tuple, TupleGetItem, RefCreate, RefRead, RefWrite):
            return self.post_data(new)
        return new

    def post_call(self, orig, new):
        if is_annotation(orig, BEGIN):
            return new  # handled by the consumer
        if is_annotation(orig, END):
            inner = new.args[0]
            self.target_of.setdefault(inner, new.attrs.compiler)
            return new
        if orig.args and is_annotation(orig.args[0], BEGIN) and \
                orig.args[0].attrs.compiler != DEFAULT:
            return new  # annotated for another target by an earlier run
        target = self.supported(orig)
        if type(orig.op) is Var and not self.all_kinds:
            return Call(new.op, [self.close(a) for a in new.args], new.attrs, (), new.span)
        _, args = self.annotate_args(new.args, target)
        out = Call(new.op, args, new.attrs, (), orig.span)
        self.target_of[out] = target
        return out

    def post_data(self, new):
        t = type(new)
        if not self.all_kinds:
            if t is Tuple:
                fields = [self.close(f) for f in new.fields]
                return new if all(a is b for a, b in zip(fields, new.fields)) else \
                    Tuple(fields, new.span)
            if t is TupleGetItem:
                return TupleGetItem(self.close(new.tuple_value), new.index, new.span)
            if t is RefCreate:
                return RefCreate(self.close(new.value), new.span)
            if t is RefRead:
                return RefRead(self.close(new.ref), new.span)
            return RefWrite(self.close(new.ref), self.close(new.value), new.span)
        if t is Tuple:
            target, fields = self.annotate_args(new.fields)
            out = new if all(a is b for a, b in zip(fields, new.fields)) else \
                Tuple(fields, new.span)
        elif t is TupleGetItem:
            target, (x,) = self.annotate_args([new.tuple_value])
            out = TupleGetItem(x, new.index, new.span)
        elif t is RefCreate:
            target, (x,) = self.annotate_args([new.value])
            out = RefCreate(x, new.span)
        elif t is RefRead:
            target, (x,) = self.annotate_args([new.ref])
            out = RefRead(x, new.span)
        else:
            target, (r, v) = self.annotate_args([new.ref, new.value])
            out = RefWrite(r, v, new.span)
        self.target_of[out] = target
        return out


def annotate_target(func: Function, targets, include_non_call_ops: bool = True) -> Function:
    """AnnotateTarget on one type-checked function (see the module docstring)."""
    return _Annotator(targets, include_non_call_ops).rewrite(func)


def AnnotateTarget(targets, include_non_call_ops: bool = True):  # noqa: N802 - Relay's name
    """Annotate the operators each external compiler takes with ``compiler_begin`` /
    ``compiler_end`` (see the module docstring).

    Args:
        targets: a target name or a list of them, in order of priority.
        include_non_call_ops: also annotate tuples, projections and reference operations.

    Returns:
        A pass (type inference, the annotation, type inference).

    Raises:
        RelayError: a target is not a non-empty string.
    """
    if isinstance(targets, str):
        targets = [targets]
    targets = [str(t) for t in targets]
    if not targets or not all(targets):
        raise RelayError(f"AnnotateTarget: targets must be non-empty names, got {targets!r}")
    from .infer_type import InferType

    inner = FunctionPass(lambda f, m, c: annotate_target(f, targets, include_non_call_ops),
                         PassInfo(0, "AnnotateTargetFunc", ("InferType",)))
    return Sequential([InferType(), inner, InferType()], opt_level=0, name="AnnotateTarget")


__all__ = ["AnnotateTarget", "annotate_target", "DEFAULT", "is_annotation"]

"""SplitArgs (tvm.relay 0.19's ``relay.transform.SplitArgs``, split_args.cc): a
``concatenate`` with more inputs than a kernel may take becomes a chain of concatenates.

Some targets limit the arguments of one kernel (0.19 passed a target's ``max_function_args``,
e.g. Metal's 31). A kernel of ``concatenate(t_1, ..., t_n)`` takes each input, its output, and
for a tensor with ``Any`` dimensions one more argument per ``Any`` plus its strides (its rank).
With ``limit = max_function_args - (arguments of the output)``, a concatenate whose inputs need
``limit`` arguments or more is rewritten as::

    c1 = concatenate(stop_fusion((t_1, ..., t_k)), axis)
    c2 = concatenate(stop_fusion((c1, t_k+1, ..., t_m)), axis)
    ...

each group taking at most ``limit`` arguments (the previous group's result charged as the
field that starts the next group, as 0.19 did); ``annotation.stop_fusion`` of the tuple makes
each of its fields end a kernel, so FuseOps does not join the groups into one kernel again.
Concatenating in groups along the same axis gives the same tensor. ``max_function_args=0``
or a negative count leaves the program unchanged (0.19 took a ``uint64_t``: -1, the default of
a target without a limit that its ``relay.build`` passed, became the largest count). Needs types (runs InferType first).
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import Tuple
from ..ir.types import AnyDim, TensorType, TupleType
from ..op.registry import make_call
from ._rewrite import Rewriter, op_name
from .pass_infra import FunctionPass, PassInfo


def _extra_args(ty, is_output: bool = False) -> int:
    """Arguments a tensor of type ``ty`` adds beyond its data pointer: none for a static shape;
    with ``Any`` dimensions, one per ``Any`` plus the strides (rank) for an input, the strides
    only for an output (0.19's count)."""
    if not isinstance(ty, TensorType):
        return 0
    anys = sum(isinstance(d, AnyDim) for d in ty.shape)
    if not anys:
        return 0
    return len(ty.shape) if is_output else anys + len(ty.shape)


def _fenced(fields, span):
    return make_call("annotation.stop_fusion", [Tuple(fields, span)])


class _Splitter(Rewriter):
    def __init__(self, max_function_args: int):
        super().__init__()
        self.max_args = max_function_args

    def post_call(self, orig, new):
        if op_name(new) != "concatenate" or not isinstance(new.args[0], Tuple):
            return new
        out_ty = orig.checked_type
        outputs = (sum(1 + _extra_args(f, True) for f in out_ty.fields)
                   if isinstance(out_ty, TupleType) else 1 + _extra_args(out_ty, True))
        if self.max_args <= outputs:
            raise RelayError(f"SplitArgs: max_function_args={self.max_args} leaves no argument "
                             f"for the inputs of a concatenate whose output takes {outputs}")
        limit = self.max_args - outputs
        fields = new.args[0].fields
        costs = [1 + _extra_args(f.checked_type) for f in orig.args[0].fields]
        if sum(costs) < limit:
            return new
        axis = new.attrs.axis
        group, used = [], 0
        for field, cost in zip(fields, costs):
            if group and used + cost > limit:
                chained = make_call("concatenate", [_fenced(group, new.args[0].span)],
                                    span=new.span, axis=axis)
                group, used = [chained], cost  # 0.19 charges the chained result as this field
            group.append(field)
            used += cost
        return make_call("concatenate", [_fenced(group, new.args[0].span)], span=new.span,
                         axis=axis)


def split_args(func, max_function_args: int):
    """SplitArgs on one typed function (see the module docstring)."""
    if not max_function_args:
        return func
    return _Splitter(int(max_function_args)).rewrite(func)


def SplitArgs(max_function_args):  # noqa: N802 - Relay's name
    """Split every ``concatenate`` whose kernel would take ``max_function_args`` arguments or
    more into a chain of concatenates of fewer (see the module docstring; opt level 1).

    Args:
        max_function_args: the most arguments a kernel may take; 0 or a negative count (-1,
            what 0.19 passed for a target without a limit) turns the pass off.

    Raises:
        RelayError: ``max_function_args`` is not an integer (when the pass is made), or
            leaves no room for the inputs of a concatenate (when it runs).
    """
    import operator

    try:
        n = None if isinstance(max_function_args, bool) else operator.index(max_function_args)
    except TypeError:
        n = None
    if n is None:
        raise RelayError(f"SplitArgs: max_function_args must be an int (the most arguments a "
                         f"kernel may take; 0 or a negative count turns the pass off), got "
                         f"{max_function_args!r}")
    n = max(n, 0)  # 0.19 took a uint64_t: -1 (no limit) became the largest count
    return FunctionPass(lambda f, m, c: split_args(f, n),
                        PassInfo(1, "SplitArgs", ("InferType",)))


__all__ = ["SplitArgs", "split_args"]

"""SimplifyFCTranspose and ``search_fc_transpose``: ``nn.dense(x, transpose(w, [1, 0]))`` of a
weight parameter ``w`` becomes ``nn.dense(x, w.T)`` with a new parameter ``w.T`` holding the
transposed weight (tvm.relay 0.19's ``relay.transform.SimplifyFCTranspose`` /
``relay.analysis.search_fc_transpose``, used by
``relay.data_dep_optimization.simplify_fc_transpose.convert``, which transposes the values).
"""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import Call, Function, Var
from ..ir.functor import Rewriter
from ..ir.types import TensorType
from ._rewrite import op_name, post_order
from .pass_infra import FunctionPass, PassInfo


def _transposed_weight(call):
    """The parameter ``w`` when ``call`` is ``nn.dense(x, transpose(w, axes=[1, 0]))``."""
    if op_name(call) != "nn.dense":
        return None
    t = call.args[1]
    if op_name(t) != "transpose" or type(t.args[0]) is not Var:
        return None
    axes = t.attrs.axes
    if axes is None or [int(a) for a in axes] != [1, 0]:
        return None
    return t.args[0]


def search_fc_transpose(func) -> list:
    """Names of the weights used as ``nn.dense(x, transpose(w, [1, 0]))`` in ``func``, in
    program order, each once."""
    names = []
    for n in post_order(func):
        w = _transposed_weight(n)
        if w is not None and w.name_hint not in names:
            names.append(w.name_hint)
    return names


class _Simplify(Rewriter):
    def __init__(self, names):
        super().__init__()
        self.names = set(names)
        self.new_vars = {}  # old weight var -> its transposed var

    def post_call(self, orig, new):
        w = _transposed_weight(orig)
        if w is None or w.name_hint not in self.names:
            return new
        wt = self.new_vars.get(w)
        if wt is None:
            t = w.type_annotation
            if not isinstance(t, TensorType) or len(t.shape) != 2:
                raise RelayError(f"SimplifyFCTranspose: weight %{w.name_hint} needs a 2-d tensor "
                                 f"type annotation, has {t}")
            wt = self.new_vars[w] = Var(w.name_hint + ".T", TensorType(t.shape[::-1], t.dtype))
        return Call(new.op, [new.args[0], wt], new.attrs, new.type_args, new.span)


def simplify_fc_transpose(func: Function, names) -> Function:
    """SimplifyFCTranspose on one function: the transposed parameter ``<w>.T`` takes the place
    of ``w`` (``w`` stays too while other uses remain)."""
    rw = _Simplify(names)
    body = rw.rewrite(func.body)
    if not rw.new_vars:
        return func
    from ..analysis.free import free_vars

    still = set(free_vars(body))
    params = []
    for p in func.params:
        if p in rw.new_vars:
            params.append(rw.new_vars[p])
            if p in still:
                params.append(p)
        else:
            params.append(p)
    return Function(params, body, func.ret_type, func.type_params, func.attrs, func.span)


def SimplifyFCTranspose(target_weight_names):  # noqa: N802 - Relay's name
    """Use pre-transposed ``<w>.T`` parameters for the named dense weights (opt level 3)."""
    names = [str(n) for n in target_weight_names]
    return FunctionPass(lambda f, m, c: simplify_fc_transpose(f, names),
                        PassInfo(3, "SimplifyFCTranspose", ("InferType",)))


__all__ = ["SimplifyFCTranspose", "search_fc_transpose", "simplify_fc_transpose"]

"""``get_calibration_data`` (tvm.relay 0.19's ``relay.analysis.get_calibration_data``).

For a module whose ``main`` calls other global functions (the partitioned subgraphs of a
BYOC-style flow), run ``main`` once on given inputs and record, for each called global
function, the tensors it received and the tensors it returned: the data an external compiler
calibrates a quantized subgraph with. ``main`` runs on the reference interpreter, so the
recorded values are exact float32 results of each call.
"""

from __future__ import annotations


def get_calibration_data(mod, data: dict) -> dict:
    """Inputs and outputs of every global function that ``main`` calls.

    Args:
        mod: an ``IRModule`` with ``main`` and the functions it calls (typed or not).
        data: ``{parameter name of main: NumPy array / tvm Tensor}`` for every parameter of
            ``main`` (extra names, such as weights bound elsewhere, are ignored).

    Returns:
        ``{GlobalVar: {"inputs": [tvm Tensor, ...], "outputs": [tvm Tensor, ...]}}`` with one
        entry per global function other than ``main`` that ``main`` calls, in parameter order;
        a function returning a tuple has one output per field.

    Raises:
        InputError: a parameter of ``main`` has no value in ``data``.
        RelayError: a global function is called more than once (0.19 records one call each).
    """
    from ..errors import InputError, RelayError
    from ..ir.expr import Call, Function, GlobalVar, Tuple, TupleGetItem
    from ..ir.functor import post_order
    from ..ir.module import IRModule
    from ..runtime.executor import create_executor
    from ..transform.infer_type import InferType

    mod = InferType()(mod)
    main = mod["main"]
    calls, seen = [], set()
    for node in post_order(main.body):
        if type(node) is Call and isinstance(node.op, GlobalVar) and node.op.name_hint != "main":
            if node.op.name_hint in seen:
                raise RelayError(f"get_calibration_data: {node.op.name_hint} is called more "
                                 f"than once by main")
            seen.add(node.op.name_hint)
            calls.append(node)
    fields, layout = [], []
    for c in calls:
        n_in = len(c.args)
        fields.extend(c.args)
        ty = c.checked_type
        n_out = len(ty.fields) if hasattr(ty, "fields") else 1
        if hasattr(ty, "fields"):
            fields.extend(TupleGetItem(c, i) for i in range(n_out))
        else:
            fields.append(c)
        layout.append((c.op, n_in, n_out))
    probe = IRModule()
    for gv, f in mod.functions.items():
        if gv.name_hint != "main":
            probe[gv] = f
    probe["main"] = Function(list(main.params), Tuple(fields))
    args = []
    for p in main.params:
        if p.name_hint not in data:
            raise InputError(f"get_calibration_data: no value for main's parameter "
                             f"{p.name_hint!r}")
        args.append(data[p.name_hint])
    res = create_executor("debug", mod=probe).evaluate()(*args)
    out, k = {}, 0
    by_name = {gv.name_hint: gv for gv, _ in mod.functions.items()}
    for gv, n_in, n_out in layout:
        out[by_name[gv.name_hint]] = {"inputs": [res[k + i] for i in range(n_in)],
                                      "outputs": [res[k + n_in + i] for i in range(n_out)]}
        k += n_in + n_out
    return out


__all__ = ["get_calibration_data"]

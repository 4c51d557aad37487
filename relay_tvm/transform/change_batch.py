"""ChangeBatch: give chosen parameters of every function another batch size and type the
program again (tvm.relay 0.19's ``relay.transform.ChangeBatch``, a testing utility: a
``reshape`` whose static shape mentions the old batch makes the new program ill-typed)."""

from __future__ import annotations

from ..errors import RelayError
from ..ir.expr import Function, Var
from ..ir.functor import substitute
from ..ir.types import TensorType
from .pass_infra import ModulePass, PassInfo


def change_batch(func: Function, data: dict, batch_size: int) -> Function:
    """``func`` with each parameter ``p`` of ``data`` (``{param: batch axis}``) retyped with
    ``batch_size`` at that axis; the return annotation is dropped (it is inferred again)."""
    binds = {}
    for p in func.params:
        if p not in data:
            continue
        t = p.type_annotation
        axis = int(data[p])
        if not isinstance(t, TensorType) or not -len(t.shape) <= axis < len(t.shape):
            raise RelayError(f"ChangeBatch: parameter %{p.name_hint} of type {t} has no axis "
                             f"{axis}")
        shape = list(t.shape)
        shape[axis] = int(batch_size)
        binds[p] = Var(p.name_hint, TensorType(shape, t.dtype), p.span)
    if not binds:
        return func
    body = substitute(func.body, binds)
    params = [binds.get(p, p) for p in func.params]
    return Function(params, body, None, func.type_params, func.attrs, func.span)


def ChangeBatch(data: dict, batch_size: int = 16):  # noqa: N802 - Relay's name
    """Change the batch axis (``data``: ``{param Var: axis}``) of parameters to ``batch_size``
    (opt level 1); the module is type-checked again.

    Raises:
        RelayError: a parameter has no such axis.
        TypeInferenceError: the program does not type-check with the new batch.
    """
    def run(mod, ctx):
        from ..typing.infer import infer_module

        out = mod.copy()
        for gv, f in mod.functions.items():
            if isinstance(f, Function) and not f.is_primitive:
                out[gv] = change_batch(f, data, batch_size)
        return infer_module(out)

    return ModulePass(run, PassInfo(1, "ChangeBatch"))


__all__ = ["ChangeBatch", "change_batch"]

"""Tuning tasks: the distinct kernels ``relay.build`` would compile, unscheduled.

Each task's ``mod`` is ``IRModule({"main": prim_func})`` with the PrimFunc exactly as lowering
creates it (``te.create_prim_func`` of the primitive function's TE graph), which is the workload
``build(..., database=db)`` looks up with ``db.query_schedule(mod, target, "main")``. Tuning
these modules with ``tvm.s_tir.meta_schedule`` and passing the database to ``build`` applies the
tuned schedules (relay_tvm.tune builds on this).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.expr import Call, Function
from .lower import anchor_op, to_te
from .partition import post_order


@dataclass
class KernelTask:
    """One distinct kernel of a model.

    Attributes:
        name: a readable name (``fused_nn_conv2d_nn_relu``).
        mod: ``tvm.IRModule({"main": PrimFunc})``, unscheduled.
        weight: how many times the model calls it.
        anchor: the anchor operator's name.
        func: the primitive ``Function`` it was lowered from (its anchor call chooses the
            schedule template).

    tvm.relay 0.19's ``meta_schedule.ExtractedTask`` names are read-only properties too:
    ``task_name`` (= ``name``), ``target`` (the ``tvm.target.Target`` the task was extracted
    for) and ``dispatched`` (``[mod]``).
    """

    name: str
    mod: object
    weight: int
    anchor: str
    func: object = None
    _target: object = field(default=None, repr=False)

    @property
    def task_name(self) -> str:
        """``name`` (``ExtractedTask.task_name``)."""
        return self.name

    @property
    def target(self):
        """The ``tvm.target.Target`` the task was extracted for (``ExtractedTask.target``)."""
        return self._target

    @property
    def dispatched(self) -> list:
        """``[mod]``: the task's candidate modules (``ExtractedTask.dispatched``)."""
        return [self.mod]

    @property
    def anchor_call(self):
        """The anchor operator ``Call`` of :attr:`func` (None for a kernel without one)."""
        return anchor_op(self.func) if self.func is not None else None


def extract_tasks(mod, target=None, params=None) -> list:
    """The distinct kernels of ``mod`` as :class:`KernelTask` s, in first-call order.

    Runs :func:`relay_tvm.backend.optimize` under the current ``PassContext`` (so fusion is as
    ``build`` does it).
    """
    import tvm
    from tvm import te

    from ..analysis.structural import structural_equal, structural_hash
    from ..op.registry import Op
    from .build_module import optimize_module as optimize
    from .target import make_target

    tgt = make_target(target)
    opt = optimize(mod, tgt, params)
    buckets: dict = {}
    tasks: list = []
    for node in post_order(opt["main"].body):
        if not (isinstance(node, Call) and isinstance(node.op, Function) and node.op.is_primitive):
            continue
        fn = node.op
        key = structural_hash(fn)
        hit = None
        for other, task in buckets.get(key, []):
            if structural_equal(other, fn):
                hit = task
                break
        if hit is not None:
            hit.weight += 1
            continue
        with tgt:
            inputs, outputs, _ = to_te(fn)
        prim = te.create_prim_func(inputs + outputs)
        ops = [n.op.name.replace(".", "_") for n in post_order(fn.body)
               if isinstance(n, Call) and isinstance(n.op, Op)]
        anchor = anchor_op(fn)
        task = KernelTask("fused_" + "_".join(ops), tvm.IRModule({"main": prim}), 1,
                          anchor.op.name if anchor is not None else "", fn, tgt)
        buckets.setdefault(key, []).append((fn, task))
        tasks.append(task)
    return tasks


__all__ = ["extract_tasks", "KernelTask"]

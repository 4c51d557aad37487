"""Static memory planning for the graph executor (Relay's GraphPlanMemory, simplified).

Every node entry gets a storage id. Inputs and parameters each own a storage. The outputs of an
operator node are placed, in execution order, on a free storage (best fit by size; a free
storage that is too small grows to the new size) or on a new one; an intermediate's storage goes
back to the free list right after its last consumer runs. Graph outputs are never freed, and a
node's outputs are assigned before its inputs are released, so a kernel never writes a buffer it
reads.

A ``__nop`` node (a reshape-only call, see ``graph_codegen``) takes its input's storage id
instead of one of its own, as 0.19's planner did: its output is a view, and the storage goes
back to the free list only after the last use of the input and of every view of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def tensor_bytes(t) -> int:
    n = 1
    for d in t.shape:
        n *= int(d)
    bits = np.dtype("bool").itemsize * 8 if t.dtype == "bool" else _bits(t.dtype)
    return n * max(1, (bits + 7) // 8)


def _bits(dtype: str) -> int:
    import tvm

    dt = tvm.DataType(dtype)
    return dt.bits * dt.lanes


@dataclass
class MemoryPlan:
    """Result of planning.

    Attributes:
        storage_id: ``(nid, index) -> storage id``.
        storage_bytes: size in bytes of each storage id (inputs included).
        intermediate_sids: storage ids used by operator outputs.
        intermediate_bytes: sum of the sizes of all operator outputs (no sharing).
    """

    storage_id: dict = field(default_factory=dict)
    storage_bytes: list = field(default_factory=list)
    intermediate_sids: set = field(default_factory=set)
    intermediate_bytes: int = 0

    @property
    def planned_bytes(self) -> int:
        """Bytes allocated for operator outputs with sharing."""
        return sum(self.storage_bytes[s] for s in self.intermediate_sids)

    def summary(self) -> dict:
        return {
            "planned_bytes": self.planned_bytes,
            "intermediate_bytes": self.intermediate_bytes,
            "num_storages": len(self.intermediate_sids),
        }


def plan_memory(prog) -> MemoryPlan:
    """Assign storage ids to the entries of ``prog`` (a ``GraphProgram``)."""
    plan = MemoryPlan()
    nodes = prog.nodes
    # a __nop's output is its input's storage: lifetimes are counted on the entry that owns it
    owner: dict = {}
    for nid, n in enumerate(nodes):
        if n.attrs.get("func_name") == "__nop":
            owner[(nid, 0)] = owner.get(n.inputs[0], n.inputs[0])
    heads = {owner.get(h, h) for h in prog.heads}
    last_use: dict = {}
    for nid, n in enumerate(nodes):
        for e in n.inputs:
            last_use[owner.get(e, e)] = nid
    free: list = []  # storage ids available for reuse
    for nid, n in enumerate(nodes):
        if n.op == "null":
            plan.storage_id[(nid, 0)] = len(plan.storage_bytes)
            plan.storage_bytes.append(tensor_bytes(n.out_types[0]))
            continue
        if (nid, 0) in owner:  # a view: nothing allocated, nothing released yet
            plan.storage_id[(nid, 0)] = plan.storage_id[owner[(nid, 0)]]
            src = owner[(nid, 0)]
            if last_use.get(src) == nid and src not in heads:  # this view was the last use
                free.append(plan.storage_id[src])
            continue
        for i, t in enumerate(n.out_types):
            need = tensor_bytes(t)
            plan.intermediate_bytes += need
            sid = _take(free, plan.storage_bytes, need)
            if sid is None:
                sid = len(plan.storage_bytes)
                plan.storage_bytes.append(need)
            plan.storage_id[(nid, i)] = sid
            plan.intermediate_sids.add(sid)
        # Release inputs whose last use is this node, and outputs nobody uses.
        released = set()
        for e in n.inputs:
            e = owner.get(e, e)
            if nodes[e[0]].op == "null" or e in heads or e in released:
                continue
            if last_use.get(e) == nid:
                released.add(e)
                free.append(plan.storage_id[e])
        for i in range(len(n.out_types)):
            e = (nid, i)
            if e not in last_use and e not in heads:
                free.append(plan.storage_id[e])
    return plan


def _take(free: list, sizes: list, need: int):
    """Best fit among free storages; else grow the largest free one; else None."""
    if not free:
        return None
    fitting = [s for s in free if sizes[s] >= need]
    if fitting:
        sid = min(fitting, key=lambda s: sizes[s])
    else:
        sid = max(free, key=lambda s: sizes[s])
        sizes[sid] = need
    free.remove(sid)
    return sid


__all__ = ["plan_memory", "MemoryPlan", "tensor_bytes"]

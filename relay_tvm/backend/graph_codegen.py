"""Code generation for the graph executor: a fused dataflow ``main`` → graph nodes, a static
memory plan, the graph-executor JSON of tvm.relay, and a Relax VM bytecode program.

The input is ``main`` after fusion: a dataflow graph of calls to primitive functions, tuples,
tuple projections, variables, constants and ``let`` bindings. Every tensor value is a *node
entry* ``(node id, output index)``. Input nodes (``"null"``) are ``main``'s parameters, in order,
then the constants, lifted to parameters named ``p0``, ``p1``, ... (as tvm.relay named them).
Operator nodes (``"tvm_op"``) call a compiled kernel in destination-passing style. Constants
become parameters only where used; a kernel input whose schedule chose a packed layout (a
``Pack``) gets the constant packed at build time, or a run-time ``layout_transform`` node for
other values (once per value and layout).

The host program runs on TVM's VM runtime (TVM 0.27 has no graph executor): the bytecode
function ``main(inputs..., params...)`` first checks the type, rank, dtype and shape of each of
its arguments (the kernels are built without TVM's per-argument checks: ``argument_checks``),
then allocates one storage per planned storage id (at its first
use), views each kernel output on its storage, calls the kernels, and returns the flattened
outputs as a tuple. ``__relay_meta()`` returns the graph JSON and the executor's metadata, and
``__relay_params()`` the parameter tensors (held by the ``const_loader`` module that
``link`` puts between the executable and its kernels), so an exported library is
self-contained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..errors import BuildError
from ..ir.expr import Call, Constant, Function, Let, Tuple, TupleGetItem, Var
from ..ir.types import TensorType, TupleType
from .argument_checks import layout_check, layout_check_name
from .lower import LowerCache, anchor_op, flatten_type
from .memory_plan import MemoryPlan, plan_memory
from .partition import post_order


@dataclass
class GraphNode:
    op: str  # "null" or "tvm_op"
    name: str
    inputs: list = field(default_factory=list)  # [(nid, index)]
    attrs: dict = field(default_factory=dict)
    out_types: list = field(default_factory=list)  # TensorType per output


@dataclass
class GraphProgram:
    """The graph of a fused ``main`` and everything needed to emit and run it.

    Attributes:
        nodes: graph nodes in execution order (inputs first).
        heads: output entries ``(nid, index)``, flattened.
        input_names: names of ``main``'s parameters (user inputs).
        params: lifted constants, ``name -> np.ndarray`` (in input order).
        output_structure: the nested-tuple shape of the result: an int (flat output index) or a
            list of them (recursively).
        kernels: the lowered kernels by name.
        plan: the memory plan.
    """

    nodes: list
    heads: list
    input_names: list
    params: dict
    output_structure: object
    kernels: dict
    plan: MemoryPlan | None = None

    @property
    def arg_nodes(self) -> list:
        return [i for i, n in enumerate(self.nodes) if n.op == "null"]

    def entry_type(self, entry) -> TensorType:
        nid, idx = entry
        return self.nodes[nid].out_types[idx]


def _dtype_name(arr) -> str:
    return "bool" if arr.dtype == np.bool_ else arr.dtype.name


def build_graph(main: Function, cache: LowerCache) -> GraphProgram:
    """Lower every primitive call of ``main`` through ``cache`` and build the graph.

    Raises:
        BuildError: a construct the graph executor cannot run (control flow, closures,
            references, non-tensor parameters, dynamic shapes).
    """
    return _GraphBuilder(cache).build(main)


class _GraphBuilder:
    """The nodes of one graph program as they are built: inputs, parameters (constants are
    materialized only when used, once per packing), kernel calls."""

    def __init__(self, cache: LowerCache):
        self.cache = cache
        self.nodes: list = []
        self.names: set = set()
        self.params: dict = {}
        self.consts: list = []  # constants seen, materialized as parameters only when used
        self.const_param: dict = {}  # (const index, pack key) -> entry
        self.packed_vals: dict = {}  # (entry, pack key) -> entry of a run-time packing kernel
        self.out_packs: dict = {}  # id(call) -> Pack its kernel writes its result in
        self.prelowered: dict = {}  # id(call) -> LoweredFunc (lowered by plan_packed_outputs)

    def inputs(self, main: Function):
        """One ``null`` node per parameter of ``main``: ``(env, input names)``."""
        env: dict = {}  # Var -> entries
        input_names = []
        for p in main.params:
            ty = p.checked_type
            if not isinstance(ty, TensorType):
                raise BuildError(f"graph executor: parameter %{p.name_hint} has type {ty}; only "
                                 f"tensor parameters are supported (use the VM)")
            flatten_type(ty)
            _check_static(ty, f"parameter %{p.name_hint}")
            env[p] = [(len(self.nodes), 0)]
            self.nodes.append(GraphNode("null", p.name_hint, out_types=[ty]))
            input_names.append(p.name_hint)
        self.names.update(input_names)
        return env, input_names

    def add_param(self, arr: np.ndarray):
        k = len(self.params)
        name = f"p{k}"
        while name in self.names:
            k += 1
            name = f"p{k}"
        self.names.add(name)
        arr = np.array(arr, order="C")
        self.params[name] = arr
        self.nodes.append(GraphNode("null", name,
                                    out_types=[TensorType(arr.shape, _dtype_name(arr))]))
        return (len(self.nodes) - 1, 0)

    def pending(self, arr) -> tuple:
        self.consts.append(np.asarray(arr))
        return ("c", len(self.consts) - 1)

    def real(self, e, pack=None, in_type=None):
        """The graph entry of ``e``, packed per ``pack`` when given."""
        if isinstance(e[0], str):
            key = (e[1], pack.key if pack else None, tuple(pack.new_shape) if pack else None)
            if key not in self.const_param:
                arr = self.consts[e[1]]
                self.const_param[key] = self.add_param(pack.pack_numpy(arr) if pack else arr)
            return self.const_param[key]
        if pack is None:
            return e
        key = (e, pack.key, tuple(pack.new_shape))
        if self.packed_vals.get(key) == e:  # the producer wrote it packed
            return e
        if key not in self.packed_vals:
            lk = self.cache.pack_kernel(pack, in_type)
            nid = len(self.nodes)
            self.nodes.append(GraphNode(
                "tvm_op", lk.name, [e],
                {"func_name": lk.name, "num_inputs": "1", "num_outputs": "1",
                 "flatten_data": "0"}, list(lk.output_types)))
            self.packed_vals[key] = (nid, 0)
        return self.packed_vals[key]

    def call(self, node, ent) -> list:
        """The output entries of a call of a primitive function (one kernel node)."""
        fn = node.op
        if not (isinstance(fn, Function) and fn.is_primitive):
            raise BuildError("graph executor: only calls of primitive functions can be "
                             "compiled here (run fusion first)", node.span)
        if node.checked_type.is_dynamic():  # a data-dependent shape (dyn.*, argwhere)
            anchor = anchor_op(fn)
            _check_static(node.checked_type, f"the result of "
                          f"{anchor.op.name if anchor is not None else 'a primitive function'}")
        nop = self._nop(node, ent)
        if nop is not None:
            return nop
        lowered = self.prelowered.get(id(node))
        if lowered is None:
            lowered = self.cache.lower(fn, self.out_packs.get(id(node)))
        ins = [e for a in node.args for e in ent[id(a)]]
        ins += [self.pending(c) for c in lowered.lifted]
        if len(ins) != len(lowered.input_types):
            raise BuildError(f"{lowered.name}: {len(ins)} inputs for a kernel of "
                             f"{len(lowered.input_types)}")
        ins = [self.real(e, lowered.packs.get(i), lowered.input_types[i])
               for i, e in enumerate(ins)]
        nid = len(self.nodes)
        self.nodes.append(GraphNode(
            "tvm_op", lowered.name, ins,
            {"func_name": lowered.name, "num_inputs": str(len(ins)),
             "num_outputs": str(len(lowered.output_types)), "flatten_data": "0"},
            list(lowered.output_types)))
        pack = self.out_packs.get(id(node))
        if pack is not None:
            self.packed_vals[((nid, 0), pack.key, tuple(pack.new_shape))] = (nid, 0)
        return [(nid, i) for i in range(len(lowered.output_types))]

    def _nop(self, node, ent):
        """A ``__nop`` node for a reshape-only call (0.19's graph executor: no kernel, the
        result a view of the input's storage), or None. Only where the input is the output of
        a kernel node: a view of a graph input or a parameter would alias the caller's array."""
        fn = node.op
        if not fn.attrs.get("relay.reshape_only") or len(node.args) != 1 \
                or id(node) in self.out_packs or id(node) in self.prelowered:
            return None
        ins = ent[id(node.args[0])]
        out = node.checked_type
        if len(ins) != 1 or not isinstance(out, TensorType) or out.is_dynamic():
            return None
        e = ins[0]
        if isinstance(e[0], str) or self.nodes[e[0]].op != "tvm_op":
            return None
        src = self.nodes[e[0]].out_types[e[1]]
        if src.dtype != out.dtype:
            return None
        nid = len(self.nodes)
        self.nodes.append(GraphNode(
            "tvm_op", "__nop", [e],
            {"func_name": "__nop", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"},
            [out]))
        return [(nid, 0)]

    def plan_packed_outputs(self, order, body) -> None:
        """Choose the calls whose kernel writes its result packed (:attr:`out_packs`): an
        injective primitive call with one static tensor result whose only use is an input that
        its consumer's schedule packs (the flipped, transposed weight of a convolution's data
        gradient; the transposed output gradient of its weight gradient). Packing in the
        producer saves a write, a read and a ``layout_transform`` kernel per value.

        Consumers are lowered here (kept in :attr:`prelowered`, in evaluation order); the
        producers are lowered later, by :meth:`call`, with their output packing."""
        from ..op.registry import Op, OpPattern

        let_values = {n.var: n.value for n in order if type(n) is Let}

        def resolve(e):
            while True:
                if type(e) is Var and e in let_values:
                    e = let_values[e]
                elif type(e) is Let:
                    e = e.body
                else:
                    return e

        uses: dict = {}

        def use(e):
            e = resolve(e)
            uses[id(e)] = uses.get(id(e), 0) + 1

        for node in order:
            t = type(node)
            if t is Call:
                for a in node.args:
                    use(a)
            elif t is Tuple:
                for f in node.fields:
                    use(f)
            elif t is TupleGetItem:
                use(node.tuple_value)
        use(body)

        def primitive(c):
            return type(c) is Call and isinstance(c.op, Function) and c.op.is_primitive

        def injective(fn):
            return all(int(n.op.pattern) <= int(OpPattern.INJECTIVE)
                       for n in post_order(fn.body) if type(n) is Call and isinstance(n.op, Op))

        def injective_single(c):
            if not primitive(c):
                return False
            ty = c.checked_type
            if not isinstance(ty, TensorType) or ty.is_dynamic() or uses.get(id(c)) != 1:
                return False
            return injective(c.op)

        # Only anchored kernels (convolution, dense templates) pack their inputs; injective
        # kernels get the generic schedule, so they are never consumers here and a producer is
        # never lowered before its output packing is known.
        for node in order:
            if not primitive(node) or injective(node.op) or node.checked_type.is_dynamic():
                continue
            args = [resolve(a) for a in node.args]
            if not any(injective_single(a) for a in args):
                continue
            lowered = self.cache.lower(node.op)
            self.prelowered[id(node)] = lowered
            start = 0
            for a, orig in zip(args, node.args):
                pack = lowered.packs.get(start)
                if pack is not None and injective_single(a):
                    self.out_packs[id(a)] = pack
                start += len(flatten_type(orig.checked_type))

    def build(self, main: Function) -> GraphProgram:
        env, input_names = self.inputs(main)
        let_values = {}
        order = post_order(main.body)
        for node in order:
            if type(node) is Let:
                let_values[node.var] = node.value
        self.plan_packed_outputs(order, main.body)
        ent: dict = {}
        for node in order:
            t = type(node)
            if t is Var:
                if node in env:
                    ent[id(node)] = env[node]
                elif node in let_values:
                    ent[id(node)] = ent[id(let_values[node])]
                else:
                    raise BuildError(f"graph executor: free variable %{node.name_hint}")
            elif t is Constant:
                ent[id(node)] = [self.pending(node.data)]
            elif t is Tuple:
                ent[id(node)] = [e for f in node.fields for e in ent[id(f)]]
            elif t is TupleGetItem:
                tt = node.tuple_value.checked_type
                if not isinstance(tt, TupleType):
                    raise BuildError(f"graph executor: projection .{node.index} of a non-tuple "
                                     f"{tt}")
                start = sum(len(flatten_type(f)) for f in tt.fields[: node.index])
                n = len(flatten_type(tt.fields[node.index]))
                ent[id(node)] = ent[id(node.tuple_value)][start : start + n]
            elif t is Let:
                ent[id(node)] = ent[id(node.body)]
            elif t is Call:
                ent[id(node)] = self.call(node, ent)
            else:
                raise BuildError(f"graph executor: {t.__name__} is not supported in a dataflow "
                                 f"program (use the VM or the debug executor)",
                                 getattr(node, "span", None))
        heads = [self.real(e) for e in ent[id(main.body)]]
        structure = _structure(main.body.checked_type)
        prog = GraphProgram(self.nodes, heads, input_names, self.params, structure,
                            {f.name: f for f in self.cache.funcs})
        prog.plan = plan_memory(prog)
        return prog


def _check_static(ty, where):
    for t in flatten_type(ty):
        if not all(isinstance(d, int) for d in t.shape):
            raise BuildError(f"{where}: shape {t.shape} is not static; the graph executor needs "
                             f"static shapes: compile dynamic programs with relay.vm.compile "
                             f"or run them with create_executor('vm')")


def _structure(ty):
    counter = [0]

    def go(t):
        if isinstance(t, TupleType):
            return [go(f) for f in t.fields]
        i = counter[0]
        counter[0] += 1
        return i

    return go(ty)


# ---- graph JSON (tvm.relay's graph executor format) --------------------------------------------


def graph_json(prog: GraphProgram) -> str:
    """The graph-executor JSON of tvm.relay: ``nodes``, ``arg_nodes``, ``heads``,
    ``node_row_ptr`` and ``attrs`` (``shape``, ``dltype``, ``storage_id`` as tagged lists)."""
    jnodes, row_ptr = [], [0]
    shapes, dtypes = [], []
    for n in prog.nodes:
        jn = {"op": n.op, "name": n.name, "inputs": [[a, b, 0] for a, b in n.inputs]}
        if n.op != "null":
            jn["attrs"] = dict(n.attrs)
        jnodes.append(jn)
        row_ptr.append(row_ptr[-1] + len(n.out_types))
        for t in n.out_types:
            shapes.append([int(d) for d in t.shape])
            dtypes.append(t.dtype)
    sids = [prog.plan.storage_id[(nid, i)] for nid, n in enumerate(prog.nodes)
            for i in range(len(n.out_types))]
    doc = {
        "nodes": jnodes,
        "arg_nodes": prog.arg_nodes,
        "heads": [[a, b, 0] for a, b in prog.heads],
        "attrs": {
            "dltype": ["list_str", dtypes],
            "shape": ["list_shape", shapes],
            "storage_id": ["list_int", sids],
        },
        "node_row_ptr": row_ptr,
    }
    return json.dumps(doc, indent=2)


# ---- VM bytecode -------------------------------------------------------------------------------


def emit_vm(prog: GraphProgram, device_index: int = 0, mod_name: str = "default",
            bound_params=(), layout_checks: bool = False, isa=None):
    """The VM bytecode of the graph (an ``ExecBuilder`` not yet linked). With
    ``layout_checks``, ``main`` also calls ``argument_checks.layout_check``'s kernel for each
    of its arguments (the library must have them: :func:`layout_check_kernels`). ``isa`` (the
    target's :func:`relay_tvm.backend.isa.target_isa`) is kept in the metadata, where the
    loader of a ``.tar`` (which has no seal to hold it) reads it before anything runs.

    Functions: ``main(inputs..., params...) -> tuple of outputs``, ``__relay_meta() -> str``,
    ``__relay_params() -> tuple of tensors``.
    """
    import tvm
    from tvm import relax

    ib = relax.ExecBuilder()
    for name in prog.kernels:
        ib.declare_function(name)
    arg_nodes = prog.arg_nodes
    n_in = len(arg_nodes)
    reg: dict = {}
    for k, nid in enumerate(arg_nodes):
        reg[(nid, 0)] = k
    next_reg = [n_in]

    def new_reg():
        r = next_reg[0]
        next_reg[0] += 1
        return r

    plan = prog.plan
    storage_reg: dict = {}
    u8 = tvm.DataType("uint8")
    param_names = [prog.nodes[nid].name for nid in arg_nodes]
    with ib.function("main", num_inputs=n_in, param_names=param_names):
        dev_c = ib.convert_constant(device_index)
        scope_c = ib.convert_constant("global")
        # main's own arguments checked before any kernel reads them: the kernels are built
        # without TVM's per-argument checks (argument_checks.py); a wrong one is an error
        # naming it, e.g. "main: argument #0 'data' (1, 3, 224, 224) float32: expect Tensor
        # with ndim 4 but get 3"
        for k, nid in enumerate(arg_nodes):
            (t,) = prog.nodes[nid].out_types
            shape = [int(d) for d in t.shape]
            what = ib.convert_constant(f"{mod_name} main: argument #{k} {param_names[k]!r} "
                                       f"{tuple(shape)} {t.dtype}:")
            ib.emit_call("vm.builtin.check_tensor_info",
                         args=[ib.r(k), ib.imm(len(shape)), tvm.DataType(t.dtype), what])
            dims = [ib.imm(x) for d in shape for x in (0, d)]  # 0: the dimension equals d
            # (no shape heap: an immediate; a None constant would not serialize)
            ib.emit_call("vm.builtin.match_shape",
                         args=[ib.r(k), ib.imm(0), ib.imm(len(shape)), *dims, what])
            if layout_checks:  # device, strides, byte offset
                ib.emit_call(layout_check_name(t.dtype, len(shape)), args=[ib.r(k)])
        for nid, n in enumerate(prog.nodes):
            if n.op == "null":
                continue
            outs = []
            for i, t in enumerate(n.out_types):
                sid = plan.storage_id[(nid, i)]  # a __nop's: its input's, so a view of it
                if sid not in storage_reg:
                    r = new_reg()
                    ib.emit_call("vm.builtin.alloc_storage",
                                 args=[ib.vm_state(), (max(1, plan.storage_bytes[sid]),), dev_c,
                                       u8, scope_c], dst=ib.r(r))
                    storage_reg[sid] = r
                r = new_reg()
                ib.emit_call("vm.builtin.alloc_tensor",
                             args=[ib.r(storage_reg[sid]), ib.imm(0),
                                   tuple(int(d) for d in t.shape), tvm.DataType(t.dtype)],
                             dst=ib.r(r))
                reg[(nid, i)] = r
                outs.append(r)
            if n.attrs["func_name"] == "__nop":
                continue
            args = [ib.r(reg[e]) for e in n.inputs] + [ib.r(r) for r in outs]
            ib.emit_call(n.attrs["func_name"], args=args)
        r = new_reg()
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(reg[h]) for h in prog.heads], dst=ib.r(r))
        ib.emit_ret(ib.r(r))
    meta = {
        "graph_json": graph_json(prog),
        "input_names": prog.input_names,
        "param_names": list(prog.params),
        "output_structure": prog.output_structure,
        "memory": prog.plan.summary(),
        "mod_name": mod_name,
        # names of the parameters bound at build time (tvm.relay scripts pass them to
        # set_input again; those are already in the library), and their [shape, dtype] when
        # given as a mapping (set_input refuses a value that cannot be that parameter)
        "bound_params": sorted(bound_params),
        "bound_param_types": dict(bound_params) if isinstance(bound_params, dict) else {},
        "isa": isa,
    }
    with ib.function("__relay_meta", num_inputs=0):
        ib.emit_call("vm.builtin.copy", args=[ib.convert_constant(json.dumps(meta))], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    with ib.function("__relay_params", num_inputs=0):
        # The tensors are not constants of the bytecode (whose builder hashes every constant's
        # bytes to share equal ones: 0.15 s of ResNet-50's build, on the calling thread) but
        # the map ``VMLink`` puts in a ``const_loader`` module between the executable and the
        # kernels (exported with them); this function reads them from it by name, in order.
        names = list(prog.params)
        if names:
            ib.emit_call("get_const_var_tensor", args=[], dst=ib.r(0))
        for i, name in enumerate(names):
            ib.emit_call("ffi.MapGetItem", args=[ib.r(0), ib.convert_constant(name)],
                         dst=ib.r(i + 1))
        r = len(names) + 1
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(i + 1) for i in range(len(names))],
                     dst=ib.r(r))
        ib.emit_ret(ib.r(r))
    return ib, meta


def layout_check_kernels(prog: GraphProgram) -> dict:
    """``name -> PrimFunc``: the layout-check kernels ``emit_vm(..., layout_checks=True)``
    calls, one per dtype and rank among ``main``'s arguments."""
    kinds = {(t.dtype, len(t.shape)) for nid in prog.arg_nodes
             for t in prog.nodes[nid].out_types}
    return dict(layout_check(dtype, ndim) for dtype, ndim in sorted(kinds))


__all__ = ["build_graph", "graph_json", "emit_vm", "layout_check_kernels", "GraphProgram",
           "GraphNode"]

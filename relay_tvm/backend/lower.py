"""Lowering primitive functions to scheduled TIR PrimFuncs.

A primitive function (``Function`` with ``Primitive=1``) becomes a TE graph: one
``te.placeholder`` per tensor parameter (tuple parameters contribute one per field, flattened
depth-first), then every operator's registered ``compute(attrs, inputs, out_type)`` in
post-order, then the outputs (the fields of a tuple result, flattened). ``te.create_prim_func``
turns it into a PrimFunc in destination-passing style ``kernel(inputs..., outputs...)``, which is
then scheduled by :mod:`relay_tvm.backend.schedule` (tuning database ▸ target rules ▸ generic
fallback).

Structurally equal primitive functions (``relay_tvm.analysis.structural_equal``) are lowered and
compiled once: :class:`LowerCache` keys them by ``structural_hash``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import BuildError
from ..ir.expr import Call, Constant, Function, Let, Tuple, TupleGetItem, Var
from ..ir.types import AnyDim, TensorType, TupleType
from .partition import post_order


def flatten_type(ty) -> list:
    """The tensor types of ``ty`` (a tensor or nested tuple type), depth-first."""
    out, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        elif isinstance(t, TensorType):
            out.append(t)
        else:
            raise BuildError(f"cannot compile a value of type {t}: only tensors and tuples of "
                             f"tensors")
    return out


def _flat(v) -> list:
    """A TE value (tensor or nested list of tensors) as a flat list."""
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(_flat(x))
        return out
    return [v]


def _rebuild_value(flat: list, ty):
    """Regroup a flat list of TE tensors along ``ty``'s tuple structure."""
    it = iter(flat)

    def build(t):
        if isinstance(t, TupleType):
            return [build(f) for f in t.fields]
        return next(it)

    return build(ty)


@dataclass
class Pack:
    """A layout rewrite of a kernel input, chosen by a schedule rule (Relay's AlterOpLayout /
    meta-schedule's layout rewrite, done per kernel): the kernel reads input ``index`` in a
    packed layout, so the graph passes it packed. Constants are packed once at build time;
    other values go through a packing kernel at run time.

    Attributes:
        key: names the layout (``"OIHW->OIHW32o"``); equal keys on equal shapes pack equally.
        new_shape: the packed shape.
        inverse: ``inverse(*new_index) -> old_index``, written with ``+ - * // %`` only so it
            works on TIR expressions and NumPy integer arrays alike.
    """

    key: str
    new_shape: tuple
    inverse: object

    def pack_numpy(self, arr: np.ndarray) -> np.ndarray:
        # open (broadcasting) grids: a dense np.indices of a 100M-element weight would take
        # gigabytes (VGG-16's fc6)
        grids = np.indices(self.new_shape, dtype=np.int64, sparse=True)
        old = np.broadcast_arrays(*self.inverse(*grids))
        return np.ascontiguousarray(arr[tuple(old)])

    def pack_te(self, tensor):
        from tvm import te

        return te.compute(self.new_shape, lambda *i: tensor[tuple(self.inverse(*i))],
                          name="packed")


@dataclass
class LoweredFunc:
    """A lowered primitive function.

    Attributes:
        name: the kernel's global symbol.
        prim_func: the scheduled ``tvm.tirx.PrimFunc``.
        input_types: flat tensor types of the kernel inputs (parameters, then lifted constants).
        output_types: flat tensor types of the outputs.
        lifted: non-scalar constants of the body that became extra kernel inputs (NumPy arrays).
        anchor: the name of the anchor operator (the one of highest pattern kind).
        schedule_rule: the rule that scheduled it (for reports and tests).
        database_miss: why the build's tuning database gave it no schedule
            (``schedule.NO_RECORD``, ``schedule.NOT_TUNED``, ``"dynamic shape"``, or why a record
            was not applied); "" when a record was applied or the build had no database.
    """

    name: str
    prim_func: object
    input_types: list
    output_types: list
    lifted: list = field(default_factory=list)
    anchor: str = ""
    schedule_rule: str = ""
    packs: dict = field(default_factory=dict)  # input index -> Pack
    # dynamic shapes: the shape function (a PrimFunc ``(inputs..., shape vectors...)``, one int64
    # vector per output listed in ``dynamic_outputs``), None when every output shape is static
    shape_func: object = None
    shape_func_name: str = ""
    dynamic_outputs: list = field(default_factory=list)
    shape_func_inputs: list = field(default_factory=list)  # kernel input indices it takes
    # a batch-loop kernel (see batch_loop): the index of a dynamic input whose first dimension
    # is every output's first dimension (the VM then builds the output shapes directly)
    batch_rows_input: int | None = None
    database_miss: str = ""


def anchor_op(func: Function):
    """The anchor operator of a primitive function: the call of highest fusion pattern kind
    (the first one in evaluation order on ties), as Relay's lowering chose its schedule."""
    from ..op.registry import Op

    best, best_kind = None, -1
    for node in post_order(func.body):
        if isinstance(node, Call) and isinstance(node.op, Op):
            k = int(node.op.pattern)
            if k > best_kind:
                best, best_kind = node, k
    return best


def _scalar_const(value, dtype):
    """A 0-d TE tensor holding ``value`` (binds the value outside any loop)."""
    import tvm
    from tvm import te

    return te.compute((), lambda: tvm.tirx.const(value, dtype), name="const")


_INT32_ELEMENTS = (1 << 31) - 1  # the most elements a kernel's int32 indices address


def _check_elements(ty, what: str, span=None) -> None:
    """Refuse a tensor type of static shape with more elements than a kernel's int32 flat
    index reaches: TVM's TIR lowering failed on it with its own check ("Literal value ...
    exceeds range of int32"), naming no tensor (a fresh-user trial)."""
    for t in flatten_type(ty):
        n = 1
        for d in t.shape:
            if not isinstance(d, (int, np.integer)):
                break  # a symbolic dimension: checked at run time, when it is known
            n *= int(d)
        else:
            if n > _INT32_ELEMENTS:
                raise BuildError(f"{what}: tensor of shape {tuple(int(d) for d in t.shape)} "
                                 f"({t.dtype}) has {n} elements; compiled kernels address at "
                                 f"most 2^31 - 1 = {_INT32_ELEMENTS} (int32 indices)", span)


def _param_placeholders(func: Function, where: str, symbols):
    """``(placeholders, env)``: a TE placeholder per tensor of each parameter (tuples
    flattened), and ``env`` mapping each parameter to its placeholder (or nested list)."""
    from tvm import te

    inputs: list = []
    env: dict = {}
    for p in func.params:
        ty = p.checked_type if hasattr(p, "_checked_type") else p.type_annotation
        if ty is None:
            raise BuildError(f"{where}: parameter %{p.name_hint} has no type")
        _check_elements(ty, f"{where}: parameter %{p.name_hint}", p.span)
        phs = []
        for j, t in enumerate(flatten_type(ty)):
            nm = p.name_hint if isinstance(ty, TensorType) else f"{p.name_hint}_{j}"
            phs.append(te.placeholder(symbols.placeholder_shape(t), t.dtype, name=nm))
        inputs.extend(phs)
        env[p] = phs[0] if isinstance(ty, TensorType) else _rebuild_value(phs, ty)
    return inputs, env


def _call_compute(node, flat_in, out_type):
    """The TE tensor (list of tensors for a tuple result) of the operator call ``node`` on the
    flattened input tensors ``flat_in``, of type ``out_type`` (symbolic where dynamic)."""
    op = node.op
    if op.compute is None:
        raise BuildError(f"operator {op.name} has no TE compute registered; it cannot be "
                         f"compiled (use the debug executor)", node.span)
    from .half_accum import call_compute

    try:
        out = call_compute(op, node.attrs, flat_in, out_type)
    except BuildError:
        raise
    except Exception as e:
        raise BuildError(f"TE compute of {op.name} failed: {type(e).__name__}: {e}",
                         node.span) from e
    if isinstance(out_type, TupleType):
        out = list(out)
        if len(out) != len(out_type.fields):
            raise BuildError(f"TE compute of {op.name} returned {len(out)} tensors for "
                             f"a {len(out_type.fields)}-tuple", node.span)
    elif isinstance(out, (list, tuple)):
        if len(out) != 1:
            raise BuildError(f"TE compute of {op.name} returned {len(out)} tensors for "
                             f"a tensor result", node.span)
        out = out[0]
    return out


def to_te(func: Function, where: str = "primitive function", symbols=None):
    """Build the TE graph of a primitive function.

    ``Any`` dimensions become symbolic (see :mod:`relay_tvm.backend.shape_func`): ``symbols``
    (a ``SymbolicDims``, made when None) collects their variables and the data-dependent ones.

    Returns:
        ``(inputs, outputs, lifted)``: input placeholders (flattened params, then one per lifted
        constant), output tensors (flattened), lifted constants as NumPy arrays.

    Raises:
        BuildError: an operator has no TE compute (or, for a data-dependent output shape, no
            shape function), or the body uses a construct that is not an operator call,
            tuple, projection, variable or constant.
    """
    from tvm import te

    from ..op.registry import Op
    from .shape_func import SymbolicDims, bind_data_dependent, output_type

    symbols = symbols if symbols is not None else SymbolicDims()
    inputs, env = _param_placeholders(func, where, symbols)
    lifted = []
    vals: dict = {}
    for node in post_order(func.body):
        t = type(node)
        if t is Var:
            if node not in env:
                raise BuildError(f"{where}: free variable %{node.name_hint}")
            vals[id(node)] = env[node]
        elif t is Constant:
            arr = np.asarray(node.data)
            dtype = "bool" if arr.dtype == np.bool_ else arr.dtype.name
            if arr.ndim == 0:
                vals[id(node)] = _scalar_const(arr.item(), dtype)
            else:
                ph = te.placeholder(arr.shape, dtype, name=f"c{len(lifted)}")
                lifted.append(np.array(arr))
                inputs.append(ph)  # after the parameters' placeholders, as documented
                vals[id(node)] = ph
        elif t is Tuple:
            vals[id(node)] = [vals[id(f)] for f in node.fields]
        elif t is TupleGetItem:
            vals[id(node)] = vals[id(node.tuple_value)][node.index]
        elif t is Let:
            env[node.var] = vals[id(node.value)]
            vals[id(node)] = vals[id(node.body)]
        elif t is Call:
            if not isinstance(node.op, Op):
                raise BuildError(f"{where}: calls of {type(node.op).__name__} cannot be lowered "
                                 f"inside a primitive function", node.span)
            flat_in = []
            for a in node.args:
                flat_in.extend(_flat(vals[id(a)]))
            op = node.op
            out_type, fresh = output_type(node, [vals[id(a)] for a in node.args], symbols,
                                          f"{where}: {op.name}")
            _check_elements(out_type, f"{where}: the result of {op.name}", node.span)
            if fresh:
                bind_data_dependent(symbols, op, node.attrs, flat_in, out_type, fresh,
                                    f"{where}: {op.name}")
            vals[id(node)] = _call_compute(node, flat_in, out_type)
        else:
            raise BuildError(f"{where}: {t.__name__} cannot be lowered to TE",
                             getattr(node, "span", None))
    outputs = _flat(vals[id(func.body)])
    # An output that is an input (or repeats an earlier output) gets a copy, so every kernel
    # output is a distinct buffer the kernel writes.
    seen, final = set(), []
    in_set = set(inputs)
    for o in outputs:
        if o in in_set or o in seen or isinstance(o.op, te.PlaceholderOp):
            o = te.compute(o.shape, _copy_of(o), name="copy")
        seen.add(o)
        final.append(o)
    return inputs, final, lifted


def _copy_of(t):
    """The fcompute of a copy of ``t`` (te.compute rejects keyword-argument lambdas)."""
    return lambda *i: t(*i)


def _single_definitions(prim):
    """``prim`` with every variable defined once (TVM's ConvertSSA renames the others). An
    operator whose compute binds a ``Let`` (the IEEE-754 min / max / floor_mod helpers of
    :mod:`relay_tvm.op._ieee`) and is inlined into two consumers defines its variable twice,
    which TVM's next schedule refused as ill-formed TIR (``where(greater(floor_mod(x, x), x),
    x, floor_mod(x, x))``: found by the differential fuzzer)."""
    import tvm

    mod = tvm.tirx.transform.ConvertSSA()(tvm.IRModule({"main": prim}))
    return mod["main"]


def keep_init_of_empty_reductions(prim):
    """``prim`` with the init of every reduction block that may reduce over nothing (a
    reduction axis of extent 0 or of a symbolic extent, which may be 0 at run time) moved out
    in front of its reduction loops (``decompose_reduction`` at the innermost loop TVM accepts:
    the outermost reduction loop).

    A reduction block's ``T.init()`` is lowered to ``if k == 0: init`` inside the reduction
    loops, so over an empty reduction axis (``sum`` of a (3, 0) tensor, a conv2d with 0 input
    channels, ``sum`` over an ``Any`` axis that is 0 at run time, ``dense`` with ``K = 0``) it
    never ran and the output kept uninitialised memory instead of the reduction's identity
    (new-user trials)."""
    import tvm

    from .schedule import new_schedule

    sch = new_schedule(tvm.IRModule({"main": prim}))
    try:
        todo = list(sch.get_child_blocks(sch.get_sblock("root")))
    except Exception:  # no root block to walk: leave the function as it is
        return prim
    found = []
    while todo:
        block = todo.pop()
        todo.extend(sch.get_child_blocks(block))
        b = sch.get(block)
        if b.init is not None and any(
                int(iv.iter_type) == 2 and not (type(iv.dom.extent).__name__ == "IntImm"
                                                and int(iv.dom.extent) > 0)
                for iv in b.iter_vars):
            found.append(block)
    changed = False
    for block in found:
        # below the outermost reduction loop TVM refuses (the init would run once per
        # iteration of the loops above); from the innermost loop outwards, the first it takes
        for lp in reversed(sch.get_loops(block)):
            try:
                sch.decompose_reduction(block, lp)
            except Exception:  # noqa: S112 - a loop TVM refuses: try the next one out
                continue
            changed = True
            break
    return sch.mod["main"] if changed else prim


class LowerCache:
    """Lowers primitive functions, compiling structurally equal ones once.

    Args:
        target: the ``tvm.target.Target``.
        mod_name: prefix of kernel names (``tvmgen_<mod_name>_fused_<ops>``, as Relay named them).
        database: an optional tuning database (``tvm.s_tir.meta_schedule.Database``).
    """

    def __init__(self, target, mod_name: str = "default", database=None):
        self.target = target
        self.mod_name = mod_name
        self.database = database
        self._buckets: dict = {}
        self.funcs: list = []  # LoweredFunc in creation order
        self._names: set = set()
        self._packs: dict = {}
        self.lookups = 0
        self._misses: dict = {}  # kernel name -> why the database gave it no schedule

    def _name_for(self, func: Function, suffix: str = "") -> str:
        from ..op.registry import Op

        ops = [n.op.name.replace(".", "_") for n in post_order(func.body)
               if isinstance(n, Call) and isinstance(n.op, Op)]
        base = f"tvmgen_{self.mod_name}_fused_" + "_".join(ops or ["copy"])
        if len(base) + len(suffix) > 80:
            base = base[:80 - len(suffix)]
        base += suffix
        name, k = base, 0
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def lower(self, func: Function, out_pack: Pack | None = None) -> LoweredFunc:
        """The (cached) lowered form of the primitive function ``func``.

        Args:
            func: a primitive function.
            out_pack: when given, the kernel writes its (single, static-shape tensor) result
                in this packed layout: the packing its consumer's schedule chose is done by the
                producer (one pass over the data instead of a write, a read and a
                ``layout_transform`` kernel).
        """
        from ..analysis.structural import structural_equal, structural_hash

        self.lookups += 1
        pkey = None if out_pack is None else (out_pack.key, tuple(out_pack.new_shape))
        key = (structural_hash(func), _sig(func), pkey)
        bucket = self._buckets.setdefault(key, [])
        for f, lowered in bucket:
            if structural_equal(f, func):
                return lowered
        if out_pack is None:
            lowered = self._lower_new(func)
        else:
            lowered = self._lower_symbolic(func, out_pack)
        bucket.append((func, lowered))
        self.funcs.append(lowered)
        return lowered

    def _lower_new(self, func: Function) -> LoweredFunc:
        from .batch_loop import batch_wise

        if any(t.is_dynamic() for p in func.params for t in flatten_type(p.checked_type)) \
                and batch_wise(func):
            lowered = self._lower_batched(func)
            if lowered is not None:
                return lowered
        return self._lower_symbolic(func)

    def _lower_batched(self, func: Function):
        """A batch-wise kernel over a dynamic batch: its batch-1 kernel in a loop (see
        :mod:`relay_tvm.backend.batch_loop`); None when the batch-1 schedule packs a dynamic
        input."""

        from .batch_loop import batch_one, wrap_batch

        inner = self._lower_symbolic(batch_one(func))
        flat = [t for p in func.params for t in flatten_type(p.checked_type)]
        dyn = [i for i, t in enumerate(flat) if t.is_dynamic()]
        if any(i in inner.packs for i in dyn):
            return None
        n_in = len(inner.input_types)
        n_out = len(inner.output_types)
        # several dynamic inputs broadcast a batch of 1 (batch_wise allowed it: broadcasts_rows)
        broadcast = dyn if len(dyn) > 1 else ()
        prim, n, rows = wrap_batch(inner.prim_func, dyn + [n_in + k for k in range(n_out)],
                                   broadcast=broadcast)
        in_types = flat + inner.input_types[len(flat):]
        out_types = [TensorType((AnyDim(), *t.shape[1:]), t.dtype) for t in inner.output_types]
        if broadcast:
            from .batch_loop import batch_shape_func, broadcast_checks, broadcast_rows_message
            from .shape_func import with_checks

            what = f"{inner.anchor or 'a fused operator'} (kernel {inner.name})"
            message = broadcast_rows_message(what, [flat[i] for i in dyn])
            prim = with_checks(prim, broadcast_checks([rows[i] for i in dyn], n, message))
        lowered = LoweredFunc(inner.name, prim, in_types, out_types, inner.lifted, inner.anchor,
                              inner.schedule_rule + "+batch_loop", inner.packs,
                              database_miss=inner.database_miss)
        lowered.dynamic_outputs = list(range(n_out))
        if broadcast:  # n is the broadcast of the inputs' row counts: a small shape function
            lowered.shape_func_inputs = list(dyn)
            lowered.shape_func_name = inner.name + "_shape_func"
            sprim = batch_shape_func([flat[i] for i in dyn], out_types, message)
            lowered.shape_func = sprim.with_attr("global_symbol", lowered.shape_func_name)
        else:
            lowered.batch_rows_input = dyn[0]  # no shape function: the VM makes (n, static...)
        return lowered

    def _lower_symbolic(self, func: Function, out_pack: Pack | None = None) -> LoweredFunc:
        from tvm import te

        from .schedule import schedule_primfunc
        from .shape_func import SymbolicDims, shape_vectors, symbolic_type

        name = self._name_for(func, "" if out_pack is None else "_layout_transform")
        symbols = SymbolicDims()
        from ..op import _common

        del _common.INDEX_CHECKS[:]
        try:
            with self.target:  # some topi computes read the current target (conv2d_NCHWc)
                inputs, outputs, lifted = to_te(func, name, symbols)
            index_checks = list(_common.INDEX_CHECKS)
        finally:
            del _common.INDEX_CHECKS[:]
        if out_pack is not None:
            if len(outputs) != 1 or symbols.vars or symbols.data_dependent:
                raise BuildError(f"{name}: only a kernel with one static-shape output can "
                                 f"write it packed ({out_pack.key})")
            outputs = [out_pack.pack_te(outputs[0])]
        try:
            prim = te.create_prim_func(inputs + outputs)
        except Exception as e:
            raise BuildError(f"{name}: te.create_prim_func failed: {e}") from e
        anchor = anchor_op(func)
        if symbols.vars or symbols.data_dependent:
            from .shape_func import with_checks

            prim, rule, packs = _schedule_symbolic(prim, self.target), "symbolic", {}
            prim = with_checks(prim, symbols.checks)
            if self.database is not None:  # tuning measures static shapes only
                self._misses[name] = "dynamic shape"
        else:
            prim, rule, packs = schedule_primfunc(prim, anchor, self.target, self.database, name,
                                                  misses=self._misses)
        prim = _single_definitions(prim)
        prim = keep_init_of_empty_reductions(prim)
        if index_checks:
            from .shape_func import with_index_checks

            prim = with_index_checks(prim, inputs, index_checks,
                                     report_values=self.target.kind.name in ("llvm", "c"))
        prim = prim.with_attr("global_symbol", name)
        in_types = [symbolic_type(t) for t in inputs]
        out_types = [symbolic_type(t) for t in outputs]
        for i in packs:
            if in_types[i].is_dynamic():
                raise BuildError(f"{name}: the schedule packs input {i} of dynamic shape "
                                 f"{in_types[i]}")
        lowered = LoweredFunc(name, prim, in_types, out_types, lifted,
                              anchor.op.name if anchor is not None else "", rule, packs,
                              database_miss=self._misses.pop(name, ""))
        vecs = shape_vectors(outputs, symbols)
        if any(v is not None for v in vecs):
            lowered.dynamic_outputs = [i for i, v in enumerate(vecs) if v is not None]
            # packed inputs (weights) never decide a shape, and arrive in another layout
            lowered.shape_func_inputs = [i for i in range(len(inputs)) if i not in packs]
            try:
                sprim = te.create_prim_func([inputs[i] for i in lowered.shape_func_inputs]
                                            + [v for v in vecs if v is not None])
            except Exception as e:
                raise BuildError(f"{name}: the shape function failed to build: {e}") from e
            from .shape_func import checks_on_input_shapes, with_checks, with_nonnegative_check

            what = anchor.op.name if anchor is not None else name
            # the kernel's checks run first, so a size that makes no valid output is reported
            # by what the operator required rather than by the negative size it led to
            sprim = with_checks(sprim, checks_on_input_shapes(symbols))
            why = getattr(anchor.op, "shape_error", None) if anchor is not None else None
            if callable(why):
                why = why(anchor.attrs)
            sprim = with_nonnegative_check(sprim, sum(v is not None for v in vecs),
                                           f"{what} (kernel {name})", why)
            lowered.shape_func_name = name + "_shape_func"
            lowered.shape_func = sprim.with_attr("global_symbol", lowered.shape_func_name)
        return lowered

    def pack_kernel(self, pack: Pack, in_type: TensorType) -> LoweredFunc:
        """The (cached) kernel that packs a run-time value of ``in_type`` per ``pack``."""
        from tvm import te

        key = ("pack", pack.key, tuple(in_type.shape), in_type.dtype, tuple(pack.new_shape))
        hit = self._packs.get(key)
        if hit is not None:
            return hit
        name = f"tvmgen_{self.mod_name}_layout_transform"
        k, base = 0, name
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        src = te.placeholder(tuple(in_type.shape), in_type.dtype, name="src")
        out = pack.pack_te(src)
        prim = te.create_prim_func([src, out])
        import tvm

        from .schedule import NOT_TUNED, generic, new_schedule

        sch = new_schedule(prim)
        if not generic.is_gpu_target(self.target):
            generic.cpu_fallback(sch)
            prim = sch.mod["main"]
        else:
            prim = generic.gpu_fallback(tvm.IRModule({"main": prim}), self.target)["main"]
        prim = prim.with_attr("global_symbol", name)
        lowered = LoweredFunc(name, prim, [in_type],
                              [TensorType(tuple(pack.new_shape), in_type.dtype)], [],
                              "layout_transform", "generic",
                              database_miss="" if self.database is None else NOT_TUNED)
        self._packs[key] = lowered
        self.funcs.append(lowered)
        return lowered

    def primitive_functions(self) -> dict:
        """``kernel name -> the Relay primitive function`` it was lowered from (the first of
        the structurally equal ones it serves); the layout-transform kernels made for packed
        inputs come from no Relay function and are absent."""
        out = {}
        for bucket in self._buckets.values():
            for func, lowered in bucket:
                out.setdefault(lowered.name, func)
        return out

    def ir_module(self):
        """All kernels as one ``tvm.IRModule``."""
        return kernel_module(self.funcs)


def kernel_module(lowered_funcs):
    """One ``tvm.IRModule`` of ``LoweredFunc``s: their kernels and shape functions."""
    import tvm

    funcs = {f.name: f.prim_func for f in lowered_funcs}
    funcs.update((f.shape_func_name, f.shape_func) for f in lowered_funcs
                 if f.shape_func is not None)
    return tvm.IRModule(funcs)


def _schedule_symbolic(prim, target):
    """The schedule of a kernel with symbolic dimensions: the templates need static extents,
    and inlining chains of reshapes over symbolic shapes grows index expressions exponentially
    (each level reads the flat index twice), so every block stays materialized and only gets
    the generic loop parallelization (GPU: dlight, which handles symbolic extents)."""
    import tvm

    from .schedule import generic, new_schedule

    if generic.is_gpu_target(target):
        return generic.gpu_fallback(tvm.IRModule({"main": prim}), target)["main"]
    sch = new_schedule(prim)
    if generic._has_root(sch):
        for b in sch.get_child_blocks(sch.get_sblock("root")):
            generic.parallel_vectorize(sch, b, dtype_bytes=generic._dtype_bytes(sch, b))
    return sch.mod["main"]


def _sig(func: Function) -> str:
    parts = []
    for p in func.params:
        ty = p.checked_type if hasattr(p, "_checked_type") else p.type_annotation
        parts.append(str(ty))
    return "|".join(parts)


__all__ = ["LowerCache", "LoweredFunc", "Pack", "to_te", "anchor_op", "flatten_type", "kernel_module"]

"""PartitionGraph (tvm.relay 0.19's ``relay.transform.PartitionGraph``, partition_graph.cc):
each region delimited by ``compiler_begin`` / ``compiler_end`` annotations (from
:func:`AnnotateTarget` and :func:`MergeCompilerRegions`, or written by hand) becomes a global
function for its external compiler, called where the region was.

Steps, as in 0.19:

1. a ``compiler_end`` of a tuple becomes a tuple of ``compiler_end`` s (no nested tuple
   outputs);
2. the annotations of target ``"default"`` (TVM itself) are dropped;
3. in every function of the module, each region (:class:`relay_tvm.analysis.AnnotatedRegionSet`)
   becomes ``@tvmgen_<mod_name>_<compiler>_<function>_<region id>`` with parameters
   ``%<compiler>_<region id>_i<input index>`` (one per distinct value entering the region), the
   attributes ``Primitive=1``, ``Inline=1``, ``Compiler=<compiler>`` and ``global_symbol`` = its
   name, and body the region's outputs (a tuple when it has several: the uses then read them
   with ``TupleGetItem``). With ``bind_constants`` a constant input (or tuple of constants) is
   bound into the function instead of passed.

The program computes the same values: the reference interpreter runs the region functions as
ordinary Relay functions. relay_tvm has no external code generators, so ``relay.build`` and
``relay.vm.compile`` refuse a module holding such functions (0.19 handed them to
``relay.ext.<compiler>``); 0.19's ``relay.ext.<compiler>.optimize`` hook is not called.
"""

from __future__ import annotations

import re

from ..analysis.annotated_regions import AnnotatedRegionSet
from ..errors import RelayError
from ..ir.attrs import DictAttrs
from ..ir.expr import Call, Constant, Function, GlobalVar, Tuple, TupleGetItem, Var, bind
from ..ir.module import IRModule
from ..ir.types import TupleType
from ..op.registry import make_call
from ._rewrite import Rewriter, op_name
from .pass_infra import ModulePass, PassInfo

_BEGIN, _END = "annotation.compiler_begin", "annotation.compiler_end"


def _infer(mod):
    from .infer_type import InferType

    return InferType()(mod)


class _FlattenTupleEnds(Rewriter):
    def post_call(self, orig, new):
        if op_name(new) == _END and isinstance(new.args[0], Tuple):
            t = new.args[0]
            return Tuple([make_call(_END, [f], compiler=new.attrs.compiler) for f in t.fields],
                         t.span)
        return new


class _DropDefault(Rewriter):
    def post_call(self, orig, new):
        if op_name(new) in (_BEGIN, _END) and new.attrs.compiler == "default":
            return new.args[0]
        return new


def _each_function(mod, make_rewriter) -> IRModule:
    out = mod.shallow_copy()
    for gv, f in list(mod.functions.items()):
        if isinstance(f, Function):
            body = make_rewriter().rewrite(f.body)
            if body is not f.body:
                out[gv] = Function(f.params, body, f.ret_type, f.type_params, f.attrs, f.span)
    return _infer(out)


def _is_constant(e) -> bool:
    return isinstance(e, Constant) or (isinstance(e, Tuple) and all(
        isinstance(f, Constant) for f in e.fields))


def mangle(mod_name, name: str) -> str:
    """0.19's external function name: ``tvmgen_<mod_name>_<name>`` (``tvmgen_<name>`` for an
    empty ``mod_name``), characters other than letters, digits and ``_`` made ``_``."""
    prefix = f"tvmgen_{mod_name}" if mod_name else "tvmgen"
    return re.sub(r"[^0-9A-Za-z_]", "_", f"{prefix}_{name}")


class _Partitioner(Rewriter):
    def __init__(self, regions: AnnotatedRegionSet, func_name: str, module: IRModule,
                 mod_name, bind_constants: bool):
        super().__init__()
        self.regions, self.func_name, self.module = regions, func_name, module
        self.mod_name, self.bind_constants = mod_name, bind_constants
        self.inputs: dict = {}  # region -> {outside value (original) -> parameter}
        self.args: dict = {}  # region -> [(parameter, argument expression)]
        self.outs: dict = {}  # region -> {original output expression -> its use}

    def _region(self, call):
        r = self.regions.get_region(call)
        if r is None:
            raise RelayError(f"PartitionGraph: a {call.op.name} annotation (compiler="
                             f"{call.attrs.compiler!r}) belongs to no region")
        return r

    def post_call(self, orig, new):
        name = op_name(orig)
        if name == _BEGIN:
            region = self._region(orig)
            parent = orig.args[0]
            while op_name(parent) in (_BEGIN, _END):
                parent = parent.args[0]
            seen = self.inputs.setdefault(region, {})
            if parent in seen:
                return seen[parent]
            index = next(i for i, b in enumerate(region.args) if b is orig)
            var = Var(f"{region.target}_{region.id}_i{index}", orig.checked_type)
            seen[parent] = var
            self.args.setdefault(region, []).append((var, new.args[0]))
            return var
        if name == _END:
            region = self._region(orig)
            if region not in self.outs:
                self._make_function(region)
            return self.outs[region][orig.args[0]]
        return new

    def _make_function(self, region) -> None:
        outputs = []
        for end in region.rets:
            if not any(end.args[0] is o for o in outputs):
                outputs.append(end.args[0])
        fields = [self.rewrite(o) for o in outputs]  # the region's body, inputs as parameters
        params, call_args, binds = [], [], {}
        for var, arg in self.args.get(region, []):
            params.append(var)
            if self.bind_constants and _is_constant(arg):
                binds[var] = arg
            else:
                call_args.append(arg)
        if len(fields) == 1:
            body, ret = fields[0], outputs[0].checked_type
        else:
            body, ret = Tuple(fields), TupleType([o.checked_type for o in outputs])
        name = mangle(self.mod_name, f"{region.target}_{self.func_name}_{region.id}")
        if name in self.module:
            raise RelayError(f"PartitionGraph: global function {name} already exists")
        func = Function(params, body, ret, (), None)
        if binds:
            func = bind(func, binds)
        func = Function(func.params, func.body, ret, (), DictAttrs({
            "Primitive": 1, "Inline": 1, "Compiler": region.target, "global_symbol": name}))
        gv = GlobalVar(name)
        self.module[gv] = func
        call = Call(gv, call_args)
        if len(outputs) == 1:
            self.outs[region] = {outputs[0]: call}
        else:
            self.outs[region] = {o: TupleGetItem(call, i) for i, o in enumerate(outputs)}


def partition_graph(mod: IRModule, mod_name="default", bind_constants: bool = True) -> IRModule:
    """PartitionGraph on ``mod`` (see the module docstring); returns a new typed module."""
    mod = _each_function(_infer(mod), _FlattenTupleEnds)
    mod = _each_function(mod, _DropDefault)
    out = mod.shallow_copy()
    for gv, f in list(mod.functions.items()):
        if not isinstance(f, Function):
            continue
        regions = AnnotatedRegionSet(f, _BEGIN, _END, gv.name_hint)
        if not len(regions):
            continue
        body = _Partitioner(regions, gv.name_hint, out, mod_name, bind_constants).rewrite(f.body)
        out[gv] = Function(f.params, body, f.ret_type, f.type_params, f.attrs, f.span)
    return _infer(out)


def PartitionGraph(mod_name="default", bind_constants=True):  # noqa: N802 - Relay's name
    """Lift each annotated region to a global function for its external compiler (see the
    module docstring).

    Args:
        mod_name: the name prefix: functions are ``tvmgen_<mod_name>_...``.
        bind_constants: bind constant inputs into the region functions.

    Raises:
        RelayError: an annotation outside every region, or mismatched begin / end targets.
    """
    return ModulePass(lambda m, c: partition_graph(m, mod_name, bind_constants),
                      PassInfo(0, "PartitionGraph"))




def ManifestAlloc(*args, **kwargs):  # noqa: N802 - Relay's name
    """0.19's ``ManifestAlloc`` (memory_alloc.cc): not provided.

    0.19 rewrote a fused program into its memory dialect (``memory.alloc_storage``,
    ``memory.alloc_tensor``, ``vm.invoke_tvm_op``, ``vm.shape_func``) as a step of its VM
    compiler. relay_tvm has no such operators: its VM compiler makes allocation explicit in the
    bytecode it emits (:mod:`relay_tvm.backend.vm_codegen`, ``vm.builtin.alloc_storage`` /
    ``alloc_tensor``), after FuseOps and memory planning.

    Raises:
        NotProvidedError: always, naming that.
    """
    from ..errors import NotProvidedError

    raise NotProvidedError(
        "relay.transform.ManifestAlloc is not provided: relay_tvm has no Relay memory dialect "
        "(memory.alloc_storage / memory.alloc_tensor / vm.invoke_tvm_op); its VM compiler makes "
        "allocation explicit in the bytecode it emits (relay_tvm.backend.vm_codegen). Compile "
        "with relay.vm.compile(mod, target) and read exe.bytecode to see the allocations")
__all__ = ["PartitionGraph", "partition_graph", "mangle", "ManifestAlloc"]

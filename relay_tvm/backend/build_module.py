"""``relay.build`` and ``relay.optimize`` (tvm.relay.build_module).

``build`` runs the optimization pipeline of the current ``PassContext`` (fusion included),
lowers and schedules every primitive function, links the kernels with the VM host program into
one executable, and returns a :class:`GraphExecutorFactoryModule`.
"""

from __future__ import annotations

import contextvars
import time

from ..errors import BuildError, InputError, did_you_mean
from ..ir.expr import Function
from ..ir.module import IRModule
from ..transform.bind_params import (  # noqa: F401  (bind_params_by_name: tvm.relay.build_module's name)
    BOUND_PARAMS_ATTR,
    bind_params_by_name,
    param_fingerprint,
)


def _as_module(mod) -> IRModule:
    if isinstance(mod, IRModule):
        _refuse_external(mod)
        return mod
    if isinstance(mod, Function):
        return IRModule.from_expr(mod)
    got = f"{type(mod).__module__}.{type(mod).__name__}"
    hint = (" (a TVM IRModule; build Relay programs with relay_tvm.IRModule)"
            if got.startswith("tvm.") else "")
    raise BuildError(f"build: expected a relay_tvm.IRModule or a relay_tvm.Function, got "
                     f"{got}{hint}")


def _refuse_external(mod: IRModule) -> None:
    """A function for an external compiler (``Compiler`` attribute, as PartitionGraph makes)
    cannot be built: relay_tvm has no external code generators (0.19's ``relay.ext.*``)."""
    for gv, f in mod.functions.items():
        attrs = getattr(f, "attrs", None)
        compiler = attrs.get("Compiler") if attrs is not None and hasattr(attrs, "get") else None
        if compiler:
            raise BuildError(
                f"@{gv.name_hint} is a function for the external compiler {compiler!r} (made "
                f"by transform.PartitionGraph); relay_tvm has no external code generators "
                f"(tvm.relay 0.19's relay.ext.{compiler}): build the module before "
                f"PartitionGraph to compile every operator with TVM, or run the partitioned "
                f"module with relay.create_executor('debug')")


def _bound_record(main) -> dict:
    """``main``'s :data:`BOUND_PARAMS_ATTR` record of the params bound into it as constants
    (by ``relay.quantize.quantize`` or ``bind_params_by_name``), ``{name: fingerprint}`` with
    :func:`param_fingerprint` of each value (empty if none)."""
    bound = main.attrs.get(BOUND_PARAMS_ATTR) if main.attrs is not None else None
    if not bound:
        return {}
    if isinstance(bound, str):  # JSON (what quantize writes; it survives the text format)
        import json

        bound = json.loads(bound)
    return dict(bound)


def _split_fingerprint(fp: str):
    """``(dtype, shape, digest)`` of a :func:`param_fingerprint` ``f"{dtype}{shape}:{sha1}"``
    (shape a tuple; None where ``fp`` is not of that form)."""
    import ast

    dtype, paren, rest = str(fp).partition("(")
    shape, colon, digest = rest.rpartition(":")
    if not paren or not colon:
        return None
    try:
        return dtype, tuple(ast.literal_eval("(" + shape)), digest
    except (ValueError, SyntaxError):
        return None


def _how_different(bound_fp: str, value) -> str:
    """What differs between the value bound as a param (fingerprint ``bound_fp``) and
    ``value``: the dtype, the shape, or the values."""
    from ..errors import no_implicit_cast

    old, new = _split_fingerprint(bound_fp), _split_fingerprint(param_fingerprint(value))
    if old is None or new is None:
        return "with a different value"
    if old[0] != new[0]:
        return (f"with a different dtype: {old[0]} bound, {new[0]} given"
                f"{no_implicit_cast(old[0], value)}")
    if old[1] != new[1]:
        return f"with a different shape: {old[1]} bound, {new[1]} given"
    return f"with different values (of the same dtype {old[0]} and shape {old[1]})"


def _drop_already_bound(main, params: dict, who: str = "build") -> dict:
    """0.19 idioms: ``relay.build(relay.quantize.quantize(mod, params), params=params)``, and
    ``relay.build`` with the params of a main that ``bind_params_by_name`` bound them into. The
    params bound already are left out when they are the very values bound; a different value
    is an error, not silently dropped."""
    bound = _bound_record(main)
    if not bound:
        return params
    names = {p.name_hint for p in main.params}
    out = {}
    for k, v in params.items():
        if k in bound and k not in names:
            if param_fingerprint(v) != bound[k]:
                raise InputError(f"{who}: param {k!r} was bound into main already (by "
                                 f"relay.quantize or bind_params_by_name) "
                                 f"{_how_different(bound[k], v)}")
            continue
        out[k] = v
    return out


def _bind_params(mod: IRModule, params, who: str = "build") -> IRModule:
    from collections.abc import Mapping

    if params is not None and not isinstance(params, Mapping):
        raise InputError(f"{who}: params must be a dict of parameter name -> array, got "
                         f"{type(params).__name__} {params!r:.80}")
    if not params:
        return mod

    mod = mod.shallow_copy()
    main = mod["main"]
    params = _drop_already_bound(main, dict(params), who)
    if not params:
        return mod
    check_param_names(main, params, who)
    mod["main"] = bind_params_by_name(main, params, record=False)
    return mod


def check_param_names(main, params, who: str, also=()) -> None:
    """Refuse the names of ``params`` that are not parameters of ``main`` (nor in ``also``).

    Raises:
        InputError: naming them, the closest parameter names and ``main``'s parameters
            (tvm.relay 0.19 skipped such names; a misspelt one left its weight an input).
    """
    names = {p.name_hint for p in main.params}
    unknown = [k for k in params if k not in names and k not in also]
    if not unknown:
        return
    from ..errors import close_names, did_you_mean

    bound = sorted(k for k in _bound_record(main) if k not in names)
    choices = sorted(names) + bound
    if len(unknown) == 1:
        hints = did_you_mean(unknown[0], choices)
    else:
        hints = "; ".join(f"did you mean {' or '.join(map(repr, c))} for {k!r}?"
                          for k in unknown for c in [close_names(k, choices)] if c)
        hints = f" ({hints})" if hints else ""
    raise InputError(
        f"{who}: params {unknown} are not parameters of main{hints}; parameters: "
        f"{sorted(names)}"
        f"{f', already bound: {bound}' if bound else ''}. tvm.relay 0.19 ignored such "
        f"names, relay_tvm refuses them: check the names (a misspelt weight would stay an "
        f"input of main); if the extra names are really not main's, leave them out of "
        f"params")


def _infer(mod: IRModule) -> IRModule:
    from ..typing.infer import infer_module

    return infer_module(mod)


def run_passes(mod, params=None, who: str = "build") -> IRModule:
    """Bind ``params``, then run the optimization passes and fusion of the current
    ``PassContext`` on the whole module (every function); the result is typed. ``who``: the
    entry point named in errors about ``params``."""
    from ..transform._rewrite import forget_functions
    from ..transform.pass_infra import PassContext, get_pass
    from ..transform.pipeline import default_pipeline

    mod = _as_module(mod)
    if "main" not in mod:
        raise BuildError("build: the module has no @main function")
    mod = _infer(_bind_params(mod, params, who))
    ctx = PassContext.current()
    try:
        mod = default_pipeline(fuse=False)(mod)
        fuse = get_pass("FuseOps")
        # Disabling FuseOps (disabled_pass=["FuseOps"]) gives, as in tvm.relay 0.19, one kernel
        # per operator: fusion still has to run (every call must be a primitive function to
        # be lowered), at level 0, which fuses nothing.
        unfused = ctx.opt_level == 0 or "FuseOps" in ctx.disabled_pass
        mod = fuse(fuse_opt_level=0)(mod) if unfused else fuse()(mod)
    finally:
        forget_functions()  # the model's constants are not kept alive by the passes' memos
    return _infer(mod)


def optimize(mod, target=None, params=None):
    """tvm.relay 0.19's ``relay.optimize``: the module ``build`` would compile and the
    parameters, as the pair ``(mod, params)``.

    Args:
        mod, target, params: as :func:`optimize_module`.

    Returns:
        ``(IRModule, dict)``: the optimized, typed module (params bound into it as constants)
        and ``params`` as ``name -> tvm Tensor`` (empty when none were given).
    """
    import tvm

    out = optimize_module(mod, target, params)
    return out, {k: v if hasattr(v, "numpy") else tvm.runtime.tensor(v)
                 for k, v in (params or {}).items()}


def _inline_function_literals(mod: IRModule) -> IRModule:
    """``mod`` with each call of a function literal in ``main`` that is neither primitive nor
    bound to an external compiler replaced by the function's body (the inliner of
    ``transform.InlineGlobals``). Such calls are what ``pattern.partition`` and
    ``MergeComposite`` leave (``Composite`` / ``PartitionedFromPattern`` functions): the graph
    executor refused them as closures (a new-user trial), though nothing but the grouping
    tells them from their bodies. ``mod`` itself when there is no such call."""
    from ..transform.lambda_lift import _Inline

    main = mod["main"]
    new = _Inline(mod, set(), literals=True).rewrite(main)
    if new is main:
        return mod
    out = mod.shallow_copy()
    out["main"] = new
    return _infer(out)


def inline_global_calls(mod: IRModule) -> IRModule:
    """``mod`` with every call of a non-recursive, non-primitive global function inlined into
    its callers (``transform.InlineGlobals``) and the functions ``main`` no longer reaches
    dropped: the graph executor runs one dataflow function, while modules such as
    ``relay.quantize.quantize``'s under ``qconfig(partition_conversions="enabled")``
    (``main`` calling ``@quantize_inputs``, ``@quantized_main``, ``@dequantize_outputs``)
    split one into several. ``main``'s attributes are kept; calls of recursive functions stay
    (the graph codegen then refuses them by name). ``mod`` itself when it has no such call."""
    from ..transform.lambda_lift import _recursive, inline, remove_unused_functions

    if "main" not in mod:
        return mod
    mod = _inline_function_literals(mod)
    targets = {gv for gv, f in mod.functions.items() if gv.name_hint != "main"
               and isinstance(f, Function) and not f.is_primitive}
    if not targets - _recursive(mod):
        return mod
    out = remove_unused_functions(inline(mod, targets))
    main = mod["main"]
    if out["main"].attrs is not main.attrs:  # e.g. relay.quantize's bound params
        out = out.shallow_copy()
        new = out["main"]
        out["main"] = Function(new.params, new.body, new.ret_type, new.type_params, main.attrs,
                               new.span)
    return _infer(out)


def optimize_module(mod, target=None, params=None) -> IRModule:
    """The module ``build`` would compile: params bound, the optimization passes of the current
    ``PassContext`` run, and ``main`` fused into calls of primitive functions.

    Args:
        mod: ``IRModule`` (or a ``Function``, taken as ``main``).
        target: the target, current while the passes run (AlterOpLayout's Winograd choice
            reads its vector width); None: the host.
        params: ``name -> array`` bound to ``main``'s parameters as constants.

    Returns:
        the optimized, typed ``IRModule``.
    """
    from .partition import partition_each_op

    mod = inline_global_calls(_as_module(mod))
    if target is not None:
        from .target import make_target

        with make_target(target):  # target-dependent passes (AlterOpLayout) read it
            mod = run_passes(mod, params)
    else:
        mod = run_passes(mod, params)
    main = partition_each_op(mod["main"])
    if main is not mod["main"]:
        mod = mod.shallow_copy()
        mod["main"] = main
        mod = _infer(mod)
    return mod


def cross_compiler(target):
    """The C++ compiler that links libraries for ``target`` when it is not the host's
    architecture (``<triple>-g++``), or None for the host.

    Raises:
        BuildError: cross-compiling and the compiler is not installed.
    """
    import shutil

    from .target import host_cpu

    host = (target.host or target) if target.kind.name != "llvm" else target
    triple = str(host.attrs.get("mtriple", "")) if host.kind.name == "llvm" else ""
    if not triple or triple.split("-")[0] == host_cpu()[1].split("-")[0]:
        return None
    debian = _debian_triple(triple)
    for cc in dict.fromkeys((f"{triple}-g++", f"{debian}-g++")):
        if shutil.which(cc):
            return cc
    explicit = "relay-tvm compile's --cc PATH" if BUILD_ADVICE.get() == "cli" else \
        "an explicit cc= (the path of a C++ compiler that links for it)"
    raise BuildError(f"export_library: the target triple {triple} needs a cross compiler "
                     f"({debian}-g++, e.g. apt-get install g++-{debian.replace('_', '-')}) or "
                     f"{explicit}")


# what GNU ld says when it is handed object files of another architecture
_WRONG_ARCH_LINK = ("Relocations in generic ELF", "file in wrong format", "incompatible target",
                    "ELF file OS ABI invalid")


def link_library(lib, path, target, kwargs, who: str) -> None:
    """``lib.export_library(path, **kwargs)`` (TVM's), its failure a :class:`BuildError` naming
    ``path``; when the linker was given the objects of another architecture (a ``cc`` for the
    host while the target is cross-compiled), the error says so and names the target's cross
    compiler instead of ending in the linker's page of relocation errors (fresh-user trial)."""
    from .._stderr import without_scope_log

    try:
        with without_scope_log():  # TVM logs the executable's memory scopes when saving
            lib.export_library(path, **kwargs)
    except Exception as e:  # the linker's message (missing tools, unwritable file) is in e
        text = str(e)
        hint = ""
        if any(k in text for k in _WRONG_ARCH_LINK) and target is not None:
            host = (target.host or target) if target.kind.name != "llvm" else target
            triple = str(host.attrs.get("mtriple", "")) if host.kind.name == "llvm" else ""
            cc = kwargs.get("cc")
            what = f"the compiler {cc!r}" if cc else "the compiler"
            want = f"{_debian_triple(triple)}-g++" if triple else "the target's compiler"
            hint = (f"\nhint: {what} links for another architecture than the target "
                    f"({triple or target}): give the target's cross compiler, e.g. {want}")
            # the linker's verdict (its last such line), not its page of relocation errors
            text = [ln for ln in text.splitlines() if any(k in ln for k in _WRONG_ARCH_LINK)][-1]
        raise BuildError(f"{who}: writing {str(path)!r} failed: {text}{hint}") from e
    import os

    if not os.path.isfile(str(path)):  # a compiler that succeeded without writing its -o
        cc = kwargs.get("cc")
        raise BuildError(f"{who}: the compiler{f' {cc!r}' if cc else ''} exited without an "
                         f"error but wrote no {str(path)!r} (is it a C++ compiler that "
                         f"writes its -o file?)")


def _debian_triple(triple: str) -> str:
    """The triple of Debian's cross compiler for ``triple`` (its ``<triple>-g++``; the package
    is ``g++-<triple>`` with ``_`` as ``-``): 32-bit ARM as ``arm-linux-gnueabihf`` (hard
    float) or ``arm-linux-gnueabi``, ``i686``, others ``<arch>-linux-gnu``."""
    arch = triple.split("-")[0]
    if arch.startswith(("arm", "thumb")) and not arch.startswith("arm64"):
        return "arm-linux-gnueabihf" if triple.endswith("hf") else "arm-linux-gnueabi"
    if arch in ("i386", "i486", "i586", "i686"):
        return "i686-linux-gnu"
    return f"{'aarch64' if arch == 'arm64' else arch}-linux-gnu"


class ExecutorFactoryModule:
    """Base of what ``relay.build`` returns (``tvm.relay.backend.executor_factory``'s
    ``ExecutorFactoryModule``); relay_tvm builds for the graph executor only, so
    :class:`GraphExecutorFactoryModule` is its one subclass."""


#: the name 0.19's ``function_metadata`` gives the executor's own entry (``runtime::symbol::
#: tvm_module_main``)
MAIN_FUNCTION_NAME = "__tvm_main__"


class FunctionInfo:
    """What tvm.relay 0.19's ``relay.backend.FunctionInfo`` told of one function of a build
    (an entry of :attr:`GraphExecutorFactoryModule.function_metadata`). The first five fields
    are 0.19's, each a dict keyed by the build's target (``lib.target``, a
    ``tvm.target.Target``); ``input_types`` and ``output_types`` are relay_tvm's.

    Attributes:
        workspace_sizes: ``{target: bytes}``. For ``__tvm_main__``: the bytes the memory plan
            allocates for the kernels' outputs (storages shared by values not live at the
            same time, each as large as its largest value), 0.19's figure, except that the
            storages of the graph's outputs are included (0.19 counted those in ``io_sizes``
            only; here an output may reuse an earlier value's storage). For a kernel:
            empty -- 0.19 measured the scratch memory of the lowered kernel, which relay_tvm
            does not compute (TVM 0.27 lowers the kernels inside ``tvm.compile``).
        io_sizes: ``{target: bytes}``: for ``__tvm_main__``, the bytes of its inputs (those
            of ``main``'s parameters that remain inputs) and outputs; for a kernel, of all its
            input and output buffers (0.19 recorded only the size of a kernel's last buffer;
            0 for a buffer of dynamic shape, as in 0.19).
        constant_sizes: ``{target: bytes}``: for ``__tvm_main__``, the constants the graph
            holds as parameters (``lib.get_params()``); for a kernel, the constants lifted
            into extra kernel inputs (0.19 had none there: 0).
        tir_primfuncs: ``{target: tvm.tirx.PrimFunc}``: the scheduled kernel (before TVM's
            lowering); empty for ``__tvm_main__`` (as 0.19).
        relay_primfuncs: ``{target: relay Function}``: the fused primitive function the
            kernel was lowered from (empty for the layout-transform kernels the backend makes
            for packed inputs, which have none); for ``__tvm_main__`` the optimized ``main``.
        input_types / output_types: ``[(shape tuple, dtype)]`` of the function's inputs
            (a kernel's parameters, then its lifted constants) and outputs, flattened.
    """

    __slots__ = ("workspace_sizes", "io_sizes", "constant_sizes", "tir_primfuncs",
                 "relay_primfuncs", "input_types", "output_types")

    def __init__(self, workspace_sizes, io_sizes, constant_sizes, tir_primfuncs,
                 relay_primfuncs, input_types, output_types):
        self.workspace_sizes = workspace_sizes
        self.io_sizes = io_sizes
        self.constant_sizes = constant_sizes
        self.tir_primfuncs = tir_primfuncs
        self.relay_primfuncs = relay_primfuncs
        self.input_types = input_types
        self.output_types = output_types

    def __repr__(self):
        def sizes(d):  # targets by kind: the full JSON of a target drowns the figures
            return {getattr(getattr(k, "kind", None), "name", str(k)): v for k, v in d.items()}

        return (f"FunctionInfo(inputs={self.input_types}, outputs={self.output_types}, "
                f"io_sizes={sizes(self.io_sizes)}, "
                f"workspace_sizes={sizes(self.workspace_sizes)}, "
                f"constant_sizes={sizes(self.constant_sizes)})")


def _type_pairs(types) -> list:
    """``[(shape, dtype)]`` of tensor types; a dimension known only at run time is kept as
    it is (a ``tvm.tirx`` expression or ``relay.Any()``)."""
    return [(tuple(d if hasattr(d, "dtype") or not isinstance(d, int) else int(d)
                   for d in t.shape), str(t.dtype)) for t in types]


def _bytes_of(pairs) -> int:
    """Bytes of ``[(shape, dtype)]``; a tensor of dynamic shape counts 0 (as in 0.19)."""
    from ..ir.types import TensorType
    from .memory_plan import tensor_bytes

    return sum(tensor_bytes(TensorType(shape, dtype)) for shape, dtype in pairs
               if all(isinstance(d, int) for d in shape))


def function_metadata(target, kernels: dict, primitives: dict, meta: dict, params: dict,
                      main=None) -> dict:
    """0.19's ``function_metadata`` of a build: ``{name: FunctionInfo}`` for every kernel and
    for ``__tvm_main__`` (see :class:`FunctionInfo` for what each field holds here)."""
    import json

    out = {}
    for name, k in kernels.items():
        ins, outs = _type_pairs(k.input_types), _type_pairs(k.output_types)
        lifted = sum(int(a.nbytes) for a in k.lifted)
        func = primitives.get(name)
        out[name] = FunctionInfo({}, {target: _bytes_of(ins) + _bytes_of(outs)},
                                 {target: lifted}, {target: k.prim_func},
                                 {target: func} if func is not None else {}, ins, outs)
    graph = json.loads(meta["graph_json"])
    shapes, dtypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    row = graph["node_row_ptr"]
    names = [graph["nodes"][n]["name"] for n in graph["arg_nodes"]]
    held = set(params)
    ins = [(tuple(shapes[row[n]]), dtypes[row[n]]) for n, name in zip(graph["arg_nodes"], names)
           if name not in held]
    outs = [(tuple(shapes[row[a] + b]), dtypes[row[a] + b]) for a, b, _ in graph["heads"]]
    consts = sum(int(v.numpy().nbytes) if hasattr(v, "numpy") else int(v.nbytes)
                 for v in params.values())
    out[MAIN_FUNCTION_NAME] = FunctionInfo(
        {target: int(meta.get("memory", {}).get("planned_bytes", 0))},
        {target: _bytes_of(ins) + _bytes_of(outs)}, {target: consts}, {},
        {target: main} if main is not None else {}, ins, outs)
    return out


def factory_function(factory, name, where: str, make, var: str = "lib"):
    """``factory[name]`` of a graph library (what ``relay.build`` returns, or
    :class:`LoadedFactory`): tvm.relay 0.19's ``GraphExecutorFactory`` functions.

    - ``factory[libmod_name](dev)``: a :class:`GraphModule` (``make(dev)``);
    - ``factory["debug_create"](libmod_name, dev)``: the same, for
      ``GraphModuleDebug(factory["debug_create"]("default", dev), [dev], graph_json, dump)``;
    - ``factory["get_graph_json"]()``: the graph JSON;
    - ``factory["get_graph_params"]()``: ``name -> tvm Tensor`` of the bound parameters.

    Raises:
        InputError: another name; ``debug_create`` of another module name.
    """
    mod_name = factory.libmod_name
    if name == mod_name:
        return lambda dev=None: make(dev)
    if name == "debug_create":
        def debug_create(module_name, *devices):
            if module_name != mod_name:
                raise InputError(f"{where}: debug_create({module_name!r}, ...): the library "
                                 f"holds the module {mod_name!r}")
            return make(devices[0] if devices else None)

        return debug_create
    if name == "get_graph_json":
        return factory.get_graph_json
    if name == "get_graph_params":
        return factory.get_params
    known = [mod_name, "debug_create", "get_graph_json", "get_graph_params"]
    raise InputError(f"{where}: no function {name!r}{did_you_mean(name, known)}; it has "
                     f"{known} ({var}[{mod_name!r}](dev) makes a GraphModule)")


class GraphExecutorFactoryModule(ExecutorFactoryModule):
    """What ``relay.build`` returns (tvm.relay's factory module).

    Attributes:
        lib: the linked executable (kernels + VM host program), a ``tvm.runtime.Executable``.
        graph_json: the graph-executor JSON.
        params: ``name -> tvm.runtime.Tensor`` of the parameters that stay inputs.
        target: the ``tvm.target.Target`` built for.
        kernels: ``name -> LoweredFunc`` (schedule rule, anchor, ...).
        memory: ``{"planned_bytes", "intermediate_bytes", "num_storages"}``.
        stats: compile statistics (seconds per phase, kernel counts).
    """

    # The runtime's GraphModule: the runtime sits above the backend and registers it (see
    # relay_tvm.runtime.graph_executor), so ``lib["default"](dev)`` gives a GraphModule.
    module_class = None

    def __init__(self, lib, meta: dict, params: dict, target, mod_name="default", kernels=None,
                 stats=None, ir_mod=None, optimized=None, primitives=None):
        self._primitives = dict(primitives or {})
        self._function_metadata = None
        self.lib = lib
        self.meta = meta
        self.graph_json = meta["graph_json"]
        self.params = params
        self.target = target
        self.libmod_name = mod_name
        self.kernels = kernels or {}
        self.memory = meta.get("memory", {})
        self.stats = stats or {}
        self.ir_mod = ir_mod
        self.optimized_mod = optimized

    def get_graph_json(self) -> str:
        return self.graph_json

    @property
    def function_metadata(self) -> dict:
        """``{name: FunctionInfo}`` for every kernel of the build and for the executor's own
        entry ``"__tvm_main__"`` (tvm.relay 0.19's ``function_metadata``): sizes of inputs and
        outputs, of constants and of the memory plan, the scheduled ``PrimFunc`` and the Relay
        primitive function of each kernel, and their input / output shapes and dtypes. What
        each field holds, and what relay_tvm leaves empty (a kernel's workspace size), is in
        :class:`FunctionInfo`."""
        if self._function_metadata is None:
            main = None
            if self.optimized_mod is not None:
                try:
                    main = self.optimized_mod["main"]
                except Exception:  # noqa: BLE001 - a module without main: no Relay function
                    main = None
            self._function_metadata = function_metadata(
                self.target, self.kernels, self._primitives, self.meta, self.params, main)
        return self._function_metadata

    def get_params(self) -> dict:
        return dict(self.params)

    def get_lib(self):
        return self.lib

    def get_source(self, fmt: str = "") -> str:
        """The generated code of the kernels (tvm.relay's ``lib.get_source``).

        Args:
            fmt: ``""`` or ``"ll"`` for LLVM IR, ``"asm"`` for assembly (LLVM targets); ``"cu"``
                / ``""`` for CUDA source; what TVM's ``Module.inspect_source`` accepts.

        Raises:
            BuildError: no kernel module can show source in ``fmt``.
        """
        return kernel_source(self.lib, fmt)

    def get_executor_config(self) -> str:
        return self.graph_json

    def export_library(self, path: str, **kwargs) -> None:
        """Write kernels, host program, graph JSON and parameters into one shared library that
        :func:`relay_tvm.runtime.load_module` loads in any process.

        For a cross-compiled target (``llvm -mtriple=aarch64-linux-gnu`` on an x86 host) the
        matching cross compiler (``aarch64-linux-gnu-g++``) links the library unless ``cc=``
        is given.

        A ``.tar`` path writes TVM's gzipped tar of the object files instead (as tvm.relay 0.19
        did); ``tvm.runtime.load_module`` / :func:`relay_tvm.runtime.load_module` link it into
        a shared library with this machine's C++ compiler when they load it. An archive holds
        no instruction-set record, so loading does not check the CPU's features beforehand.

        Raises:
            InputError: ``path`` does not end in ``.so``, ``.dylib``, ``.dll`` or ``.tar``
                (what ``load_module`` loads).
            BuildError: cross-compiling and no cross compiler is installed; the folder of
                ``path`` does not exist; the compiler or linker fails.
        """
        from .library_file import check_export_path, is_archive

        check_export_path(path, "export_library", archive=True)
        archive = is_archive(path)  # TVM's tar of objects: nothing is linked now
        if "cc" not in kwargs and "fcompile" not in kwargs and not archive:
            cc = cross_compiler(self.target)
            if cc is not None:
                kwargs["cc"] = cc
        if self.target.kind.name == "c" and "fcompile" not in kwargs and not archive:
            kwargs["options"] = list(kwargs.get("options") or []) + C_TARGET_OPTIONS
        import os

        folder = os.path.dirname(os.path.abspath(str(path)))
        if not os.path.isdir(folder):
            raise BuildError(f"export_library: the folder {folder!r} of {str(path)!r} does not "
                             f"exist")
        link_library(self.lib, path, self.target, kwargs, "export_library")
        from .isa import target_isa
        from .library_file import seal_library

        seal_library(str(path), target_isa(self.target))

    def __getitem__(self, name):
        if self.module_class is None:
            raise BuildError("lib['default'](dev): no graph module class registered; "
                             "import relay_tvm.runtime")
        from .isa import check_isa, target_isa

        def make(dev):
            check_isa(target_isa(self.target), f"lib[{name!r}](dev)", "the library")
            return self.module_class._from_executable(self.lib, dev, self.meta, self.params)

        return factory_function(self, name, "lib (relay.build's factory module)", make)

    def __iter__(self):
        """``graph, lib, params = relay.build(...)``: the graph JSON, the compiled library (a
        relax VM executable here) and the bound parameters. tvm.relay 0.19 still allowed it,
        with a DeprecationWarning; so does relay_tvm."""
        import warnings

        warnings.warn("unpacking relay.build's result into (graph, lib, params) is the legacy "
                      "form (deprecated in tvm.relay too); use lib = relay.build(...) and "
                      "graph_executor.GraphModule(lib['default'](dev))",
                      DeprecationWarning, stacklevel=2)
        return iter([self.graph_json, self.lib, self.params])


def kernel_source(lib, fmt: str = "") -> str:
    """The source (``fmt`` as for ``tvm.runtime.Module.inspect_source``) of every kernel module
    under ``lib`` (a ``relax`` VM executable or a runtime module), concatenated."""
    from .link import module_tree

    out = []
    for m in module_tree(lib):
        if m.kind not in ("relax.VMExecutable", "static_library"):
            try:
                text = m.inspect_source(fmt)
            except Exception:  # noqa: BLE001 - a module kind without source in this format
                text = ""
            if text:
                out.append(text)
    if not out:
        raise BuildError(f"get_source: no kernel module of {type(lib).__name__} shows source "
                         f"in format {fmt!r}")
    return "\n".join(out)


def build(ir_mod, target=None, target_host=None, params=None, mod_name="default",
          executor=None, runtime=None, database=None):
    """Compile a Relay module for the graph executor (tvm.relay.build).

    Args:
        ir_mod: ``IRModule`` with a dataflow ``main`` (or a ``Function``).
        target: ``"llvm"``, ``"llvm -mcpu=..."``, ``"cuda"``, a dict or a ``tvm.target.Target``
            (see :mod:`relay_tvm.backend.target`); when None, the target in scope
            (``with tvm.target.Target(...):``), else host LLVM.
        target_host: host target for device targets.
        params: ``name -> array`` bound to ``main``'s parameters as constants.
        mod_name: name of the module's entry (``lib[mod_name](dev)``) and kernel-name prefix.
        executor, runtime: :class:`~.executor_runtime.Executor` / ``Runtime`` or their names;
            the graph executor on the C++ runtime is the only one ``build`` makes
            (``relay.vm.compile`` makes VM programs); others raise :class:`BuildError`.
        database: optional ``tvm.s_tir.meta_schedule.Database`` of tuned schedules (e.g. from
            :func:`relay_tvm.tune.tune_relay`) or the path (``str``/``os.PathLike``) of a tuning
            work directory; when None, the ``PassContext`` config
            ``"relay.backend.tuning_database"``, or with ``"relay.backend.use_meta_schedule"``
            the database of an enclosing ``with database:`` (tvm.relay 0.19's idiom).

    Returns:
        :class:`GraphExecutorFactoryModule`.

    Raises:
        BuildError: a construct the graph executor cannot run, an operator without a compute, a
            bad target, or a TVM compilation failure.
        TuningError: ``database`` (or the config's) is neither a ``Database``, a path nor
            None, or its work directory does not exist or holds no database.
    """
    import tvm

    from . import dynamic_parallel
    from .executor_runtime import Executor, Runtime
    from .graph_codegen import build_graph, emit_vm, layout_check_kernels
    from .link import KernelCodegen
    from .lower import LowerCache
    from .target import make_target

    Executor.check(executor)
    Runtime.check(runtime)
    tgt = make_target(target, target_host)
    from .schedule import database_in_scope

    database = database_in_scope(database)
    # seconds per phase, wall clock (``*_s``) and CPU time of this process (``*_cpu_s``, all
    # threads): on a shared machine the two differ, and the CPU time is what the phase costs
    stats = {}
    t0, c0 = time.perf_counter(), time.process_time()
    opt = optimize_module(ir_mod, tgt, params)
    stats["optimize_s"] = time.perf_counter() - t0
    stats["optimize_cpu_s"] = time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    cache = LowerCache(tgt, mod_name, database)
    # the kernels lowered so far compile on another thread while the rest are lowered
    # (link.KernelCodegen); codegen_s is what remains after the lowering
    # the kernels without their argument checks: main checks its arguments (emit_vm) and
    # calls them with those and its own tensors only (argument_checks)
    pipeline = dynamic_parallel.pipeline(tgt, argument_checks=False)
    with KernelCodegen(cache.funcs, tgt, pipeline) as codegen:
        prog = build_graph(opt["main"], cache)
        stats["lower_s"] = time.perf_counter() - t0
        stats["lower_cpu_s"] = time.process_time() - c0
        stats["num_primitive_calls"] = cache.lookups
        stats["num_kernels"] = len(cache.funcs)
        t0, c0 = time.perf_counter(), time.process_time()
        bound = {k: [[int(d) for d in v.shape], str(v.dtype)] for k, v in (params or {}).items()}
        unchecked = pipeline == dynamic_parallel.UNCHECKED
        from .isa import target_isa

        ib, meta = emit_vm(prog, mod_name=mod_name, bound_params=bound, layout_checks=unchecked,
                           isa=target_isa(tgt))
        tir_mod = cache.ir_module()
        if tgt.kind.name == "c":
            _check_c_dtypes(tir_mod)
        # the parameters go into the executable as they are (emit_vm's __relay_params reads
        # them back by name) and are the factory's get_params(): one copy
        params_out = {k: tvm.runtime.tensor(v) for k, v in prog.params.items()}
        try:
            with _codegen_context(tgt):
                lib = codegen.link(ib, params_out,
                                   layout_check_kernels(prog) if unchecked else None)
        except Exception as e:
            raise BuildError(f"build: compiling the kernels for {tgt} failed: {e}") from e
    stats["codegen_s"] = time.perf_counter() - t0
    stats["codegen_cpu_s"] = time.process_time() - c0
    if database is not None:
        _warn_if_no_record_matched(dict(prog.kernels), database)
    return GraphExecutorFactoryModule(lib, meta, params_out, tgt, mod_name,
                                      dict(prog.kernels), stats, tir_mod, opt,
                                      cache.primitive_functions())


# the manifest a relay_tvm.tune work directory keeps next to its database (tune.workdir)
TUNING_MANIFEST = "relay_tvm_tuning.json"


def _tuned_opt_level(database):
    """The ``PassContext`` opt level the work directory of ``database`` (a meta_schedule
    ``JSONDatabase`` made by ``relay_tvm.tune.tune_relay``) was tuned at, from its manifest;
    None when unknown (another kind of database, an older manifest)."""
    import json
    import os

    path = getattr(database, "path_workload", None)
    if not path:
        return None
    try:
        with open(os.path.join(os.path.dirname(str(path)), TUNING_MANIFEST)) as f:
            level = json.load(f).get("opt_level")
    except (OSError, ValueError, AttributeError):
        return None
    return level if isinstance(level, int) else None


#: who the build's advice is for: ``"python"`` (the API) or ``"cli"`` (``relay-tvm compile``
#: sets it, so a warning names the command line's options, not Python)
BUILD_ADVICE = contextvars.ContextVar("relay_tvm_build_advice", default="python")


def _warn_if_no_record_matched(kernels: dict, database=None, who: str = "build") -> None:
    """Warn (at the caller of ``build``) when a tuning database gave none -- or only some -- of
    the kernels tuning would measure a record: most likely it was tuned for another model,
    input shape, opt level or target (or the tuning run stopped before them), and those kernels
    are built untuned (``relay_tvm.tune.database_report`` lists them). When the database's
    work directory says which opt level it was tuned at and the build's differs, the warning
    names both and how to build at the tuned one."""
    from ..transform.pass_infra import PassContext
    from .schedule import NO_RECORD

    used = sum(k.schedule_rule.split("+")[0].startswith("database") for k in kernels.values())
    missing = sum(k.database_miss == NO_RECORD for k in kernels.values())
    if not missing:
        return
    import warnings

    tuned_at = _tuned_opt_level(database) if database is not None else None
    built_at = PassContext.current().opt_level
    if tuned_at is not None and tuned_at != built_at:
        how = (f"compile with `--opt-level {tuned_at}`" if BUILD_ADVICE.get() == "cli" else
               f"build inside `with relay.transform.PassContext(opt_level={tuned_at})` or with "
               f"tune.compile_relay(db, mod, target, params)")
        why = (f"the database was tuned at opt level {tuned_at} and this build is at opt level "
               f"{built_at}, which fuses and lays out the kernels differently: {how}")
    else:
        why = ("was it tuned for another model, input shape, opt level or target, or did the "
               "tuning run stop before them?")
    if not used:
        head = (f"{who}: the tuning database has no record for any of the {missing} kernels "
                f"of this model that tuning measures; the build is untuned")
    else:
        head = (f"{who}: the tuning database has no record for {missing} of the "
                f"{missing + used} kernels of this model that tuning measures (built untuned; "
                f"relay_tvm.tune.database_report(lib) lists them)")
    warnings.warn(f"{head}: {why}" if why[0] == "t" else f"{head} ({why})", stacklevel=3)


# TVM 0.27's C code generator prints an infinite float constant as ``inff`` (max/min
# reductions start from -inf), which is no C; the compiler gets it defined. -O2: the C target
# is scalar code and unoptimized it is another 3-5x slower.
C_TARGET_OPTIONS = ["-Dinff=__builtin_inff()", "-O2"]


def _check_c_dtypes(tir_mod):
    """The C target's code has no half-precision type: refuse such kernels by name instead of
    letting the C compiler fail on ``half`` when the library is exported."""
    for gv, func in tir_mod.functions.items():
        for param in getattr(func, "params", ()):
            if str(getattr(param, "dtype", "")) in ("float16", "bfloat16"):
                raise BuildError(f"build: kernel {gv.name_hint!r} uses {param.dtype} "
                                 f"(parameter {param.name!r}), which the C target cannot express; "
                                 f"build it for 'llvm' or cast to float32 first")


def _codegen_context(tgt):
    """TVM's PassContext for code generation: the current one as it is (not entered again:
    leaving it would call its instruments' ``exit_pass_ctx``, which clears a
    ``PassTimingInstrument``'s profile while the user's context is still open), except for the
    C target, which cannot print vector types (``float8``), so its loops are scalarized
    (``tirx.disable_vectorize``)."""
    import contextlib

    import tvm

    from ..transform.pass_infra import derived_tvm_context

    cur = tvm.transform.PassContext.current()
    if tgt.kind.name != "c":
        return contextlib.nullcontext(cur)
    return derived_tvm_context(cur, config={"tirx.disable_vectorize": True})


__all__ = ["build", "optimize", "ExecutorFactoryModule", "GraphExecutorFactoryModule"]

"""TVM 0.19 names that TVM 0.27 removed or narrowed, which Relay-era scripts rely on.

Each is installed by :func:`install` only where TVM lacks it, or as a wrapper that hands TVM's
own objects to TVM's function unchanged and handles only relay_tvm objects itself:

============================================  ==================================================
``tvm.tir`` (and ``tvm.tir.X``)               TVM 0.27's ``tvm.tirx``; ``tvm.tir.Any`` is Relay's
                                              ``Any`` (a dimension known at run time)
``tvm.nd.array/empty/NDArray``                ``tvm.runtime.tensor/empty/Tensor``
``tvm.contrib.graph_executor``                :mod:`relay_tvm.runtime.graph_executor`
``tvm.contrib.nvcc/utils/cc/tar``             ``tvm.support.*``
``tvm._ffi`` (``base.TVMError``, ...)         :mod:`relay_tvm.compat.ffi`
``tvm.ir.structural_equal/_hash``,            relay_tvm's alpha-equivalence
``tvm.ir.assert_structural_equal``            (:mod:`relay_tvm.analysis.structural`) for Relay
                                              nodes and modules
``tvm.IRModule`` / ``tvm.ir.IRModule``        see :class:`_IRModuleMeta`
``tvm.ir.Op``                                 see :class:`_OpMeta`; ``Op.get`` of a Relay name
                                              is the Relay operator
``tvm.ir.save_json/load_json``                Relay modules and expressions as JSON wrapping
                                              the text format (:mod:`relay_tvm.text.json_io`)
``tvm.target.Target("llvm -mcpu=...")``      0.19's command-line target strings translated
``tvm.meta_schedule``                         ``tvm.s_tir.meta_schedule``; its
                                              ``relay_integration``: :mod:`relay_tvm.tune`
``tvm.error.TVMError``                        ``RuntimeError`` (0.19's TVMError derived from it;
                                              relay_tvm's ``RelayError`` does too)
``tvm.runtime.load_module(p)["default"]``     the graph factory of a library relay.build
                                              exported (:func:`_install_module_getitem`)
``tvm.runtime.Tensor.asnumpy``                ``numpy()`` (0.19's deprecated NDArray alias)
============================================  ==================================================
"""

from __future__ import annotations

import functools
import json
import sys

#: Module aliases: old path -> module here (used only when TVM has no module of that name).
MODULE_ALIASES = {
    "tvm.tir": "tvm.tirx",
    "tvm.nd": "relay_tvm.compat.nd",
    "tvm.runtime.ndarray": "relay_tvm.compat.nd",  # 0.19: tvm.nd was this module
    "tvm.runtime.profiling": "relay_tvm.runtime.profiling",
    "tvm.runtime.profiler_vm": "relay_tvm.runtime.profiler_vm",
    "tvm.contrib.debugger": "relay_tvm.runtime.debugger",
    "tvm.contrib.graph_executor": "relay_tvm.runtime.graph_executor",
    "tvm.contrib.relay_viz": "relay_tvm.compat.relay_viz",  # refused: NotProvidedError
    "tvm.contrib.nvcc": "tvm.support.nvcc",
    "tvm.contrib.utils": "tvm.support.utils",
    "tvm.contrib.cc": "tvm.support.cc",
    "tvm.contrib.tar": "tvm.support.tar",
    "tvm.contrib.popen_pool": "tvm.support.popen_pool",
    "tvm.script.tir": "tvm.script.tirx",
    "tvm._ffi": "relay_tvm.compat.ffi",
    "tvm.ir.diagnostics": "relay_tvm.compat.diagnostics",
    "tvm.runtime.container": "relay_tvm.compat.container",
    "tvm.container": "relay_tvm.compat.container",  # 0.19: runtime and ir containers
    "tvm.runtime.name_transforms": "relay_tvm.backend.name_transforms",
    "tvm.parser": "relay_tvm.text.parser",  # 0.8-0.12 spelling of the text parser
    "tvm.meta_schedule": "relay_tvm.compat.meta_schedule",
    "tvm.meta_schedule.relay_integration": "relay_tvm.compat.meta_schedule.relay_integration",
}


def is_relay(obj) -> bool:
    """Whether ``obj`` is a relay_tvm IR object (expression, type, ADT, module)."""
    from ..ir.base import Node

    if isinstance(obj, (list, tuple)) and obj:
        return any(is_relay(x) for x in obj)
    return isinstance(obj, Node)


def _wrap_json():
    """``tvm.ir.save_json`` / ``load_json`` (and ``tvm.save_json`` / ``tvm.load_json``) of
    Relay modules and expressions: :mod:`relay_tvm.text.json_io`; TVM objects unchanged."""
    import tvm
    import tvm.ir

    orig_save, orig_load = tvm.ir.save_json, tvm.ir.load_json
    if getattr(orig_save, "_relay_tvm", False):
        return

    @functools.wraps(orig_save)
    def save_json(node):
        from ..ir.base import Span

        if is_relay(node) or isinstance(node, Span):
            from ..text.json_io import save_json as save

            return save(node)
        return orig_save(node)

    @functools.wraps(orig_load)
    def load_json(json_str):
        from ..text.json_io import is_relay_json
        from ..text.json_io import load_json as load

        if is_relay_json(json_str):
            return load(json_str)
        return orig_load(json_str)

    for f in (save_json, load_json):
        f._relay_tvm = True
        setattr(tvm.ir, f.__name__, f)
        if hasattr(tvm, f.__name__):
            setattr(tvm, f.__name__, f)


def _wrap_structural():
    import tvm.ir
    import tvm_ffi

    from ..analysis import structural as st

    # TVM 0.27 keeps structural_equal/_hash in tvm_ffi only.
    orig_eq = getattr(tvm.ir, "structural_equal", tvm_ffi.structural_equal)
    orig_hash = getattr(tvm.ir, "structural_hash", tvm_ffi.structural_hash)
    orig_assert = tvm.ir.assert_structural_equal
    if getattr(orig_assert, "_relay_tvm", False):
        return

    def _seq(lhs, rhs, map_free_vars):
        if isinstance(lhs, (list, tuple)) or isinstance(rhs, (list, tuple)):
            if not (isinstance(lhs, (list, tuple)) and isinstance(rhs, (list, tuple))):
                return False
            return len(lhs) == len(rhs) and all(
                st.structural_equal(a, b, map_free_vars) for a, b in zip(lhs, rhs))
        return st.structural_equal(lhs, rhs, map_free_vars)

    @functools.wraps(orig_eq)
    def structural_equal(lhs, rhs, map_free_vars=False):
        if is_relay(lhs) or is_relay(rhs):
            return _seq(lhs, rhs, map_free_vars)
        return orig_eq(lhs, rhs, map_free_vars)

    @functools.wraps(orig_assert)
    def assert_structural_equal(lhs, rhs, map_free_vars=False):
        if is_relay(lhs) or is_relay(rhs):
            if not _seq(lhs, rhs, map_free_vars):
                from ..errors import StructuralMismatchError

                raise StructuralMismatchError(st.mismatch_message(lhs, rhs, map_free_vars))
            return None
        return orig_assert(lhs, rhs, map_free_vars)

    @functools.wraps(orig_hash)
    def structural_hash(node, map_free_vars=False):
        if is_relay(node):
            return st.structural_hash(node, map_free_vars)
        return orig_hash(node, map_free_vars)

    for f in (structural_equal, assert_structural_equal, structural_hash):
        f._relay_tvm = True
        setattr(tvm.ir, f.__name__, f)
        if hasattr(tvm, f.__name__):
            setattr(tvm, f.__name__, f)


class _StandIn(type):
    """Metaclass of a stand-in for a TVM class (``_tvm_cls``, set when it is installed):
    ``isinstance`` / ``issubclass`` hold for TVM's class and for relay_tvm's counterparts
    (``_ours()``), and class attributes are TVM's."""

    _tvm_cls = None

    def _ours(cls) -> tuple:
        return ()

    def __instancecheck__(cls, obj):
        return isinstance(obj, (cls._tvm_cls, *cls._ours()))

    def __subclasscheck__(cls, sub):
        return issubclass(sub, (cls._tvm_cls, *cls._ours()))

    def __getattr__(cls, name):
        return getattr(cls._tvm_cls, name)


class _IRModuleMeta(_StandIn):
    """``tvm.IRModule`` accepting Relay content.

    ``tvm.IRModule(functions, type_definitions)`` makes a relay_tvm :class:`IRModule` when a
    function or type definition is a Relay one, and TVM's module otherwise. An empty
    ``tvm.IRModule()`` / ``tvm.IRModule({})`` is a Relay module when called from code that
    imported ``tvm.relay`` (its globals bind ``relay`` to relay_tvm) and TVM's otherwise, so
    TVM's own code and TVM-only scripts get TVM's module. ``tvm.IRModule.from_expr`` of a
    Relay expression is relay_tvm's. ``isinstance(m, tvm.IRModule)`` holds for both kinds.
    """

    def _ours(cls) -> tuple:
        from ..ir.module import IRModule

        return (IRModule,)

    def __call__(cls, *args, **kwargs):
        from ..ir.module import IRModule

        functions = args[0] if args else kwargs.get("functions")
        type_defs = kwargs.get("type_definitions")
        if type_defs is None and len(args) > 1 and isinstance(args[1], dict):
            type_defs = args[1]
        content = list((functions or {}).values()) + list((type_defs or {}).values())
        relay = any(is_relay(v) for v in content)
        if not relay and not content and len(args) <= 1 and not kwargs:
            relay = _caller_uses_relay()
        if relay:
            return IRModule(functions, type_defs)
        return cls._tvm_cls(*args, **kwargs)


def _caller_uses_relay() -> bool:
    relay = sys.modules.get("relay_tvm")
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
            ("relay_tvm.compat",)):
        frame = frame.f_back
    if frame is None:
        return False
    return relay is not None and any(v is relay for v in frame.f_globals.values())


def _from_expr(expr, *args, **kwargs):
    from ..ir.module import IRModule

    functions = args[0] if args else kwargs.get("functions")
    if is_relay(expr) or any(is_relay(v) for v in (functions or {}).values()):
        type_defs = args[1] if len(args) > 1 else kwargs.get("type_defs")
        return IRModule.from_expr(expr, functions, type_defs)
    return _IRModuleMeta._tvm_cls.from_expr(expr, *args, **kwargs)


def _install_irmodule():
    import tvm
    import tvm.ir

    if isinstance(tvm.IRModule, _IRModuleMeta):
        return
    _IRModuleMeta._tvm_cls = tvm.IRModule
    compat = _IRModuleMeta("IRModule", (), {
        "__doc__": _IRModuleMeta.__doc__,
        "from_expr": staticmethod(_from_expr),
        "__module__": "tvm.ir",
    })
    tvm.IRModule = compat
    tvm.ir.IRModule = compat


def _install_layout() -> None:
    """``tvm.tir.layout("NCHW")`` (0.19's layout constructor; layout rules for ConvertLayout
    use it) while ``tvm.tirx.layout`` stays TVM 0.27's module: the module becomes callable."""
    import types

    import tvm.tirx.layout as mod

    if callable(mod):
        return

    class _CallableLayoutModule(types.ModuleType):
        def __call__(self, layout_str, dtype="int32"):
            from ..transform.convert_layout import layout

            return layout(layout_str, dtype)

    mod.__class__ = _CallableLayoutModule


def install() -> None:
    """Install the names of the table above where TVM lacks them (idempotent)."""
    import tvm
    import tvm.error
    import tvm.ir

    _wrap_structural()
    _wrap_json()
    _install_irmodule()
    _install_transform()
    if not hasattr(tvm.error, "TVMError"):
        tvm.error.TVMError = RuntimeError
    if not hasattr(tvm, "TVMError"):
        tvm.TVMError = tvm.error.TVMError
    if not hasattr(tvm, "register_func"):
        import tvm_ffi

        tvm.register_func = tvm_ffi.register_global_func
    from ..ir.affine_type import TensorAffineType, TupleAffineType

    # tvm.ir 0.19's affine types, which FakeQuantizationToInteger rules import from there
    for cls in (TensorAffineType, TupleAffineType):
        if not hasattr(tvm.ir, cls.__name__):
            setattr(tvm.ir, cls.__name__, cls)
    import tvm.tirx

    from ..ir.types import Any

    if not hasattr(tvm.tirx, "Any"):
        tvm.tirx.Any = Any
    _install_layout()
    _install_module_source()
    _install_module_getitem()
    import tvm.te

    if not hasattr(tvm.te, "size_var"):
        # TVM 0.27 has no SizeVar: a plain variable (shape functions only see it as a dim)
        tvm.te.size_var = lambda name="size", dtype="int32", span=None: tvm.te.var(
            name, dtype, span)
    _install_device()
    _install_make_node()
    _install_op_get()
    _install_load_module()
    _install_target()
    _install_target_constructors()
    _install_vm()
    _install_register_op_attr()
    _install_convert()
    if not hasattr(tvm.runtime.Tensor, "asnumpy"):
        # 0.19's NDArray.asnumpy, a deprecated alias of numpy() that Relay-era scripts call on
        # compiled results (the interpreter's results have it too)
        tvm.runtime.Tensor.asnumpy = tvm.runtime.Tensor.numpy


def _install_convert():
    """``tvm.runtime.convert(value)`` of Relay content (0.19 scripts wrote
    ``relay.Tuple(tvm.runtime.convert([call]))``) gives the Python list / tuple / dict back
    (relay_tvm takes those where Relay took TVM arrays and maps); TVM values convert as before.
    """
    import tvm.runtime

    orig = tvm.runtime.convert
    if getattr(orig, "_relay_tvm", False):
        return

    @functools.wraps(orig)
    def convert(value, *args, **kwargs):
        if is_relay(value) or isinstance(value, dict) and is_relay(list(value.values())):
            return list(value) if isinstance(value, tuple) else value
        return orig(value, *args, **kwargs)

    convert._relay_tvm = True
    tvm.runtime.convert = convert
    if getattr(tvm, "convert", None) is orig:
        tvm.convert = convert


def _install_register_op_attr():
    """``tvm.ir.register_op_attr(name, key, value, level)`` on a Relay operator name sets
    relay_tvm's attribute (read by the Relay passes: ``target.<compiler>`` predicates of
    AnnotateTarget, layout and legalization hooks); other names go to TVM unchanged."""
    import tvm.ir

    orig = tvm.ir.register_op_attr
    if getattr(orig, "_relay_tvm", False):
        return

    @functools.wraps(orig)
    def register_op_attr(op_name, attr_key, value=None, level=10):
        from ..op import op_attrs
        from ..op.registry import is_registered

        if isinstance(op_name, str) and is_registered(op_name):
            return op_attrs.register_op_attr(op_name, attr_key, value, level)
        return orig(op_name, attr_key, value, level)

    register_op_attr._relay_tvm = True
    tvm.ir.register_op_attr = register_op_attr
    if getattr(tvm.ir.op, "register_op_attr", None) is orig:
        tvm.ir.op.register_op_attr = register_op_attr


def _install_vm():
    """``tvm.runtime.vm.VirtualMachine(exe, dev)`` of a relay_tvm VM executable (0.19 scripts
    build with ``relay.vm.compile`` and run with TVM's class): relay_tvm's VirtualMachine;
    TVM's own executables are unchanged."""
    import tvm.runtime
    import tvm.runtime.vm as tvm_vm

    cls = tvm_vm.VirtualMachine
    if getattr(cls, "_relay_tvm", False):
        return
    orig_new = cls.__new__
    tvm_module_cls = tvm.runtime.Module

    def __new__(klass, rt_mod=None, *args, **kwargs):
        from ..runtime.vm import Executable, VirtualMachine

        if (not isinstance(rt_mod, Executable) and isinstance(rt_mod, tvm_module_cls)
                and not sys._getframe(1).f_globals.get("__name__", "").startswith("relay_tvm")):
            # 0.19: VirtualMachine(load_module(path), dev) of a relay_tvm VM library (relay_tvm
            # itself makes TVM VMs of such modules: those calls stay TVM's)
            from ..runtime.library import library_kind

            if library_kind(rt_mod) == "vm":
                from ..runtime.late_consts import executable_for

                rt_mod = executable_for(rt_mod)
        if isinstance(rt_mod, Executable):
            device = args[0] if args else kwargs.get("device")
            if isinstance(device, (list, tuple)):
                device = device[0]
            return VirtualMachine(rt_mod, device)
        if orig_new is object.__new__:
            return orig_new(klass)
        return orig_new(klass, rt_mod, *args, **kwargs)

    cls.__new__ = __new__
    cls._relay_tvm = True
    if not hasattr(tvm_vm, "Executable"):  # 0.19's class (save / load_exec); gone in 0.27
        from ..runtime.vm import Executable

        tvm_vm.Executable = Executable


class _TargetMeta(_StandIn):
    """``tvm.target.Target`` also taking 0.19's command-line strings (``"llvm -mcpu=..."``,
    ``"llvm -mtriple=aarch64-linux-gnu"``), which TVM 0.27 rejects: those are translated by
    :func:`relay_tvm.backend.target.make_target`; everything else goes to TVM unchanged.
    ``isinstance(t, tvm.target.Target)`` holds for TVM's targets."""

    def __call__(cls, target, host=None):
        from ..backend.target import make_target

        if isinstance(target, str) and " -" in target.strip():
            return make_target(target, host)
        cuda = _cuda_without_arch(target)
        if cuda is not None:  # the arch relay.build(mod, "cuda") uses, with the same warning
            return make_target(cuda, host)
        if isinstance(host, str) and " -" in host.strip():  # Target("cuda", host="llvm -...")
            host = make_target(host)
        try:
            if host is None:
                return cls._tvm_cls(target)
            return cls._tvm_cls(target, host)
        except Exception as e:  # TVM raises several error types for a bad target
            if not isinstance(target, (str, dict)):
                raise
            raise _target_error(cls._tvm_cls, target, e) from None


def _cuda_without_arch(target):
    """``target`` (a string, JSON text or dict) when it is a CUDA target without ``arch``, for
    :func:`relay_tvm.backend.target.make_target` to complete as every other entry point does
    (TVM 0.27 would assume sm_50 with only a log line); None otherwise."""
    if isinstance(target, str):
        text = target.strip()
        if text == "cuda":
            return target
        if text.startswith("{"):
            try:
                target = json.loads(text)
            except ValueError:
                return None
    if isinstance(target, dict) and target.get("kind") == "cuda" and "arch" not in target:
        return target
    return None


def _target_error(tvm_target, target, err):
    """The :class:`~relay_tvm.errors.InputError` (also a ``ValueError``, what TVM raised) for a
    string or dict TVM cannot make a target of: an unknown kind lists the kinds TVM knows."""
    from ..backend.target import tvm_reason
    from ..errors import InputError

    if isinstance(target, dict):
        kind = target.get("kind")
    else:
        text = target.strip()
        kind = None if text.startswith("{") else (text.split() or [""])[0]
    kinds = sorted(k for k in tvm_target.list_kinds() if k not in ("test", "composite"))
    if isinstance(kind, str) and kind not in kinds:
        what = "target tag" if "/" in kind else "target kind"
        why = (f"unknown {what} {kind!r}; expected one of {kinds} (with options, e.g. "
               f"'llvm -mcpu=skylake-avx512', 'cuda -arch=sm_80'), or a tag such as "
               f"'nvidia/geforce-rtx-3090'")
    else:
        why = tvm_reason(err)
    return InputError(f"tvm.target.Target({target!r}): {why}")


def _install_target():
    import tvm.target

    if isinstance(tvm.target.Target, _TargetMeta):
        return
    _TargetMeta._tvm_cls = tvm.target.Target
    if not hasattr(tvm.target.Target, "max_function_args"):
        # 0.19's property: the kernel argument limit of the target kind (0: none)
        tvm.target.Target.max_function_args = property(
            lambda self: int(self.attrs.get("max_function_args", 0)))
    tvm.target.Target = _TargetMeta("Target", (), {"__doc__": _TargetMeta.__doc__,
                                                   "__module__": "tvm.target"})


# tvm.target.arm_cpu(model): 0.19's boards, as (model, triple, mcpu, mattr)
_ARM_BOARDS = {
    "pixel2": ("snapdragon835", "arm64-linux-android", None, "+neon"),
    "mate10": ("kirin970", "arm64-linux-android", None, "+neon"),
    "mate10pro": ("kirin970", "arm64-linux-android", None, "+neon"),
    "p20": ("kirin970", "arm64-linux-android", None, "+neon"),
    "p20pro": ("kirin970", "arm64-linux-android", None, "+neon"),
    "rasp3b": ("bcm2837", "armv7l-linux-gnueabihf", None, "+neon"),
    "rasp4b": ("bcm2711", "armv8l-linux-gnueabihf", "cortex-a72", "+neon"),
    "rasp4b64": ("bcm2711", "aarch64-linux-gnu", "cortex-a72", "+neon"),
    "rk3399": ("rk3399", "aarch64-linux-gnu", None, "+neon"),
    "pynq": ("pynq", "armv7a-linux-eabi", None, "+neon"),
    "ultra96": ("ultra96", "aarch64-linux-gnu", None, "+neon"),
    "beagleai": ("beagleai", "armv7a-linux-gnueabihf", "cortex-a15", "+neon,+vfp4,+thumb2"),
    "stm32mp1": ("stm32mp1", "armv7a-linux-gnueabihf", "cortex-a7", "+neon,+vfp4,+thumb2"),
    "thunderx": ("thunderx", "aarch64-linux-gnu", "thunderxt88", "+neon,+crc,+lse"),
}
# tvm.target.riscv_cpu(model): (triple, mabi); the model is LLVM's CPU name too
_RISCV_CPUS = {
    "sifive-e31": ("riscv32-unknown-linux-gnu", "ilp32"),
    "sifive-e76": ("riscv32-unknown-linux-gnu", "ilp32"),
    "sifive-u54": ("riscv64-unknown-linux-gnu", "lp64d"),
    "sifive-u74": ("riscv64-unknown-linux-gnu", "lp64d"),
}


def _target_of(kind: str, opts: list, options):
    """``tvm.target.Target`` of ``kind`` with the command-line ``opts`` and the caller's
    ``options`` (a string or list of ``-key=value``; a key given there replaces the default)."""
    import tvm

    extra = options.split() if isinstance(options, str) else list(options or ())
    given = {o.split("=")[0] for o in extra}
    opts = [o for o in opts if o.split("=")[0] not in given] + extra
    return tvm.target.Target(" ".join([kind] + opts))


def _install_target_constructors():
    """0.19's target helpers that TVM 0.27 dropped: ``tvm.target.cuda(model, arch, options)``,
    ``rocm``, ``arm_cpu(model)`` (its board table: ``"rasp4b64"``, ``"rk3399"``, ...),
    ``rasp`` (``arm_cpu("rasp3b")``), ``riscv_cpu``, ``mali``, ``bifrost``, ``intel_graphics``
    and ``create``. Each builds the 0.19 command-line string and hands it to
    ``tvm.target.Target`` (so ``cuda()`` without ``arch`` takes the local GPU's, or on a
    machine without one ``sm_50`` with a warning naming ``-arch``, as ``relay.build(mod,
    "cuda")`` does: :func:`relay_tvm.backend.cuda.default_arch`)."""
    import tvm.target

    def cuda(model="unknown", arch=None, options=None):
        return _target_of("cuda", [f"-model={model}"] + ([f"-arch={arch}"] if arch else []),
                          options)

    def rocm(model="unknown", options=None):
        return _target_of("rocm", [f"-model={model}"], options)

    def arm_cpu(model="unknown", options=None):
        opts = ["-keys=arm_cpu,cpu", "-device=arm_cpu"]
        if model in _ARM_BOARDS:
            soc, triple, mcpu, mattr = _ARM_BOARDS[model]
            opts += [f"-model={soc}", f"-mtriple={triple}", f"-mattr={mattr}"]
            opts += [f"-mcpu={mcpu}"] if mcpu else []
        else:
            opts.append(f"-model={model}")
        return _target_of("llvm", opts, options)

    def rasp(options=None):
        return arm_cpu("rasp3b", options)

    def riscv_cpu(model="sifive-u54", options=None):
        opts = ["-keys=arm_cpu,cpu", "-device=arm_cpu", f"-model={model}"]
        if model in _RISCV_CPUS:
            triple, mabi = _RISCV_CPUS[model]
            opts += [f"-mtriple={triple}", f"-mcpu={model}", f"-mabi={mabi}"]
        return _target_of("llvm", opts, options)

    def opencl_device(device, warp=None):
        def make(model="unknown", options=None):
            opts = [f"-device={device}", f"-model={model}"]
            return _target_of("opencl", opts + ([f"-thread_warp_size={warp}"] if warp else []),
                              options)
        make.__name__ = device
        return make

    def create(target):
        return tvm.target.Target(target)

    helpers = {"cuda": cuda, "rocm": rocm, "arm_cpu": arm_cpu, "rasp": rasp,
               "riscv_cpu": riscv_cpu, "mali": opencl_device("mali"),
               "bifrost": opencl_device("bifrost"),
               "intel_graphics": opencl_device("intel_graphics", 16), "create": create}
    for name, fn in helpers.items():
        if not hasattr(tvm.target, name):
            fn.__name__ = name
            fn.__qualname__ = name
            fn.__module__ = "tvm.target"
            setattr(tvm.target, name, fn)


def _install_make_node():
    """``tvm.ir.make_node("DictAttrs", **fields)``: Relay's free-form attributes (TVM 0.27 has
    no such node type); ``"relay.attrs.*"`` keys: an operator's attributes
    (:func:`relay_tvm.op.op_attrs.make_attrs`); other type keys go to TVM unchanged."""
    import tvm.ir

    orig = tvm.ir.make_node
    if getattr(orig, "_relay_tvm", False):
        return

    @functools.wraps(orig)
    def make_node(type_key, **kwargs):
        if type_key == "DictAttrs":
            from ..ir.attrs import DictAttrs

            return DictAttrs(kwargs)
        if isinstance(type_key, str) and type_key.startswith("relay.attrs."):
            from ..op.op_attrs import make_attrs

            return make_attrs(type_key, **kwargs)
        return orig(type_key, **kwargs)

    make_node._relay_tvm = True
    tvm.ir.make_node = make_node


def _install_load_module():
    """``tvm.runtime.load_module(path)`` of a file re-exported to a path this process already
    loaded from: the dynamic loader handed back the first library and the second model ran
    the first one's code (fresh-user trial); it now loads the new file, as
    :func:`relay_tvm.runtime.load_module` does (:func:`relay_tvm.runtime.library._load_fresh`).
    A shared library is checked first as there (:func:`relay_tvm.backend.library_file.
    check_shared_library`: damaged, cut short, or code for an instruction set this CPU lacks).
    Other paths and module formats are TVM's loader unchanged."""
    import tvm.runtime

    orig = tvm.runtime.load_module
    if getattr(orig, "_relay_tvm", False):
        return

    @functools.wraps(orig)
    def load_module(path, *args, **kwargs):
        import os

        from .._stderr import without_scope_log
        from ..backend.library_file import check_shared_library
        from ..runtime.library import _load_fresh

        if args or kwargs or not isinstance(path, str) or not os.path.isfile(path):
            return orig(path, *args, **kwargs)
        # a damaged or truncated shared library crashed the process in dlopen (SIGBUS; a
        # fresh-user trial): refused first, as relay_tvm.runtime.load_module does
        check_shared_library(path, "tvm.runtime.load_module")
        with without_scope_log():  # TVM logs each memory scope of an executable it loads
            return _load_fresh(path, orig)

    load_module._relay_tvm = True
    tvm.runtime.load_module = load_module
    import tvm.runtime.module as runtime_module

    if getattr(runtime_module, "load_module", None) is orig:
        runtime_module.load_module = load_module


def _install_op_get():
    """``tvm.ir.Op.get("nn.dense")``: a Relay operator (TVM 0.27 registers Relax and TIR
    operators only, and said "Operator nn.dense is not registered"); names TVM knows
    (``relax.add``) are TVM's."""
    import tvm.ir

    orig = tvm.ir.Op.get
    if getattr(orig, "_relay_tvm", False):
        return

    @functools.wraps(orig)
    def get(op_name):
        from ..op import registry

        if registry.is_registered(op_name):
            return registry.get(op_name)
        return orig(op_name)

    get._relay_tvm = True
    tvm.ir.Op.get = staticmethod(get)
    _install_op_class()


class _OpMeta(_StandIn):
    """``tvm.ir.Op`` accepting Relay operators: ``isinstance(call.op, tvm.ir.Op)`` holds for a
    relay_tvm :class:`~relay_tvm.op.registry.Op` (0.19's Relay operators were ``tvm.ir.Op``
    objects) as for TVM's own; attributes and calls go to TVM's class."""

    def _ours(cls) -> tuple:
        from ..op.registry import Op

        return (Op,)

    def __call__(cls, *args, **kwargs):
        return cls._tvm_cls(*args, **kwargs)


def _install_op_class():
    import tvm.ir

    if isinstance(tvm.ir.Op, _OpMeta):
        return
    _OpMeta._tvm_cls = tvm.ir.Op
    tvm.ir.Op = _OpMeta("Op", (), {"__doc__": _OpMeta.__doc__, "__module__": "tvm.ir"})


def _install_device():
    """``tvm.device("llvm")`` (0.19 took target kind names): the CPU; other names unchanged.
    ``dev.device_type`` / ``dev.device_id``: 0.19's names of ``dlpack_device_type()`` /
    ``index``."""
    import tvm

    dev_cls = type(tvm.cpu(0))
    if not hasattr(dev_cls, "device_type"):
        dev_cls.device_type = property(lambda self: int(self.dlpack_device_type()))
    if not hasattr(dev_cls, "device_id"):
        dev_cls.device_id = property(lambda self: int(self.index))

    orig = tvm.device
    if getattr(orig, "_relay_tvm", False):
        return
    kinds = {"llvm": "cpu", "c": "cpu", "stackvm": "cpu", "nvptx": "cuda"}

    @functools.wraps(orig)
    def device(dev_type, dev_id=0):
        if isinstance(dev_type, tvm.target.Target):  # tvm.device(target, 0)
            dev_type = dev_type.kind.name
        elif isinstance(dev_type, str) and dev_type.lstrip().startswith("{"):
            # tvm.device(str(target), 0): a 0.27 target prints as JSON (0.19: "llvm -mcpu=..")
            try:
                dev_type = json.loads(dev_type).get("kind", dev_type)
            except (ValueError, AttributeError):
                pass
        if isinstance(dev_type, str) and dev_type.split() and dev_type.split()[0] in kinds:
            dev_type = kinds[dev_type.split()[0]]
        return orig(dev_type, dev_id)

    device._relay_tvm = True
    tvm.device = device


def _install_module_source():
    """``Module.get_source(fmt)`` / ``imported_modules`` (0.19's names of 0.27's
    ``inspect_source`` / ``imports``), also on the relax VM executable that ``relay.build``'s
    ``lib.lib`` is."""
    import tvm.runtime
    from tvm.relax.vm_build import VMExecutable

    from ..backend.build_module import kernel_source

    def past_loaders(mod):
        # relay.build's executable holds its parameters in a const_loader module, which
        # imports the kernels: 0.19's lib.get_lib().imported_modules[0] was the kernels
        out = []
        for m in mod.imports:
            out.extend(past_loaders(m) if m.kind == "const_loader" else [m])
        return out

    mod_cls = tvm.runtime.Module
    if not hasattr(mod_cls, "get_source"):
        mod_cls.get_source = lambda self, fmt="": self.inspect_source(fmt)
    if not hasattr(mod_cls, "imported_modules"):
        mod_cls.imported_modules = property(past_loaders)
    if not hasattr(VMExecutable, "get_source"):
        VMExecutable.get_source = lambda self, fmt="": kernel_source(self, fmt)
    def executable_imports(exe):
        # a GPU build's device kernels first: 0.19's lib.get_lib() was the host module, whose
        # imported_modules[0] was the CUDA module (scripts print its get_source()); here they
        # hang one level deeper, under the host kernels
        host = past_loaders(exe.mod)
        device = [d for m in host if m.kind in ("llvm", "c") for d in m.imports
                  if d.kind not in ("llvm", "c", "const_loader", "static_library")]
        return device + host

    if not hasattr(VMExecutable, "imported_modules"):
        VMExecutable.imported_modules = property(executable_imports)


def _install_module_getitem():
    """``tvm.runtime.load_module(path)["default"](dev)`` of a library that ``relay.build``
    exported: 0.19's deploy scripts did this and wrapped the result in
    ``graph_executor.GraphModule``. TVM 0.27 loads the file as the Relax VM executable that
    relay_tvm writes, which has no ``default`` function; when a lookup misses on a module that
    is a relay_tvm graph library, the name is its factory (as in
    :class:`relay_tvm.runtime.graph_executor.LoadedFactory`). Lookups that TVM answers, and
    misses on any other module, are TVM's own (``AttributeError``).
    """
    import tvm.runtime

    mod_cls = tvm.runtime.Module
    if getattr(mod_cls.__getitem__, "_relay_tvm", False):
        return
    tvm_getitem = mod_cls.__getitem__

    def __getitem__(self, name):
        try:
            return tvm_getitem(self, name)
        except AttributeError as missing:
            from ..runtime.library import library_kind

            kind = library_kind(self)
            if kind == "graph":
                from ..runtime.graph_executor import LoadedFactory

                return LoadedFactory(self)[name]
            if kind == "vm":
                from ..errors import BuildError
                from ..runtime.late_consts import module_function

                fn = module_function(self, name)
                if fn is not None:
                    return fn

                raise BuildError(
                    f"module[{name!r}]: this module is a relay_tvm VM executable (from "
                    f"relay.vm.compile(...).export_library), not a graph library: it has no "
                    f"{name!r} factory. Load the file with relay.vm.load_executable(path) and "
                    f"run it on relay.vm.VirtualMachine(exe, dev)") from missing
            raise

    __getitem__._relay_tvm = True
    mod_cls.__getitem__ = __getitem__


# ---- tvm.transform: one PassContext, Sequential of Relay passes ---------------------------------

_SIDE: dict = {}  # TVM PassContext handle -> (relay-only config, relay instruments)
#: TVM PassContext handle -> (its TVM config Map, the config as given): what ``.config`` reads
#: back (the Map, held here, tells a context from a later one at the same address)
_GIVEN: dict = {}
_MIRROR: dict = {}  # TVM PassContext handle -> the relay_tvm PassContext mirroring it


def _tvm_config_key(key: str, known) -> str:
    """TVM 0.27 renamed ``tir.X`` options to ``tirx.X`` / ``s_tir.X`` (``known``: TVM's
    options)."""
    if key in known or not key.startswith("tir."):
        return key
    for prefix in ("tirx.", "s_tir."):
        if prefix + key[4:] in known:
            return prefix + key[4:]
    return key


def _check_tvm_option(key, val) -> str:
    """TVM 0.27's name of the non-``relay.*`` option ``key`` (``tir.X`` renamed), after checking
    that TVM knows it (else RelayError with the nearest names, in the ``tir.X`` spelling too)
    and that a ``bool`` / ``int`` option's value is one (TVM's own message names the renamed
    key and an FFI type)."""
    import tvm

    from ..errors import RelayError
    from ..transform.pass_infra import unknown_config_option

    known = dict(tvm.transform.PassContext.list_configs())
    name = _tvm_config_key(str(key), known)
    if known and name not in known:
        old = {"tir." + k.split(".", 1)[1] for k in known if k.startswith(("tirx.", "s_tir."))}
        raise unknown_config_option(key, known, "TVM's options", spellings=old)
    want = str(dict(known.get(name, {})).get("type", ""))
    if want == "bool" and not (isinstance(val, bool) or val in (0, 1)) or \
            want in ("int", "ir.IntImm") and isinstance(val, (str, float, type(None))):
        raise RelayError(f"PassContext: config option {key!r} takes "
                         f"{'a bool' if want == 'bool' else 'an int'}, got "
                         f"{type(val).__name__} {val!r}")
    return name


def _make_pass_context_class(base):
    class PassContext(base):
        """``tvm.transform.PassContext`` that also carries Relay's options.

        ``relay.*`` config keys and relay_tvm instruments stay on the Python side (TVM 0.27
        rejects keys it does not know); ``tir.X`` keys are renamed to TVM 0.27's ``tirx.X`` /
        ``s_tir.X``. While entered, relay passes and ``relay.build`` run under this context
        (``relay_tvm.transform.PassContext.current()`` mirrors it).
        """

        __slots__ = ()

        def __init__(self, opt_level=2, required_pass=None, disabled_pass=None,
                     instruments=None, config=None, trace=None):
            import tvm.ir.instrument

            from ..errors import RelayError
            from ..transform.pass_infra import check_relay_config

            if isinstance(opt_level, bool) or not isinstance(opt_level, int) \
                    or not 0 <= opt_level <= 4:
                raise RelayError(f"PassContext: opt_level must be an int in 0..4, got "
                                 f"{opt_level!r}")
            check_relay_config(config or {})
            tvm_cfg, relay_cfg = {}, {}
            for key, val in (config or {}).items():
                if str(key).startswith("relay."):
                    relay_cfg[key] = val
                else:
                    tvm_cfg[_check_tvm_option(key, val)] = val
            ins = list(instruments or ())
            tvm_ins = [i for i in ins if isinstance(i, tvm.ir.instrument.PassInstrument)]
            relay_ins = [i for i in ins if not isinstance(i, tvm.ir.instrument.PassInstrument)]
            super().__init__(opt_level, required_pass, disabled_pass, tvm_ins or None,
                             tvm_cfg or None)
            # the Python instrument objects themselves: TVM hands back base-class handles
            # without the Python methods relay passes call
            _SIDE[hash(self)] = (relay_cfg, relay_ins, tvm_ins)
            _GIVEN[hash(self)] = (_TVM_CONFIG[0].__get__(self, base), dict(config or {}))

    PassContext.__module__ = "tvm.ir.transform"
    return PassContext


_TVM_CONFIG: list = []  # the FFI property TVM's PassContext reads its config with


def _config_as_given(self):
    """``PassContext.config``: TVM's config, plus the options as they were given to
    ``tvm.transform.PassContext(config=...)`` (tvm.relay 0.19 read them all back): the
    ``relay.*`` keys (kept on the Python side; TVM 0.27 refuses keys it does not know) and
    ``tir.X`` keys under the name given as well as TVM 0.27's ``tirx.X`` / ``s_tir.X``.
    A plain ``dict`` then (TVM's ``Map`` when nothing was kept aside or renamed)."""
    tvm_cfg = _TVM_CONFIG[0].__get__(self, type(self))
    given = _GIVEN.get(hash(self))
    if given is None or not given[0].same_as(tvm_cfg):
        return tvm_cfg
    merged = {str(k): v for k, v in tvm_cfg.items()}
    if all(str(k) in merged for k in given[1]):
        return tvm_cfg
    for k, v in given[1].items():
        merged.setdefault(str(k), v)
    return merged


def _outer_context():
    import tvm

    from ..transform.pass_infra import derived_context

    cur = tvm.transform.PassContext.current()
    key = hash(cur)
    if key not in _SIDE and cur.same_as(_DEFAULT_TVM_CTX[0]):
        return None
    mirror = _MIRROR.get(key)
    if mirror is None or mirror[0] is not cur and not mirror[0].same_as(cur):
        relay_cfg, relay_ins, _tvm_py_ins = _SIDE.get(key, ({}, [], []))
        cfg = {str(k): v for k, v in dict(_TVM_CONFIG[0].__get__(cur, type(cur))).items()}
        cfg.update(relay_cfg)
        # cfg was checked (and warned about) when the tvm PassContext was made
        ctx = derived_context(int(cur.opt_level), cfg, required_pass=list(cur.required_pass),
                              disabled_pass=list(cur.disabled_pass), instruments=relay_ins)
        mirror = _MIRROR[key] = (cur, ctx, relay_ins)
    # TVM's PassInstrument objects (e.g. from @tvm.instrument.pass_instrument) see relay passes
    # too; read them each time: override_instruments changes them on the current context
    live = list(cur.instruments or ())
    py_ins = _SIDE.get(key, ({}, [], []))[2]
    tvm_ins = [i for i in py_ins if any(i.same_as(j) for j in live)]
    mirror[1].instruments = list(mirror[2]) + tvm_ins
    return mirror[1]


_DEFAULT_TVM_CTX: list = []


def _is_relay_pass(p) -> bool:
    from ..transform.pass_infra import Pass

    return isinstance(p, Pass)


def _install_transform():
    import tvm
    import tvm.ir.transform  # noqa: F401  (tvm.transform is this module)

    from ..transform import pass_infra

    base = tvm.transform.PassContext
    if getattr(base, "_relay_tvm", False):
        return
    _DEFAULT_TVM_CTX.append(base.current())
    _TVM_CONFIG.append(base.__dict__["config"])
    base.config = property(_config_as_given, doc=_config_as_given.__doc__)
    ctx_cls = _make_pass_context_class(base)
    ctx_cls._relay_tvm = True
    tvm.transform.PassContext = ctx_cls
    pass_infra._OUTER_CONTEXT = _outer_context

    tvm_seq = tvm.transform.Sequential
    tvm_pass_cls = tvm.transform.Pass  # (before the stand-in below replaces the name)

    def Sequential(passes=None, opt_level=0, name="sequential", required=None, **kwargs):
        """``tvm.transform.Sequential``; of Relay passes it is relay_tvm's ``Sequential``;
        without passes it runs on Relay modules and TVM modules alike. Entries that are no
        pass at all are refused by relay_tvm's (TVM's message was a conversion error)."""
        from ..transform import Sequential as RelaySeq

        if passes and any(_is_relay_pass(p) or not isinstance(p, tvm_pass_cls)
                          for p in passes):
            return RelaySeq(passes, opt_level=opt_level, name=name, required=required)
        if not passes:
            relay_seq = RelaySeq([], opt_level=opt_level, name=name, required=required)
            return _dual_pass_class()(
                lambda: tvm_seq(passes, opt_level, name, required, **kwargs), relay_seq)
        return tvm_seq(passes, opt_level, name, required, **kwargs)

    Sequential._relay_tvm = True
    tvm.transform.Sequential = Sequential

    # isinstance(relay_pass, tvm.transform.Pass) holds (0.19 helpers assert it)
    tvm_pass = tvm.transform.Pass

    class _PassMeta(_StandIn):
        _tvm_cls = tvm_pass

        def _ours(cls) -> tuple:
            from ..transform.pass_infra import Pass

            return (Pass,)

        def __instancecheck__(cls, obj):  # a pass object of a 0.19 decorator counts too
            return isinstance(obj, tvm_pass) or _is_relay_pass(obj)

        def __call__(cls, *args, **kwargs):
            return tvm_pass(*args, **kwargs)

    tvm.transform.Pass = _PassMeta("Pass", (), {"__doc__": tvm_pass.__doc__,
                                                "__module__": "tvm.ir.transform"})
    # likewise isinstance(relay_module_pass, tvm.transform.ModulePass). TVM's own module_pass
    # subclasses the module global ModulePass when it wraps a class, so the stand-in is an
    # object that names TVM's class as the base (__mro_entries__) rather than a class
    tvm_module_pass = tvm.transform.ModulePass

    class _ModulePassAlias:
        __doc__ = tvm_module_pass.__doc__

        def __mro_entries__(self, bases):
            return (tvm_module_pass,)

        def __instancecheck__(self, obj):
            from ..transform.pass_infra import ModulePass

            relay_p = getattr(obj, "_relay_pass", obj)
            return isinstance(obj, tvm_module_pass) or isinstance(relay_p, ModulePass)

        def __subclasscheck__(self, sub):
            from ..transform.pass_infra import ModulePass

            return issubclass(sub, (tvm_module_pass, ModulePass))

        def __call__(self, *args, **kwargs):
            return tvm_module_pass(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(tvm_module_pass, name)

    tvm.transform.ModulePass = _ModulePassAlias()
    # tvm.transform.PassInfo(opt_level, name): 0.19 took required=None as "none required"
    info_init = tvm.transform.PassInfo.__init__

    def _info_init(self, opt_level, name, required=None, traceable=False):
        info_init(self, opt_level, name, list(required or ()), traceable)

    tvm.transform.PassInfo.__init__ = _info_init
    _install_pass_decorators(tvm)
    _install_override_instruments(base)
    from .instruments import install_timing_instrument

    install_timing_instrument()


def _install_override_instruments(base):
    """``PassContext.current().override_instruments([...])`` (0.19's pass-instrument tutorial
    does it on the global default context): relay passes see the new instruments too. TVM keeps
    only base-class handles of them, so the Python objects are recorded as
    ``PassContext(instruments=)`` records them (``_SIDE``); TVM still calls the old ones'
    ``exit_pass_ctx`` and the new ones' ``enter_pass_ctx``."""
    import tvm.ir.instrument

    tvm_override = base.override_instruments

    def override_instruments(self, instruments):
        ins = list(instruments or ())
        tvm_ins = [i for i in ins if isinstance(i, tvm.ir.instrument.PassInstrument)]
        relay_ins = [i for i in ins if not isinstance(i, tvm.ir.instrument.PassInstrument)]
        tvm_override(self, tvm_ins)
        key = hash(self)
        relay_cfg = _SIDE.get(key, ({}, [], []))[0]
        _SIDE[key] = (relay_cfg, relay_ins, tvm_ins)
        _MIRROR.pop(key, None)  # rebuilt with the new instruments when a relay pass runs

    override_instruments.__doc__ = tvm_override.__doc__
    base.override_instruments = override_instruments


def _dual_pass_class():
    from ..ir.module import IRModule as RelayModule
    from ..transform.pass_infra import Pass

    class DualPass(Pass):
        """A pass made by ``tvm.transform.module_pass`` / ``function_pass`` on a Relay-era
        script: on a Relay ``IRModule`` it runs as a relay_tvm pass (under relay_tvm's
        PassContext and instruments), on anything else it is TVM's own pass object."""

        def __init__(self, tvm_pass, relay_pass):
            # tvm_pass: TVM's pass, or a function making it (a decorated class is
            # instantiated for TVM only when the pass meets a TVM module)
            super().__init__(relay_pass.info)
            self._tvm_made = tvm_pass
            self._relay_pass = relay_pass

        @property
        def _tvm_pass(self):
            if callable(self._tvm_made) and not hasattr(self._tvm_made, "info"):
                self._tvm_made = self._tvm_made()
            return self._tvm_made

        def transform_module(self, mod, ctx):
            return self._relay_pass.transform_module(mod, ctx)

        def __call__(self, mod):
            if isinstance(mod, RelayModule):
                return Pass.__call__(self, mod)
            return self._tvm_pass(mod)

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            return getattr(self._tvm_pass, name)

    return DualPass


def _install_pass_decorators(tvm):
    """``tvm.transform.module_pass`` / ``function_pass`` (and ``tvm.relay.transform``'s, which
    0.19 scripts reach through ``tvm.transform``) make passes that accept Relay modules too;
    on TVM modules the pass is exactly the one TVM's decorator makes."""
    import inspect

    from ..transform import pass_infra

    dual = _dual_pass_class()

    def wrap(tvm_deco, relay_deco, relay_only):
        def deco(pass_func=None, opt_level=None, name=None, required=None, **kwargs):
            def create(fn):
                relay_p = relay_deco(fn, opt_level=opt_level, name=name, required=required)
                if relay_only:
                    return relay_p
                tvm_p = tvm_deco(fn, opt_level=opt_level, name=name, required=required,
                                 **kwargs)
                if inspect.isclass(fn):
                    @functools.wraps(fn)
                    def make(*args, **kw):
                        return dual(lambda: tvm_p(*args, **kw), relay_p(*args, **kw))

                    return make
                return dual(tvm_p, relay_p)

            if opt_level is None:
                raise ValueError("Please provide opt_level for the pass.")
            return create(pass_func) if pass_func is not None else create

        deco._relay_tvm = True
        deco.__doc__ = tvm_deco.__doc__
        return deco

    if not getattr(tvm.transform.PrintIR, "_relay_tvm", False):
        tvm_print = tvm.transform.PrintIR

        def PrintIR(header="", show_meta_data=False):
            """``tvm.transform.PrintIR``: prints the module (a Relay module as its text) and
            returns it unchanged."""
            def show(mod, _ctx):
                # on stderr, as 0.19's LOG(INFO) wrote it
                print(f"PrintIR({header}):\n{mod.astext(show_meta_data=show_meta_data)}",
                      file=sys.stderr)
                return mod

            relay_p = pass_infra.module_pass(show, opt_level=0, name="PrintIR")
            return dual(lambda: tvm_print(header), relay_p)

        PrintIR._relay_tvm = True
        tvm.transform.PrintIR = PrintIR
    if not getattr(tvm.transform.module_pass, "_relay_tvm", False):
        tvm.transform.module_pass = wrap(tvm.transform.module_pass, pass_infra.module_pass,
                                         False)
    # TVM 0.27's tvm.transform has no function_pass (it was Relay's / Relax's); Relay
    # function passes only make sense on Relay modules
    if not hasattr(tvm.transform, "function_pass"):
        tvm.transform.function_pass = wrap(None, pass_infra.function_pass, True)

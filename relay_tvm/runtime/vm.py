"""The Relay virtual machine (tvm.runtime.vm's API): runs programs with control flow compiled by
:func:`relay_tvm.vm.compile` on TVM's VM runtime.

    exe = relay.vm.compile(mod, target="llvm", params=params)
    vm = VirtualMachine(exe, tvm.cpu())
    out = vm.invoke("main", x)          # or vm.run(x), or vm.set_input("main", x); vm.run()

Arguments are checked against the function's parameter types (shape and dtype, no casts):
a mismatch raises :class:`relay_tvm.errors.InputError`. Values are handed back as the reference
interpreter gives them: tvm Tensors, tuples, ``ConstructorValue`` for ADT values, ``RefValue``
for references; a function value comes back as the VM's closure object. ADT values and
references may be passed in the same way (``ConstructorValue`` / ``RefValue``).
"""

from __future__ import annotations

import json

import numpy as np

from ..backend.library_file import seal_library
from ..errors import BuildError, InputError, did_you_mean, no_implicit_cast
from .interpreter import ConstructorValue, RefValue, describe_value, host_tensor


class Executable:
    """A compiled VM program: bytecode, kernels and the signatures of its functions.

    Attributes:
        lib: the linked ``tvm.relax.VMExecutable`` (``export_library`` writes one file).
        signatures: ``function name -> [(param name, type string, shape, dtype)]``.
        kernels: ``name -> LoweredFunc`` (schedule rule, database lookup) of an executable
            compiled in this process (empty when loaded), as ``relay.build``'s; what
            ``relay_tvm.tune.database_report`` reads.
    """

    def __init__(self, lib, meta: dict | None = None, target=None, constructors=None,
                 kernels=None, relay_mod=None):
        if meta is None:  # 0.19's Executable(module) of a loaded library
            meta = _meta_of(lib, "Executable")
        self.lib = lib
        self.meta = meta
        self.target = target
        self._loaded_from = None  # (path, lib) of load_executable: export copies the file
        self._ctors = dict(constructors or {})  # tag -> Constructor
        self.kernels = dict(kernels or {})
        # the compiled (typed) Relay module, in this process only: ADT arguments are then
        # checked field by field against their parameter's type (not after a reload)
        self._relay_mod = relay_mod

    def result_type(self, func_name: str):
        """The Relay type of ``func_name``'s result when this executable was compiled in this
        process (None otherwise)."""
        func = self._relay_func(func_name)
        return getattr(func, "ret_type", None) if func is not None else None

    def _relay_func(self, func_name):
        if self._relay_mod is None:
            return None
        try:
            return self._relay_mod[func_name]
        except Exception:
            return None

    def param_type(self, func_name: str, name: str):
        """The Relay type of ``func_name``'s parameter ``name`` when this executable was
        compiled in this process (None otherwise, or when there is no such parameter)."""
        func = self._relay_func(func_name)
        for p in getattr(func, "params", ()):
            if p.name_hint == name:
                return getattr(p, "checked_type", None) or p.type_annotation
        return None

    @property
    def mod(self):
        """tvm.relay 0.19's name of the executable's runtime module: :attr:`lib` here (one
        module holds the bytecode and the kernels)."""
        return self.lib

    def tag_of(self, ctor, where="argument") -> int:
        """The tag this executable uses for ``ctor``: its own when the executable was compiled
        in this process from the same definitions, else found by type and constructor name
        (tags are numbered per process)."""
        if self._ctors.get(ctor.tag) is ctor:
            return ctor.tag
        key = [getattr(ctor.belong_to, "name_hint", str(ctor.belong_to)), ctor.name_hint]
        for tag, names in self.meta.get("constructors", {}).items():
            if names == key:
                return int(tag)
        raise BuildError(f"{where}: constructor {key[1]} of type {key[0]} is not one of this "
                         f"executable's")

    def constructor(self, tag: int):
        """The constructor of ``tag`` (a stand-in with the right names after loading)."""
        c = self._ctors.get(tag)
        if c is None:
            from ..ir.adt import Constructor
            from ..ir.types import GlobalTypeVar

            names = self.meta.get("constructors", {}).get(str(tag))
            if names is None:
                raise BuildError(f"VM result: unknown constructor tag {tag}")
            c = Constructor(names[1], (), GlobalTypeVar(names[0]), tag=tag)
            self._ctors[tag] = c
        return c

    @property
    def stats(self) -> str:
        """A text summary as tvm.relay 0.19's ``Executable.stats``: the shapes of the tensor
        constants the VM code loads (``scalar`` for rank 0), the VM functions with their
        indices, and the kernels (primitive and shape functions).

        Raises:
            BuildError: the executable was compiled before relay_tvm recorded these lists.
        """
        st = self.meta.get("stats")
        if st is None:
            raise BuildError("Executable.stats: this executable carries no statistics "
                             "(compiled by an older relay_tvm); compile it again")

        def shape(s):
            return "scalar" if not s else "[" + ", ".join(str(d) for d in s) + "]"

        consts = ", ".join(shape(s) for s in st["constants"])
        globs = ", ".join(f'("{g}", {i})' for i, g in enumerate(st["globals"]))
        return ("Relay VM executable statistics:\n"
                f"  Constant shapes (# {len(st['constants'])}): [{consts}]\n"
                f"  Globals (#{len(st['globals'])}): [{globs}]\n"
                f"  Primitive ops (#{len(st['primitives'])}): [{', '.join(st['primitives'])}]\n")

    @property
    def signatures(self):
        return self.meta["signatures"]

    def _stat(self, key: str, who: str) -> list:
        st = self.meta.get("stats")
        if st is None:
            raise BuildError(f"Executable.{who}: this executable carries no statistics "
                             "(compiled by an older relay_tvm); compile it again")
        return list(st[key])

    @property
    def globals(self) -> list:
        """Names of the VM functions (tvm.relay 0.19's ``Executable.globals``): ``main`` and
        each global function compiled as a VM function of its own, in index order."""
        return self._stat("globals", "globals")

    @property
    def primitive_ops(self) -> list:
        """Names of the kernels the VM code calls (tvm.relay 0.19's
        ``Executable.primitive_ops``): fused primitive functions and shape functions."""
        return self._stat("primitives", "primitive_ops")

    @property
    def module(self):
        """The runtime module (tvm.relay 0.19's ``Executable.module``; same as :attr:`mod`)."""
        return self.lib

    def get_function_params(self, func_name: str) -> list:
        """Parameter names of VM function ``func_name``, in order (tvm.relay 0.19).

        Raises:
            InputError: the executable has no function of that name.
        """
        sigs = self.signatures.get(func_name)
        if sigs is None:
            raise InputError(f"Executable.get_function_params: no function {func_name!r}; the "
                             f"executable has {sorted(self.signatures)}")
        return [s[0] for s in sigs]

    def _function_sig(self, func_name, who: str) -> list:
        sigs = self.signatures.get(func_name) if isinstance(func_name, str) else None
        if sigs is None:
            raise InputError(f"Executable.{who}: no function {func_name!r}; the executable "
                             f"has {sorted(self.signatures)}")
        return sigs

    def get_function_arity(self, func_name: str) -> int:
        """The number of parameters of VM function ``func_name`` (tvm.relay 0.19's
        ``Executable.get_function_arity``).

        Raises:
            InputError: the executable has no function of that name (0.19 failed a check).
        """
        return len(self._function_sig(func_name, "get_function_arity"))

    def get_function_param_name(self, func_name: str, index: int) -> str:
        """The name of parameter ``index`` of VM function ``func_name`` (tvm.relay 0.19's
        ``Executable.get_function_param_name``; the names :meth:`get_function_params` lists).

        Raises:
            InputError: the executable has no function of that name.
            InputError: ``index`` is not an integer in ``[0, arity)``.
        """
        sigs = self._function_sig(func_name, "get_function_param_name")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < len(sigs):
            raise InputError(f"Executable.get_function_param_name: parameter index {index!r} "
                             f"out of range; @{func_name} has {len(sigs)} parameter(s) "
                             f"{[sig[0] for sig in sigs]}")
        return sigs[int(index)][0]

    @property
    def constants(self) -> str:
        """The tensor constants the executable holds, one line each (tvm.relay 0.19's
        ``Executable.constants``, a text for debugging and for diffing executables)::

            VM Const[5]: Tensor[(3),float32]=[2,4,6]
            VM Const[6]: Tensor[(2,3),float32]
            VM Const[9]: Tensor[(64,3,7,7),float32] late-bound as const_9 (not loaded)

        Each line gives the constant's index in the executable's constant pool (the index of
        the ``const_<index>`` names of :meth:`get_late_bound_consts`; the pool also holds
        non-tensor values, which are not listed, so the indices have gaps), its shape and
        dtype, and, as 0.19 did, its values when it is a scalar or a vector of at most 10
        elements. 0.19 also named each constant's device index; the pool here is the host's
        (the VM copies a constant to the device it runs on), so no device is given. A constant
        moved out by :meth:`move_late_bound_consts` / :meth:`get_late_bound_consts` and not
        loaded back is listed with its shape and dtype and no values. An executable without
        tensor constants gives ``""``.
        """
        from .late_consts import pool_tensors
        from .library import without_scope_log

        with without_scope_log():  # serializing the executable logs its memory scopes
            consts = pool_tensors(self._runtime_module())
        lines = []
        for index, shape, dtype, value in consts:
            dims = ",".join(str(d) for d in shape) if shape is not None else "?"
            line = f"VM Const[{index}]: Tensor[({dims}),{dtype}]"
            if value is None:
                line += f" late-bound as const_{index} (not loaded)"
            elif value.ndim == 0 or (value.ndim == 1 and 0 < value.size <= 10):
                line += "=[" + ",".join(_const_item(v) for v in value.reshape(-1)) + "]"
            lines.append(line + "\n")
        return "".join(lines)

    def export_library(self, path: str, **kwargs) -> None:
        """Write bytecode, kernels and constants into one shared library (the cross compiler
        is chosen for cross-compiled targets, as ``relay.build``'s factory does), or, for a
        ``.tar`` path, into TVM's tar of object files, which :func:`load_executable` and
        ``tvm.runtime.load_module`` link with this machine's C++ compiler when they load it (no
        instruction-set record: loading does not check the CPU's features beforehand).

        An executable loaded from a file (:func:`load_executable`) is written as a copy of that
        file (TVM cannot serialize a loaded library; :func:`.library.copy_loaded`).

        Raises:
            InputError: ``path`` does not end in ``.so``, ``.dylib``, ``.dll`` or ``.tar``
                (what :func:`load_executable` loads); linker options for a loaded executable.
            BuildError: the file a loaded executable came from is gone.
        """
        from ..backend.library_file import check_export_path, is_archive
        from .library import copy_loaded

        check_export_path(path, "Executable.export_library", archive=True)
        loaded = self._loaded_from
        if loaded is not None and loaded[1] is self.lib:  # TVM cannot save a loaded library
            copy_loaded(loaded[0], path, kwargs, "Executable.export_library")
            return
        if self.target is not None and "cc" not in kwargs and "fcompile" not in kwargs \
                and not is_archive(path):  # a tar of objects: nothing is linked now
            from ..backend.build_module import cross_compiler

            cc = cross_compiler(self.target)
            if cc is not None:
                kwargs["cc"] = cc
        from ..backend.build_module import link_library

        link_library(self.lib, path, self.target, kwargs, "Executable.export_library")
        from ..backend.isa import target_isa

        seal_library(str(path), target_isa(self.target))

    # ---- late-bound constants (tvm.relay 0.19): large constants kept out of the library ----

    def _runtime_module(self):
        from tvm import relax

        return self.lib.mod if isinstance(self.lib, relax.VMExecutable) else self.lib

    def _replace_module(self, mod, meta):
        from tvm import relax

        self.lib = relax.VMExecutable(mod)
        self.meta = meta

    def get_late_bound_consts(self, byte_limit: int) -> dict:
        """Take the tensor constants of ``byte_limit`` bytes or more out of the executable
        (its library no longer holds them) and return them as ``{"const_<index>": Tensor}``;
        give them back with :meth:`load_late_bound_consts_from_map` before running.

        Raises:
            BuildError: constants were moved out before and not loaded back.
        """
        import tvm

        from .late_consts import take_out

        mod, meta, moved = take_out(self._runtime_module(), byte_limit)
        self._replace_module(mod, meta)
        return {k: tvm.runtime.tensor(v) for k, v in moved.items()}

    def move_late_bound_consts(self, path: str, byte_limit: int) -> None:
        """As :meth:`get_late_bound_consts`, writing the constants to the file ``path`` (the
        parameter-dict format of :func:`relay_tvm.save_param_dict`)."""
        from ..backend.param_dict import save_param_dict

        consts = self.get_late_bound_consts(byte_limit)
        with open(path, "wb") as f:
            f.write(save_param_dict(consts))

    def load_late_bound_consts_from_map(self, consts) -> None:
        """Give back the constants :meth:`get_late_bound_consts` took out (name -> array);
        nothing to do when the executable has none.

        Raises:
            InputError: a constant is missing, of another shape or dtype, or not one of the
                executable's.
        """
        from .late_consts import put_back

        mod, meta = put_back(self._runtime_module(), dict(consts), "load_late_bound_consts_from_map")
        if meta is not None:
            self._replace_module(mod, meta)

    def load_late_bound_consts(self, path: str) -> None:
        """Give back the constants :meth:`move_late_bound_consts` wrote to ``path``.

        Raises:
            InputError: ``path`` is unreadable or holds other constants.
        """
        self.load_late_bound_consts_from_map(_read_consts(path, "load_late_bound_consts"))

    @property
    def bytecode(self) -> str:
        """The VM instructions as text (one block per function)."""
        return self.lib.as_text()

    def save(self):
        """Serialize (tvm.runtime.vm.Executable.save).

        Returns:
            ``(code, lib)``: ``code`` is a ``bytearray`` holding the VM functions, their
            constants and the signatures; ``lib`` is the runtime module of the kernels (write
            it with ``lib.export_library(path)``; None when the program has no kernels).
        """
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "code.bin")
            self.lib.mod.write_to_file(path, "")
            with open(path, "rb") as f:
                code = bytearray(f.read())
        imports = list(self.lib.mod.imports)
        return code, (imports[0] if imports else None)

    @staticmethod
    def load_exec(code, lib) -> "Executable":
        """Rebuild an executable from :meth:`save`'s ``code`` and the kernel module ``lib``
        (the one ``save`` returned, or ``tvm.runtime.load_module`` of its export)."""
        import tvm
        import tvm_ffi
        from tvm import relax

        try:
            load = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")
            mod = load(bytearray(code))
            if lib is not None:
                mod.import_module(lib)
            exe = relax.VMExecutable(mod)
            vm = relax.VirtualMachine(exe, tvm.cpu(0))
            meta = json.loads(vm["__relay_vm_meta"]())
        except Exception as e:
            raise BuildError(f"Executable.load_exec: not a relay_tvm VM executable's code and "
                             f"kernels: {e}") from e
        return Executable(exe, meta)


def _const_item(v) -> str:
    """One element of a constant as 0.19's listing printed it (C++ stream: ``%g``-like floats,
    booleans as 0/1)."""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, np.floating):
        return f"{float(v):g}"
    return str(v)


def load_executable(path: str) -> Executable:
    """Load a VM executable written by ``Executable.export_library`` (in any process).

    Raises:
        BuildError: the file is missing, or is not a relay_tvm VM executable (a graph library
            is named as such, with the loader to use).
    """
    from .library import library_kind, load_library, not_ours

    lib = load_library(path, "load_executable")
    kind = library_kind(lib)
    if kind == "graph":
        raise BuildError(
            f"load_executable: {path!r} is a relay_tvm graph library (from relay.build(...)"
            f".export_library or `relay-tvm compile`), not a VM executable; load it with "
            f"relay.runtime.load_module({path!r})")
    if kind != "vm":
        raise BuildError(not_ours(path, lib, "load_executable"))
    return executable_of(lib, path, "load_executable")


def _read_consts(path: str, who: str) -> dict:
    from ..backend.param_dict import load_param_dict

    try:
        with open(path, "rb") as f:
            return load_param_dict(f.read())
    except OSError as e:
        raise InputError(f"{who}: cannot read {path!r}: {e}") from None


def _meta_of(lib, who: str) -> dict:
    """The description ``relay.vm.compile`` stored in VM module ``lib``."""
    import tvm
    from tvm import relax

    try:
        return json.loads(relax.VirtualMachine(lib, tvm.cpu(0))["__relay_vm_meta"]())
    except Exception as e:
        raise BuildError(f"{who}: not a relay_tvm VM executable: {e}") from e


def executable_of(lib, path: str, who: str) -> Executable:
    """The :class:`Executable` of a loaded relay_tvm VM executable ``lib`` (from ``path``)."""
    import tvm
    from tvm import relax

    try:
        meta = json.loads(relax.VirtualMachine(lib, tvm.cpu(0))["__relay_vm_meta"]())
    except Exception as e:
        raise BuildError(f"{who}: {path!r} is not a relay_tvm VM executable: {e}") from e
    exe = Executable(lib, meta)
    exe._loaded_from = (path, lib)  # export_library copies the file while lib is unchanged
    return exe


def _to_user(v, exe, vm=None):
    """A VM value as the interpreter gives it (see :mod:`relay_tvm.backend.vm_codegen` for the
    representation: an ADT value is an array whose first element is its integer tag)."""
    import tvm
    import tvm_ffi

    if isinstance(v, tvm.runtime.Tensor):
        if vm is not None and v.data_ptr() in vm._const_data:  # the executable's constant
            return v.copyto(v.device)
        return v
    if isinstance(v, tvm_ffi.List):
        return VMRef(v, exe, vm)
    if isinstance(v, (tvm_ffi.Array, tuple)):  # a tuple: a remote VM's array, field by field
        if len(v) and isinstance(v[0], int) and not isinstance(v[0], bool):
            return ConstructorValue(exe.constructor(int(v[0])),
                                    [_to_user(x, exe, vm) for x in v[1:]])
        return tuple(_to_user(x, exe, vm) for x in v)
    if type(v).__name__ == "RPCObjectRef":  # a reference or closure on a remote
        raise BuildError(
            "VirtualMachine over tvm.rpc: the result is a reference or closure held by the "
            "remote session, which relay_tvm cannot read back (tensors, tuples and ADT values "
            "come back); return its value instead, or run the executable in this process")
    if vm is not None and isinstance(v, tvm_ffi.Object):
        return VMClosureValue(v, vm)
    return v


class VMRef(RefValue):
    """A reference handed back by the VM: a live view of the VM's cell, so writes by closures
    called later are seen (as with the interpreter's shared ``RefValue``)."""

    __slots__ = ("cell", "exe", "vm", "type")

    def __init__(self, cell, exe, vm):
        self.cell, self.exe, self.vm = cell, exe, vm
        self.type = None  # its content's type where known (closures in it are then checked)

    @property
    def value(self):
        out = _to_user(self.cell[0], self.exe, self.vm)
        _type_closures(out, self.type, self.exe)
        return out

    @value.setter
    def value(self, v):
        self.cell[0] = _to_vm(_plain(v), "RefValue", self.exe)


class VMClosureValue:
    """A function value handed back by the VM; call it with user values (as the interpreter's
    ``Closure``): ``f(x)`` runs it on the VM that made it."""

    __slots__ = ("closure", "vm", "type")

    def __init__(self, closure, vm, type=None):  # noqa: A002
        self.closure = closure
        self.vm = vm
        self.type = type  # its FuncType where known (a function's result, compiled here)

    def __call__(self, *args):
        """Run the function on its VM. Where its type is known (the result of a function of
        an executable compiled in this process) the arguments are checked against it first.

        Raises:
            InputError: another number of arguments, or a value of another type.
        """
        from ..ir.types import FuncType

        if isinstance(self.type, FuncType):
            from .argcheck import check_call, number_arg
            from .interpreter import to_value

            # Python numbers and lists take the parameter's dtype, as main's arguments do
            if len(args) == len(self.type.arg_types):
                args = tuple(number_arg(a, t, f"VM closure argument {i}")
                             for i, (a, t) in enumerate(zip(args, self.type.arg_types)))
            check_call([a if isinstance(a, VMClosureValue) else to_value(_plain(a))
                        for a in args], self.type.arg_types, "VM closure",
                       self.vm.exe._relay_mod, given=args)
        vals = [_to_vm(_plain(a), "VM closure argument", self.vm.exe) for a in args]
        out = _call_with_big_stack(self.vm._vm.invoke_closure, [self.closure, *vals])
        for u, v in zip(args, vals):
            _write_back(u, v, self.vm.exe)
        out = _to_user(out, self.vm.exe, self.vm)
        if isinstance(self.type, FuncType):
            _type_closures(out, self.type.ret_type, self.vm.exe)
        return out

    def __repr__(self):
        return "VMClosureValue()"


def _type_closures(value, ty, exe) -> None:
    """Give the closures in a value the VM handed back (the value itself, fields of tuples
    and ADT values, reference contents) their ``FuncType`` from the value's static type
    ``ty``, so that calling one from Python checks its arguments (as the interpreter's
    ``Closure`` does). Nothing is done without a type (an executable loaded from a file), nor
    for a type that holds no function (a long list of tensors is not walked)."""
    from ..ir.types import FuncType, RefType, TupleType, TypeCall, mentions_func_type
    from .argcheck import field_types

    mod = exe._relay_mod
    if ty is None or not mentions_func_type(ty, mod):
        return
    fields_of = {}  # (constructor tag, ADT type) -> its field types, substituted once
    stack = [(value, ty)]
    while stack:
        v, t = stack.pop()
        if isinstance(v, VMClosureValue):
            if isinstance(t, FuncType) and v.type is None:
                v.type = t
        elif isinstance(v, tuple) and isinstance(t, TupleType) and len(v) == len(t.fields):
            stack.extend(zip(v, t.fields))
        elif isinstance(v, ConstructorValue) and isinstance(t, TypeCall):
            key = (v.constructor.tag, t)
            if key not in fields_of:
                fields_of[key] = field_types(mod, t, v.constructor)
            types = fields_of[key]
            if types is not None and len(types) == len(v.fields):
                stack.extend(zip(v.fields, types))
        elif isinstance(v, VMRef) and isinstance(t, RefType):
            v.type = t.value


def _plain(v):
    if isinstance(v, (bool, int, float, np.generic)):
        return np.asarray(v)
    if isinstance(v, VMClosureValue):
        return v.closure
    return v


def _to_vm(v, where, exe):
    """A user value (NumPy, tvm Tensor, tuple, ConstructorValue, RefValue) as a VM value."""
    import tvm
    import tvm_ffi

    if isinstance(v, ConstructorValue):
        return tvm_ffi.Array([exe.tag_of(v.constructor, where),
                              *(_to_vm(f, where, exe) for f in v.fields)])
    if isinstance(v, VMRef):
        return v.cell
    if isinstance(v, RefValue):
        return tvm_ffi.List([_to_vm(v.value, where, exe)])
    if isinstance(v, (tuple, list)):
        return tvm_ffi.Array([_to_vm(f, where, exe) for f in v])
    if isinstance(v, (np.ndarray, np.generic)):  # a NumPy scalar field: a 0-d tensor
        return host_tensor(np.asarray(v))
    if isinstance(v, tvm.runtime.Tensor):
        from .pyargs import plain_tensor

        return plain_tensor(v, where)  # a view: a compact copy
    if isinstance(v, (tvm_ffi.Function, tvm_ffi.Object)):
        return v
    raise InputError(f"{where}: unsupported value {type(v).__name__}")


def _write_back(user, val, exe):
    """Reference arguments are shared with the program (as in the interpreter): copy what the
    program wrote into the caller's ``RefValue`` objects."""
    import tvm_ffi

    stack = [(user, val)]
    while stack:
        u, v = stack.pop()
        if isinstance(u, RefValue) and isinstance(v, tvm_ffi.List):
            u.value = _to_user(v[0], exe)
        elif isinstance(u, ConstructorValue) and isinstance(v, tvm_ffi.Array):
            stack.extend(zip(u.fields, list(v)[1:]))
        elif isinstance(u, (tuple, list)) and isinstance(v, tvm_ffi.Array):
            stack.extend(zip(u, v))


def _check_adt(value, exe, where, ty, adt):
    """An ADT argument: built by a constructor of its type ``adt``, and, when the executable
    has its Relay types (``ty``: compiled in this process), with fields of the types the
    parameter's type gives them (a kernel would otherwise meet values of another dtype)."""
    from .argcheck import check_value

    if ty is not None:
        check_value(value, ty, where, exe._relay_mod)
        return
    owner = getattr(value.constructor.belong_to, "name_hint", "")
    if owner != adt:
        raise InputError(f"{where}: expected a value of {adt}, got "
                         f"{describe_value(value, width=80)}, a value of {owner}")


def _sig_text(sig) -> str:
    """A parameter's type in Relay's syntax (``Tensor[(?, 8), float32]``) from its signature
    entry (what a loaded executable has): a dimension known only at run time is ``?``, an
    ADT is named without its type arguments."""
    from ..ir.types import Any, TensorType, type_str

    _, kind, shape, dtype = sig
    if kind == "tensor":
        return type_str(TensorType([Any() if d == -1 else d for d in shape], dtype))
    if kind == "tuple":
        return f"({', '.join(_sig_text(f) for f in shape)}{',' if len(shape) == 1 else ''})"
    return {"adt": dtype, "ref": "ref(_)", "func": "fn (_) -> _"}.get(kind, dtype)


def _check(value, sig, fname, exe, index: int):
    """``value`` (NumPy / tvm Tensor / nested tuple / ADT value / reference) against the
    signature entry of ``fname``'s parameter ``index``; the VM value to pass.

    Messages are the debug executor's (:func:`relay_tvm.runtime.argcheck.check_value`): the
    argument's position and name and the expected type in Relay's syntax, from the Relay
    module when the executable was compiled in this process (symbolic dimensions named), else
    from the signature.

    Raises:
        InputError: a value of another kind, dtype, shape or arity than the parameter's type.
    """
    name = sig[0]
    return _check_field(value, sig, exe, f"@{fname} argument {index} (%{name})",
                        exe.param_type(fname, name))


def _check_field(value, sig, exe, where, ty):
    from ..ir.types import TupleType, type_str
    from ..transform.bind_params import describe_kind

    _, kind, shape, dtype = sig
    want = type_str(ty) if ty is not None else _sig_text(sig)
    if kind in ("adt", "ref", "func", "any"):
        if kind == "adt" and not isinstance(value, ConstructorValue):
            raise InputError(f"{where}: expected a value of type {want} (a ConstructorValue "
                             f"of {dtype}), got {describe_kind(value)}")
        if kind == "ref" and not isinstance(value, RefValue):
            raise InputError(f"{where}: expected a reference ({want}, a RefValue), got "
                             f"{describe_kind(value)}")
        if kind == "adt":
            _check_adt(value, exe, where, ty, dtype)
        return _to_vm(_plain(value), where, exe)
    if kind == "tuple":
        if not isinstance(value, (tuple, list)) or len(value) != len(shape):
            raise InputError(f"{where}: expected a tuple of {len(shape)} values ({want}), got "
                             f"{describe_kind(value)}")
        tys = ty.fields if isinstance(ty, TupleType) else [None] * len(shape)
        return tuple(_check_field(v, s, exe, f"{where} field {i}", t)
                     for i, (v, s, t) in enumerate(zip(value, shape, tys)))
    from .pyargs import plain_tensor, python_arg

    value = python_arg(value, dtype, where)
    if isinstance(value, np.ndarray):
        got = "bool" if value.dtype == np.bool_ else value.dtype.name
    elif hasattr(value, "dtype") and hasattr(value, "shape"):
        got = str(value.dtype)
    else:
        raise InputError(f"{where}: expected a NumPy array or a tvm tensor ({want}), got "
                         f"{describe_kind(value)}")
    if got != dtype:
        raise InputError(f"{where}: got dtype {got}, expected {dtype}"
                         f"{no_implicit_cast(dtype, value)}")
    got_shape = tuple(int(d) for d in value.shape)
    if len(got_shape) != len(shape) or any(w not in (-1, g) for g, w in zip(got_shape, shape)):
        raise InputError(f"{where}: got shape {got_shape}, expected {want}")
    if isinstance(value, np.ndarray):
        return host_tensor(value)
    return plain_tensor(value, where)  # a view: a compact copy


_STACK_BYTES = 1 << 30
#: the deepest nesting of VM calls (``meta["call_depth"]``) run on the caller's own stack
_FLAT_DEPTH = 64


def _call_with_big_stack(fn, args):
    """Call ``fn(*args)`` on a thread with a 1 GiB stack (address space, touched only as used).

    The Relax VM runs a call of a VM function as a nested C++ call, so recursion that is not
    a tail call (``@map``, ``@length`` over a long list) uses C stack per level; the 8 MiB of
    the main thread overflows (the process dies) after a few thousand levels. Self tail calls
    are compiled into jumps and need no stack.

    The thread is started per call, and TVM keeps its kernel thread pool and the kernels'
    workspace pool per calling thread, so each call starts a new pool of workers and
    page-faults its workspaces and stack in again (218 minor page faults and 1.1-1.3x the
    graph executor's time for ResNet-18 at batch 1 when every program ran here). Programs of
    bounded call depth therefore run on the caller's thread (:class:`VirtualMachine`). One
    persistent big-stack thread was tried for the others: no page faults, but the list
    benchmark (build + map + foldl over 10,000 elements, ``benchmarks/bench_vm.py``) took
    ~20% more CPU time, glibc's allocator being slower on that long-lived thread (equal with
    ``MALLOC_ARENA_MAX=1``).
    """
    import threading

    box = {}

    def run():
        try:
            box["out"] = fn(*args)
        except BaseException as e:  # re-raised in the caller's thread
            box["err"] = e

    old = threading.stack_size()
    threading.stack_size(_STACK_BYTES)
    try:
        t = threading.Thread(target=run, name="relay_tvm-vm")
        t.start()
    finally:
        threading.stack_size(old)
    t.join()
    if "err" in box:
        raise box["err"]
    return box["out"]


def _not_an_executable(exe) -> str:
    """Why ``VirtualMachine(exe)`` cannot run ``exe`` (not an :class:`Executable`), and what
    to do instead."""
    import os

    what = type(exe).__name__
    if isinstance(exe, (str, os.PathLike)):
        return (f"VirtualMachine: got a path ({os.fspath(exe)!r}), expected an Executable: load "
                f"the library first, relay.vm.VirtualMachine(relay.vm.load_executable(path), "
                f"dev)")
    if hasattr(exe, "get_graph_json") or what in ("GraphExecutorFactoryModule",
                                                  "LoadedFactory"):
        return (f"VirtualMachine: got a graph library ({what}, what relay.build makes), "
                f"expected a VM Executable (relay.vm.compile(mod, target)); run a graph library "
                f"with graph_executor.GraphModule(lib['default'](dev))")
    return (f"VirtualMachine: expected an Executable (relay.vm.compile(mod, target) or "
            f"relay.vm.load_executable(path)), got {what}")



class VirtualMachine:
    """Runs an :class:`Executable` (tvm.runtime.vm.VirtualMachine).

    Args:
        exe: the executable (:func:`relay_tvm.vm.compile`, :func:`load_executable`), or the
            module ``tvm.runtime.load_module`` loaded from an exported one (as 0.19 took).
        device: ``tvm.runtime.Device`` (CPU when None).
        memory_cfg: the allocator of the VM's tensors, as 0.19's: ``"pooled"`` (None: the
            default, freed blocks reused) or ``"naive"`` (one allocation each), or a dict
            ``{device: name}`` (TVM's Relax VM allocators, which 0.19's were).

    Raises:
        BuildError: ``exe`` is not an Executable (a path, a graph library from relay.build,
            an IRModule, ...: the message says what to use), or its late-bound constants are
            not loaded; ``device`` is not a device, or does not exist.
        InputError: a GPU-built executable and a CPU device; a ``memory_cfg`` other than those.
    """

    def __init__(self, exe: Executable, device=None, memory_cfg=None):
        import tvm
        from tvm import relax

        from .graph_executor import check_device

        if not isinstance(exe, Executable) and isinstance(exe, tvm.runtime.Module):
            # 0.19 took the module tvm.runtime.load_module gave (and wrapped it itself)
            exe = Executable(exe)
        if not isinstance(exe, Executable):
            raise BuildError(_not_an_executable(exe))
        late = exe.meta.get("late_bound")
        if late:
            raise BuildError(f"VirtualMachine: the executable's constants {sorted(late)} were "
                             f"moved out (move_late_bound_consts / get_late_bound_consts); load "
                             f"them with exe.load_late_bound_consts(path) or "
                             f"load_late_bound_consts_from_map(map) first")
        self.exe = exe
        self.device = check_device(exe.lib, device, "VirtualMachine(exe, device)", "executable")
        if exe.target is not None:  # compiled here: can this CPU run it? (loaded: checked)
            from ..backend.isa import check_isa, target_isa

            check_isa(target_isa(exe.target), "VirtualMachine", "the executable")
        from ..backend.link import generate_machine_code

        generate_machine_code(exe.lib)  # an in-process build's kernels, on every build thread
        names = memory_cfg.values() if isinstance(memory_cfg, dict) else [memory_cfg]
        if any(n not in (None, "pooled", "naive") for n in names):
            raise InputError(f"VirtualMachine: memory_cfg {memory_cfg!r}: expected 'pooled', "
                             f"'naive' or a dict of them by device")
        if isinstance(memory_cfg, dict):  # one device: its entry (TVM's Relax VM fails on
            # a dict of its own)
            mine = [v for k, v in memory_cfg.items() if str(k) == str(self.device)]
            if not mine:
                raise InputError(f"VirtualMachine: memory_cfg {memory_cfg!r} has no entry for "
                                 f"the VM's device {self.device}")
            memory_cfg = mine[0]
        self._vm = relax.VirtualMachine(exe.lib, self.device, memory_cfg=memory_cfg)
        # the data of the executable's tensor constants: an output that is one (or a view of
        # one) is handed out as a copy, so writing into it cannot change the program (0.19's
        # VM returned the constant itself). Executables exported before have no such list.
        # A VM of a remote executable (tvm.rpc: the device carries the session mask) returns a
        # handle to the remote list, and its outputs are remote tensors: it keeps 0.19's
        # behaviour of handing out the constant itself.
        from tvm.rpc.base import RPC_SESS_MASK

        consts = ()
        self._remote = self.device.device_type >= RPC_SESS_MASK
        if not self._remote:
            try:
                consts = self._vm["__relay_vm_consts"]()
            except AttributeError:
                pass
        self._const_data = {c.data_ptr() for c in consts if c.data_ptr()}
        self._inputs: dict = {}
        self._outputs = None
        # a program whose VM calls nest only a few levels deep (no recursion, no closure
        # calls: most models) runs on the caller's thread, which already has TVM's kernel
        # thread pool and workspaces (what the graph executor uses); others on a big-stack
        # thread (_call_with_big_stack). Executables without the figure (older exports) too.
        depth = exe.meta.get("call_depth")
        self._flat = depth is not None and depth <= _FLAT_DEPTH

    def set_input(self, func_name="main", *args, **kwargs):
        """Remember the arguments of ``func_name`` for :meth:`run`."""
        self._inputs[func_name] = self._args(func_name, args, kwargs)

    def _sigs(self, func_name):
        sigs = self.exe.signatures.get(func_name)
        if sigs is None:
            raise InputError(f"VirtualMachine: no function {func_name!r}; the executable has "
                             f"{sorted(self.exe.signatures)}")
        return sigs

    def get_input_index(self, input_name: str, func_name: str = "main") -> int:
        """The position of parameter ``input_name`` of ``func_name``, or -1 when it has no
        parameter of that name (tvm.relay 0.19's ``VirtualMachine.get_input_index``)."""
        names = [s[0] for s in self._sigs(func_name)]
        return names.index(input_name) if input_name in names else -1

    def set_one_input(self, func_name="main", *args, **kwargs):
        """Set one argument of ``func_name`` for a later :meth:`invoke` without arguments:
        ``set_one_input("main", index_or_name, value)`` or ``set_one_input("main", name=value)``.
        The other arguments keep what was set before.

        Raises:
            InputError: not exactly one argument given, an unknown name or index, or a value
                whose shape / dtype does not match the parameter.
        """
        sigs = self._sigs(func_name)
        names = [s[0] for s in sigs]
        if len(args) == 2 and not kwargs:
            key, value = args
        elif not args and len(kwargs) == 1:
            key, value = next(iter(kwargs.items()))
        else:
            raise InputError(f"set_one_input(@{func_name}): give one (index or name, value) "
                             f"pair or one name=value; got {len(args)} positional and "
                             f"{len(kwargs)} keyword argument(s)")
        if isinstance(key, str):
            if key not in names:
                raise InputError(f"set_one_input(@{func_name}): unknown input {key!r}"
                                 f"{did_you_mean(key, names)}; inputs are {names}")
            idx = names.index(key)
        else:
            idx = int(key)
            if not 0 <= idx < len(sigs):
                raise InputError(f"set_one_input(@{func_name}): index {idx} out of range; "
                                 f"@{func_name} has {len(sigs)} input(s)")
        cur = list(self._inputs.get(func_name) or [None] * len(sigs))
        cur[idx] = _check(value, sigs[idx], func_name, self.exe, idx)
        self._inputs[func_name] = cur

    def invoke_stateful(self, func_name="main", *args, **kwargs):
        """Run ``func_name`` (on the arguments given, else on those set before) and keep the
        result for :meth:`get_outputs`; returns nothing (tvm.relay 0.19's stateful API)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        self.invoke(func_name)

    def invoke_with_outputs(self, func_name="main", input_args=None, output_args=None):
        """Run ``func_name`` on ``input_args`` (a dict name -> value, or a list) and copy its
        outputs into the preallocated tensors ``output_args`` (one per output, in order).

        Raises:
            InputError: the number of output tensors differs from the number of outputs, or
                one has another shape or dtype than its output.
        """
        if isinstance(input_args, dict):
            self.invoke(func_name, **input_args)
        else:
            self.invoke(func_name, *(input_args or ()))
        outs = self.get_outputs()
        dests = list(output_args or ())
        if len(dests) != len(outs):
            raise InputError(f"invoke_with_outputs(@{func_name}): {len(dests)} output tensor(s) "
                             f"given for {len(outs)} output(s)")
        for i, (dst, res) in enumerate(zip(dests, outs)):
            if tuple(dst.shape) != tuple(res.shape) or str(dst.dtype) != str(res.dtype):
                raise InputError(f"invoke_with_outputs(@{func_name}): output {i} is "
                                 f"{tuple(res.shape)} {res.dtype}, the tensor given is "
                                 f"{tuple(dst.shape)} {dst.dtype}")
            res.copyto(dst)

    def _args(self, func_name, args, kwargs):
        from .executor import order_args

        sigs = self._sigs(func_name)
        args = order_args([s[0] for s in sigs], args, kwargs, f"@{func_name}")
        return [_check(a, s, func_name, self.exe, i)
                for i, (a, s) in enumerate(zip(args, sigs))]

    def invoke(self, func_name="main", *args, **kwargs):
        """Call ``func_name``; returns a tvm Tensor or a tuple of them."""
        users = None
        if args or kwargs or func_name not in self._inputs:
            vals = self._args(func_name, args, kwargs)
            users = list(args) + list(kwargs.values()) if not kwargs else None
        else:
            vals = self._inputs[func_name]
            missing = [s[0] for s, v in zip(self._sigs(func_name), vals) if v is None]
            if missing:
                raise InputError(f"@{func_name}: inputs {missing} were not set (set_input / "
                                 "set_one_input)")
        vals = [v if not hasattr(v, "copyto") or v.device == self.device
                else v.copyto(self.device) for v in vals]
        try:
            if self._remote:  # a tuple or ADT result comes back field by field (a handle to
                # the remote array could not be read here)
                self._vm.set_input(func_name, *vals)
                self._vm.invoke_stateful(func_name)
                out = self._vm.get_outputs(func_name)
            else:
                fn = self._vm[func_name]
                out = fn(*vals) if self._flat else _call_with_big_stack(fn, vals)
        except Exception as e:  # the VM's error for a match that has no matching clause
            msg = str(e)
            if "relay_tvm VM: no clause" in msg:
                from ..errors import RelayError

                raise RelayError(msg[msg.index("relay_tvm VM"):].split(";")[0]) from None
            from ..backend.shape_func import failed_check

            check = failed_check(msg)  # a shape function met a value that makes no output,
            if check:  # or a kernel an index out of range
                raise InputError(check + self._dynamic_sizes(func_name, vals)) from None
            if msg.startswith("Mismatched ") and ".shape[" in msg:
                # a kernel's own argument check: values of dynamic shape that its type
                # promised would agree (e.g. two batch-wise operands of different batch sizes)
                raise InputError(self._mismatch_message(msg, func_name, vals)) from None
            raise
        for u, v in zip(users or (), vals):
            _write_back(u, v, self.exe)
        self._outputs = _to_user(out, self.exe, self)
        # closures in the result get their types, for checking their arguments
        _type_closures(self._outputs, self.exe.result_type(func_name), self.exe)
        return self._outputs

    def _mismatch_message(self, msg, func_name, vals) -> str:
        """The message of a kernel's argument check that failed (TVM's "Mismatched
        X.shape[0] ... expected to match Y.shape[0]", which names the kernel's buffers, not
        the program's values): the operator (the kernel's anchor, when it was compiled in this
        process) and the sizes of the dynamic dimensions of the values ``func_name`` was called
        with (the check itself does not report them, and a kernel's operands may be
        intermediate values)."""
        kernel = msg.split("`")[1].split("(")[0] if "`" in msg else "a kernel"
        k = self.exe.kernels.get(kernel)
        op = k.anchor if k is not None and k.anchor else ""
        sizes = self._dynamic_sizes(func_name, vals)
        what = f"operator {op} (kernel {kernel})" if op else f"VM kernel {kernel}"
        types = ""
        if k is not None:
            types = " " + ", ".join(str(t) for t in k.input_types if t.is_dynamic())
        return (f"{what}: the dynamic dimensions of its operands{types} do not agree at run "
                f"time{sizes}")

    def _dynamic_sizes(self, func_name, vals) -> str:
        """``"; the dynamic dimensions @f was called with: x.shape[1]=5, ..."``: the sizes of
        the ``Any`` dimensions of the values ``func_name`` was called with, for the messages of
        the checks a compiled kernel makes at run time (which cannot report values); "" when
        there are none."""
        dyn = []
        for sig, v in zip(self._sigs(func_name), vals):
            shape = getattr(v, "shape", None)
            if sig[1] != "tensor" or shape is None:
                continue
            dyn += [f"{sig[0]}.shape[{i}]={int(shape[i])}" for i, d in enumerate(sig[2])
                    if d == -1 and i < len(shape)]
        return (f"; the dynamic dimensions @{func_name} was called with: {', '.join(dyn)}"
                if dyn else "")

    def get_outputs(self) -> list:
        """The outputs of the last :meth:`invoke` / :meth:`run` as a list (the fields of a
        tuple result, or the single value)."""
        if self._outputs is None:
            raise BuildError("VirtualMachine.get_outputs: nothing has run yet")
        out = self._outputs
        return list(out) if isinstance(out, tuple) else [out]

    def get_num_outputs(self) -> int:
        """The number of outputs of the last :meth:`invoke` / :meth:`run` (tvm.relay 0.19's
        ``VirtualMachine.get_num_outputs``): the number of fields of a tuple result, else 1;
        the length of :meth:`get_outputs`. (0.19 also counted the fields of an ADT value; here
        an ADT value is one output, a ``ConstructorValue``, as :meth:`get_outputs` gives it.)

        Raises:
            BuildError: nothing has run yet (0.19 answered 1 then, an answer about no output).
        """
        if self._outputs is None:
            raise BuildError("VirtualMachine.get_num_outputs: nothing has run yet (invoke / "
                             "run first)")
        return len(self.get_outputs())

    def run(self, *args, **kwargs):
        return self.invoke("main", *args, **kwargs)

    @property
    def num_threads(self) -> int:
        """Threads a kernel runs on (see :attr:`relay_tvm.runtime.GraphModule.num_threads`)."""
        from .._threads import num_threads

        return num_threads()

    def benchmark(self, device=None, *args, func_name="main", repeat=5, number=5,
                  min_repeat_ms=None, end_to_end=False, **kwargs):
        """Time ``func_name`` on ``args`` (or on the inputs set before): ``repeat`` results,
        each the mean of ``number`` runs, in seconds, as ``tvm.runtime.module.BenchmarkResult``
        (``mean``, ``median``, ``std``, ``min``, ``max``, ``results``).

        With ``end_to_end=True`` each run also converts and checks the arguments and converts
        the result (the Python-side :meth:`invoke`); otherwise the VM's ``invoke_stateful`` is
        timed by TVM's ``time_evaluator``.
        """
        import time

        from tvm.runtime.module import BenchmarkResult

        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        if end_to_end:
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                for _ in range(number):
                    self.invoke(func_name)
                times.append((time.perf_counter() - t0) / number)
            return BenchmarkResult(times)
        vals = self._inputs.get(func_name)
        if vals is None or any(v is None for v in vals):
            raise InputError(f"benchmark(@{func_name}): give the arguments or set them first")
        from .._threads import keep_affinity

        self._vm.set_input(func_name, *vals)
        f = self._vm.time_evaluator("invoke_stateful", device or self.device, number=number,
                                    repeat=repeat, min_repeat_ms=min_repeat_ms or 0)
        with keep_affinity():  # TVM's pool may pin this thread (see keep_affinity)
            return f(func_name)


__all__ = ["VirtualMachine", "Executable", "load_executable"]

"""The Relay virtual machine (tvm.runtime.vm's API): runs programs with control flow compiled by
:func:`relay_tvm.vm.compile` on TVM's VM runtime.

    exe = relay.vm.compile(mod, target="llvm", params=params)
    vm = VirtualMachine(exe, tvm.cpu())
    out = vm.invoke("main", x)          # or vm.run(x), or vm.set_input("main", x); vm.run()

Arguments are checked against the function's parameter types (shape and dtype, no casts):
a mismatch raises :class:`relay_tvm.errors.BuildError`.
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import BuildError


class Executable:
    """A compiled VM program: bytecode, kernels and the signatures of its functions.

    Attributes:
        lib: the linked ``tvm.relax.VMExecutable`` (``export_library`` writes one file).
        signatures: ``function name -> [(param name, type string, shape, dtype)]``.
    """

    def __init__(self, lib, meta: dict, target=None):
        self.lib = lib
        self.meta = meta
        self.target = target

    @property
    def signatures(self):
        return self.meta["signatures"]

    def export_library(self, path: str, **kwargs) -> None:
        """Write bytecode, kernels and constants into one shared library (the cross compiler
        is chosen for cross-compiled targets, as ``relay.build``'s factory does)."""
        if self.target is not None and "cc" not in kwargs and "fcompile" not in kwargs:
            from ..backend.build_module import cross_compiler

            cc = cross_compiler(self.target)
            if cc is not None:
                kwargs["cc"] = cc
        self.lib.export_library(path, **kwargs)

    @property
    def bytecode(self) -> str:
        return self.lib.as_text()


def load_executable(path: str) -> Executable:
    """Load a VM executable written by ``Executable.export_library`` (in any process)."""
    import os

    import tvm
    from tvm import relax

    if not os.path.exists(path):
        raise BuildError(f"load_executable: no such file {path!r}")
    try:
        lib = tvm.runtime.load_module(path)
        vm = relax.VirtualMachine(lib, tvm.cpu(0))
        meta = json.loads(vm["__relay_vm_meta"]())
    except Exception as e:
        raise BuildError(f"load_executable: {path!r} is not a relay_tvm VM executable: {e}") from e
    return Executable(lib, meta)


def _to_user(v):
    import tvm

    if isinstance(v, tvm.runtime.Tensor):
        return v
    if hasattr(v, "__len__") and not isinstance(v, (str, bytes)):
        return tuple(_to_user(x) for x in v)
    return v


def _check(value, sig, fname):
    """``value`` (NumPy / tvm Tensor / nested tuple) against a parameter signature entry."""
    import tvm

    name, kind, shape, dtype = sig
    if kind == "tuple":
        if not isinstance(value, (tuple, list)) or len(value) != len(shape):
            raise BuildError(f"@{fname} argument %{name}: expected a tuple of {len(shape)} values")
        return tuple(_check(v, s, fname) for v, s in zip(value, shape))
    if isinstance(value, (bool, int, float, np.generic)):
        value = np.asarray(value, dtype=dtype)
    if isinstance(value, np.ndarray):
        got = "bool" if value.dtype == np.bool_ else value.dtype.name
    elif hasattr(value, "dtype"):
        got = str(value.dtype)
    else:
        raise BuildError(f"@{fname} argument %{name}: unsupported value {type(value).__name__}")
    if got != dtype:
        raise BuildError(f"@{fname} argument %{name}: got dtype {got}, expected {dtype} "
                         f"(no implicit cast)")
    if tuple(int(d) for d in value.shape) != tuple(shape):
        raise BuildError(f"@{fname} argument %{name}: got shape {tuple(value.shape)}, expected "
                         f"{tuple(shape)}")
    if isinstance(value, np.ndarray):
        return tvm.runtime.tensor(np.array(value, order="C"))
    return value


class VirtualMachine:
    """Runs an :class:`Executable` (tvm.runtime.vm.VirtualMachine).

    Args:
        exe: the executable.
        device: ``tvm.runtime.Device`` (CPU when None).
    """

    def __init__(self, exe: Executable, device=None):
        import tvm
        from tvm import relax

        self.exe = exe
        self.device = device if device is not None else tvm.cpu(0)
        self._vm = relax.VirtualMachine(exe.lib, self.device)
        self._inputs: dict = {}

    def set_input(self, func_name="main", *args, **kwargs):
        """Remember the arguments of ``func_name`` for :meth:`run`."""
        self._inputs[func_name] = self._args(func_name, args, kwargs)

    def _args(self, func_name, args, kwargs):
        sigs = self.exe.signatures.get(func_name)
        if sigs is None:
            raise BuildError(f"VirtualMachine: no function {func_name!r}; the executable has "
                             f"{sorted(self.exe.signatures)}")
        args = list(args)
        names = [s[0] for s in sigs]
        for k, v in kwargs.items():
            if k not in names:
                raise BuildError(f"@{func_name}: unknown argument {k!r}; parameters are {names}")
            i = names.index(k)
            while len(args) <= i:
                args.append(None)
            args[i] = v
        if len(args) != len(sigs) or any(a is None for a in args):
            raise BuildError(f"@{func_name} takes {len(sigs)} argument(s) {names}, got "
                             f"{len([a for a in args if a is not None])}")
        return [_check(a, s, func_name) for a, s in zip(args, sigs)]

    def invoke(self, func_name="main", *args, **kwargs):
        """Call ``func_name``; returns a tvm Tensor or a tuple of them."""
        if args or kwargs or func_name not in self._inputs:
            vals = self._args(func_name, args, kwargs)
        else:
            vals = self._inputs[func_name]
        vals = [v if not hasattr(v, "copyto") or v.device == self.device
                else v.copyto(self.device) for v in vals]
        return _to_user(self._vm[func_name](*vals))

    def run(self, *args, **kwargs):
        return self.invoke("main", *args, **kwargs)

    @property
    def num_threads(self) -> int:
        """Threads a kernel runs on (see :attr:`relay_tvm.runtime.GraphModule.num_threads`)."""
        from .._threads import num_threads

        return num_threads()

    def benchmark(self, device=None, *args, func_name="main", repeat=5, number=5, **kwargs):
        vals = self._args(func_name, args, kwargs)
        self._vm.save_function(func_name, "__relay_bench", *vals)
        return self._vm.time_evaluator("__relay_bench", device or self.device, number=number,
                                       repeat=repeat)()


__all__ = ["VirtualMachine", "Executable", "load_executable"]

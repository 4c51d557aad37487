"""The profiling virtual machine (``tvm.runtime.profiler_vm`` of TVM 0.19)::

    exe = relay.vm.compile(mod, target="llvm")
    vm = profiler_vm.VirtualMachineProfiler(exe, tvm.cpu())
    report = vm.profile(x, func_name="main")      # one row per kernel call
    print(report)

:class:`VirtualMachineProfiler` is relay_tvm's :class:`~relay_tvm.runtime.vm.VirtualMachine`
(everything it does works the same) plus :meth:`~VirtualMachineProfiler.profile`, which runs the
function once with TVM's VM instrumentation hook (``relax.VirtualMachine.set_instrument``) and
times every kernel call by wall clock from the hook before the call to the hook after it (the
hook's own return trip, about a microsecond, is included). Runtime built-ins (``vm.*``:
allocation, shape handling; ``ffi.*``: constructor tag tests, reference cells) and calls of
Relay functions are not rows; the device row is the whole call's wall
time. 0.19's hardware metric ``collectors`` are not provided.
"""

from __future__ import annotations

import time

from ..errors import NotProvidedError
from .profiling import Report, device_name, shapes_of
from .vm import VirtualMachine

#: prefixes of the runtime built-ins the VM code calls (allocation, shapes, tuples: ``vm.``;
#: ADT tag tests and reference cells: ``ffi.ArrayContains``, ``ffi.List``...): not kernels
_BUILTINS = ("vm.", "ffi.")


def enabled() -> bool:
    """Whether the profiling VM is available (always, here)."""
    return True


class VirtualMachineProfiler(VirtualMachine):
    """A :class:`VirtualMachine` that can also :meth:`profile` (see the module docstring).

    Args:
        exe: the executable (``relay.vm.compile``).
        device: ``tvm.runtime.Device`` (CPU when None); a list gives its first device.
        memory_cfg: accepted for 0.19's signature (TVM's VM chooses its allocator).
    """

    def __init__(self, exe, device=None, memory_cfg=None):
        if isinstance(device, (list, tuple)):
            device = device[0]
        super().__init__(exe, device)

    def get_stat(self, sort_by_time=True):
        """Removed in 0.19 already (it warned and returned ``""``): use :meth:`profile`."""
        import warnings

        warnings.warn("get_stat has been removed, use profile instead", stacklevel=2)
        return ""

    def profile(self, *args, func_name="main", collectors=None, **kwargs) -> Report:
        """Call ``func_name`` on ``args`` / ``kwargs`` (or the inputs set before) and return a
        :class:`relay_tvm.runtime.profiling.Report`: one row per kernel call in execution
        order (``"Name"``, ``"Duration (us)"``, ``"Percent"`` of the whole call, ``"Count"``,
        ``"Device"``, ``"Argument Shapes"``). The call's result is kept for
        :meth:`get_outputs`.

        Raises:
            NotProvidedError: ``collectors`` given.
            InputError: as :meth:`invoke`.
        """
        import tvm_ffi

        from .._threads import num_threads

        if collectors:
            raise NotProvidedError("VirtualMachineProfiler.profile(collectors=...): metric "
                                   "collectors (PAPI hardware counters) are not provided; "
                                   "profile() reports wall-clock time per kernel call only")
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        clock = time.perf_counter
        rows, open_calls = [], []

        def instrument(func, symbol, before_run, ret_value, *call_args):
            if not isinstance(func, tvm_ffi.Function) or symbol.startswith(_BUILTINS):
                return 0  # a Relay function (VM closure) or a runtime built-in: not a kernel
            if before_run:
                open_calls.append(clock())
            else:
                rows.append((symbol, clock() - open_calls.pop(), shapes_of(call_args)))
            return 0

        self._vm.set_instrument(instrument)
        try:
            start = clock()
            self.invoke(func_name)
            total = clock() - start
        finally:
            self._vm.set_instrument(None)
        return Report.from_timings(rows, device_name(self.device),
                                   {"Executor": "VM", "Number of threads": num_threads()}, total)


__all__ = ["VirtualMachineProfiler", "enabled"]

"""Run a library exported by relay_tvm with TVM's runtime alone (no relay_tvm, no TVM compiler).

This file is self-contained on purpose: it imports only ``numpy`` and ``tvm`` (the runtime part;
``TVM_USE_RUNTIME_LIB=1`` makes a full apache-tvm wheel load only ``libtvm_runtime.so``), so it can
be copied to a deployment host, an ARM board for instance, where ``pip install apache-tvm numpy``
is all there is. ``relay_tvm.testing.aarch64`` runs it under ``qemu-aarch64`` in CI.

What it relies on (written by ``relay_tvm.backend``'s graph codegen): an exported relay_tvm
library is a TVM Relax VM executable whose function ``main`` takes the graph's inputs in the order
of the graph JSON's ``arg_nodes`` (user inputs and bound parameters, by name) and returns the tuple
of outputs; ``__relay_meta`` returns a JSON string with ``graph_json``, ``input_names``,
``param_names``; ``__relay_params`` returns the bound parameters in ``param_names`` order.

Command line::

    python deploy.py LIB.so INPUTS.npz OUTPUTS.npz [--repeat N]
    python deploy.py --batch JOBS.json
    python deploy.py --describe LIB.so INPUTS.json


reads the inputs by name from ``INPUTS.npz`` (``numpy.savez``), runs ``main`` on the CPU and writes
the outputs as ``out0``, ``out1``, ... to ``OUTPUTS.npz``; ``--repeat N`` also prints the mean time
of N more runs in milliseconds. ``--batch`` runs several libraries in one process (TVM's import is
the slow part under an emulator): ``JOBS.json`` is a list of ``[LIB, INPUTS, OUTPUTS]``. Errors (a missing input, a wrong shape or dtype) exit with status 2
and a message naming the input, the expected and the given shape and dtype; a file that is
not a graph library (a VM executable, say) exits with status 2 and one line saying what it is.
``--describe`` writes the library's inputs to ``INPUTS.json`` without running it:
``{"input_names": [user inputs, in order], "input_types": {name: [shape, dtype]}}`` (every graph
input, bound parameters included), what ``relay-tvm run --qemu`` checks given inputs against.
"""

import json
import os
import sys
import time


class DeployError(Exception):
    """The file is not a relay_tvm graph library, or an input does not match the library's
    graph (name, shape or dtype)."""


class ExportedGraph:
    """A relay_tvm library loaded with TVM's runtime, on the CPU (or ``device="cuda"`` for a
    library built for a CUDA target, where TVM's CUDA runtime is loaded).

    Args:
        path: the file written by ``export_library``.

    Attributes:
        input_names: the user inputs (``set_input`` names), in the order of ``relay.build``'s
            main function.
        input_types: ``{name: (shape tuple, dtype str)}`` of every graph input.
    """

    def __init__(self, path, device="cpu"):
        import tvm
        from tvm.runtime.vm import VirtualMachine

        self.device = tvm.cuda(0) if device == "cuda" else tvm.cpu(0)
        self._tvm = tvm
        _register_index_failure()
        devices = [self.device, tvm.cpu(0)] if device == "cuda" else self.device
        try:
            self._vm = VirtualMachine(tvm.runtime.load_module(path), devices)
        except Exception as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[-1]
            raise DeployError(f"cannot load {path!r} as a TVM library: {first}") from None
        try:
            meta = json.loads(self._vm["__relay_meta"]())
        except Exception:
            raise DeployError(self._not_a_graph_library(path)) from None
        graph = json.loads(meta["graph_json"])
        shapes = graph["attrs"]["shape"][1]
        dtypes = graph["attrs"]["dltype"][1]
        row = graph["node_row_ptr"]
        self._arg_names = [graph["nodes"][n]["name"] for n in graph["arg_nodes"]]
        self.input_types = {graph["nodes"][n]["name"]: (tuple(shapes[row[n]]), dtypes[row[n]])
                            for n in graph["arg_nodes"]}
        self.input_names = list(meta["input_names"])
        self._params = dict(zip(meta["param_names"], list(self._vm["__relay_params"]())))

    def _not_a_graph_library(self, path):
        try:
            self._vm["__relay_vm_meta"]
        except Exception:
            return (f"{path!r} is not a relay_tvm graph library (from relay.build(...)"
                    f".export_library): it has no '__relay_meta' function")
        return (f"{path!r} is a relay_tvm VM executable (from relay.vm.compile(...)"
                f".export_library), not a graph library; this runner runs relay.build "
                f"libraries: use relay.vm.load_executable({path!r}) and "
                f"relay.vm.VirtualMachine")

    def _arguments(self, inputs):
        import numpy as np

        args = []
        unknown = sorted(set(inputs) - set(self._arg_names))
        for name in self._arg_names:
            if name in self._params and name not in inputs:
                args.append(self._params[name])
                continue
            if name not in inputs:
                also = f" (unknown inputs given: {unknown})" if unknown else ""
                raise DeployError(f"input {name!r} was not given{also}; inputs are "
                                  f"{self.input_names}")
            shape, dtype = self.input_types[name]
            value = np.asarray(inputs[name])
            if tuple(value.shape) != shape or str(value.dtype) != dtype:
                raise DeployError(f"input {name!r}: expected {shape} {dtype}, got "
                                  f"{tuple(value.shape)} {value.dtype}")
            args.append(self._tvm.runtime.tensor(np.require(value, requirements="C"), self.device))
        if unknown:
            import difflib  # (self-contained file: not relay_tvm.errors.did_you_mean)

            close = difflib.get_close_matches(unknown[0], list(self.input_names), n=1)
            near = f" (did you mean {close[0]!r}?)" if close else ""
            raise DeployError(f"unknown inputs {unknown}{near}; inputs are {self.input_names}")
        return args

    def run(self, inputs, repeat=0):
        """Run ``main`` once on ``inputs`` (``{name: numpy array}``) and return the outputs as a
        list of numpy arrays; with ``repeat`` > 0 also return the mean time in ms of ``repeat``
        further runs, else ``None``."""
        args = self._arguments(inputs)
        try:
            outs = self._vm["main"](*args)
        except Exception as e:  # a kernel's check of the input values (an index out of range)
            text = str(e)
            check = [text[text.index(p):].splitlines()[0] for p in _CHECKS if p in text]
            if check:
                raise DeployError(check[0]) from None
            raise
        results = [o.numpy() for o in _flatten(outs)]
        mean_ms = None
        if repeat > 0:
            self.device.sync()
            t0 = time.perf_counter()
            for _ in range(repeat):
                self._vm["main"](*args)
            self.device.sync()  # GPU launches are asynchronous
            mean_ms = (time.perf_counter() - t0) / repeat * 1e3
        return results, mean_ms


# the prefixes of the messages of relay_tvm's run-time checks in kernels (backend/shape_func.py)
_CHECKS = ("relay_tvm shape check", "relay_tvm index check")


def _register_index_failure():
    """What a CPU kernel of the library calls with an index value it refuses: the packed
    function ``relay_tvm.index_out_of_range`` of ``relay_tvm.backend.shape_func`` (registered
    by ``import relay_tvm``; a copy here, as this file runs without relay_tvm)."""
    import tvm_ffi

    name = "relay_tvm.index_out_of_range"
    if tvm_ffi.get_global_func(name, allow_missing=True) is not None:
        return

    def fail(message, value, lower, upper, *position):
        at = f" at position {tuple(int(i) for i in position)}" if position else ""
        raise ValueError(f"{message}: got {int(value)}{at} of the indices, outside "
                         f"[{int(lower)}, {int(upper)})")

    tvm_ffi.register_global_func(name, fail)


def _flatten(value):
    stack, flat = [value], []
    while stack:
        v = stack.pop()
        if hasattr(v, "numpy"):
            flat.append(v)
        else:
            stack.extend(reversed(list(v)))
    return flat


def main(argv=None):
    import numpy as np

    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 3 and argv[0] == "--describe":
        try:
            graph = ExportedGraph(argv[1])
        except DeployError as e:
            print(f"deploy: {argv[1]}: {e}", file=sys.stderr)
            return 2
        with open(argv[2], "w") as f:
            json.dump({"input_names": graph.input_names,
                       "input_types": {k: [list(shape), dtype] for k, (shape, dtype)
                                       in graph.input_types.items()}}, f)
        return 0
    if len(argv) == 2 and argv[0] == "--batch":
        with open(argv[1]) as f:
            jobs = json.load(f)
        for lib, inp, out in jobs:
            status = main([lib, inp, out])
            if status:
                return status
        return 0
    repeat = 0
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) != 3:
        print("usage: python deploy.py LIB.so INPUTS.npz OUTPUTS.npz [--repeat N] | --batch "
              "JOBS.json | --describe LIB.so INPUTS.json", file=sys.stderr)
        return 2
    lib, inp, out = argv
    with np.load(inp) as f:
        inputs = {k: f[k] for k in f.files}
    try:
        outs, mean_ms = ExportedGraph(lib).run(inputs, repeat)
    except DeployError as e:
        print(f"deploy: {lib}: {e}", file=sys.stderr)
        return 2
    np.savez(out, **{f"out{i}": o for i, o in enumerate(outs)})
    if mean_ms is not None:
        print(f"mean_ms {mean_ms:.3f}")
    return 0


if __name__ == "__main__":
    # Only the runtime library: the compiler (libtvm_compiler.so) is not needed to run, and a
    # board's or qemu's copy of TVM may not have it. Set before tvm is first imported.
    os.environ.setdefault("TVM_USE_RUNTIME_LIB", "1")
    sys.exit(main())

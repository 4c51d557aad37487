"""The debug graph executor (``tvm.contrib.debugger.debug_executor`` of TVM 0.19)::

    m = debug_executor.create(lib.get_graph_json(), lib, tvm.cpu(), dump_root="/tmp/dbg")
    m.set_input("x", x)
    m.run()                      # runs node by node, times each, prints the per-node table
    y = m.get_output(0)          # as after GraphModule.run
    r = m.debug_get_output("tvmgen_default_fused_nn_relu")   # one node's output
    print(m.profile())           # a tvm.runtime.profiling-style Report, one row per kernel call

relay_tvm's graph modules run their host program on TVM's VM runtime; the debug executor instead
runs the graph's kernels one by one from Python (each node's outputs in tensors of their own),
which is what lets it time and keep every node. Times: ``run`` / ``run_individual`` time each
kernel with ``time_evaluator`` (``number`` runs a measurement, ``repeat`` measurements, data in
the caches); ``profile`` times one pass of the whole sequence (after a warm-up pass), wall clock
around each call. 0.19's extra hardware metrics (``collectors``, PAPI) are not provided.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

from ...errors import BuildError, InputError, NotProvidedError
from ..graph_executor import GraphModule
from ..graph_executor import create as _create_graph_module
from ..profiling import Report, device_name, shapes_of
from .debug_result import DebugResult

_DUMP_ROOT_PREFIX = "tvmdbg_"
_DUMP_PATH_PREFIX = "_tvmdbg_"


def create(graph_json_str, libmod, device, dump_root=None) -> "GraphModuleDebug":
    """A :class:`GraphModuleDebug` of ``libmod`` (what ``relay.build`` or ``load_module``
    returned) on ``device``; dumps go under ``dump_root`` (a new temporary folder when None).

    Raises:
        InputError: ``graph_json_str`` is not a string.
        BuildError: ``libmod`` is not a relay_tvm graph module or carries another graph (see
            :func:`relay_tvm.runtime.graph_executor.create`).
    """
    if not isinstance(graph_json_str, str):
        raise InputError(f"debug_executor.create: graph_json_str must be the graph JSON string "
                         f"(lib.get_graph_json()), got {type(graph_json_str).__name__}")
    gmod = _create_graph_module(graph_json_str, libmod, device)
    return GraphModuleDebug(gmod, device, graph_json_str, dump_root)


class GraphModuleDebug(GraphModule):
    """A :class:`GraphModule` whose :meth:`run` runs and times node by node (see the module
    docstring). Attributes: ``debug_datum`` (:class:`DebugResult` of the last run)."""

    def __init__(self, module, device, graph_json_str, dump_root=None):
        super().__init__(module)
        self._dump_root = dump_root or tempfile.mkdtemp(prefix=_DUMP_ROOT_PREFIX)
        dev = device[0] if isinstance(device, (list, tuple)) else (device or self.device)
        label = str(dev).upper().replace("(", ":").replace(")", "").replace(":", "_")
        self._dump_path = os.path.join(self._dump_root, f"{_DUMP_PATH_PREFIX}device_{label}")
        os.makedirs(self._dump_path, 0o700, exist_ok=True)
        self.debug_datum = DebugResult(graph_json_str or self.get_graph_json(), self._dump_path)

    # ---- node-by-node execution -----------------------------------------------------------

    def _outputs_from(self, vals):
        self._outputs = [vals[(a, b)] for a, b, _ in self._graph["heads"]]
        self._deliver_outputs()

    def _node_outputs(self, vals) -> list:
        out = []
        for nid, node in enumerate(self._graph["nodes"]):
            n = 1 if node["op"] == "null" else int(node["attrs"]["num_outputs"])
            out += [vals[(nid, j)] for j in range(n)]
        return out

    def run_individual(self, number, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1):
        """Run every node and time it: a list, one entry per graph node (inputs too, as 0.19),
        of ``repeat`` times in seconds, each the mean of ``number`` runs (at least
        ``min_repeat_ms`` per measurement). The runs leave every node's outputs set, so
        :meth:`get_output` gives this run's outputs.

        ``limit_zero_time_iterations``, ``cooldown_interval_ms`` and ``repeats_to_cooldown`` are
        accepted for 0.19's signature; TVM's ``time_evaluator`` has no such knobs.
        """
        from ..._threads import keep_affinity

        if int(number) < 1 or int(repeat) < 1:
            raise InputError(f"run_individual: number and repeat must be >= 1, got "
                             f"{number}, {repeat}")
        vals, calls = self._kernel_calls()
        by_node = {}
        with keep_affinity():
            for nid, name, kmod, args in calls:
                kmod.get_function(name)(*args)  # in order: the next kernels read these outputs
                t = kmod.time_evaluator(name, self.device, number=int(number),
                                        repeat=int(repeat),
                                        min_repeat_ms=int(min_repeat_ms or 0))(*args)
                by_node[nid] = [float(x) for x in t.results]
        self._last_vals = vals
        self._outputs_from(vals)
        return [by_node.get(nid, [0.0] * int(repeat)) for nid in range(len(self._graph["nodes"]))]

    def run_individual_node(self, index, number=10, repeat=1, min_repeat_ms=0,
                            limit_zero_time_iterations=100, cooldown_interval_ms=0,
                            repeats_to_cooldown=1):
        """Time graph node ``index`` alone (its inputs as a run computes them): a
        ``BenchmarkResult`` of ``repeat`` times in seconds.

        Raises:
            InputError: ``index`` is out of range or names an input, not a kernel.
        """
        from tvm.runtime.module import BenchmarkResult

        from ..._threads import keep_affinity

        nodes = self._graph["nodes"]
        if not 0 <= int(index) < len(nodes) or nodes[int(index)]["op"] == "null":
            raise InputError(f"run_individual_node: node {index} is not a kernel node (the "
                             f"graph has {len(nodes)} nodes, inputs are "
                             f"{self._graph['arg_nodes']})")
        if nodes[int(index)]["attrs"]["func_name"] == "__nop":  # a view: no kernel runs
            return BenchmarkResult([0.0] * int(repeat))
        _, calls = self._kernel_calls()
        with keep_affinity():
            for nid, name, kmod, args in calls:
                if nid == int(index):
                    t = kmod.time_evaluator(name, self.device, number=int(number),
                                            repeat=int(repeat),
                                            min_repeat_ms=int(min_repeat_ms or 0))(*args)
                    return BenchmarkResult([float(x) for x in t.results])
                kmod.get_function(name)(*args)
        raise BuildError(f"run_individual_node: node {index} was not reached")  # unreachable

    def run(self, number=10, repeat=1, min_repeat_ms=1, limit_zero_time_iterations=100,
            cooldown_interval_ms=0, repeats_to_cooldown=1, sort_by_time=True, **input_dict):
        """Run the graph node by node, timing each (:meth:`run_individual`), keep every
        node's outputs in :attr:`debug_datum`, write the dump files and print the per-node
        table (slowest first when ``sort_by_time``). :meth:`get_output` then gives the run's
        outputs."""
        if input_dict:
            self.set_input(**input_dict)
        times = self.run_individual(number, repeat, min_repeat_ms, limit_zero_time_iterations,
                                    cooldown_interval_ms, repeats_to_cooldown)
        self.debug_datum._time_list = times
        self.debug_datum.update_output_tensors(self._node_outputs(self._last_vals))
        self.debug_datum.dump_output_tensor()
        self.debug_datum.dump_chrome_trace()
        self.debug_datum.display_debug_result(sort_by_time)

    def debug_get_output(self, node, out=None):
        """Output 0 of graph node ``node`` (index, or the name of the first node so named),
        from a node-by-node run on the current inputs; copied into ``out`` when given.

        Raises:
            AttributeError: no node has that name (as 0.19).
            InputError: ``node`` is neither an int nor a str.
        """
        if isinstance(node, str):
            names = [n["name"] for n in self._graph["nodes"]]
            if node not in names:
                raise AttributeError(f"Could not find a node named {node} in this graph.")
        elif not isinstance(node, int):
            raise InputError(f"debug_get_output: give a node index or name, got "
                             f"{type(node).__name__}")
        res = super().debug_get_output(node)
        if out is not None:
            out.copyfrom(res)
            return out
        return res

    def profile(self, collectors=None, **input_dict) -> Report:
        """Run the graph node by node once (after a warm-up pass) and report each kernel call's
        wall-clock time: a :class:`relay_tvm.runtime.profiling.Report` (``print(report)``,
        ``report.calls[i]["Duration (us)"].microseconds``, ``report.csv()``). The device row
        is the wall time of the whole timed pass (kernels and the Python loop between them).
        :meth:`get_output` then gives this run's outputs.

        Raises:
            NotProvidedError: ``collectors`` given (0.19's PAPI metric collectors).
        """
        from ..._threads import keep_affinity, num_threads

        if collectors:
            raise NotProvidedError("GraphModuleDebug.profile(collectors=...): metric collectors "
                                   "(PAPI hardware counters) are not provided; profile() "
                                   "reports wall-clock time per kernel call only")
        if input_dict:
            self.set_input(**input_dict)
        vals, calls = self._kernel_calls()
        funcs = [(name, kmod.get_function(name), args) for _, name, kmod, args in calls]
        clock = time.perf_counter
        with keep_affinity():
            for _, f, args in funcs:  # warm-up: kernels loaded, caches as in a repeated run
                f(*args)
            rows = []
            start = clock()
            for name, f, args in funcs:
                t = clock()
                f(*args)
                rows.append((name, clock() - t, shapes_of(args)))
            total = clock() - start
        self._outputs_from(vals)
        return Report.from_timings(rows, device_name(self.device),
                                   {"Executor": "Graph", "Number of threads": num_threads()},
                                   total)

    def exit(self) -> None:
        """Remove the dump folder and everything in it."""
        if os.path.isdir(self._dump_root):
            shutil.rmtree(self._dump_root)


__all__ = ["create", "GraphModuleDebug"]

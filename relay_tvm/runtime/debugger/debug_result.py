"""The dump of a debug run (``tvm.contrib.debugger.debug_result`` of TVM 0.19).

:class:`DebugResult` holds the graph's nodes, each node's outputs and times of the last
``GraphModuleDebug.run()``, prints the per-node table and writes, in the dump folder,
``_tvmdbg_graph_dump.json`` (the graph, each node with its kernel name, inputs by name, dtype and
shape), ``output_tensors.params`` (every node output, by ``"<node>____topo-index:<i>____
output-num:<j>"``, in the format of ``relay.save_param_dict``) and
``_tvmdbg_execution_trace.json`` (a Chrome trace: one begin/end event pair per node, laid end to
end by their mean times).
"""

from __future__ import annotations

import json
import os

import numpy as np

GRAPH_DUMP_FILE_NAME = "_tvmdbg_graph_dump.json"
CHROME_TRACE_FILE_NAME = "_tvmdbg_execution_trace.json"
OUTPUT_TENSORS_FILE_NAME = "output_tensors.params"


class DebugResult:
    """The data of a debug run (see the module docstring).

    Args:
        graph_json: the graph executor JSON.
        dump_path: the folder the files are written to (exists).
    """

    def __init__(self, graph_json: str, dump_path: str):
        self._dump_path = dump_path
        self._output_tensor_list: list = []
        self._time_list: list = []
        graph = json.loads(graph_json)
        self._shapes_list = graph["attrs"]["shape"]
        self._dtype_list = graph["attrs"]["dltype"]
        nodes = graph["nodes"]
        eid = 0
        for node in nodes:  # the dump's node form: op = kernel name, inputs by node name
            if node["op"] == "null":
                node["attrs"], node["op"], nout = {}, "param", 1
            else:
                node["op"] = node["attrs"]["func_name"]
                nout = int(node["attrs"]["num_outputs"])
            node["inputs"] = [nodes[i[0]]["name"] for i in node["inputs"]]
            node["attrs"]["T"] = "type: " + self._dtype_list[1][eid]
            node["shape"] = self._shapes_list[1][eid]
            eid += nout
        self._nodes_list = nodes
        with open(os.path.join(dump_path, GRAPH_DUMP_FILE_NAME), "w") as f:
            json.dump(graph, f, indent=4)

    def get_graph_nodes(self) -> list:
        return self._nodes_list

    def get_graph_node_shapes(self):
        return self._shapes_list

    def get_graph_node_dtypes(self):
        return self._dtype_list

    def get_graph_node_output_num(self, node) -> int:
        return 1 if node["op"] == "param" else int(node["attrs"]["num_outputs"])

    def update_output_tensors(self, tensors) -> None:
        self._output_tensor_list = list(tensors)

    def get_output_tensors(self) -> dict:
        """``"<node name>____topo-index:<i>____output-num:<j>" -> tensor`` of the last run."""
        out, eid = {}, 0
        for i, node in enumerate(self._nodes_list):
            for j in range(self.get_graph_node_output_num(node)):
                out[f"{node['name']}____topo-index:{i}____output-num:{j}"] = \
                    self._output_tensor_list[eid]
                eid += 1
        return out

    def dump_output_tensor(self) -> None:
        from ...backend.param_dict import save_param_dict

        with open(os.path.join(self._dump_path, OUTPUT_TENSORS_FILE_NAME), "wb") as f:
            f.write(save_param_dict(self.get_output_tensors()))

    def dump_chrome_trace(self) -> None:
        means = [float(np.mean(t)) if len(t) else 0.0 for t in self._time_list]
        start = np.concatenate([[0.0], np.cumsum(means)])
        events = []
        for node, t, s in zip(self._nodes_list, means, start):
            events.append({"ts": s * 1e6, "tid": 1, "pid": 1, "name": node["name"], "ph": "B"})
            events.append({"ts": (s + t) * 1e6, "tid": 1, "pid": 1, "name": node["name"],
                           "ph": "E"})
        with open(os.path.join(self._dump_path, CHROME_TRACE_FILE_NAME), "w") as f:
            json.dump({"displayTimeUnit": "ns", "traceEvents": events}, f)

    def get_debug_result(self, sort_by_time: bool = True) -> str:
        """The per-node table: name, kernel, mean time (us and % of the sum), output shape,
        number of inputs and outputs, each repeat's time; slowest first and a ``Total_time``
        row when ``sort_by_time``."""
        header = ["Node Name", "Ops", "Time(us)", "Time(%)", "Shape", "Inputs", "Outputs",
                  "Measurements(us)"]
        total = sum(float(np.mean(t)) for t in self._time_list if len(t)) or 1.0
        rows, eid = [], 0
        for node, times in zip(self._nodes_list, self._time_list):
            nout = self.get_graph_node_output_num(node)
            if node["op"] == "param":
                eid += nout
                continue
            mean = float(np.mean(times))
            for _ in range(nout):
                rows.append([node["name"], node["op"], round(mean * 1e6, 3),
                             round(100 * mean / total, 3),
                             str(tuple(self._output_tensor_list[eid].shape)),
                             str(node["attrs"].get("num_inputs", len(node["inputs"]))),
                             str(nout), str([round(t * 1e6, 3) for t in times])])
                eid += 1
        if sort_by_time:
            rows.sort(key=lambda r: -r[2])
            rows.append(["Total_time", "-", round(total * 1e6, 3), "-", "-", "-", "-", "-"])
        widths = [max([len(h)] + [len(str(r[i])) for r in rows]) + 2
                  for i, h in enumerate(header)]
        lines = ["".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
                 "".join(("-" * len(h)).ljust(w) for h, w in zip(header, widths)).rstrip()]
        lines += ["".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join(lines)

    def display_debug_result(self, sort_by_time: bool = True) -> None:
        print(self.get_debug_result(sort_by_time))


__all__ = ["DebugResult", "GRAPH_DUMP_FILE_NAME", "CHROME_TRACE_FILE_NAME"]

"""Import a legacy NNVM graph (graph JSON + parameter file) and run it.

NNVM was TVM's graph IR before Relay. Models compiled with TVM up to 0.6 were often kept as an
NNVM graph JSON (the layout MXNet's symbol JSON has: ``nodes``, ``arg_nodes``, ``heads``, with
NNVM operator names such as ``conv2d``, ``batch_norm``, ``max_pool2d``, ``flatten``, ``dense``)
and a parameter file written by ``nnvm.compiler.save_param_dict``.
``relay.frontend.from_nnvm`` converts such a graph to Relay, with the semantics ``nnvm.to_relay``
gave each operator. This page

1. writes a small NNVM graph (conv → batch norm → relu → max pool → flatten → dense → softmax)
   as JSON by hand — exactly what ``nnvm.graph.Graph.json()`` wrote — and its parameters with
   ``relay.save_param_dict`` (the same file format);
2. imports both files, prints the Relay program (each line names its NNVM node in a span
   comment) and compiles it;
3. checks the output against the same network written in NumPy.

Run: ``python tutorials/import_nnvm.py`` (``--small`` / ``RELAY_TVM_TUTORIAL_SMALL=1``: a smaller
image). What you should see: the Relay text, ``probabilities sum to 1.000000`` and
``max error vs NumPy`` below 1e-5.
"""

import json
import os
import sys
import tempfile

import numpy as np
import tvm

import relay_tvm as relay

SMALL = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
H = 8 if SMALL else 32  # input height and width
C, K, CLASSES = 3, 8, 10  # input channels, conv filters, output classes
_workdir = tempfile.TemporaryDirectory(prefix="relay_tvm_nnvm_")  # removed when the script ends
workdir = _workdir.name

# ---- 1. An NNVM graph and its parameters ---------------------------------------------------------
# Every node has an op ("null" for inputs and weights), a name, inputs as [node, output, version]
# and string-valued attributes. Weights are "null" nodes whose values come from the parameters.
nodes = []


def node(op, name, inputs=(), **attrs):
    nodes.append({"op": op, "name": name, "inputs": [[i, 0, 0] for i in inputs],
                  "attrs": {k: str(v) for k, v in attrs.items()}})
    return len(nodes) - 1


data = node("null", "data")
conv = node("conv2d", "conv1", [data, node("null", "conv1_weight"), node("null", "conv1_bias")],
            channels=K, kernel_size=(3, 3), padding=(1, 1), use_bias=True)
bn = node("batch_norm", "bn1", [conv] + [node("null", f"bn1_{p}") for p in
                                        ("gamma", "beta", "moving_mean", "moving_var")],
          epsilon=1e-5)
relu = node("relu", "relu1", [bn])
pool = node("max_pool2d", "pool1", [relu], pool_size=(2, 2), strides=(2, 2))
flat = node("flatten", "flatten1", [pool])
fc = node("dense", "fc1", [flat, node("null", "fc1_weight"), node("null", "fc1_bias")],
          units=CLASSES)
node("softmax", "prob", [fc])
graph = {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
         "node_row_ptr": list(range(len(nodes) + 1)), "heads": [[len(nodes) - 1, 0, 0]],
         "attrs": {}}
graph_path = os.path.join(workdir, "net.json")
with open(graph_path, "w") as f:
    json.dump(graph, f)

rng = np.random.default_rng(0)
F = K * (H // 2) * (H // 2)  # features after pooling and flattening
params = {
    "conv1_weight": rng.standard_normal((K, C, 3, 3)).astype("float32") * 0.3,
    "conv1_bias": rng.standard_normal(K).astype("float32"),
    "bn1_gamma": rng.uniform(0.5, 1.5, K).astype("float32"),
    "bn1_beta": rng.standard_normal(K).astype("float32"),
    "bn1_moving_mean": rng.standard_normal(K).astype("float32"),
    "bn1_moving_var": rng.uniform(0.5, 2.0, K).astype("float32"),
    "fc1_weight": rng.standard_normal((CLASSES, F)).astype("float32") * 0.1,
    "fc1_bias": rng.standard_normal(CLASSES).astype("float32"),
}
params_path = os.path.join(workdir, "net.params")
with open(params_path, "wb") as f:
    f.write(relay.save_param_dict(params))
print(f"wrote {graph_path} ({len(nodes)} nodes) and {params_path} (a temporary folder, "
      f"removed when this script ends)")

# ---- 2. Import and compile -----------------------------------------------------------------------
# ``from_nnvm`` takes the JSON (a path, the text, or an object with ``json()``) and the parameters
# (a path, the bytes or a dict); every operator without a converter would be listed at once in
# an UnsupportedOperatorError.
mod, bound = relay.frontend.from_nnvm(graph_path, params=params_path,
                                      shape={"data": (1, C, H, H)})
print(relay.astext(mod["main"], show_spans=True))  # /* span=NODE */: the NNVM node
with relay.transform.PassContext(opt_level=3):
    lib = relay.build(mod, target="llvm", params=bound)
gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
x = rng.standard_normal((1, C, H, H)).astype("float32")
gm.set_input("data", x)
gm.run()
prob = gm.get_output(0).numpy()

# ---- 3. The same network in NumPy ----------------------------------------------------------------
p = params
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
y = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + H, j:j + H], p["conv1_weight"][:, :, i, j])
        for i in range(3) for j in range(3)) + p["conv1_bias"][None, :, None, None]
per_channel = (lambda v: v[None, :, None, None])
y = ((y - per_channel(p["bn1_moving_mean"])) / np.sqrt(per_channel(p["bn1_moving_var"]) + 1e-5)
     * per_channel(p["bn1_gamma"]) + per_channel(p["bn1_beta"]))
y = np.maximum(y, 0).reshape(1, K, H // 2, 2, H // 2, 2).max(axis=(3, 5))  # 2x2 max pool
logits = y.reshape(1, -1) @ p["fc1_weight"].T + p["fc1_bias"]
ref = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()

print(f"probabilities sum to {prob.sum():.6f}; most likely class {int(prob.argmax())}")
print(f"max error vs NumPy: {np.abs(prob - ref).max():.2e}")
assert np.abs(prob - ref).max() < 1e-5

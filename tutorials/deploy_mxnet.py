"""Deploy an MXNet model: Gluon → files → Relay → one shared library → a fresh process.

This is the path most users take first. We

1. make a Gluon model (ResNet-18 v1 from the model zoo, random weights: nothing is downloaded)
   and export it to the two files MXNet writes, ``-symbol.json`` and ``-0000.params``;
2. import the files into Relay with ``relay.frontend.from_mxnet`` (MXNet is not needed for this
   step: the files are read with NumPy);
3. compile with ``relay.build`` at opt level 3 and write everything — kernels, the host program
   and the weights — into one shared library with ``export_library``;
4. load that library in a *new* Python process that imports only TVM and relay_tvm's runtime,
   run it, and compare the result with MXNet's.

Run: ``python tutorials/deploy_mxnet.py`` (ResNet-18, 224×224 input). With ``--small`` or
``RELAY_TVM_TUTORIAL_SMALL=1`` it is MobileNet 0.25 at 32×32, which compiles in seconds.

What you should see: the operators of the imported model, the files written, and a last line
``max |relay_tvm - MXNet| / max |MXNet| = ...`` with a value below 1e-4.
"""

import os
import subprocess
import sys
import tempfile

import mxnet as mx
import numpy as np

import relay_tvm as relay

SMALL = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
MODEL, SIZE = ("mobilenet0.25", 32) if SMALL else ("resnet18_v1", 224)
SHAPE = (1, 3, SIZE, SIZE)  # NCHW, float32
_workdir = tempfile.TemporaryDirectory(prefix="relay_tvm_deploy_")  # removed when the script ends
workdir = _workdir.name

# ---- 1. A Gluon model, exported to files ------------------------------------------------------
# ``hybridize()`` makes the block record a symbolic graph on its first call; ``export`` then writes
# that graph (JSON) and the weights. This is the form in which MXNet models are usually shipped.
net = mx.gluon.model_zoo.vision.get_model(MODEL, pretrained=False)
net.initialize(mx.init.Xavier(magnitude=2.0))
net.hybridize()
x = np.random.default_rng(0).uniform(-1, 1, SHAPE).astype("float32")
mx_out = net(mx.nd.array(x)).asnumpy()  # MXNet's answer, the reference for the end
prefix = os.path.join(workdir, MODEL)
net.export(prefix)  # writes PREFIX-symbol.json and PREFIX-0000.params
print(f"exported {prefix}-symbol.json and {prefix}-0000.params")

# ---- 2. Import into Relay ---------------------------------------------------------------------
# ``from_mxnet`` takes the symbol file and the parameter file (or an ``mx.sym.Symbol``, or the
# Gluon block itself). It returns a typed IRModule whose ``main`` takes the input ``data`` and then
# every weight, plus the weights as a dict; ``build`` binds them as constants.
mod, params = relay.frontend.from_mxnet(f"{prefix}-symbol.json", shape={"data": SHAPE},
                                        arg_params=f"{prefix}-0000.params")
ops = relay.analysis.list_op_freqs(mod)
print(f"imported: {sum(ops.values())} operator calls, {len(params)} weight arrays")
print("  " + ", ".join(f"{name} x{n}" for name, n in sorted(ops.items())))

# ---- 3. Compile and export --------------------------------------------------------------------
# Opt level 3 runs the full pipeline: batch-norm folded into the convolutions, layouts chosen
# for the CPU's vector width, operators fused into kernels. ``"llvm"`` means this machine's CPU.
with relay.transform.PassContext(opt_level=3):
    lib = relay.build(mod, target="llvm", params=params)
so_path = os.path.join(workdir, f"{MODEL}.so")
lib.export_library(so_path)
np.save(os.path.join(workdir, "input.npy"), x)
print(f"compiled {lib.stats['num_kernels']} kernels; wrote {so_path} "
      f"({os.path.getsize(so_path) / 2**20:.1f} MiB, weights included)")

# ---- 4. Run it in a fresh process -------------------------------------------------------------
# This is all a deployment needs: the library, TVM's runtime and relay_tvm's GraphModule — no
# MXNet, no model files, no compiler. ``load_module(path)["default"](device)`` gives a
# GraphModule; inputs are set by name, outputs read by index.
DEPLOY = """
import sys
import numpy as np
import tvm
from relay_tvm.runtime import load_module

so_path, in_path, out_path = sys.argv[1:]
gm = load_module(so_path)["default"](tvm.cpu(0))
gm.set_input("data", np.load(in_path))
gm.run()
np.save(out_path, gm.get_output(0).numpy())
print(f"fresh process: ran {so_path}, output shape {gm.get_output(0).shape}")
"""
out_path = os.path.join(workdir, "output.npy")
subprocess.run([sys.executable, "-c", DEPLOY, so_path, os.path.join(workdir, "input.npy"),
                out_path], check=True)
out = np.load(out_path)

# ---- 5. Compare with MXNet --------------------------------------------------------------------
# Floating-point sums in another order differ in the last bits; relative to the output's scale
# the two agree to about 1e-6.
err = float(np.abs(out - mx_out).max() / np.abs(mx_out).max())
print(f"output {out.shape}: top class {int(out.argmax())} (MXNet: {int(mx_out.argmax())})")
print(f"max |relay_tvm - MXNet| / max |MXNet| = {err:.2e}")
assert err < 1e-4, "relay_tvm and MXNet disagree"

"""Cross-compile a model for a 64-bit ARM board (AArch64) on an x86 machine.

Compiling on the board itself is slow (a Raspberry Pi takes minutes where a workstation takes
seconds), so models are compiled on a workstation for the board's CPU and only the library is
copied over. This page

1. chooses a target: LLVM with the triple ``aarch64-linux-gnu`` (relay_tvm turns on NEON, which
   every AArch64 CPU has) and ``-mcpu=cortex-a72``, the CPU of a Raspberry Pi 4;
2. compiles MobileNet for it and looks at the generated assembly: the convolutions use NEON's
   vector fused multiply-add ``fmla v..4s`` (four float32 lanes);
3. links the library with the cross compiler ``aarch64-linux-gnu-g++`` when it is installed
   (Debian/Ubuntu: ``apt-get install g++-aarch64-linux-gnu``) and checks that the file is an
   AArch64 ELF shared object; without it, says what to install;
4. runs the library under qemu-user when ``tools/setup_aarch64_qemu.sh`` has made its arm64
   Python (``relay_tvm.testing.aarch64.run_exported``) and compares the outputs with the same
   network built for this machine; otherwise says what is missing.

The network is MobileNet without its final softmax: with ``relay.testing``'s random weights the
softmax gives every class 0.001, which any build would match; the logits show a real error.

On the board the library needs TVM's runtime only (``pip install apache-tvm numpy``, see the
README): copy it with ``relay_tvm/runtime/deploy.py`` (one self-contained file) and run
``python deploy.py net.so inputs.npz outputs.npz``; with relay_tvm installed there too, the same
four lines as in ``deploy_mxnet.py`` work (``load_module(path)["default"](tvm.cpu(0))``,
``set_input``, ``run``, ``get_output``); or drive the board from the workstation over TVM's RPC
(``python -m tvm.exec.rpc_server`` on the board, ``relay_tvm.testing.aarch64.run_over_rpc``
here), which is how ``relay-tvm tune`` measures remote devices.

Run: ``python tutorials/cross_compile_aarch64.py`` (MobileNet at 224×224; ``--small`` /
``RELAY_TVM_TUTORIAL_SMALL=1``: 32×32). What you should see: the target, the number of NEON
``fmla`` instructions, ``ELF machine: AArch64`` or how to get the cross compiler, and ``AArch64
(qemu) vs this machine: max error ...`` (about 1e-6 relative) or what the qemu run needs.
"""

import os
import re
import shutil
import sys
import tempfile

import numpy as np
import tvm

import relay_tvm as relay
from relay_tvm.backend.target import make_target
from relay_tvm.testing import aarch64

SMALL = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
SIZE = 32 if SMALL else 224

# ---- 1. The target ---------------------------------------------------------------------------
# The plain string users type is translated into TVM's target (its JSON form is printed).
# ``-mtriple`` says which machine code to emit; ``-mcpu`` tunes instruction choice and the
# schedules' tile sizes (vector registers, cache sizes) for that core.
TARGET = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
print(f"target {TARGET!r} ->\n  {make_target(TARGET)}")

# ---- 2. Compile and look at the code ---------------------------------------------------------
# ``relay.testing`` builds the standard networks with random weights, as tvm.relay.testing did.
mod, params = relay.testing.mobilenet.get_workload(batch_size=1, image_shape=(3, SIZE, SIZE))
main = mod["main"]  # its body is softmax(logits): keep the logits (see the top of the page)
mod = relay.IRModule.from_expr(relay.Function(main.params, main.body.args[0]))
with relay.transform.PassContext(opt_level=3):
    lib = relay.build(mod, target=TARGET, params=params)
asm = lib.get_source("asm")  # the kernels' AArch64 assembly, as text
fmla = re.findall(r"^\s*fmla\s+v\d+\.4s.*$", asm, flags=re.M)
print(f"compiled {len(lib.kernels)} kernels: {len(asm.splitlines())} lines of AArch64 assembly, "
      f"{len(fmla)} NEON fmla instructions, e.g.\n  {fmla[0].strip()}")

# ---- 3. Link the shared library --------------------------------------------------------------
# ``export_library`` links with ``<triple>-g++`` on its own when the target is not this machine's;
# pass ``cc=...`` to use another compiler (a vendor toolchain, say).
path = os.path.join(tempfile.mkdtemp(prefix="relay_tvm_arm_"), "mobilenet_aarch64.so")
if shutil.which("aarch64-linux-gnu-g++") is None:
    print("aarch64-linux-gnu-g++ is not installed, so the library cannot be linked here: "
          "apt-get install g++-aarch64-linux-gnu (or pass export_library(path, cc=COMPILER)); "
          "the kernels above are compiled already")
else:
    lib.export_library(path)
    with open(path, "rb") as f:
        head = f.read(20)
    # An ELF file starts with \x7fELF; the 16-bit field at byte 18 is the machine (183 = AArch64).
    machine = int.from_bytes(head[18:20], "little")
    assert head[:4] == b"\x7fELF" and machine == 183, (head, machine)
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB; the folder is yours to "
          f"delete)")
    print("ELF machine: AArch64 (183); copy it and relay_tvm/runtime/deploy.py to the board "
          "and run: python deploy.py " + os.path.basename(path) + " inputs.npz outputs.npz")

# ---- 4. Run it under qemu-user and check the values -----------------------------------------
# qemu-aarch64 runs an arm64 Python (with TVM's runtime) on this machine; run_exported calls
# deploy.py there with the inputs in an .npz file, as on a board. The command-line equivalent:
# `relay-tvm run mobilenet_aarch64.so --qemu -i data=x.npy` (outputs written as .npy).
x = np.random.default_rng(0).standard_normal((1, 3, SIZE, SIZE)).astype("float32")
reason = aarch64.unavailable_reason()
if reason:
    print(f"not run under qemu: {reason}")
else:
    (arm,) = aarch64.run_exported(path, {"data": x})
    with relay.transform.PassContext(opt_level=3):
        host = relay.build(mod, target="llvm", params=params)
    gm = relay.runtime.GraphModule(host["default"](tvm.cpu(0)))
    gm.set_input("data", x)
    gm.run()
    ref = gm.get_output(0).numpy()
    err = float(np.abs(arm - ref).max() / np.abs(ref).max())
    print(f"AArch64 (qemu) vs this machine: max error {err:.1e} (relative to max |logit|), "
          f"output shape {arm.shape}")
    assert arm.shape == ref.shape and err < 1e-4, err

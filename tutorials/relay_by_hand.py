"""Write a Relay program by hand and optimise it: text format, parsing, passes, fusion.

Relay programs are usually produced by an importer, but the IR is a language of its own with a
text format (version 0.0.5). This page

1. writes a small convolutional block in the text format and parses it;
2. runs optimisation passes one at a time and prints what each changed: ``FoldConstant``
   evaluates what does not depend on inputs, ``EliminateCommonSubexpr`` merges repeated work,
   ``FuseOps`` groups operators into *primitive functions*, each of which becomes one kernel;
3. draws the fused program with ``relay.visualize`` (an SVG when Graphviz is installed);
4. compiles it and checks the result against the reference interpreter and NumPy.

Run: ``python tutorials/relay_by_hand.py`` (``--small`` / ``RELAY_TVM_TUTORIAL_SMALL=1``: a
smaller image). What you should see: the program after each pass, a list ``kernel: operators``
of the fused groups, and ``max error vs NumPy`` below 1e-4.
"""

import os
import sys
import tempfile

import numpy as np
import tvm

import relay_tvm as relay
from relay_tvm.ir.functor import post_order
from relay_tvm.transform.fuse_ops import fused_function_name

SMALL = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
H = 8 if SMALL else 32

# ---- 1. The text format ----------------------------------------------------------------------
# ``%name`` are local variables, ``@main`` a global function; ``%0 = ...;`` names an intermediate
# result. Types are written ``Tensor[(shape), dtype]``; ``2f`` is a float32 scalar constant.
# The program has two things to optimise on purpose: ``add(1f, 1f)`` is a constant expression,
# and ``nn.relu(%1)`` is computed twice.
TEXT = f"""
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, {H}, {H}), float32], %w: Tensor[(4, 4, 3, 3), float32],
          %b: Tensor[(4), float32]) {{
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.relu(%1);
  %4 = add(1f, 1f);
  %5 = multiply(%2, %4);
  %6 = add(%5, %3);
  add(%6, %x)
}}
"""
mod = relay.parse(TEXT)  # a typed IRModule; a syntax or type error names the line and column
print("parsed:")
print(mod)
# Printing then parsing gives the same program (compared up to renaming of variables):
assert relay.analysis.structural_equal(relay.parse(mod.astext()), mod)


def show(title, m):
    print(f"---- after {title} ----")
    print(m["main"])


# ---- 2. Passes --------------------------------------------------------------------------------
# A pass is an object called on a module; it returns a new module (programs are immutable).
# Passes run inside a PassContext whose opt level decides which of them a ``Sequential`` runs.
with relay.transform.PassContext(opt_level=3):
    folded = relay.transform.FoldConstant()(mod)
    show("FoldConstant: add(1f, 1f) is now 2f", folded)
    merged = relay.transform.EliminateCommonSubexpr()(folded)
    show("EliminateCommonSubexpr: one nn.relu", merged)
    fused = relay.transform.FuseOps(fuse_opt_level=2)(merged)
    show("FuseOps", fused)

# What FuseOps did: ``main`` now calls primitive functions (``Primitive=1``), one per kernel. The
# convolution absorbed everything elementwise after it, so the whole block is one kernel.
# ``post_order`` lists every sub-expression once, operands before their users;
# ``fused_function_name`` gives the kernel's name (the one relay.build compiles it under,
# after the ``tvmgen_default_`` prefix).
groups = [e for e in post_order(fused["main"]) if isinstance(e, relay.Function) and e.is_primitive]
for g in groups:
    ops = [e.op.name for e in post_order(g.body)
           if isinstance(e, relay.Call) and isinstance(e.op, relay.op.Op)]
    print(f"kernel {fused_function_name(g.body)}: {', '.join(ops)}")
print(f"fused groups: {len(groups)}")

# ---- 3. A picture -----------------------------------------------------------------------------
# ``visualize`` returns Graphviz DOT text and, given a path, renders it (or writes the .dot text
# with a warning when Graphviz's ``dot`` program is missing). Fused groups are boxed.
svg = os.path.join(tempfile.mkdtemp(prefix="relay_tvm_by_hand_"), "block.svg")
dot = relay.visualize(merged, svg)
print(f"picture: {svg if os.path.exists(svg) else svg[:-4] + '.dot'} "
      f"({dot.count('subgraph cluster_')} boxed group; the folder is yours to delete)")

# ---- 4. Compile and check ---------------------------------------------------------------------
rng = np.random.default_rng(0)
x = rng.standard_normal((1, 4, H, H)).astype("float32")
w = rng.standard_normal((4, 4, 3, 3)).astype("float32")
b = rng.standard_normal(4).astype("float32")

with relay.transform.PassContext(opt_level=3):
    lib = relay.build(mod, target="llvm")  # build runs the passes above (and more) itself
gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
gm.set_input(x=x, w=w, b=b)
gm.run()
out = gm.get_output(0).numpy()

# The reference interpreter evaluates the unoptimised program with NumPy kernels.
interp = relay.create_executor("debug", mod=mod).evaluate()(x, w, b).numpy()

# And NumPy by hand: a 3x3 convolution with padding 1 is a sum of 9 shifted matrix products.
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + H, j:j + H], w[:, :, i, j])
           for i in range(3) for j in range(3))
r = np.maximum(conv + b[None, :, None, None], 0)
ref = r * 2 + r + x
print(f"max error vs the interpreter: {np.abs(out - interp).max():.2e}")
print(f"max error vs NumPy: {np.abs(out - ref).max():.2e}")
assert np.abs(out - ref).max() < 1e-4

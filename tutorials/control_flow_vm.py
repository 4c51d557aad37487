"""Control flow, closures and data types: programs for the Relay virtual machine.

Relay is a full functional language (the Relay paper, section 3): besides dataflow graphs it has
functions that capture variables (closures), recursion, ``if``, algebraic data types with
``match``, and references. The graph executor that ``relay.build`` targets runs only dataflow
programs; the *virtual machine* (``relay.vm.compile`` + ``VirtualMachine``) runs everything.
This page

1. uses the Prelude's ``List``: builds a list of tensors, ``map`` s a closure over it and
   ``foldl`` s it to a sum;
2. writes a ``while`` loop (Newton's iteration for a square root) with ``relay.loops.while_loop``,
   which is recursion underneath;
3. shows the error the graph executor gives for such a program;
4. checks the list result against NumPy and the reference interpreter, the loop's against NumPy.

Run: ``python tutorials/control_flow_vm.py`` (``--small`` / ``RELAY_TVM_TUTORIAL_SMALL=1``:
shorter vectors). What you should see: the program text with closures (``fn``) and list
constructors, the Prelude's ``@map`` (a recursive ``match``), the list results,
Newton's error falling with the iteration count, and ``max error vs NumPy`` below 1e-5.
"""

import os
import sys

import numpy as np
import tvm

import relay_tvm as relay
from relay_tvm.loops import while_loop

SMALL = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
N = 8 if SMALL else 1024
rng = np.random.default_rng(0)

# ---- 1. Lists, closures, map and foldl ----------------------------------------------------
# ``Prelude(mod)`` adds the standard types (List, Option, Tree, nat) and functions (map, foldl,
# length, ...) to the module. ``p.cons`` / ``p.nil`` are List's constructors; ``p.map`` is a
# GlobalVar, called like a function.
mod = relay.IRModule()
p = relay.Prelude(mod)
x = relay.var("x", shape=(N,))
s = relay.var("s", shape=())  # a scalar
v = relay.var("v", shape=(N,))
scale = relay.Function([v], v * s)  # a closure: its body uses %s from the enclosing function
xs = p.cons(x, p.cons(relay.exp(x), p.cons(relay.negative(x), p.nil())))  # [x, exp x, -x]
scaled = p.map(scale, xs)
acc, y = relay.var("acc", shape=(N,)), relay.var("y", shape=(N,))
total = p.foldl(relay.Function([acc, y], acc + y), relay.zeros((N,), "float32"), scaled)
mod["main"] = relay.Function([x, s], relay.Tuple([total, p.length(scaled)]))
print(mod["main"])  # note the `fn` of the closure; map and foldl are @map and @foldl
print(mod["map"])  # a polymorphic, recursive function: match on the list, Cons or Nil

# ``relay.vm.compile`` type-checks, optimises and compiles every function reachable from main
# (here @map, @foldl, @length and the closures) into VM bytecode plus kernels.
exe = relay.vm.compile(mod, target="llvm")
vm = relay.vm.VirtualMachine(exe, tvm.cpu(0))
xv = rng.uniform(-1, 1, N).astype("float32")
sv = np.float32(3.0)
got_total, got_len = vm.invoke("main", xv, sv)
ref_total = (xv + np.exp(xv) - xv) * sv
err1 = float(np.abs(got_total.numpy() - ref_total).max())
print(f"list: length {int(got_len.numpy())}, sum of scaled items max error vs NumPy {err1:.2e}")

# The reference interpreter runs the same program without compiling anything.
interp = relay.create_executor("debug", mod=mod).evaluate()(xv, sv)
assert np.allclose(interp[0].numpy(), got_total.numpy(), rtol=1e-5, atol=1e-6)

# ---- 2. A while loop: Newton's iteration y <- (y + a / y) / 2 converges to sqrt(a) -------------
# ``while_loop(cond, state, body)`` returns a recursive function of the state; here the state is
# (iteration counter, current guess) and the loop runs while i < k. ``k`` is an *input*: the
# number of iterations is known only at run time, which is what a dataflow graph cannot express.
a = relay.var("a", shape=(N,))
k = relay.var("k", shape=(), dtype="int32")
one = relay.const(1, "int32")
loop = while_loop(lambda i, g: relay.less(i, k),
                  [relay.var("i", shape=(), dtype="int32"), relay.var("g", shape=(N,))],
                  lambda i, g: [i + one, relay.const(0.5) * (g + a / g)])
newton = relay.TupleGetItem(loop(relay.const(0, "int32"), relay.ones_like(a)), 1)
mod2 = relay.IRModule.from_expr(relay.Function([a, k], newton))
vm2 = relay.vm.VirtualMachine(relay.vm.compile(mod2, target="llvm"), tvm.cpu(0))
av = rng.uniform(0.5, 4.0, N).astype("float32")
for iters in (1, 2, 3, 6):
    guess = vm2.invoke("main", av, np.int32(iters)).numpy()
    print(f"newton, {iters} iterations: max |y - sqrt(a)| = "
          f"{np.abs(guess - np.sqrt(av)).max():.2e}")
err2 = float(np.abs(guess - np.sqrt(av)).max())

# ---- 3. The graph executor cannot run this ------------------------------------------------------
# ``relay.build`` compiles dataflow programs only, and says so.
try:
    relay.build(mod2, target="llvm")
except relay.BuildError as e:
    print(f"relay.build on the loop: BuildError: {str(e).splitlines()[0]}")

print(f"max error vs NumPy: {max(err1, err2):.2e}")
assert max(err1, err2) < 1e-5

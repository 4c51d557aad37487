"""Differential test with dynamic shapes: random programs over a ``Tensor[(?, 3), float32]``
(besides the scalar, vector, list and function values of ``test_vm_random``) are compiled ONCE
for the VM and run at two batch sizes; each result equals the reference interpreter's."""

import numpy as np
import pytest
import tvm
from test_vm_random import TF, TI, _Gen, _same

import relay_tvm as relay
from relay_tvm.prelude import Prelude

TD = relay.TensorType((relay.Any(), 3), "float32")


class _DynGen(_Gen):
    """Adds kind "d": a float32 tensor of shape (?, 3) (batch known only at run time)."""

    def __init__(self, rng, p):
        super().__init__(rng, p)
        self.types["d"] = TD

    def gen(self, kind, depth, env):
        r = self.rng
        if kind == "f" and depth > 0 and r.integers(5) == 0:
            # a reduction over the dynamic axis: a symbolic (not batch-wise) kernel
            return relay.sum(self.gen("d", depth - 1, env), axis=0)
        if kind != "d":
            return super().gen(kind, depth, env)
        c = r.integers(8) if depth > 0 else 0
        d = depth - 1
        if c == 0:
            return self.pick(env, "d")
        if c == 1:  # let of any kind
            k = ["i", "f", "l", "d"][r.integers(4)]
            v = self.var("v", self.types[k])
            return relay.Let(v, self.gen(k, d, env), self.gen("d", d, env + [(v, k)]))
        if c == 2:  # if: both branches (?, 3), maybe of different batch sizes at run time
            return relay.If(relay.less(self.gen("i", d, env), relay.const(0, "int32")),
                            self.gen("d", d, env), self.gen("d", d, env))
        c += 2
        a = self.gen("d", d, env)
        return [lambda: relay.add(a, self.gen("d", d, env)),
                lambda: relay.multiply(a, self.gen("f", d, env)),
                lambda: relay.nn.relu(relay.negative(a)),
                lambda: relay.reshape(relay.reshape(a, (-1,)), (-1, 3)),
                lambda: relay.reshape(a, relay.shape_of(a))][c - 5]()


def _module(seed, count, depth=4):
    mod = relay.IRModule()
    p = Prelude(mod)
    g = _DynGen(np.random.default_rng(seed), p)
    x, v, w = relay.var("x", TI), relay.var("v", TF), relay.var("w", TD)
    calls = []
    for k in range(count):
        a, b, c = relay.var(f"a{k}", TI), relay.var(f"b{k}", TF), relay.var(f"c{k}", TD)
        env = [(a, "i"), (b, "f"), (c, "d")]
        body = relay.Tuple([g.gen(kind, depth, env) for kind in ("i", "f", "l", "d")])
        gv = relay.GlobalVar(f"prog{k}")
        mod[gv] = relay.Function([a, b, c], body)
        calls.append(relay.Call(gv, [x, v, w]))
    mod["main"] = relay.Function([x, v, w], relay.Tuple(calls))
    return mod


def _run(seed, count, batches=(4, 1)):
    mod = _module(seed, count)
    exe = relay.vm.compile(mod, target="llvm")
    vm = relay.vm.VirtualMachine(exe, tvm.cpu())
    rng = np.random.default_rng(seed)
    for n in batches:
        args = (np.array(3, "int32"), np.array([0.5, -1.5, 2.0], "float32"),
                rng.standard_normal((n, 3)).astype("float32"))
        ref = relay.create_executor("debug", mod).evaluate()(*args)
        got = vm.run(*args)
        for k in range(count):
            _same(ref[k], got[k], f"seed {seed} batch {n} @prog{k}")


@pytest.mark.parametrize("seed", [0])
def test_random_dynamic_programs_vm_equals_interpreter(seed):
    _run(seed, 40)


@pytest.mark.sweep
@pytest.mark.parametrize("seed", range(100, 120))
def test_random_dynamic_programs_sweep(seed):
    _run(seed, 50)

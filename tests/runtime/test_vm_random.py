"""Differential test: random programs with control flow, closures, ADTs and references run on
the VM and on the reference interpreter give the same values (a fixed seed here; a larger
sweep with ``-m sweep``). Dynamic shapes have their own generator: test_vm_random_dynamic.py."""

import numpy as np
import pytest

import relay_tvm as relay
from relay_tvm.prelude import Prelude
from relay_tvm.runtime.interpreter import ConstructorValue

I32 = "int32"
TI = relay.TensorType((), I32)
TF = relay.TensorType((3,), "float32")


class _Gen:
    """Random well-typed expressions of type int32 scalar ("i"), float32[3] ("f"),
    List[int32] ("l") and int32 -> int32 functions ("fn")."""

    def __init__(self, rng, p):
        self.rng, self.p, self.n = rng, p, 0
        li = relay.TypeCall(p.list, [TI])
        self.types = {"i": TI, "f": TF, "l": li, "fn": relay.FuncType([TI], TI)}

    def var(self, name, ty=None):
        self.n += 1
        return relay.var(f"{name}{self.n}", ty)

    def pick(self, env, kind):
        vs = [v for v, k in env if k == kind]
        return vs[self.rng.integers(len(vs))] if vs else None

    def gen(self, kind, depth, env):
        r, p = self.rng, self.p
        c = r.integers(10) if depth > 0 else 0
        if kind == "fn":
            x = self.var("x", TI)
            if c < 6:
                return relay.Function([x], self.gen("i", depth - 1, env + [(x, "i")]))
            f = self.pick(env, "fn")
            g = self.gen("fn", depth - 1, env)
            return p.compose(f, g) if f is not None else g
        if c == 0:
            v = self.pick(env, kind)
            if v is not None:
                return v
            return {"i": lambda: relay.const(int(r.integers(-5, 6)), I32),
                    "f": lambda: relay.const(r.standard_normal(3).astype("float32")),
                    "l": self._nil}[kind]()
        if c == 1:  # let
            k = ["i", "f", "l", "fn"][r.integers(4)]
            v = self.var("v", self.types[k])
            return relay.Let(v, self.gen(k, depth - 1, env), self.gen(kind, depth - 1,
                                                                       env + [(v, k)]))
        if c == 2:  # if
            return relay.If(relay.less(self.gen("i", depth - 1, env), relay.const(0, I32)),
                            self.gen(kind, depth - 1, env), self.gen(kind, depth - 1, env))
        if c == 3:  # match on a list
            h, t = self.var("h", TI), self.var("t", self.types["l"])
            pc, pv = relay.PatternConstructor, relay.PatternVar
            return relay.Match(self.gen("l", depth - 1, env), [
                relay.Clause(pc(p.cons, [pv(h), pv(t)]),
                             self.gen(kind, depth - 1, env + [(h, "i"), (t, "l")])),
                relay.Clause(pc(p.nil, []), self.gen(kind, depth - 1, env))])
        if c == 4:  # a reference: let r = ref(a); r := f(!r); !r
            ref, u = self.var("r", relay.RefType(self.types[kind])), self.var("u")
            bump = self.gen("fn", depth - 1, env) if kind == "i" else None
            a = self.gen(kind, depth - 1, env)
            new = (relay.Call(bump, [relay.RefRead(ref)]) if bump is not None
                   else self.gen(kind, depth - 1, env))
            return relay.Let(ref, relay.RefCreate(a), relay.Let(
                u, relay.RefWrite(ref, new), relay.RefRead(ref)))
        d = depth - 1
        if kind == "i":
            a = self.gen("i", d, env)
            return [lambda: relay.add(a, self.gen("i", d, env)),
                    lambda: relay.multiply(a, relay.const(int(r.integers(-3, 4)), I32)),
                    lambda: p.length(self.gen("l", d, env)),
                    lambda: p.sum(self.gen("l", d, env)),
                    lambda: relay.Call(self.gen("fn", d, env), [a])][c - 5]()
        if kind == "f":
            a = self.gen("f", d, env)
            return [lambda: relay.add(a, self.gen("f", d, env)),
                    lambda: relay.multiply(a, relay.const(0.5)),
                    lambda: relay.nn.relu(relay.negative(a)),
                    lambda: relay.multiply(a, relay.cast(self.gen("i", d, env), "float32")),
                    lambda: relay.tanh(a)][c - 5]()
        # lists
        return [lambda: p.cons(self.gen("i", d, env), self.gen("l", d, env)),
                lambda: p.map(self.gen("fn", d, env), self.gen("l", d, env)),
                lambda: p.rev(self.gen("l", d, env)),
                lambda: p.concat(self.gen("l", d, env), self.gen("l", d, env)),
                lambda: p.filter(self._positive(), self.gen("l", d, env))][c - 5]()

    def _nil(self):
        n = self.var("nil", self.types["l"])  # annotated: Nil alone is List[_]
        return relay.Let(n, self.p.nil(), n)

    def _positive(self):
        x = self.var("x", TI)
        return relay.Function([x], relay.greater(x, relay.const(0, I32)))


def _module(seed, count, depth=4):
    mod = relay.IRModule()
    p = Prelude(mod)
    g = _Gen(np.random.default_rng(seed), p)
    x, v = relay.var("x", TI), relay.var("v", TF)
    calls = []
    for k in range(count):
        a, b = relay.var(f"a{k}", TI), relay.var(f"b{k}", TF)
        env = [(a, "i"), (b, "f")]
        body = relay.Tuple([g.gen(kind, depth, env) for kind in ("i", "f", "l")])
        gv = relay.GlobalVar(f"prog{k}")
        mod[gv] = relay.Function([a, b], body)
        calls.append(relay.Call(gv, [x, v]))
    mod["main"] = relay.Function([x, v], relay.Tuple(calls))
    return mod


def _same(ref, got, where):
    if isinstance(ref, ConstructorValue):
        assert isinstance(got, ConstructorValue), where
        assert got.constructor.name_hint == ref.constructor.name_hint, where
        for r, g in zip(ref.fields, got.fields, strict=True):
            _same(r, g, where)
    elif isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref), where
        for i, (r, g) in enumerate(zip(ref, got)):
            _same(r, g, f"{where}[{i}]")
    else:
        r = ref.numpy() if hasattr(ref, "numpy") else np.asarray(ref)
        g = got.numpy()
        assert g.dtype == r.dtype and g.shape == r.shape, where
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5, err_msg=where)


def _run(seed, count):
    mod = _module(seed, count)
    args = (np.array(3, I32), np.array([0.5, -1.5, 2.0], "float32"))
    ref = relay.create_executor("debug", mod).evaluate()(*args)
    got = relay.create_executor("vm", mod).evaluate()(*args)
    for k in range(count):
        _same(ref[k], got[k], f"seed {seed} @prog{k}")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_random_programs_vm_equals_interpreter(seed):
    _run(seed, 100)  # 5 x 100 = 500 programs


@pytest.mark.sweep
@pytest.mark.parametrize("seed", range(100, 140))
def test_random_programs_sweep(seed):
    _run(seed, 100)

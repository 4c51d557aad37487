"""Random well-typed Relay programs for differential testing (issue 17).

``generate(draw)`` builds a program over ``SHAPE`` tensors of one dtype (float32, float16,
int32) from a table of operators (elementwise, broadcast with constants, reductions kept in
shape, arg reductions, pooling, softmax, casts through bool/int32/float32, where, clip), with
shared subexpressions, lets, tuples and sometimes an ``if`` (then run on the VM only); ``draw`` is any ``draw(kind, *args)`` source (:class:`NumpyDraw` here, a hypothesis
adapter in ``tests/fuzz``). ``inputs(draw, case)`` gives data mixing small exact values with NaN, inf,
-inf and zeros. ``run_case(mod, data)`` checks every compiled path against the interpreter
(``relay_tvm.testing.differential``) and raises ``AssertionError`` with the program's text.
"""

from __future__ import annotations

import numpy as np

SHAPE = (2, 3, 4, 4)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0]
SMALL = [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0]


class NumpyDraw:
    """A ``draw`` source from a seeded NumPy generator (for long sweeps without hypothesis)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def __call__(self, kind, *args):
        if kind == "int":  # inclusive bounds
            return int(self.rng.integers(args[0], args[1] + 1))
        if kind == "choice":
            return args[0][int(self.rng.integers(0, len(args[0])))]
        if kind == "bool":
            return bool(self.rng.integers(0, 2))
        raise ValueError(kind)


def _unary(draw, relay, a, dt):
    if dt == "int32":
        name = draw("choice", ["negative", "abs", "relu", "copy"])
    else:
        name = draw("choice", ["exp", "negative", "abs", "relu", "tanh", "sigmoid", "log", "sqrt",
                               "floor", "round", "isnan_f", "isinf_f", "copy"])
    if name == "relu":
        return relay.nn.relu(a)
    if name in ("isnan_f", "isinf_f"):
        return relay.cast(getattr(relay, name[:5])(a), dt)
    return getattr(relay, name)(a)


def _binary(draw, relay, a, b, dt):
    names = ["add", "subtract", "multiply", "maximum", "minimum", "not_equal_f", "equal_f"]
    if dt != "int32":  # integer division by zero traps in compiled code (numpy gives 0)
        names += ["divide", "power", "floor_mod", "mod"]
    name = draw("choice", names)
    if name.endswith("_f"):
        return relay.cast(getattr(relay, name[:-2])(a, b), dt)
    return getattr(relay, name)(a, b)


def _reduce(draw, relay, a, dt):
    names = ["max", "min", "sum", "argmax", "argmin"]
    if dt != "int32":
        names += ["mean", "prod", "logsumexp"]
    name = draw("choice", names)
    axis = draw("choice", [1, 2, 3, (2, 3), (1, 3)])
    if name in ("argmax", "argmin"):
        ax = axis if isinstance(axis, int) else axis[0]
        r = getattr(relay, name)(a, axis=ax, keepdims=True, select_last_index=draw("bool"))
        r = relay.cast(r, dt)
    else:
        r = getattr(relay, name)(a, axis=axis, keepdims=True)
    return relay.add(a, r) if draw("bool") else relay.multiply(r, a)


def _pool(draw, relay, a):
    kind = draw("choice", ["max", "avg", "global_max", "adaptive_max"])
    if kind == "global_max":
        return relay.add(a, relay.nn.global_max_pool2d(a))
    if kind == "adaptive_max":
        return relay.nn.upsampling(relay.nn.adaptive_max_pool2d(a, output_size=(2, 2)), 2, 2)
    k = draw("choice", [1, 2, 3])
    d = draw("choice", [1, 2]) if k > 1 else 1
    pad = ((k - 1) * d) // 2
    extra = (k - 1) * d - 2 * pad
    fn = relay.nn.max_pool2d if kind == "max" else relay.nn.avg_pool2d
    kw = {} if kind == "max" else {"count_include_pad": draw("bool")}
    return fn(a, pool_size=(k, k), dilation=(d, d), padding=(pad, pad, pad + extra, pad + extra),
              **kw)


class Case:
    """A generated program: ``mod``, its input dtype and count, the compiled paths it runs on
    (programs with ``if`` run on the VM only)."""

    def __init__(self, mod, dtype, n_in, paths):
        self.mod, self.dtype, self.n_in, self.paths = mod, dtype, n_in, paths


def generate(draw) -> Case:
    """A random typed module whose ``main`` takes 1 or 2 ``SHAPE`` tensors of one dtype
    (float32, float16 or int32) and returns a tensor or a tuple; sometimes an ``if``."""
    import relay_tvm as relay

    dt = draw("choice", ["float32", "float32", "float16", "int32"])
    n_in = draw("int", 1, 2)
    params = [relay.var(f"x{i}", shape=SHAPE, dtype=dt) for i in range(n_in)]
    nodes = list(params)
    lets = []
    pick = lambda: nodes[draw("int", 0, len(nodes) - 1)]  # noqa: E731
    kinds = ["unary", "binary", "binary", "const", "reduce", "pool", "clip", "where", "cast",
             "let", "share"] + (["softmax"] if dt != "int32" else [])
    for _ in range(draw("int", 1, 7)):
        kind = draw("choice", kinds)
        a = pick()
        if kind == "unary":
            y = _unary(draw, relay, a, dt)
        elif kind == "binary":
            y = _binary(draw, relay, a, pick(), dt)
        elif kind == "const":
            c = draw("choice", SMALL + (SPECIAL if dt != "int32" else [0.0]))
            shape = draw("choice", [(), (3, 1, 1), (4,)])
            y = _binary(draw, relay, a, relay.const(np.full(shape, c).astype(dt)), dt)
        elif kind == "reduce":
            y = _reduce(draw, relay, a, dt)
        elif kind == "pool":
            y = _pool(draw, relay, a)
        elif kind == "clip":
            y = relay.clip(a, draw("choice", [-1.0, 0.0]), draw("choice", [0.5, 2.0]))
        elif kind == "where":
            y = relay.where(relay.greater(a, pick()), pick(), a)
        elif kind == "softmax":
            y = relay.nn.softmax(a, axis=draw("choice", [1, 3]))
        elif kind == "cast":
            to = draw("choice", ["bool", "int32", "float32"])
            src = a
            if to == "int32" and dt != "int32":
                # a float -> int cast of NaN, +-inf or a value out of range is undefined (C,
                # LLVM's fptosi; NumPy's result depends on the CPU): keep the values in range
                src = relay.where(relay.isnan(a), relay.zeros_like(a), relay.clip(a, -100.0,
                                                                                  100.0))
            y = relay.cast(relay.cast(src, to), dt)
        elif kind == "let":
            v = relay.var(f"v{len(lets)}")
            lets.append((v, a))
            y = v
        else:  # the same node used twice
            y = relay.subtract(a, a) if draw("bool") or dt == "int32" else relay.divide(a, a)
        nodes.append(y)
    body = nodes[-1]
    other = lambda: nodes[draw("int", 0, len(nodes) - 1)]  # noqa: E731
    tup = draw("bool") and len(nodes) > 2
    if tup:
        body = relay.Tuple([body, nodes[draw("int", n_in, len(nodes) - 1)]])
    paths = ("graph0", "graph3", "vm")
    if draw("int", 0, 4) == 0:  # control flow: the VM only
        cond = relay.any(relay.greater(params[0], relay.const(np.zeros((), dt))))
        alt = relay.Tuple([other(), other()]) if tup else other()
        body = relay.If(cond, body, alt) if draw("bool") else relay.If(cond, alt, body)
        paths = ("vm",)
    for v, val in reversed(lets):
        body = relay.Let(v, val, body)
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    return Case(relay.transform.InferType()(mod), dt, n_in, paths)


def inputs(draw, case: Case):
    """Arrays of ``SHAPE`` for ``case``: small exact values with a sprinkling of NaN/inf/zeros
    (floats) or zeros (int32)."""
    out = []
    for _ in range(case.n_in):
        rng = np.random.default_rng(draw("int", 0, 2**31 - 1))
        a = rng.choice(np.array(SMALL, "float64"), size=SHAPE)
        frac = draw("choice", [0.0, 0.05, 0.3])
        mask = rng.random(SHAPE) < frac
        a[mask] = rng.choice(np.array(SPECIAL), size=int(mask.sum()))
        if case.dtype == "int32":
            a = np.nan_to_num(a * 2, nan=0, posinf=7, neginf=-7)
        out.append(a.astype(case.dtype))
    return out


def run_case(mod, data, paths=("graph0", "graph3", "vm")):
    """Assert every path agrees with the interpreter; the message holds the program text."""
    from .differential import check

    with np.errstate(all="ignore"):
        try:
            check(mod, data, paths)
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- program ---\n{mod}") from None


def _combine(group):
    """One module whose ``main`` takes every program's inputs (renamed apart) and returns the
    tuple of their results, and the concatenated inputs: a batch compiles as one module."""
    import relay_tvm as relay

    params, bodies, data = [], [], []
    for j, (case, inp) in enumerate(group):
        fn = case.mod["main"]
        new = [relay.var(f"p{j}_{k}", shape=p.type_annotation.shape,
                         dtype=p.type_annotation.dtype) for k, p in enumerate(fn.params)]
        bodies.append(relay.bind(fn.body, dict(zip(fn.params, new))))
        params += new
        data += inp
    mod = relay.IRModule.from_expr(relay.Function(params, relay.Tuple(bodies)))
    return relay.transform.InferType()(mod), data


def sweep(seed, count, log=print, batch=1, start=0):
    """Run programs ``start .. count-1``, program ``i`` drawn from ``NumpyDraw((seed, i))``;
    returns the failures as ``[(index, message)]``.

    ``batch > 1`` compiles that many programs (with the same paths) as one module, which
    amortises the per-module cost of LLVM; a batch that disagrees anywhere is re-run one program
    at a time, so the failures found and reported are the same as with ``batch=1``."""
    fails = []
    pending = {}
    for i in range(start, count):
        draw = NumpyDraw((seed, i))
        case = generate(draw)
        data = inputs(draw, case)
        if batch <= 1:
            _run_one(i, case, data, fails, log)
            continue
        group = pending.setdefault(case.paths, [])
        group.append((i, case, data))
        if len(group) >= batch:
            _run_batch(pending.pop(case.paths), fails, log)
    for group in pending.values():
        _run_batch(group, fails, log)
    return sorted(fails)


def _run_one(i, case, data, fails, log):
    try:
        run_case(case.mod, data, case.paths)
    except AssertionError as e:
        fails.append((i, str(e)))
        log(f"[{i}] {str(e)[:2000]}")


def _run_batch(group, fails, log):
    mod, data = _combine([(case, d) for _, case, d in group])
    try:
        with np.errstate(all="ignore"):
            from .differential import check

            check(mod, data, group[0][1].paths)
        return
    except Exception:  # noqa: BLE001 - localise: the programs one at a time
        pass
    for i, case, d in group:
        _run_one(i, case, d, fails, log)


def main(argv=None):
    """``python -m relay_tvm.testing.fuzz --seed S --count N [--batch B] [--start I]``: a long
    sweep that prints its progress and every failing program, then ``N passed, M failed``."""
    import argparse
    import time

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=10000, help="how many programs (from --start)")
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--start", type=int, default=0, help="index of the first program")
    ap.add_argument("--chunk", type=int, default=100, help="programs between progress lines")
    a = ap.parse_args(argv)
    for name in ("count", "batch", "chunk"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1, got {getattr(a, name)}")
    if a.start < 0:
        ap.error(f"--start must be 0 or more, got {a.start}")
    end = a.start + a.count
    t0, fails = time.time(), []
    for lo in range(a.start, end, a.chunk):
        hi = min(end, lo + a.chunk)
        fails += sweep(a.seed, hi, log=lambda m: print(m, flush=True), batch=a.batch, start=lo)
        print(f"seed {a.seed}: programs {a.start}..{hi - 1} done, {len(fails)} failing, "
              f"{time.time() - t0:.0f} s", flush=True)
    print(f"{a.count - len(fails)} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Type-inference time against program size: a chain of broadcast operators and a chain of
nested lets, 1k / 10k / 100k nodes. Growth should be linear (the us/node column flat).

Run: python benchmarks/bench_typeinfer.py
"""

import sys
import time

sys.setrecursionlimit(10_000)  # make sure nothing relies on a raised recursion limit

import relay_tvm as relay  # noqa: E402


def op_chain(n):
    x = relay.var("x", shape=(4, 4))
    y = x
    for i in range(n):
        y = relay.add(y, relay.const(1.0)) if i % 2 else relay.multiply(y, relay.const(2.0))
    return relay.IRModule.from_expr(relay.Function([x], y))


def let_chain(n):
    x = relay.var("x", shape=(4, 4))
    binds, v = [], x
    for i in range(n):
        nv = relay.var(f"v{i}")
        binds.append((nv, relay.exp(v)))
        v = nv
    body = v
    for nv, val in reversed(binds):
        body = relay.Let(nv, val, body)
    return relay.IRModule.from_expr(relay.Function([x], body))


def best_of(fn, repeat=3):
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    print(f"{'program':<12} {'nodes':>8} {'seconds':>9} {'us/node':>8}")
    for name, make in (("op chain", op_chain), ("let chain", let_chain)):
        for n in (1_000, 10_000, 100_000):
            mod = make(n)
            t = best_of(lambda mod=mod: relay.transform.InferType()(mod), 3 if n < 100_000 else 1)
            print(f"{name:<12} {n:>8} {t:>9.3f} {t / n * 1e6:>8.1f}")


if __name__ == "__main__":
    main()

"""Text format time against program size: printing and parsing a chain of operators (graph
form, ``%n = ...;``), a chain of nested lets, and a DAG with shared nodes, for 1k / 10k / 100k
nodes. Growth should be linear (the us/node columns flat).

Run: python benchmarks/bench_text.py
"""

import sys
import time

sys.setrecursionlimit(10_000)  # make sure nothing relies on a raised recursion limit

import relay_tvm as relay  # noqa: E402
from relay_tvm.analysis import structural_equal  # noqa: E402


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


def diamond(n):
    x = relay.var("x", shape=(4, 4))
    y = x
    for _ in range(n // 3):
        a = relay.exp(y)  # used twice: bound once, shared after parsing
        y = relay.add(relay.negative(a), a)
    return relay.IRModule.from_expr(relay.Function([x], y))


def main():
    rows = []
    for name, build in (("op chain", op_chain), ("let chain", let_chain), ("diamond", diamond)):
        for n in (1_000, 10_000, 100_000):
            mod = build(n)
            t0 = time.perf_counter()
            text = relay.astext(mod)
            t1 = time.perf_counter()
            back = relay.parse(text)
            t2 = time.perf_counter()
            ok = structural_equal(mod, back)
            rows.append((name, n, len(text), t1 - t0, t2 - t1, ok))
    print(f"{'program':<10} {'nodes':>8} {'chars':>10} {'print s':>8} {'us/node':>8} "
          f"{'parse s':>8} {'us/node':>8}  equal")
    for name, n, chars, tp, tq, ok in rows:
        print(f"{name:<10} {n:>8} {chars:>10} {tp:>8.3f} {tp / n * 1e6:>8.1f} "
              f"{tq:>8.3f} {tq / n * 1e6:>8.1f}  {ok}")


if __name__ == "__main__":
    main()

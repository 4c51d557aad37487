"""Parallel loops shared dynamically between the pool's threads (relay_tvm.backend.
dynamic_parallel): every iteration runs exactly once whatever the thread count the module runs
on, the kernels equal NumPy, the rewrite is skipped where it cannot help (one thread, short
loops, the C target) and can be turned off."""

import subprocess
import sys

import numpy as np
import pytest
import tvm
from backend_util import rand

import relay_tvm as relay
from relay_tvm.backend import dynamic_parallel as dp


def _func(shape):
    x = relay.var("x", shape=shape)
    return relay.Function([x], relay.nn.relu(x) * x + relay.const(1.0))


def _lowered(shape, target="llvm"):
    """The TIR of the build's kernel after our pipeline, as text."""
    from tvm import tirx

    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(relay.IRModule.from_expr(_func(shape)), target=target)
    tgt = tvm.target.Target(target)
    mod = tirx.transform.BindTarget(tgt.with_host(tgt))(lib.ir_mod)
    pipe, _, _ = tirx.get_tir_pipeline(dp.pipeline(tgt))
    return lib, "\n".join(f.script() for f in pipe(mod).functions.values())


@pytest.mark.parametrize("extent,threads,chunks,per", [
    (4, 2, 4, 1), (16, 2, 16, 1), (17, 2, 17, 1), (40, 2, 20, 2), (1000, 2, 32, 32),
    (1000, 4, 63, 16), (5, 8, 5, 1), (7, 1, 7, 1)])
def test_chunking(extent, threads, chunks, per):
    assert dp.chunking(extent, threads) == (chunks, per)
    # every iteration in exactly one chunk, the last chunk not empty
    assert (chunks - 1) * per < extent <= chunks * per


@pytest.mark.parametrize("chunks,threads,order,expect", [
    # two threads in step: halves of what is left, from both ends, until they meet
    (32, 2, [0, 1], [(0, 0, 16), (1, 24, 8), (0, 16, 4), (1, 22, 2), (0, 20, 1), (1, 21, 1)]),
    # the back thread late by two takes: the front one has taken 3/4 of the work by then
    (16, 2, [0, 0, 1], [(0, 0, 8), (0, 8, 4), (1, 14, 2), (0, 12, 1), (0, 13, 1)]),
    # four threads, one front task
    (8, 4, [0, 1, 2, 3], [(0, 0, 2), (1, 7, 1), (2, 6, 1), (3, 5, 1), (0, 2, 1), (1, 4, 1), (2, 3, 1)]),
])
def test_takes_shrink_and_cover_every_chunk_once(chunks, threads, order, expect):
    got = dp.takes(chunks, threads, order)
    assert got == expect
    covered = sorted(i for _, first, n in got for i in range(first, first + n))
    assert covered == list(range(chunks))


def test_parallel_loop_is_rewritten_and_equals_numpy():
    shape = (8, 64, 16, 16)
    lib, text = _lowered(shape)
    assert "pthread_mutex_lock" in text and "pthread_mutex_unlock" in text
    a = rand(shape)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", a)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), np.maximum(a, 0) * a + 1, rtol=1e-6)


def test_c_target_and_switch_off_keep_static_loops(monkeypatch):
    shape = (8, 64, 16, 16)
    assert dp.pipeline(tvm.target.Target("c")) == "default"
    monkeypatch.setenv("RELAY_TVM_STATIC_PARALLEL", "1")
    _, text = _lowered(shape)  # relay_tvm's pipeline still runs (the weight prefetch)
    assert "T.parallel" in text and "pthread_mutex_lock" not in text
    monkeypatch.setenv("RELAY_TVM_NO_PREFETCH", "1")
    assert dp.pipeline(tvm.target.Target("llvm")) == "default"
    _, text = _lowered(shape)
    assert "T.parallel" in text and "pthread_mutex_lock" not in text


def test_one_thread_module_keeps_static_loops(monkeypatch):
    monkeypatch.setenv("TVM_NUM_THREADS", "1")
    _, text = _lowered((8, 64, 16, 16))
    assert "T.parallel" in text and "pthread_mutex_lock" not in text
    monkeypatch.setenv("RELAY_TVM_NO_PREFETCH", "1")
    assert dp.pipeline(tvm.target.Target("llvm")) == "default"


def test_short_loops_stay_static():
    from tvm import tirx

    body = tirx.Evaluate(tirx.const(0, "int32"))
    for extent in (1, 2, 3):
        loop = tirx.For(tirx.Var("i", "int32"), tirx.const(0, "int32"),
                        tirx.const(extent, "int32"), tirx.ForKind.PARALLEL, body)
        func = tirx.PrimFunc([], loop)
        assert dp.rewrite(func, 2).same_as(func)


_CHILD = r"""
import sys
import numpy as np, tvm
import relay_tvm as relay
n = int(sys.argv[1])
rng = np.random.default_rng(0)
# a convolution (the NCHWc template's fused parallel loop), a dense layer and an elementwise
# tail, with extents that do not divide by the thread count
x = relay.var("x", shape=(1, 24, 19, 23))
w = relay.const(rng.standard_normal((40, 24, 3, 3)).astype("float32"))
y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=40, kernel_size=(3, 3)))
d = relay.nn.dense(relay.nn.batch_flatten(y), relay.const(
    rng.standard_normal((37, 40 * 19 * 23)).astype("float32")))
with relay.transform.PassContext(opt_level=3):
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.Tuple([y, d]))),
                      target="llvm")
a = rng.standard_normal((1, 24, 19, 23)).astype("float32")
ref = relay.create_executor("debug", mod=relay.IRModule.from_expr(
    relay.Function([x], relay.Tuple([y, d])))).evaluate()(a)
gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
gm.set_input("x", a)
for _ in range(20):
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), ref[0].numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gm.get_output(1).numpy(), ref[1].numpy(), rtol=1e-4, atol=1e-3)
print("ok", relay.runtime.GraphModule.__name__, n)
"""


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_model_equals_interpreter_on_any_thread_count(threads):
    """Built for this machine's default thread count, run on 1, 2, 3 or 5 pool threads (a
    process each: the pool is sized once), twenty runs each equal to the interpreter."""
    import os

    env = dict(os.environ, TVM_NUM_THREADS=str(max(2, threads)))
    env.pop("RELAY_TVM_STATIC_PARALLEL", None)
    # the module is built for max(2, threads) threads (rewritten) and run on `threads`
    code = _CHILD.replace(
        "gm = relay.runtime", "tvm.get_global_func('runtime.config_threadpool')(1, n)\n"
        "assert relay._threads.num_threads() == n, relay._threads.num_threads()\n"
        "from relay_tvm.backend import dynamic_parallel as dp\n"
        "assert dp.pipeline(tvm.target.Target('llvm')) == dp.PIPELINE\n"
        "gm = relay.runtime")
    out = subprocess.run([sys.executable, "-c", code, str(threads)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ok" in out.stdout


def test_pipeline_skips_only_the_listed_passes_and_keeps_the_users_context():
    """Our CPU pipeline runs TVM's s_tir pipeline with SKIPPED_PASSES disabled by name; the
    user's opt level, disabled passes and TVM options reach the passes unchanged (the relay.*
    options stay out: relay_tvm's context would check them again, warning a second time)."""
    import tvm.ir.transform as T

    ran = []

    def spy(name):
        def fn(mod, _ctx):
            ran.append(name)
            return mod
        return T.module_pass(fn, opt_level=0, name=name)

    seq = T.Sequential([spy(n) for n in (*dp.SKIPPED_PASSES, "kept", "user_off")])
    seen = {}

    def base(mod):
        ctx = T.PassContext.current()
        seen.update(opt=ctx.opt_level, off=set(ctx.disabled_pass), cfg=dict(ctx.config))
        return seq(mod)

    with T.PassContext(opt_level=2, disabled_pass=["user_off"],
                       config={"tirx.disable_cse_tir": True,
                               "relay.FuseOps.max_depth": 7}):
        dp._without_skipped(base, tvm.IRModule({}))
    assert ran == ["kept"]
    assert seen["opt"] == 2 and seen["off"] == {"user_off", *dp.SKIPPED_PASSES}
    assert bool(seen["cfg"]["tirx.disable_cse_tir"]) is True
    assert not any(str(k).startswith("relay.") for k in seen["cfg"])
    # the names are those of TVM's passes (a renamed pass would silently run again)
    from tvm.s_tir.transform import HoistIfThenElse, RenormalizeSplitPattern

    assert dp.SKIPPED_PASSES == (RenormalizeSplitPattern().info.name,
                                 HoistIfThenElse().info.name)


def test_tvms_own_pipeline_skips_them():
    """The same through TVM's C++ Sequential (the s_tir pipeline our kernels go through): a
    loop-invariant ``if`` inside a loop is hoisted out by TVM's pipeline and stays inside
    when HoistIfThenElse is skipped."""
    from tvm import tirx
    from tvm.script import tirx as T

    @T.prim_func
    def f(a: T.Buffer((16,), "float32"), n: T.int32):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            if n > 0:
                a[i] = T.float32(1.0)

    tgt = tvm.target.Target("llvm")
    mod = tirx.transform.BindTarget(tgt.with_host(tgt))(tvm.IRModule({"f": f}))
    base, _, _ = tirx.get_tir_pipeline("s_tir")

    def order(m):
        lines = [ln.strip() for ln in m["f"].script().splitlines()]
        return lines.index("for i in range(16):") < lines.index("if 0 < n:")

    assert not order(base(mod))  # TVM's pipeline: the if outside the loop
    assert order(dp._without_skipped(base, mod))  # skipped: the if stays in the loop

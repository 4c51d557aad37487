"""The kernels' code generation spread over threads (relay_tvm/backend/link.py)."""

import numpy as np
import pytest
import tvm

import relay_tvm as relay
from relay_tvm._threads import usable_cores
from relay_tvm.backend import link
from relay_tvm.errors import BuildError
from relay_tvm.runtime import GraphModule, load_module


def _net():
    """A small network of several kernels (convolution, pooling, dense, softmax) and its
    parameters."""
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 3, 16, 16))
    w = relay.var("w", shape=(8, 3, 3, 3))
    d = relay.var("d", shape=(10, 8 * 8 * 8))
    y = relay.nn.relu(relay.nn.conv2d(x, w, channels=8, kernel_size=(3, 3), padding=(1, 1)))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.softmax(relay.nn.dense(relay.nn.batch_flatten(y), d))
    params = {"w": rng.standard_normal((8, 3, 3, 3)).astype("float32"),
              "d": rng.standard_normal((10, 512)).astype("float32") * 0.05}
    return relay.IRModule.from_expr(relay.Function([x, w, d], y)), params


def _reference(mod, params, xv):
    return relay.create_executor("debug", mod=mod).evaluate()(
        xv, params["w"], params["d"]).numpy()


def _kernels(costs, monkeypatch):
    """An IRModule of one tiny kernel per entry of ``costs`` (name -> estimated cost), with
    link.cost answering those costs."""
    from tvm import te

    def kernel(name):
        a = te.placeholder((4,), name="a")
        f = te.create_prim_func([a, te.compute((4,), lambda i: a[i] + 1)])
        return f.with_attr("global_symbol", name)

    funcs = {name: kernel(name) for name in costs}
    monkeypatch.setattr(link, "cost", lambda f: costs[str(f.attrs["global_symbol"])])
    return tvm.IRModule(funcs)


def _jobs(costs, monkeypatch, threads, most, least):
    """The modules (``[(kernel names, cost)]``) that compile() would hand out for kernels of
    ``costs`` with MODULE_COST ``most`` and MIN_JOB_COST ``least``, in order."""
    monkeypatch.setattr(link, "MODULE_COST", most)
    monkeypatch.setattr(link, "MIN_JOB_COST", least)
    cg = link.KernelCodegen([], tvm.target.Target("llvm"), "default", threads=threads)
    cg._queue(_kernels(costs, monkeypatch))
    jobs = []
    while (job := cg._next_job()) is not None:
        jobs.append(([gv.name_hint for gv in job[1].get_global_vars()], job[0]))
    assert sorted(n for names, _ in jobs for n in names) == sorted(costs)  # each once
    return jobs


def test_the_rest_is_taken_costliest_first_in_shrinking_modules(monkeypatch):
    """Guided self-scheduling of compile()'s kernels: each module takes the costliest kernels
    left, up to a 1/(2 threads) share of the cost left (at least one kernel, at most
    MODULE_COST, at least MIN_JOB_COST), so the modules shrink towards the end and two
    threads finish together."""
    costs = {"k0": 16000, "k1": 15000, "k2": 5000, "k3": 5000, "k4": 4000, "k5": 3000,
             "k6": 3000, "k7": 1000, "k8": 500, "k9": 500}
    # 53,000 left -> a share of 13,250: k0 alone (above it); 37,000 -> 9,250: k1 alone;
    # 22,000 -> 5,500: k2; 17,000 -> 4,250: k3; 12,000 -> 3,000: k4; 8,000 -> 2,000 (the
    # least): k5; 5,000 -> 2,000: k6; then 2,000 -> 2,000: k7 + k8 + k9
    assert _jobs(costs, monkeypatch, 2, 24000, 2000) == [
        (["k0"], 16000), (["k1"], 15000), (["k2"], 5000), (["k3"], 5000), (["k4"], 4000),
        (["k5"], 3000), (["k6"], 3000), (["k7", "k8", "k9"], 2000)]


def test_a_module_never_exceeds_module_cost_but_for_one_kernel(monkeypatch):
    sizes = [c for _, c in _jobs({f"k{i}": 1000 for i in range(40)}, monkeypatch, 1, 5000,
                                 1000)]
    # 40,000 left, one thread: the share (20,000) is capped at 5,000; it shrinks to
    # 1,000 (the least) once under 10,000 are left
    assert sum(sizes) == 40000 and max(sizes) == 5000 and sizes[-1] == 1000, sizes
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_threaded_codegen_runs_and_exports(threads, monkeypatch, tmp_path):
    monkeypatch.setenv(link.ENV, threads)
    mod, params = _net()
    xv = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype("float32")
    ref = _reference(mod, params, xv)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    gm.run(x=xv)
    np.testing.assert_allclose(gm.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    path = str(tmp_path / "net.so")
    lib.export_library(path)
    gm2 = GraphModule(load_module(path)["default"](tvm.cpu(0)))
    gm2.run(x=xv)
    np.testing.assert_allclose(gm2.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    exe = relay.vm.compile(mod, target="llvm", params=params)
    exe.export_library(str(tmp_path / "vm.so"))
    vm = relay.vm.VirtualMachine(relay.vm.load_executable(str(tmp_path / "vm.so")), tvm.cpu(0))
    np.testing.assert_allclose(vm.run(xv).numpy(), ref, rtol=1e-5, atol=1e-6)


def test_machine_code_generated_on_threads_before_the_first_run(monkeypatch, tmp_path):
    """The first GraphModule / VirtualMachine of an in-process build generates its LLVM
    modules' machine code on the build threads (link.generate_machine_code); a library loaded
    from a file has no LLVM module left to compile."""
    import threading

    monkeypatch.setenv(link.ENV, "3")
    mod, params = _net()
    xv = np.random.default_rng(2).standard_normal((1, 3, 16, 16)).astype("float32")
    ref = _reference(mod, params, xv)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    n = len(link._llvm_modules(lib.lib))
    assert n >= 2  # the kernels were split over the build threads' modules
    seen = []
    real = threading.Thread

    class Spy(real):
        def __init__(self, *a, **k):
            seen.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(threading, "Thread", Spy)
    gm = GraphModule(lib["default"](tvm.cpu(0)))
    monkeypatch.setattr(threading, "Thread", real)
    assert len(seen) == min(n, 3)  # one worker per module, at most the build threads
    gm.run(x=xv)
    np.testing.assert_allclose(gm.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    assert link.generate_machine_code(lib.lib) == n  # again: lookups only, same count
    path = str(tmp_path / "net.so")
    lib.export_library(path)  # after the machine code: the export still links
    loaded = load_module(path)
    assert link.generate_machine_code(getattr(loaded, "lib", loaded)) == 0
    gm2 = GraphModule(loaded["default"](tvm.cpu(0)))
    gm2.run(x=xv)
    np.testing.assert_allclose(gm2.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    exe = relay.vm.compile(mod, target="llvm", params=params)
    vm = relay.vm.VirtualMachine(exe, tvm.cpu(0))
    np.testing.assert_allclose(vm.run(xv).numpy(), ref, rtol=1e-5, atol=1e-6)


def test_worker_threads_run_under_the_callers_pass_context(monkeypatch):
    """Every kernel's TIR passes run under the PassContext of the build, also on the worker
    threads: both threads compile under its config. With pass instruments the kernels compile
    on the calling thread only (instruments saw callbacks from several threads at once, and
    the workers' entering and leaving the context cleared a PassTimingInstrument; a new-user
    trial), and the instruments see each kernel."""
    monkeypatch.setenv(link.ENV, "2")
    seen = set()

    @tvm.instrument.pass_instrument
    class Record:
        def run_before_pass(self, mod, info):
            for gv in mod.get_global_vars():
                seen.add(gv.name_hint)

    mod, params = _net()
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    kernels = {gv.name_hint for gv in lib.ir_mod.get_global_vars()}
    assert len(kernels) >= 2
    monkeypatch.setattr(link, "MIN_JOB_COST", 1)  # a module a kernel: both threads take some
    tgt = lib.target
    import threading

    from relay_tvm.backend import dynamic_parallel

    calls = []
    real_build = tvm.tirx.build

    def recording_build(*args, **kwargs):
        cfg = tvm.transform.PassContext.current().config
        calls.append((threading.get_ident(), bool(cfg.get("tirx.noalias", True))))
        return real_build(*args, **kwargs)

    monkeypatch.setattr(tvm.tirx, "build", recording_build)
    with tvm.transform.PassContext(opt_level=3, config={"tirx.noalias": False}):
        built = link.build_kernels(lib.ir_mod, tgt, dynamic_parallel.pipeline(tgt), threads=2)
    assert len(built.imports) >= 1  # the other modules, linked into the first
    assert len({t for t, _ in calls}) == 2 and not any(noalias for _, noalias in calls)
    monkeypatch.setattr(tvm.tirx, "build", real_build)
    with tvm.transform.PassContext(opt_level=3, instruments=[Record()]):
        built = link.build_kernels(lib.ir_mod, tgt, dynamic_parallel.pipeline(tgt), threads=2)
    assert kernels <= seen
    assert len(built.imports) == 0  # one module, compiled on the calling thread


def test_bad_thread_count_is_an_error(monkeypatch):
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(link.ENV, bad)
        with pytest.raises(BuildError, match=f"{link.ENV}={bad!r}"):
            link.build_threads()
    monkeypatch.delenv(link.ENV)
    assert link.build_threads() == usable_cores()  # the documented default


def test_background_codegen_stops_when_the_lowering_fails(monkeypatch):
    """An exception inside the ``KernelCodegen`` block (a failed lowering) propagates and
    the worker thread ends; nothing is left running."""
    import threading

    from relay_tvm.backend import dynamic_parallel

    monkeypatch.setenv(link.ENV, "2")
    mod, params = _net()
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    tgt = lib.target
    before = threading.active_count()
    funcs: list = []

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with link.KernelCodegen(funcs, tgt, dynamic_parallel.pipeline(tgt)):
            assert threading.active_count() == before + 1  # the worker runs
            raise Boom
    assert threading.active_count() == before


@pytest.mark.parametrize("each, want", [(1, "max"), (10000, 2), (50000, 1)])
def test_the_worker_compiles_at_most_batch_max_kernels_at_once(monkeypatch, each, want):
    """When the lowering outran the worker's first compile, the worker took every kernel
    lowered meanwhile as one batch and compiled it alone (ResNet-50's code generation used
    1.06 cores of 2); it now takes at most ``BATCH_MAX`` at a time, and at most
    ``MODULE_COST`` of estimated cost (at least one kernel): 8 of ResNet-50's kernels with 3
    Winograd ones kept it busy a second after the lowering. Here every kernel is lowered
    before the worker starts (the kernels stand in for LoweredFuncs, each of cost ``each``:
    the module each batch becomes is a one-kernel stand-in)."""
    import time
    from types import SimpleNamespace

    from tvm import te

    from relay_tvm.backend import dynamic_parallel

    a = te.placeholder((4,), name="a")
    tiny = tvm.IRModule({"main": te.create_prim_func([a, te.compute((4,), lambda i: a[i] + 1)])})
    sizes = []

    def stand_in(batch):
        sizes.append(len(batch))
        return tiny

    mod, params = _net()
    with relay.transform.PassContext(opt_level=3):
        tgt = relay.build(mod, target="llvm", params=params).target
    monkeypatch.setattr(link, "kernel_module", stand_in)
    monkeypatch.setattr(link, "MODULE_COST", 24000)
    monkeypatch.setattr(link, "cost", lambda f: each)
    n = 2 * link.BATCH_MAX + 3
    funcs = [SimpleNamespace(prim_func=i) for i in range(n)]
    with link.KernelCodegen(funcs, tgt, dynamic_parallel.pipeline(tgt), threads=2) as cg:
        deadline = time.monotonic() + 60
        while not sizes and time.monotonic() < deadline:  # the worker's first batch
            time.sleep(0.01)
    want = link.BATCH_MAX if want == "max" else want
    assert not cg._errors, cg._errors
    assert sizes and sizes[0] == want and max(sizes) <= want, sizes


def test_the_costliest_module_comes_first_for_machine_code(monkeypatch):
    """compile() links the modules costliest first, the order generate_machine_code hands
    them to its threads (longest processing time first: ResNet-50's machine code took
    0.1-0.2 s less on two threads than in the order they were built)."""
    from relay_tvm.backend import dynamic_parallel

    mod, params = _net()
    with relay.transform.PassContext(opt_level=3):
        tgt = relay.build(mod, target="llvm", params=params).target
    import time

    monkeypatch.setattr(link, "MIN_JOB_COST", 1)  # a module a kernel
    tir_mod = _kernels({"small": 1, "large": 100, "middle": 10}, monkeypatch)
    real_build = tvm.tirx.build

    def slow_large(m, *args, **kwargs):  # the large one finishes last
        if any(gv.name_hint == "large" for gv in m.get_global_vars()):
            time.sleep(0.5)
        return real_build(m, *args, **kwargs)

    monkeypatch.setattr(tvm.tirx, "build", slow_large)
    lib = link.KernelCodegen([], tgt, dynamic_parallel.pipeline(tgt), threads=2).compile(tir_mod)
    order = [m for m in link.module_tree(lib) if m.kind == "llvm"]
    got = [next(n for n in ("small", "large", "middle") if m.implements_function(n))
           for m in order]
    assert got == ["large", "middle", "small"]

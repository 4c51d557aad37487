"""relay_tvm.tune: tuning with meta_schedule, applying the database, bad input.

The measured tests tune a 2-kernel model (conv2d + relu, dense) for 8 trials per kernel on the
local runner, and the same over a loopback TVM RPC tracker + server. Timings are never asserted
(the machine is shared); what is asserted is which record a build applies and that every
build computes what NumPy computes.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import tvm
import tvm_ffi

import relay_tvm as relay
from relay_tvm import tune
from relay_tvm.backend.schedule import TEMPLATE_ANNOTATION, record_spec, template_spec
from relay_tvm.backend.target import make_target
from relay_tvm.errors import TuningError
from relay_tvm.tune.measure import RPCSettings, evaluator_config
from relay_tvm.tune.space import assignments, knob_space, untuned_candidate
from relay_tvm.tune.workdir import MANIFEST, RECORDS

# the target relay.build and tune_relay make of "llvm": the host's CPU (-mcpu), whose vector
# width sizes the templates (a bare Target("llvm") is generic x86-64: AVX2-sized on an
# AVX-512 host, so its schedules differ from the build's)
HOST = make_target("llvm")

FAST = evaluator_config(number=2, repeat=1, min_repeat_ms=5)


def _model(channels=16):
    x = relay.var("x", shape=(1, 8, 14, 14))
    w = relay.var("w", shape=(channels, 8, 3, 3))
    w2 = relay.var("w2", shape=(32, channels * 14 * 14))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    y = relay.nn.dense(relay.reshape(y, (1, -1)), w2)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w, w2], y)))
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((channels, 8, 3, 3)).astype("float32"),
              "w2": rng.standard_normal((32, channels * 14 * 14)).astype("float32")}
    return mod, params


def _numpy_ref(x, params):
    w, w2 = params["w"], params["w2"]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, w.shape[0], 14, 14), "float64")
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 14, j:j + 14], w[:, :, i, j])
    return np.maximum(out, 0).reshape(1, -1) @ w2.T.astype("float64")


def _run(lib, x):
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", x)
    gm.run()
    return gm.get_output(0).numpy()


def _untuned_records(events):
    """The records of untuned schedules a tuning run committed, from its progress events: one
    per "untuned" event, and one more per "recheck" that timed the schedule faster (the early
    recheck and the one at the end can both; CI saw two in one run)."""
    return sum(e["event"] == "untuned" or (e["event"] == "recheck" and e["ms"] < e["was_ms"])
               for e in events)


def _build(mod, params, database=None):
    with relay.transform.PassContext(opt_level=3):
        return relay.build(mod, "llvm", params=params, database=database)


def _x():
    return np.random.default_rng(1).standard_normal((1, 8, 14, 14)).astype("float32")


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    mod, params = _model()
    wd = str(tmp_path_factory.mktemp("tune"))
    events = []
    db = tune.tune_relay(mod, params, "llvm", wd, 16, max_trials_per_task=8,
                         num_trials_per_iter=8, seed=0, evaluator=FAST, progress=events.append)
    return mod, params, wd, db, events


def _best_specs(db, mod, params):
    """{kernel task name: knobs of the database's best record}."""
    out = {}
    for t in tune.extract_tasks(mod, "llvm", params):
        rec = db.query_tuning_record(t.mod, HOST, "main")
        if rec is not None:
            out[t.name] = record_spec(rec)
    return out


@pytest.mark.slow
def test_tuning_measures_and_build_applies_the_best(tuned):
    mod, params, wd, db, events = tuned
    with open(os.path.join(wd, MANIFEST)) as f:
        manifest = json.load(f)
    states = list(manifest["tasks"].values())
    assert sorted(s["name"] for s in states) == ["fused_nn_contrib_conv2d_NCHWc_nn_relu",
                                                "fused_nn_dense"]
    for s in states:
        assert s["baseline"] and s["errors"] == 0
        # 8 trials: the template's knob points, then meta_schedule's default space
        assert s["trials"] == 8 or s.get("exhausted")
    # every tuned kernel: its template records hold distinct knob assignments, as many as the
    # knob space has points (at most the 8 trials); the rest of the 8 came from the default
    # space (records without a template annotation)
    target = HOST
    for t in tune.extract_tasks(mod, "llvm", params):
        if not db.has_workload(t.mod):
            continue
        recs = db.get_top_k(db.commit_workload(t.mod), 1000)
        specs = [record_spec(r) for r in recs]
        tuned_knobs = [json.dumps(sp["knobs"], sort_keys=True) for sp in specs
                       if sp is not None and not sp.get("untuned")]
        points = len(assignments(knob_space(t, target)[1])) - 1  # the defaults are untuned
        assert len(tuned_knobs) == len(set(tuned_knobs)) == min(points, 8) >= 4
        assert len([sp for sp in specs if sp is None]) == 8 - min(points, 8)
    untuned, tuned_lib = _build(mod, params), _build(mod, params, db)
    best = _best_specs(db, mod, params)
    assert sorted(best) == ["fused_nn_contrib_conv2d_NCHWc_nn_relu", "fused_nn_dense"]
    for name, k in tuned_lib.kernels.items():
        base = untuned.kernels[name]
        task = name.replace("tvmgen_default_", "")
        if task not in best:
            assert k.schedule_rule == base.schedule_rule
            continue
        if best[task] is None:  # a schedule of meta_schedule's default space was fastest
            assert k.schedule_rule == "database"
            continue
        untuned_won = best[task].get("untuned")
        assert k.schedule_rule == "database:" + best[task]["rule"] + (
            ":untuned" if untuned_won else "")
        if untuned_won:  # the template defaults measured fastest
            assert tvm_ffi.structural_equal(k.prim_func, base.prim_func)
    x = _x()
    a, b = _run(untuned, x), _run(tuned_lib, x)
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5 * float(np.abs(a).max()))
    np.testing.assert_allclose(b, _numpy_ref(x, params), rtol=1e-4, atol=1e-4)
    assert [e for e in events if e["event"] == "untuned"]


@pytest.mark.slow
def test_resume_measures_nothing_new(tuned):
    mod, params, wd, db, _ = tuned
    with open(os.path.join(wd, RECORDS)) as f:
        before = f.read()
    events = []
    db2 = tune.tune_relay(mod, params, "llvm", wd, 16, max_trials_per_task=8,
                          num_trials_per_iter=8, seed=0, evaluator=FAST, progress=events.append)
    with open(os.path.join(wd, RECORDS)) as f:
        assert f.read() == before
    assert {e["event"] for e in events} == {"skip"}
    assert len(db2) == len(db)


@pytest.mark.slow
def test_default_space_record_of_a_template_kernel_builds_correctly(tuned):
    """After its knob points the dense kernel was searched in meta_schedule's default space;
    a build given only those records applies one (no template, no weight pack, the weight in
    the layout the graph feeds) and computes the same values."""
    from tvm.s_tir.meta_schedule.database import MemoryDatabase

    mod, params, _, db, _ = tuned
    (dense,) = [t for t in tune.extract_tasks(mod, "llvm", params) if t.name == "fused_nn_dense"]
    recs = [r for r in db.get_top_k(db.commit_workload(dense.mod), 1000)
            if record_spec(r) is None]
    points = len(assignments(knob_space(dense, HOST)[1])) - 1  # the defaults are untuned
    assert len(recs) == 8 - min(points, 8) >= 1
    only = MemoryDatabase()
    wkl = only.commit_workload(dense.mod)
    for r in recs:
        only.commit_tuning_record(type(r)(r.trace, wkl, r.run_secs, r.target, r.args_info))
    lib = _build(mod, params, only)
    rules = {k.replace("tvmgen_default_", ""): v.schedule_rule for k, v in lib.kernels.items()}
    assert rules["fused_nn_dense"] == "database"
    assert rules["fused_nn_contrib_conv2d_NCHWc_nn_relu"] == "conv2d_NCHWc"
    x = _x()
    np.testing.assert_allclose(_run(lib, x), _numpy_ref(x, params), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_pass_context_idiom_applies_the_database(tuned):
    mod, params, _, db, _ = tuned
    with db, relay.transform.PassContext(opt_level=3,
                                         config={"relay.backend.use_meta_schedule": True}):
        lib = relay.build(mod, "llvm", params=params)
    best = _best_specs(db, mod, params)
    assert sorted(best) == ["fused_nn_contrib_conv2d_NCHWc_nn_relu", "fused_nn_dense"]
    rules = {k.replace("tvmgen_default_", ""): v.schedule_rule for k, v in lib.kernels.items()}
    assert {k: rules[k] for k in best} == {
        k: "database" if sp is None else "database:" + sp["rule"] + (
            ":untuned" if sp.get("untuned") else "") for k, sp in best.items()}
    # without the config, `with db` alone is not a request to use it (tvm.relay 0.19)
    with db, relay.transform.PassContext(opt_level=3):
        plain = relay.build(mod, "llvm", params=params)
    assert not [k for k in plain.kernels.values() if k.schedule_rule.startswith("database")]
    x = _x()
    np.testing.assert_allclose(_run(lib, x), _numpy_ref(x, params), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_build_at_another_opt_level_than_tuned_warns_naming_both(tuned):
    # from the new-user trial: relay.build defaults to opt level 2, whose kernels (no NCHWc
    # conv2d) differ from the opt-level-3 tuning's; some kernels still matched, so the
    # "no record for any" warning stayed silent and the report showed tuned=[]
    mod, params, wd, db, _ = tuned
    with open(os.path.join(wd, MANIFEST)) as f:
        assert json.load(f)["opt_level"] == 3
    with pytest.warns(UserWarning, match=r"no record for 1 of the 2 kernels .* tuned at opt "
                      r"level 3 and this build is at opt level 2.*PassContext\(opt_level=3\)"
                      r".*compile_relay") as rec:
        lib = relay.build(mod, "llvm", params=params, database=db)
    assert [w.filename for w in rec if "opt level" in str(w.message)] == [__file__]
    assert len(tune.database_report(lib).no_record) == 1
    # the work dir's path says the same
    with pytest.warns(UserWarning, match="tuned at opt level 3"):
        relay.build(mod, "llvm", params=params, database=wd)
    # and so does relay.vm.compile (silent before; fresh-user trial), at the caller's line
    with pytest.warns(UserWarning, match=r"^vm\.compile: the tuning database has no record for "
                      r"\d+ of the \d+ kernels .* tuned at opt level 3 and this build is at "
                      r"opt level 2") as rec:
        exe = relay.vm.compile(mod, "llvm", params=params, database=db)
    assert [w.filename for w in rec if "opt level" in str(w.message)] == [__file__]
    x = _x()
    np.testing.assert_allclose(relay.vm.VirtualMachine(exe).invoke("main", x).numpy(),
                               _numpy_ref(x, params), rtol=1e-4, atol=1e-4)
    # at the tuned level: nothing to say
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tune.compile_relay(db, mod, "llvm", params)


def test_use_meta_schedule_without_database_warns():
    mod, params = _model(8)
    with pytest.warns(UserWarning, match="no meta_schedule Database"):
        with relay.transform.PassContext(opt_level=3,
                                         config={"relay.backend.use_meta_schedule": True}):
            lib = relay.build(mod, "llvm", params=params)
    assert not [k for k in lib.kernels.values() if k.schedule_rule.startswith("database")]


def test_extract_tasks_keeps_the_pass_context_config():
    """The tasks are those relay.build compiles in the current PassContext: its config
    (Winograd forced or off) and disabled passes carry over; only the opt level is set."""
    mod, params = _model(channels=32)

    def names(**ctx):
        with relay.transform.PassContext(opt_level=3, **ctx):
            return [t.name for t in tune.extract_tasks(mod, "llvm", params)]

    key = "relay.AlterOpLayout.winograd"
    forced, never = names(config={key: 4}), names(config={key: "never"})
    assert any("winograd" in n for n in forced), forced
    assert not any("winograd" in n for n in never) and any("conv2d" in n for n in never), never
    # FuseOps disabled: one kernel per operator, relu on its own
    unfused = names(disabled_pass=["FuseOps"])
    assert any(n.endswith("nn_relu") and "conv" not in n for n in unfused), unfused
    with relay.transform.PassContext(opt_level=3, config={key: 4}):
        lib = relay.build(mod, "llvm", params=params)
    assert {k.name.removeprefix("tvmgen_default_") for k in lib.kernels.values()} == \
        set(forced)


@pytest.mark.slow
def test_kernel_without_template_searches_the_default_space(tmp_path):
    from relay_tvm.tune.space import knob_space

    x = relay.var("x", shape=(8, 100))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], relay.nn.softmax(x))))
    (task,) = tune.extract_tasks(mod, "llvm")
    assert knob_space(task, HOST) is None  # no template: meta_schedule's
    events = []
    db = tune.tune_relay(mod, {}, "llvm", str(tmp_path), 4, num_trials_per_iter=4, seed=0,
                         evaluator=FAST, progress=events.append)
    recs = db.get_all_tuning_records()
    untuned = _untuned_records(events)  # 1, or more where it was timed faster again
    assert len(recs) == 4 + untuned and [record_spec(r)["rule"] for r in recs
                                         if record_spec(r)] == ["generic"] * untuned
    # 4 meta_schedule schedules + the untuned (generic) ones
    lib = _build(mod, {}, db)
    (k,) = lib.kernels.values()
    best = db.get_top_k(db.commit_workload(task.mod), 1)[0]
    assert k.schedule_rule == ("database:generic:untuned" if record_spec(best) else "database")
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    xv = np.random.default_rng(4).standard_normal((8, 100)).astype("float32")
    gm.set_input("x", xv)
    gm.run()
    e = np.exp(xv - xv.max(1, keepdims=True))
    np.testing.assert_allclose(gm.get_output(0).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)


def test_default_space_failure_ends_that_task_only(tmp_path, monkeypatch):
    """meta_schedule's default space can fail inside TVM on some kernels (a check in a
    schedule primitive): the task keeps its template trials, says why it stopped, and the
    other tasks are still tuned."""
    from relay_tvm.tune import tuner

    real = tuner._Search._batch
    failed = []

    def batch(self, task, space, n, done, key):
        if key[1] == "default" and "dense" in task.name:
            failed.append(task.name)
            raise ValueError("Check failed: (var.has_value()) is false: TensorRegion pattern")
        return real(self, task, space, n, done, key)

    monkeypatch.setattr(tuner._Search, "_batch", batch)
    mod, params = _model(8)
    (dense,) = [t for t in tune.extract_tasks(mod, "llvm", params) if t.name == "fused_nn_dense"]
    points = len(assignments(knob_space(dense, HOST)[1])) - 1
    assert points < 8  # so the dense task goes on to the default space
    with pytest.warns(UserWarning, match="default space failed"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, max_trials_per_task=8,
                        num_trials_per_iter=8, seed=0, evaluator=FAST)
    assert failed == ["fused_nn_dense"]
    with open(tmp_path / MANIFEST) as f:
        states = {s["name"]: s for s in json.load(f)["tasks"].values()}
    conv, dense = states["fused_nn_contrib_conv2d_NCHWc_nn_relu"], states["fused_nn_dense"]
    assert dense["exhausted"] and "TensorRegion pattern" in dense["default_space_error"]
    assert dense["trials"] == points and dense["errors"] == 0  # its template points only
    assert conv["trials"] == 8 and "default_space_error" not in conv


def test_request_stop_ends_at_a_batch_boundary_and_resumes(tmp_path):
    """request_stop() (the CLI's Ctrl-C) ends tuning with KeyboardInterrupt after the batch in
    flight, from Python code; the work directory is saved and a second run finishes the rest
    without re-measuring the untuned baselines or the first batch."""
    mod, params = _model(8)
    events = []

    def progress(e):
        events.append(e)
        if e["event"] == "batch":
            tune.request_stop()

    with pytest.raises(KeyboardInterrupt):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, max_trials_per_task=8,
                        num_trials_per_iter=4, seed=0, evaluator=FAST, progress=progress)
    assert [e["event"] for e in events].count("batch") == 1
    with open(tmp_path / MANIFEST) as f:
        first = {k: s.get("trials", 0) for k, s in json.load(f)["tasks"].items()}
    assert sorted(first.values())[-1] > 0 and sum(first.values()) <= 4  # one batch, saved
    again = []
    tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, max_trials_per_task=8,
                    num_trials_per_iter=4, seed=0, evaluator=FAST, progress=again.append)
    assert not any(e["event"] == "untuned" for e in again)  # the baselines were kept
    with open(tmp_path / MANIFEST) as f:
        second = {k: s.get("trials", 0) for k, s in json.load(f)["tasks"].items()}
    assert all(second[k] >= first[k] for k in first) and sum(second.values()) > sum(
        first.values())


def test_progress_is_printed_by_default_and_silenced_by_none(tmp_path, capsys):
    """tune_relay without ``progress=`` prints ``[tune]`` lines on stderr (new-user finding:
    it used to be silent unless given a printer); ``progress=None`` is silent."""
    mod, params = _model(8)
    tune.tune_relay(mod, params, "llvm", str(tmp_path / "a"), 2, num_trials_per_iter=2, seed=0,
                    evaluator=FAST)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("[tune]")]
    assert any("untuned" in ln for ln in lines) and any(" trials, best " in ln for ln in lines)
    # each line names the kernel's output shape (kernels of one name differ by it), and
    # times under 0.1 ms are given in microseconds (0.0009 ms used to print as 0.0000 ms)
    assert any("fused_nn_dense (1x32)" in ln for ln in lines), lines
    assert not any("0.0000 ms" in ln for ln in lines)
    from relay_tvm.tune.progress import _ms

    assert (_ms(0.00094), _ms(0.25), _ms(float("nan"))) == ("940 ns", "0.250 ms", "? ms")
    assert (_ms(0.0123), _ms(0.00004)) == ("12.3 us", "40 ns")
    tune.tune_relay(mod, params, "llvm", str(tmp_path / "b"), 2, num_trials_per_iter=2, seed=0,
                    evaluator=FAST, progress=None)
    assert "[tune]" not in capsys.readouterr().err


def test_progress_tells_apart_kernels_of_one_name_and_output_shape(tmp_path, capsys):
    """Two convolutions with the same output shape but other input channels used to print
    the same progress line; their input shapes (data, weights) are added then, and only then
    (the model of one conv2d and one dense prints as before)."""
    from relay_tvm.tune.tuner import task_inputs, task_labels, task_shape

    x = relay.var("x", shape=(1, 8, 14, 14))
    w1, w2 = relay.var("w1", shape=(16, 8, 3, 3)), relay.var("w2", shape=(16, 16, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1)))
    y = relay.nn.relu(relay.nn.conv2d(y, w2, padding=(1, 1)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w1, w2], y)))
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((16, 8, 3, 3)).astype("float32"),
              "w2": rng.standard_normal((16, 16, 3, 3)).astype("float32")}
    convs = [t for t in tune.extract_tasks(mod, "llvm", params) if "conv2d" in t.name]
    assert len(convs) == 2 and len({(t.name, task_shape(t)) for t in convs}) == 1
    # the inputs: data and the packed weights, of 8 and 16 input channels
    weights = [task_inputs(t).split(", ")[1] for t in convs]
    assert [int(np.prod([int(d) for d in w.split("x")])) for w in weights] == [16 * 8 * 9,
                                                                              16 * 16 * 9]
    with pytest.warns(UserWarning, match="ran out before any candidate was measured"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, time_budget_s=1e-3,
                        evaluator=FAST)  # measures the untuned schedules only
    lines = [ln.split(": untuned")[0] for ln in capsys.readouterr().err.splitlines()
             if ln.startswith("[tune]") and ": untuned " in ln]
    assert lines == [f"[tune] {t.name} ({task_shape(t)} <- {task_inputs(t)})" for t in convs]
    mod2, params2 = _model(8)
    labels = task_labels(tune.extract_tasks(mod2, "llvm", params2))
    assert not any("inputs" in lab for lab in labels.values())
    assert {"task": "fused_nn_dense", "shape": "1x32"} in labels.values()


def test_time_budget_stops_before_searching(tmp_path):
    mod, params = _model(8)
    events = []
    with pytest.warns(UserWarning, match="ran out before any candidate was measured"):
        db = tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, time_budget_s=1e-3,
                             evaluator=FAST, progress=events.append)
    assert {e["event"] for e in events} == {"untuned", "task"}
    with open(tmp_path / MANIFEST) as f:
        states = json.load(f)["tasks"].values()
    assert all(s["trials"] == 0 and s["stopped"] == "time budget" for s in states)
    assert len(db) == 2  # the untuned measurement of each kernel


def test_time_budget_that_ends_the_search_says_which_tasks_are_short(tmp_path, monkeypatch):
    """A time budget that runs out after some measurements: the run ended with "tuned in N s:
    R records" only (fresh-user trial); a warning now counts the tasks short of their share.
    The clock jumps past the deadline after the first measured batch (a deterministic stand-in
    for a slow machine)."""
    import relay_tvm.tune.tuner as tuner

    jump = [0.0]

    class Clock:  # the tuner's view of the time module only
        def __getattr__(self, name):
            return getattr(time, name)

        def monotonic(self):
            return time.monotonic() + jump[0]

    monkeypatch.setattr(tuner, "time", Clock())

    def progress(e):
        if e["event"] == "batch":
            jump[0] = 1e6

    mod, params = _model(8)
    with pytest.warns(UserWarning, match=r"ran out with 2 of 2 tasks short of their share of "
                                         r"trials \(.*fused_nn.*\); run again to go on"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 16, time_budget_s=3600,
                        num_trials_per_iter=2, evaluator=FAST, progress=progress)


def test_knob_assignments():
    from relay_tvm.tune.space import assignments

    space = [("a", [4, 8, 16], 8), ("b", [1, 2], 1)]
    full = assignments(space)
    assert full[0] == {"a": 8, "b": 1} and len(full) == 6
    assert sorted((p["a"], p["b"]) for p in full) == [(a, b) for a in (4, 8, 16) for b in (1, 2)]
    big = [(f"k{i}", [1, 2, 3], 1) for i in range(6)]  # 729 assignments
    some = assignments(big, max_points=10, seed=3)
    assert len(some) == 10 and some[0] == {f"k{i}": 1 for i in range(6)}
    assert len({tuple(sorted(p.items())) for p in some}) == 10
    assert some == assignments(big, max_points=10, seed=3) != assignments(big, 10, seed=4)


# ---- which record a build applies (no measurement: records with given times) ---------------


def _conv_task(mod, params):
    return [t for t in tune.extract_tasks(mod, "llvm", params) if "conv2d" in t.name][0]


def _record(db, task, sch, secs, tgt=HOST):
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo
    from tvm.s_tir.meta_schedule.database import TuningRecord

    db.commit_tuning_record(TuningRecord(sch.trace, db.commit_workload(task.mod), [secs], tgt,
                                         ArgInfo.from_prim_func(sch.mod["main"])))


def _other_knobs(task):
    from relay_tvm.tune.space import assignments, knob_space

    _, space = knob_space(task, HOST)
    return assignments(space)[1]


def _tuned_candidate(task, knobs):
    from relay_tvm.tune.space import apply_template

    sch = tvm.s_tir.Schedule(task.mod)
    apply_template(sch, task, HOST, knobs)
    return sch


@pytest.mark.parametrize("tuned_secs, used", [(2e-4, False), (0.5e-4, True)])
def test_a_slower_tuned_record_is_not_used(tuned_secs, used):
    from tvm.s_tir.meta_schedule.database import MemoryDatabase

    mod, params = _model()
    task = _conv_task(mod, params)
    knobs = _other_knobs(task)
    db = MemoryDatabase()
    _record(db, task, untuned_candidate(task, HOST), 1e-4)
    _record(db, task, _tuned_candidate(task, knobs), tuned_secs)
    lib, base = _build(mod, params, db), _build(mod, params)
    name = "tvmgen_default_" + task.name
    # the untuned record won when the tuned one is slower: named apart (":untuned") so that
    # `compile --tuning-db` counts only tuned schedules chosen over it
    assert lib.kernels[name].schedule_rule == "database:conv2d_NCHWc" + (
        "" if used else ":untuned")
    same = tvm_ffi.structural_equal(lib.kernels[name].prim_func, base.kernels[name].prim_func)
    assert same == (not used)
    x = _x()
    np.testing.assert_allclose(_run(lib, x), _run(base, x), rtol=1e-5,
                               atol=1e-5 * float(np.abs(_run(base, x)).max()))


def test_untuned_record_stands_for_today_s_template_defaults():
    """The untuned schedule's record (committed by every tuning run) means "the template's
    defaults": a database from an older relay_tvm, whose defaults were other knobs, gets
    today's defaults, not the old ones replayed."""
    from tvm.s_tir.meta_schedule.database import MemoryDatabase

    from relay_tvm.tune.space import apply_template

    mod, params = _model()
    task = _conv_task(mod, params)
    old = tvm.s_tir.Schedule(task.mod)
    apply_template(old, task, HOST, _other_knobs(task), untuned=True)
    db = MemoryDatabase()
    _record(db, task, old, 1e-4)
    lib, base = _build(mod, params, db), _build(mod, params)
    name = "tvmgen_default_" + task.name
    assert lib.kernels[name].schedule_rule == "database:conv2d_NCHWc:untuned"
    assert tvm_ffi.structural_equal(lib.kernels[name].prim_func, base.kernels[name].prim_func)


def test_records_tuned_for_another_cpu_are_not_applied():
    """A database tuned with -mcpu=haswell (AVX2 tiles) is not replayed on another CPU: one
    warning, and the kernels keep their untuned schedules."""
    from tvm.s_tir.meta_schedule.database import MemoryDatabase

    mod, params = _model()
    task = _conv_task(mod, params)
    other = make_target("llvm -mcpu=haswell" if HOST.attrs.get("mcpu") != "haswell"
                        else "llvm -mcpu=skylake-avx512")
    db = MemoryDatabase()
    _record(db, task, _tuned_candidate(task, _other_knobs(task)), 1e-9, tgt=other)
    with pytest.warns(UserWarning, match="tuned for another target .*mcpu"):
        lib = _build(mod, params, db)
    with pytest.warns(UserWarning, match="tuned for another target"):  # every build says it
        _build(mod, params, db)
    base = _build(mod, params)
    name = "tvmgen_default_" + task.name
    assert lib.kernels[name].schedule_rule == base.kernels[name].schedule_rule
    assert tvm_ffi.structural_equal(lib.kernels[name].prim_func, base.kernels[name].prim_func)


def test_record_of_a_template_that_no_longer_fits_is_skipped():
    from tvm.s_tir.meta_schedule.database import MemoryDatabase

    mod, params = _model()
    task = _conv_task(mod, params)
    db = MemoryDatabase()
    sch = untuned_candidate(task, HOST)
    # a record claiming knob values this instance does not offer
    sch.annotate(sch.get_sblock("root"), TEMPLATE_ANNOTATION,
                 template_spec("conv2d_NCHWc", {"wb": 999}))
    _record(db, task, sch, 1e-9)
    lib, base = _build(mod, params, db), _build(mod, params)
    name = "tvmgen_default_" + task.name
    assert lib.kernels[name].schedule_rule == base.kernels[name].schedule_rule


# ---- bad input ---------------------------------------------------------------------------


def test_unknown_target(tmp_path):
    mod, params = _model(8)
    with pytest.raises(TuningError, match="target"):
        tune.tune_relay(mod, params, "llvmx -mcpu=nothing", str(tmp_path), 4)
    with pytest.raises(TuningError, match="target"):
        tune.extract_tasks(mod, "no-such-target", params)


def test_local_runner_refuses_another_architecture(tmp_path):
    import platform

    mod, params = _model(8)
    other = "aarch64" if platform.machine().lower() in ("x86_64", "amd64") else "x86_64"
    with pytest.raises(TuningError, match=f"builds {other} code.*over TVM RPC"):
        tune.tune_relay(mod, params, f"llvm -mtriple={other}-linux-gnu", str(tmp_path), 4)
    assert not os.listdir(tmp_path)  # refused before anything was measured or written


@pytest.mark.parametrize("kw, match", [
    (dict(strategy="genetic"), r"strategy='genetic' is not one of evolutionary, replay-trace"),
    (dict(cost_model="mlp"), r"cost_model='mlp' .* needs PyTorch"),
    (dict(cost_model="gbm"), r"cost_model='gbm' is not one of xgb, random"),
])
def test_unknown_search_options_are_refused_before_measuring(tmp_path, kw, match):
    """An unknown strategy failed in meta_schedule's ValueError after the untuned kernels were
    measured; cost_model='mlp' in "No module named 'torch'" (fresh-user trial)."""
    mod, params = _model(8)
    with pytest.raises(TuningError, match=match):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 4, **kw)
    assert not os.listdir(tmp_path)  # nothing measured or written


def test_dynamic_shapes_are_refused_naming_the_kernel(tmp_path):
    """A model over relay.Any() failed in meta_schedule's FFI with a raw TypeError (fresh-user
    trial): a TuningError says tuning needs static shapes, before anything is measured."""
    x = relay.var("x", shape=(relay.Any(), 16))
    w = relay.var("w", shape=(8, 16))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    with pytest.raises(TuningError, match=r"every kernel has dynamic shapes \(fused_nn_dense\)"
                                          r".*static shapes only"):
        tune.tune_relay(mod, {"w": np.ones((8, 16), "float32")}, "llvm", str(tmp_path), 4)
    records = tmp_path / "database_tuning_record.json"
    assert not records.exists() or records.stat().st_size == 0  # nothing measured


def test_kernels_of_data_dependent_shapes_are_left_untuned(tmp_path):
    """A static model with argwhere: its kernel after argwhere has a shape known at run time
    only (a raw ScheduleError / FFI TypeError; second fresh-user trial). It is left untuned
    with a warning; the dense kernel is tuned."""
    y = relay.var("y", shape=(6,))
    w = relay.var("w", shape=(4, 6))
    out = relay.Tuple([relay.sum(relay.argwhere(y > relay.const(0.5))),
                       relay.nn.dense(relay.expand_dims(y, 0), w)])
    mod = relay.IRModule.from_expr(relay.Function([y, w], out))
    with pytest.warns(UserWarning, match=r"kernels \['fused_sum'\] have shapes known only at "
                                         r"run time and are not tuned"):
        db = tune.tune_relay(mod, {"w": np.ones((4, 6), "float32")}, "llvm", str(tmp_path), 2)
    assert len(db) >= 1  # the dense kernel's records


def test_budget_zero_warns_and_measures_nothing(tmp_path):
    mod, params = _model(8)
    with pytest.warns(UserWarning, match="budget of 0"):
        db = tune.tune_relay(mod, params, "llvm", str(tmp_path), 0)
    assert len(db) == 0
    with pytest.raises(TuningError, match="max_trials_global must be an integer >= 0"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), -3)
    with pytest.raises(TuningError, match="time_budget_s"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 4, time_budget_s=0)


def test_resume_measures_again_the_tasks_whose_records_were_lost(tmp_path):
    """From a new-user trial: with database_tuning_record.json deleted (or truncated) the
    manifest still counted every task as measured, so tune said "done" and compile built
    untuned; now those tasks are reset and measured again, with one warning."""
    mod, params = _model(8)
    wd = str(tmp_path)

    def tune_it():
        events = []
        db = tune.tune_relay(mod, params, "llvm", wd, 2, max_trials_per_task=1,
                             num_trials_per_iter=1, seed=0, evaluator=FAST,
                             progress=events.append)
        last[:] = events
        return db, {e["event"] for e in events}

    def records_expected():  # each task's trials and the last run's untuned records
        with open(os.path.join(wd, MANIFEST)) as f:
            states = json.load(f)["tasks"].values()
        return sum(s["trials"] for s in states) + _untuned_records(last)

    last = []

    db, _ = tune_it()
    n = len(db)
    assert n >= 2 and n == records_expected()
    _, events = tune_it()
    assert events == {"skip"}
    for lost in ("delete", "truncate"):
        if lost == "delete":
            os.remove(os.path.join(wd, RECORDS))
        else:
            open(os.path.join(wd, RECORDS), "w").close()
        with pytest.warns(UserWarning, match="2 of 2 tasks that relay_tvm_tuning.json counts "
                                             "as measured have no record"):
            db, events = tune_it()
        assert "untuned" in events and "skip" not in events
        assert len(db) == records_expected()
        with open(os.path.join(wd, MANIFEST)) as f:
            states = json.load(f)["tasks"].values()
        assert all(s["baseline"] and s["trials"] >= 1 for s in states)


def test_work_dir_that_cannot_be_created(tmp_path):
    mod, params = _model(8)
    (tmp_path / "x.npy").write_bytes(b"")
    bad = str(tmp_path / "x.npy" / "sub")
    with pytest.raises(TuningError, match=f"work dir {bad!r} cannot be created: Not a "
                                          f"directory"):
        tune.tune_relay(mod, params, "llvm", bad, 4)
    with pytest.raises(TuningError, match="is a file, not a directory"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path / "x.npy"), 4)
    # fresh-user trial: "" wrote the database into the current directory, None was a TypeError
    for given, match in (("", "expected a directory path, got ''"),
                         (None, "expected a directory path .* got NoneType")):
        with pytest.raises(TuningError, match=match):
            tune.tune_relay(mod, params, "llvm", given, 4)
    # and a run refused for its arguments leaves no directory behind
    with pytest.raises(TuningError):
        tune.tune_relay(mod, params, "llvm", str(tmp_path / "new"), -1)
    assert not (tmp_path / "new").exists()
    with pytest.raises(TuningError, match=r"measures CPU \(llvm\) targets; 'c' is not one"):
        tune.tune_relay(mod, params, "c", str(tmp_path / "new"), 4)


def test_work_dir_of_another_model_or_target(tmp_path):
    mod, params = _model(8)
    with pytest.warns(UserWarning):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 0)
    other, oparams = _model(16)
    with pytest.raises(TuningError, match="another model"):
        tune.tune_relay(other, oparams, "llvm", str(tmp_path), 0)
    with pytest.raises(TuningError, match="was tuned for target"):
        tune.tune_relay(mod, params, "llvm -mcpu=skylake-avx512", str(tmp_path), 0)


def test_corrupted_database_lines(tmp_path):
    from relay_tvm.tune.workdir import WORKLOADS, load_database

    mod, params = _model(8)
    with pytest.warns(UserWarning):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 0)
    task = _conv_task(mod, params)
    db = load_database(str(tmp_path))
    _record(db, task, untuned_candidate(task, HOST), 1e-4)
    rec_path = tmp_path / RECORDS
    good = rec_path.read_text()
    assert good.count("\n") == 1
    # a run killed while writing: the cut-off last line is dropped with a warning
    rec_path.write_text(good + good[: len(good) // 2])
    with pytest.warns(UserWarning, match="cut short"):
        db = load_database(str(tmp_path))
    assert len(db) == 1 and rec_path.read_text() == good
    # a damaged line in the middle is an error naming the file and line
    rec_path.write_text("[0, {not json\n" + good)
    with pytest.raises(TuningError, match=r"database_tuning_record.json line 1: not valid JSON"):
        load_database(str(tmp_path))
    rec_path.write_text("[7, {}]\n")
    with pytest.raises(TuningError, match="line 1: expected \\[workload index"):
        load_database(str(tmp_path))
    # valid JSON of the wrong shape (meta_schedule's reader gave no file or line for it)
    rec_path.write_text(good + "[0, 2]\n")
    with pytest.raises(TuningError, match="line 2: expected \\[workload index < 1, record"):
        load_database(str(tmp_path))
    # blank lines hold nothing but crashed meta_schedule's reader (the process died): dropped
    rec_path.write_text("\n" + good + "\n\n")
    with pytest.warns(UserWarning, match="dropping 3 blank line"):
        db = load_database(str(tmp_path))
    assert len(db) == 1 and rec_path.read_text() == good
    wkl_good = (tmp_path / WORKLOADS).read_text()
    (tmp_path / WORKLOADS).write_text(wkl_good + "[1, 2, 3]\n")
    with pytest.raises(TuningError, match="database_workload.json line 2: expected .*delete the "
                                          "whole work directory"):
        load_database(str(tmp_path))
    (tmp_path / WORKLOADS).write_text("garbage\n")
    with pytest.raises(TuningError, match="database_workload.json line 1"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 0)


def test_missing_or_truncated_workload_file_is_named(tmp_path):
    """From a new-user trial: with database_workload.json deleted or cut short, tune blamed
    line 1 of database_tuning_record.json ("delete that line"); tune and load_database (compile
    --tuning-db) now both name the workload file."""
    from relay_tvm.tune.workdir import WORKLOADS, load_database

    mod, params = _model(8)
    with pytest.warns(UserWarning):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 0)
    db = load_database(str(tmp_path))
    for task in tune.extract_tasks(mod, "llvm", params)[:2]:
        _record(db, task, untuned_candidate(task, HOST), 1e-4)
    wpath = tmp_path / WORKLOADS
    good = wpath.read_text()
    assert good.count("\n") == 2
    cases = [("is missing", None), ("has 0 workload line", ""),
             ("has 1 workload line", good.splitlines(keepends=True)[0])]
    for says, text in cases:
        if text is None:
            wpath.unlink()
        else:
            wpath.write_text(text)
        match = f"{WORKLOADS} {says}.*, but the 2 record\\(s\\) of {RECORDS} refer to workload index"
        with pytest.raises(TuningError, match=match) as e:
            tune.tune_relay(mod, params, "llvm", str(tmp_path), 4)
        assert "delete that line" not in str(e.value)
        with pytest.raises(TuningError, match=match):
            load_database(str(tmp_path))


def test_load_database_of_nothing(tmp_path):
    from relay_tvm.tune.workdir import load_database

    with pytest.raises(TuningError, match="no such directory"):
        load_database(str(tmp_path / "missing"))
    (tmp_path / "model.py").write_text("")
    with pytest.raises(TuningError, match="is a file, not a directory"):
        load_database(str(tmp_path / "model.py"))
    with pytest.raises(TuningError, match="not a tuning work directory"):
        load_database(str(tmp_path))


def test_build_takes_a_work_dir_path_and_refuses_other_databases(tmp_path):
    """relay.build(database=...) and the PassContext config "relay.backend.tuning_database"
    open a work directory given as a path (str or os.PathLike) and refuse anything else that
    is not a meta_schedule Database (they used to build untuned without a word)."""
    from relay_tvm.tune.workdir import load_database

    mod, params = _model(8)
    with pytest.warns(UserWarning):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 0)
    task = _conv_task(mod, params)
    _record(load_database(str(tmp_path)), task, untuned_candidate(task, HOST), 1e-4)

    def tuned_kernels(lib):
        return [k for k in lib.kernels.values() if k.schedule_rule.startswith("database")]

    for path in (str(tmp_path), tmp_path):
        assert len(tuned_kernels(_build(mod, params, database=path))) == 1
        with relay.transform.PassContext(
                opt_level=3, config={"relay.backend.tuning_database": path}):
            lib = relay.build(mod, "llvm", params=params)
        assert len(tuned_kernels(lib)) == 1
    with pytest.raises(TuningError, match="no such directory"):
        _build(mod, params, database=str(tmp_path / "nonexistent"))
    with pytest.raises(TuningError, match="build: database: expected a tvm.s_tir.meta_schedule "
                                          "Database or the path .* got int 5"):
        _build(mod, params, database=5)
    with pytest.raises(TuningError, match="'relay.backend.tuning_database': expected .* got "
                                          "list"):
        with relay.transform.PassContext(
                opt_level=3, config={"relay.backend.tuning_database": [1]}):
            relay.build(mod, "llvm", params=params)
    with pytest.raises(TuningError, match="got int 5"):
        relay.vm.compile(mod, "llvm", params=params, database=5)


# ---- RPC --------------------------------------------------------------------------------


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port, timeout=120):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def _stop(p):
    """Stop a process started in its own session and its children (tracker and server run
    in a popen_worker child)."""
    import signal

    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            if sig == signal.SIGTERM:
                os.killpg(p.pid, signal.SIGKILL)  # children that outlive the parent
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


@pytest.fixture(scope="module")
def rpc_tracker():
    """A TVM RPC tracker and one server (key relay-test) on 127.0.0.1, stopped afterwards."""
    port = _free_port()
    env = dict(os.environ)
    tracker = subprocess.Popen([sys.executable, "-m", "tvm.exec.rpc_tracker", "--host",
                                "127.0.0.1", "--port", str(port), "--port-end", str(port + 1)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                               start_new_session=True)
    server = None
    try:
        _wait_port(port)
        sport = _free_port()
        server = subprocess.Popen([sys.executable, "-m", "tvm.exec.rpc_server", "--host",
                                   "127.0.0.1", "--port", str(sport), "--port-end",
                                   str(sport + 1), "--tracker",
                                   f"127.0.0.1:{port}", "--key", "relay-test"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                  start_new_session=True)
        t0 = time.monotonic()
        while True:
            try:
                tune.check_rpc(RPCSettings("127.0.0.1", port, "relay-test"))
                break
            except TuningError:
                if time.monotonic() - t0 > 120 or server.poll() is not None:
                    raise
                time.sleep(1)
        yield port
    finally:
        if server is not None:
            _stop(server)
        _stop(tracker)


@pytest.mark.slow
def test_rpc_loopback_measures_every_trial(rpc_tracker, tmp_path):
    x = relay.var("x", shape=(4, 64))
    w = relay.var("w", shape=(48, 64))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x, w], relay.nn.dense(x, w))))
    params = {"w": np.random.default_rng(2).standard_normal((48, 64)).astype("float32")}
    rpc = RPCSettings("127.0.0.1", rpc_tracker, "relay-test")
    events = []
    db = tune.tune_relay(mod, params, "llvm", str(tmp_path), 4, num_trials_per_iter=4, seed=0,
                         runner=rpc, evaluator=FAST, progress=events.append)
    with open(tmp_path / MANIFEST) as f:
        (state,) = json.load(f)["tasks"].values()
    assert state["baseline"] and state["errors"] == 0
    assert state["trials"] == 4 or state.get("exhausted")
    recs = db.get_all_tuning_records()
    # + the untuned measurement, + one more each time it was timed faster again
    assert len(recs) == state["trials"] + _untuned_records(events)
    assert all(0 < float(r.run_secs[0]) < 1.0 for r in recs)
    lib = _build(mod, params, db)
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    xv = np.random.default_rng(3).standard_normal((4, 64)).astype("float32")
    gm.set_input("x", xv)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), xv @ params["w"].T, rtol=1e-4,
                               atol=1e-4)


def test_rpc_key_nobody_serves(rpc_tracker):
    with pytest.raises(TuningError, match="no server serves key 'nobody'"):
        tune.check_rpc(RPCSettings("127.0.0.1", rpc_tracker, "nobody"))


def test_rpc_tracker_down(tmp_path):
    mod, params = _model(8)
    port = _free_port()
    with pytest.raises(TuningError, match="not reachable"):
        tune.tune_relay(mod, params, "llvm", str(tmp_path), 4,
                        runner=RPCSettings("127.0.0.1", port, "k"))
    with pytest.raises(TuningError, match="HOST:PORT"):
        RPCSettings.parse("localhost", "k")


def test_extracted_tasks_have_the_0_19_extracted_task_names():
    """tvm.relay 0.19's meta_schedule ``ExtractedTask`` had ``task_name``, ``target`` and
    ``dispatched`` (from a new-user trial: scripts reading them failed)."""
    mod, params = _model()
    tasks = tune.extract_tasks(mod, "llvm", params)
    names = [t.task_name for t in tasks]
    assert names == [t.name for t in tasks] and "fused_nn_dense" in names
    for t in tasks:
        assert isinstance(t.target, tvm.target.Target)
        assert str(t.target) == str(HOST)
        assert len(t.dispatched) == 1 and t.dispatched[0] is t.mod
        for name in ("task_name", "target", "dispatched"):
            with pytest.raises(AttributeError):
                setattr(t, name, None)


def test_tune_relay_on_a_gpu_target_says_so_before_asking_for_an_arch(tmp_path):
    mod, params = _model()
    for target in ("cuda", "cuda -arch=sm_80", {"kind": "cuda"}):
        with pytest.raises(TuningError, match="GPU tuning is not supported yet"):
            tune.tune_relay(mod, params, target, str(tmp_path), 4)

"""Tune a model's kernels with ``relay_tvm.tune`` (TVM's meta_schedule) and build with the result.

Without tuning, every kernel gets a schedule from a template sized by a model of the CPU
(vector width, registers, caches). Tuning *measures* other choices of the template's knobs —
tile sizes, unrolling, packing widths — and keeps the fastest, in a database on disk. This page

1. extracts the tuning tasks of a small network (one per distinct kernel);
2. tunes them with a tiny budget, printing meta_schedule's progress;
3. runs the tuner again on the same work directory to show that it resumes (nothing is measured
   twice);
4. builds with the database, counts the kernels scheduled from it, and checks the output
   against the untuned build and NumPy.

Tuning for real takes minutes to hours
(``relay-tvm tune --zoo resnet18_v1 --minutes 20 --work-dir r18-tuning/``). Here the budget is
``RELAY_TVM_TUNE_TRIALS`` measurements in all (default 64; ``--small`` /
``RELAY_TVM_TUTORIAL_SMALL=1``: 8 and a smaller network). Timings on a shared machine are noisy;
the untuned template is measured and stored too, so a build never picks a record slower than it.

What you should see: the tasks, a progress line per batch of measurements (and a line per
re-timing of a task's untuned schedule, which can turn out faster the second time on a busy
machine), ``resumed: 0 new measurements``, the database report (``A of M kernels use a tuned schedule ...; B keep the
untuned schedule (no tuned record measured faster, or none searched)``: A + B are the tuned
tasks) and ``max error vs NumPy`` below 1e-3.
"""

import os
import sys
import tempfile

import numpy as np
import tvm

import relay_tvm as relay
from relay_tvm import tune
from relay_tvm.tune.measure import evaluator_config
from relay_tvm.tune.tuner import has_reduction

SMALL = "--small" in sys.argv or os.environ.get("RELAY_TVM_TUTORIAL_SMALL") == "1"
TRIALS = int(os.environ.get("RELAY_TVM_TUNE_TRIALS", 8 if SMALL else 64))
C, H = (8, 8) if SMALL else (32, 28)  # channels, height = width

# ---- The model: conv 3x3 + relu, then a dense layer ---------------------------------------------
x = relay.var("x", shape=(1, C, H, H))
w = relay.var("w", shape=(2 * C, C, 3, 3))
w2 = relay.var("w2", shape=(10, 2 * C * H * H))
y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
y = relay.nn.dense(relay.reshape(y, (1, -1)), w2)
mod = relay.IRModule.from_expr(relay.Function([x, w, w2], y))
rng = np.random.default_rng(0)
params = {"w": rng.standard_normal((2 * C, C, 3, 3)).astype("float32"),
          "w2": rng.standard_normal((10, 2 * C * H * H)).astype("float32") * 0.01}

# ---- 1. Tasks ---------------------------------------------------------------------------------
# A task is one kernel as build would compile it (after the opt-level-3 passes and fusion), with
# its weight: how many times the model calls it. Kernels with a reduction (convolutions, dense,
# pooling, ...) are tuned; pure data movement such as layout transforms is not.
tasks = tune.extract_tasks(mod, "llvm", params)
for t in tasks:
    print(f"task {t.name} (called {t.weight}x){'' if has_reduction(t) else ': not tuned'}")

# ---- 2. Tune ----------------------------------------------------------------------------------
# The work directory holds the database (JSON lines) and logs; give the same one again to resume.
# (here a temporary folder, removed when the script ends; give a folder of your own to keep it)
_tmp = tempfile.TemporaryDirectory(prefix="relay_tvm_tune_")
work_dir = os.path.join(_tmp.name, "tuning")


def progress(event):
    if event["event"] == "untuned":
        print(f"  {event['task']}: untuned template {event['ms']:.4f} ms")
    elif event["event"] == "batch":
        print(f"  {event['task']}: {event['trials']}/{event['planned']} trials, best "
              f"{event['best_ms']:.4f} ms")
    elif event["event"] == "recheck":
        # the untuned schedule is timed again once the search has beaten it (and at the end):
        # a faster time is stored too, and the build picks the fastest record, so a kernel whose
        # untuned schedule comes out faster on this second look keeps it
        print(f"  {event['task']}: untuned template timed again {event['ms']:.4f} ms "
              f"(was {event['was_ms']:.4f} ms)")


# A short evaluation per candidate (2 runs, at least 5 ms) keeps the tutorial fast; the default
# measures longer and is steadier.
fast = evaluator_config(number=2, repeat=1, min_repeat_ms=5)
db = tune.tune_relay(mod, params, "llvm", work_dir, TRIALS, num_trials_per_iter=8, seed=0,
                     evaluator=fast, progress=progress)

# ---- 3. Resume --------------------------------------------------------------------------------
events = []
tune.tune_relay(mod, params, "llvm", work_dir, TRIALS, num_trials_per_iter=8, seed=0,
                evaluator=fast, progress=events.append)
print(f"resumed: {sum(e['event'] == 'batch' for e in events)} new measurements")

# ---- 4. Build with the database and check -----------------------------------------------------
# ``compile_relay`` is relay.build at opt level 3 with the database applied.
tuned = tune.compile_relay(db, mod, "llvm", params)
with relay.transform.PassContext(opt_level=3):
    untuned = relay.build(mod, "llvm", params=params)
# database_report: which kernels run a tuned schedule, which keep their untuned one (measured
# fastest: its record in the database is the untuned baseline), and which have no record
report = tune.database_report(tuned)
for line in report.format(work_dir):
    print(line)

xv = rng.standard_normal((1, C, H, H)).astype("float32")
outs, times = [], []
for lib in (untuned, tuned):
    gm = relay.runtime.GraphModule(lib["default"](tvm.cpu(0)))
    gm.set_input("x", xv)
    gm.run()
    outs.append(gm.get_output(0).numpy())
    times.append(gm.benchmark(repeat=20, number=1).median * 1e3)
print(f"latency: untuned {times[0]:.3f} ms, tuned {times[1]:.3f} ms (median of 20; noisy)")

xp = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1))).astype("float64")
conv = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + H, j:j + H], params["w"][:, :, i, j])
           for i in range(3) for j in range(3))
ref = np.maximum(conv, 0).reshape(1, -1) @ params["w2"].T.astype("float64")
err = max(float(np.abs(o - ref).max() / np.abs(ref).max()) for o in outs)
print(f"max error vs NumPy: {err:.2e} (relative to max |y|)")
assert err < 1e-3

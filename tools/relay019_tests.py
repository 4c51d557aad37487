"""Run TVM v0.19.0's own Relay tests (tests/python/relay) against relay_tvm.

Not part of CI: it needs TVM's v0.19.0 sources (a checkout, or a git directory holding the
tag). The tests are extracted to a temporary directory next to a conftest.py that imports
relay_tvm (which makes ``tvm.relay`` resolve to relay_tvm) and records every test's outcome;
each file runs in its own process under ``timeout`` (results so far count when it expires; an
expected failure, ``xfail``, that fails as declared counts as passed). Prints passed/collected
per file and the total, and writes a JSON report with every failure's first message line.

    python tools/relay019_tests.py PATH [--files GLOB ...] [--timeout S] [--json OUT]

PATH is a TVM checkout (with tests/python/relay) or a git directory that has the tag.
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TAG = "v0.19.0"
SUB = "tests/python/relay"

# Files that need TVM subsystems removed after 0.19 (or hardware), with the reason; they are
# run like the others but reported apart from the goal figure.
REMOVED = {
    "test_auto_scheduler_*.py": "auto_scheduler was removed from TVM",
    "test_autotvm_task_extraction.py": "autotvm was removed from TVM",
    "test_executor.py": "parametrized over the AOT executor (removed from TVM with microTVM)",
    "test_runtime.py": "parametrized over the C runtime, CRT (removed from TVM with microTVM)",
    "test_relay_te_compiler.py": "imports autotvm (removed from TVM) and the TE compiler",
    "test_pass_plan_devices.py": "VirtualDevice / device planning was removed from TVM",
    "test_external_codegen.py": "BYOC toolchains (external codegen) were removed from TVM",
    "test_json_runtime.py": "BYOC JSON runtime was removed from TVM",
    "test_pass_partition_graph.py": "BYOC toolchains (external codegen) were removed from TVM",
    "test_pass_collage_partition.py": "Collage (BYOC) was removed from TVM",
    "collage/*": "Collage (BYOC) was removed from TVM",
    "opencl_texture/*": "needs an OpenCL device",
    "test_pass_legalize_tensorcore.py": "needs CUDA tensor cores",
    "test_pipeline_executor.py": "the pipeline executor was removed from TVM",
    "test_custom_datatypes.py": "the custom datatype (Posit) library was removed from TVM",
    "test_used_memory_annotator.py": "VirtualDevice / device planning was removed from TVM",
    "test_target_hooks.py": "the target-hook (RelayToTIR) codegen was removed from TVM",
    "test_link_params.py": "link-params / AOT was removed from TVM",
    "test_pass_dead_code_elimination.py": "builds a tvm.target.VirtualDevice at module level "
                                          "(VirtualDevice was removed from TVM)",
    "test_roofline.py": "tvm.utils.roofline (peak-FLOPS / bandwidth measurement) was removed from TVM",
    "test_sparse_conv2d_convert.py": "tvm.topi.sparse (sparse kernels) was removed from TVM",
    "test_name_supply.py": "tests tvm.ir.supply.NameSupply (TVM IR, not Relay), removed from TVM",
}

CONFTEST = '''
import json, os, sys
sys.path.insert(0, {repo!r})
import relay_tvm  # noqa: F401  (installs the tvm.relay alias)
pytest_plugins = ["relay_tvm.compat.pytest_plugin"]

# test_op_level2.py (the nn operators) imports autotvm at module level for two Winograd tests;
# autotvm was removed from TVM. A stand-in module lets the file import: those tests fail on
# the first autotvm name they use, the others run (this harness only; relay_tvm has none).
import types, tvm
if not hasattr(tvm, "autotvm"):
    _autotvm = types.ModuleType("tvm.autotvm")
    def _removed(name):
        raise AttributeError(f"tvm.autotvm.{{name}}: autotvm was removed from TVM")
    _autotvm.__getattr__ = _removed
    sys.modules["tvm.autotvm"] = tvm.autotvm = _autotvm
# ... and imports tvm.topi.cuda's conv3d Winograd tile rule (TVM's CUDA topi was removed): a
# stand-in whose function fails when a (GPU Winograd) test calls it
try:
    import tvm.topi.cuda.conv3d_winograd  # noqa: F401
except ImportError:
    _cw = types.ModuleType("tvm.topi.cuda.conv3d_winograd")
    def _infer_tile_size(*args, **kwargs):
        raise RuntimeError("tvm.topi.cuda was removed from TVM")
    _cw._infer_tile_size = _infer_tile_size
    _cuda = sys.modules.get("tvm.topi.cuda") or types.ModuleType("tvm.topi.cuda")
    _cuda.conv3d_winograd = _cw
    sys.modules["tvm.topi.cuda"], sys.modules["tvm.topi.cuda.conv3d_winograd"] = _cuda, _cw
_OUT = os.environ["RELAY019_RESULT"]

def _row(row):
    # one JSON line per report, so a file killed by the timeout still leaves its results
    with open(_OUT, "a") as f:
        f.write(json.dumps(row) + "\\n")

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        msg = ""
        if hasattr(report, "wasxfail") and report.outcome == "skipped":
            # an expected failure that failed as declared: the test's expectation holds
            _row([report.nodeid, report.when, "passed", "xfail"])
            return
        if report.outcome == "failed":
            msg = str(getattr(report.longrepr, "reprcrash", None) and
                      report.longrepr.reprcrash.message or report.longrepr)[:300]
        _row([report.nodeid, report.when, report.outcome, msg])

def pytest_collectreport(report):
    if report.outcome == "failed":
        _row([report.nodeid, "collect", "failed", str(report.longrepr)[-600:]])
'''


def extract(src: Path, dest: Path) -> Path:
    """Copy tests/python/relay of ``src`` (checkout or git dir) under ``dest``."""
    if (src / SUB).is_dir():
        shutil.copytree(src / SUB, dest / SUB)
    else:
        archive = subprocess.run(["git", "--git-dir", str(src), "archive", f"refs/tags/{TAG}",
                                  SUB], check=True, capture_output=True).stdout
        subprocess.run(["tar", "x", "-C", str(dest)], input=archive, check=True)
    (dest / "conftest.py").write_text(CONFTEST.format(repo=str(REPO)))
    return dest / SUB


def removed_reason(rel: str) -> str | None:
    for pat, why in REMOVED.items():
        if fnmatch.fnmatch(rel, pat):
            return why
    return None


def summarize(rows):
    """passed, failed (incl. errors), skipped, collection failure message or None."""
    per = collections.OrderedDict()
    collect_err = None
    for nodeid, when, outcome, msg in rows:
        if when == "collect":
            collect_err = msg.strip().splitlines()[-1] if msg.strip() else "collection error"
            continue
        cur = per.get(nodeid)
        if outcome == "failed" or cur is None or cur == "passed" and outcome == "skipped":
            per[nodeid] = outcome if cur != "failed" else cur
    counts = collections.Counter(per.values())
    return counts["passed"], counts["failed"], counts["skipped"], collect_err


def run_file(root: Path, test: Path, timeout: float):
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    env = dict(os.environ, RELAY019_RESULT=str(out), PYTHONPATH=str(REPO), TVM_NUM_THREADS="1")
    t0 = time.time()
    proc = subprocess.run(["timeout", str(timeout), sys.executable, "-m", "pytest",
                           "-p", "no:cacheprovider", "-q", "-o", "addopts=",
                           str(test.relative_to(root))], cwd=root, env=env,
                          capture_output=True, text=True)
    secs = time.time() - t0
    rows = []
    for line in out.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # the last line of a killed run may be cut
            pass
    out.unlink(missing_ok=True)
    p, f, s, cerr = summarize(rows)
    timed_out = proc.returncode == 124
    return dict(file=str(test.relative_to(root / SUB)), passed=p, failed=f, skipped=s,
                collect_error=cerr, seconds=round(secs, 1), timed_out=timed_out,
                failures=[r for r in rows if r[2] == "failed"][:200])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="TVM checkout or git directory with tag v0.19.0")
    ap.add_argument("--files", nargs="*", default=["*.py"],
                    help="glob(s) relative to tests/python/relay (default: top-level *.py)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per file")
    ap.add_argument("--json", type=Path, help="write the per-file report here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="relay019_") as tmp:
        root = Path(tmp)
        tests = extract(args.src.resolve(), root)
        files = []  # in the order given (a glob's matches sorted)
        for g in args.files:
            for p in sorted(tests.glob(g)):
                if p.name.startswith("test_") and p.suffix == ".py" and p not in files:
                    files.append(p)
        report = []
        tot = collections.Counter()
        for path in files:
            r = run_file(root, path, args.timeout)
            r["removed_subsystem"] = removed_reason(r["file"])
            report.append(r)
            coll = r["passed"] + r["failed"] + r["skipped"]
            key = "removed" if r["removed_subsystem"] else "main"
            tot[key + "_passed"] += r["passed"]
            tot[key + "_collected"] += coll
            tot[key + "_import_fail"] += bool(r["collect_error"]) and coll == 0
            note = f"  IMPORT: {r['collect_error'][:110]}" if r["collect_error"] else ""
            if r["timed_out"]:
                note += f"  TIMEOUT after {args.timeout:.0f} s (counts so far)"
            print(f"{r['passed']:5d}/{coll:<5d} {r['file']}"
                  f"{'  [removed subsystem]' if r['removed_subsystem'] else ''}{note}",
                  flush=True)
            if args.json:
                args.json.write_text(json.dumps(report, indent=1))
    mp, mc = tot["main_passed"], tot["main_collected"]
    print(f"TOTAL (not needing removed subsystems): {mp}/{mc} passed "
          f"({100 * mp / max(mc, 1):.1f}%), {tot['main_import_fail']} files fail at import")
    print(f"needing removed subsystems: {tot['removed_passed']}/{tot['removed_collected']} passed, "
          f"{tot['removed_import_fail']} files fail at import")


if __name__ == "__main__":
    main()

"""Merge JSON reports of tools/relay019_tests.py (``--json``; e.g. shards run in parallel) into
a Markdown table: passed/collected per file, import failures with their reason, the total, and
the most frequent first failure lines.

    python tools/relay019_report.py OUT.md REPORT.json [REPORT.json ...] [--note TEXT]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("reports", type=Path, nargs="+")
    ap.add_argument("--note", default="", help="a line under the title (date, machine, ...)")
    ap.add_argument("--fallback", type=Path, help="an older report for files the reports lack "
                    "(marked as such in the table)")
    args = ap.parse_args(argv)
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from relay019_tests import removed_reason

    rows = {}
    for rep in args.reports:
        for r in json.loads(rep.read_text()):
            r["removed_subsystem"] = removed_reason(r["file"])  # the tool's current list
            rows[r["file"]] = r
    if args.fallback:
        for r in json.loads(args.fallback.read_text()):
            if r["file"] not in rows:
                r["removed_subsystem"] = removed_reason(r["file"])
                r["older"] = True
                rows[r["file"]] = r
    main_p = main_c = rem_p = rem_c = 0
    lines = ["# TVM v0.19.0 Relay tests under relay_tvm", ""]
    if args.note:
        lines += [args.note, ""]
    table = ["| file | passed | collected | note |", "|---|---:|---:|---|"]
    imports, clusters = [], collections.Counter()
    for name in sorted(rows):
        r = rows[name]
        coll = r["passed"] + r["failed"] + r["skipped"]
        note = []
        if r.get("removed_subsystem"):
            note.append(f"needs a removed subsystem: {r['removed_subsystem']}")
            rem_p, rem_c = rem_p + r["passed"], rem_c + coll
        else:
            main_p, main_c = main_p + r["passed"], main_c + coll
        if r.get("collect_error") and coll == 0:
            reason = r["collect_error"].replace("|", "/")[:150]
            note.append(f"import: {reason}")
            if not r.get("removed_subsystem"):
                imports.append((name, reason))
        if r.get("timed_out"):
            note.append("timed out (tests finished so far count)")
        if r.get("older"):
            note.append("from the older (fallback) run")
        for f in r.get("failures", []):
            if f[1] != "collect":
                clusters[f[3].splitlines()[0][:110] if f[3] else "?"] += 1
        table.append(f"| {name} | {r['passed']} | {coll} | {'; '.join(note)} |")
    pct = 100 * main_p / max(main_c, 1)
    older = sum(1 for r in rows.values() if r.get("older"))
    if older:
        lines += [f"{older} files come from the older (fallback) run: see the table.", ""]
    lines += [f"**{main_p} of {main_c} collected tests pass ({pct:.1f}%)** in the "
              f"{sum(1 for r in rows.values() if not r.get('removed_subsystem'))} files that "
              f"need no removed TVM subsystem; {len(imports)} of them fail at import. Files "
              f"needing removed subsystems: {rem_p} of {rem_c}.", ""]
    if imports:
        lines += ["## Files failing at import", ""]
        lines += [f"- {n}: {why}" for n, why in imports] + [""]
    lines += ["## Most frequent first failure lines", ""]
    lines += [f"- {n} x `{msg.replace('`', chr(39))}`" for msg, n in clusters.most_common(25)]
    lines += ["", "## Per file", ""] + table + [""]
    args.out.write_text("\n".join(lines))
    print(f"{main_p}/{main_c} ({pct:.1f}%), {len(imports)} import failures -> {args.out}")


if __name__ == "__main__":
    main()

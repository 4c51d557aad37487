"""Profiling reports (``tvm.runtime.profiling`` of TVM 0.19, which TVM 0.27 no longer has).

A :class:`Report` is what ``GraphModuleDebug.profile()`` (:mod:`relay_tvm.runtime.debugger`)
and ``VirtualMachineProfiler.profile()`` (:mod:`relay_tvm.runtime.profiler_vm`) return: one
row per kernel call (``calls``) with 0.19's column names ``"Name"``, ``"Duration (us)"``,
``"Percent"``, ``"Count"``, ``"Device"``, ``"Argument Shapes"``, the whole run per device
(``device_metrics``) and ``configuration``; ``table()``, ``csv()``, ``json()`` and
``Report.from_json``. Metric values are :class:`Duration` (``.microseconds``), :class:`Percent`
(``.percent``), :class:`Count` (``.count``) and :class:`Ratio` (``.ratio``), as 0.19's.

The times are measured by relay_tvm (wall clock around each kernel call), not by 0.19's C++
profiler; ``MetricCollector`` (PAPI hardware counters) is not provided.
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass


@dataclass(frozen=True)
class Duration:
    """A time in microseconds."""

    microseconds: float


@dataclass(frozen=True)
class Percent:
    percent: float


@dataclass(frozen=True)
class Count:
    count: int


@dataclass(frozen=True)
class Ratio:
    ratio: float


_KINDS = {Duration: "microseconds", Percent: "percent", Count: "count", Ratio: "ratio"}
_BY_KEY = {v: k for k, v in _KINDS.items()}


def _to_json(v):
    for kind, key in _KINDS.items():
        if isinstance(v, kind):
            return {key: getattr(v, key)}
    return v


def _from_json(v):
    if isinstance(v, dict) and len(v) == 1:
        (key, val), = v.items()
        if key in _BY_KEY:
            return _BY_KEY[key](val)
    return v


def _cell(v) -> str:
    if isinstance(v, Duration):
        return f"{v.microseconds:,.2f}"
    if isinstance(v, Percent):
        return f"{v.percent:.2f}"
    if isinstance(v, Count):
        return str(v.count)
    if isinstance(v, Ratio):
        return f"{v.ratio:.4f}"
    return str(v)


class Report:
    """Profiling results (tvm.runtime.profiling.Report of 0.19).

    Args:
        calls: one dict per kernel call, in execution order (column name -> value).
        device_metrics: device name (``"cpu0"``) -> metrics of the whole profiled run.
        configuration: e.g. ``{"Executor": "Graph", "Number of threads": 2}``.
    """

    def __init__(self, calls, device_metrics, configuration=None):
        self.calls = [dict(c) for c in calls]
        self.device_metrics = {k: dict(v) for k, v in device_metrics.items()}
        self.configuration = dict(configuration or {})

    @classmethod
    def from_timings(cls, rows, device: str, configuration: dict, total_seconds: float):
        """A report of ``rows`` = ``[(kernel name, seconds, argument shapes string)]`` run on
        ``device``, the whole run having taken ``total_seconds``."""
        total_us = total_seconds * 1e6
        calls = [{"Name": name, "Duration (us)": Duration(t * 1e6),
                  "Percent": Percent(100.0 * t * 1e6 / total_us if total_us else 0.0),
                  "Count": Count(1), "Device": device, "Argument Shapes": shapes}
                 for name, t, shapes in rows]
        metrics = {device: {"Name": device, "Duration (us)": Duration(total_us),
                            "Percent": Percent(100.0), "Count": Count(1)}}
        return cls(calls, metrics, configuration)

    def _rows(self, sort: bool, aggregate: bool) -> list:
        if not aggregate:
            return list(self.calls)
        merged: dict = {}
        for c in self.calls:
            key = (c.get("Name"), c.get("Device"), c.get("Argument Shapes"))
            m = merged.get(key)
            if m is None:
                merged[key] = dict(c)
                continue
            for col, v in c.items():
                if isinstance(v, (Duration, Percent, Count)):
                    field = _KINDS[type(v)]
                    m[col] = type(v)(getattr(m[col], field) + getattr(v, field))
        rows = list(merged.values())
        if sort:
            rows.sort(key=lambda r: -r["Duration (us)"].microseconds
                      if isinstance(r.get("Duration (us)"), Duration) else 0.0)
        return rows

    def table(self, sort: bool = True, aggregate: bool = True, col_sums: bool = True) -> str:
        """A human-readable table: calls (same name, device and shapes joined when
        ``aggregate``; the slowest first when ``sort``), a ``Sum`` row when ``col_sums``, then
        the device totals and the configuration."""
        cols = ["Name", "Duration (us)", "Percent", "Count", "Device", "Argument Shapes"]
        for c in self.calls:
            cols += [k for k in c if k not in cols]
        rows = [[_cell(r.get(k, "")) for k in cols] for r in self._rows(sort, aggregate)]
        if col_sums and self.calls:
            sums = []
            for k in cols:
                vals = [c.get(k) for c in self.calls]
                kinds = {type(v) for v in vals}
                if len(kinds) == 1 and kinds.pop() in (Duration, Percent, Count):
                    field = _KINDS[type(vals[0])]
                    sums.append(_cell(type(vals[0])(sum(getattr(v, field) for v in vals))))
                else:
                    sums.append("")
            sums[0] = "Sum"
            rows.append(sums)
        for dev, m in self.device_metrics.items():
            rows.append(["Total"] + [_cell(m.get(k, "")) if k != "Device" else dev
                                     for k in cols[1:]])
        widths = [max([len(k)] + [len(r[i]) for r in rows]) for i, k in enumerate(cols)]
        lines = ["  ".join(k.ljust(w) for k, w in zip(cols, widths)).rstrip()]
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        if self.configuration:
            lines.append("")
            lines.append("Configuration")
            lines.append("-------------")
            lines += [f"{k}: {v}" for k, v in self.configuration.items()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def csv(self) -> str:
        """``calls`` as CSV (a header row, then one row per call in execution order)."""
        import csv
        import io

        cols: list = []
        for c in self.calls:
            cols += [k for k in c if k not in cols]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for c in self.calls:
            w.writerow([(_to_json(c[k]) if not isinstance(_to_json(c[k]), dict)
                         else next(iter(_to_json(c[k]).values()))) if k in c else ""
                        for k in cols])
        return buf.getvalue()

    def json(self) -> str:
        """The report as JSON in 0.19's layout (``{"calls": [...], "device_metrics": {...},
        "configuration": {...}}``, metrics as ``{"microseconds": x}``, ``{"percent": x}``,
        ``{"count": n}``)."""
        return _json.dumps({
            "calls": [{k: _to_json(v) for k, v in c.items()} for c in self.calls],
            "device_metrics": {d: {k: _to_json(v) for k, v in m.items()}
                               for d, m in self.device_metrics.items()},
            "configuration": self.configuration,
        }, indent=2)

    @classmethod
    def from_json(cls, s: str) -> "Report":
        """The report :meth:`json` wrote."""
        d = _json.loads(s)
        return cls([{k: _from_json(v) for k, v in c.items()} for c in d.get("calls", [])],
                   {dev: {k: _from_json(v) for k, v in m.items()}
                    for dev, m in d.get("device_metrics", {}).items()},
                   d.get("configuration", {}))


def device_name(dev) -> str:
    """0.19's device column: ``"cpu0"``, ``"cuda0"``."""
    names = {1: "cpu", 2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 10: "rocm"}
    return f"{names.get(int(dev.device_type), f'device{int(dev.device_type)}_')}{dev.device_id}"


def shapes_of(args) -> str:
    """0.19's ``"Argument Shapes"`` column: ``"float32[4, 8], float32[16, 8]"``."""
    out = []
    for a in args:
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            out.append(f"{a.dtype}[{', '.join(str(int(d)) for d in a.shape)}]")
    return ", ".join(out)


__all__ = ["Report", "Duration", "Percent", "Count", "Ratio"]

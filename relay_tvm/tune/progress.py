"""The default progress printer of :func:`relay_tvm.tune.tune_relay` and ``relay-tvm tune``."""

from __future__ import annotations

import sys


def print_progress(event: dict, file=None) -> None:
    """Print one tuning progress event (a dict from ``tune_relay``'s ``progress`` callback) as
    a ``[tune]`` line on ``file`` (default: stderr).

    Events (each with ``task``, the kernel's name, and ``shape``, its output's shape, which
    tells apart kernels of one name; and ``inputs``, its input shapes, when another kernel has
    the same name and output shape, printed as ``name (out <- in, ...)``): ``"untuned"`` (a task's template timed before the search,
    ``ms``), ``"batch"`` (a
    measured batch: ``trials``/``planned``, ``best_ms``, ``untuned_ms``, ``gain`` = the sum of
    the untuned kernel times over the sum of the best ones so far), ``"skip"`` (a resumed task
    with nothing left to measure), ``"recheck"`` (the untuned schedule of a task a tuned
    record beats, timed again at the end: ``ms``, and ``was_ms`` from before the search; the
    lower stands), ``"task"`` (a task finished; not printed, the last batch
    line says it all)."""
    out = file or sys.stderr
    shape = event.get("shape", "")
    if event.get("inputs"):
        shape = f"{shape} <- {event['inputs']}"
    name = event["task"] + (f" ({shape})" if shape else "")
    where = f"[tune] task {event.get('index', 0) + 1}/{event.get('tasks', '?')} {name}"
    kind = event["event"]
    if kind == "untuned":
        print(f"[tune] {name}: untuned {_ms(event['ms'])}", file=out)
    elif kind == "batch":
        space = {"template": " (template knobs)", "default": " (default space)"}.get(
            event.get("space"), "")
        print(f"{where}{space}: {event['trials']}/{event['planned']} trials, best "
              f"{_ms(event['best_ms'])} (untuned {_ms(event['untuned_ms'])}); sum of kernel "
              f"times so far {event['gain']:.2f}x faster (kernels timed alone while tuning; "
              f"measure the built model for the end-to-end figure)", file=out)
    elif kind == "recheck":
        kept = "the new" if event["ms"] < event["was_ms"] else "the first"
        print(f"[tune] {name}: untuned timed again {_ms(event['ms'])} (was "
              f"{_ms(event['was_ms'])}; {kept} time stands)", file=out)
    elif kind == "skip" and event["planned"] == 0:
        print(f"{where}: no trials left in the budget", file=out)
    elif kind == "skip":
        print(f"{where}: done already ({event['trials']} trials)", file=out)


def _ms(ms: float) -> str:
    """A kernel time: milliseconds from 0.1 ms up, microseconds from 1 us, else nanoseconds
    (a pooling kernel of 0.9 us printed as "0.0009 ms" read as zero)."""
    if ms != ms:  # NaN: not measured
        return "? ms"
    if ms >= 0.1:
        return f"{ms:.3f} ms"
    return f"{ms * 1e3:.1f} us" if ms >= 1e-3 else f"{ms * 1e6:.0f} ns"


__all__ = ["print_progress"]

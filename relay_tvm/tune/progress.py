"""The default progress printer of :func:`relay_tvm.tune.tune_relay` and ``relay-tvm tune``."""

from __future__ import annotations

import sys


def print_progress(event: dict, file=None) -> None:
    """Print one tuning progress event (a dict from ``tune_relay``'s ``progress`` callback) as
    a ``[tune]`` line on ``file`` (default: stderr).

    Events: ``"untuned"`` (a task's template timed before the search, ``ms``), ``"batch"`` (a
    measured batch: ``trials``/``planned``, ``best_ms``, ``untuned_ms``, ``gain`` = the sum of
    the untuned kernel times over the sum of the best ones so far), ``"skip"`` (a resumed task
    with nothing left to measure), ``"task"`` (a task finished; not printed, the last batch
    line says it all)."""
    out = file or sys.stderr
    where = f"[tune] task {event.get('index', 0) + 1}/{event.get('tasks', '?')} {event['task']}"
    kind = event["event"]
    if kind == "untuned":
        print(f"[tune] {event['task']}: untuned {event['ms']:.4f} ms", file=out)
    elif kind == "batch":
        space = {"template": " (template knobs)", "default": " (default space)"}.get(
            event.get("space"), "")
        print(f"{where}{space}: {event['trials']}/{event['planned']} trials, best "
              f"{event['best_ms']:.4f} ms (untuned {event['untuned_ms']:.4f} ms); sum of kernel "
              f"times so far {event['gain']:.2f}x faster (kernels timed alone while tuning; "
              f"measure the built model for the end-to-end figure)", file=out)
    elif kind == "skip" and event["planned"] == 0:
        print(f"{where}: no trials left in the budget", file=out)
    elif kind == "skip":
        print(f"{where}: done already ({event['trials']} trials)", file=out)


__all__ = ["print_progress"]

"""The tuning work directory: meta_schedule's JSON database plus relay_tvm's manifest.

Layout of ``work_dir``::

    database_workload.json        one JSON line per kernel (meta_schedule's JSONDatabase)
    database_tuning_record.json   one JSON line per measured schedule (appended as measured)
    relay_tvm_tuning.json         the manifest: model fingerprint, target, opt level, trials per task
    logs/                         meta_schedule's per-task logs

The manifest is rewritten atomically after every batch of measurements and the database is
append-only, so a run stopped at any point (Ctrl-C, kill) leaves a directory that resumes: the
trials the manifest counts are in the database. A record line cut short by a kill is dropped
with a warning; any other unreadable line is a :class:`~relay_tvm.errors.TuningError`.
"""

from __future__ import annotations

import json
import os
import warnings

from ..backend.build_module import TUNING_MANIFEST as MANIFEST
from ..errors import TuningError

WORKLOADS = "database_workload.json"
RECORDS = "database_tuning_record.json"


def _workload_line(v) -> bool:
    return isinstance(v, list) and len(v) == 2


def _check_lines(path: str, what: str, well_formed=_workload_line,
                 expected: str = "a [workload, hash] pair") -> int:
    """Validate a JSON-lines file of the database; returns its number of lines.

    Blank lines (which hold nothing, but make meta_schedule's reader crash the process) are
    removed, with a warning; so is a last line cut short by a kill. Any other line that is not
    JSON, or not of the file's shape (``well_formed``), is a :class:`TuningError` naming the
    line."""
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    ends_clean = data.endswith(b"\n") or not data
    body = lines[:-1] if ends_clean else lines
    # a workload's position is its index: only a record line can be deleted alone
    fix = ("delete that line (losing one record) or the whole work directory"
           if what == "tuning record" else "delete the whole work directory (the records "
           "refer to workloads by line number)")
    keep, blank, cut = [], 0, False
    for i, raw in enumerate(body):
        if not raw.strip():
            blank += 1
            continue
        try:
            value = json.loads(raw)
        except ValueError as e:
            if i == len(body) - 1 and not ends_clean:
                cut = True
                break
            raise TuningError(f"{path} line {i + 1}: not valid JSON ({e}); the {what} file is "
                              f"corrupted: {fix}") from None
        if not well_formed(value):
            raise TuningError(f"{path} line {i + 1}: expected {expected}, got {raw[:60]!r}...; "
                              f"the {what} file is corrupted: {fix}")
        keep.append(raw)
    if blank or cut:
        why = [f"{blank} blank line(s)"] if blank else []
        why += ["the last line, cut short (a tuning run killed while writing it)"] if cut else []
        warnings.warn(f"{path}: dropping {' and '.join(why)}", stacklevel=3)
        with open(path, "wb") as f:
            f.write(b"".join(r + b"\n" for r in keep))
    return len(keep)


def check_database_files(path: str) -> None:
    """Validate the two JSON-lines files of the database in work dir ``path`` (see
    :func:`_check_lines`), and that every record's workload index has a line in
    ``database_workload.json``: a workload file deleted or cut short is reported as such, not as
    a corrupted record line.

    Raises:
        TuningError: a corrupted line, or a workload file missing or shorter than the records
            refer to.
    """
    wpath = os.path.join(path, WORKLOADS)
    n_wkl = _check_lines(wpath, "workload")
    top = [-1]

    def record_line(v) -> bool:
        ok = (isinstance(v, list) and len(v) == 2 and isinstance(v[0], int)
              and not isinstance(v[0], bool) and v[0] >= 0 and isinstance(v[1], list))
        if ok:
            top[0] = max(top[0], v[0])
        return ok

    n_rec = _check_lines(os.path.join(path, RECORDS), "tuning record", record_line,
                         f"[workload index < {n_wkl}, record list]")
    if top[0] < n_wkl:
        return
    what = ("is missing" if not os.path.exists(wpath) else
            f"has {n_wkl} workload line(s)")
    raise TuningError(f"{wpath} {what}, but the {n_rec} record(s) of {RECORDS} refer to "
                      f"workload index {top[0]} (the kernel on line {top[0] + 1}): the workload "
                      f"file was deleted or cut short; delete the whole work directory (the "
                      f"records cannot be matched to kernels without it)")


def fingerprint(tasks) -> str:
    """A stable identity of a model's kernels: the sorted structural hashes of the tasks."""
    import hashlib

    keys = sorted(task_key(t) for t in tasks)
    return hashlib.sha1(",".join(keys).encode()).hexdigest()[:16]


def task_key(task) -> str:
    import tvm_ffi

    return f"{tvm_ffi.structural_hash(task.mod) & 0xFFFFFFFFFFFFFFFF:016x}"


class WorkDir:
    """A work directory opened for one model and target.

    Args:
        path: the directory (created when missing).
        model: :func:`fingerprint` of the model's tasks, or None to open any database (building
            with a database made for another model is harmless: kernels not in it are untuned).
        target: ``str`` of the ``tvm.target.Target``, or None to accept any.

    Raises:
        TuningError: the directory holds a database of another model or target, a database
            not made by relay_tvm.tune (no manifest), or a corrupted database line.
    """

    def __init__(self, path: str, model: str | None, target: str | None):
        self.path = make_work_dir(path)
        mpath = os.path.join(self.path, MANIFEST)
        has_db = any(os.path.exists(os.path.join(self.path, f)) for f in (WORKLOADS, RECORDS))
        if os.path.exists(mpath):
            try:
                with open(mpath) as f:
                    self.manifest = json.load(f)
            except ValueError as e:
                raise TuningError(f"{mpath}: not valid JSON ({e}); delete the work directory "
                                  f"to start over") from None
        elif has_db and model is not None:
            raise TuningError(f"work dir {path!r} holds a meta_schedule database that "
                              f"relay_tvm.tune did not make ({MANIFEST} is missing): use another "
                              f"work dir")
        else:
            self.manifest = {"version": 1, "model": model, "target": target, "tasks": {}}
        if model is not None and self.manifest.get("model") not in (None, model):
            raise TuningError(f"work dir {path!r} holds the tuning database of another model "
                              f"(fingerprint {self.manifest['model']}, this model's is {model}): "
                              f"use another work dir per model")
        if target is not None and self.manifest.get("target") not in (None, target):
            raise TuningError(f"work dir {path!r} was tuned for target "
                              f"{self.manifest['target']}, not {target}: use another work dir "
                              f"per target")
        if model is not None:
            self.manifest["model"] = model
        if target is not None:
            self.manifest["target"] = target
        check_database_files(self.path)
        self._db = None

    @property
    def database(self):
        """The meta_schedule ``JSONDatabase`` of this directory (structural module equality)."""
        if self._db is None:
            from tvm.s_tir.meta_schedule.database import JSONDatabase

            try:
                self._db = JSONDatabase(work_dir=self.path, module_equality="structural")
            except Exception as e:
                raise TuningError(f"work dir {self.path}: meta_schedule cannot read the "
                                  f"database: {e}") from None
        return self._db

    def task_state(self, key: str) -> dict:
        return self.manifest["tasks"].setdefault(key, {"trials": 0, "baseline": False})

    def forget_lost_tasks(self, tasks) -> int:
        """Reset the manifest's state of each task it counts as measured (a baseline or
        trials) that has no valid record for its workload in the database, so that a resumed
        run measures it again instead of saying "done" and leaving the kernel untuned (the
        record file deleted or truncated by hand). Warns once with the count and saves the
        manifest when any was reset; returns that count."""
        db = self.database
        lost = []
        for task in tasks:
            st = self.manifest["tasks"].get(task_key(task))
            if not st or not (st.get("baseline") or int(st.get("trials", 0)) > 0):
                continue
            if db.has_workload(task.mod) and db.get_top_k(db.commit_workload(task.mod), 1):
                continue
            keep = {k: st[k] for k in ("name", "weight") if k in st}
            st.clear()
            st.update(trials=0, baseline=False, **keep)
            lost.append(task)
        if lost:
            warnings.warn(f"work dir {self.path}: {len(lost)} of {len(tasks)} tasks that "
                          f"{MANIFEST} counts as measured have no record in {RECORDS} (deleted "
                          f"or truncated?): measuring them again", stacklevel=3)
            self.save()
        return len(lost)

    def save(self) -> None:
        """Write the manifest atomically."""
        mpath = os.path.join(self.path, MANIFEST)
        tmp = mpath + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.manifest, f, indent=1, sort_keys=True)
        os.replace(tmp, mpath)


def _work_dir_path(path) -> tuple:
    """``(path as given, absolute path)``.

    Raises:
        TuningError: ``path`` is not a path, or empty (``""`` wrote the database into the
            current directory unsaid; fresh-user trial).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TuningError(f"work dir: expected a directory path (str or os.PathLike), got "
                          f"{type(path).__name__}")
    path = os.fspath(path)
    if not isinstance(path, str) or not path.strip():
        raise TuningError(f"work dir: expected a directory path, got {path!r} (use '.' for "
                          f"the current directory)")
    return path, os.path.abspath(path)


def check_work_dir(path) -> str:
    """What :func:`make_work_dir` would refuse, found by making the directory and removing
    again what it made (a run that then fails on its model or its RPC tracker leaves no
    directory behind; fresh-user trial); returns the absolute path.

    Raises:
        TuningError: as :func:`make_work_dir`.
    """
    path, full = _work_dir_path(path)
    made = []
    d = full
    while not os.path.exists(d):
        made.append(d)
        d = os.path.dirname(d)
    make_work_dir(path)
    for d in made:  # innermost first
        try:
            os.rmdir(d)
        except OSError:
            break
    return full


def make_work_dir(path) -> str:
    """Create the work directory ``path`` (and its parents) unless it exists; returns its
    absolute path.

    Raises:
        TuningError: ``path`` is not a path or empty, is a file, or it cannot be created or
            written (a parent is a file, a read-only or virtual file system, no permission),
            naming the directory.
    """
    path, full = _work_dir_path(path)
    if os.path.exists(full) and not os.path.isdir(full):
        raise TuningError(f"work dir {path!r} is a file, not a directory")
    try:
        os.makedirs(full, exist_ok=True)
    except OSError as e:
        raise TuningError(f"work dir {path!r} cannot be created: {e.strerror or e}") from None
    if not os.access(full, os.W_OK | os.X_OK):
        raise TuningError(f"work dir {path!r} is not writable")
    return full


def load_database(path: str):
    """Open a tuning work directory made by :func:`relay_tvm.tune.tune_relay` for building.

    Records tuned for another target than a build's are not applied; the build says so, once,
    naming what differs (one warning whichever way the database reached it).

    Raises:
        TuningError: ``path`` does not exist, holds no database, or a line is corrupted.
    """
    if not os.path.isdir(path):
        what = "is a file, not a directory" if os.path.exists(path) else "no such directory"
        raise TuningError(f"tuning database {path!r}: {what} (expected the work directory of "
                          f"relay_tvm.tune.tune_relay / relay-tvm tune --work-dir)")
    # records without their workload file: WorkDir's check says so
    if not any(os.path.exists(os.path.join(path, f)) for f in (WORKLOADS, RECORDS)):
        raise TuningError(f"tuning database {path!r}: no {WORKLOADS} in it (not a tuning work "
                          f"directory)")
    return WorkDir(path, None, None).database


__all__ = ["WorkDir", "make_work_dir", "check_work_dir", "load_database", "fingerprint", "task_key"]

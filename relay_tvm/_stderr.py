"""Filtering what C and C++ code write to standard error (file descriptor 2), which Python's
``sys.stderr`` and ``warnings`` never see: LLVM's "'+x' is not a recognized feature" line when a
target feature is probed, TVM's "Scope Saving:" / "Scope Loaded:" log when an executable is
saved or loaded."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile


@contextlib.contextmanager
def stderr_without(drop):
    """Inside the block, file descriptor 2 goes to a temporary file; afterwards every line of it
    for which ``drop(line: bytes)`` is false is written to the real stderr, in order. Output of
    other threads in that time is delayed, not lost. Without a usable descriptor 2 (an embedded
    interpreter) nothing is filtered."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept = [ln for ln in tmp.read().splitlines(keepends=True) if not drop(ln)]
            if kept:
                os.write(2, b"".join(kept))


# TVM's VMExecutable logs every memory scope of its constant pool when it saves or loads one
# (src/runtime/vm/executable.cc, LOG(WARNING) "Scope Saving:" / "Scope Loaded:"): progress
# chatter, not a warning. relay_tvm's executables have no memory scopes; libraries that TVM
# Relax built with virtual devices do.
_SCOPE_LOG = re.compile(rb"^\[[0-9:]+\] \S*executable\.cc:\d+: Warning: Scope (Saving|Loaded):")


@contextlib.contextmanager
def without_scope_log():
    """Drop TVM's "Scope Saving:" / "Scope Loaded:" lines from what C++ writes to stderr inside
    the block (saving or loading an executable); every other line (real warnings and errors)
    is written to stderr afterwards, in order."""
    with stderr_without(_SCOPE_LOG.match):
        yield


__all__ = ["stderr_without", "without_scope_log"]

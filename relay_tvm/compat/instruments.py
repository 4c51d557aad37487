"""Pass instruments of tvm.relay 0.19 that see relay passes.

``tvm.ir.instrument.PassTimingInstrument`` is C++ in TVM 0.27: its callbacks are invisible from
Python, so relay passes (which run in Python) could not report to it and ``render()`` said "no
passes have been profiled". relay_tvm's replacement keeps the same profile tree in Python, is
fed by relay passes and by TVM's own passes alike (it is a Python ``PassInstrument``, which TVM
calls too), and renders it in TVM's format::

    InferType: 6628us [6628us] (46.29%; 46.29%)
    FoldScaleAxis: 7691us [6us] (53.71%; 53.71%)
    \tFoldConstant: 7685us [1701us] (53.67%; 99.92%)

one line per pass run: total time, in brackets the time outside the passes nested in it, then
the share of all top-level time and of the enclosing pass's time; nested passes are indented
with tabs (the format of TVM's ``RenderPassProfiles``, src/ir/instrument.cc).

``PassContext.override_instruments`` on the current context (the global default one too) now
reaches relay passes as well: TVM hands back base-class handles without the Python methods that
relay passes call, so the Python objects are kept aside as for ``PassContext(instruments=)``.
"""

from __future__ import annotations

import threading
import time
import warnings

_LOCAL = threading.local()  # profiles are per thread, as TVM's thread-local store


class _Profile:
    __slots__ = ("name", "start", "duration", "children")

    def __init__(self, name: str):
        self.name = name
        self.start = time.perf_counter()
        self.duration = 0.0  # microseconds, set when the pass ends
        self.children: list[_Profile] = []


def _store():
    if not hasattr(_LOCAL, "root"):
        _LOCAL.root = _Profile("root")
        _LOCAL.stack = []
    return _LOCAL


def _enter_pass(name: str) -> None:
    s = _store()
    prof = _Profile(name)
    (s.stack[-1] if s.stack else s.root).children.append(prof)
    s.stack.append(prof)


def _exit_pass() -> None:
    s = _store()
    if s.stack:  # a pass whose run_before_pass came before this context's instruments did
        prof = s.stack.pop()
        prof.duration = (time.perf_counter() - prof.start) * 1e6


def _reset() -> None:
    s = _store()
    s.root.children.clear()
    s.stack.clear()


def render_profiles() -> str:
    """The profile tree of this thread's passes since the timing context was entered, in TVM's
    format (see the module doc); ``""`` with a warning when nothing was profiled.

    Raises:
        RelayError: called while a profiled pass is still running (as TVM refused).
    """
    from ..errors import RelayError

    s = _store()
    if s.stack:
        raise RelayError(f"PassTimingInstrument.render: cannot render the pass profile while "
                         f"pass {s.stack[-1].name!r} is still running")
    if not s.root.children:
        warnings.warn("PassTimingInstrument.render: no passes have been profiled; run the "
                      "passes inside tvm.transform.PassContext(instruments=[timing_inst]) and "
                      "render before leaving it", stacklevel=3)
        return ""
    top = sum(p.duration for p in s.root.children)
    lines = []
    todo = [(0, top, p) for p in reversed(s.root.children)]  # iterative: passes nest deeply
    while todo:
        depth, parent, prof = todo.pop()
        own = prof.duration - sum(c.duration for c in prof.children)
        todo.extend((depth + 1, prof.duration, c) for c in reversed(prof.children))
        of_parent = prof.duration / parent * 100.0 if parent else 0.0
        of_total = prof.duration / top * 100.0 if top else 0.0
        lines.append(f"{chr(9) * depth}{prof.name}: {prof.duration:.0f}us [{own:.0f}us] "
                     f"({of_total:.2f}%; {of_parent:.2f}%)\n")
    return "".join(lines)


def _make_timing_class(instrument_module):
    @instrument_module.pass_instrument
    class PassTimingInstrument:
        """Times every pass run under the ``PassContext`` it is given to, relay passes and
        TVM passes alike (tvm.relay 0.19's ``tvm.ir.instrument.PassTimingInstrument``).

        Call :meth:`render` before leaving the context: leaving it clears the profile.
        """

        def exit_pass_ctx(self):
            _reset()

        def run_before_pass(self, mod, info):
            _enter_pass(str(info.name))

        def run_after_pass(self, mod, info):
            _exit_pass()

        @staticmethod
        def render() -> str:
            """The profile of the passes run so far in this context (see
            :func:`render_profiles`)."""
            return render_profiles()

    PassTimingInstrument.__module__ = instrument_module.__name__
    PassTimingInstrument._relay_tvm = True
    return PassTimingInstrument


def install_timing_instrument() -> None:
    """Put the relay-aware ``PassTimingInstrument`` where 0.19 scripts import it from."""
    import tvm
    import tvm.ir.instrument as inst

    if getattr(inst.PassTimingInstrument, "_relay_tvm", False):
        return
    cls = _make_timing_class(inst)
    inst.PassTimingInstrument = cls
    alias = getattr(tvm, "instrument", None)
    if alias is not None and alias is not inst and hasattr(alias, "PassTimingInstrument"):
        alias.PassTimingInstrument = cls


__all__ = ["install_timing_instrument", "render_profiles"]

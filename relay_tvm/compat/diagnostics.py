"""``tvm.ir.diagnostics`` of TVM 0.19 (removed in 0.27): the renderer hooks.

relay_tvm reports problems as exceptions of :mod:`relay_tvm.errors` (with spans), not through
TVM's diagnostic contexts, so a renderer installed here is kept and returned but never called
by relay_tvm; code that only installs one (test helpers) imports and runs.
"""

from __future__ import annotations


class _DefaultRenderer:
    def render(self, diag_ctx) -> None:  # noqa: D401 - nothing is rendered through here
        return None


_DEFAULT = _DefaultRenderer()
_current = [None]


def get_renderer():
    """The installed renderer (a default one that renders nothing when none is)."""
    return _current[0] or _DEFAULT


def override_renderer(render_func) -> None:
    """Install ``render_func(diag_ctx)`` as the renderer (None: back to the default)."""
    if render_func is None:
        _current[0] = None
        return
    r = _DefaultRenderer()
    r.render = render_func
    _current[0] = r

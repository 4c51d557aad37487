"""A pause of Python's cyclic garbage collector for whole-program traversals.

Type inference, printing and parsing allocate millions of small objects that all stay alive; the
cyclic collector would rescan them again and again (superlinear time on 100k-node programs) and
there is no garbage for it to find. Reference counting still frees everything as usual.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def paused_gc():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

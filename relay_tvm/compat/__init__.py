"""Compatibility with tvm.relay 0.19-era code on TVM 0.27.

``import relay_tvm`` calls :func:`install` unless the environment variable
``RELAY_TVM_NO_TVM_ALIAS`` is set to a non-empty value other than ``0``:

- ``tvm.relay`` (and every ``tvm.relay.X`` module path of 0.19) resolves to relay_tvm
  (:mod:`.alias`).
- ``tvm.testing`` regains 0.19's test decorators it lost (:mod:`.tvm_testing`); with
  ``pytest_plugins = ["relay_tvm.compat.pytest_plugin"]`` a conftest gets ``target``/``dev``.
- TVM 0.19 names that 0.27 removed (``tvm.nd``, ``tvm.tir``, ``tvm.contrib.graph_executor``,
  ...) and ``tvm.IRModule`` / ``tvm.ir.structural_equal`` accepting Relay content
  (:mod:`.tvm_shims`).
"""

from __future__ import annotations

import os

from . import alias  # noqa: F401


def enabled() -> bool:
    """Whether ``import relay_tvm`` installs the compatibility layer (the opt-out variable)."""
    return os.environ.get("RELAY_TVM_NO_TVM_ALIAS", "") in ("", "0")


def install() -> None:
    """Install the ``tvm.relay`` alias (idempotent)."""
    alias.install()
    from . import tvm_shims

    tvm_shims.install()
    from . import tvm_testing

    tvm_testing.install()

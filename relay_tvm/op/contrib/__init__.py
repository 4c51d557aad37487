"""``tvm.relay.op.contrib`` of TVM 0.19: pattern tables of external compilers
(:mod:`.register`: ``register_pattern_table`` / ``get_pattern_table``, for
``transform.MergeComposite``) are provided; the vendors' BYOC modules (``dnnl``, ``tensorrt``,
``arm_compute_lib``, ``cutlass``, ...) are not: relay_tvm has no external code generators
(``relay.build`` of a partitioned module raises ``BuildError``). Importing one of them, or
reading a name 0.19 took from them (``partition_for_dnnl``, ...), raises
:class:`relay_tvm.errors.NotProvidedError`."""

from __future__ import annotations

import importlib.abc
import sys

from ...errors import NotProvidedError
from .register import get_pattern_table, register_pattern_table

# TVM 0.19's BYOC modules under relay.op.contrib
VENDOR_MODULES = ("arm_compute_lib", "bnns", "clml", "cmsisnn", "coreml", "cublas", "cudnn",
                  "cutlass", "dnnl", "ethosn", "ethosu", "libtorch", "mrvl", "tensorrt",
                  "te_target", "vitis_ai")


def _refuse(what: str) -> NotProvidedError:
    return NotProvidedError(
        f"tvm.relay.op.contrib.{what} (a TVM 0.19 BYOC integration) is not provided: relay_tvm "
        "has no external code generators. The IR side of BYOC is: register a pattern table "
        "(relay.op.contrib.register_pattern_table), transform.MergeComposite, AnnotateTarget, "
        "MergeCompilerRegions, PartitionGraph; relay.build / vm.compile of a partitioned "
        "module raise BuildError")


class _VendorFinder(importlib.abc.MetaPathFinder):
    """``import tvm.relay.op.contrib.dnnl``: the NotProvidedError instead of 'No module'."""

    def find_spec(self, fullname, path, target=None):
        head, _, tail = fullname.rpartition(".")
        if head == __name__ and tail in VENDOR_MODULES:
            raise _refuse(tail)
        return None


if not any(isinstance(f, _VendorFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _VendorFinder())


def __getattr__(name):
    if name.startswith("__"):  # copy / pickle / inspect probes: the ordinary answer
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise _refuse(name)


__all__ = ["register_pattern_table", "get_pattern_table", "VENDOR_MODULES"]

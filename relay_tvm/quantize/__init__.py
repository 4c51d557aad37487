"""``relay.quantize``: automatic int8 quantization with tvm.relay 0.19's names and semantics.

``with relay.quantize.qconfig(calibrate_mode=..., ...): qmod = relay.quantize.quantize(mod,
params, dataset)`` gives a module computing conv2d (and, with ``skip_dense_layer=False``,
dense) in int8 x int8 -> int32 with plain Relay operators; ``relay.build`` compiles it. See
:mod:`.quantize` for the steps and :mod:`.qconfig` for the settings.
"""

from __future__ import annotations

from ._annotate import QAnnotateExpr, attach_simulated_quantize, register_annotate_function
from ._calibrate import calibrate, collect_stats
from ._op import simulated_quantize
from ._partition import QPartitionExpr, register_partition_function
from ._realize import QRealizeIntExpr
from .kl_divergence import _find_scale_by_kl
from .qconfig import (
    QAnnotateKind,
    QConfig,
    QuantizeContext,
    current_qconfig,
    kind2str,
    qconfig,
    quantize_context,
)
from .quantize import annotate, partition, prerequisite_optimize, quantize, realize

__all__ = [
    "QAnnotateExpr",
    "QAnnotateKind",
    "QConfig",
    "QPartitionExpr",
    "QRealizeIntExpr",
    "QuantizeContext",
    "annotate",
    "attach_simulated_quantize",
    "calibrate",
    "collect_stats",
    "current_qconfig",
    "kind2str",
    "partition",
    "prerequisite_optimize",
    "qconfig",
    "quantize",
    "quantize_context",
    "realize",
    "register_annotate_function",
    "register_partition_function",
    "simulated_quantize",
    "_find_scale_by_kl",
]

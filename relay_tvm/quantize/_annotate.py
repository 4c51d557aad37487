"""``tvm.relay.quantize._annotate`` names (not implemented; see :mod:`relay_tvm.quantize`)."""

from . import (  # noqa: F401
    QAnnotateKind,
    attach_simulated_quantize,
    register_annotate_function,
)

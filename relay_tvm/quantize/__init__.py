"""``tvm.relay.quantize`` (automatic int8 quantization) is not implemented in relay_tvm.

The module exists so that code importing its names loads; every function raises
:class:`~relay_tvm.errors.UnsupportedOperatorError` saying so. ``QAnnotateKind`` keeps 0.19's
values (IDENTITY 0, INPUT 1, WEIGHT 2, ACTIVATION 3).
"""

from __future__ import annotations

import enum

from ..errors import UnsupportedOperatorError


class QAnnotateKind(enum.IntEnum):
    """The kind of a quantization annotation (which bit configuration applies)."""

    IDENTITY = 0
    INPUT = 1
    WEIGHT = 2
    ACTIVATION = 3


def _missing(name):
    def fn(*args, **kwargs):
        raise UnsupportedOperatorError(
            f"relay.quantize.{name}: automatic quantization is not implemented in relay_tvm")

    fn.__name__ = name
    fn.__doc__ = f"Not implemented: raises UnsupportedOperatorError ({name} of tvm.relay 0.19)."
    return fn


quantize = _missing("quantize")
qconfig = _missing("qconfig")
current_qconfig = _missing("current_qconfig")
partition = _missing("partition")
annotate = _missing("annotate")
realize = _missing("realize")
register_partition_function = _missing("register_partition_function")
register_annotate_function = _missing("register_annotate_function")
attach_simulated_quantize = _missing("attach_simulated_quantize")

"""tvm.relay.op.strategy.x86 of TVM 0.19: not provided (see :mod:`relay_tvm.op.strategy`)."""

from . import refuse

raise refuse("x86")

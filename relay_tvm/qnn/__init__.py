"""``relay.qnn``: the quantized neural network dialect (tvm.relay 0.19's ``relay.qnn``).

``relay.qnn.op`` holds the operators (quantize, dequantize, requantize, conv2d, dense,
batch_matmul, add, subtract, mul, concatenate, avg_pool2d, simulated_quantize/dequantize);
``relay.qnn.transform`` the passes that lower them to integer Relay code. As in 0.19, the
operators are also reachable directly under ``relay.qnn`` (``relay.qnn.quantize``).
"""

from . import op, transform  # noqa: F401
from .op import *  # noqa: F401,F403  (0.19 re-exports every operator at relay.qnn)
from .op import __all__ as _op_all

__all__ = ["op", "transform", *_op_all]

"""``relay.qnn``: the quantized neural network dialect (tvm.relay 0.19's ``relay.qnn``).

``relay.qnn.op`` holds the operators (quantize, dequantize, requantize, conv2d, dense,
batch_matmul, add, subtract, mul, concatenate, avg_pool2d, simulated_quantize/dequantize);
``relay.qnn.transform`` the passes that lower them to integer Relay code.
"""

from . import op, transform  # noqa: F401

__all__ = ["op", "transform"]

"""``relay.qnn.op``: the quantized-NN dialect's operators (tvm.relay 0.19's signatures).

Each operator has a type relation and a NumPy reference kernel (the interpreter runs it
directly); ``relay.qnn.transform.CanonicalizeOps`` rewrites them into ordinary Relay integer
arithmetic, which ``relay.build`` and the VM run automatically.
"""

from . import legalizations  # noqa: F401
from ._elemwise import add, avg_pool2d, concatenate, mul, subtract  # noqa: F401
from ._leaky_relu import leaky_relu  # noqa: F401,E402
from ._multiply_high import multiply_high  # noqa: F401
from ._products import batch_matmul, conv2d, conv2d_transpose, dense  # noqa: F401
from ._quantize import (  # noqa: F401
    SQNN_CODE_TO_DTYPE,
    SQNN_DTYPE_TO_CODE,
    current_requantize_config,
    dequantize,
    quantize,
    requantize,
    requantize_config,
    simulated_dequantize,
    simulated_quantize,
)
from ._softmax import softmax  # noqa: F401
from ._unary import abs, erf, exp, hardswish, log, rsqrt, sigmoid, sqrt, tanh  # noqa: F401,A004

__all__ = ["quantize", "dequantize", "requantize", "requantize_config",
           "current_requantize_config", "simulated_quantize", "simulated_dequantize",
           "conv2d", "conv2d_transpose", "dense", "batch_matmul", "add", "subtract", "mul",
           "concatenate", "avg_pool2d", "sqrt", "rsqrt", "exp", "erf", "sigmoid", "hardswish", "tanh", "log",
           "abs", "leaky_relu", "softmax"]

from ...op._make import Namespace as _Namespace

_make = _Namespace("qnn", "relay.qnn.op")  # 0.19: relay.qnn.op._make.<op>(positional arguments)

# 0.19's operators lived in relay/qnn/op/qnn.py, and scripts reach them as relay.qnn.op.qnn.<op>
qnn = __import__("sys").modules[__name__]

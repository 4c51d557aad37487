"""A small synthetic network (tvm.relay.testing.synthetic): real-network structure at toy size.

Two identical stages; each adds a dense branch (reshape to ``(-1, W)``, dense ``W -> W``, relu,
reshaped back) to a convolution branch (3x3 convolution keeping the channels, padding 1,
softmax over channels). Between them: a bias (``bias``, one value per channel) and inference
batch norm (``batch_norm_*``). Input ``data`` is NCHW ``input_shape``; the output has the same
shape. Parameters: ``dense_weight``, ``conv_weight``, ``bias``, ``batch_norm_*``,
``dense2_weight``, ``conv2_weight``.
"""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer


def _stage(x, width, channels, wtype, dense_name, conv_name):
    rows = op.reshape(x, [-1, width])
    dense = op.nn.relu(op.nn.dense(rows, var(dense_name, shape=[width, width], dtype=wtype)))
    conv = op.nn.conv2d(x, var(conv_name, shape=[channels, channels, 3, 3], dtype=wtype),
                        padding=1, kernel_size=3)
    return op.add(op.reshape_like(dense, x), op.nn.softmax(conv))


def get_net(input_shape=(1, 3, 24, 12), dtype="float32", wtype=None):
    """The network as a Relay function of ``data`` and its parameters.

    Args:
        input_shape: ``(N, C, H, W)``.
        dtype: dtype of ``data``.
        wtype: dtype of the weights (``dtype`` when None).
    """
    wtype = wtype or dtype
    data = var("data", shape=input_shape, dtype=dtype)
    channels, width = input_shape[1], input_shape[3]
    x = _stage(data, width, channels, wtype, "dense_weight", "conv_weight")
    x = batch_norm_infer(op.nn.bias_add(x, var("bias", dtype=wtype)), name="batch_norm")
    out = _stage(x, width, channels, wtype, "dense2_weight", "conv2_weight")
    return Function(free_vars(out), out)


def get_workload(input_shape=(1, 3, 24, 12), dtype="float32", wtype=None):
    """``(mod, params)`` of :func:`get_net` with seeded random parameters."""
    return create_workload(get_net(input_shape, dtype, wtype))

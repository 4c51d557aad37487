"""A multi-layer perceptron (tvm.relay.testing.mlp): 128 - 64 - classes, relu, softmax."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..ir.expr import Function, var
from .init import create_workload
from .layers import dense_add_bias


def get_net(batch_size, num_classes=10, image_shape=(1, 28, 28), dtype="float32"):
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    x = op.nn.batch_flatten(data)
    x = op.nn.relu(dense_add_bias(x, units=128, name="fc1"))
    x = op.nn.relu(dense_add_bias(x, units=64, name="fc2"))
    x = dense_add_bias(x, units=num_classes, name="fc3")
    out = op.nn.softmax(x)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=10, image_shape=(1, 28, 28), dtype="float32"):
    """``(mod, params)`` of the MLP on ``(batch, *image_shape)`` input named ``data``."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))

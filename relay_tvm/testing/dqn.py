"""The Deep Q-Network of Mnih et al., "Human-level control through deep reinforcement learning"
(Nature 2015), as tvm.relay.testing.dqn builds it: four stacked 84x84 frames, three
convolutions with bias and relu (32 8x8 stride 4, 64 4x4 stride 2, 64 3x3 stride 1), a
512-unit dense layer with relu, and one output per action.
"""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..ir.expr import Function, var
from .init import create_workload
from .layers import conv2d, dense_add_bias


def get_net(batch_size, num_actions=18, image_shape=(4, 84, 84), dtype="float32",
            layout="NCHW"):
    """The network as a Relay function of ``data`` (``(batch_size, *image_shape)`` in
    ``layout``, NCHW or NHWC) and its parameters."""
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    kernel_layout = "OIHW" if layout == "NCHW" else "HWIO"
    bias_axis = layout.index("C")
    x = data
    for i, (ch, k, s) in enumerate([(32, 8, 4), (64, 4, 2), (64, 3, 1)]):
        name = f"conv{i + 1}"
        x = conv2d(x, kernel_size=(k, k), strides=(s, s), channels=ch, name=name,
                   data_layout=layout, kernel_layout=kernel_layout)
        x = op.nn.relu(op.nn.bias_add(x, var(name + "_bias"), axis=bias_axis))
    x = op.nn.batch_flatten(x)
    x = op.nn.relu(dense_add_bias(x, units=512, name="dense1"))
    out = dense_add_bias(x, units=num_actions, name="dense2")
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_actions=18, image_shape=(4, 84, 84), dtype="float32",
                 layout="NCHW"):
    """``(mod, params)`` of the DQN with seeded random parameters."""
    return create_workload(get_net(batch_size, num_actions, image_shape, dtype, layout))

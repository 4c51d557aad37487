"""VGG 11/13/16/19 (Simonyan & Zisserman 2014) as tvm.relay.testing.vgg builds it."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer, conv2d, dense_add_bias

_SPEC = {11: [1, 1, 2, 2, 2], 13: [2, 2, 2, 2, 2], 16: [2, 2, 3, 3, 3], 19: [2, 2, 4, 4, 4]}
_FILTERS = [64, 128, 256, 512, 512]


def get_net(batch_size, image_shape, num_classes, dtype, num_layers=11, batch_norm=False):
    if num_layers not in _SPEC:
        raise RelayError(f"vgg: num_layers must be one of {sorted(_SPEC)}, got {num_layers}")
    x = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    for i, n in enumerate(_SPEC[num_layers]):
        for j in range(n):
            name = f"conv{i + 1}_{j + 1}"
            x = conv2d(x, channels=_FILTERS[i], kernel_size=(3, 3), padding=(1, 1), name=name)
            x = op.nn.bias_add(x, var(name + "_bias"))
            if batch_norm:
                x = batch_norm_infer(x, name=f"bn{i + 1}_{j + 1}")
            x = op.nn.relu(x)
        x = op.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))
    x = op.nn.batch_flatten(x)
    for k in (6, 7):
        x = op.nn.dropout(op.nn.relu(dense_add_bias(x, units=4096, name=f"fc{k}")), rate=0.5)
    x = dense_add_bias(x, units=num_classes, name="fc8")
    out = op.nn.softmax(x)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 224, 224), dtype="float32",
                 num_layers=11, batch_norm=False):
    """``(mod, params)`` of VGG-``num_layers``."""
    return create_workload(get_net(batch_size, image_shape, num_classes, dtype, num_layers,
                                   batch_norm))

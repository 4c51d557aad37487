"""SqueezeNet 1.0 / 1.1 (Iandola et al. 2016) as tvm.relay.testing.squeezenet builds it."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import conv2d


def _conv_relu(x, channels, kernel, name, padding=(0, 0), strides=(1, 1)):
    x = conv2d(x, channels=channels, kernel_size=kernel, padding=padding, strides=strides,
               name=name)
    return op.nn.relu(op.nn.bias_add(x, var(name + "_bias")))


def fire(x, squeeze, expand1, expand3, prefix):
    s = _conv_relu(x, squeeze, (1, 1), prefix + "_squeeze1x1")
    a = _conv_relu(s, expand1, (1, 1), prefix + "_expand1x1")
    b = _conv_relu(s, expand3, (3, 3), prefix + "_expand3x3", padding=(1, 1))
    return op.concatenate((a, b), axis=1)


def get_net(batch_size, image_shape, num_classes, version, dtype):
    if version not in ("1.0", "1.1"):
        raise RelayError(f"squeezenet: version must be '1.0' or '1.1', got {version!r}")
    x = var("data", shape=(batch_size, *image_shape), dtype=dtype)

    def pool(x):
        return op.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2))

    if version == "1.0":
        x = pool(_conv_relu(x, 96, (7, 7), "conv1", strides=(2, 2)))
        plan = [(16, 64), (16, 64), (32, 128), "pool", (32, 128), (48, 192), (48, 192),
                (64, 256), "pool", (64, 256)]
    else:
        x = pool(_conv_relu(x, 64, (3, 3), "conv1", strides=(2, 2)))
        plan = [(16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool", (48, 192), (48, 192),
                (64, 256), (64, 256)]
    k = 0
    for p in plan:
        if p == "pool":
            x = pool(x)
            continue
        k += 1
        x = fire(x, p[0], p[1], p[1], f"fire{k}")
    x = op.nn.dropout(x, rate=0.5)
    x = _conv_relu(x, num_classes, (1, 1), "conv_final")
    x = op.nn.batch_flatten(op.nn.global_avg_pool2d(x))
    out = op.nn.softmax(x)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, version="1.0", image_shape=(3, 224, 224),
                 dtype="float32"):
    """``(mod, params)`` of SqueezeNet ``version``."""
    return create_workload(get_net(batch_size, image_shape, num_classes, version, dtype))

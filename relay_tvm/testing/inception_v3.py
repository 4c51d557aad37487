"""Inception-v3 (Szegedy et al., "Rethinking the Inception Architecture for Computer Vision",
2015) as tvm.relay.testing.inception_v3 builds it: input ``(N, 3, 299, 299)`` NCHW, every
convolution followed by inference batch norm (epsilon 2e-5) and relu, 1000-way softmax.
"""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer, conv2d, dense_add_bias


def _conv(x, channels, kernel=(1, 1), stride=(1, 1), pad=(0, 0), name=""):
    x = conv2d(x, channels=channels, kernel_size=kernel, strides=stride, padding=pad,
               name=f"{name}_conv1")
    x = batch_norm_infer(x, epsilon=2e-5, scale=False, name=f"{name}_bn")
    return op.nn.relu(x)


def _pool(x, kind, kernel=(3, 3), stride=(1, 1), pad=(1, 1)):
    if kind == "max":
        return op.nn.max_pool2d(x, pool_size=kernel, strides=stride, padding=pad)
    return op.nn.avg_pool2d(x, pool_size=kernel, strides=stride, padding=pad,
                            count_include_pad=True)


def _block_a(x, c1, c5r, c5, c3r, c3a, c3b, pool, proj, name):
    b1 = _conv(x, c1, name=f"{name}_conv")
    b5 = _conv(_conv(x, c5r, name=f"{name}_tower"), c5, (5, 5), pad=(2, 2),
               name=f"{name}_tower_conv_1")
    b3 = _conv(x, c3r, name=f"{name}_tower_1")
    b3 = _conv(b3, c3a, (3, 3), pad=(1, 1), name=f"{name}_tower_1_conv_1")
    b3 = _conv(b3, c3b, (3, 3), pad=(1, 1), name=f"{name}_tower_1_conv_2")
    bp = _conv(_pool(x, pool), proj, name=f"{name}_tower_2_conv")
    return op.concatenate([b1, b5, b3, bp], axis=1)


def _block_b(x, c3, c3r, c3a, c3b, name):
    b3 = _conv(x, c3, (3, 3), (2, 2), name=f"{name}_conv")
    bd = _conv(x, c3r, name=f"{name}_tower")
    bd = _conv(bd, c3a, (3, 3), pad=(1, 1), name=f"{name}_tower_conv_1")
    bd = _conv(bd, c3b, (3, 3), (2, 2), name=f"{name}_tower_conv_2")
    return op.concatenate([b3, bd, _pool(x, "max", stride=(2, 2), pad=(0, 0))], axis=1)


def _block_c(x, c1, d7r, d7a, d7b, q7r, q7a, q7b, q7c, q7d, proj, name):
    b1 = _conv(x, c1, name=f"{name}_conv")
    b7 = _conv(x, d7r, name=f"{name}_tower")
    b7 = _conv(b7, d7a, (1, 7), pad=(0, 3), name=f"{name}_tower_conv_1")
    b7 = _conv(b7, d7b, (7, 1), pad=(3, 0), name=f"{name}_tower_conv_2")
    q = _conv(x, q7r, name=f"{name}_tower_1")
    for i, (c, k, p) in enumerate([(q7a, (7, 1), (3, 0)), (q7b, (1, 7), (0, 3)),
                                   (q7c, (7, 1), (3, 0)), (q7d, (1, 7), (0, 3))]):
        q = _conv(q, c, k, pad=p, name=f"{name}_tower_1_conv_{i + 1}")
    bp = _conv(_pool(x, "avg"), proj, name=f"{name}_tower_2_conv")
    return op.concatenate([b1, b7, q, bp], axis=1)


def _block_d(x, c3r, c3, d7r, d7a, d7b, d7c, name):
    b3 = _conv(_conv(x, c3r, name=f"{name}_tower"), c3, (3, 3), (2, 2),
               name=f"{name}_tower_conv_1")
    b7 = _conv(x, d7r, name=f"{name}_tower_1")
    b7 = _conv(b7, d7a, (1, 7), pad=(0, 3), name=f"{name}_tower_1_conv_1")
    b7 = _conv(b7, d7b, (7, 1), pad=(3, 0), name=f"{name}_tower_1_conv_2")
    b7 = _conv(b7, d7c, (3, 3), (2, 2), name=f"{name}_tower_1_conv_3")
    return op.concatenate([b3, b7, _pool(x, "max", stride=(2, 2), pad=(0, 0))], axis=1)


def _block_e(x, c1, d3r, d3, q3r, q3a, q3, pool, proj, name):
    b1 = _conv(x, c1, name=f"{name}_conv")
    d = _conv(x, d3r, name=f"{name}_tower")
    d = [_conv(d, d3, (1, 3), pad=(0, 1), name=f"{name}_tower_mixed_conv"),
         _conv(d, d3, (3, 1), pad=(1, 0), name=f"{name}_tower_mixed_conv_1")]
    q = _conv(x, q3r, name=f"{name}_tower_1")
    q = _conv(q, q3a, (3, 3), pad=(1, 1), name=f"{name}_tower_1_conv_1")
    q = [_conv(q, q3, (1, 3), pad=(0, 1), name=f"{name}_tower_1_mixed_conv"),
         _conv(q, q3, (3, 1), pad=(1, 0), name=f"{name}_tower_1_mixed_conv_1")]
    bp = _conv(_pool(x, pool), proj, name=f"{name}_tower_2_conv")
    return op.concatenate([b1, *d, *q, bp], axis=1)


def get_net(batch_size, num_classes, image_shape, dtype):
    """Inception-v3 as a Relay function of ``data`` (``(batch_size, *image_shape)``) and its
    parameters, ending in a softmax over ``num_classes``."""
    x = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    x = _conv(x, 32, (3, 3), (2, 2), name="conv")
    x = _conv(x, 32, (3, 3), name="conv_1")
    x = _conv(x, 64, (3, 3), pad=(1, 1), name="conv_2")
    x = _pool(x, "max", stride=(2, 2), pad=(0, 0))
    x = _conv(x, 80, name="conv_3")
    x = _conv(x, 192, (3, 3), name="conv_4")
    x = _pool(x, "max", stride=(2, 2), pad=(0, 0))
    for i, proj in enumerate((32, 64, 64)):
        x = _block_a(x, 64, 48, 64, 64, 96, 96, "avg", proj, f"mixed{'_' + str(i) if i else ''}")
    x = _block_b(x, 384, 64, 96, 96, "mixed_3")
    x = _block_c(x, 192, 128, 128, 192, 128, 128, 128, 128, 192, 192, "mixed_4")
    for i in (5, 6):
        x = _block_c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, 192, f"mixed_{i}")
    x = _block_c(x, 192, 192, 192, 192, 192, 192, 192, 192, 192, 192, "mixed_7")
    x = _block_d(x, 192, 320, 192, 192, 192, 192, "mixed_8")
    x = _block_e(x, 320, 384, 384, 448, 384, 384, "avg", 192, "mixed_9")
    x = _block_e(x, 320, 384, 384, 448, 384, 384, "max", 192, "mixed_10")
    x = op.nn.batch_flatten(_pool(x, "avg", (8, 8), (1, 1), (0, 0)))
    out = op.nn.softmax(dense_add_bias(x, units=num_classes, name="fc1"))
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 299, 299), dtype="float32"):
    """``(mod, params)`` of Inception-v3 with seeded random parameters."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))

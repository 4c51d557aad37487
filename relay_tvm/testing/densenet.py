"""DenseNet (Huang et al. 2017, "Densely Connected Convolutional Networks") for
tvm.relay.testing.densenet: a 7x7 stride-2 convolution and max pooling, dense blocks whose
layers (batch-norm, relu, 1x1 convolution to ``bn_size * growth_rate`` channels, batch-norm,
relu, 3x3 convolution to ``growth_rate``) each see the concatenation of the block's input and
all earlier layers' outputs, transitions (batch-norm, relu, 1x1 convolution halving the
channels, 2x2 average pooling) between blocks, then batch-norm, relu, global average pooling and
a dense layer. NCHW, OIHW weights.

tvm.relay 0.19's workload of this name chained the layers of a block (each saw only the one
before it) and concatenated their outputs without the block's input; this one is the paper's
network (DenseNet-121: 7.98 M parameters), with 0.19's function and parameter names."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer, conv2d, dense_add_bias

# size -> (initial features, growth rate, layers per block)
SPECS = {121: (64, 32, (6, 12, 24, 16)), 161: (96, 48, (6, 12, 36, 24)),
         169: (64, 32, (6, 12, 32, 32)), 201: (64, 32, (6, 12, 48, 32))}


def _make_dense_layer(data, growth_rate, bn_size, index):
    """One layer: ``growth_rate`` new channels from all the channels before it."""
    a = op.nn.relu(batch_norm_infer(data, name=f"batch_1_{index}"))
    a = conv2d(a, channels=bn_size * growth_rate, kernel_size=(1, 1), name=f"conv2d_1_{index}")
    a = op.nn.relu(batch_norm_infer(a, name=f"batch_2_{index}"))
    return conv2d(a, channels=growth_rate, kernel_size=(3, 3), padding=(1, 1),
                  name=f"conv2d_2_{index}")


def _make_dense_block(data, num_layers, bn_size, growth_rate, index):
    """``num_layers`` layers; the output concatenates the input and every layer's output."""
    features = [data]
    for i in range(num_layers):
        x = features[0] if len(features) == 1 else op.concatenate(features, 1)
        features.append(_make_dense_layer(x, growth_rate, bn_size, f"{index}_{i}"))
    return op.concatenate(features, 1)


def _make_transition(data, num_output_features, index):
    a = op.nn.relu(batch_norm_infer(data, name=f"batch_t_{index}"))
    a = conv2d(a, channels=num_output_features, kernel_size=(1, 1), name=f"conv_t_{index}")
    return op.nn.avg_pool2d(a, pool_size=(2, 2), strides=(2, 2))


def _make_dense_net(num_init_features, growth_rate, block_config, data_shape, data_dtype,
                    bn_size=4, classes=1000):
    data = var("data", shape=data_shape, dtype=data_dtype)
    body = conv2d(data, channels=num_init_features, kernel_size=(7, 7), strides=(2, 2),
                  padding=(3, 3), name="conv1")
    body = op.nn.relu(batch_norm_infer(body, name="batch1"))
    body = op.nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    features = num_init_features
    for i, n in enumerate(block_config):
        body = _make_dense_block(body, n, bn_size, growth_rate, i)
        features += n * growth_rate
        if i != len(block_config) - 1:
            features //= 2
            body = _make_transition(body, features, i)
    body = op.nn.relu(batch_norm_infer(body, name="batch2"))
    flat = op.nn.batch_flatten(op.nn.global_avg_pool2d(body))
    out = dense_add_bias(flat, units=classes, name="dense")
    return Function(free_vars(out), out)


def get_workload(densenet_size=121, classes=1000, batch_size=4, image_shape=(3, 224, 224),
                 dtype="float32"):
    """``(mod, params)`` of DenseNet-``densenet_size`` (121, 161, 169 or 201): input ``data``
    of ``(batch_size, *image_shape)`` (NCHW), output ``(batch_size, classes)`` scores (no
    softmax, as 0.19's); parameters Xavier-initialized with a fixed seed.

    Raises:
        RelayError: an unknown ``densenet_size``."""
    if densenet_size not in SPECS:
        raise RelayError(f"densenet: densenet_size must be one of {sorted(SPECS)}, got "
                         f"{densenet_size!r}")
    init, growth, blocks = SPECS[densenet_size]
    return create_workload(_make_dense_net(init, growth, blocks, (batch_size, *image_shape),
                                           dtype, 4, classes))


__all__ = ["get_workload", "SPECS"]

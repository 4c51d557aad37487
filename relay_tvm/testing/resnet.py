"""ResNet v2 (pre-activation; He et al. 2016), as tvm.relay.testing.resnet builds it:
batch-norm / relu before each convolution, basic blocks for 18/34 layers, bottlenecks from 50."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer, conv2d, dense_add_bias


def residual_unit(data, num_filter, stride, dim_match, name, bottle_neck=True):
    bn1 = batch_norm_infer(data, epsilon=2e-5, name=name + "_bn1")
    act1 = op.nn.relu(bn1)
    if bottle_neck:
        mid = int(num_filter * 0.25)
        c1 = conv2d(act1, channels=mid, kernel_size=(1, 1), strides=stride, padding=(0, 0),
                    name=name + "_conv1")
        a2 = op.nn.relu(batch_norm_infer(c1, epsilon=2e-5, name=name + "_bn2"))
        c2 = conv2d(a2, channels=mid, kernel_size=(3, 3), strides=(1, 1), padding=(1, 1),
                    name=name + "_conv2")
        a3 = op.nn.relu(batch_norm_infer(c2, epsilon=2e-5, name=name + "_bn3"))
        out = conv2d(a3, channels=num_filter, kernel_size=(1, 1), strides=(1, 1),
                     padding=(0, 0), name=name + "_conv3")
    else:
        c1 = conv2d(act1, channels=num_filter, kernel_size=(3, 3), strides=stride,
                    padding=(1, 1), name=name + "_conv1")
        a2 = op.nn.relu(batch_norm_infer(c1, epsilon=2e-5, name=name + "_bn2"))
        out = conv2d(a2, channels=num_filter, kernel_size=(3, 3), strides=(1, 1),
                     padding=(1, 1), name=name + "_conv2")
    if dim_match:
        shortcut = data
    else:
        shortcut = conv2d(act1, channels=num_filter, kernel_size=(1, 1), strides=stride,
                          name=name + "_sc")
    return op.add(out, shortcut)


def resnet(units, num_stages, filter_list, num_classes, data_shape, bottle_neck=True,
           dtype="float32"):
    data = var("data", shape=data_shape, dtype=dtype)
    body = batch_norm_infer(data, epsilon=2e-5, scale=False, name="bn_data")
    height = data_shape[2]
    if height <= 32:
        body = conv2d(body, channels=filter_list[0], kernel_size=(3, 3), strides=(1, 1),
                      padding=(1, 1), name="conv0")
    else:
        body = conv2d(body, channels=filter_list[0], kernel_size=(7, 7), strides=(2, 2),
                      padding=(3, 3), name="conv0")
        body = op.nn.relu(batch_norm_infer(body, epsilon=2e-5, name="bn0"))
        body = op.nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    for i in range(num_stages):
        stride = (1, 1) if i == 0 else (2, 2)
        body = residual_unit(body, filter_list[i + 1], stride, False,
                             f"stage{i + 1}_unit1", bottle_neck)
        for j in range(units[i] - 1):
            body = residual_unit(body, filter_list[i + 1], (1, 1), True,
                                 f"stage{i + 1}_unit{j + 2}", bottle_neck)
    relu1 = op.nn.relu(batch_norm_infer(body, epsilon=2e-5, name="bn1"))
    flat = op.nn.batch_flatten(op.nn.global_avg_pool2d(relu1))
    fc1 = dense_add_bias(flat, units=num_classes, name="fc1")
    net = op.nn.softmax(fc1)
    return Function(free_vars(net), net)


_UNITS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
          152: [3, 8, 36, 3], 200: [3, 24, 36, 3], 269: [3, 30, 48, 8]}


def get_net(batch_size, num_classes, num_layers=50, image_shape=(3, 224, 224), dtype="float32"):
    if num_layers not in _UNITS:
        raise RelayError(f"resnet: num_layers must be one of {sorted(_UNITS)}, got {num_layers}")
    bottle_neck = num_layers >= 50
    filters = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
    return resnet(_UNITS[num_layers], 4, filters, num_classes, (batch_size, *image_shape),
                  bottle_neck, dtype)


def get_workload(batch_size=1, num_classes=1000, num_layers=18, image_shape=(3, 224, 224),
                 dtype="float32"):
    """``(mod, params)`` of ResNet-``num_layers`` (NCHW input ``data`` of
    ``(batch_size, *image_shape)``), parameters Xavier-initialized with a fixed seed."""
    return create_workload(get_net(batch_size, num_classes, num_layers, image_shape, dtype))

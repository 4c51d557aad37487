"""MobileNet v1 (Howard et al. 2017) as tvm.relay.testing.mobilenet builds it: a 3x3 conv
block, then depthwise-separable blocks (depthwise 3x3 + pointwise 1x1, each with batch-norm and
relu), global pooling, dense, softmax; ``layout`` ``"NCHW"`` or ``"NHWC"``."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer, conv2d

_KERNEL = {"NCHW": ("OIHW", "OIHW"), "NHWC": ("HWIO", "HWOI")}  # (conv, depthwise) weights


def _kernels(layout: str):
    if layout not in _KERNEL:
        raise RelayError(f"mobilenet: layout must be 'NCHW' or 'NHWC', got {layout!r}")
    return _KERNEL[layout]


def conv_block(data, name, channels, kernel_size=(3, 3), strides=(1, 1), padding=(1, 1),
               epsilon=1e-5, layout="NCHW"):
    conv = conv2d(data, channels=channels, kernel_size=kernel_size, strides=strides,
                  padding=padding, data_layout=layout, kernel_layout=_kernels(layout)[0],
                  name=name + "_conv")
    return op.nn.relu(batch_norm_infer(conv, epsilon=epsilon, axis=layout.index("C"),
                                       name=name + "_bn"))


def separable_conv_block(data, name, depthwise_channels, pointwise_channels,
                         kernel_size=(3, 3), downsample=False, padding=(1, 1), epsilon=1e-5,
                         layout="NCHW", dtype="float32"):
    conv_kernel, dw_kernel = _kernels(layout)
    axis = layout.index("C")
    strides = (2, 2) if downsample else (1, 1)
    wshape = ((depthwise_channels, 1, *kernel_size) if layout == "NCHW"
              else (*kernel_size, depthwise_channels, 1))
    weight = var(name + "_weight", shape=wshape, dtype=dtype)
    conv1 = op.nn.conv2d(data, weight, channels=depthwise_channels, groups=depthwise_channels,
                         kernel_size=kernel_size, strides=strides, padding=padding,
                         data_layout=layout, kernel_layout=dw_kernel)
    act1 = op.nn.relu(batch_norm_infer(conv1, epsilon=epsilon, axis=axis, name=name + "_bn1"))
    conv2 = conv2d(act1, channels=pointwise_channels, kernel_size=(1, 1), strides=(1, 1),
                   padding=(0, 0), data_layout=layout, kernel_layout=conv_kernel,
                   name=name + "_conv2")
    return op.nn.relu(batch_norm_infer(conv2, epsilon=epsilon, axis=axis, name=name + "_bn2"))


def mobile_net(num_classes=1000, data_shape=(1, 3, 224, 224), dtype="float32", alpha=1.0,
               is_shallow=False, layout="NCHW"):
    def c(n):
        return int(n * alpha)

    _kernels(layout)
    data = var("data", shape=data_shape, dtype=dtype)
    body = conv_block(data, "conv_block_1", c(32), strides=(2, 2), layout=layout)
    plan = [(32, 64, False), (64, 128, True), (128, 128, False), (128, 256, True),
            (256, 256, False), (256, 512, True)]
    if is_shallow:
        plan += [(512, 1024, True), (1024, 1024, True)]
    else:
        plan += [(512, 512, False)] * 5 + [(512, 1024, True), (1024, 1024, False)]
    for i, (dw, pw, down) in enumerate(plan):
        body = separable_conv_block(body, f"separable_conv_block_{i + 1}", c(dw), c(pw),
                                    downsample=down, layout=layout, dtype=dtype)
    flat = op.nn.batch_flatten(op.nn.global_avg_pool2d(body, layout=layout))
    fc = op.nn.dense(flat, var("fc_weight"), units=num_classes)
    fc = op.nn.bias_add(fc, var("fc_bias"))
    out = op.nn.softmax(fc)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 224, 224), dtype="float32",
                 layout="NCHW", alpha=1.0, is_shallow=False):
    """``(mod, params)`` of MobileNet v1 (width multiplier ``alpha``): input ``data`` of
    ``(batch_size, *image_shape)`` in ``layout`` (``"NCHW"``, or ``"NHWC"`` with
    ``image_shape`` (H, W, C), HWIO / HWOI depthwise weights); tvm.relay 0.19's argument order.

    Raises:
        RelayError: an unknown ``layout``."""
    net = mobile_net(num_classes, (batch_size, *image_shape), dtype, alpha, is_shallow, layout)
    return create_workload(net)

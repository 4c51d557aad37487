"""ResNet v2 (pre-activation; He et al. 2016), as tvm.relay.testing.resnet builds it:
batch-norm / relu before each convolution, basic blocks for 18/34 layers, bottlenecks from 50;
``layout`` ``"NCHW"`` (weights OIHW) or ``"NHWC"`` (weights HWIO). The same units with 3-d
convolutions make :mod:`.resnet_3d`."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer, conv2d, conv3d, dense_add_bias

_KERNEL_LAYOUTS = {"NCHW": "OIHW", "NHWC": "HWIO", "NCDHW": "OIDHW", "NDHWC": "DHWIO"}


def _layouts(layout: str, nd: int = 2):
    """``(convolution keyword arguments, batch-norm axis)`` of an ``nd``-d data layout."""
    kernel = _KERNEL_LAYOUTS.get(layout)
    if kernel is None or len(layout) != nd + 2:
        ok = " or ".join(repr(k) for k in _KERNEL_LAYOUTS if len(k) == nd + 2)
        raise RelayError(f"resnet{'_3d' if nd == 3 else ''}: layout must be {ok}, got "
                         f"{layout!r}")
    return {"data_layout": layout, "kernel_layout": kernel}, layout.index("C")


def _conv(nd: int):
    """The named-weight convolution of ``nd`` spatial axes, taking scalar sizes."""
    conv = conv2d if nd == 2 else conv3d

    def make(data, channels, kernel, strides, padding, name, lay):
        def t(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd

        return conv(data, channels=channels, kernel_size=t(kernel), strides=t(strides),
                    padding=t(padding), name=name, **lay)

    return make


def residual_unit(data, num_filter, stride, dim_match, name, bottle_neck=True, layout="NCHW"):
    """A pre-activation residual unit (bottleneck 1x1-3x3-1x1 or basic 3x3-3x3) on NCHW / NHWC
    data, or NCDHW / NDHWC data (3-d convolutions: tvm.relay.testing.resnet_3d)."""
    nd = len(layout) - 2
    lay, axis = _layouts(layout, nd)
    conv = _conv(nd)
    bn1 = batch_norm_infer(data, epsilon=2e-5, axis=axis, name=name + "_bn1")
    act1 = op.nn.relu(bn1)
    if bottle_neck:
        mid = int(num_filter * 0.25)
        c1 = conv(act1, mid, 1, stride, 0, name + "_conv1", lay)
        a2 = op.nn.relu(batch_norm_infer(c1, epsilon=2e-5, axis=axis, name=name + "_bn2"))
        c2 = conv(a2, mid, 3, 1, 1, name + "_conv2", lay)
        a3 = op.nn.relu(batch_norm_infer(c2, epsilon=2e-5, axis=axis, name=name + "_bn3"))
        out = conv(a3, num_filter, 1, 1, 0, name + "_conv3", lay)
    else:
        c1 = conv(act1, num_filter, 3, stride, 1, name + "_conv1", lay)
        a2 = op.nn.relu(batch_norm_infer(c1, epsilon=2e-5, axis=axis, name=name + "_bn2"))
        out = conv(a2, num_filter, 3, 1, 1, name + "_conv2", lay)
    if dim_match:
        shortcut = data
    else:
        shortcut = conv(act1, num_filter, 1, stride, 0, name + "_sc", lay)
    return op.add(out, shortcut)


def resnet(units, num_stages, filter_list, num_classes, data_shape, bottle_neck=True,
           layout="NCHW", dtype="float32"):
    """The network: a stem, ``num_stages`` stages of residual units, batch-norm, relu, global
    average pooling, dense, softmax. 2-d for NCHW / NHWC (stem: 7x7 stride-2 convolution and
    3x3 stride-2 max pooling, or one 3x3 convolution for images up to 32 high); 3-d for NCDHW /
    NDHWC (stem: a 3x7x7 convolution of strides (1, 2, 2) without pooling, or 3x3x3)."""
    nd = len(layout) - 2
    lay, axis = _layouts(layout, nd)
    conv = _conv(nd)
    data = var("data", shape=data_shape, dtype=dtype)
    body = batch_norm_infer(data, epsilon=2e-5, axis=axis, scale=False, name="bn_data")
    height = data_shape[layout.index("H")]
    if height <= 32:
        body = conv(body, filter_list[0], 3, 1, 1, "conv0", lay)
    elif nd == 2:
        body = conv(body, filter_list[0], 7, 2, 3, "conv0", lay)
        body = op.nn.relu(batch_norm_infer(body, epsilon=2e-5, axis=axis, name="bn0"))
        body = op.nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1),
                                layout=layout)
    else:
        body = conv(body, filter_list[0], (3, 7, 7), (1, 2, 2), (1, 3, 3), "conv0", lay)
        body = op.nn.relu(batch_norm_infer(body, epsilon=2e-5, axis=axis, name="bn0"))
    for i in range(num_stages):
        stride = 1 if i == 0 else 2
        body = residual_unit(body, filter_list[i + 1], stride, False,
                             f"stage{i + 1}_unit1", bottle_neck, layout)
        for j in range(units[i] - 1):
            body = residual_unit(body, filter_list[i + 1], 1, True,
                                 f"stage{i + 1}_unit{j + 2}", bottle_neck, layout)
    relu1 = op.nn.relu(batch_norm_infer(body, epsilon=2e-5, axis=axis, name="bn1"))
    pool = op.nn.global_avg_pool2d if nd == 2 else op.nn.global_avg_pool3d
    flat = op.nn.batch_flatten(pool(relu1, layout=layout))
    fc1 = dense_add_bias(flat, units=num_classes, name="fc1")
    net = op.nn.softmax(fc1)
    return Function(free_vars(net), net)


_UNITS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
          152: [3, 8, 36, 3], 200: [3, 24, 36, 3], 269: [3, 30, 48, 8]}


def get_net(batch_size, num_classes, num_layers=50, image_shape=(3, 224, 224), layout="NCHW",
            dtype="float32"):
    if num_layers not in _UNITS:
        raise RelayError(f"resnet: num_layers must be one of {sorted(_UNITS)}, got {num_layers}")
    bottle_neck = num_layers >= 50
    filters = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
    return resnet(_UNITS[num_layers], 4, filters, num_classes, (batch_size, *image_shape),
                  bottle_neck, layout, dtype)


def get_workload(batch_size=1, num_classes=1000, num_layers=18, image_shape=(3, 224, 224),
                 layout="NCHW", dtype="float32"):
    """``(mod, params)`` of ResNet-``num_layers``: input ``data`` of ``(batch_size,
    *image_shape)`` in ``layout`` (``"NCHW"``, or ``"NHWC"`` with ``image_shape`` (H, W, C)
    and HWIO weights), parameters Xavier-initialized with a fixed seed (tvm.relay 0.19's
    argument order).

    Raises:
        RelayError: an unknown ``num_layers`` or ``layout``."""
    return create_workload(get_net(batch_size, num_classes, num_layers, image_shape, layout,
                                   dtype))

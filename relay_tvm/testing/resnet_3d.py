"""ResNet v2 with 3-d convolutions for video clips, as tvm.relay.testing.resnet_3d builds it:
:mod:`.resnet`'s pre-activation units with 3x3x3 / 1x1x1 convolutions, a 3x7x7 stem of
strides (1, 2, 2) (3x3x3 for clips up to 32 high), stages of strides 2 in all three axes,
global average pooling, dense, softmax. ``layout`` ``"NCDHW"`` (weights OIDHW) or
``"NDHWC"`` (DHWIO)."""

from __future__ import annotations

from ..errors import RelayError
from .init import create_workload
from .resnet import _UNITS, _layouts, residual_unit, resnet  # noqa: F401  (0.19's names)


def get_net(batch_size, num_classes, num_layers=50, image_shape=(3, 16, 112, 112),
            layout="NCDHW", dtype="float32"):
    _layouts(layout, 3)
    if num_layers not in _UNITS:
        raise RelayError(f"resnet_3d: num_layers must be one of {sorted(_UNITS)}, got "
                         f"{num_layers}")
    bottle_neck = num_layers >= 50
    filters = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
    return resnet(_UNITS[num_layers], 4, filters, num_classes, (batch_size, *image_shape),
                  bottle_neck, layout, dtype)


def get_workload(batch_size=1, num_classes=1000, num_layers=18, image_shape=(3, 16, 112, 112),
                 layout="NCDHW", dtype="float32"):
    """``(mod, params)`` of a 3-d ResNet-``num_layers``: input ``data`` of ``(batch_size,
    *image_shape)`` in ``layout`` (``image_shape`` (C, D, H, W) for NCDHW, (D, H, W, C) for
    NDHWC), output ``(batch_size, num_classes)`` softmax scores; parameters Xavier-initialized
    with a fixed seed (tvm.relay 0.19's argument order).

    Raises:
        RelayError: an unknown ``num_layers`` or ``layout``."""
    return create_workload(get_net(batch_size, num_classes, num_layers, image_shape, layout,
                                   dtype))


__all__ = ["get_workload", "get_net", "resnet", "residual_unit"]

"""``device_copy`` (tvm.relay 0.19's ``relay.op.device_copy``): copy a tensor from one device to
another.

relay_tvm runs a program on one device, so only a copy within one device type runs (it is
the identity); a copy between device types builds, types and prints, and raises a clear
error when it would run (0.19's heterogeneous execution and device planning were removed from
TVM). The attributes hold 0.19's ``src_virtual_device`` / ``dst_virtual_device`` with
``device_type_int``, ``virtual_device_id``, ``target`` and ``memory_scope``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BuildError, UnsupportedOperatorError
from ..ir.attrs import AttrField as F
from ._common import identity_rel
from .registry import OpPattern, make_call, register_op

# DLPack device type codes (kDLCPU = 1, kDLCUDA = 2, ...), as tvm.runtime.Device numbers them
_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi",
          10: "rocm", 12: "ext_dev", 14: "hexagon", 15: "webgpu"}


@dataclass(frozen=True)
class VirtualDevice:
    """The device half of 0.19's ``VirtualDevice`` (as ``device_copy``'s attributes carry it).

    Attributes:
        device_type_int: the DLPack device type code (1 cpu, 2 cuda, ...).
        virtual_device_id: the device index.
        target: always None here (0.19 filled it in during device planning).
        memory_scope: always ``""``.
    """

    device_type_int: int
    virtual_device_id: int = 0
    target: object = None
    memory_scope: str = ""

    def __str__(self):
        name = _NAMES.get(self.device_type_int, str(self.device_type_int))
        return f"VirtualDevice(device_type={name}, virtual_device_id={self.virtual_device_id})"


def _virtual_device(dev, what) -> VirtualDevice:
    import tvm

    if isinstance(dev, VirtualDevice):
        return dev
    if isinstance(dev, str):
        dev = tvm.device(dev)
    if isinstance(dev, int):
        return VirtualDevice(dev)
    if hasattr(dev, "dlpack_device_type"):
        return VirtualDevice(int(dev.dlpack_device_type()), int(dev.index))
    if hasattr(dev, "device_type"):
        return VirtualDevice(int(dev.device_type), int(dev.device_id))
    raise TypeError(f"device_copy: {what} must be a device name, a tvm.runtime.Device or a "
                    f"DLPack device type code, got {dev!r}")


def _parsed(v):
    """A VirtualDevice from the text form ``str(VirtualDevice)`` (what printed IR parses back
    to), else ``v``."""
    import re

    m = re.fullmatch(r"VirtualDevice\(device_type=(\w+), virtual_device_id=(\d+)\)", str(v))
    if isinstance(v, str) and m:
        codes = {name: code for code, name in _NAMES.items()}
        kind = codes.get(m.group(1))
        return VirtualDevice(kind if kind is not None else int(m.group(1)), int(m.group(2)))
    return v


def _check_same(attrs, error=UnsupportedOperatorError):
    src, dst = _parsed(attrs.src_virtual_device), _parsed(attrs.dst_virtual_device)
    if src.device_type_int != dst.device_type_int:
        raise error(
            f"device_copy from {src} to {dst}: relay_tvm runs a program on one device; copies "
            "between device types (0.19's heterogeneous execution) are not supported"
        )


def _ref(args, attrs, out_type):
    _check_same(attrs)
    return args[0].copy()


def _compute(attrs, inputs, out_type):
    from tvm import topi

    _check_same(attrs, BuildError)
    return topi.identity(inputs[0])


register_op(
    "device_copy",
    num_inputs=1,
    arguments=("data",),
    attrs=("relay.attrs.DeviceCopyAttrs",
           [F("src_virtual_device", "any"), F("dst_virtual_device", "any")]),
    rel=identity_rel("device_copy"),
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OPAQUE,
    doc="Copy data between devices (one device type only here; see relay_tvm.op.device_copy).",
    level=10,
)


def device_copy(data, src_device, dst_device):
    """Copy ``data`` from ``src_device`` to ``dst_device`` (tvm.relay 0.19's
    ``relay.op.device_copy``).

    Args:
        data: a tensor expression.
        src_device, dst_device: a device name (``"cpu"``, ``"cuda"``), a
            ``tvm.runtime.Device`` or a DLPack device type code.

    Returns:
        The call; its type is data's.

    Raises:
        TypeError: a device of another kind.
        UnsupportedOperatorError / BuildError: (when interpreted / compiled) the two devices
            are of different types.
    """
    return make_call("device_copy", [data],
                     src_virtual_device=_virtual_device(src_device, "src_device"),
                     dst_virtual_device=_virtual_device(dst_device, "dst_device"))


__all__ = ["device_copy", "VirtualDevice"]

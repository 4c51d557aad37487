"""The DCGAN generator (Radford et al. 2016) as tvm.relay.testing.dcgan builds it: a dense
projection to ``(ngf*8, 4, 4)``, four stride-2 transposed convolutions with batch-norm and relu,
and tanh."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..errors import RelayError
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer


def _check_layout(layout: str) -> None:
    if layout not in ("NCHW", "NHWC"):
        raise RelayError(f"dcgan: layout must be 'NCHW' or 'NHWC', got {layout!r}")


def deconv2d(data, ishape, oshape, kshape, name, stride=(2, 2), layout="NCHW"):
    """A transposed convolution from ``ishape`` to ``oshape`` (channels, h, w); weights IOHW
    (``layout`` NCHW) or HWOI (NHWC)."""
    _check_layout(layout)
    pad_y, pad_x = (kshape[0] - 1) // 2, (kshape[1] - 1) // 2
    adj_y = (oshape[1] + 2 * pad_y - kshape[0]) % stride[0]
    adj_x = (oshape[2] + 2 * pad_x - kshape[1]) % stride[1]
    if layout == "NCHW":
        weight = var(name + "_weight", shape=(ishape[0], oshape[0], *kshape))
        kernel_layout = "IOHW"
    else:
        weight = var(name + "_weight", shape=(*kshape, oshape[0], ishape[0]))
        kernel_layout = "HWOI"
    return op.nn.conv2d_transpose(data, weight, kernel_size=kshape, strides=stride,
                                  channels=oshape[0], padding=(pad_y, pad_x),
                                  output_padding=(adj_y, adj_x), data_layout=layout,
                                  kernel_layout=kernel_layout)


def deconv2d_bn_relu(data, prefix, **kwargs):
    net = deconv2d(data, name=prefix + "_deconv", **kwargs)
    axis = kwargs.get("layout", "NCHW").index("C")
    return op.nn.relu(batch_norm_infer(net, epsilon=1e-5 + 1e-12, axis=axis, name=prefix + "_bn"))


def get_net(batch_size, random_len=100, oshape=(3, 64, 64), ngf=128, code=None, layout="NCHW",
            dtype="float32"):
    """The generator of ``(batch_size, *oshape)`` images (``oshape`` (C, 64, 64), the only
    size this architecture makes) from ``code`` (a ``(batch_size, random_len)`` expression;
    a variable ``data`` if None), in ``layout``.

    Raises:
        RelayError: ``oshape`` not (C, 64, 64), or an unknown ``layout``."""
    _check_layout(layout)
    if len(oshape) != 3 or tuple(oshape[1:]) != (64, 64):
        raise RelayError(f"dcgan: oshape must be (channels, 64, 64) (four stride-2 transposed "
                         f"convolutions from 4x4), got {tuple(oshape)}")
    if code is None:
        code = var("data", shape=(batch_size, random_len), dtype=dtype)
    dense_weight = var("dense_weight", shape=(4 * 4 * ngf * 8, random_len), dtype=dtype)
    net = op.nn.dense(code, dense_weight, units=4 * 4 * ngf * 8)
    net = op.reshape(net, (-1, ngf * 8, 4, 4))
    if layout == "NHWC":
        net = op.transpose(net, (0, 2, 3, 1))
    net = op.nn.relu(net)
    s = oshape[1]
    kw = {"kshape": (4, 4), "layout": layout}
    net = deconv2d_bn_relu(net, "g2", ishape=(ngf * 8, 4, 4), oshape=(ngf * 4, s // 8, s // 8),
                           **kw)
    net = deconv2d_bn_relu(net, "g3", ishape=(ngf * 4, s // 8, s // 8),
                           oshape=(ngf * 2, s // 4, s // 4), **kw)
    net = deconv2d_bn_relu(net, "g4", ishape=(ngf * 2, s // 4, s // 4),
                           oshape=(ngf, s // 2, s // 2), **kw)
    net = deconv2d(net, ishape=(ngf, s // 2, s // 2), oshape=oshape[-3:], name="g5_deconv",
                   **kw)
    out = op.tanh(net)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, oshape=(3, 64, 64), ngf=128, random_len=100, layout="NCHW",
                 dtype="float32"):
    """``(mod, params)`` of the generator: input ``data`` ``(batch, random_len)``, output
    ``(batch, *oshape)`` (NCHW) or ``(batch, 64, 64, C)`` (NHWC); tvm.relay 0.19's argument
    order.

    Raises:
        RelayError: ``oshape`` not (C, 64, 64), or an unknown ``layout``."""
    return create_workload(get_net(batch_size, random_len, oshape, ngf, layout=layout,
                                   dtype=dtype))

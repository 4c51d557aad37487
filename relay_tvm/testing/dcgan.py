"""The DCGAN generator (Radford et al. 2016) as tvm.relay.testing.dcgan builds it: a dense
projection to ``(ngf*8, 4, 4)``, four stride-2 transposed convolutions with batch-norm and relu,
and tanh."""

from __future__ import annotations

from .. import op
from ..analysis import free_vars
from ..ir.expr import Function, var
from .init import create_workload
from .layers import batch_norm_infer


def deconv2d(data, ishape, oshape, kshape, name, stride=(2, 2)):
    """A transposed convolution from ``ishape`` to ``oshape`` (channels, h, w)."""
    pad_y, pad_x = (kshape[0] - 1) // 2, (kshape[1] - 1) // 2
    adj_y = (oshape[1] + 2 * pad_y - kshape[0]) % stride[0]
    adj_x = (oshape[2] + 2 * pad_x - kshape[1]) % stride[1]
    weight = var(name + "_weight", shape=(ishape[0], oshape[0], *kshape))
    return op.nn.conv2d_transpose(data, weight, kernel_size=kshape, strides=stride,
                                  channels=oshape[0], padding=(pad_y, pad_x),
                                  output_padding=(adj_y, adj_x))


def deconv2d_bn_relu(data, prefix, **kwargs):
    net = deconv2d(data, name=prefix + "_deconv", **kwargs)
    return op.nn.relu(batch_norm_infer(net, epsilon=1e-5 + 1e-12, name=prefix + "_bn"))


def get_net(batch_size, random_len=100, oshape=(3, 64, 64), ngf=128, dtype="float32"):
    code = var("data", shape=(batch_size, random_len), dtype=dtype)
    dense_weight = var("dense_weight", shape=(4 * 4 * ngf * 8, random_len), dtype=dtype)
    net = op.nn.dense(code, dense_weight, units=4 * 4 * ngf * 8)
    net = op.nn.relu(op.reshape(net, (-1, ngf * 8, 4, 4)))
    s = oshape[1]
    net = deconv2d_bn_relu(net, "g2", ishape=(ngf * 8, 4, 4), oshape=(ngf * 4, s // 8, s // 8),
                           kshape=(4, 4))
    net = deconv2d_bn_relu(net, "g3", ishape=(ngf * 4, s // 8, s // 8),
                           oshape=(ngf * 2, s // 4, s // 4), kshape=(4, 4))
    net = deconv2d_bn_relu(net, "g4", ishape=(ngf * 2, s // 4, s // 4),
                           oshape=(ngf, s // 2, s // 2), kshape=(4, 4))
    net = deconv2d(net, ishape=(ngf, s // 2, s // 2), oshape=oshape[-3:], kshape=(4, 4),
                   name="g5_deconv")
    out = op.tanh(net)
    return Function(free_vars(out), out)


def get_workload(batch_size=1, oshape=(3, 64, 64), ngf=128, random_len=100, dtype="float32"):
    """``(mod, params)`` of the generator: input ``data`` ``(batch, random_len)``, output
    ``(batch, *oshape)``."""
    return create_workload(get_net(batch_size, random_len, oshape, ngf, dtype))

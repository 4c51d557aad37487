"""FlattenAtrousConv (tvm.relay 0.19's ``flatten_atrous_conv.cc``): TensorFlow's way of writing
a dilated ("atrous") convolution,

    nn.batch_to_space_nd(conv2d(nn.space_to_batch_nd(x, block, paddings), w), block, crops)

with an NHWC ``nn.conv2d`` or ``qnn.conv2d`` of stride 1, dilation 1 and no padding, becomes
one convolution of ``x`` with ``dilation = block`` and the "SAME" padding of the dilated kernel
(``pad = (k - 1) * block``, ``pad_before = pad // 2``, the rest after).

0.19 rewrote every such chain without looking at the paddings and crops. Here the chain is
rewritten only when the two programs compute the same thing: the rows and columns the first
output reads are the same (``paddings[i][0] - crops[i][0] == pad_before[i]``) and the output
has the input's height and width (what the SAME padding gives), with static shapes. Other
chains are left as they are. The pass runs in ``relay.build``'s pipeline (before AlterOpLayout,
as in 0.19) at every opt level.
"""

from __future__ import annotations

from ..ir.types import TensorType
from ..op.registry import make_call
from ._rewrite import Rewriter, op_name
from .pass_infra import FunctionPass, PassInfo

_CONVS = ("nn.conv2d", "qnn.conv2d")


def _static(t):
    return isinstance(t, TensorType) and all(isinstance(d, int) for d in t.shape)


def _kernel_hw(conv, w_type):
    ks = conv.attrs.kernel_size
    if ks:
        return int(ks[0]), int(ks[1])
    layout = conv.attrs.kernel_layout
    if not _static(w_type) or len(layout) != 4:
        return None
    return w_type.shape[layout.index("H")], w_type.shape[layout.index("W")]


def _flatten(orig, new):
    """The single convolution for ``new`` (a batch_to_space_nd call), or None."""
    conv, conv_o = new.args[0], orig.args[0]
    if op_name(conv) not in _CONVS or op_name(conv.args[0]) != "nn.space_to_batch_nd":
        return None
    s2b, s2b_o = conv.args[0], conv_o.args[0]
    a, b2s_a, s2b_a = conv.attrs, new.attrs, s2b.attrs
    block = tuple(int(v) for v in b2s_a.block_shape)
    if (len(block) != 2 or tuple(int(v) for v in s2b_a.block_shape) != block
            or a.data_layout != "NHWC" or tuple(a.strides) != (1, 1)
            or tuple(a.dilation) != (1, 1) or any(int(p) for p in a.padding)):
        return None
    x_t = getattr(s2b_o.args[0], "_checked_type", None)
    out_t = getattr(orig, "_checked_type", None)
    khw = _kernel_hw(conv, getattr(conv_o.args[1], "_checked_type", None))
    if not (_static(x_t) and _static(out_t) and len(x_t.shape) == 4 and khw):
        return None
    before, after = [], []
    for i in range(2):
        pad = (khw[i] - 1) * block[i]  # SAME padding of the dilated kernel, stride 1
        before.append(pad // 2)
        after.append(pad - pad // 2)
        shift = int(s2b_a.paddings[i][0]) - int(b2s_a.crops[i][0])
        if shift != before[i]:
            return None
    if tuple(out_t.shape[:3]) != tuple(x_t.shape[:3]):
        return None
    fields = dict(a.items())
    fields.update(padding=(before[0], before[1], after[0], after[1]), dilation=block)
    return make_call(op_name(conv), [s2b.args[0], *conv.args[1:]], span=new.span, **fields)


class _Flatten(Rewriter):
    def post_call(self, orig, new):
        if op_name(new) != "nn.batch_to_space_nd":
            return new
        out = _flatten(orig, new)
        return new if out is None else out


def FlattenAtrousConv():  # noqa: N802 - Relay's name
    """space_to_batch_nd -> conv2d -> batch_to_space_nd chains to one dilated convolution
    (see the module docstring for when). Needs types (runs InferType first)."""
    return FunctionPass(lambda f, m, c: _Flatten().rewrite(f),
                        PassInfo(0, "FlattenAtrousConv", ("InferType",)))


__all__ = ["FlattenAtrousConv"]

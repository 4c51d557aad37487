"""FoldScaleAxis: fold per-channel scaling into convolution weights (opt level 3).

After Relay's ``fold_scale_axis.cc``, for NCHW data and OIHW weights with ``groups == 1``:

- **backward**: ``conv2d(x, W) * s``, ``(conv2d(x, W) + b) * s`` and ``bias_add(conv2d(x, W),
  b, axis=1) * s`` (Gluon's convolutions with a bias, then batch norm) with a constant ``s`` of
  shape ``(O, 1, 1)`` (one value per output channel) become ``conv2d(x, W * s[:, None, None,
  None])`` (``+ b * s``), when the convolution (and the add) have no other use;
- **forward**: ``conv2d(x * s, W)`` with a constant ``s`` of shape ``(C, 1, 1)`` (one value per
  input channel, and ``x * s`` used only by the convolution) becomes
  ``conv2d(x, W * s[None, :, None, None])``.

The weight products are constant when ``W`` is, and the FoldConstant that runs afterwards (as
in Relay's pass) folds them, so batch-norm scales vanish into the convolution weights.
"""

from __future__ import annotations

from ..ir.expr import Constant
from ..op.registry import make_call
from ._rewrite import Rewriter, called_ops, node_uses, op_name
from .fold_constant import fold_constant_expr
from .pass_infra import FunctionPass, PassInfo


def _plain_conv(call) -> bool:
    if op_name(call) != "nn.conv2d":
        return False
    a = call.attrs
    return (op_name(call) == "nn.conv2d" and a.groups == 1 and a.data_layout == "NCHW"
            and a.kernel_layout == "OIHW" and not a.out_layout)


def _channel_const(s, channels):
    """``s`` as a ``(channels,)``-per-channel constant of shape (C,1,1) / (1,C,1,1), or None."""
    if type(s) is not Constant:
        return None
    shape = s.data.shape
    if shape in ((channels, 1, 1), (1, channels, 1, 1)):
        return s
    return None


def _out_channels(conv) -> int | None:
    t = getattr(conv, "_checked_type", None)
    if t is None or not isinstance(t.shape[1], int):
        return None
    return t.shape[1]


class _Fold(Rewriter):
    def __init__(self, uses):
        super().__init__()
        self.uses = uses

    def _single(self, orig) -> bool:
        return self.uses.get(orig, 0) <= 1

    def post_call(self, orig, new):
        name = op_name(new)
        if name == "multiply":
            return self._backward(orig, new)
        if name == "nn.conv2d" and _plain_conv(new):
            return self._forward(orig, new)
        return new

    def _backward(self, orig, new):
        for i in (0, 1):
            inner, s = new.args[i], new.args[1 - i]
            oinner = orig.args[i]
            if not self._single(oinner):
                continue
            bias = None
            conv, oconv = inner, oinner
            if op_name(inner) == "nn.bias_add":
                if inner.attrs.axis not in (1, -3) or not self._single(oinner.args[0]):
                    continue
                conv, oconv, bias = inner.args[0], oinner.args[0], inner.args[1]
            elif op_name(inner) == "add":
                for j in (0, 1):
                    if _plain_conv(inner.args[j]) and self._single(oinner.args[j]):
                        conv, oconv, bias = inner.args[j], oinner.args[j], inner.args[1 - j]
                        break
                else:
                    continue
            if not _plain_conv(conv):
                continue
            o = _out_channels(oconv)
            if o is None or _channel_const(s, o) is None:
                continue
            shapes = ((o,),) if op_name(inner) == "nn.bias_add" else ((o, 1, 1), (1, o, 1, 1))
            if bias is not None and (type(bias) is not Constant or bias.data.shape not in shapes):
                continue
            ws = make_call("reshape", [s], newshape=(o, 1, 1, 1))
            w = make_call("multiply", [conv.args[1], ws])
            out = make_call("nn.conv2d", [conv.args[0], w], span=conv.span, **conv.attrs._fields)
            if bias is not None and op_name(inner) == "nn.bias_add":
                b = make_call("multiply", [bias, make_call("reshape", [s], newshape=(o,))])
                out = make_call("nn.bias_add", [out, b], span=inner.span, axis=1)
            elif bias is not None:
                out = make_call("add", [out, make_call("multiply", [bias, s])], span=inner.span)
            return out
        return new

    def _forward(self, orig, new):
        x, w = new.args
        if op_name(x) != "multiply" or not self._single(orig.args[0]):
            return new
        t = getattr(orig.args[0], "_checked_type", None)
        if t is None or not isinstance(t.shape[1], int):
            return new
        c = t.shape[1]
        for i in (0, 1):
            data, s = x.args[i], x.args[1 - i]
            dt = getattr(orig.args[0].args[i], "_checked_type", None)
            if dt is None or tuple(dt.shape) != tuple(t.shape):
                continue
            if _channel_const(s, c) is None:
                continue
            ws = make_call("reshape", [s], newshape=(1, c, 1, 1))
            return make_call("nn.conv2d", [data, make_call("multiply", [w, ws])], span=new.span,
                             **new.attrs._fields)
        return new


def fold_scale_axis(func, mod=None):
    if "nn.conv2d" not in called_ops(func):  # both directions fold into a convolution
        return func
    out = _Fold(node_uses(func)).rewrite(func)
    if out is func:
        return func
    from ..typing.infer import infer_expr

    infer_expr(out, mod)
    return fold_constant_expr(out, mod)


def FoldScaleAxis():  # noqa: N802 - Relay's name
    """Fold per-channel scales into conv2d weights, backward and forward (opt level 3)."""
    return FunctionPass(lambda f, m, c: fold_scale_axis(f, m),
                        PassInfo(3, "FoldScaleAxis", ("InferType",)))


def BackwardFoldScaleAxis():  # noqa: N802 - Relay's name
    return FoldScaleAxis()


def ForwardFoldScaleAxis():  # noqa: N802 - Relay's name
    return FoldScaleAxis()


__all__ = ["FoldScaleAxis", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "fold_scale_axis"]

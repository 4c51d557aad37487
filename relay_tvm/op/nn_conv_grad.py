"""``nn.conv2d_backward_weight``: the gradient of ``nn.conv2d`` with respect to its weight, as an
operator (tvm.relay 0.19's ``relay.nn.conv2d_backward_weight``).

Arguments: ``grad`` ``(N, O, OH, OW)`` (the output gradient) and ``data`` ``(N, C, H, W)`` (the
forward input); result ``(O, C / groups, KH, KW)`` with ``(KH, KW) = kernel_size``:

    dw[o, i, p, q] = sum over n, y < OH, z < OW of
        grad[n, o, y, z] * data_padded[n, g(o) * C/groups + i, y*sh + p*dh, z*sw + q*dw]

with ``g(o) = o // (O / groups)`` the group of output channel ``o``. Depthwise (``groups == C
== O``) gives ``(O, channels / groups, KH, KW)`` as 0.19's relation (``channels`` required).
As in 0.19 the attributes are ``Conv2DAttrs`` reused: ``data_layout`` holds ``grad_layout``,
``kernel_layout`` holds ``data_layout`` and ``out_layout`` holds ``kernel_layout``; only
NCHW / NCHW / OIHW are supported. TE compute: a direct reduction (topi has no such kernel).
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ._nn_common import pad_before_after
from .nn_conv import _conv_attrs, _tup
from .registry import OpPattern, make_call, register_op

OP = "nn.conv2d_backward_weight"


def _params(attrs):
    s = tuple(attrs.strides)
    d = tuple(attrs.dilation)
    before, after = pad_before_after(attrs.padding, 2, OP)
    return s, d, before, after


def _rel(types, attrs):
    from ._common import same_dtype, shape_str, tensor_args

    ts = tensor_args(types, ("grad", "data"), OP)
    if ts is None:
        return None
    grad, data = ts
    layouts = (attrs.data_layout, attrs.kernel_layout, attrs.out_layout or "OIHW")
    if layouts != ("NCHW", "NCHW", "OIHW"):
        raise TypeInferenceError(
            f"{OP}: only grad_layout NCHW, data_layout NCHW, kernel_layout OIHW are supported, "
            f"got {layouts[0]}, {layouts[1]}, {layouts[2]}"
        )
    if attrs.kernel_size is None:
        raise TypeInferenceError(f"{OP}: kernel_size must be given (the forward kernel's size)")
    if grad.ndim != 4 or data.ndim != 4:
        raise TypeInferenceError(
            f"{OP}: grad and data must be 4-D, got {shape_str(grad.shape)} and "
            f"{shape_str(data.shape)}"
        )
    same_dtype([grad, data], ("grad", "data"), OP)
    n, c = data.shape[:2]
    o = grad.shape[1]
    g = attrs.groups
    if any(not isinstance(v, int) for v in (c, o)):
        raise TypeInferenceError(f"{OP}: channel counts must be static")
    if grad.shape[0] != n:
        raise TypeInferenceError(f"{OP}: grad batch {grad.shape[0]} differs from data batch {n}")
    if g < 1 or c % g or o % g:
        raise TypeInferenceError(
            f"{OP}: groups {g} must divide data channels {c} and grad channels {o}"
        )
    if c == o == g:
        if attrs.channels is None:
            raise TypeInferenceError(f"{OP}: channels must be given for a depthwise convolution")
        wi = attrs.channels // g
    else:
        wi = c // g
    kh, kw = attrs.kernel_size
    s, d, before, after = _params(attrs)
    for ax in (0, 1):
        size, k, out = data.shape[2 + ax], (kh, kw)[ax], grad.shape[2 + ax]
        if not all(isinstance(v, int) for v in (size, out)):
            raise TypeInferenceError(f"{OP}: spatial dimensions must be static")
        need = (out - 1) * s[ax] + (k - 1) * d[ax] + 1
        if need > size + before[ax] + after[ax]:
            raise TypeInferenceError(
                f"{OP}: grad {shape_str(grad.shape)} is larger than the forward convolution of "
                f"data {shape_str(data.shape)} with kernel_size {tuple(attrs.kernel_size)}, "
                f"strides {s}, dilation {d}, padding {before + after} can produce"
            )
    return _out_type((o, wi, kh, kw), attrs.out_dtype or grad.dtype)


def _out_type(shape, dtype):
    from ..ir.types import TensorType

    return TensorType(tuple(shape), dtype)


def _ref(args, attrs, out_type):
    grad, data = (np.asarray(a) for a in args)
    s, d, before, after = _params(attrs)
    acc = np.float64 if out_type.dtype.startswith("float") else np.int64
    xp = np.pad(data.astype(acc), ((0, 0), (0, 0), (before[0], after[0]), (before[1], after[1])))
    o_n, wi, kh, kw = out_type.concrete_shape
    oh, ow = grad.shape[2:]
    per_group = o_n // attrs.groups
    out = np.zeros((o_n, wi, kh, kw), acc)
    g64 = grad.astype(acc)
    for p in range(kh):
        for q in range(kw):
            y0, z0 = p * d[0], q * d[1]
            win = xp[:, :, y0:y0 + s[0] * (oh - 1) + 1:s[0], z0:z0 + s[1] * (ow - 1) + 1:s[1]]
            for o in range(o_n):
                ch = (o // per_group) * wi + np.arange(wi)
                out[o, :, p, q] = np.einsum("nyz,niyz->i", g64[:, o], win[:, ch])
    return out.astype(out_type.dtype)


def _compute(attrs, inputs, out_type):
    from tvm import te, topi

    grad, data = inputs
    s, d, before, after = _params(attrs)
    xp = topi.nn.pad(data, (0, 0, before[0], before[1]), (0, 0, after[0], after[1]))
    o_n, wi, kh, kw = (int(v) for v in out_type.concrete_shape)
    n, _, oh, ow = (int(v) for v in grad.shape)
    per_group = o_n // attrs.groups
    dtype = out_type.dtype
    rn = te.reduce_axis((0, n), "n")
    ry = te.reduce_axis((0, oh), "y")
    rz = te.reduce_axis((0, ow), "z")

    def body(o, i, p, q):
        ch = (o // per_group) * wi + i
        return te.sum(
            grad[rn, o, ry, rz].astype(dtype)
            * xp[rn, ch, ry * s[0] + p * d[0], rz * s[1] + q * d[1]].astype(dtype),
            axis=[rn, ry, rz],
        )

    return te.compute((o_n, wi, kh, kw), body, name="conv2d_backward_weight")


register_op(
    OP,
    num_inputs=2,
    arguments=("grad", "data"),
    attrs=_conv_attrs(2),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Gradient of nn.conv2d with respect to the weight (see relay_tvm.op.nn_conv_grad).",
    level=2,
)


def conv2d_backward_weight(grad, data, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                           groups=1, channels=None, kernel_size=None, grad_layout="NCHW",
                           data_layout="NCHW", kernel_layout="OIHW", out_dtype=""):
    """The gradient of ``nn.conv2d(data, w, strides, padding, dilation, groups)`` with respect
    to ``w``, given the output gradient ``grad`` (tvm.relay 0.19's
    ``relay.nn.conv2d_backward_weight``; formula in the module doc).

    Args:
        grad: ``(N, O, OH, OW)``, NCHW.
        data: ``(N, C, H, W)``, NCHW, grad's dtype.
        strides, padding, dilation, groups: the forward convolution's (padding: 1, 2 or 4
            values as ``nn.conv2d``).
        channels: the forward convolution's output channels (needed when depthwise).
        kernel_size: the forward kernel's ``(KH, KW)`` (required).
        grad_layout, data_layout, kernel_layout: only ``"NCHW"``, ``"NCHW"``, ``"OIHW"``.
        out_dtype: the result's dtype (default grad's); sums accumulate in it.

    Returns:
        ``(O, C / groups, KH, KW)`` (depthwise: ``(O, channels / groups, KH, KW)``).

    Raises:
        TypeInferenceError: (at type inference) another layout, no kernel_size, shapes that do
            not fit.
    """
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    return make_call(
        OP, [grad, data], strides=_tup(strides, 2, "strides", OP),
        padding=tuple(sum(pad_before_after(padding, 2, OP), ())),
        dilation=_tup(dilation, 2, "dilation", OP), groups=int(groups), channels=channels,
        kernel_size=_tup(kernel_size, 2, "kernel_size", OP), data_layout=grad_layout,
        kernel_layout=data_layout, out_layout=kernel_layout, out_dtype=out_dtype,
    )


__all__ = ["conv2d_backward_weight"]

"""Gradients of the nn.* operators (Relay's ``_tensor_grad.py`` rules) and the operators they
need: ``nn.max_pool2d_grad`` and ``nn.avg_pool2d_grad``.

A rule is ``grad(orig_call, output_grad) -> [one gradient per argument]``, built from Relay
operators; ``orig_call`` is type-checked (its ``checked_type`` and its arguments' are known).
Rules exist for relu, leaky_relu, prelu, softmax, log_softmax, bias_add, dense, batch_matmul,
batch_flatten, pad (constant), max/avg/global-avg pool2d, conv2d (groups 1 or depthwise, NCHW),
cross_entropy and cross_entropy_with_logits.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import GradientError, RelayError, TypeInferenceError
from ..ir.expr import Constant

# the operators whose gradients are registered here must be registered first
from . import nn_activation, nn_conv, nn_dense, nn_loss, nn_shape  # noqa: F401
from ._nn_common import ntuple, pad_before_after
from .nn_pool import _pool_attrs, _pool_rel
from .registry import OpPattern, make_call, register_gradient, register_op


def _c(name, *args, **attrs):
    """A call of ``name``: other families' operators through their public constructors (their
    argument conventions), the nn operators through the registry."""
    if "." not in name:
        import relay_tvm.op as ops

        return getattr(ops, name)(*args, **attrs)
    return make_call(name, list(args), **attrs)


def _shape(e):
    return tuple(int(d) for d in e.checked_type.shape)


def _scalar(v, dtype):
    return Constant(np.array(v, dtype=dtype))


# ---- pooling gradients -----------------------------------------------------------------------


def _pool_grad_rel(kind):
    op = f"nn.{kind}_pool2d_grad"
    fwd = _pool_rel(2, op)

    def rel(types, attrs):
        from ._common import tensor_args

        ts = tensor_args(types, ("out_grad", "data"), op)
        if ts is None:
            return None
        out = fwd([ts[1]], attrs)
        if tuple(ntuple(attrs.dilation, 2, "dilation", op)) != (1, 1):
            raise TypeInferenceError(f"{op}: dilation {attrs.dilation} is not supported (1 only)")
        if out != ts[0]:
            raise TypeInferenceError(f"{op}: out_grad type {ts[0]} differs from the pooling "
                                     f"output {out}")
        return ts[1]

    return rel


def _pool_grad_ref(kind):
    def ref(args, attrs, out_type):
        from .nn_pool import _canon, _uncanon

        g, x = (_canon(a, attrs.layout, 2) for a in args)
        k = ntuple(attrs.pool_size, 2, "pool_size", "")
        s = ntuple(attrs.strides, 2, "strides", "")
        before, after = pad_before_after(attrs.padding, 2, "")
        h, w = x.shape[2:]
        dx = np.zeros(x.shape, dtype="float64")
        for oi, oj in itertools.product(range(g.shape[2]), range(g.shape[3])):
            taps = [(oi * s[0] - before[0] + a, oj * s[1] - before[1] + b)
                    for a in range(k[0]) for b in range(k[1])]
            inside = [(i, j) for i, j in taps if 0 <= i < h and 0 <= j < w]
            if not inside:
                continue
            if kind == "max":
                vals = np.stack([x[:, :, i, j] for i, j in inside], axis=-1)  # (N, C, T)
                best = vals.argmax(axis=-1)
                for t, (i, j) in enumerate(inside):
                    dx[:, :, i, j] += np.where(best == t, g[:, :, oi, oj], 0.0)
            else:
                if attrs.count_include_pad:
                    count = sum(1 for i, j in taps if -before[0] <= i < h + after[0]
                                and -before[1] <= j < w + after[1])
                else:
                    count = len(inside)
                for i, j in inside:
                    dx[:, :, i, j] += g[:, :, oi, oj] / max(count, 1)
        return _uncanon(dx, attrs.layout, 2).astype(out_type.dtype)

    return ref


def _pool_grad_compute(kind):
    def compute(attrs, inputs, out_type):
        import tvm
        from tvm import te, topi

        grad, data = inputs
        k = ntuple(attrs.pool_size, 2, "", "")
        s = ntuple(attrs.strides, 2, "", "")
        before, after = pad_before_after(attrs.padding, 2, "")
        include = kind == "avg" and attrs.count_include_pad
        if include:
            # topi.nn.pool_grad divides by the whole kernel even where a ceil_mode window runs
            # past the padded input, which the forward pool does not: rescale the gradient to
            # the forward's divisor first.
            ha, wa = attrs.layout.index("H"), attrs.layout.index("W")
            size = [int(data.shape[ha]) + before[0] + after[0],
                    int(data.shape[wa]) + before[1] + after[1]]

            def scaled(*idx):
                cnt = [te.min(k[d], size[d] - idx[a] * s[d]) for d, a in enumerate((ha, wa))]
                div = (cnt[0] * cnt[1]).astype(grad.dtype)
                return grad(*idx) * tvm.tirx.const(k[0] * k[1], grad.dtype) / div

            grad = te.compute(grad.shape, scaled, name="avg_pool_grad_scale")
        return topi.nn.pool_grad(grad, data, list(k), list(s), list(before + after), kind,
                                 attrs.ceil_mode, include, attrs.layout)

    return compute


for _kind in ("max", "avg"):
    register_op(
        f"nn.{_kind}_pool2d_grad",
        num_inputs=2,
        arguments=("out_grad", "data"),
        attrs=_pool_attrs(2, _kind == "avg"),
        rel=_pool_grad_rel(_kind),
        ref=_pool_grad_ref(_kind),
        compute=_pool_grad_compute(_kind),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
        doc=f"Gradient of nn.{_kind}_pool2d with respect to its data (topi.nn.pool_grad).",
        level=2,
    )


def max_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0),
                    layout="NCHW", out_layout="", ceil_mode=False):
    """Gradient of :func:`max_pool2d` (tvm.relay.nn.max_pool2d_grad): each output gradient goes
    to the maximum of its window."""
    before, after = pad_before_after(padding, 2, "nn.max_pool2d_grad")
    return _c("nn.max_pool2d_grad", out_grad, data,
              pool_size=ntuple(pool_size, 2, "pool_size", "nn.max_pool2d_grad"),
              strides=ntuple(strides, 2, "strides", "nn.max_pool2d_grad"), padding=before + after, layout=layout,
              out_layout=out_layout, ceil_mode=ceil_mode)


def avg_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0),
                    layout="NCHW", out_layout="", ceil_mode=False, count_include_pad=True):
    """Gradient of :func:`avg_pool2d` (tvm.relay.nn.avg_pool2d_grad): each output gradient is
    spread evenly over the taps its average divided by."""
    before, after = pad_before_after(padding, 2, "nn.avg_pool2d_grad")
    return _c("nn.avg_pool2d_grad", out_grad, data,
              pool_size=ntuple(pool_size, 2, "pool_size", "nn.avg_pool2d_grad"),
              strides=ntuple(strides, 2, "strides", "nn.avg_pool2d_grad"), padding=before + after, layout=layout,
              out_layout=out_layout, ceil_mode=ceil_mode, count_include_pad=count_include_pad)


# ---- rules -----------------------------------------------------------------------------------


@register_gradient("nn.relu")
def _relu_grad(orig, grad):
    x = orig.args[0]
    zeros = _c("zeros_like", x)
    return [_c("where", _c("less", x, zeros), zeros, grad)]


@register_gradient("nn.leaky_relu")
def _leaky_relu_grad(orig, grad):
    x = orig.args[0]
    scaled = _c("multiply", grad, _scalar(orig.attrs.alpha, x.checked_type.dtype))
    return [_c("where", _c("less", x, _c("zeros_like", x)), scaled, grad)]


def _vector_of(t, axis, ndim):
    """Reduce ``t`` to the 1-D vector along ``axis``."""
    return _c("sum", t, axis=(axis % ndim,), keepdims=False, exclude=True)


@register_gradient("nn.prelu")
def _prelu_grad(orig, grad):
    x, alpha = orig.args
    ndim = len(x.checked_type.shape)
    axis = orig.attrs.axis % ndim
    neg = _c("less", x, _c("zeros_like", x))
    a = _c("expand_dims", alpha, axis=1, num_newaxis=ndim - axis - 1) if axis < ndim - 1 else alpha
    dx = _c("where", neg, _c("multiply", grad, a), grad)
    da = _vector_of(_c("where", neg, _c("multiply", grad, x), _c("zeros_like", x)), axis, ndim)
    return [dx, da]


@register_gradient("nn.softmax")
def _softmax_grad(orig, grad):
    axis = orig.attrs.axis
    s = _c("sum", _c("multiply", grad, orig), axis=(axis,), keepdims=True, exclude=False)
    return [_c("multiply", _c("subtract", grad, s), orig)]


@register_gradient("nn.log_softmax")
def _log_softmax_grad(orig, grad):
    axis = orig.attrs.axis
    s = _c("sum", grad, axis=(axis,), keepdims=True, exclude=False)
    return [_c("subtract", grad, _c("multiply", s, _c("exp", orig)))]


@register_gradient("nn.bias_add")
def _bias_add_grad(orig, grad):
    data = orig.args[0]
    ndim = len(data.checked_type.shape)
    return [_c("collapse_sum_like", grad, data), _vector_of(grad, orig.attrs.axis, ndim)]


@register_gradient("nn.dense")
def _dense_grad(orig, grad):
    data, weight = orig.args
    if len(data.checked_type.shape) != 2:
        raise RelayError("gradient of nn.dense: only 2-d data is supported")
    dx = _c("nn.dense", grad, _c("transpose", weight, axes=(1, 0)))
    dw = _c("nn.dense", _c("transpose", grad, axes=(1, 0)), _c("transpose", data, axes=(1, 0)))
    return [dx, dw]


@register_gradient("nn.batch_matmul")
def _batch_matmul_grad(orig, grad):
    a, b = orig.args
    ta, tb = orig.attrs.transpose_a, orig.attrs.transpose_b

    def bmm(x, y, tx, ty):
        return _c("nn.batch_matmul", x, y, out_dtype="", transpose_a=tx, transpose_b=ty)

    # C = op(A) op(B): dop(A) = G op(B)^T, dop(B) = op(A)^T G
    da = bmm(b, grad, tb, True) if ta else bmm(grad, b, False, not tb)
    db = bmm(grad, a, True, ta) if tb else bmm(a, grad, not ta, False)
    return [_c("collapse_sum_like", da, a), _c("collapse_sum_like", db, b)]


@register_gradient("nn.batch_flatten")
def _batch_flatten_grad(orig, grad):
    return [_c("reshape_like", grad, orig.args[0])]


@register_gradient("nn.pad")
def _pad_grad(orig, grad):
    if orig.attrs.pad_mode != "constant":
        raise RelayError(f"gradient of nn.pad: pad_mode {orig.attrs.pad_mode!r} is not supported")
    shape = _shape(orig.args[0])
    begin = [w[0] for w in orig.attrs.pad_width]
    end = [b + d for b, d in zip(begin, shape)]
    return [_c("strided_slice", grad, begin=tuple(begin), end=tuple(end)),
            _c("zeros_like", orig.args[1])]


def _pool_grad_rule(kind):
    def rule(orig, grad):
        a = orig.attrs
        if any(int(d) != 1 for d in a.dilation):  # what nn.*_pool2d_grad computes
            raise GradientError(f"gradient of nn.{kind}_pool2d: dilation {tuple(a.dilation)} "
                                f"is not supported (1 only)")
        extra = {"count_include_pad": a.count_include_pad} if kind == "avg" else {}
        return [_c(f"nn.{kind}_pool2d_grad", grad, orig.args[0], pool_size=a.pool_size,
                   strides=a.strides, dilation=a.dilation, padding=a.padding, layout=a.layout,
                   out_layout=a.out_layout, ceil_mode=a.ceil_mode, **extra)]

    return rule


register_gradient("nn.max_pool2d", _pool_grad_rule("max"))
register_gradient("nn.avg_pool2d", _pool_grad_rule("avg"))


@register_gradient("nn.global_avg_pool2d")
def _global_avg_pool2d_grad(orig, grad):
    data = orig.args[0]
    layout = orig.attrs.layout
    shape = _shape(data)
    size = (shape[layout.index("H")], shape[layout.index("W")])
    return [_c("nn.avg_pool2d_grad", grad, data, pool_size=size, strides=(1, 1),
               padding=(0, 0, 0, 0), layout=layout, ceil_mode=False, count_include_pad=True)]


def _conv2d_data_grad(grad, weight, groups, c, kernel, s, d, before, after, opad):
    """The data gradient of a convolution: a convolution of the (stride-dilated) output gradient
    with the spatially flipped, in/out-swapped weight, which the conv2d schedules run several
    times faster than ``conv2d_transpose``; ``conv2d_transpose`` when a padding would be
    negative."""
    pads_b = [dd * (k - 1) - b for dd, k, b in zip(d, kernel, before)]
    pads_a = [dd * (k - 1) - e + op for dd, k, e, op in zip(d, kernel, after, opad)]
    if min(pads_b + pads_a) < 0:
        # the forward OIHW weight, read as IOHW, is the transposed convolution's weight
        return _c("nn.conv2d_transpose", grad, weight, strides=s, padding=before + after,
                  dilation=d, groups=groups, channels=c, kernel_size=kernel, data_layout="NCHW",
                  kernel_layout="IOHW", out_layout="", output_padding=opad, out_dtype="")
    g = grad
    if tuple(s) != (1, 1):
        g = _c("nn.dilate", g, strides=(1, 1, s[0], s[1]), dilation_value=0.0)
    flipped = _c("reverse", _c("reverse", weight, axis=2), axis=3)
    o, i = _shape(weight)[:2]
    if groups == 1:
        flipped = _c("transpose", flipped, axes=(1, 0, 2, 3))  # (I, O, kh, kw)
    elif i != 1 or o != groups:
        # per group: (O/G, I) swapped, so (G, O/G, I, kh, kw) -> (G * I, O/G, kh, kw); a
        # depthwise weight (one input channel, multiplier 1) is its own swap
        flipped = _c("reshape", flipped, newshape=(groups, o // groups, i) + tuple(kernel))
        flipped = _c("transpose", flipped, axes=(0, 2, 1, 3, 4))
        flipped = _c("reshape", flipped, newshape=(groups * i, o // groups) + tuple(kernel))
    return _c("nn.conv2d", g, flipped, strides=(1, 1), padding=tuple(pads_b + pads_a),
              dilation=d, groups=groups, channels=c, kernel_size=kernel, data_layout="NCHW",
              kernel_layout="OIHW", out_layout="", out_dtype="")


@register_gradient("nn.conv2d")
def _conv2d_grad(orig, grad):
    """Data: a transposed convolution of the output gradient; weight: the correlation of the
    data with the output gradient: summed over the batch through a convolution's input
    channels (one convolution per group for grouped ones), and for depthwise convolutions one
    (sample, channel) group at a time."""
    data, weight = orig.args
    a = orig.attrs
    if a.data_layout != "NCHW" or a.kernel_layout != "OIHW":
        raise RelayError("gradient of nn.conv2d: only NCHW/OIHW is supported")
    n, c, h, w = _shape(data)
    o, i, kh, kw = _shape(weight)
    oh, ow = _shape(orig)[2:]
    groups = int(a.groups)
    if c % groups or o % groups or i * groups != c:
        raise RelayError(f"gradient of nn.conv2d: groups={groups} does not divide the "
                         f"{c} input / {o} output channels of weight {(o, i, kh, kw)}")
    s = ntuple(a.strides, 2, "strides", "")
    d = ntuple(a.dilation, 2, "dilation", "")
    before, after = pad_before_after(a.padding, 2, "")
    # output_padding restores the rows the forward stride dropped
    opad = tuple(
        (x + b + e - ((k - 1) * dd + 1)) - (y - 1) * ss
        for x, b, e, k, dd, y, ss in zip((h, w), before, after, (kh, kw), d, (oh, ow), s)
    )
    dx = _conv2d_data_grad(grad, weight, groups, c, (kh, kw), s, d, before, after, opad)
    # dW[o, i, p, q] = sum_{n, y, z} g[n, o, y, z] * xpad[n, i, y*s + p*d, z*s + q*d]: a
    # convolution of the data (channels as batch) with the gradient (stride and dilation swap).
    full = tuple(
        (x + b + e - ((yy - 1) * ss + 1)) // dd + 1
        for x, b, e, yy, ss, dd in zip((h, w), before, after, (oh, ow), s, d)
    )
    if groups == 1:
        xt = _c("transpose", data, axes=(1, 0, 2, 3))  # (C, N, H, W)
        gt = _c("transpose", grad, axes=(1, 0, 2, 3))  # (O, N, OH, OW)
        dw = _c("nn.conv2d", xt, gt, strides=d, padding=before + after, dilation=s, groups=1,
                channels=o, kernel_size=(oh, ow), data_layout="NCHW", kernel_layout="OIHW",
                out_layout="", out_dtype="")  # (C, O, full...)
        dw = _c("transpose", dw, axes=(1, 0, 2, 3))
    elif i != 1 or o != c:
        # group g: dW[g*O/G + k, j] = sum_n x[n, g*I + j] (*) grad[n, g*O/G + k]; the batch
        # goes into the input channels and the groups stay groups: data (I, G*N, H, W),
        # weight (G*O/G, N, OH, OW)
        og = o // groups
        xt = _c("reshape", data, newshape=(n, groups, i, h, w))
        xt = _c("transpose", xt, axes=(2, 1, 0, 3, 4))
        xt = _c("reshape", xt, newshape=(i, groups * n, h, w))
        gt = _c("reshape", grad, newshape=(n, groups, og, oh, ow))
        gt = _c("transpose", gt, axes=(1, 2, 0, 3, 4))
        gt = _c("reshape", gt, newshape=(o, n, oh, ow))
        dw = _c("nn.conv2d", xt, gt, strides=d, padding=before + after, dilation=s,
                groups=groups, channels=o, kernel_size=(oh, ow), data_layout="NCHW",
                kernel_layout="OIHW", out_layout="", out_dtype="")  # (I, O, full...)
        dw = _c("transpose", dw, axes=(1, 0, 2, 3))
    else:
        xr = _c("reshape", data, newshape=(1, n * c, h, w))
        gr = _c("reshape", grad, newshape=(n * c, 1, oh, ow))
        dw = _c("nn.conv2d", xr, gr, strides=d, padding=before + after, dilation=s, groups=n * c,
                channels=n * c, kernel_size=(oh, ow), data_layout="NCHW", kernel_layout="OIHW",
                out_layout="", out_dtype="")  # (1, N*C, full...)
        dw = _c("reshape", dw, newshape=(n, c, 1, full[0], full[1]))
        dw = _c("sum", dw, axis=(0,), keepdims=False, exclude=False)
    if full != (kh, kw):
        dw = _c("strided_slice", dw, begin=(0, 0, 0, 0), end=(o, i, kh, kw))
    return [dx, dw]


def _batch_scale(x, grad):
    n = _shape(x)[0]
    return _c("divide", grad, _scalar(n, x.checked_type.dtype))


@register_gradient("nn.cross_entropy")
def _cross_entropy_grad(orig, grad):
    x, y = orig.args
    g = _batch_scale(x, grad)
    return [_c("negative", _c("divide", _c("multiply", g, y), x)),
            _c("negative", _c("multiply", g, _c("log", x)))]


@register_gradient("nn.cross_entropy_with_logits")
def _cross_entropy_logits_grad(orig, grad):
    x, y = orig.args
    g = _batch_scale(x, grad)
    return [_c("negative", _c("multiply", g, y)), _c("negative", _c("multiply", g, x))]


__all__ = ["max_pool2d_grad", "avg_pool2d_grad"]

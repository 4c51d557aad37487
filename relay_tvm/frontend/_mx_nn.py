"""MXNet converters: convolution, pooling, normalization, activations, losses, resizing.

Attribute defaults and semantics are MXNet 1.9.1's (Convolution, Deconvolution, Pooling,
BatchNorm, LeakyReLU, SoftmaxOutput, ... in the MXNet operator docs); where Relay's operator
differs (L2Normalization's eps, GroupNorm's per-group gamma, Pooling 'same'), the converter
composes the exact MXNet formula from Relay operators.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.expr import const
from ._mx_util import R, first, outputs_of

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _conv_common(a, c, ndim_default=None):
    kernel = a.get_tuple("kernel")
    nd = len(kernel)
    if nd not in (1, 2, 3):
        raise c.error(f"kernel={kernel}: only 1-, 2- and 3-d convolutions are supported")
    stride = a.get_tuple("stride", ()) or (1,) * nd
    dilate = a.get_tuple("dilate", ()) or (1,) * nd
    pad = a.get_tuple("pad", ()) or (0,) * nd
    for key, v in (("stride", stride), ("dilate", dilate), ("pad", pad)):
        if len(v) != nd:
            raise c.error(f"{key}={v} does not match kernel={kernel}")
    layout = a.get_str("layout", None) or _LAYOUTS[nd]
    if layout in ("None", ""):
        layout = _LAYOUTS[nd]
    return kernel, nd, stride, dilate, pad, layout


def _kernel_layout(layout, transpose=False):
    if layout.startswith("NC"):
        return ("IO" if transpose else "OI") + layout[2:]
    # channels-last: MXNet weights are (O, spatial..., I)
    return "O" + layout[1:-1] + "I"


def _bias(out, bias, layout):
    return R("nn.bias_add")(out, bias, axis=layout.index("C"))


def convolution(ins, a, c):
    kernel, nd, stride, dilate, pad, layout = _conv_common(a, c)
    data, weight = ins[0], ins[1]
    groups = a.get_int("num_group", 1)
    channels = a.get_int("num_filter")
    dshape = c.shape(data)
    cin = dshape[layout.index("C")]
    if groups < 1 or (isinstance(cin, int) and cin % groups) or (channels and channels % groups):
        raise c.error(f"num_group={groups} must be >= 1 and divide both the {cin} input channels "
                      f"and num_filter={channels}")
    if layout.startswith("NC"):
        c.expect(weight, (channels, cin // groups) + tuple(kernel), "the weight",
                 {0: f"num_filter={channels}",
                  **{2 + i: f"kernel={tuple(kernel)}" for i in range(len(kernel))}})
    fn = {1: "nn.conv1d", 2: "nn.conv2d", 3: "nn.conv3d"}[nd]
    out = R(fn)(data, weight, strides=stride, padding=pad, dilation=dilate, groups=groups,
                channels=channels, kernel_size=kernel, data_layout=layout,
                kernel_layout=_kernel_layout(layout))
    if not a.get_bool("no_bias", False):
        if len(ins) < 3:
            raise c.error("no_bias=False but the node has no bias input")
        c.expect(ins[2], (channels,), "the bias", {0: f"num_filter={channels}"})
        out = _bias(out, ins[2], layout)
    return out


def deconvolution(ins, a, c):
    kernel, nd, stride, dilate, pad, layout = _conv_common(a, c)
    if nd not in (1, 2, 3):
        raise c.error(f"kernel={kernel}: only 1-d, 2-d and 3-d Deconvolution are supported")
    if not layout.startswith("NC"):
        raise c.error(f"layout={layout}: Deconvolution supports NCW / NCHW / NCDHW")
    data, weight = ins[0], ins[1]
    adj = a.get_tuple("adj", ()) or (0,) * nd
    target = a.get_tuple("target_shape", ()) or ()
    if target and any(t > 0 for t in target):
        in_sp = c.shape(data)[2:]
        pad, adj = [], []
        for i in range(nd):
            k = dilate[i] * (kernel[i] - 1) + 1
            total = stride[i] * (in_sp[i] - 1) + k - target[i]
            if total < 0:
                raise c.error(f"target_shape={target} is larger than the stride allows")
            pad.append((total + 1) // 2)
            adj.append(total % 2)
        pad, adj = tuple(pad), tuple(adj)
    groups = a.get_int("num_group", 1)
    channels = a.get_int("num_filter")
    c.expect(weight, (c.shape(data)[1], channels // groups) + tuple(kernel), "the weight",
             {1: f"num_filter={channels}, num_group={groups}",
              **{2 + i: f"kernel={tuple(kernel)}" for i in range(len(kernel))}})
    fn = {1: "nn.conv1d_transpose", 2: "nn.conv2d_transpose", 3: "nn.conv3d_transpose"}[nd]
    out = R(fn)(data, weight, strides=stride, padding=pad, dilation=dilate, groups=groups,
                channels=channels, kernel_size=kernel, data_layout=layout,
                kernel_layout=_kernel_layout(layout, transpose=True), output_padding=adj)
    if not a.get_bool("no_bias", True):
        if len(ins) < 3:
            raise c.error("no_bias=False but the node has no bias input")
        out = _bias(out, ins[2], layout)
    return out


def pooling(ins, a, c):
    x = ins[0]
    ptype = a.get_str("pool_type", "max")
    if ptype not in ("max", "avg", "sum", "lp"):
        raise c.error(f"pool_type={ptype!r} is not one of max, avg, sum, lp")
    xshape = c.shape(x)
    nd = len(xshape) - 2
    if nd not in (1, 2, 3):
        raise c.error(f"input of rank {len(xshape)}: pooling supports 3-d to 5-d inputs")
    layout = a.get_str("layout", None)
    if layout in (None, "None", ""):
        layout = _LAYOUTS[nd]
    if not layout.startswith("NC"):
        raise c.error(f"layout={layout}: only channel-first pooling layouts are supported")
    spatial = xshape[2:]
    if a.get_bool("global_pool", False):
        return _global_pool(x, ptype, nd, layout, spatial, a, c)
    kernel = a.get_tuple("kernel")
    if len(kernel) != nd:
        raise c.error(f"kernel={kernel} does not fit a {nd}-d pooling of input {xshape}")
    stride = a.get_tuple("stride", ()) or (1,) * nd
    pad = a.get_tuple("pad", ()) or (0,) * nd
    conv = a.get_str("pooling_convention", "valid")
    ceil_mode = False
    if conv == "full":
        ceil_mode = True
        padding = tuple(pad) * 2
    elif conv == "valid":
        padding = tuple(pad) * 2
    elif conv == "same":
        if nd != 1 or ptype != "max":  # MXNet 1.9.1's check (its graph would not run)
            raise c.error(f"pooling_convention='same' with pool_type={ptype!r} on {nd}-d data: "
                          "MXNet supports 'same' for 1-d max pooling only")
        before, after = [], []
        for i in range(nd):
            out = (spatial[i] + stride[i] - 1) // stride[i]
            total = max((out - 1) * stride[i] + kernel[i] - spatial[i], 0)
            before.append(total // 2)
            after.append(total - total // 2)
        padding = tuple(before) + tuple(after)
    else:
        raise c.error(f"pooling_convention={conv!r} is not one of valid, full, same")
    out = _pool_body(x, ptype, nd, kernel, stride, padding, layout, ceil_mode, a, c)
    if ceil_mode:
        out = _full_tail(out, ptype, spatial, kernel, stride, pad, c)
    return out


def _full_tail(out, ptype, spatial, kernel, stride, pad, c):
    """MXNet's 'full' convention keeps a last window that starts past the input and its leading
    padding; Relay's ceil_mode (topi, PyTorch's rule) drops it. MXNet fills such a window with
    the lowest float (max) or 0 (avg, sum, lp): append those rows."""
    extra = []
    for i in range(len(spatial)):
        span = spatial[i] + 2 * pad[i] - kernel[i]
        mx_out = 1 + -(-span // stride[i])
        relay_out = mx_out - 1 if (mx_out - 1) * stride[i] >= spatial[i] + pad[i] else mx_out
        extra.append(mx_out - relay_out)
    if not any(extra):
        return out
    fill = float(np.finfo(np.float32).min) if ptype == "max" else 0.0
    widths = [[0, 0], [0, 0]] + [[0, e] for e in extra]
    return R("nn.pad")(out, widths, pad_value=fill)


def _pool_body(x, ptype, nd, kernel, stride, padding, layout, ceil_mode, a, c):
    cip = a.get_bool("count_include_pad", True)
    if cip is None:
        cip = True
    if ptype == "max":
        return R(f"nn.max_pool{nd}d")(x, pool_size=kernel, strides=stride, padding=padding,
                                      layout=layout, ceil_mode=ceil_mode)
    if ptype == "avg":
        return R(f"nn.avg_pool{nd}d")(x, pool_size=kernel, strides=stride, padding=padding,
                                      layout=layout, ceil_mode=ceil_mode,
                                      count_include_pad=cip)
    # sum and lp: the average over the taps inside the padded input, times their number
    p = _lp_p(a, c) if ptype == "lp" else None
    base = x if ptype == "sum" else _pow_p(x, p, c)
    avg = R(f"nn.avg_pool{nd}d")(base, pool_size=kernel, strides=stride, padding=padding,
                                 layout=layout, ceil_mode=ceil_mode, count_include_pad=True)
    counts = _tap_counts(c.shape(x)[2:], c.shape(avg)[2:], kernel, stride, padding)
    total = R("multiply")(avg, const(counts.astype(c.dtype(x)), c.dtype(x)))
    return total if ptype == "sum" else _root_p(total, p, c)


def _tap_counts(spatial, out_sp, kernel, stride, padding):
    """Per output position, how many taps of the window lie inside the padded input."""
    nd = len(spatial)
    counts = np.ones((1, 1) + tuple(out_sp), "float64")
    for d in range(nd):
        lo, hi = padding[d], padding[nd + d]
        start = np.arange(out_sp[d]) * stride[d] - lo
        n = np.minimum(start + kernel[d], spatial[d] + hi) - start
        shape = [1] * (nd + 2)
        shape[2 + d] = out_sp[d]
        counts = counts * n.reshape(shape)
    return counts


def _lp_p(a, c):
    """The ``p_value`` of an ``lp`` pooling: MXNet requires it and implements 1, 2 and 3."""
    p = a.get_int("p_value", None)
    if p not in (1, 2, 3):
        raise c.error(f"pool_type='lp' needs p_value 1, 2 or 3 (what MXNet implements), "
                      f"got {p}")
    return p


def _pow_p(x, p, c):
    """``x ** p`` with the sign kept for odd ``p`` (MXNet multiplies: ``a * a * a``)."""
    out = x
    for _ in range(p - 1):
        out = R("multiply")(out, x)
    return out


def _root_p(x, p, c):
    """MXNet's root of an ``lp`` pooling's sum: ``sqrt`` for p = 2, the real cube root for
    p = 3 (``cbrt``: a negative sum of cubes has a negative root; ``power(x, 1/3)`` gave NaN)."""
    if p == 1:
        return x
    if p == 2:
        return R("sqrt")(x)
    from ._mx_tensor import _cbrt

    return _cbrt([x], None, c)


def _global_pool(x, ptype, nd, layout, spatial, a, c):
    size = int(np.prod(spatial))
    if ptype == "lp":
        p = _lp_p(a, c)
        s = R("sum")(_pow_p(x, p, c), axis=list(range(2, 2 + nd)), keepdims=True)
        return _root_p(s, p, c)
    if nd == 2:
        fn = "nn.global_max_pool2d" if ptype == "max" else "nn.global_avg_pool2d"
        out = R(fn)(x, layout=layout)
    else:
        axes = list(range(2, 2 + nd))
        out = R("max" if ptype == "max" else "mean")(x, axis=axes, keepdims=True)
    if ptype == "sum":
        out = R("multiply")(out, c.scalar(size, x))
    return out


def batch_norm(ins, a, c):
    data, gamma, beta, mean, var = ins[:5]
    axis = a.get_int("axis", 1)
    eps = a.get_float("eps", 1e-3)
    ch = c.shape(data)[axis]
    for p, what in ((gamma, "gamma"), (beta, "beta"), (mean, "the moving mean"),
                    (var, "the moving variance")):
        c.expect(p, (ch,), what)
    if a.get_bool("fix_gamma", True):
        gamma = const(np.ones(c.shape(gamma), c.dtype(gamma)), c.dtype(gamma))
    dt, pdt = c.dtype(data), c.dtype(gamma)
    # half-precision data with float32 statistics (Gluon's net.cast("float16") keeps BatchNorm's
    # parameters in float32): MXNet normalizes in float32 and returns the data's dtype
    widen = dt in ("float16", "bfloat16") and pdt == "float32"
    x = R("cast")(data, pdt) if widen else data
    out = first(R("nn.batch_norm")(x, gamma, beta, mean, var, axis=axis, epsilon=eps))
    if widen:
        out = R("cast")(out, dt)
    if a.get_bool("output_mean_var", False):
        # MXNet's second and third outputs are the mean and the inverse standard deviation
        # 1 / sqrt(var + eps) (its docs: "Output the mean and inverse std"; at inference those
        # of the moving statistics), not the variance
        inv_std = R("divide")(c.scalar(1.0, var), R("sqrt")(R("add")(var, c.scalar(eps, var))))
        return [out, mean, inv_std]
    return out


def instance_norm(ins, a, c):
    data, gamma, beta = ins
    return R("nn.instance_norm")(data, gamma, beta, axis=1, epsilon=a.get_float("eps", 1e-3))


def layer_norm(ins, a, c):
    data, gamma, beta = ins
    axis = a.get_int("axis", -1)
    out = R("nn.layer_norm")(data, gamma, beta, axis=axis, epsilon=a.get_float("eps", 1e-5))
    if a.get_bool("output_mean_var", False):
        raise c.error("LayerNorm output_mean_var=True is not supported")
    return out


def group_norm(ins, a, c):
    # MXNet 1.x GroupNorm: gamma/beta have shape (num_groups,) and scale whole groups.
    data, gamma, beta = ins
    g = a.get_int("num_groups", 1)
    eps = a.get_float("eps", 1e-5)
    shape = c.shape(data)
    n, ch = shape[0], shape[1]
    if ch % g:
        raise c.error(f"{ch} channels do not split into num_groups={g}")
    x = R("reshape")(data, [n, g, -1])
    mean = R("mean")(x, axis=[2], keepdims=True)
    cen = R("subtract")(x, mean)
    var = R("mean")(R("multiply")(cen, cen), axis=[2], keepdims=True)
    normed = R("divide")(cen, R("sqrt")(R("add")(var, c.scalar(eps, data))))
    gshape = [1, g, 1]
    out = R("add")(R("multiply")(normed, R("reshape")(gamma, gshape)), R("reshape")(beta, gshape))
    return R("reshape")(out, list(shape))


def lrn(ins, a, c):
    return R("nn.lrn")(ins[0], size=a.get_int("nsize"), axis=1, bias=a.get_float("knorm", 2.0),
                       alpha=a.get_float("alpha", 1e-4), beta=a.get_float("beta", 0.75))


def l2_normalization(ins, a, c):
    x = ins[0]
    eps = a.get_float("eps", 1e-10)
    mode = a.get_str("mode", "instance")
    n = len(c.shape(x))
    axes = {"instance": list(range(1, n)), "channel": [1], "spatial": list(range(2, n))}.get(mode)
    if axes is None:
        raise c.error(f"mode={mode!r} is not one of instance, channel, spatial")
    ss = R("sum")(R("multiply")(x, x), axis=axes, keepdims=True)
    return R("divide")(x, R("sqrt")(R("add")(ss, c.scalar(eps, x))))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _elu(x, alpha, c):
    neg = R("multiply")(c.scalar(alpha, x), R("subtract")(R("exp")(x), c.scalar(1, x)))
    return R("where")(R("greater")(x, c.scalar(0, x)), x, neg)


def _gelu(x, c):
    inner = R("erf")(R("multiply")(x, c.scalar(1 / math.sqrt(2.0), x)))
    return R("multiply")(R("multiply")(x, c.scalar(0.5, x)), R("add")(inner, c.scalar(1, x)))


def leaky_relu(ins, a, c):
    x = ins[0]
    act = a.get_str("act_type", "leaky")
    slope = a.get_float("slope", 0.25)
    if act == "leaky":
        return R("nn.leaky_relu")(x, alpha=slope)
    if act == "rrelu":  # inference: the mean of the random slope's range; outputs (out, mask)
        lo, hi = a.get_float("lower_bound", 0.125), a.get_float("upper_bound", 0.334)
        slope = (lo + hi) / 2.0
        return [R("nn.leaky_relu")(x, alpha=slope),
                R("full_like")(x, c.scalar(slope, x))]
    if act == "prelu":
        gamma = ins[1]
        n = len(c.shape(x))
        gs = c.shape(gamma)
        if n >= 2 and int(np.prod(gs)) != 1:
            gamma = R("reshape")(gamma, [1, -1] + [1] * (n - 2))
        zero = c.scalar(0, x)
        return R("add")(R("maximum")(x, zero), R("multiply")(gamma, R("minimum")(x, zero)))
    if act == "elu":
        return _elu(x, slope, c)
    if act == "selu":
        return R("multiply")(c.scalar(_SELU_LAMBDA, x), _elu(x, _SELU_ALPHA, c))
    if act == "gelu":
        return _gelu(x, c)
    raise c.error(f"act_type={act!r} is not one of leaky, prelu, elu, selu, gelu, rrelu")


def activation(ins, a, c):
    from ._mx_tensor import _softrelu

    x = ins[0]
    act = a.get_str("act_type")
    if act == "relu":
        return R("nn.relu")(x)
    if act == "sigmoid":
        return R("sigmoid")(x)
    if act == "tanh":
        return R("tanh")(x)
    if act == "softrelu":
        return _softrelu(x, c)
    if act == "softsign":
        return R("divide")(x, R("add")(c.scalar(1, x), R("abs")(x)))
    if act == "log_sigmoid":
        return R("negative")(_softrelu(R("negative")(x), c))
    if act == "mish":
        return R("multiply")(x, R("tanh")(_softrelu(x, c)))
    raise c.error(f"act_type={act!r} is not one of relu, sigmoid, tanh, softrelu, softsign, "
                  "log_sigmoid, mish")


def _temp(x, a, c):
    t = a.get_float("temperature", None)
    if t is not None and t != 1.0:
        x = R("divide")(x, c.scalar(t, x))
    return x


def _check_length(a, c):
    if a.get_bool("use_length", False):
        raise c.error("use_length=True is not supported")


def softmax(ins, a, c):
    x = _temp(ins[0], a, c)
    axis = a.get_int("axis", -1)
    if a.get_bool("use_length", False):
        out = _length_masked_softmax(x, ins[1] if len(ins) > 1 else None, axis, c)
    else:
        out = R("nn.softmax")(x, axis=axis)
    dt = a.get_str("dtype", None)
    return R("cast")(out, dt) if dt not in (None, "None") else out


def _length_masked_softmax(x, length, axis, c):
    """MXNet's ``softmax(data, length, use_length=True)``: along ``axis`` only the first
    ``length[...]`` entries take part; the others (all, for a length of 0) are 0 in the output.
    ``length`` has data's shape without ``axis`` and an integer dtype."""
    if length is None:
        raise c.error("use_length=True needs the length input")
    shape = c.shape(x)
    ndim = len(shape)
    ax = axis % ndim
    want = tuple(d for k, d in enumerate(shape) if k != ax)
    if tuple(c.shape(length)) != want:
        raise c.error(f"length has shape {tuple(c.shape(length))}, expected {want} (data shape "
                      f"{tuple(shape)} without axis {axis})")
    if not c.dtype(length).startswith(("int", "uint")):
        raise c.error(f"length must have an integer dtype (as MXNet requires), got "
                      f"{c.dtype(length)}")
    pos = R("reshape")(R("arange")(const(0, "int32"), const(int(shape[ax]), "int32"),
                                   const(1, "int32"), dtype="int32"),
                       [int(shape[ax])] + [1] * (ndim - 1 - ax))
    keep = R("less")(pos, R("expand_dims")(R("cast")(length, "int32"), ax))
    # the lowest finite value, not -inf: a row of length 0 stays finite (then zeroed)
    low = const(np.array(np.finfo(c.dtype(x)).min, c.dtype(x)), c.dtype(x))
    out = R("nn.softmax")(R("where")(keep, x, low), axis=ax)
    return R("where")(keep, out, R("zeros_like")(out))


def log_softmax(ins, a, c):
    _check_length(a, c)
    x = _temp(ins[0], a, c)
    out = R("nn.log_softmax")(x, axis=a.get_int("axis", -1))
    dt = a.get_str("dtype", None)
    return R("cast")(out, dt) if dt not in (None, "None") else out


def softmin(ins, a, c):
    _check_length(a, c)
    x = _temp(R("negative")(ins[0]), a, c)
    out = R("nn.softmax")(x, axis=a.get_int("axis", -1))
    dt = a.get_str("dtype", None)
    return R("cast")(out, dt) if dt not in (None, "None") else out


def _flat_softmax(x, c):
    shape = c.shape(x)
    if len(shape) == 2:
        return R("nn.softmax")(x, axis=-1)
    flat = R("reshape")(x, [shape[0], -1])
    return R("reshape")(R("nn.softmax")(flat, axis=-1), list(shape))


def softmax_output(ins, a, c):
    x = ins[0]
    if a.get_bool("multi_output", False):
        return R("nn.softmax")(x, axis=1)
    if a.get_bool("preserve_shape", False):
        return R("nn.softmax")(x, axis=-1)
    return _flat_softmax(x, c)


def softmax_activation(ins, a, c):
    # instance: softmax over the last axis (MXNet flattens the leading axes); channel: axis 1
    x = ins[0]
    if a.get_str("mode", "instance") == "channel":
        return R("nn.softmax")(x, axis=1)
    return R("nn.softmax")(x, axis=-1)


def fully_connected(ins, a, c):
    data, weight = ins[0], ins[1]
    units = a.get_int("num_hidden")
    dshape = c.shape(data)
    flatten = a.get_bool("flatten", True)
    c.expect(weight, (units, int(np.prod(dshape[1:])) if flatten else dshape[-1]), "the weight",
             {0: f"num_hidden={units}"})
    if flatten and len(dshape) != 2:
        data = R("nn.batch_flatten")(data)
    out = R("nn.dense")(data, weight, units=units)
    if not a.get_bool("no_bias", False):
        if len(ins) < 3:
            raise c.error("no_bias=False but the node has no bias input")
        c.expect(ins[2], (units,), "the bias", {0: f"num_hidden={units}"})
        out = R("nn.bias_add")(out, ins[2], axis=-1)
    return out


def _swap_last(x, n):
    axes = list(range(n))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return R("transpose")(x, axes=axes)


def batch_dot(ins, a, c):
    x, y = ins
    xs, ys = c.shape(x), c.shape(y)
    if len(xs) != len(ys) or len(xs) < 3:
        raise c.error(f"batch_dot needs two inputs of the same rank >= 3, got {xs} and {ys}")
    if a.get_bool("transpose_a", False):
        x, xs = _swap_last(x, len(xs)), xs[:-2] + (xs[-1], xs[-2])
    # nn.batch_matmul(a, b) computes a @ b^T on (B, M, K) x (B, N, K).
    if not a.get_bool("transpose_b", False):
        y, ys = _swap_last(y, len(ys)), ys[:-2] + (ys[-1], ys[-2])
    batch = int(np.prod(xs[:-2]))
    if len(xs) > 3:
        x = R("reshape")(x, [batch, xs[-2], xs[-1]])
        y = R("reshape")(y, [batch, ys[-2], ys[-1]])
    out = R("nn.batch_matmul")(x, y)
    if len(xs) > 3:
        out = R("reshape")(out, list(xs[:-2]) + [xs[-2], ys[-2]])
    return out


def dot(ins, a, c):
    x, y = ins
    xs, ys = c.shape(x), c.shape(y)
    ta, tb = a.get_bool("transpose_a", False), a.get_bool("transpose_b", False)
    if (ta and len(xs) != 2) or (tb and len(ys) != 2):
        raise c.error("dot with transpose_a/transpose_b is supported for 2-d inputs only")
    if ta:
        x, xs = R("transpose")(x, axes=[1, 0]), (xs[1], xs[0])
    if tb:
        y, ys = R("transpose")(y, axes=[1, 0]), (ys[1], ys[0])
    k = xs[-1]
    if ys[0] != k:
        raise c.error(f"dot: last axis of {xs} does not match first axis of {ys}")
    x2 = x if len(xs) == 2 else R("reshape")(x, [-1, k])
    y2 = y if len(ys) == 2 else R("reshape")(y, [k, -1])
    n = int(np.prod(ys[1:])) if len(ys) > 1 else 1
    if len(ys) == 1:
        y2 = R("reshape")(y, [k, 1])
    out = R("nn.dense")(x2, R("transpose")(y2, axes=[1, 0]), units=n)
    return R("reshape")(out, list(xs[:-1]) + list(ys[1:]))


def upsampling(ins, a, c):
    scale = a.get_int("scale")
    stype = a.get_str("sample_type")
    if stype == "nearest":
        outs = []
        target = None
        for x in ins:
            xs = c.shape(x)
            if target is None:
                target = (xs[2] * scale, xs[3] * scale)
            sh, sw = target[0] // xs[2], target[1] // xs[3]
            outs.append(R("nn.upsampling")(x, scale_h=sh, scale_w=sw, method="nearest_neighbor"))
        if len(outs) == 1:
            return outs[0]
        if a.get_str("multi_input_mode", "concat") == "sum":
            out = outs[0]
            for o in outs[1:]:
                out = R("add")(out, o)
            return out
        return R("concatenate")(outs, axis=1)
    if stype == "bilinear":
        if len(ins) != 2:
            raise c.error("bilinear UpSampling needs a weight input")
        data, weight = ins
        ch = c.shape(data)[1]
        k = 2 * scale - scale % 2
        p = int(math.ceil((scale - 1) / 2.0))
        return R("nn.conv2d_transpose")(data, weight, strides=(scale, scale), padding=(p, p),
                                        groups=ch, channels=ch, kernel_size=(k, k))
    raise c.error(f"sample_type={stype!r} is not one of nearest, bilinear")


def bilinear_resize(ins, a, c):
    x = ins[0]
    xs = c.shape(x)
    mode = a.get_str("mode", "size")
    if mode == "like":
        h, w = c.shape(ins[1])[2:4]
    elif mode == "size":
        sh, sw = a.get_float("scale_height", None), a.get_float("scale_width", None)
        h = int(xs[2] * sh) if sh is not None else a.get_int("height", 1)
        w = int(xs[3] * sw) if sw is not None else a.get_int("width", 1)
    else:
        raise c.error(f"mode={mode!r} is not supported (size, like)")
    ac = a.get_bool("align_corners", True)
    return R("image.resize2d")(x, (h, w), layout="NCHW", method="linear",
                               coordinate_transformation_mode="align_corners" if ac
                               else "half_pixel")


def adaptive_avg_pool(ins, a, c):
    size = a.get_tuple("output_size", ()) or (1,)
    if len(size) == 1:
        size = (size[0], size[0])
    return R("nn.adaptive_avg_pool2d")(ins[0], output_size=size)


def div_sqrt_dim(ins, a, c):
    x = ins[0]
    return R("divide")(x, c.scalar(math.sqrt(c.shape(x)[-1]), x))


def _qkv(x, heads, which, c):
    seq, batch, proj3 = c.shape(x)
    hd = proj3 // heads // 3
    t = R("reshape")(x, [seq, batch, heads, 3, hd])
    t = R("strided_slice")(t, begin=[0, 0, 0, which, 0], end=[seq, batch, heads, which + 1, hd],
                           strides=[1, 1, 1, 1, 1])
    t = R("reshape")(t, [seq, batch * heads, hd])
    return R("transpose")(t, axes=[1, 0, 2]), hd


def selfatt_qk(ins, a, c):
    heads = a.get_int("heads")
    q, hd = _qkv(ins[0], heads, 0, c)
    k, _ = _qkv(ins[0], heads, 1, c)
    q = R("divide")(q, c.scalar(math.sqrt(hd), ins[0]))
    return R("nn.batch_matmul")(q, k)


def selfatt_valatt(ins, a, c):
    heads = a.get_int("heads")
    qkv, att = ins
    seq, batch, _ = c.shape(qkv)
    v, hd = _qkv(qkv, heads, 2, c)
    out = R("nn.batch_matmul")(att, R("transpose")(v, axes=[0, 2, 1]))
    out = R("reshape")(out, [batch, heads, seq, hd])
    out = R("transpose")(out, axes=[2, 0, 1, 3])
    return R("reshape")(out, [seq, batch, heads * hd])


def grid_generator(ins, a, c):
    if a.get_str("transform_type") != "affine":
        raise c.error("GridGenerator: only transform_type='affine' is supported")
    x = ins[0]
    n = c.shape(x)[0]
    th = R("reshape")(x, [n, 2, 3])
    return R("image.affine_grid")(th, a.get_tuple("target_shape"))


def bilinear_sampler(ins, a, c):
    return R("image.grid_sample")(ins[0], ins[1], method="bilinear", layout="NCHW",
                                  padding_mode="zeros", align_corners=True)


def _loss_identity(ins, a, c):
    return ins[0]


def _logistic_output(ins, a, c):
    return R("sigmoid")(ins[0])


NN_CONVERTERS = {
    "Convolution": convolution,
    "Convolution_v1": convolution,
    "Deconvolution": deconvolution,
    "Pooling": pooling,
    "Pooling_v1": pooling,
    "BatchNorm": batch_norm,
    "BatchNorm_v1": batch_norm,
    "_contrib_SyncBatchNorm": batch_norm,
    "InstanceNorm": instance_norm,
    "LayerNorm": layer_norm,
    "GroupNorm": group_norm,
    "LRN": lrn,
    "L2Normalization": l2_normalization,
    "LeakyReLU": leaky_relu,
    "Activation": activation,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "softmin": softmin,
    "SoftmaxOutput": softmax_output,
    "Softmax": softmax_output,
    "SoftmaxActivation": softmax_activation,
    "LinearRegressionOutput": _loss_identity,
    "MAERegressionOutput": _loss_identity,
    "SVMOutput": _loss_identity,
    "LogisticRegressionOutput": _logistic_output,
    "FullyConnected": fully_connected,
    "batch_dot": batch_dot,
    "dot": dot,
    "UpSampling": upsampling,
    "_contrib_BilinearResize2D": bilinear_resize,
    "_contrib_AdaptiveAvgPooling2D": adaptive_avg_pool,
    "_contrib_div_sqrt_dim": div_sqrt_dim,
    "_contrib_interleaved_matmul_selfatt_qk": selfatt_qk,
    "_contrib_interleaved_matmul_selfatt_valatt": selfatt_valatt,
    "GridGenerator": grid_generator,
    "BilinearSampler": bilinear_sampler,
}

__all__ = ["NN_CONVERTERS", "outputs_of"]

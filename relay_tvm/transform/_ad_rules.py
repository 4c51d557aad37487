"""Gradient rules (``FPrimalGradient``) for the operators that had none, registered when
``transform.gradient`` is imported. A rule is ``grad(orig_call, output_grad) -> [arg grads]``.

Some rules are written by decomposition (:func:`vjp`): the operator's forward computation as a
small function of operators that have rules, differentiated by first-order AD seeded with the
output gradient (normalizations, ``nn.matmul``, ``nn.conv1d``).

Operators left without a rule, and why (``gradient`` raises a ``GradientError`` naming them when
a floating-point gradient would have to pass through):

- not differentiable (boolean, integer or bit-level results): ``all``, ``any``, ``logical_not``,
  ``bitwise_not``, ``isnan``, ``isinf``, ``isfinite``, ``argsort``, ``searchsorted``,
  ``reinterpret``;
- gradient operators themselves (second derivatives of pooling are not provided):
  ``nn.max_pool2d_grad``, ``nn.avg_pool2d_grad``;
- layout-internal operators made by AlterOpLayout (differentiate before it):
  ``nn.contrib_conv2d_NCHWc``, ``nn.contrib_depthwise_conv2d_NCHWc``;
- differentiable, rule not written yet: ``nn.conv3d``, ``nn.conv3d_transpose``,
  ``nn.conv1d_transpose``, ``nn.max_pool3d``, ``nn.avg_pool3d``, ``nn.global_max_pool3d``,
  ``nn.global_avg_pool3d``, ``nn.adaptive_max_pool3d``, ``nn.adaptive_avg_pool3d``,
  ``nn.upsampling3d``, ``image.resize1d/2d/3d``, ``image.affine_grid``, ``image.grid_sample``,
  ``nn.mirror_pad``, ``nn.lrn``, ``nn.nll_loss``, ``cumprod``, ``adv_index``.
"""

from __future__ import annotations

import numpy as np

from ..errors import GradientError
from ..ir.expr import Constant, Function, Tuple, TupleGetItem, Var
from ..ir.functor import substitute
from ..ir.types import TensorType, TupleType


def _op():
    import relay_tvm.op as op

    return op


def _shape(e):
    return tuple(int(d) for d in e.checked_type.shape)


def _dt(e):
    return e.checked_type.dtype


def _const(v, like):
    return Constant(np.array(v, dtype=like.checked_type.dtype))


def vjp(orig, g, compose):
    """Argument gradients of ``orig`` for output gradient ``g``, ``compose(*params)`` being the
    operator's forward computation from operators with rules."""
    from ..typing.infer import infer_expr
    from ._ad_common import project
    from ._ad_first_order import first_order_gradient

    params = [Var(f"p{i}", a.checked_type) for i, a in enumerate(orig.args)]
    func = infer_expr(Function(params, compose(*params)))
    if func.body.checked_type != orig.checked_type:
        raise GradientError(f"gradient of {orig.op.name}: its decomposition has type "
                            f"{func.body.checked_type}, not {orig.checked_type}")
    seed = Var("seed", orig.checked_type)
    fo = first_order_gradient(func, seed=lambda path, leaf: project(seed, path))
    binds = dict(zip(params, orig.args))
    binds[seed] = g
    grads = TupleGetItem(substitute(fo.body, binds), 1)
    return [TupleGetItem(grads, i) for i in range(len(params))]


def _register(name):
    from ..op.registry import register_gradient

    def deco(f):
        register_gradient(name, f)
        return f

    return deco


# ---- elementwise approximations and softmax ------------------------------------------------------
@_register("fast_exp")
def _fast_exp(orig, g):
    return [_op().multiply(g, orig)]


@_register("fast_tanh")
def _fast_tanh(orig, g):
    o = _op()
    return [o.multiply(g, o.subtract(_const(1.0, orig), o.multiply(orig, orig)))]


@_register("fast_erf")
def _fast_erf(orig, g):
    o = _op()
    x = orig.args[0]
    d = o.multiply(_const(2.0 / np.sqrt(np.pi), x), o.exp(o.negative(o.multiply(x, x))))
    return [o.multiply(g, d)]


@_register("nn.fast_softmax")
def _fast_softmax(orig, g):
    from ..op.registry import get

    return get("nn.softmax").gradient(orig, g)


@_register("nn.dropout")
def _dropout(orig, g):
    return [TupleGetItem(g, 0)]  # inference semantics: the identity on the data


# ---- by decomposition --------------------------------------------------------------------------
def _along(v, axis, ndim):
    """A 1-D vector shaped to broadcast along ``axis`` of an ``ndim``-d tensor."""
    after = ndim - axis - 1
    return _op().expand_dims(v, 1, after) if after else v


def _normalize(x, axes, eps, dtype):
    o = _op()
    m = o.mean(x, axes, keepdims=True)
    c = o.subtract(x, m)
    var = o.mean(o.multiply(c, c), axes, keepdims=True)
    return o.divide(c, o.sqrt(o.add(var, _const_t(eps, dtype))))


def _const_t(v, dtype):
    return Constant(np.array(v, dtype=dtype))


def _affine(y, gamma, beta, axis, ndim, attrs):
    o = _op()
    if attrs.scale:
        y = o.multiply(y, _along(gamma, axis, ndim))
    if attrs.center:
        y = o.add(y, _along(beta, axis, ndim))
    return y


@_register("nn.layer_norm")
def _layer_norm(orig, g):
    a = orig.attrs
    nd = len(_shape(orig))
    axis = a.axis % nd
    dt = _dt(orig)
    return vjp(orig, g, lambda x, gm, bt: _affine(_normalize(x, (axis,), a.epsilon, dt), gm, bt,
                                                  axis, nd, a))


@_register("nn.instance_norm")
def _instance_norm(orig, g):
    a = orig.attrs
    nd = len(_shape(orig))
    axis = a.axis % nd
    axes = tuple(i for i in range(1, nd) if i != axis)
    return vjp(orig, g, lambda x, gm, bt: _affine(_normalize(x, axes, a.epsilon, _dt(orig)), gm, bt,
                                                  axis, nd, a))


@_register("nn.group_norm")
def _group_norm(orig, g):
    a = orig.attrs
    shape = _shape(orig)
    nd = len(shape)
    if a.axis % nd != 1:
        raise GradientError("gradient of nn.group_norm: channels on axis 1 only")
    n, c = shape[:2]
    grouped = (n, a.num_groups, c // a.num_groups, *shape[2:])

    def compose(x, gm, bt):
        o = _op()
        xg = o.reshape(x, grouped)
        y = o.reshape(_normalize(xg, tuple(range(2, len(grouped))), a.epsilon, _dt(orig)), shape)
        return _affine(y, gm, bt, 1, nd, a)

    return vjp(orig, g, compose)


@_register("nn.batch_norm")
def _batch_norm(orig, g):
    a = orig.attrs
    nd = len(_shape(orig.args[0]))
    axis = a.axis % nd

    def compose(x, gm, bt, mean, var):
        o = _op()
        y = o.divide(o.subtract(x, _along(mean, axis, nd)),
                     o.sqrt(o.add(_along(var, axis, nd), _const_t(a.epsilon, _dt(orig.args[0])))))
        return Tuple([_affine(y, gm, bt, axis, nd, a), o.copy(mean), o.copy(var)])

    return vjp(orig, g, compose)


@_register("nn.l2_normalize")
def _l2_normalize(orig, g):
    a = orig.attrs
    nd = len(_shape(orig))
    axes = tuple(x % nd for x in a.axis) if a.axis else tuple(range(nd))

    def compose(x):
        o = _op()
        ss = o.sum(o.multiply(x, x), axes, keepdims=True)
        return o.divide(x, o.sqrt(o.maximum(ss, _const_t(a.eps, _dt(orig)))))

    return vjp(orig, g, compose)


@_register("nn.matmul")
def _matmul(orig, g):
    a = orig.attrs
    if len(_shape(orig.args[0])) != 2:
        raise GradientError("gradient of nn.matmul: 2-d operands only")

    def compose(x, w):
        o = _op()
        lhs = o.transpose(x, (1, 0)) if a.transpose_a else x
        rhs = w if a.transpose_b else o.transpose(w, (1, 0))
        return o.nn.dense(lhs, rhs)

    return vjp(orig, g, compose)


@_register("nn.conv1d")
def _conv1d(orig, g):
    a = orig.attrs
    if a.data_layout != "NCW" or a.kernel_layout != "OIW":
        raise GradientError("gradient of nn.conv1d: NCW/OIW only")
    pad = tuple(a.padding) if len(a.padding) == 2 else (a.padding[0], a.padding[0])

    def compose(x, w):
        o = _op()
        y = o.nn.conv2d(o.expand_dims(x, 2), o.expand_dims(w, 2), strides=(1, a.strides[0]),
                        padding=(0, pad[0], 0, pad[1]), dilation=(1, a.dilation[0]),
                        groups=a.groups, channels=a.channels,
                        kernel_size=(1, _shape(orig.args[1])[2]))
        return o.squeeze(y, (2,))

    return vjp(orig, g, compose)


# ---- convolution transpose -----------------------------------------------------------------
@_register("nn.conv2d_transpose")
def _conv2d_transpose(orig, g):
    """``conv2d_transpose(X, W)`` is the data gradient of ``Y = conv2d(Z, W)`` at ``dY = X``;
    so ``dX = conv2d(G, W)`` and ``dW`` is conv2d's weight gradient with data ``G``, output
    gradient ``X``."""
    from ..op.registry import get
    from ._ad_common import typed_call

    a = orig.attrs
    x, w = orig.args
    if (a.data_layout != "NCHW" or a.kernel_layout != "IOHW" or a.groups != 1
            or any(int(p) for p in a.output_padding)):
        raise GradientError("gradient of nn.conv2d_transpose: NCHW/IOHW, groups 1, no "
                            "output_padding only")
    conv = get("nn.conv2d")
    kh, kw = _shape(w)[2:]
    call = conv(g, w, strides=a.strides, padding=a.padding, dilation=a.dilation, groups=1,
                channels=_shape(w)[0], kernel_size=(kh, kw))
    if _conv_out(_shape(orig), a, (kh, kw)) != _shape(x)[2:]:
        raise GradientError("gradient of nn.conv2d_transpose: the output shape does not invert")
    g_var = Var("g", orig.checked_type)
    typed = typed_call(conv, [g_var, w], [orig.checked_type, w.checked_type], _Typed(
        call, x.checked_type))
    dw = conv.gradient(typed, x)[1]
    return [call, substitute(dw, {g_var: g})]


def _conv_out(shape, a, kernel):
    from ..op._nn_common import ntuple, pad_before_after

    s, d = ntuple(a.strides, 2, "", ""), ntuple(a.dilation, 2, "", "")
    before, after = pad_before_after(a.padding, 2, "")
    return tuple((n + b + e - (k - 1) * dd - 1) // ss + 1
                 for n, b, e, k, dd, ss in zip(shape[2:], before, after, kernel, d, s))


class _Typed:
    """The attributes and type of a call, for :func:`typed_call`."""

    def __init__(self, call, ty):
        self.attrs, self.type_args, self.span, self.checked_type = call.attrs, (), None, ty


# ---- pooling ------------------------------------------------------------------------------------
def _full_pool(kind, orig, g, pool, strides):
    o = _op()
    x = orig.args[0]
    extra = {"count_include_pad": True} if kind == "avg" else {}
    fn = o.nn.max_pool2d_grad if kind == "max" else o.nn.avg_pool2d_grad
    return fn(g, x, pool_size=pool, strides=strides, padding=(0, 0, 0, 0), layout="NCHW",
              **extra)


@_register("nn.global_max_pool2d")
def _global_max_pool2d(orig, g):
    if orig.attrs.layout != "NCHW":
        raise GradientError("gradient of nn.global_max_pool2d: NCHW only")
    hw = _shape(orig.args[0])[2:]
    return [_full_pool("max", orig, g, hw, (1, 1))]


def _adaptive2d(kind):
    def rule(orig, g):
        if orig.attrs.layout != "NCHW":
            raise GradientError(f"gradient of nn.adaptive_{kind}_pool2d: NCHW only")
        ins, outs = _shape(orig.args[0])[2:], _shape(orig)[2:]
        if any(i % o for i, o in zip(ins, outs)):
            raise GradientError(f"gradient of nn.adaptive_{kind}_pool2d: output size {outs} "
                                f"must divide the input size {ins}")
        k = tuple(i // o for i, o in zip(ins, outs))
        return [_full_pool(kind, orig, g, k, k)]

    return rule


_register("nn.adaptive_max_pool2d")(_adaptive2d("max"))
_register("nn.adaptive_avg_pool2d")(_adaptive2d("avg"))


def _pool1d(kind, global_=False, adaptive=False):
    """1-D pools as 2-D pools of height 1."""

    def rule(orig, g):
        from ..op.registry import make_call

        a = orig.attrs
        if a.layout != "NCW":
            raise GradientError(f"gradient of {orig.op.name}: NCW only")
        o = _op()
        x = orig.args[0]
        w_in, w_out = _shape(x)[2], _shape(orig)[2]
        if global_ or adaptive:
            if w_in % w_out:
                raise GradientError(f"gradient of {orig.op.name}: output size must divide "
                                    f"the input size")
            k = w_in // w_out
            pool, strides, pad, dil, ceil = (1, k), (1, k), (0, 0, 0, 0), (1, 1), False
        else:
            pb = tuple(a.padding) if len(a.padding) == 2 else (a.padding[0], a.padding[0])
            pool, strides = (1, a.pool_size[0]), (1, a.strides[0])
            pad, dil, ceil = (0, pb[0], 0, pb[1]), (1, a.dilation[0]), a.ceil_mode
        extra = {}
        if kind == "avg":
            extra["count_include_pad"] = bool(getattr(a, "count_include_pad", True))
        gx = make_call(f"nn.{kind}_pool2d_grad", [o.expand_dims(g, 2), o.expand_dims(x, 2)],
                       pool_size=pool, strides=strides, dilation=dil, padding=pad,
                       layout="NCHW", out_layout="", ceil_mode=ceil, **extra)
        return [o.squeeze(gx, (2,))]

    return rule


_register("nn.max_pool1d")(_pool1d("max"))
_register("nn.avg_pool1d")(_pool1d("avg"))
_register("nn.global_max_pool1d")(_pool1d("max", global_=True))
_register("nn.global_avg_pool1d")(_pool1d("avg", global_=True))
_register("nn.adaptive_max_pool1d")(_pool1d("max", adaptive=True))
_register("nn.adaptive_avg_pool1d")(_pool1d("avg", adaptive=True))


# ---- data movement ------------------------------------------------------------------------------
@_register("nn.upsampling")
def _upsampling(orig, g):
    a = orig.attrs
    sh, sw = a.scale_h, a.scale_w
    if a.method != "nearest_neighbor" or a.layout != "NCHW" or sh != int(sh) or sw != int(sw):
        raise GradientError("gradient of nn.upsampling: nearest_neighbor, NCHW, integer scales "
                            "only")
    n, c, h, w = _shape(orig.args[0])
    o = _op()
    r = o.reshape(g, (n, c, h, int(sh), w, int(sw)))
    return [o.sum(r, (3, 5))]


@_register("nn.dilate")
def _dilate(orig, g):
    shape = _shape(orig)
    return [_op().strided_slice(g, [0] * len(shape), list(shape), list(orig.attrs.strides))]


@_register("nn.depth_to_space")
def _depth_to_space(orig, g):
    a = orig.attrs
    if a.mode != "DCR":
        raise GradientError("gradient of nn.depth_to_space: mode DCR only (space_to_depth "
                            "inverts DCR)")
    return [_op().nn.space_to_depth(g, a.block_size, a.layout)]


@_register("nn.space_to_depth")
def _space_to_depth(orig, g):
    a = orig.attrs
    return [_op().nn.depth_to_space(g, a.block_size, a.layout, "DCR")]


@_register("nn.space_to_batch_nd")
def _space_to_batch(orig, g):
    a = orig.attrs
    return [_op().nn.batch_to_space_nd(g, a.block_shape, a.paddings)]


@_register("nn.batch_to_space_nd")
def _batch_to_space(orig, g):
    a = orig.attrs
    return [_op().nn.space_to_batch_nd(g, a.block_shape, a.crops, 0)]


@_register("split")
def _split(orig, g):
    n = len(orig.checked_type.fields)
    return [_op().concatenate([TupleGetItem(g, i) for i in range(n)], orig.attrs.axis)]


@_register("trilu")
def _trilu(orig, g):
    o = _op()
    return [o.trilu(g, orig.args[1], orig.attrs.upper), o.zeros_like(orig.args[1])]


@_register("meshgrid")
def _meshgrid(orig, g):
    o = _op()
    n = len(orig.checked_type.fields)
    axes = list(range(n))
    if orig.attrs.indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
    grads = [o.sum(TupleGetItem(g, i), (axes[i],), exclude=True) for i in range(n)]
    return [Tuple(grads)]


@_register("scatter_elements")
def _scatter_elements(orig, g):
    o = _op()
    data, idx, upd = orig.args
    a = orig.attrs
    if a.reduction not in ("update", "add"):
        raise GradientError(f"gradient of scatter_elements: reduction {a.reduction!r} (update "
                            f"and add only)")
    dd = g if a.reduction == "add" else o.scatter_elements(g, idx, o.zeros_like(upd), a.axis)
    return [dd, o.zeros_like(idx), o.gather(g, a.axis, idx)]


@_register("scatter_nd")
def _scatter_nd(orig, g):
    o = _op()
    data, idx, upd = orig.args
    mode = orig.attrs.mode
    if mode not in ("update", "add"):
        raise GradientError(f"gradient of scatter_nd: mode {mode!r} (update and add only)")
    dd = g if mode == "add" else o.scatter_nd(g, idx, o.zeros_like(upd), "update")
    return [dd, o.zeros_like(idx), o.gather_nd(g, idx)]


@_register("sort")
def _sort(orig, g):
    o = _op()
    x = orig.args[0]
    a = orig.attrs
    idx = o.argsort(x, a.axis, a.is_ascend, "int32")
    return [o.scatter_elements(o.zeros_like(x), idx, g, a.axis, "add")]


@_register("topk")
def _topk(orig, g):
    o = _op()
    x = orig.args[0]
    a = orig.attrs
    if a.ret_type == "indices":
        return [o.zeros_like(x)]
    gv = TupleGetItem(g, 0) if isinstance(orig.checked_type, TupleType) else g
    idx = o.topk(x, a.k, a.axis, "indices", a.is_ascend, "int32")
    return [o.scatter_elements(o.zeros_like(x), idx, gv, a.axis, "add")]


@_register("einsum")
def _einsum(orig, g):
    """``d operand_i = einsum(out, others -> subs_i)``: valid when no operand repeats a
    subscript and each of operand i's subscripts appears in the output or another operand."""
    eq = orig.attrs.equation.replace(" ", "")
    if "->" not in eq or "." in eq:
        raise GradientError(f"gradient of einsum: explicit equations without ellipsis only, "
                            f"got {eq!r}")
    lhs, out = eq.split("->")
    subs = lhs.split(",")
    types = orig.args[0].checked_type
    operands = [TupleGetItem(orig.args[0], i) for i in range(len(subs))]
    grads = []
    for i, s in enumerate(subs):
        others = [subs[j] for j in range(len(subs)) if j != i]
        if len(set(s)) != len(s) or not set(s) <= set(out + "".join(others)):
            raise GradientError(f"gradient of einsum: operand {i} ({s!r}) repeats or sums a "
                                f"subscript alone in {eq!r}")
        rest = [operands[j] for j in range(len(subs)) if j != i]
        grads.append(_op().einsum([g, *rest], ",".join([out, *others]) + "->" + s))
    assert isinstance(types, TupleType) and all(isinstance(t, TensorType) for t in types.fields)
    return [Tuple(grads)]


__all__ = ["vjp"]

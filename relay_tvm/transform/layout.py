"""AlterOpLayout and ConvertLayout (opt level 3): change the data layout of convolutions and
carry the new layout through the layout-agnostic operators around them, so ``layout_transform``
appears only at the boundaries of a region.

- **AlterOpLayout** (Relay's x86 ``alter_op_layout``): each ``nn.conv2d`` on NCHW / OIHW with
  ``groups == 1`` becomes ``nn.contrib_conv2d_NCHWc`` on ``NCHW{ic}c`` data and
  ``OIHW{ic}i{oc}o`` weights (a depthwise one, ``groups == C == O``, becomes
  ``nn.contrib_depthwise_conv2d_NCHWc`` with ``OIHW1i{c}o`` weights), the blocks being the largest factors of the channel counts up to
  16 (one AVX-512 vector of float32, the x86 default schedule's choice).
  A stride-1 3x3 ``nn.conv2d`` with a constant weight becomes Winograd instead
  (``nn.contrib_conv2d_winograd_without_weight_transform`` of the transformed, packed weight,
  on the same blocked layouts) where the cost model of :mod:`.winograd_choice` says it is
  faster; the weight transform is folded by the FoldConstant that follows. A 1x1
  ``nn.conv2d`` with strides and no padding reads a ``strided_slice`` of its blocked input
  at stride 1 instead (one slice per input tensor and strides).
- **ConvertLayout**: :mod:`.convert_layout` (Relay's scheme of per-operator layout rules);
  :func:`ConvertLayout` is defined here next to AlterOpLayout.

Propagation (Relay's InferCorrectLayout, for the operators that need no attribute change):
``op(layout_transform(x, L, S))`` becomes ``layout_transform(op(x), L, S)`` for unary
elementwise operators, and for broadcasting binary operators when the other operand is in the
same layout, a full-shape tensor, a scalar or a per-channel tensor (which is converted);
``layout_transform(layout_transform(x, A, B), B, A)`` is ``x``. Other operators are boundaries.

Pooling and concatenation keep the blocked layout too (Relay's PoolInferCorrectLayout and
ConcatenateLayout): ``pool(layout_transform(x, NCHW{c}c, NCHW))`` (max/avg, global, adaptive
2-D pooling) becomes ``layout_transform(pool(x, layout=NCHW{c}c), NCHW{c}c, NCHW)``, and a
``concatenate`` on the channel axis of NCHW tensors that are all ``layout_transform`` from
``NCHW{c_i}c`` concatenates the blocked tensors on their outer channel axis, each re-blocked
directly to ``gcd(c_i)`` channels where the blocks differ (a gcd below 4 stays a boundary).
A transform back to NCHW followed by one to another block becomes one direct transform:
``layout_transform(layout_transform(x, NCHW{a}c, NCHW), NCHW, NCHW{b}c)`` is
``layout_transform(x, NCHW{a}c, NCHW{b}c)``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import RelayError, did_you_mean
from ..ir.expr import Call, Constant, Tuple
from ..ir.types import TensorType
from ..op.registry import OpPattern, make_call
from ._rewrite import Rewriter, called_ops, op_name
from ._rewrite import type_of as _ty
from .int8_conv import dot_lanes, vnni_conv
from .pass_infra import FunctionPass, PassInfo
from .winograd_choice import winograd_conv, winograd_decider, winograd_mode
from .winograd_int import eligible as int16_winograd_eligible
from .winograd_int import int16_winograd_conv

_BINARY = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
           "right_shift", "left_shift", "qnn.multiply_high"}
# unary operators that commute with any layout change although they are not ELEMWISE
_LAYOUT_FREE_UNARY = {"annotation.stop_fusion"}
# 2-D pooling operators with a ``layout`` attribute that accepts NCHW{c}c
_POOLS = {"nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
          "nn.adaptive_max_pool2d", "nn.adaptive_avg_pool2d"}
_BLOCKED = re.compile(r"NCHW(\d+)c")
# the smallest common channel block a concatenation of differently blocked tensors is
# re-blocked to (below it, a vector would be mostly empty: it stays a boundary)
_MIN_CONCAT_BLOCK = 4


def _block_of(layout: str):
    """``c`` of ``NCHW{c}c``, else None."""
    m = _BLOCKED.fullmatch(layout)
    return int(m.group(1)) if m else None


def _to_nchw(e):
    """``(x, c)`` when ``e`` is ``layout_transform(x, NCHW{c}c, NCHW)``, else None."""
    if op_name(e) != "layout_transform" or e.attrs.dst_layout != "NCHW":
        return None
    c = _block_of(e.attrs.src_layout)
    return (e.args[0], c) if c else None


def block_size(n: int, limit: int = 16) -> int:
    """The channel block for ``n`` channels: the largest factor of ``n`` not above ``limit``
    that is a whole number of SIMD vectors (a multiple of 8 float32 lanes, else of 4), else the
    largest factor. A block of 10 or 12 channels would be one vector and a ragged part of
    another in every inner loop (1000 classes: 8, not 10; 24 channels: 8, not 12)."""
    divs = [d for d in range(1, min(n, limit) + 1) if n % d == 0]
    for unit in (8, 4):
        whole = [d for d in divs if d % unit == 0]
        if whole:
            return max(whole)
    return max(divs)


def _lt(x, src, dst, span=None):
    return make_call("layout_transform", [x], span=span, src_layout=src, dst_layout=dst)


def _static4(t):
    return isinstance(t, TensorType) and len(t.shape) == 4 and all(isinstance(d, int) for d in t.shape)


def _channel_axis(layout: str) -> int:
    return layout.index("C")


def _per_channel_vector(t: TensorType, layout: str, channels: int):
    """If a tensor of type ``t`` broadcast against a ``layout`` tensor varies only along the
    channel axis (``(C,1,1)``, ``(1,C,1,1)`` for NCHW; ``(C,)``, ``(1,1,C)`` ... for NHWC), the
    rank it is written with; else None."""
    shape = tuple(t.shape)
    ax = _channel_axis(layout) - 4  # from the right
    for rank in range(1, 5):
        if len(shape) != rank or -ax > rank:
            continue
        want = [1] * rank
        want[ax] = channels
        if list(shape) == want:
            return rank
    return None


def _vector_for(vec: np.ndarray, layout: str) -> np.ndarray:
    """A ``(C,)`` vector shaped to broadcast along the channel axis of ``layout`` (4-d or a
    blocked ``NCHW{c}c``) from the right."""
    if layout == "NCHW":
        return vec.reshape(-1, 1, 1)
    if layout == "NHWC":
        return vec.reshape(-1)
    c = int(layout[4:-1])
    return vec.reshape(-1, c, 1, 1).transpose(0, 2, 3, 1)


class _Propagate(Rewriter):
    """Sinks ``layout_transform(x, L, S)`` (back to the original layout S) through
    layout-agnostic operators and cancels inverse pairs."""

    def post_call(self, orig, new):
        name = op_name(new)
        if name == "layout_transform":
            inner = new.args[0]
            a = new.attrs
            if a.src_layout == a.dst_layout:
                return inner
            if op_name(inner) == "layout_transform":
                ia = inner.attrs
                if ia.src_layout == a.dst_layout and ia.dst_layout == a.src_layout:
                    return inner.args[0]
                if (ia.dst_layout == a.src_layout == "NCHW" and _block_of(ia.src_layout)
                        and _block_of(a.dst_layout)):
                    # NCHW{a}c -> NCHW -> NCHW{b}c: one direct transform
                    return _lt(inner.args[0], ia.src_layout, a.dst_layout, new.span)
            return new
        if name is None:
            return new
        op = new.op
        if len(new.args) == 1 and (op.pattern == OpPattern.ELEMWISE
                                   or name in _LAYOUT_FREE_UNARY):
            # elementwise with scalar attributes (cast, clip, ...) commutes with the transform
            x = new.args[0]
            if op_name(x) == "layout_transform":
                a = x.attrs
                moved = Call(op, [x.args[0]], new.attrs, (), new.span)
                return _lt(moved, a.src_layout, a.dst_layout, x.span)
            return new
        if name in _BINARY:
            return self._binary(orig, new)
        if name in _POOLS:
            return self._pool(new)
        if name == "concatenate":
            return self._concat(orig, new)
        return new

    @staticmethod
    def _pool(new):
        a = new.attrs
        src = _to_nchw(new.args[0])
        if src is None or a.layout != "NCHW" or a.out_layout not in ("", "NCHW"):
            return new
        x, c = src
        fields = dict(a.items())
        fields.update(layout=f"NCHW{c}c", out_layout="")
        pooled = make_call(op_name(new), [x], span=new.span, **fields)
        return _lt(pooled, f"NCHW{c}c", "NCHW", new.args[0].span)

    @staticmethod
    def _concat(orig, new):
        tup = new.args[0]
        out_t = _ty(orig)
        if type(tup) is not Tuple or not _static4(out_t) or new.attrs.axis not in (1, -3):
            return new
        srcs = [_to_nchw(f) for f in tup.fields]
        if not srcs or any(sc is None for sc in srcs):
            return new
        g = math.gcd(*[c for _, c in srcs])
        if g < _MIN_CONCAT_BLOCK and len({c for _, c in srcs}) > 1:
            return new
        dst = f"NCHW{g}c"
        parts = [x if c == g else _lt(x, f"NCHW{c}c", dst) for x, c in srcs]
        cat = make_call("concatenate", [Tuple(parts, tup.span)], span=new.span, axis=1)
        return _lt(cat, dst, "NCHW", new.span)

    def _binary(self, orig, new):
        for i in (0, 1):
            side = new.args[i]
            if op_name(side) != "layout_transform":
                continue
            a = side.attrs
            blocked, src, dst = side.args[0], a.src_layout, a.dst_layout
            if dst not in ("NCHW", "NHWC"):
                continue
            out_t = _ty(orig)
            other, oother = new.args[1 - i], orig.args[1 - i]
            ot = _ty(oother)
            if not _static4(out_t) or not isinstance(ot, TensorType):
                continue
            if tuple(_ty(orig.args[i]).shape) != tuple(out_t.shape):
                continue
            channels = out_t.shape[_channel_axis(dst)]
            conv = None
            if op_name(other) == "layout_transform" and other.attrs.src_layout == src and \
                    other.attrs.dst_layout == dst:
                conv = other.args[0]
            elif len(ot.shape) == 0:
                conv = other
            elif tuple(ot.shape) == tuple(out_t.shape):
                conv = _lt(other, dst, src)
            elif _per_channel_vector(ot, dst, channels) is not None:
                if type(other) is Constant:
                    conv = Constant(_vector_for(other.data.reshape(-1), src), other.span)
                else:
                    vec = make_call("reshape", [other], newshape=(channels,))
                    if src in ("NCHW", "NHWC"):
                        shape = (channels, 1, 1) if src == "NCHW" else (channels,)
                        conv = make_call("reshape", [vec], newshape=shape)
                    else:
                        conv = _lt(make_call("reshape", [vec], newshape=(1, channels, 1, 1)),
                                   "NCHW", src)
            if conv is None:
                continue
            args = [blocked, conv] if i == 0 else [conv, blocked]
            moved = make_call(op_name(new), args, span=new.span)
            return _lt(moved, src, dst, side.span)
        return new


def _subsample(source, layout, shape, strides, cache):
    """NCHW ``source`` in ``layout`` (``NCHW{c}c``, the 5-d ``shape``) at every ``strides``-th
    row and column: what a 1x1 convolution of those strides and no padding reads. One
    ``strided_slice`` per tensor, layout and strides (``cache``: ResNet v1's two strided 1x1
    layers of a stage's first block read the same input)."""
    key = (id(source), layout, tuple(strides))
    if key not in cache:
        data = _lt(source, "NCHW", layout)
        cache[key] = (source, make_call("strided_slice", [data], begin=[0] * 5, end=list(shape),
                                        strides=[1, 1, strides[0], strides[1], 1]))
    return cache[key][1]


def _nchwc_conv(orig, new, cache=None):
    """``new`` (an NCHW / OIHW ``nn.conv2d``) as ``nn.contrib_conv2d_NCHWc`` (or the depthwise
    one) between layout transforms; ``new`` unchanged where the blocked kernels do not apply.

    A 1x1 convolution with strides > 1 and no padding reads a ``strided_slice`` of its input
    at stride 1: the same sums, but the kernel streams a dense quarter of the input instead of
    picking every other pixel of all of it (ResNet-50's 256->512 projection on 56x56: 3.12 ->
    2.82 ms with the slice's 0.09 ms, two Zen 1 threads)."""
    a = new.attrs
    t_in, t_w = _ty(orig.args[0]), _ty(orig.args[1])
    if (a.data_layout != "NCHW" or a.kernel_layout != "OIHW" or a.out_layout
            or not _static4(t_in) or not _static4(t_w)):
        return new
    if t_in.dtype == "int16" and a.out_dtype == "int32":
        return new  # quantized (qnn) convolution: the NCHW int16 template packs for vpmaddwd
    o, c = t_w.shape[0], t_in.shape[1]
    if c == 0 or o == 0:
        return new  # an empty channel axis has no block (and nothing worth packing)
    depthwise = a.groups == c == o and a.groups > 1
    if a.groups != 1 and not depthwise:
        return new
    ic, oc = block_size(c), block_size(o)
    dl, kl, ol = f"NCHW{ic}c", f"OIHW{ic}i{oc}o", f"NCHW{oc}c"
    if depthwise:
        kl = f"OIHW1i{oc}o"
    data = _lt(new.args[0], "NCHW", dl)
    weight = _lt(new.args[1], "OIHW", kl)
    strides = tuple(int(v) for v in a.strides)
    if (not depthwise and tuple(t_w.shape[2:]) == (1, 1) and strides != (1, 1)
            and not any(int(p) for p in a.padding)):
        n, _, h, w = (int(d) for d in t_in.shape)
        data = _subsample(new.args[0], dl, (n, c // ic, h, w, ic), strides,
                          {} if cache is None else cache)
        strides = (1, 1)
    name = "nn.contrib_depthwise_conv2d_NCHWc" if depthwise else "nn.contrib_conv2d_NCHWc"
    conv = make_call(name, [data, weight], span=new.span,
                     strides=strides, padding=a.padding, dilation=a.dilation, groups=a.groups,
                     channels=o, kernel_size=tuple(t_w.shape[2:]), data_layout=dl,
                     kernel_layout=kl, out_layout=ol, out_dtype=a.out_dtype)
    return _lt(conv, ol, "NCHW", new.span)


class _Alter(Rewriter):
    def __init__(self, winograd, int_winograd=True):
        super().__init__()
        self.winograd = winograd
        self.int_winograd = int_winograd
        self.slices = {}  # _subsample's strided slices, one per input and strides
        self.vnni = dot_lanes()  # int32 lanes of uint8 x int8 dot products (0: none)

    def post_call(self, orig, new):
        if op_name(new) == "nn.conv2d":
            tile = self.winograd(orig, new)
            if tile:
                return winograd_conv(orig, new, tile)
            if self.vnni:
                conv = vnni_conv(orig, new, self.vnni)
                if conv is not None:
                    return conv
            if self.int_winograd and int16_winograd_eligible(orig, new):
                return int16_winograd_conv(orig, new)
            return _nchwc_conv(orig, new, self.slices)
        return new


def _infer(func, mod):
    from ..typing.infer import infer_expr

    infer_expr(func, mod)
    return func


def _finish(out, mod):
    from .cse import eliminate_common_subexpr

    out = _Propagate().rewrite(_infer(out, mod))
    # one layout_transform per transformed value (a residual input is converted once)
    return eliminate_common_subexpr(out, lambda c: c.op.name != "layout_transform")


def alter_op_layout(func, mod=None, winograd=None):
    """AlterOpLayout on one function. ``winograd(orig, new) -> tile size or None`` decides
    which convolutions become Winograd (default: :func:`winograd_choice` with the current
    target and ``PassContext`` config)."""
    from ..op.op_attrs import get_op_attr
    from .convert_layout import alter_with_hooks

    hooked = {n for n in called_ops(func) if get_op_attr(n, "FTVMAlterOpLayout") is not None}
    if hooked:
        # users' hooks first (Relay's generic rewrite); a hook on nn.conv2d replaces the
        # built-in x86 blocking, as the x86 hook was itself the operator's hook in Relay
        func = alter_with_hooks(func, mod)
    if "nn.conv2d" not in called_ops(func) or "nn.conv2d" in hooked:
        return func
    int_winograd = True
    if winograd is None:
        winograd = winograd_decider()
        int_winograd = winograd_mode() != "never"
    out = _Alter(winograd, int_winograd).rewrite(func)
    return func if out is func else _finish(out, mod)


def AlterOpLayout():  # noqa: N802 - Relay's name
    """conv2d NCHW -> NCHW{c}c blocked convolutions for x86 (opt level 3); stride-1 3x3 ones
    with a constant weight -> Winograd convolutions where the cost model of
    :mod:`relay_tvm.transform.winograd_choice` says they are faster (``PassContext`` config
    ``"relay.AlterOpLayout.winograd"``: ``"auto"``, ``"never"``, 2 or 4)."""
    return FunctionPass(lambda f, m, c: alter_op_layout(f, m),
                        PassInfo(3, "AlterOpLayout", ("InferType",)))


def _check_desired(desired_layouts) -> dict:
    """``{operator name: [layout, ...]}`` checked: a mapping of names to non-empty lists of
    well-formed layout strings (or ``"default"``).

    Raises:
        RelayError: naming the entry and what is wrong with it.
    """
    from ..errors import TypeInferenceError
    from ..op.shape_ops import parse_layout

    if not hasattr(desired_layouts, "items"):
        raise RelayError(f"ConvertLayout: desired_layouts must be a dict of operator name -> "
                         f"list of layouts, got {type(desired_layouts).__name__}")
    out = {}
    for k, v in desired_layouts.items():
        if isinstance(v, str) or not isinstance(v, (list, tuple)) or not v:
            raise RelayError(f"ConvertLayout: desired_layouts[{k!r}] = {v!r}: expected a "
                             f"non-empty list of layouts, e.g. ['NHWC', 'default']")
        lays = [str(x) for x in v]
        for lay in lays:
            if lay == "default":
                continue
            try:
                if not parse_layout(lay, "ConvertLayout"):
                    raise TypeInferenceError(f"ConvertLayout: empty layout {lay!r}")
            except TypeInferenceError as e:
                raise RelayError(f"ConvertLayout: desired_layouts[{k!r}]: malformed layout "
                                 f"{lay!r} ({e}); expected axes such as 'NHWC' or "
                                 f"'NCHW16c'") from None
        out[str(k)] = lays
    return out


def ConvertLayout(desired_layouts: dict):  # noqa: N802 - Relay's name
    """Convert the operators named in ``desired_layouts`` to the layouts given there and
    carry the new layouts through the operators after them (opt level 3; Relay's
    ConvertLayout, see :mod:`relay_tvm.transform.convert_layout`).

    Args:
        desired_layouts: operator name -> layouts: ``{"nn.conv2d": ["NHWC", "default"]}``
            (data layout, then kernel layout; ``"default"``: OIHW for NCHW, HWIO for NHWC,
            HWOI for a depthwise NHWC convolution), ``{"nn.max_pool2d": ["NHWC"]}``, ...
            Convolutions (1-3-D, transposed, deformable, ``NCHW{c}c`` blocked with a blocked
            kernel layout) and 2-D pooling have built-in hooks; others take
            ``register_convert_op_layout``.

    Raises:
        RelayError: a name that is no operator, a desired layout a hook cannot provide, or a
            malformed layout.
    """
    from .convert_layout import convert_layout

    desired = _check_desired(desired_layouts)
    from ..op.registry import is_registered, list_op_names

    for name in desired:
        if not is_registered(name):
            hint = did_you_mean(name, list_op_names(), clause=True)
            raise RelayError(f"ConvertLayout: desired_layouts names {name!r}, which is not an "
                             f"operator{hint}")
    return FunctionPass(lambda f, m, c: convert_layout(f, desired, m),
                        PassInfo(3, "ConvertLayout", ("InferType",)))


__all__ = ["AlterOpLayout", "ConvertLayout", "block_size", "alter_op_layout"]

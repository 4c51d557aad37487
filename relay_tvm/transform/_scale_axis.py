"""Helpers of FoldScaleAxis: scale messages, layout axes of convolutions, broadcast matching.

A *message* says along which axes of a tensor a per-channel scale may be folded and whether the
scale must be non-negative (it is, when it passes a ``relu``: ``relu(x * s) == relu(x) * s``
only for ``s >= 0``). The scale tensor itself has one dimension per axis of the message (e.g.
``(C,)`` for NCHW, ``(C // 4, 4)`` for NCHW4c).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.expr import Call, Constant
from ..op import reshaping as _shape
from ..op.transform import repeat as _repeat
from ._rewrite import op_name


@dataclass(frozen=True)
class Message:
    """Axes (sorted) a scale may run along, and whether it must be non-negative."""

    axes: tuple
    positive: bool = False


def intersect(a: Message | None, b: Message | None) -> Message | None:
    """Two consumers' wishes together: the common axes (None when one refuses or none remain)."""
    if a is None or b is None:
        return None
    axes = tuple(x for x in a.axes if x in b.axes)
    return Message(axes, a.positive or b.positive) if axes else None


def static(d) -> int | None:
    return d if isinstance(d, int) else None


def tensor_type(e):
    """The checked tensor type of ``e`` (None when untyped or not a tensor)."""
    t = getattr(e, "_checked_type", None)
    return t if t is not None and hasattr(t, "shape") and hasattr(t, "dtype") else None


def _same_dim(a, b) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return a == b
    import tvm

    return bool(tvm.ir.structural_equal(a, b))


def match_broadcast(tl, tr, axes, rhs=None):
    """Whether ``tr`` broadcasts onto ``tl`` as a scale along ``axes`` only: ``tr`` has ``tl``'s
    size on each of ``axes`` and 1 elsewhere (a scalar matches any axes when ``rhs`` is given).

    Returns ``(ok, value)``: with ``rhs`` given, ``value`` is ``rhs`` reduced to the matched
    dimensions (``squeeze`` of the others; for a scalar, ``expand_dims`` then ``repeat``).
    """
    ls, rs = tuple(tl.shape), tuple(tr.shape)
    if len(ls) < len(rs):
        return False, None
    if not rs and rhs is not None and axes:
        sizes = [static(ls[a]) for a in axes]
        if None in sizes:
            return False, None
        v = _shape.expand_dims(rhs, 0, len(axes))
        for i, n in enumerate(sizes):
            v = _repeat(v, n, i)
        return True, v
    base = len(ls) - len(rs)
    drop = []
    for i, d in enumerate(ls):
        if i in axes:
            if i < base or not _same_dim(d, rs[i - base]):
                return False, None
        elif i >= base:
            if rs[i - base] != 1:
                return False, None
            drop.append(i - base)
    if rhs is not None and drop:
        rhs = _shape.squeeze(rhs, drop)
    return True, rhs


def expand_to_axes(scale, ndim: int, axes):
    """``scale`` (one dimension per axis of ``axes``) with size-1 dimensions inserted so that it
    broadcasts along ``axes`` of a rank-``ndim`` tensor (``expand_dims`` calls only)."""
    for i in range(len(axes), 0, -1):
        if i == len(axes):
            pad = ndim - axes[i - 1] - 1
        else:
            pad = axes[i] - axes[i - 1] - 1
        if pad > 0:
            scale = _shape.expand_dims(scale, i, pad)
    return scale


def reshape_to_axes(scale, shape, axes):
    """``scale`` reshaped to rank ``len(shape)``: ``shape``'s sizes on ``axes``, 1 elsewhere;
    None when one of those sizes is not static."""
    new = []
    for i, d in enumerate(shape):
        if i in axes:
            if static(d) is None:
                return None
            new.append(d)
        else:
            new.append(1)
    return _shape.reshape(scale, tuple(new))


def reshape_or_expand(scale, shape, axes):
    if len(axes) > 1:
        return reshape_to_axes(scale, shape, axes)
    return expand_to_axes(scale, len(shape), axes)


_PEEL = {"expand_dims", "reshape", "transpose", "squeeze", "repeat"}


def is_nonnegative_constant(e) -> bool:
    """``e`` is a constant (under reshapes, squeezes, repeats ...) with no negative or NaN
    element, of an integer or floating dtype."""
    while type(e) is Call and op_name(e) in _PEEL:
        e = e.args[0]
    if type(e) is not Constant:
        return False
    a = e.data.numpy()
    if a.dtype.kind not in "iuf":
        return False
    return bool(np.all(a >= 0))


def is_constant_with_zero(e) -> bool:
    """``e`` is a constant (under reshapes, squeezes, repeats ...) with a zero element: a bias
    cannot be divided by it."""
    while type(e) is Call and op_name(e) in _PEEL:
        e = e.args[0]
    return type(e) is Constant and bool(np.any(e.data.numpy() == 0))


def parse_layout(layout: str):
    """``"NCHW4c"`` -> ``{"N": 0, "C": 1, "H": 2, "W": 3, "c": 4}`` (None when malformed), read
    by the layout parser of ``layout_transform`` (:func:`relay_tvm.op.shape_ops.parse_layout`)."""
    from ..errors import TypeInferenceError
    from ..op.shape_ops import parse_layout as axes_of

    if not layout:
        return None
    try:
        axes = axes_of(layout, "FoldScaleAxis")
    except TypeInferenceError:
        return None
    return {(a if size is None else a.lower()): i for i, (a, size) in enumerate(axes)}


def _primal_size(layout: dict, shape, axis: str):
    """Size of the primal axis ``axis`` (``"O"``) in a tensor of ``shape`` in ``layout``: the
    outer size times the block of its sub-axis (``"o"``) when there is one."""
    n = static(shape[layout[axis]])
    if n is None:
        return None
    sub = layout.get(axis.lower())
    if sub is not None:
        b = static(shape[sub])
        return None if b is None else n * b
    return n


@dataclass(frozen=True)
class ConvAxes:
    """Where the channels of a convolution are: ``C``/``c`` of the data (or output) layout,
    ``I``/``i``/``O``/``o`` of the kernel layout (``i``, ``o``, ``c`` -1 in a plain layout)."""

    big_c: int
    small_c: int
    big_i: int
    small_i: int
    big_o: int
    small_o: int
    depthwise: bool

    @property
    def blocked(self) -> bool:
        return self.small_c >= 0

    @property
    def axes(self) -> tuple:
        return (self.big_c,) if self.small_c < 0 else (self.big_c, self.small_c)

    def kernel_axes(self) -> tuple:
        """Kernel axes a data-side scale folds along (input channels; output channels for a
        depthwise convolution, whose output channel k reads input channel k only)."""
        if self.depthwise:
            return (self.big_o,) if self.small_o < 0 else (self.big_o, self.small_o)
        return (self.big_i,) if self.small_i < 0 else (self.big_i, self.small_i)

    def out_kernel_axes(self) -> tuple:
        return (self.big_o,) if self.small_o < 0 else (self.big_o, self.small_o)


def conv_axes(call, output: bool) -> ConvAxes | None:
    """The channel axes of an ``nn.conv2d`` / ``nn.conv3d`` call, for a scale on its data
    (``output=False``) or on its result (``output=True``); None when the scale cannot fold:
    grouped (not depthwise) convolutions, layouts blocked on one side only, weights of
    unknown shape, or no ``C`` axis."""
    a = call.attrs
    wt = tensor_type(call.args[1])
    if wt is None:
        return None
    layout_name = (a.out_layout or a.data_layout) if output else a.data_layout
    dl, kl = parse_layout(layout_name), parse_layout(a.kernel_layout)
    if dl is None or kl is None or "C" not in dl or "O" not in kl or "I" not in kl:
        return None
    small_c, small_i, small_o = dl.get("c", -1), kl.get("i", -1), kl.get("o", -1)
    plain = small_c < 0 and small_i < 0 and small_o < 0
    blocked = small_c >= 0 and small_i >= 0 and small_o >= 0
    if not (plain or blocked):
        return None
    if blocked and not (dl["C"] < small_c and kl["I"] < small_i and kl["O"] < small_o):
        return None
    o = _primal_size(kl, wt.shape, "O")
    i = _primal_size(kl, wt.shape, "I")
    depthwise = o is not None and i == 1 and o == a.groups
    if a.groups != 1 and not depthwise:
        return None
    ax = ConvAxes(dl["C"], small_c, kl["I"], small_i, kl["O"], small_o, depthwise)
    if blocked:
        kax = ax.out_kernel_axes() if output else ax.kernel_axes()
        if any(static(wt.shape[k]) is None for k in kax):
            return None
    return ax


def normalize_axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


__all__ = ["Message", "intersect", "match_broadcast", "expand_to_axes", "reshape_to_axes",
           "reshape_or_expand", "is_nonnegative_constant", "is_constant_with_zero", "conv_axes", "ConvAxes",
           "tensor_type", "normalize_axis"]

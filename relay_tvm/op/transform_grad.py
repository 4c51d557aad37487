"""Gradients (FPrimalGradient) of the shape and data-movement operators of
:mod:`relay_tvm.op.transform` and :mod:`relay_tvm.op.reshaping`."""

from __future__ import annotations

import numpy as np

from .registry import make_call, register_gradient
from .reshaping import reshape, reshape_like, squeeze
from .transform import _transpose_axes, cast_like, reverse, split, transpose

# ---- gradients (FPrimalGradient) --------------------------------------------------------------


def _zeros_like(x):
    return make_call("zeros_like", [x])


register_gradient("cast", lambda orig, g: [cast_like(g, orig.args[0])])
register_gradient(
    "cast_like", lambda orig, g: [cast_like(g, orig.args[0]), _zeros_like(orig.args[1])]
)
register_gradient("reshape", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient("contrib_reverse_reshape", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient("squeeze", lambda orig, g: [reshape_like(g, orig.args[0])])
register_gradient("expand_dims", lambda orig, g: [reshape_like(g, orig.args[0])])
# the dyn.* data movements keep the elements' order; their shape/axis tensors get zeros
for _name in ("dyn.reshape", "dyn.squeeze", "dyn.expand_dims"):
    register_gradient(_name, lambda orig, g: [reshape_like(g, orig.args[0]),
                                              _zeros_like(orig.args[1])])
register_gradient(
    "reshape_like", lambda orig, g: [reshape_like(g, orig.args[0]), _zeros_like(orig.args[1])]
)
register_gradient("reverse", lambda orig, g: [reverse(g, orig.attrs.axis)])


@register_gradient("transpose")
def _transpose_grad(orig, g):
    axes = _transpose_axes(orig.attrs, orig.args[0].checked_type.ndim)
    return [transpose(g, tuple(int(i) for i in np.argsort(axes)))]


@register_gradient("concatenate")
def _concatenate_grad(orig, g):
    fields = orig.args[0].checked_type.fields
    axis = orig.attrs.axis % len(fields[0].shape)
    points, total = [], 0
    for f in fields[:-1]:
        total += f.concrete_shape[axis]
        points.append(total)
    if not points:
        from ..ir.expr import Tuple

        return [Tuple([g])]
    return [split(g, tuple(points), axis).astuple()]


@register_gradient("stack")
def _stack_grad(orig, g):
    from ..ir.expr import Tuple

    n = len(orig.args[0].checked_type.fields)
    axis = orig.attrs.axis
    parts = split(g, n, axis)
    return [Tuple([squeeze(parts[i], (axis,)) for i in range(n)])]


@register_gradient("tile")
def _tile_grad(orig, g):
    """Sum the tiles: view g as (r0, d0, r1, d1, ...) and reduce the r axes."""
    from .reduce import sum as _sum

    x = orig.args[0]
    shape = list(x.checked_type.concrete_shape)
    reps = list(orig.attrs.reps)
    n = max(len(shape), len(reps))
    shape = [1] * (n - len(shape)) + shape
    reps = [1] * (n - len(reps)) + reps
    split_shape = [v for r, d in zip(reps, shape) for v in (r, d)]
    summed = _sum(reshape(g, split_shape), tuple(range(0, 2 * n, 2)))
    return [reshape_like(summed, x)]


@register_gradient("repeat")
def _repeat_grad(orig, g):
    from .reduce import sum as _sum

    x = orig.args[0]
    shape = list(x.checked_type.concrete_shape)
    axis = orig.attrs.axis % len(shape)
    split_shape = shape[: axis + 1] + [orig.attrs.repeats] + shape[axis + 1 :]
    return [_sum(reshape(g, split_shape), axis + 1)]

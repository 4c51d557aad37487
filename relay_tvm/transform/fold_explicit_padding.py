"""FoldExplicitPadding (tvm.relay 0.19's ``fold_explicit_padding.cc``): an ``nn.pad`` whose
only reader is a convolution or a pooling folds into that operator's own ``padding``.

``op(nn.pad(x, widths, v), padding=p)`` becomes ``op(x, padding=p + widths)`` when the pad is
``constant`` mode, pads only the operator's spatial axes (its layout is ``N``, ``C`` and the
spatial letters ``D``/``H``/``W``), and the value is the one the operator pads with:

- ``nn.conv1d`` / ``conv2d`` / ``conv3d``: 0; ``qnn.conv2d``: its input zero point (a
  constant);
- ``nn.avg_pool1d/2d/3d``: 0, and the result has ``count_include_pad=True`` (the padded zeros
  count in the divisor, as they did when they were real elements); so only when the pool
  already counts its padding or has none;
- ``nn.max_pool1d/2d/3d``: the lowest value of the dtype. relay_tvm's max pooling pads with
  ``-inf`` for floats (a window wholly in the padding gives ``-inf``), so a float pad of the
  lowest *finite* value folds only when no window can lie wholly in the padding (each side's
  padding below the dilated window, no ``ceil_mode``); a pad of ``-inf`` or of an integer
  dtype's minimum always folds.

0.19 folded the max-pool case without the window condition. Needs types (runs InferType).
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant
from ..op.registry import make_call
from ._rewrite import Rewriter, node_uses, op_name
from .pass_infra import FunctionPass, PassInfo

_CONVS = {"nn.conv1d", "nn.conv2d", "nn.conv3d", "qnn.conv2d"}
_MAX = {"nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d"}
_AVG = {"nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d"}


def _scalar(e):
    if type(e) is not Constant:
        return None
    v = np.asarray(e.data.numpy() if hasattr(e.data, "numpy") else e.data)
    return v.reshape(()) if v.size == 1 else None


def _spatial_widths(widths, layout):
    """Per spatial axis ``(before, after)`` of a pad in ``layout``, or None if the pad
    touches another axis or the layout is not plain ``N``/``C``/``D``/``H``/``W``."""
    if len(widths) != len(layout) or sorted(layout) != sorted(set(layout)):
        return None
    out = []
    for axis, (b, a) in zip(layout, widths):
        if axis in "DHW":
            out.append((int(b), int(a)))
        elif axis in "NC":
            if int(b) or int(a):
                return None
        else:
            return None
    return out


def _pad_matches(name, attrs, call, value, dtype, new_pads):
    if name in _CONVS:
        if name == "qnn.conv2d":
            zp = _scalar(call.args[2])
            return zp is not None and value == zp
        return value == 0
    if name in _AVG:
        return value == 0 and (attrs.count_include_pad or not any(attrs.padding))
    kind = np.dtype(dtype).kind
    if kind == "f":
        if np.isneginf(value):
            return True
        if value != np.finfo(dtype).min or attrs.ceil_mode:
            return False
        dil = getattr(attrs, "dilation", None) or (1,) * len(attrs.pool_size)
        return all(max(b, a) <= (k - 1) * d
                   for (b, a), k, d in zip(new_pads, attrs.pool_size, dil))
    if kind in "iu":
        return value == np.iinfo(dtype).min
    return False


def _fold(orig, call):
    name = op_name(call)
    pad = call.args[0]
    if name not in _CONVS | _MAX | _AVG or op_name(pad) != "nn.pad":
        return None
    pa = pad.attrs
    value = _scalar(pad.args[1])
    t = getattr(orig.args[0].args[0], "_checked_type", None)
    if pa.pad_mode != "constant" or value is None or t is None:
        return None
    a = call.attrs
    layout = a.data_layout if name in _CONVS else a.layout
    widths = _spatial_widths(pa.pad_width, layout)
    if widths is None:
        return None
    nd = len(widths)
    old = [int(p) for p in a.padding]
    if len(old) == nd:  # one value per axis, both sides
        old = old + old
    if len(old) != 2 * nd:
        return None
    befores = [old[i] + widths[i][0] for i in range(nd)]
    afters = [old[nd + i] + widths[i][1] for i in range(nd)]
    if not _pad_matches(name, a, call, value.item(), t.dtype, list(zip(befores, afters))):
        return None
    fields = dict(a.items())
    fields["padding"] = tuple(befores + afters)
    if name in _AVG:
        fields["count_include_pad"] = True
    return make_call(name, [pad.args[0], *call.args[1:]], span=call.span, **fields)


class _FoldPadding(Rewriter):
    def __init__(self, uses):
        super().__init__()
        self.uses = uses

    def post_call(self, orig, new):
        if op_name(new) not in _CONVS | _MAX | _AVG or self.uses.get(orig.args[0], 0) != 1:
            return new
        out = _fold(orig, new)
        return new if out is None else out


def FoldExplicitPadding():  # noqa: N802 - Relay's name
    """Fold an ``nn.pad`` into the convolution or pooling that reads it (see the module
    docstring for when). Needs types (runs InferType first)."""
    return FunctionPass(lambda f, m, c: _FoldPadding(node_uses(f)).rewrite(f),
                        PassInfo(0, "FoldExplicitPadding", ("InferType",)))


__all__ = ["FoldExplicitPadding"]

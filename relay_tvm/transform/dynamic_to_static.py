"""DynamicToStatic: ``dyn.*`` calls whose shape-like arguments are constants become the static
operators (tvm.relay 0.19's ``dynamic_to_static.cc``).

Constants are folded first (so ``dyn.reshape(x, shape_of(y))`` with a static ``y`` has a constant
shape), then each ``dyn.*`` call whose shape, reps, bounds, ``k`` or depth are ``Constant`` s is
replaced by the static call with those values as attributes; folding and rewriting repeat until
nothing changes (a static shape can make another shape computation constant).
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Function
from ..op.registry import make_call
from ._rewrite import Rewriter, called_ops, op_name
from .pass_infra import ModulePass, PassInfo


def _vals(c):
    return [int(v) for v in np.asarray(c.data.numpy()).reshape(-1)]


def _scalar(c):
    return _vals(c)[0]


def _reshape(call, a):
    return make_call("reshape", [a[0]], newshape=tuple(_vals(a[1])),
                     allowzero=bool(call.attrs.allowzero))


def _broadcast_to(call, a):
    return make_call("broadcast_to", [a[0]], shape=tuple(_vals(a[1])))


def _full(call, a):
    return make_call("full", [a[0]], shape=tuple(_vals(a[1])),
                     dtype=call.attrs.dtype or a[0].checked_type.dtype)


def _fill(name):
    return lambda call, a: make_call(name, [], shape=tuple(_vals(a[0])), dtype=call.attrs.dtype)


def _tile(call, a):
    return make_call("tile", [a[0]], reps=tuple(_vals(a[1])))


def _strided_slice(call, a):
    return make_call("strided_slice", [a[0]], begin=tuple(_vals(a[1])),
                     end=tuple(_vals(a[2])), strides=tuple(_vals(a[3])), axes=None,
                     slice_mode=call.attrs.slice_mode)


def _topk(call, a):
    at = call.attrs
    return make_call("topk", [a[0]], k=_scalar(a[1]), axis=at.axis, ret_type=at.ret_type,
                     is_ascend=at.is_ascend, dtype=at.dtype)


def _one_hot(call, a):
    return make_call("one_hot", [a[0], a[1], a[2]], depth=_scalar(a[3]), axis=call.attrs.axis,
                     dtype=call.attrs.dtype)


def _resize2d(call, a):
    at = call.attrs
    raw = np.asarray(a[1].data.numpy()).reshape(-1)
    if raw.dtype.kind == "f" and not np.all(raw == np.floor(raw)):
        return None  # not a size: left for the run-time error
    roi = [float(v) for v in np.asarray(a[2].data.numpy()).reshape(-1)]
    # roi is read by a crop-and-resize mode only; all zeros is the static default ()
    return make_call("image.resize2d", [a[0]], roi=tuple(roi) if any(roi) else (),
                     size=tuple(_vals(a[1])), layout=at.layout, method=at.method,
                     coordinate_transformation_mode=at.coordinate_transformation_mode,
                     rounding_method=at.rounding_method, cubic_alpha=at.cubic_alpha,
                     cubic_exclude=at.cubic_exclude, extrapolation_value=at.extrapolation_value,
                     out_dtype=at.out_dtype)


def _pad(call, a):
    widths = tuple((int(b), int(e)) for b, e in np.asarray(a[1].data.numpy()).reshape(-1, 2))
    # pad_value stays an argument of nn.pad, so it need not be constant
    return make_call("nn.pad", [a[0], a[2]], pad_width=widths, pad_mode=call.attrs.pad_mode)


def _upsampling(call, a):
    at = call.attrs
    return make_call("nn.upsampling", [a[0]], scale_h=a[1].data.numpy().item(),
                     scale_w=a[2].data.numpy().item(), layout=at.layout, method=at.method,
                     align_corners=at.align_corners)


def _upsampling3d(call, a):
    at = call.attrs
    d, h, w = (c.data.numpy().item() for c in a[1:4])
    return make_call("nn.upsampling3d", [a[0]], scale_d=d, scale_h=h, scale_w=w,
                     layout=at.layout, method=at.method,
                     coordinate_transformation_mode=at.coordinate_transformation_mode)


def _expand_dims(call, a):
    return make_call("expand_dims", [a[0]], axis=_scalar(a[1]),
                     num_newaxis=call.attrs.num_newaxis)


def _squeeze(call, a):
    return make_call("squeeze", [a[0]], axis=tuple(_vals(a[1])))


# operator -> (indices of the arguments that must be constant, rewrite)
_RULES = {
    "dyn.reshape": ((1,), _reshape),
    "dyn.broadcast_to": ((1,), _broadcast_to),
    "dyn.full": ((1,), _full),
    "dyn.zeros": ((0,), _fill("zeros")),
    "dyn.ones": ((0,), _fill("ones")),
    "dyn.tile": ((1,), _tile),
    "dyn.strided_slice": ((1, 2, 3), _strided_slice),
    "dyn.topk": ((1,), _topk),
    "dyn.one_hot": ((3,), _one_hot),
    "dyn.image.resize2d": ((1, 2), _resize2d),
    "dyn.nn.pad": ((1,), _pad),
    "dyn.nn.upsampling": ((1, 2), _upsampling),
    "dyn.nn.upsampling3d": ((1, 2, 3), _upsampling3d),
    "dyn.expand_dims": ((1,), _expand_dims),
    "dyn.squeeze": ((1,), _squeeze),
}


class _ToStatic(Rewriter):
    def __init__(self):
        super().__init__()
        self.changed = False

    def post_call(self, orig, new):
        rule = _RULES.get(op_name(new))
        if rule is None:
            return new
        need, make = rule
        if not all(isinstance(new.args[i], Constant) for i in need):
            return new
        out = make(orig, list(new.args))
        if out is None:  # the rule declined (a constant that is not a valid static value)
            return new
        self.changed = True
        return out

    def post_function(self, orig, new):
        # a static operator may give a function a more precise return type than the one
        # inference filled in: drop it and let InferType give the new one (0.19's
        # DynamicToStatic cleared every function's ret_type)
        if new is orig or new.ret_type is None:
            return new
        return Function(new.params, new.body, None, new.type_params, new.attrs, new.span)


def dynamic_to_static(mod):
    """The rewrite over every function of ``mod`` (see the module docstring)."""
    from .fold_constant import FoldConstant
    from .infer_type import InferType

    for _ in range(8):
        mod = InferType()(FoldConstant()(InferType()(mod)))
        changed = False
        for gv, func in list(mod.functions.items()):
            if not any(o in _RULES for o in called_ops(func)):
                continue
            rw = _ToStatic()
            new = rw.rewrite(func)
            if rw.changed:
                if not changed:
                    mod = mod.copy()  # the caller's module stays as it was
                mod.update_func(gv, new)
                changed = True
        if not changed:
            break
    return InferType()(mod)


def DynamicToStatic():  # noqa: N802 - Relay's name
    """``dyn.*`` calls with constant shape arguments to static operators (opt level 3)."""
    return ModulePass(lambda m, c: dynamic_to_static(m),
                      PassInfo(3, "DynamicToStatic", ("InferType",)))


__all__ = ["DynamicToStatic", "dynamic_to_static"]

"""``argwhere`` (tvm.relay.argwhere): the indices of the nonzero elements of a tensor.

``argwhere(condition)`` of a rank-``r`` tensor (``r >= 1``, any dtype; an element counts when it
is not 0 / False, NaN included) is an int32 tensor of shape ``(Any, r)``: one row per nonzero
element, its coordinates, in row-major order — ``numpy.argwhere``'s result and order.

The number of rows depends on the values, so the type says ``Any`` and the operator's shape
function counts the nonzero elements at run time (a TE sum over the input); the VM allocates the
output from it. The kernel is one sequential pass (a ``te.extern`` written with TVM's IR builder)
that writes each nonzero element's coordinates at the next row. kOpaque, never fused. Only the VM
and the interpreter run it: its output shape makes ``relay.build`` refuse the program.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..errors import TypeInferenceError
from ..ir.types import AnyDim, TensorType
from ._common import out_dims, tensor_args
from .registry import OpPattern, make_call, register_op, register_shape_func


def _rel(types, attrs):
    ts = tensor_args(types, ("condition",), "argwhere")
    if ts is None:
        return None
    t = ts[0]
    if t.ndim == 0:
        raise TypeInferenceError("argwhere: condition must have rank >= 1, got a scalar")
    return TensorType((AnyDim(), t.ndim), "int32")


def _ref(args, attrs, out_type):
    return np.argwhere(np.asarray(args[0])).astype("int32")


def _nonzero(x, idx):
    from tvm import tirx

    v = x[tuple(idx)]
    if str(x.dtype) == "bool":
        return v
    nonzero = v != tirx.const(0, str(x.dtype))
    if str(x.dtype).startswith(("float", "bfloat")):  # LLVM's ordered != is false for NaN
        nonzero = tirx.any(nonzero, tirx.isnan(v))
    return nonzero


def _compute(attrs, inputs, out_type):
    from tvm import tirx
    from tvm.script.ir_builder import tirx as T

    from .vision import _ir

    x = inputs[0]
    shape = out_dims(out_type.shape)
    ndim = len(x.shape)

    def body(ins, outs):
        src, dst = ins[0], outs[0]
        with T.serial(0, 1):  # one frame holds the kernel's local counter
            row = _ir.local("int64", tirx.const(0, "int64"))
            with contextlib.ExitStack() as stack:
                idx = [stack.enter_context(T.serial(0, d)) for d in src.shape]
                with T.If(_nonzero(src, idx)):
                    with T.Then():
                        for a in range(ndim):
                            dst[row[0], a] = tirx.Cast("int32", idx[a])
                        row[0] = row[0] + 1

    return _ir.extern("argwhere", [shape], ["int32"], [x], body)[0]


def _shape(attrs, inputs, out_type):
    from tvm import te, tirx

    from ._common import select_of

    x = inputs[0]
    axes = [te.reduce_axis((0, d), name=f"k{a}") for a, d in enumerate(x.shape)]
    one, zero = tirx.const(1, "int64"), tirx.const(0, "int64")
    count = te.compute((1,), lambda _: te.sum(tirx.Select(_nonzero(x, axes), one, zero),
                                              axis=axes), name="nonzero_count")
    # a reduction over an empty axis never runs its init: an empty input counts 0 here
    total = one
    for d in x.shape:
        total = total * (d.astype("int64") if hasattr(d, "astype") else int(d))
    rows = tirx.Select(total == zero, zero, count[0])
    return [te.compute((2,), select_of([rows, tirx.const(len(x.shape), "int64")]),
                       name="shape")]


register_op("argwhere", num_inputs=1, arguments=("condition",), rel=_rel, ref=_ref,
            compute=_compute, pattern=OpPattern.OPAQUE,
            doc="the (Any, rank) int32 coordinates of the nonzero elements (numpy.argwhere)",
            level=10)
register_shape_func("argwhere", _shape)


def argwhere(condition):
    """The coordinates of the nonzero elements (tvm.relay.argwhere; numpy.argwhere).

    Args:
        condition: a tensor of rank >= 1, any dtype (bool, integer or float; NaN is nonzero).

    Returns:
        int32 ``(Any, rank)``: one row per nonzero element, in row-major order. The row count is
        known only at run time: run it on the VM (``relay.vm.compile``) or the interpreter.

    Raises:
        TypeInferenceError: at inference, for a scalar ``condition``.
    """
    return make_call("argwhere", [condition])


__all__ = ["argwhere"]

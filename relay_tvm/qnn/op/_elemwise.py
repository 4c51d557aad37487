"""qnn.add, qnn.subtract, qnn.mul, qnn.concatenate and qnn.avg_pool2d (tvm.relay 0.19's
``relay.qnn.op``).

- add/subtract: both operands are requantized (int64 fixed point, UPWARD) into the output's
  scale and zero point as int32, combined, the output zero point corrected, saturated.
- mul: ``(lhs - zp_l) * (rhs - zp_r)`` in int32, requantized from scale ``s_l * s_r`` to the
  output.
- concatenate: every input requantized to the output's parameters (those with equal
  parameters just widened), concatenated, saturated to the first input's dtype.
- avg_pool2d: the input requantized (or widened) to the output's parameters in int32,
  ``nn.avg_pool2d`` on int32 (its integer division truncates), saturated.
"""

from __future__ import annotations

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import AttrField as F
from ...ir.expr import Tuple, TupleWrapper
from ...ir.types import TensorType, TupleType
from ...op._common import broadcast_shapes, named
from ...op.registry import OpPattern, get, make_call, register_op, rows_unless_axis_0
from . import _arith
from ._common import check_dtype_in, check_qparam, check_tensor, known

_QDTYPES = ("int8", "uint8", "int16", "int32")


def _to_output(x, scale, zp, oscale, ozp, axis=-1):
    """``x`` requantized into the output's parameters, int64 values (no saturation)."""
    if np.array_equal(np.asarray(scale, "float32").reshape(-1),
                      np.asarray(oscale, "float32").reshape(-1)) and \
            np.array_equal(np.asarray(zp).reshape(-1), np.asarray(ozp).reshape(-1)):
        return x.astype("int64")
    return _arith.requantize(x, scale, zp, oscale, ozp, axis, "UPWARD", "int64",
                             "int32").astype("int64")


def _binary_rel(op):
    def rel(types, attrs):
        if not known(types):
            return None
        lhs, rhs = (check_tensor(t, n, op) for t, n in zip(types[:2], ("lhs", "rhs")))
        check_dtype_in(lhs, _QDTYPES, "lhs", op)
        if lhs.dtype != rhs.dtype:
            raise TypeInferenceError(f"{op}: lhs dtype {lhs.dtype} and rhs dtype {rhs.dtype} "
                                     "differ")
        names = ("lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point", "output_scale",
                 "output_zero_point")
        for i, (t, n) in enumerate(zip(types[2:], names)):
            data, axis = ((lhs, attrs.lhs_axis) if i < 2 else (rhs, attrs.rhs_axis) if i < 4
                          else (None, None))
            check_qparam(t, n, "float32" if "scale" in n else "int32", op, data, axis)
            if data is None and t.ndim == 1 and t.shape[0] != 1:
                raise TypeInferenceError(f"{op}: {n} must be a scalar, got shape {t.shape}")
        shape = broadcast_shapes(lhs.shape, rhs.shape, f"{op} lhs and rhs")
        return TensorType(shape, lhs.dtype)

    return rel


def _addsub_ref(sign):
    def ref(a, attrs, out_type):
        lhs, rhs, ls, lz, rs, rz, os_, oz = a
        lq = _to_output(lhs, ls, lz, os_, oz, attrs.lhs_axis)
        rq = _to_output(rhs, rs, rz, os_, oz, attrs.rhs_axis)
        z = np.asarray(oz).astype("int64").reshape(())
        out = (lq + rq - z) if sign > 0 else (lq - rq + z)
        return _arith.saturate(out, out_type.dtype)

    return ref


def _mul_ref(a, attrs, out_type):
    lhs, rhs, ls, lz, rs, rz, os_, oz = a
    nl, nr = lhs.ndim, rhs.ndim
    lsh = lhs.astype("int64") - _arith.along(lz, nl, attrs.lhs_axis % max(nl, 1))
    rsh = rhs.astype("int64") - _arith.along(rz, nr, attrs.rhs_axis % max(nr, 1))
    prod = (lsh * rsh).astype("int32")
    scale = np.asarray(ls, "float32") * np.asarray(rs, "float32")
    axis = attrs.lhs_axis if np.asarray(ls).size > 1 else attrs.rhs_axis
    return _arith.requantize(prod, scale, 0, os_, oz, axis, "UPWARD", "int64", out_type.dtype)


_BIN_ATTRS = ("relay.attrs.BroadcastAttrs", [F("lhs_axis", "int", -1), F("rhs_axis", "int", -1)])
_BIN_ARGS = ("lhs", "rhs", "lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point",
             "output_scale", "output_zero_point")

for _name, _ref in (("qnn.add", _addsub_ref(1)), ("qnn.subtract", _addsub_ref(-1)),
                    ("qnn.mul", _mul_ref)):
    register_op(_name, num_inputs=8, arguments=_BIN_ARGS, attrs=_BIN_ATTRS,
                batch_rows=rows_unless_axis_0("lhs_axis", "rhs_axis"),
                rel=_binary_rel(_name), ref=_ref, pattern=OpPattern.BROADCAST, level=11,
                doc=f"Quantized {_name[4:]} with NumPy broadcasting (see module doc).")


def _binary_ctor(name):
    def ctor(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
             output_zero_point, lhs_axis=-1, rhs_axis=-1):
        return make_call(name, [lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point,
                                output_scale, output_zero_point], lhs_axis=lhs_axis,
                         rhs_axis=rhs_axis)

    named(ctor, name[4:])
    ctor.__doc__ = (
        f"Quantized {name[4:]} (tvm.relay.{name.replace('qnn.', 'qnn.op.')}) of two tensors of "
        "the same int dtype with NumPy broadcasting; scales float32 and zero points int32 "
        "(scalars, or 1-D per channel along lhs_axis / rhs_axis for the inputs). The result "
        "has the inputs' dtype, saturated. See the module doc for the arithmetic.")
    return ctor


add = _binary_ctor("qnn.add")
subtract = _binary_ctor("qnn.subtract")
mul = _binary_ctor("qnn.mul")


# ---- concatenate -------------------------------------------------------------------------------


def _concat_rel(types, attrs):
    op = "qnn.concatenate"
    if not known(types):
        return None
    data, scales, zps = types[:3]
    for t, n in ((data, "data"), (scales, "input_scales"), (zps, "input_zero_points")):
        if not isinstance(t, TupleType):
            raise TypeInferenceError(f"{op}: {n} must be a tuple, got {t}")
    if not (len(data.fields) == len(scales.fields) == len(zps.fields)):
        raise TypeInferenceError(
            f"{op}: {len(data.fields)} inputs but {len(scales.fields)} scales and "
            f"{len(zps.fields)} zero points")
    for s, z in zip(scales.fields, zps.fields):
        check_qparam(s, "input scale", "float32", op)
        check_qparam(z, "input zero point", "int32", op)
    check_qparam(types[3], "output_scale", "float32", op)
    check_qparam(types[4], "output_zero_point", "int32", op)
    out = get("concatenate").type_rel([data], attrs)
    if out is not None:
        check_dtype_in(out, _QDTYPES, "data", op)
    return out


def _concat_ref(a, attrs, out_type):
    data, scales, zps, os_, oz = a
    parts = [_to_output(x, s, z, os_, oz) for x, s, z in zip(data, scales, zps)]
    return _arith.saturate(np.concatenate(parts, axis=attrs.axis), out_type.dtype)


register_op(
    "qnn.concatenate", num_inputs=5,
    arguments=("data", "input_scales", "input_zero_points", "output_scale",
               "output_zero_point"),
    attrs=get("concatenate").attrs_schema, rel=_concat_rel, ref=_concat_ref,
    pattern=OpPattern.INJECTIVE, level=11,
    doc="Quantized concatenation: inputs requantized to the output's parameters.")


def concatenate(data, input_scales, input_zero_points, output_scale, output_zero_point, axis):
    """Quantized concatenation (tvm.relay.qnn.op.concatenate).

    Args:
        data: a list/tuple (or tuple-typed expression, such as ``relay.split``'s result) of
            int tensors of one dtype.
        input_scales, input_zero_points: lists/tuples of float32 / int32 scalars, one per input.
        output_scale, output_zero_point: the output's parameters.
        axis: the concatenation axis.

    Returns:
        the concatenation in the inputs' dtype, each input requantized (UPWARD, int64) into
        the output's scale and zero point and saturated.
    """
    def tup(v):
        if isinstance(v, TupleWrapper):  # relay.split(...) and other multi-output calls
            return v.astuple()
        return v if not isinstance(v, (list, tuple)) else Tuple(list(v))

    return make_call("qnn.concatenate", [tup(data), tup(input_scales), tup(input_zero_points),
                                         output_scale, output_zero_point], axis=axis)


# ---- avg_pool2d --------------------------------------------------------------------------------


def _avg_rel(types, attrs):
    op = "qnn.avg_pool2d"
    if not known(types):
        return None
    data = check_tensor(types[0], "data", op)
    check_dtype_in(data, _QDTYPES, "data", op)
    for t, n in zip(types[1:], ("input_scale", "input_zero_point", "output_scale",
                                "output_zero_point")):
        check_qparam(t, n, "float32" if "scale" in n else "int32", op)
    return get("nn.avg_pool2d").type_rel([data], attrs)


def _avg_ref(a, attrs, out_type):
    x = _to_output(a[0], a[1], a[2], a[3], a[4]).astype("int32")
    out = get("nn.avg_pool2d").ref_impl([x], attrs, TensorType(out_type.shape, "int32"))
    return _arith.saturate(np.asarray(out).astype("int64"), out_type.dtype)


register_op(
    "qnn.avg_pool2d", num_inputs=5,
    arguments=("data", "input_scale", "input_zero_point", "output_scale",
               "output_zero_point"),
    attrs=get("nn.avg_pool2d").attrs_schema, rel=_avg_rel, ref=_avg_ref,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, level=11,
    doc="Quantized 2-D average pooling (int32 sums, truncating division).")


def avg_pool2d(data, input_scale, input_zero_point, output_scale, output_zero_point, pool_size,
               strides, padding, dilation, ceil_mode=False, count_include_pad=True,
               layout="NHWC", out_layout=""):
    """Quantized 2-D average pooling (tvm.relay.qnn.op.avg_pool2d; note 0.19's default layout
    NHWC). The input is requantized into the output's scale and zero point in int32, averaged
    by ``nn.avg_pool2d`` (integer division truncating toward zero) and saturated to data's
    dtype."""
    from ...op.nn_pool import avg_pool2d as _nn_avg

    call = _nn_avg(data, pool_size=pool_size, strides=strides, padding=padding,
                   dilation=dilation, layout=layout, out_layout=out_layout, ceil_mode=ceil_mode,
                   count_include_pad=count_include_pad)
    return make_call("qnn.avg_pool2d", [data, input_scale, input_zero_point, output_scale,
                                        output_zero_point], **dict(call.attrs.items()))


__all__ = ["add", "subtract", "mul", "concatenate", "avg_pool2d"]

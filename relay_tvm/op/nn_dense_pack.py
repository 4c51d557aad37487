"""``nn.contrib_dense_pack`` (tvm.relay 0.19's ``relay.nn.contrib_dense_pack``): ``nn.dense``
with the weight packed in tiles of ``n`` output units.

data ``(M, K)``; weight ``(N/n, K, n)`` in layout ``NC{n}n`` (``weight[j // n, k, j % n]`` is
unit ``j``'s weight for input ``k``); result ``(M, N)`` in ``out_dtype`` (default data's),
summed in it. The 4-D (int8 VNNI) weight 0.19 also typed is not supported. TE compute:
topi.nn.dense_pack's reduction, written here (TVM 0.27's topi.nn.dense_pack raises NameError).
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import same_dtype, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

OP = "nn.contrib_dense_pack"


def _rel(types, attrs):
    ts = tensor_args(types, ("data", "weight"), OP)
    if ts is None:
        return None
    data, weight = ts
    if data.ndim != 2 or weight.ndim != 3:
        raise TypeInferenceError(
            f"{OP}: data must be 2-D and weight 3-D (N/n, K, n), got {shape_str(data.shape)} "
            f"and {shape_str(weight.shape)}"
        )
    same_dtype([data, weight], ("data", "weight"), OP)
    blocks, k, n = weight.shape
    if k != data.shape[1]:
        raise TypeInferenceError(
            f"{OP}: weight {shape_str(weight.shape)} has {k} inputs, data "
            f"{shape_str(data.shape)} has {data.shape[1]}"
        )
    m = re.fullmatch(r"NC(\d+)n", attrs.weight_layout)
    if attrs.weight_layout != "NC" and (m is None or int(m.group(1)) != n):
        raise TypeInferenceError(
            f"{OP}: weight_layout {attrs.weight_layout!r} does not describe weight "
            f"{shape_str(weight.shape)} (expected 'NC{n}n')"
        )
    units = blocks * n
    if attrs.units is not None and attrs.units != units:
        raise TypeInferenceError(f"{OP}: units={attrs.units} but weight holds {units} units")
    return TensorType((data.shape[0], units), attrs.out_dtype or data.dtype)


def _ref(args, attrs, out_type):
    data, weight = args
    blocks, k, n = weight.shape
    w = np.transpose(weight, (0, 2, 1)).reshape(blocks * n, k)
    acc = "float64" if out_type.dtype.startswith("float") else "int64"
    return (data.astype(acc) @ w.astype(acc).T).astype(out_type.dtype)


def _compute(attrs, inputs, out_type):
    # topi.nn.dense_pack's formula; TVM 0.27's topi.nn.dense_pack itself fails (NameError:
    # get_const_tuple is not imported in topi/nn/dense.py)
    from tvm import te

    data, weight = inputs
    dtype = out_type.dtype
    m, k = (int(v) for v in data.shape)
    blocks, _, n = (int(v) for v in weight.shape)
    rk = te.reduce_axis((0, k), "k")
    return te.compute(
        (m, blocks * n),
        lambda y, x: te.sum(
            data[y, rk].astype(dtype) * weight[x // n, rk, x % n].astype(dtype), axis=rk
        ),
        name="T_dense_pack",
        tag="dense_pack",
    )


register_op(
    OP,
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=("relay.attrs.DensePackAttrs", [F("units", "int?", None), F("out_dtype", "dtype", ""),
                                          F("weight_layout", "str", "NC")]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Dense with a tile-packed weight (N/n, K, n).",
    level=10,
)


def contrib_dense_pack(data, weight, weight_layout="NC", units=None, out_dtype=""):
    """``data @ W.T`` with ``W[j, k] = weight[j // n, k, j % n]`` (see the module doc).

    Args:
        data: ``(M, K)``.
        weight: ``(N/n, K, n)``, data's dtype.
        weight_layout: ``"NC{n}n"`` naming the tile (``"NC"``, 0.19's default, accepted).
        units: ``N``, checked when given.
        out_dtype: the result's dtype (default data's).

    Returns:
        ``(M, N)``.

    Raises:
        TypeInferenceError: (at type inference) shapes, dtypes or the layout do not fit.
    """
    return make_call(OP, [data, weight], units=units, out_dtype=out_dtype,
                     weight_layout=weight_layout)


__all__ = ["contrib_dense_pack"]

"""Matrix products (tvm.relay.nn): ``nn.dense``, ``nn.matmul``, ``nn.batch_matmul``.

All three are kOutEWiseFusable; the TE computes are topi's (``topi.nn.dense``,
``topi.nn.matmul``, ``topi.nn.batch_matmul``). The reference kernels accumulate in float64
(int64 for integers) and cast to the output dtype.
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import AnyDim, IncompleteType, TensorType, dim_equal
from ._common import out_dims, require_at_run_time, require_equal_dims, shape_str, tensor_args
from ._nn_common import check_operand_dtypes, dense_operands, dims_match, np_acc, np_operands
from .registry import OpPattern, make_call, register_op


def _check_same_dtype(a, b, names, op, out_dtype=None):
    check_operand_dtypes(a.dtype, b.dtype, out_dtype, names, op)


def _product_ref(args, out_type, fn):
    a, b = np_operands(args, out_type.dtype)
    acc = np_acc(a.dtype)
    return fn(a.astype(acc), b.astype(acc)).astype(out_type.dtype)


# ---- nn.dense ----------------------------------------------------------------------------------


def _dense_rel(types, attrs):
    op = "nn.dense"
    operands = dense_operands(types, op)
    if operands is None:
        return None
    data, weight = operands
    if weight is None:
        if attrs.units is None:
            return None
        weight = TensorType((attrs.units, data.shape[-1]), data.dtype)
        out = TensorType((*data.shape[:-1], attrs.units), attrs.out_dtype or data.dtype)
        return out, {1: weight}
    if not dims_match(data.shape[-1], weight.shape[1], "data and weight on the reduction axis"):
        raise TypeInferenceError(
            f"{op}: data shape {shape_str(data.shape)} and weight shape "
            f"{shape_str(weight.shape)} disagree on the reduction axis "
            f"({data.shape[-1]} vs {weight.shape[1]})"
        )
    if attrs.units is not None and not dims_match(weight.shape[0], attrs.units,
                                                   "units and the weight's rows"):
        raise TypeInferenceError(
            f"{op}: units={attrs.units} but weight shape {shape_str(weight.shape)} has "
            f"{weight.shape[0]} output units"
        )
    _check_same_dtype(data, weight, ("data", "weight"), op, attrs.out_dtype)
    return TensorType((*data.shape[:-1], weight.shape[0]), attrs.out_dtype or data.dtype)


def _dense_compute(attrs, inputs, out_type):
    from tvm import topi

    data, weight = inputs
    if len(data.shape) == 2:
        return topi.nn.dense(data, weight, out_dtype=out_type.dtype)
    rows = 1
    for d in data.shape[:-1]:
        rows = rows * d
    flat = topi.reshape(data, (rows, data.shape[-1]))
    out = topi.nn.dense(flat, weight, out_dtype=out_type.dtype)
    return topi.reshape(out, out_dims(out_type.shape))


register_op(
    "nn.dense",
    num_inputs=2,
    arguments=("data", "weight"),
    attrs=("relay.attrs.DenseAttrs", [F("units", "int?", None), F("out_dtype", "dtype", "")]),
    rel=_dense_rel,
    ref=lambda args, attrs, out_type: _product_ref(args, out_type, lambda a, b: a @ b.T),
    compute=_dense_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Dense layer: data (d0, ..., in) x weight (units, in)^T -> (d0, ..., units) "
        "(topi.nn.dense).",
    level=1,
    schedule="dense",
)


def dense(data, weight, units=None, out_dtype=""):
    """Fully connected layer ``Y = X W^T`` (tvm.relay.nn.dense).

    Args:
        data: ``(d0, ..., in)`` tensor.
        weight: ``(units, in)`` tensor of data's dtype.
        units: number of output units (lets inference fill in an unannotated weight).
        out_dtype: output dtype; ``""`` means data's dtype.

    Returns:
        ``(d0, ..., units)`` tensor.

    Raises:
        TypeInferenceError: at inference, when the reduction axes or dtypes differ.
    """
    return make_call("nn.dense", [data, weight], units=units, out_dtype=out_dtype)


# ---- nn.matmul ---------------------------------------------------------------------------------


def _matmul_rel(types, attrs):
    op = "nn.matmul"
    a, b = types
    if isinstance(a, IncompleteType):
        return None
    (a,) = tensor_args([a], ("tensor_a",), op)
    if a.ndim < 2:
        raise TypeInferenceError(f"{op}: tensor_a must have rank >= 2, got shape {shape_str(a.shape)}")
    if attrs.transpose_a:
        k, m = a.shape[-2], a.shape[-1]
    else:
        m, k = a.shape[-2], a.shape[-1]
    if isinstance(b, IncompleteType):
        if attrs.units is None:
            return None
        bshape = (attrs.units, k) if attrs.transpose_b else (k, attrs.units)
        return (TensorType((*a.shape[:-2], m, attrs.units), attrs.out_dtype or a.dtype),
                {1: TensorType(bshape, a.dtype)})
    (b,) = tensor_args([b], ("tensor_b",), op)
    if b.ndim != 2:
        raise TypeInferenceError(f"{op}: tensor_b must be 2-d, got shape {shape_str(b.shape)}")
    kb, n = (b.shape[1], b.shape[0]) if attrs.transpose_b else (b.shape[0], b.shape[1])
    if not dims_match(k, kb, "tensor_a and tensor_b on the reduction axis"):
        raise TypeInferenceError(
            f"{op}: tensor_a shape {shape_str(a.shape)} and tensor_b shape {shape_str(b.shape)} "
            f"disagree on the reduction axis ({k} vs {kb}; transpose_a={attrs.transpose_a}, "
            f"transpose_b={attrs.transpose_b})"
        )
    if attrs.units is not None and not dims_match(n, attrs.units):
        raise TypeInferenceError(f"{op}: units={attrs.units} but tensor_b gives {n} columns")
    _check_same_dtype(a, b, ("tensor_a", "tensor_b"), op, attrs.out_dtype)
    return TensorType((*a.shape[:-2], m, n), attrs.out_dtype or a.dtype)


def _matmul_ref(args, attrs, out_type):
    def fn(a, b):
        if attrs.transpose_a:
            a = a.swapaxes(-1, -2)
        return a @ (b.T if attrs.transpose_b else b)

    return _product_ref(args, out_type, fn)


def _nn_matmul_compute(attrs, inputs, out_type):
    from tvm import topi

    return topi.nn.matmul(
        inputs[0], inputs[1], out_dtype=out_type.dtype, transpose_a=attrs.transpose_a,
        transpose_b=attrs.transpose_b,
    )


register_op(
    "nn.matmul",
    num_inputs=2,
    arguments=("tensor_a", "tensor_b"),
    attrs=(
        "relay.attrs.MatmulAttrs",
        [
            F("units", "int?", None),
            F("out_dtype", "dtype", ""),
            F("transpose_a", "bool", False),
            F("transpose_b", "bool", False),
        ],
    ),
    rel=_matmul_rel,
    ref=_matmul_ref,
    compute=_nn_matmul_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Matrix product with optional transposes: (..., M, K) x (K, N) -> (..., M, N) "
        "(topi.nn.matmul).",
    level=1,
    schedule="matmul",
)


def matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False):
    """Matrix product ``op(A) op(B)`` (tvm.relay.nn.matmul).

    Args:
        tensor_a: ``(..., M, K)``, or ``(..., K, M)`` when ``transpose_a``.
        tensor_b: ``(K, N)``, or ``(N, K)`` when ``transpose_b``; tensor_a's dtype.
        units: ``N`` (lets inference type an unannotated tensor_b).

    Returns:
        ``(..., M, N)`` of ``out_dtype`` (tensor_a's dtype when ``""``).
    """
    return make_call("nn.matmul", [tensor_a, tensor_b], units=units, out_dtype=out_dtype,
                     transpose_a=transpose_a, transpose_b=transpose_b)


# ---- nn.batch_matmul ---------------------------------------------------------------------------


def _batch_matmul_rel(types, attrs):
    op = "nn.batch_matmul"
    ts = tensor_args(types, ("tensor_a", "tensor_b"), op)
    if ts is None:
        return None
    x, y = ts
    for t, name in ((x, "tensor_a"), (y, "tensor_b")):
        if t.ndim != 3:
            raise TypeInferenceError(f"{op}: {name} must be 3-d, got shape {shape_str(t.shape)}")
    bx, by = x.shape[0], y.shape[0]
    m, k = (x.shape[2], x.shape[1]) if attrs.transpose_a else (x.shape[1], x.shape[2])
    n, ky = (y.shape[1], y.shape[2]) if attrs.transpose_b else (y.shape[2], y.shape[1])
    shapes = f"tensor_a shape {shape_str(x.shape)}, tensor_b shape {shape_str(y.shape)}"
    if _symbolic(bx) or _symbolic(by) or _symbolic(k) or _symbolic(ky):
        # lowering a dynamic kernel: dimensions are tir variables bound at run time; the
        # kernel checks that they agree (it reads a batch of size 1 for every output batch)
        from tvm import tirx

        require_equal_dims(k, ky, "tensor_a and tensor_b differ on the reduction axis")
        b64 = [d.astype("int64") if _symbolic(d) else tirx.const(int(d), "int64")
               for d in (bx, by)]
        require_at_run_time(tirx.Or(tirx.Or(b64[0] == b64[1], b64[0] == 1), b64[1] == 1),
                            "batch sizes of tensor_a and tensor_b differ and neither is 1")
        _check_same_dtype(x, y, ("tensor_a", "tensor_b"), op, attrs.out_dtype)
        return TensorType((_symbolic_batch(bx, by), m, n), attrs.out_dtype or x.dtype)
    if not dims_match(k, ky):
        raise TypeInferenceError(
            f"{op}: reduction axes differ ({k} vs {ky}); {shapes} (transpose_a="
            f"{attrs.transpose_a}, transpose_b={attrs.transpose_b})"
        )
    if dims_match(bx, by):
        b = bx if not isinstance(bx, AnyDim) else by
    elif bx == 1:
        b = by
    elif by == 1:
        b = bx
    else:
        raise TypeInferenceError(f"{op}: batch sizes {bx} and {by} differ and neither is 1; {shapes}")
    _check_same_dtype(x, y, ("tensor_a", "tensor_b"), op, attrs.out_dtype)
    return TensorType((b, m, n), attrs.out_dtype or x.dtype)


def _symbolic(d) -> bool:
    """A dimension that is a tir expression (a dynamic kernel's), not a number or ``Any``."""
    return not isinstance(d, (int, AnyDim)) and type(d).__name__ != "IntImm"


def _symbolic_batch(bx, by):
    """The output batch of batches ``bx`` / ``by`` (equal, or one of them 1) when one is
    symbolic: the other if one is the number 1, the number if one is a number, else the larger
    (equal batches, or the one that is not 1)."""
    from tvm import tirx

    for a, b in ((bx, by), (by, bx)):
        if not _symbolic(a) and int(a) == 1:
            return b
        if not _symbolic(a):
            return a
    return bx if dim_equal(bx, by) else tirx.max(bx, by)


def _dynamic_batch_matmul(a, b, out_type, transpose_a, transpose_b):
    """``(B, M, K) x (B, N, K)^T`` with symbolic dimensions (tvm.topi's batch_matmul needs
    static or equal batches): batch ``i`` of an operand is read at ``i mod`` its batch size,
    which broadcasts a batch of 1 and stays in bounds."""
    from tvm import te, tirx

    out_shape = [int(d) if not _symbolic(d) else d for d in out_type.shape]
    kdim = a.shape[1] if transpose_a else a.shape[2]
    red = te.reduce_axis((0, kdim), name="k")
    dtype = out_type.dtype

    def batch(t, i):
        nb = t.shape[0]
        if not _symbolic(nb) and int(nb) == 1:
            return 0
        return tirx.floormod(tirx.Cast("int64", i), tirx.Cast("int64", nb))

    def f(i, r, c):
        av = a[batch(a, i), red, r] if transpose_a else a[batch(a, i), r, red]
        bv = b[batch(b, i), c, red] if transpose_b else b[batch(b, i), red, c]
        return te.sum(av.astype(dtype) * bv.astype(dtype), axis=red)

    return te.compute(out_shape, f, name="T_batch_matmul", tag="batch_matmul")


def _batch_matmul_ref(args, attrs, out_type):
    def fn(a, b):
        if attrs.transpose_a:
            a = a.swapaxes(1, 2)
        if attrs.transpose_b:
            b = b.swapaxes(1, 2)
        return a @ b  # NumPy broadcasts a batch of 1

    return _product_ref(args, out_type, fn)


def _nn_batch_matmul_compute(attrs, inputs, out_type):
    from tvm import topi

    if any(_symbolic(d) for t in inputs for d in t.shape):
        return _dynamic_batch_matmul(inputs[0], inputs[1], out_type, attrs.transpose_a,
                                     attrs.transpose_b)

    return topi.nn.batch_matmul(
        inputs[0], inputs[1], out_dtype=out_type.dtype, transpose_a=attrs.transpose_a,
        transpose_b=attrs.transpose_b,
    )


register_op(
    "nn.batch_matmul",
    num_inputs=2,
    arguments=("tensor_a", "tensor_b"),
    attrs=(
        "relay.attrs.BatchMatmulAttrs",
        [
            F("out_dtype", "dtype", ""),
            F("transpose_a", "bool", False),
            F("transpose_b", "bool", True),
        ],
    ),
    rel=_batch_matmul_rel,
    ref=_batch_matmul_ref,
    compute=_nn_batch_matmul_compute,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    doc="Batched matrix product (B, M, K) x (B, N, K)^T -> (B, M, N) by default; a batch of 1 "
        "broadcasts (topi.nn.batch_matmul).",
    level=10,
    schedule="batch_matmul",
)


def batch_matmul(tensor_a, tensor_b, out_dtype="", transpose_a=False, transpose_b=True):
    """Batched matrix product (tvm.relay.nn.batch_matmul).

    Args:
        tensor_a: ``(B, M, K)``, or ``(B, K, M)`` when ``transpose_a``.
        tensor_b: ``(B, N, K)`` by default (``transpose_b=True``), or ``(B, K, N)``.
            Either batch may be 1 and broadcasts.

    Returns:
        ``(B, M, N)`` of ``out_dtype`` (tensor_a's dtype when ``""``).
    """
    return make_call("nn.batch_matmul", [tensor_a, tensor_b], out_dtype=out_dtype,
                     transpose_a=transpose_a, transpose_b=transpose_b)


__all__ = ["dense", "matmul", "batch_matmul"]

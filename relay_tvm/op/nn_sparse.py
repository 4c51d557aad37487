"""``nn.sparse_dense`` (tvm.relay 0.19's ``relay.nn.sparse_dense``): a matrix product with one
operand stored sparse, in CSR or block-sparse (BSR) form.

The sparse matrix ``S`` comes as three tensors, SciPy's ``csr_matrix`` / ``bsr_matrix``
fields: ``data`` (CSR: ``(nnz,)``; BSR: ``(num_blocks, bs_r, bs_c)``), ``indices`` (the column,
or block column, of each entry or block, ``(nnz,)`` / ``(num_blocks,)``) and ``indptr`` (where
each row, or block row, starts in ``data``: ``(rows + 1,)`` / ``(rows / bs_r + 1,)``).

- ``sparse_lhs=False``: ``out = dense @ S.T``; ``dense`` is ``(M, K)``, ``S`` is ``(N, K)``,
  ``out`` is ``(M, N)`` in ``dense``'s dtype.
- ``sparse_lhs=True``: ``out = S @ dense.T``; ``S`` is ``(N, K)``, ``dense`` is ``(M, K)``,
  ``out`` is ``(N, M)``.

``N`` is ``len(indptr) - 1`` (CSR) or ``(len(indptr) - 1) * bs_r`` (BSR); ``K`` is not stored,
so column indices past ``dense``'s last column are the caller's error (the reference kernel
raises, compiled code reads out of bounds, as 0.19's did). Semantics and attribute of TVM
v0.19's ``nn.sparse_dense`` (src/relay/op/nn/sparse.cc); the TE compute is written here (TVM
0.27's topi has no sparse kernels): each output element sums over its row's stored entries.
"""

from __future__ import annotations

import numpy as np

from ..errors import TypeInferenceError
from ..ir.attrs import AttrField as F
from ..ir.types import TensorType
from ._common import dim_add, dim_mul, int_dtype_check, shape_str, tensor_args
from .registry import OpPattern, make_call, register_op

OP = "nn.sparse_dense"
_NAMES = ("dense", "sparse_data", "sparse_indices", "sparse_indptr")


def _rel(types, attrs):
    ts = tensor_args(types, _NAMES, OP)
    if ts is None:
        return None
    dense, sdata, sind, sptr = ts
    if dense.ndim != 2:
        raise TypeInferenceError(f"{OP}: the dense operand must be 2-D, got shape "
                                 f"{shape_str(dense.shape)}")
    if sdata.ndim not in (1, 3):
        raise TypeInferenceError(f"{OP}: sparse_data must be 1-D (CSR) or 3-D (BSR blocks), "
                                 f"got shape {shape_str(sdata.shape)}")
    if sdata.dtype != dense.dtype:
        raise TypeInferenceError(f"{OP}: sparse_data is {sdata.dtype} but the dense operand "
                                 f"is {dense.dtype}; they must match")
    for t, what in ((sind, "sparse_indices"), (sptr, "sparse_indptr")):
        int_dtype_check(t, what, OP)
        if t.ndim != 1:
            raise TypeInferenceError(f"{OP}: {what} must be 1-D, got shape {shape_str(t.shape)}")
    rows = dim_add(sptr.shape[0], -1)
    if sdata.ndim == 3:
        rows = dim_mul(rows, sdata.shape[1])
    if attrs.sparse_lhs:
        return TensorType((rows, dense.shape[0]), dense.dtype)
    return TensorType((dense.shape[0], rows), dense.dtype)


def _to_dense(sdata, sind, sptr, cols: int) -> np.ndarray:
    """The sparse operand as a dense ``(N, cols)`` array (duplicate entries add up)."""
    sind = sind.astype(np.int64)
    sptr = sptr.astype(np.int64)
    nrow = len(sptr) - 1
    if np.any(np.diff(sptr) < 0) or sptr[0] != 0 or sptr[-1] > len(sind):
        raise ValueError(f"{OP}: sparse_indptr must rise from 0 to at most {len(sind)} "
                         f"(the number of stored entries), got {sptr.tolist()}")
    row_of = np.repeat(np.arange(nrow), np.diff(sptr))
    used = sind[:sptr[-1]]
    bs_r, bs_c = (1, 1) if sdata.ndim == 1 else sdata.shape[1:]
    if used.size and (used.min() < 0 or (used.max() + 1) * bs_c > cols):
        raise ValueError(f"{OP}: sparse_indices address column{'s' if bs_c > 1 else ''} up to "
                         f"{(used.max() + 1) * bs_c - 1}, past the dense operand's {cols} "
                         f"columns")
    out = np.zeros((nrow * bs_r, cols), sdata.dtype)
    if sdata.ndim == 1:
        np.add.at(out, (row_of, used), sdata[:sptr[-1]])
        return out
    blocks = out.reshape(nrow, bs_r, cols // bs_c, bs_c).transpose(0, 2, 1, 3)
    np.add.at(blocks, (row_of, used), sdata[:sptr[-1]])
    return blocks.transpose(0, 2, 1, 3).reshape(nrow * bs_r, cols)


def _ref(args, attrs, out_type):
    dense, sdata, sind, sptr = args
    cols = dense.shape[1]
    if sdata.ndim == 3 and cols % sdata.shape[2]:
        raise ValueError(f"{OP}: the dense operand's {cols} columns are not a whole number of "
                         f"{sdata.shape[2]}-wide blocks")
    s = _to_dense(sdata, sind, sptr, cols)
    out = s @ dense.T if attrs.sparse_lhs else dense @ s.T
    return np.ascontiguousarray(out.astype(dense.dtype))


def _compute(attrs, inputs, out_type):
    from tvm import te

    dense, sdata, sind, sptr = inputs
    m = dense.shape[0]
    if len(sdata.shape) == 1:
        nrow = sptr.shape[0] - 1

        def one(i, row):  # dense row i times sparse row ``row``
            start = sptr[row]
            e = te.reduce_axis((0, sptr[row + 1] - start), name="elem")
            return te.sum(sdata[start + e] * dense[i, sind[start + e]], axis=e)
    else:
        bs_r, bs_c = sdata.shape[1], sdata.shape[2]
        nrow = (sptr.shape[0] - 1) * bs_r

        def one(i, row):
            brow = te.indexdiv(row, bs_r)
            start = sptr[brow]
            b = te.reduce_axis((0, sptr[brow + 1] - start), name="block")
            c = te.reduce_axis((0, bs_c), name="c")
            blk = start + b
            return te.sum(sdata[blk, te.indexmod(row, bs_r), c]
                          * dense[i, sind[blk] * bs_c + c], axis=[b, c])

    if attrs.sparse_lhs:
        return te.compute((nrow, m), lambda row, i: one(i, row), name="sparse_dense")
    return te.compute((m, nrow), one, name="sparse_dense")


register_op(
    OP,
    num_inputs=4,
    arguments=_NAMES,
    attrs=("relay.attrs.SparseDenseAttrs", [F("sparse_lhs", "bool", False)]),
    rel=_rel,
    ref=_ref,
    compute=_compute,
    # 0.19 said kOutEWiseFusable; the kernel's data-dependent loop is kept in a kernel of its own
    pattern=OpPattern.OPAQUE,
    doc="Matrix product with a CSR or BSR sparse operand (Y = X W^T, or W X^T with "
        "sparse_lhs).",
    level=1,
)


def sparse_dense(dense_mat, sparse_mat, sparse_lhs=False):
    """``dense_mat @ S.T`` (or ``S @ dense_mat.T`` with ``sparse_lhs``) for a sparse ``S``.

    Args:
        dense_mat: ``(M, K)`` tensor.
        sparse_mat: ``S`` as ``(data, indices, indptr)``: a tuple, or an object with those
            attributes (a namedtuple; SciPy's field names), in CSR (``data`` 1-D) or BSR
            (``data`` of shape ``(num_blocks, bs_r, bs_c)``) form; see the module doc.
        sparse_lhs: whether the sparse operand is the left one.

    Returns:
        ``(M, N)``, or ``(N, M)`` with ``sparse_lhs``, in ``dense_mat``'s dtype.

    Raises:
        TypeInferenceError: (at type inference) ranks or dtypes that do not fit.
    """
    if hasattr(sparse_mat, "indices"):
        parts = (sparse_mat.data, sparse_mat.indices, sparse_mat.indptr)
    else:
        parts = tuple(sparse_mat)
    return make_call(OP, [dense_mat, *parts], sparse_lhs=bool(sparse_lhs))


__all__ = ["sparse_dense"]

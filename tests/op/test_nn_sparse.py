"""nn.sparse_dense (tvm.relay 0.19's) with CSR and BSR operands, on either side, against a
dense NumPy product; interpreted and compiled."""

from collections import namedtuple

import numpy as np
import pytest
from op_check import check_op, infer

import relay_tvm as relay
from relay_tvm.errors import TypeInferenceError

RNG = np.random.default_rng(21)
Sparse = namedtuple("Sparse", ["data", "indices", "indptr"])


def _csr(w):
    """SciPy's CSR fields of the dense matrix ``w``, written out by hand."""
    rows, cols = np.nonzero(w)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=w.shape[0]))])
    return w[rows, cols], cols.astype("int32"), indptr.astype("int32")


def _bsr(w, bs_r, bs_c):
    """Block-sparse fields: the nonzero (bs_r, bs_c) blocks, row by block row."""
    nbr, nbc = w.shape[0] // bs_r, w.shape[1] // bs_c
    blocks = w.reshape(nbr, bs_r, nbc, bs_c).transpose(0, 2, 1, 3)
    keep = np.abs(blocks).sum(axis=(2, 3)) != 0
    br, bc = np.nonzero(keep)
    indptr = np.concatenate([[0], np.cumsum(keep.sum(axis=1))])
    return blocks[br, bc], bc.astype("int32"), indptr.astype("int32")


def _sparse_matrix(n, k, density, block=(1, 1)):
    bs_r, bs_c = block
    mask = RNG.random((n // bs_r, k // bs_c)) < density
    mask[0, 0] = True
    mask[-1] = False  # an empty (block) row
    full = np.kron(mask, np.ones(block)).astype("float32")
    return (full * RNG.uniform(-1, 1, (n, k))).astype("float32")


def _consts(fields):
    return Sparse(*(relay.const(f) for f in fields))


@pytest.mark.parametrize("sparse_lhs", [False, True])
def test_csr(sparse_lhs):
    w = _sparse_matrix(6, 5, 0.4)
    x = RNG.uniform(-1, 1, (3, 5)).astype("float32")
    xv = relay.var("x", shape=(3, 5))
    expected = w @ x.T if sparse_lhs else x @ w.T
    check_op(relay.nn.sparse_dense(xv, _consts(_csr(w)), sparse_lhs=sparse_lhs), [x], expected)


@pytest.mark.parametrize("block,sparse_lhs", [((2, 1), False), ((2, 3), False), ((4, 3), True)])
def test_bsr(block, sparse_lhs):
    w = _sparse_matrix(8, 6, 0.5, block)
    x = RNG.uniform(-1, 1, (4, 6)).astype("float32")
    xv = relay.var("x", shape=(4, 6))
    fields = _bsr(w, *block)
    assert fields[0].shape[1:] == block
    expected = w @ x.T if sparse_lhs else x @ w.T
    check_op(relay.nn.sparse_dense(xv, _consts(fields), sparse_lhs=sparse_lhs), [x], expected)


def test_sparse_fields_as_run_time_inputs():
    """The three sparse tensors may be function parameters (a tuple, not a namedtuple)."""
    w = _sparse_matrix(5, 4, 0.5)
    data, indices, indptr = _csr(w)
    x = RNG.uniform(-1, 1, (2, 4)).astype("float32")
    args = [relay.var("x", shape=(2, 4)), relay.var("d", shape=data.shape),
            relay.var("i", shape=indices.shape, dtype="int32"),
            relay.var("p", shape=indptr.shape, dtype="int32")]
    f = relay.Function(args, relay.nn.sparse_dense(args[0], tuple(args[1:])))
    check_op(f, [x, data, indices, indptr], x @ w.T)


def test_types_and_errors():
    x = relay.var("x", shape=(3, 5))
    csr = Sparse(relay.var("d", shape=(7,)), relay.var("i", shape=(7,), dtype="int32"),
                 relay.var("p", shape=(10,), dtype="int32"))
    assert infer(relay.nn.sparse_dense(x, csr)) == relay.TensorType((3, 9))
    assert infer(relay.nn.sparse_dense(x, csr, True)) == relay.TensorType((9, 3))
    bsr = csr._replace(data=relay.var("d", shape=(7, 4, 5)))
    assert infer(relay.nn.sparse_dense(x, bsr)) == relay.TensorType((3, 36))
    call = relay.nn.sparse_dense(x, csr)
    assert call.op.name == "nn.sparse_dense" and call.attrs.sparse_lhs is False
    with pytest.raises(TypeInferenceError, match="sparse_data must be 1-D .CSR. or 3-D"):
        infer(relay.nn.sparse_dense(x, csr._replace(data=relay.var("d", shape=(7, 2)))))
    with pytest.raises(TypeInferenceError, match="sparse_data is float16 but the dense"):
        infer(relay.nn.sparse_dense(x, csr._replace(data=relay.var("d", shape=(7,),
                                                                   dtype="float16"))))
    with pytest.raises(TypeInferenceError, match="sparse_indptr"):
        infer(relay.nn.sparse_dense(x, csr._replace(indptr=relay.var("p", shape=(10,)))))
    with pytest.raises(TypeInferenceError, match="dense operand must be 2-D"):
        infer(relay.nn.sparse_dense(relay.var("x", shape=(5,)), csr))
